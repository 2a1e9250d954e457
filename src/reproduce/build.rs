//! From exchanges to a script: each id-like value a request sent that an
//! earlier response of the sequence gave (a `Location`, an `id`, a field of
//! the same name) becomes a capture on that response and a `{{var}}` in the
//! request, so the script carries it again when replayed.

use std::collections::HashMap;

use serde_json::Value;

use super::{Capture, Script, Source, Step, Unmade};
use crate::execution::Exchange;
use crate::model::Api;

/// A marker put in a JSON body where a captured value goes, before the body
/// is serialised; replaced by `{{var}}` afterwards.
const MARK: char = '\u{1}';

use crate::oracles::identity::{is_id_name, text};

/// `bookId` → `book_id`; anything else becomes letters, digits and `_`.
fn snake(name: &str) -> String {
    let words = crate::model::names::words(name);
    let joined = if words.is_empty() {
        "value".to_string()
    } else {
        words.join("_")
    };
    let clean: String = joined
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if clean.starts_with(|c: char| c.is_ascii_alphabetic()) {
        clean
    } else {
        format!("v_{clean}")
    }
}

/// The singular of the collection a request path created into or read from
/// (`/authors/3/books` → `book`).
fn resource(path: &str) -> String {
    path.split('?')
        .next()
        .unwrap_or("")
        .split('/')
        .rev()
        .find(|s| !s.is_empty() && !s.starts_with(|c: char| c.is_ascii_digit()) && !s.contains('%'))
        .map(|s| s.trim_end_matches('s').to_string())
        .unwrap_or_default()
}

/// 1 when the collection `path` holds (`/authors/3/books` → `book`) is what
/// the input `name` refers to (`bookId`), else 0: ids of different resources
/// collide (book 4, author 4).
fn names(path: &str, name: &str) -> u8 {
    let r = resource(path);
    u8::from(!r.is_empty() && name.to_ascii_lowercase().contains(&r.to_ascii_lowercase()))
}

/// Whether `name` names a resource (`authorId`) other than the one the
/// collection `path` holds (`/authors/3/books`): then an equal id there is a
/// coincidence (book 4 is not author 4).
fn names_other(path: &str, name: &str) -> bool {
    let words = crate::model::names::words(name);
    words.len() >= 2 && names(path, name) == 0
}

/// A place in a response a value can be taken from, with how well it fits.
struct Candidate {
    step: usize,
    source: Source,
    score: u8,
}

/// Scalars of a body by pointer (objects to depth 3, the first arrays' items).
fn leaves(v: &Value, pointer: String, depth: usize, out: &mut Vec<(String, String, Value)>) {
    match v {
        Value::Object(m) if depth > 0 => {
            for (k, x) in m {
                let p = format!("{pointer}/{}", crate::model::text::pointer_token(k));
                match x {
                    Value::Object(_) | Value::Array(_) => leaves(x, p, depth - 1, out),
                    scalar => out.push((p, k.clone(), scalar.clone())),
                }
            }
        }
        Value::Array(a) if depth > 0 => {
            for (i, x) in a.iter().take(16).enumerate() {
                leaves(x, format!("{pointer}/{i}"), depth - 1, out);
            }
        }
        _ => {}
    }
}

