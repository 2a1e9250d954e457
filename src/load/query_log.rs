//! Production GraphQL requests as tests (AutoGraphQL): a log of requests read
//! from NDJSON (one `{"query", "variables", "operationName"}` object per
//! line, or a batch array) or from a HAR file exported by a browser or a
//! proxy, deduplicated on the query text plus its variables and operation name.

use std::path::{Path, PathBuf};

use apollo_compiler::ast;
use indexmap::IndexMap;
use serde_json::Value;

/// What kind of operation a logged request runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// A query: reads only.
    Query,
    /// A mutation: changes the server's state.
    Mutation,
    /// A subscription: needs a streaming transport.
    Subscription,
}

/// One distinct request of the log.
#[derive(Debug, Clone, PartialEq)]
pub struct LoggedQuery {
    /// The query text, as first seen.
    pub query: String,
    /// The variables (`{}` when none).
    pub variables: Value,
    /// The operation name, when given.
    pub operation_name: Option<String>,
    /// The operation's kind.
    pub kind: OpKind,
    /// Its root fields as Cartograph names them (`Query.book`).
    pub root_fields: Vec<String>,
    /// Where it was first seen (`queries.ndjson:3`, `session.har entry 7`).
    pub source: String,
    /// How many times the log holds it.
    pub count: usize,
}

impl LoggedQuery {
    /// The JSON body of a POST that sends it.
    pub fn body(&self) -> Value {
        let mut body = serde_json::json!({ "query": self.query, "variables": self.variables });
        if let Some(name) = &self.operation_name {
            body["operationName"] = Value::String(name.clone());
        }
        body
    }
}

/// A log, read and deduplicated.
#[derive(Debug, Clone, Default)]
pub struct QueryLog {
    /// The distinct requests, in order of first appearance.
    pub queries: Vec<LoggedQuery>,
    /// GraphQL requests read, duplicates included.
    pub requests: usize,
    /// Lines or entries that could not be used, each with why.
    pub warnings: Vec<String>,
}

impl QueryLog {
    /// Requests that repeated an earlier one.
    pub fn duplicates(&self) -> usize {
        self.requests - self.queries.len()
    }
}

/// A log file that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot read {}: {error} (give an NDJSON file of GraphQL requests or a HAR file)",
    path.display()
)]
pub struct QueryLogError {
    /// The file.
    pub path: PathBuf,
    /// Why it cannot be read (part of the message, not a separate cause).
    pub error: std::io::Error,
}

/// Reads a log file (NDJSON or HAR, told apart by content).
pub fn read(path: &Path) -> Result<QueryLog, QueryLogError> {
    let text = std::fs::read_to_string(path).map_err(|error| QueryLogError {
        path: path.to_path_buf(),
        error,
    })?;
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into(),
    );
    Ok(parse(&text, &name))
}

/// Reads a log from its text; `name` labels where each request came from.
pub fn parse(text: &str, name: &str) -> QueryLog {
    let mut log = Builder::default();
    let whole: Option<Value> = serde_json::from_str(text).ok();
    match whole {
        Some(Value::Object(o)) if o.get("log").is_some_and(|l| l.get("entries").is_some()) => {
            let entries = o["log"]["entries"].as_array().cloned().unwrap_or_default();
            for (i, entry) in entries.iter().enumerate() {
                let at = format!("{name} entry {}", i + 1);
                for request in har_requests(entry) {
                    log.add(request, &at);
                }
            }
        }
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                log.add(item.clone(), &format!("{name} item {}", i + 1));
            }
        }
        _ => {
            for (i, line) in text.lines().enumerate() {
                let line = line.trim();
                if line.is_empty() || line.starts_with("//") {
                    continue;
                }
                let at = format!("{name}:{}", i + 1);
                match serde_json::from_str::<Value>(line) {
                    Ok(Value::Array(batch)) => batch.into_iter().for_each(|r| log.add(r, &at)),
                    Ok(v) => log.add(v, &at),
                    Err(e) => log.warn(format!(
                        "{at}: not JSON ({e}); each line must be one {{\"query\": …}} object"
                    )),
                }
            }
        }
    }
    log.finish()
}

