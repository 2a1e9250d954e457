//! What the security probes look for, and in which inputs: the values they
//! send (a quote, a tautology, a marked script, a read-only property's
//! marked value) and how an answer shows that one got through. The probes
//! themselves are sent after the search (`run::security`); the rows of
//! [`super::registry`] whose judge is [`super::registry::Judge::Probe`]
//! say exactly when each fires.

use serde_json::Value;

use crate::execution::Exchange;
use crate::model::{Schema, SchemaType};

/// The plain word the SQL probes compare against.
pub const SQL_PLAIN: &str = "cartograph";
/// The word with a quote: a query built by pasting it in breaks.
pub const SQL_QUOTE: &str = "cartograph'";
/// The word with a tautology: a query built by pasting it in matches every row.
pub const SQL_TAUTOLOGY: &str = "cartograph' OR '1'='1";

/// The tautology's words without its quotes: a search that matches words
/// lists as many for it, an injection does not.
pub const SQL_CONTROL: &str = "cartograph OR 1 1";

/// The path under the SSRF listener that every token goes under.
pub const SSRF_PATH: &str = "/cartograph-ssrf/";

/// Database error texts the SQL probe looks for, lower case, beyond the
/// ones `sql_leak` reads: shorter texts (an SQLite `unrecognized token`)
/// that would be too loose on any answer, but not on the answer to a quote
/// compared with the answer to the plain word.
const SQL_ERRORS: &[&str] = &[
    "unrecognized token:",
    "sqlite_error",
    "sqlite3.",
    "syntax error at or near",
    "unterminated quoted string",
    "error in your sql syntax",
    "sqlstate[",
    "quoted string not properly terminated",
    "unclosed quotation mark",
    "incomplete input",
    "near \"",
    "near \\\"",
    "pq: syntax error",
    "mysql_fetch",
];

/// Bytes of a body scanned for a database error.
const SCAN: usize = 64 * 1024;

/// The database error text a body holds: what `sql_leak` reads, or one of
/// the shorter texts of SQLite, PostgreSQL and MySQL.
pub fn sql_error(body: &str) -> Option<String> {
    if let Some((family, _, marker)) = super::leaks::find(body)
        && family == super::leaks::Family::Sql
    {
        return Some(marker.trim().to_string());
    }
    let mut end = body.len().min(SCAN);
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    // ASCII lower-casing keeps every byte where it was: the text is taken
    // from the body as written, for a reproducer to look for.
    let lower = body[..end].to_ascii_lowercase();
    SQL_ERRORS.iter().find_map(|t| {
        let at = lower.find(t)?;
        body.get(at..at + t.len()).map(str::to_string)
    })
}

/// How many rows a JSON answer lists: a top-level array's items, or those
/// of the first array member of an object (an envelope, `{"items": […]}`).
pub fn rows(ex: &Exchange) -> Option<usize> {
    match ex.json()? {
        Value::Array(items) => Some(items.len()),
        Value::Object(members) => members.values().find_map(|v| v.as_array().map(Vec::len)),
        _ => None,
    }
}

/// The marked script element the stored-XSS probe of one field sends, in
/// one round (the confirmation stores a fresh one).
pub fn xss_marker(op: usize, field: usize, round: usize) -> String {
    format!("<script>cartograph_xss_{op}_{field}_{round}()</script>")
}

/// Whether an answer is an HTML page that holds `marker` as sent (not
/// escaped): a browser would run it.
pub fn shows_unescaped(ex: &Exchange, marker: &str) -> bool {
    let html = ex
        .header("content-type")
        .is_some_and(|c| super::conformance::essence(c) == "text/html");
    html && ex.body.contains(marker)
}

/// Whether an input takes a URL: its format says so (`uri`, `url`,
/// `iri`), or its name does (`url`, `uri`, `callback`, `webhook`,
/// `…_url`, `…Url`).
pub fn takes_url(name: &str, schema: &Schema) -> bool {
    if matches!(
        schema.format.as_deref(),
        Some("uri" | "url" | "iri" | "uri-reference")
    ) {
        return true;
    }
    if !schema.enum_values.is_empty() || !is_text(schema) {
        return false;
    }
    let words = crate::model::names::words(name);
    words.last().is_some_and(|w| {
        matches!(
            w.as_str(),
            "url" | "uri" | "callback" | "webhook" | "href" | "endpoint"
        )
    })
}

/// Whether a schema takes free text: a string (or untyped) with no enum,
/// format or pattern to refuse a probe's value.
pub fn free_text(schema: &Schema) -> bool {
    is_text(schema)
        && schema.enum_values.is_empty()
        && schema.format.is_none()
        && schema.pattern.is_none()
        && schema.max_length.is_none_or(|m| m >= 48)
}

fn is_text(schema: &Schema) -> bool {
    schema.types.is_empty() || schema.types.contains(&SchemaType::String)
}

