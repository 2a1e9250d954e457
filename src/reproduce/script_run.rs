//! Running a script: each step's `{{var}}`s are filled from the captures of
//! earlier responses, and a script with a fault tells whether it showed.

use std::collections::HashMap;

use serde_json::Value;

use super::{FaultCheck, Script, Source};
use crate::execution::wire::encode_segment;
use crate::execution::{Exchange, RequestSpec, TestRun};

/// Resolves a `Location` header to a request path under the target.
pub type Resolve = Box<dyn Fn(&str) -> Option<String> + Send>;

/// A script being run, as a test of the engine.
pub struct ScriptRun {
    /// The script.
    pub script: Script,
    vars: HashMap<String, Value>,
    next: usize,
    /// Variables a response did not provide (the run stops at the first).
    pub missing: Vec<String>,
    location: Resolve,
}

impl ScriptRun {
    /// A run of `script`; `location` resolves `Location` headers to request paths.
    pub fn new(script: Script, location: Resolve) -> ScriptRun {
        ScriptRun {
            script,
            vars: HashMap::new(),
            next: 0,
            missing: Vec::new(),
            location,
        }
    }

    fn capture(&mut self, step: usize, ex: &Exchange) {
        let captures = self.script.steps[step].captures.clone();
        for c in captures {
            let value = match &c.from {
                Source::LocationId => ex
                    .header("location")
                    .and_then(|l| (self.location)(l).or_else(|| Some(l.to_string())))
                    .and_then(|l| crate::execution::wire::location_id(&l)),
                Source::Json { pointer } => ex.json().and_then(|b| b.pointer(pointer)).cloned(),
            };
            match value {
                Some(v) if !v.is_null() => {
                    self.vars.insert(c.var.clone(), v);
                }
                _ => self.missing.push(c.var.clone()),
            }
        }
    }
}

/// Replaces `{{var}}` in `text` by the variable's value, each through `render`.
fn fill(
    text: &str,
    vars: &HashMap<String, Value>,
    render: &dyn Fn(&Value, bool) -> String,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start + 2..].find("}}") else {
            break;
        };
        let name = &rest[start + 2..start + 2 + len];
        match vars.get(name) {
            Some(v) => {
                out.push_str(&rest[..start]);
                let quoted = out.ends_with('"');
                out.push_str(&render(v, quoted));
            }
            None => out.push_str(&rest[..start + 2 + len + 2]),
        }
        rest = &rest[start + 2 + len + 2..];
    }
    out.push_str(rest);
    out
}

/// A value inside a JSON body: bare where the script put it bare (a number
/// stays a number, text becomes a JSON string), escaped inside quotes.
fn in_json(v: &Value, quoted: bool) -> String {
    let text = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if quoted {
        let json = Value::String(text).to_string();
        json[1..json.len() - 1].to_string()
    } else if v.is_number() || text.parse::<f64>().is_ok_and(f64::is_finite) {
        text
    } else {
        Value::String(text).to_string()
    }
}

impl TestRun for ScriptRun {
    fn next_request(&mut self, done: &[Exchange]) -> Option<RequestSpec> {
        if let Some(last) = done.last() {
            self.capture(self.next - 1, last);
            if !self.missing.is_empty() {
                return None;
            }
        }
        let step = self.script.steps.get(self.next)?.clone();
        self.next += 1;
        let vars = &self.vars;
        Some(RequestSpec {
            operation: step.operation,
            method: step.method,
            path: fill(&step.path, vars, &|v, _| encode_segment(v)),
            headers: step
                .headers
                .iter()
                .map(|(n, v)| {
                    (
                        n.clone(),
                        fill(v, vars, &|v, _| crate::execution::wire::as_text(v)),
                    )
                })
                .collect(),
            body: step.body.as_deref().map(|b| fill(b, vars, &in_json)),
            content_type: step.content_type,
            graphql_query: step.graphql_query,
            breach: step.breach,
            identity: step.identity,
        })
    }
}