/// The GraphQL requests of one HAR entry: a POST's JSON body (one request or
/// a batch), or a GET's `query`, `variables` and `operationName` parameters.
fn har_requests(entry: &Value) -> Vec<Value> {
    let request = &entry["request"];
    if let Some(text) = request.pointer("/postData/text").and_then(Value::as_str) {
        return match serde_json::from_str::<Value>(text) {
            Ok(Value::Array(batch)) => batch,
            Ok(v @ Value::Object(_)) if v.get("query").is_some() => vec![v],
            _ => Vec::new(),
        };
    }
    let params: Vec<(String, String)> = match request.get("queryString").and_then(Value::as_array) {
        Some(items) => items
            .iter()
            .filter_map(|p| Some((p["name"].as_str()?.into(), p["value"].as_str()?.into())))
            .collect(),
        None => request["url"]
            .as_str()
            .and_then(|u| url::Url::parse(u).ok())
            .map(|u| u.query_pairs().into_owned().collect())
            .unwrap_or_default(),
    };
    let get = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    match get("query") {
        Some(query) => {
            let mut r = serde_json::json!({ "query": query });
            if let Some(v) = get("variables") {
                r["variables"] = Value::String(v);
            }
            if let Some(n) = get("operationName") {
                r["operationName"] = Value::String(n);
            }
            vec![r]
        }
        None => Vec::new(),
    }
}

#[derive(Default)]
struct Builder {
    seen: IndexMap<String, LoggedQuery>,
    requests: usize,
    warnings: Vec<String>,
}

impl Builder {
    fn warn(&mut self, w: String) {
        self.warnings.push(w);
    }

    fn add(&mut self, request: Value, at: &str) {
        let Some(obj) = request.as_object() else {
            return self.warn(format!("{at}: not a JSON object with a `query`"));
        };
        let Some(query) = obj.get("query").and_then(Value::as_str) else {
            let persisted = obj
                .get("extensions")
                .is_some_and(|e| e.get("persistedQuery").is_some());
            return self.warn(if persisted {
                format!(
                    "{at}: a persisted query (a hash without the query text); cannot be replayed"
                )
            } else {
                format!("{at}: no `query` string")
            });
        };
        let variables = match obj.get("variables") {
            None | Some(Value::Null) => Value::Object(Default::default()),
            // GET requests and some loggers carry the variables as JSON text.
            Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
                Ok(v @ Value::Object(_)) => v,
                _ => return self.warn(format!("{at}: `variables` is not a JSON object")),
            },
            Some(v @ Value::Object(_)) => v.clone(),
            Some(_) => return self.warn(format!("{at}: `variables` is not a JSON object")),
        };
        let operation_name = obj
            .get("operationName")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        let doc = match crate::model::graphql::parse_executable(query) {
            Ok(doc) => doc,
            Err(first) => {
                return self.warn(format!(
                    "{at}: the query does not parse ({first}); left out"
                ));
            }
        };
        let Some((kind, roots)) = operation(&doc, operation_name.as_deref()) else {
            return self.warn(format!(
                "{at}: no operation {} in the query; left out",
                operation_name.as_deref().map_or_else(
                    || "to run (several, and no operationName)".to_string(),
                    |n| format!("named {n:?}")
                )
            ));
        };
        self.requests += 1;
        // Formatting is not part of a request's identity; string values are
        // kept apart by the printer, which quotes them.
        let key = format!(
            "{}\u{0}{}\u{0}{}",
            doc,
            canonical(&variables),
            operation_name.as_deref().unwrap_or("")
        );
        self.seen
            .entry(key)
            .or_insert_with(|| LoggedQuery {
                query: query.to_string(),
                variables,
                operation_name,
                kind,
                root_fields: roots,
                source: at.to_string(),
                count: 0,
            })
            .count += 1;
    }

    fn finish(self) -> QueryLog {
        QueryLog {
            queries: self.seen.into_values().collect(),
            requests: self.requests,
            warnings: self.warnings,
        }
    }
}