/// The marked value the mass-assignment probe sends for read-only
/// property number `k`, when its type has one that cannot be mistaken for
/// a server's own choice.
pub fn read_only_marker(k: usize, schema: &Schema) -> Option<Value> {
    if schema.types.contains(&SchemaType::Integer) || schema.types.contains(&SchemaType::Number) {
        let v = 7_340_033 + k as i64;
        return schema
            .maximum
            .is_none_or(|m| m >= v as f64)
            .then(|| Value::from(v));
    }
    if !is_text(schema) || !schema.enum_values.is_empty() || schema.pattern.is_some() {
        return None;
    }
    match schema.format.as_deref() {
        None => Some(Value::from(format!("cartograph-readonly-{k}"))),
        Some("uuid") => Some(Value::from(format!("c4a7a900-0000-4000-8000-{k:012}"))),
        Some("email") => Some(Value::from(format!("readonly{k}@cartograph.invalid"))),
        Some(_) => None,
    }
}

/// Whether two answers are alike: the same status, and the same body, or
/// JSON objects with the same members (a route that ignores the method
/// answers every method as it answers the one it serves).
pub fn same_answer(a: &Exchange, b: &Exchange) -> bool {
    if a.status != b.status {
        return false;
    }
    if a.body == b.body {
        return true;
    }
    match (a.json(), b.json()) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            x.len() == y.len() && x.keys().all(|k| y.contains_key(k))
        }
        _ => false,
    }
}

/// The JSON pointer where a body shows a marked value at a property: at
/// the top, or in an envelope's one object (`{"data": {…}}`).
pub fn value_at(body: &Value, property: &str, marker: &Value) -> Option<String> {
    let Value::Object(members) = body else {
        return None;
    };
    let escape = |s: &str| s.replace('~', "~0").replace('/', "~1");
    if members.get(property) == Some(marker) {
        return Some(format!("/{}", escape(property)));
    }
    members.iter().find_map(|(k, v)| {
        (v.as_object().and_then(|o| o.get(property)) == Some(marker))
            .then(|| format!("/{}/{}", escape(k), escape(property)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execution::RequestSpec;
    use serde_json::json;

    fn answer(content_type: &str, body: &str) -> Exchange {
        Exchange {
            request: RequestSpec::default(),
            status: Some(200),
            headers: vec![("content-type".into(), content_type.into())],
            body: body.into(),
            ..Default::default()
        }
    }

    #[test]
    fn url_inputs_are_told_by_format_or_name() {
        let text = Schema::of_type(SchemaType::String);
        let uri = Schema {
            format: Some("uri".into()),
            ..text.clone()
        };
        assert!(takes_url("target", &uri));
        assert!(takes_url("callback", &text));
        assert!(takes_url("avatar_url", &text));
        assert!(takes_url("imageUrl", &text));
        assert!(!takes_url("title", &text));
        assert!(!takes_url(
            "urlCount",
            &Schema::of_type(SchemaType::Integer)
        ));
    }

    #[test]
    fn answers_alike_are_told_from_answers_of_their_own() {
        let a = answer("application/json", r#"{"id":1,"t":"a"}"#);
        let b = answer("application/json", r#"{"t":"b","id":2}"#);
        assert!(same_answer(&a, &b));
        let c = answer("application/json", r#"{"deleted":true}"#);
        assert!(!same_answer(&a, &c));
        let mut empty = answer("text/plain", "");
        empty.status = Some(204);
        assert!(!same_answer(&a, &empty));
    }

    #[test]
    fn rows_are_counted_in_arrays_and_envelopes() {
        assert_eq!(rows(&answer("application/json", "[1,2,3]")), Some(3));
        assert_eq!(
            rows(&answer("application/json", r#"{"total":2,"items":[1,2]}"#)),
            Some(2)
        );
        assert_eq!(rows(&answer("application/json", r#"{"a":1}"#)), None);
    }

    #[test]
    fn an_escaped_script_is_no_finding() {
        let m = xss_marker(1, 0, 0);
        assert!(shows_unescaped(
            &answer("text/html; charset=utf-8", &format!("<p>{m}</p>")),
            &m
        ));
        let escaped = m.replace('<', "&lt;").replace('>', "&gt;");
        assert!(!shows_unescaped(&answer("text/html", &escaped), &m));
        assert!(!shows_unescaped(&answer("application/json", &m), &m));
    }

    #[test]
    fn sql_errors_are_read_as_sql_leak_reads_them() {
        assert_eq!(
            sql_error(r#"{"error":"Unrecognized token: \"'x'\""}"#).as_deref(),
            Some("Unrecognized token:")
        );
        assert!(sql_error("You have an error in your SQL syntax; check").is_some());
        assert!(sql_error(r#"{"error":"near \"OR\": syntax error"}"#).is_some());
        assert!(sql_error("no such note").is_none());
    }

    #[test]
    fn read_only_markers_are_found_at_the_top_or_in_an_envelope() {
        let m = json!(7340033);
        assert_eq!(
            value_at(&json!({"id": 7340033}), "id", &m).as_deref(),
            Some("/id")
        );
        assert_eq!(
            value_at(&json!({"data": {"id": 7340033}}), "id", &m).as_deref(),
            Some("/data/id")
        );
        assert_eq!(value_at(&json!({"id": 5}), "id", &m), None);
        let int = Schema::of_type(SchemaType::Integer);
        assert_eq!(read_only_marker(0, &int), Some(m));
        assert_eq!(
            read_only_marker(1, &Schema::of_type(SchemaType::String)),
            Some(json!("cartograph-readonly-1"))
        );
        assert_eq!(
            read_only_marker(0, &Schema::of_type(SchemaType::Boolean)),
            None
        );
    }
}