/// Where earlier answers give `value`, best first.
fn sources(
    earlier: &[Exchange],
    value: &str,
    name: &str,
    chain: &str,
    location: &dyn Fn(&str) -> Option<String>,
) -> Option<Candidate> {
    let mut best: Option<Candidate> = None;
    // Among equally good places, the first answer that gave the value: its
    // origin (a later answer that echoes it, such as an update's, would make
    // that update look needed).
    let mut consider = |c: Candidate| {
        if best.as_ref().is_none_or(|b| c.score > b.score) {
            best = Some(c);
        }
    };
    for (j, ex) in earlier.iter().enumerate() {
        if !ex.is_success() {
            continue;
        }
        if let Some(loc) = ex.header("location") {
            let id = crate::execution::wire::location_id(loc).and_then(|v| text(&v));
            if id.as_deref() == Some(value) {
                let at = location(loc).unwrap_or_default();
                let collection = at.rsplit_once('/').map(|(c, _)| c).unwrap_or("");
                let chained = !chain.is_empty() && collection == chain;
                if chained || !names_other(collection, name) {
                    consider(Candidate {
                        step: j,
                        source: Source::LocationId,
                        score: if chained {
                            5
                        } else {
                            3 + names(collection, name)
                        },
                    });
                }
            }
        }
        let Some(body) = ex.json() else { continue };
        let mut found = Vec::new();
        leaves(body, String::new(), 3, &mut found);
        for (pointer, field, v) in found {
            if text(&v).as_deref() != Some(value) {
                continue;
            }
            let top = pointer.matches('/').count() == 1;
            let score = if field == name {
                4
            } else if field == "id" && top {
                if names_other(&ex.request.path, name) {
                    continue;
                }
                3 + names(&ex.request.path, name)
            } else if field == "id" {
                // A nested object's id (`/0/id` of a list).
                2
            } else {
                continue;
            };
            // An item's place in a list is this server's history: any
            // answer that gave the value by name (its maker's) is better.
            let in_list = pointer.split('/').any(|s| s.parse::<usize>().is_ok());
            let score = if in_list { score / 2 } else { score };
            consider(Candidate {
                step: j,
                source: Source::Json { pointer },
                score,
            });
        }
    }
    best
}

/// Builds the script of `exchanges` (in order) run against `target`.
/// `location` resolves a `Location` header to a request path under the
/// target; `positions` is [`Api::operation_positions`], made once for all
/// the scripts of a run (making it per script costs as much as the API is
/// large, for every fault).
pub fn script(
    api: &Api,
    positions: &HashMap<String, usize>,
    target: &str,
    exchanges: &[Exchange],
    location: &dyn Fn(&str) -> Option<String>,
) -> Script {
    let operation = |name: &str| {
        positions
            .get(name)
            .and_then(|&o| api.operations.get(o))
            .filter(|op| op.name == name)
    };
    let mut draft = Draft {
        location,
        steps: Vec::new(),
        unmade: Vec::new(),
        vars: Vec::new(),
        names: HashMap::new(),
    };
    for (i, ex) in exchanges.iter().enumerate() {
        let earlier = &exchanges[..i];
        let (path, query) = ex
            .request
            .path
            .split_once('?')
            .map_or((ex.request.path.as_str(), None), |(p, q)| (p, Some(q)));
        let op = operation(&ex.request.operation);
        let mut out_path = draft.path(ex, op, earlier, path);
        if let Some(q) = query {
            out_path.push('?');
            out_path.push_str(&draft.query(ex, earlier, q));
        }
        let body = draft.body(ex, earlier);
        draft.steps.push(Step {
            operation: ex.request.operation.clone(),
            method: ex.request.method.clone(),
            path: out_path,
            headers: ex.request.headers.clone(),
            content_type: ex.request.content_type.clone(),
            body,
            graphql_query: ex.request.graphql_query,
            breach: ex.request.breach.clone(),
            identity: ex.request.identity.clone(),
            captures: Vec::new(),
            status: ex.status,
            graphql_clean: false,
        });
    }
    let Draft { steps, unmade, .. } = draft;
    // Operations that document a redirect are sent without following it
    // (the redirect is their answer): a replay must do the same.
    let mut direct: Vec<String> = Vec::new();
    for s in &steps {
        let documents = operation(&s.operation).is_some_and(|op| op.documents_redirect());
        if documents && !direct.contains(&s.operation) {
            direct.push(s.operation.clone());
        }
    }
    Script {
        target: target.to_string(),
        fault: None,
        steps,
        standalone: unmade.is_empty(),
        unmade,
        not_standalone: Vec::new(),
        direct,
        planted: 0,
        fresh: None,
    }
}