/// The operation a request runs and its root fields (`Query.book`), first
/// occurrence order; fragments spread at the root are followed one level.
fn operation(doc: &ast::Document, name: Option<&str>) -> Option<(OpKind, Vec<String>)> {
    let op = crate::model::graphql::executed_operation(doc, name)?;
    let (kind, word) = match op.operation_type {
        ast::OperationType::Query => (OpKind::Query, "Query"),
        ast::OperationType::Mutation => (OpKind::Mutation, "Mutation"),
        ast::OperationType::Subscription => (OpKind::Subscription, "Subscription"),
    };
    let fragment = |name: &str| {
        doc.definitions.iter().find_map(|d| match d {
            ast::Definition::FragmentDefinition(f) if f.name.as_str() == name => Some(f),
            _ => None,
        })
    };
    let mut roots: Vec<String> = Vec::new();
    let mut push = |name: &str| {
        let label = format!("{word}.{name}");
        if name != "__typename" && !roots.contains(&label) {
            roots.push(label);
        }
    };
    let fields_of = |set: &[ast::Selection]| -> Vec<String> {
        set.iter()
            .filter_map(|i| match i {
                ast::Selection::Field(f) => Some(f.name.to_string()),
                _ => None,
            })
            .collect()
    };
    for item in &op.selection_set {
        match item {
            ast::Selection::Field(f) => push(&f.name),
            ast::Selection::InlineFragment(fr) => {
                fields_of(&fr.selection_set).iter().for_each(|n| push(n))
            }
            ast::Selection::FragmentSpread(sp) => {
                if let Some(def) = fragment(&sp.fragment_name) {
                    fields_of(&def.selection_set).iter().for_each(|n| push(n))
                }
            }
        }
    }
    Some((kind, roots))
}