/// Whether an answer says the server could not be asked at all (502, 503,
/// 504: down, starting, or behind a proxy that lost it) where the run was
/// answered without a server error: the step did not run, so what follows
/// proves nothing either way (a freshly reset server answers 503 now and
/// then until it is fully up).
pub fn unavailable(run_saw: Option<u16>, got: Option<u16>) -> bool {
    matches!(got, Some(502..=504)) && run_saw.is_some_and(|s| !(500..600).contains(&s))
}

/// Whether the last response shows the fault as `check` describes it.
pub fn shows(check: &FaultCheck, last: &Exchange) -> bool {
    let failed = |kind| last.failure.as_ref().is_some_and(|f| f.kind == kind);
    match check {
        FaultCheck::Timeout { .. } => return failed(crate::execution::FailureKind::Timeout),
        FaultCheck::NoAnswer => return failed(crate::execution::FailureKind::NoAnswer),
        FaultCheck::InvalidHttp => return failed(crate::execution::FailureKind::InvalidHttp),
        _ => {}
    }
    let Some(status) = last.status else {
        return false;
    };
    use crate::oracles::pointer;
    let body = last.json();
    let values = |p: &str| body.map(|b| pointer::values_at(b, p)).unwrap_or_default();
    match check {
        FaultCheck::Status { status: s } => status == *s,
        FaultCheck::ServerError => crate::oracles::is_server_error(status),
        FaultCheck::Success => (200..300).contains(&status),
        FaultCheck::JsonType {
            status: s,
            pointer: p,
            json_type,
            allowed,
        } => {
            status == *s
                && values(p).into_iter().any(|v| {
                    if allowed.is_empty() {
                        pointer::allowed(pointer::kind(v), std::slice::from_ref(json_type))
                    } else {
                        !pointer::allowed(pointer::kind(v), allowed)
                    }
                })
        }
        FaultCheck::JsonValue {
            status: s,
            pointer: p,
            value,
        } => status == *s && values(p).into_iter().any(|v| pointer::same(v, value)),
        FaultCheck::JsonMissing {
            status: s,
            pointer: p,
        } => status == *s && body.is_some_and(|b| pointer::holds(b, p).contains(&false)),
        FaultCheck::ContentType { status: s, media } => {
            status == *s
                && last
                    .header("content-type")
                    .is_some_and(|c| crate::oracles::conformance::essence(c) == *media)
        }
        FaultCheck::NoHeader { status: s, name } => status == *s && last.header(name).is_none(),
        FaultCheck::Timeout { .. } | FaultCheck::NoAnswer | FaultCheck::InvalidHttp => false,
        FaultCheck::NotJson { status: s } => {
            status == *s
                && !last.truncated
                && last.header("content-type").is_some_and(|c| {
                    crate::oracles::conformance::is_json(&crate::oracles::conformance::essence(c))
                })
                && !last.body.trim().is_empty()
                && !crate::oracles::conformance::parses_as_json(&last.body)
        }
        FaultCheck::BodyContains { status: s, text } => {
            status == *s
                && (last.body.contains(text.as_str())
                    || last.body.contains(&text.replace('\n', "\\n")))
        }
        FaultCheck::GraphqlError {
            status: s,
            path,
            text,
        } => {
            use crate::oracles::graphql;
            status == *s
                && body.is_some_and(|b| {
                    graphql::error_entries(b)
                        .into_iter()
                        .any(|e| graphql::error_path(e) == *path && graphql::error_says(e, text))
                })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_fill_paths_and_json_bodies() {
        let vars: HashMap<String, Value> = [
            ("book_id".to_string(), Value::from(4)),
            ("name".to_string(), Value::from("a \"b\"")),
            ("code".to_string(), Value::from("x y")),
        ]
        .into_iter()
        .collect();
        assert_eq!(
            fill(
                "/books/{{book_id}}/{{code}}",
                &vars,
                &|v, _| encode_segment(v)
            ),
            "/books/4/x%20y"
        );
        assert_eq!(
            fill(
                r#"{"bookId":{{book_id}},"n":"{{name}}","c":{{code}},"u":{{unknown}}}"#,
                &vars,
                &in_json
            ),
            r#"{"bookId":4,"n":"a \"b\"","c":"x y","u":{{unknown}}}"#
        );
    }
}