/// Whether `ex` is a negative test whose wrong value went in `input` of
/// `place` (`path asset_id`, `query limit`, `body /owner/id`): a value the
/// client made up (an integer past 64 bits, a near miss of an id), which
/// names nothing the server has.
fn breached(ex: &Exchange, place: &str, input: &str) -> bool {
    ex.request.breach.as_ref().is_some_and(|b| {
        b.input
            .strip_prefix(place)
            .and_then(|rest| rest.strip_prefix(' '))
            == Some(input)
    })
}

/// A script being built: its steps so far, the values captured on them,
/// and what the steps name literally that no earlier step made.
struct Draft<'a> {
    /// Resolves a `Location` header to a request path under the target.
    location: &'a dyn Fn(&str) -> Option<String>,
    steps: Vec<Step>,
    unmade: Vec<Unmade>,
    /// (step, source) → var, so one captured value keeps one name.
    vars: Vec<((usize, Source), String)>,
    /// How many vars each name has given so far (`book_id`, `book_id_2`).
    names: HashMap<String, usize>,
}

impl Draft<'_> {
    /// The var that carries the value `c` points at, captured on its step
    /// the first time it is asked for; named after the input `name`, or
    /// for a bare `id` after the collection its step made or read.
    fn capture(&mut self, c: &Candidate, name: &str) -> String {
        if let Some((_, v)) = self
            .vars
            .iter()
            .find(|((s, src), _)| *s == c.step && src == &c.source)
        {
            return v.clone();
        }
        let base = if name == "id" || name.is_empty() {
            let r = resource(&self.steps[c.step].path);
            if r.is_empty() {
                "id".to_string()
            } else {
                format!("{}_id", snake(&r))
            }
        } else {
            snake(name)
        };
        let n = self.names.entry(base.clone()).or_insert(0);
        *n += 1;
        let var = if *n == 1 { base } else { format!("{base}_{n}") };
        self.steps[c.step].captures.push(Capture {
            var: var.clone(),
            from: c.source.clone(),
        });
        self.vars.push(((c.step, c.source.clone()), var.clone()));
        var
    }

    /// The request path of `ex` (without its query), each segment an
    /// earlier answer gave as a `{{var}}`.
    fn path(
        &mut self,
        ex: &Exchange,
        op: Option<&crate::model::Operation>,
        earlier: &[Exchange],
        path: &str,
    ) -> String {
        // Segments as the request sent them, empty ones included: a path
        // the description writes with a trailing slash (`/flow_runs/`) is
        // another route than the one without (a 307 away, at best).
        let template: Option<Vec<&str>> = op.map(|o| o.path.split('/').collect());
        let segments: Vec<&str> = path.split('/').collect();
        let mut out_path = String::new();
        let mut chain = String::new();
        for (k, seg) in segments.iter().enumerate() {
            if k > 0 {
                out_path.push('/');
            }
            if seg.is_empty() {
                continue;
            }
            let param = match &template {
                Some(t) if t.len() == segments.len() => t[k]
                    .strip_prefix('{')
                    .and_then(|s| s.strip_suffix('}'))
                    .map(str::to_string),
                Some(_) => None,
                // A follow-up of a Location: any segment may carry an id.
                None => Some(String::new()),
            };
            let value = percent_encoding::percent_decode_str(seg)
                .decode_utf8_lossy()
                .into_owned();
            // Only a parameter that names a resource can name one the
            // script does not create (`/calc/{n}/{x}` names nothing).
            let identifies = match (&param, op) {
                (Some(name), Some(op)) => {
                    let schema = op
                        .parameters
                        .iter()
                        .find(|p| p.location == crate::model::Location::Path && &p.name == name)
                        .map(|p| p.schema.clone())
                        .unwrap_or_default();
                    crate::oracles::identity::identifies(&op.path, name, &schema)
                }
                _ => false,
            };
            let var = param.as_deref().and_then(|name| {
                sources(earlier, &value, name, &chain, self.location)
                    .map(|c| self.capture(&c, name))
            });
            if identifies && var.is_none() && !breached(ex, "path", param.as_deref().unwrap_or(""))
            {
                let name = param.as_deref().unwrap_or("id");
                let mut u = Unmade::new(ex, name, &value);
                u.at = Some(format!("{chain}/{seg}"));
                self.unmade.push(u);
            }
            match var {
                Some(v) => out_path.push_str(&format!("{{{{{v}}}}}")),
                None => out_path.push_str(seg),
            }
            chain.push('/');
            chain.push_str(seg);
        }
        out_path
    }

    /// The query `q` of `ex`: each pair as it was sent (its encoding
    /// included), but for an id-like value an earlier answer gave.
    fn query(&mut self, ex: &Exchange, earlier: &[Exchange], q: &str) -> String {
        let mut pairs = Vec::new();
        for raw in q.split('&') {
            let Some((k, v)) = url::form_urlencoded::parse(raw.as_bytes()).next() else {
                pairs.push(raw.to_string());
                continue;
            };
            let var = if is_id_name(&k) {
                sources(earlier, &v, &k, "", self.location).map(|c| self.capture(&c, &k))
            } else {
                None
            };
            match var {
                Some(var) => {
                    let key = raw.split('=').next().unwrap_or("");
                    pairs.push(format!("{key}={{{{{var}}}}}"))
                }
                None => {
                    if is_id_name(&k) && !breached(ex, "query", &k) {
                        self.unmade.push(Unmade::new(ex, &k, &v));
                    }
                    pairs.push(raw.to_string())
                }
            }
        }
        pairs.join("&")
    }

    /// The body of `ex`, each id-like field of a JSON body that an earlier
    /// answer gave as a `{{var}}` (bare where the value was a number).
    fn body(&mut self, ex: &Exchange, earlier: &[Exchange]) -> Option<String> {
        let mut body = ex.request.body.clone();
        let json_body = ex
            .request
            .content_type
            .as_deref()
            .is_some_and(crate::model::is_json_mime);
        if let (true, Some(text_body)) = (json_body, &ex.request.body)
            && let Ok(mut value) = crate::execution::wire::parse_json_exact(text_body)
        {
            let mut found = Vec::new();
            leaves(&value, String::new(), 3, &mut found);
            let mut replaced = Vec::new();
            for (pointer, field, v) in found {
                let Some(t) = text(&v) else { continue };
                if !is_id_name(&field) {
                    continue;
                }
                let found = sources(earlier, &t, &field, "", self.location);
                if found.is_none() && !breached(ex, "body", &pointer) {
                    self.unmade.push(Unmade::new(ex, &pointer[1..], &t));
                }
                if let Some(c) = found {
                    let var = self.capture(&c, &field);
                    if let Some(slot) = value.pointer_mut(&pointer) {
                        let bare = slot.is_number();
                        *slot = Value::String(format!("{MARK}{var}{MARK}"));
                        replaced.push((var, bare));
                    }
                }
            }
            if !replaced.is_empty() {
                let mut s = crate::execution::wire::json_text(&value);
                for (var, bare) in replaced {
                    let marked = format!("\"\\u0001{var}\\u0001\"");
                    let with = if bare {
                        format!("{{{{{var}}}}}")
                    } else {
                        format!("\"{{{{{var}}}}}\"")
                    };
                    s = s.replace(&marked, &with);
                }
                body = Some(s);
            }
        }
        body
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(path: &str, status: u16, location: Option<&str>, body: &str) -> Exchange {
        Exchange {
            request: crate::execution::RequestSpec {
                operation: String::new(),
                method: "GET".into(),
                path: path.into(),
                headers: vec![],
                body: None,
                content_type: None,
                graphql_query: false,
                breach: None,
                identity: None,
            },
            status: Some(status),
            headers: location
                .map(|l| vec![("location".to_string(), l.to_string())])
                .unwrap_or_default(),
            body: body.into(),
            ..Default::default()
        }
    }

    #[test]
    fn a_maker_beats_a_listing_that_showed_the_value_first() {
        let earlier = vec![
            answer(
                "/orders",
                200,
                None,
                r#"[{"id":1,"bookId":4},{"id":2,"bookId":9}]"#,
            ),
            answer(
                "/authors/3/books",
                201,
                Some("/authors/3/books/9"),
                r#"{"id":9}"#,
            ),
        ];
        let loc = |l: &str| Some(l.to_string());
        let best = sources(&earlier, "9", "bookId", "", &loc).unwrap();
        assert_eq!(best.step, 1, "{:?}", best.source);
        // With no maker in the sequence, the listing is all there is.
        let best = sources(&earlier[..1], "9", "bookId", "", &loc).unwrap();
        assert_eq!(best.step, 0);
    }

    #[test]
    fn operations_that_document_a_redirect_are_replayed_without_following_it() {
        let api = crate::load::load_text(
            "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /go:\n    get:\n      operationId: go\n      responses: {'302': {description: elsewhere}}\n",
            std::path::Path::new("t.yaml"),
        )
        .unwrap()
        .api;
        let mut ex = answer("/go", 302, Some("/x"), "");
        ex.request.operation = "go".into();
        let loc = |l: &str| Some(l.to_string());
        let s = script(
            &api,
            &api.operation_positions(),
            "http://127.0.0.1:1",
            &[ex],
            &loc,
        );
        assert_eq!(s.direct, ["go"]);
    }

    #[test]
    fn a_value_a_negative_test_made_up_is_no_data_the_script_lacks() {
        let api = crate::load::load_text(
            "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /assets/{asset_id}:\n    get:\n      operationId: getAsset\n      parameters:\n      - {name: asset_id, in: path, required: true, schema: {type: integer}}\n      - {name: owner_id, in: query, schema: {type: integer}}\n      responses: {'200': {description: ok}}\n",
            std::path::Path::new("t.yaml"),
        )
        .unwrap()
        .api;
        let loc = |l: &str| Some(l.to_string());
        let built = |breach: Option<&str>| {
            let mut ex = answer("/assets/18446744073709551616?owner_id=7", 500, None, "");
            ex.request.operation = "getAsset".into();
            ex.request.breach = breach.map(|input| crate::execution::Breach {
                input: input.into(),
                kind: crate::execution::BreachKind::Unusual,
                class: Some(crate::execution::EdgeClass::Huge),
            });
            script(
                &api,
                &api.operation_positions(),
                "http://127.0.0.1:1",
                &[ex],
                &loc,
            )
        };
        // An id the script names and does not make: the server's, or the run's.
        let plain = built(None);
        let named: Vec<&str> = plain.unmade.iter().map(|u| u.name.as_str()).collect();
        assert_eq!(named, ["asset_id", "owner_id"]);
        // The integer past 64 bits a negative test sent is its own making.
        let negative = built(Some("path asset_id"));
        let named: Vec<&str> = negative.unmade.iter().map(|u| u.name.as_str()).collect();
        assert_eq!(named, ["owner_id"]);
        let negative = built(Some("query owner_id"));
        let named: Vec<&str> = negative.unmade.iter().map(|u| u.name.as_str()).collect();
        assert_eq!(named, ["asset_id"]);
    }

    #[test]
    fn paths_are_kept_as_sent() {
        let api = crate::load::load_text(
            "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /flow_runs/:\n    get:\n      operationId: listFlowRuns\n      parameters:\n      - {name: q, in: query, schema: {type: string}}\n      responses: {'200': {description: ok}}\n",
            std::path::Path::new("t.yaml"),
        )
        .unwrap()
        .api;
        let mut ex = answer("/flow_runs/?q=a%20b~c", 200, None, "[]");
        ex.request.operation = "listFlowRuns".into();
        let loc = |l: &str| Some(l.to_string());
        let s = script(
            &api,
            &api.operation_positions(),
            "http://127.0.0.1:1",
            &[ex],
            &loc,
        );
        assert_eq!(s.steps[0].path, "/flow_runs/?q=a%20b~c");
        assert!(s.direct.is_empty());
        let mut ex = answer("/a%2Fb//c/", 200, None, "");
        ex.request.operation = "other".into();
        let s = script(
            &api,
            &api.operation_positions(),
            "http://127.0.0.1:1",
            &[ex],
            &loc,
        );
        assert_eq!(s.steps[0].path, "/a%2Fb//c/");
    }
}