/// JSON text with object keys sorted at every level, so `{"a":1,"b":2}` and
/// `{"b":2,"a":1}` are the same variables.
fn canonical(v: &Value) -> String {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical(&map[k])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(items) => {
            format!(
                "[{}]",
                items.iter().map(canonical).collect::<Vec<_>>().join(",")
            )
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ndjson_dedupes_on_query_variables_and_name_not_on_layout() {
        let text = r#"{"query":"query B($id: ID!) { book(id: $id) { title } }","variables":{"id":"1"},"operationName":"B"}
{"query":"query B($id: ID!) {\n  book(id: $id) {\n    title\n  }\n}","variables":{"id":"1"},"operationName":"B"}
{"query":"query B($id: ID!) { book(id: $id) { title } }","variables":{"id":"2"},"operationName":"B"}

{"query":"{ authors { name } }","variables":null}
{"query":"{ authors { name } }"}
not json
{"extensions":{"persistedQuery":{"sha256Hash":"abc"}}}
{"query":"mutation { deleteAuthor(id: 1) }"}
{"query":"{ authors { name "}
"#;
        let log = parse(text, "q.ndjson");
        assert_eq!(log.requests, 6);
        assert_eq!(log.queries.len(), 4, "{:#?}", log.queries);
        assert_eq!(log.duplicates(), 2);
        assert_eq!(log.queries[0].count, 2);
        assert_eq!(log.queries[0].source, "q.ndjson:1");
        assert_eq!(log.queries[0].root_fields, ["Query.book"]);
        assert_eq!(log.queries[2].count, 2);
        assert_eq!(log.queries[3].kind, OpKind::Mutation);
        assert_eq!(log.queries[3].root_fields, ["Mutation.deleteAuthor"]);
        assert_eq!(log.warnings.len(), 3, "{:?}", log.warnings);
        assert!(log.warnings[0].starts_with("q.ndjson:7: not JSON"));
        assert!(log.warnings[1].contains("persisted query"));
        assert!(log.warnings[2].contains("does not parse"));
    }

    #[test]
    fn a_query_that_does_not_parse_is_left_out_at_its_place_even_nested_without_end() {
        let deep = format!(
            "{{ a(x: {}1{}) }}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let text = format!(
            "{}\n{}\n{}",
            serde_json::json!({"query": "{\n  authors { name }\n  books(\n}"}),
            serde_json::json!({ "query": deep }),
            serde_json::json!({"query": "{ authors { name } }"}),
        );
        let log = parse(&text, "q.ndjson");
        assert_eq!(log.queries.len(), 1, "{:?}", log.warnings);
        assert_eq!(log.warnings.len(), 2, "{:?}", log.warnings);
        assert!(
            log.warnings[0].starts_with("q.ndjson:1: the query does not parse (4:1: syntax error:"),
            "{}",
            log.warnings[0]
        );
        assert!(
            log.warnings[1].starts_with("q.ndjson:2: the query does not parse (1:"),
            "{}",
            log.warnings[1]
        );
    }

    #[test]
    fn variable_key_order_does_not_matter_but_values_do() {
        let text = r#"{"query":"query($a: Int, $b: Int) { x(a: $a, b: $b) }","variables":{"a":1,"b":2}}
{"query":"query($a: Int, $b: Int) { x(a: $a, b: $b) }","variables":{"b":2,"a":1}}
{"query":"query($a: Int, $b: Int) { x(a: $a, b: $b) }","variables":{"b":3,"a":1}}"#;
        let log = parse(text, "v");
        assert_eq!(log.queries.len(), 2);
        assert_eq!(log.queries[0].count, 2);
    }

    #[test]
    fn string_values_keep_their_spaces() {
        let text = r#"{"query":"{ authors(name: \"a  b\") { id } }"}
{"query":"{ authors(name: \"a b\") { id } }"}"#;
        assert_eq!(parse(text, "s").queries.len(), 2);
    }

    #[test]
    fn har_posts_batches_and_gets() {
        let har = serde_json::json!({"log": {"version": "1.2", "entries": [
            {"request": {"method": "POST", "url": "http://x/graphql",
                "postData": {"mimeType": "application/json",
                    "text": "{\"query\":\"{ authors { id } }\"}"}}},
            {"request": {"method": "POST", "url": "http://x/graphql",
                "postData": {"mimeType": "application/json",
                    "text": "[{\"query\":\"{ authors { id } }\"},{\"query\":\"query Q($id: ID!) { book(id: $id) { id } }\",\"variables\":{\"id\":\"4\"},\"operationName\":\"Q\"}]"}}},
            {"request": {"method": "GET", "url": "http://x/graphql?query=%7B%20authors%20%7B%20id%20%7D%20%7D",
                "queryString": [{"name": "query", "value": "{ authors { id } }"}]}},
            {"request": {"method": "GET", "url": "http://x/graphql?query=query%20Q(%24id%3A%20ID!)%20%7B%20book(id%3A%20%24id)%20%7B%20id%20%7D%20%7D&variables=%7B%22id%22%3A%225%22%7D&operationName=Q"}},
            {"request": {"method": "GET", "url": "http://x/logo.png", "queryString": []}}
        ]}});
        let log = parse(&har.to_string(), "s.har");
        assert_eq!(log.requests, 5, "{log:#?}");
        assert_eq!(log.queries.len(), 3);
        assert_eq!(log.queries[0].count, 3);
        assert_eq!(log.queries[1].variables, serde_json::json!({"id": "4"}));
        assert_eq!(log.queries[2].variables, serde_json::json!({"id": "5"}));
        assert_eq!(log.queries[2].source, "s.har entry 4");
        assert!(log.warnings.is_empty(), "{:?}", log.warnings);
    }

    #[test]
    fn several_operations_need_a_name() {
        let text = r#"{"query":"query A { authors { id } } query B { book(id: 1) { id } }"}
{"query":"query A { authors { id } } query B { book(id: 1) { id } }","operationName":"B"}"#;
        let log = parse(text, "n");
        assert_eq!(log.queries.len(), 1);
        assert_eq!(log.queries[0].root_fields, ["Query.book"]);
        assert!(log.warnings[0].contains("several"), "{:?}", log.warnings);
    }
}
