//! The checks themselves ([`Checker`]), without memory: the registry's
//! oracles that are on, applied to each answer of a test, and GraphQL
//! answers judged against their query; and one REST answer as the
//! registry's guards and checks see it ([`Answer`]).

use std::sync::Arc;

use super::echoes::Echoes;
use super::{
    FaultCheck, Finding, conformance, explained, graphql, identity, json_type, leaks, pointer,
    registry, schema, stateful,
};
use crate::execution::Exchange;
use crate::model::Api;

/// The checks themselves, without memory: what the answers of one test show.
#[derive(Clone)]
pub struct Checker {
    skip: Vec<String>,
    positions: std::collections::HashMap<String, usize>,
    schemas: Arc<schema::ResponseSchemas>,
    target: Option<url::Url>,
    graphql: Option<Arc<crate::model::graphql::TypeSystem>>,
    /// Whether the description marks any schema nullable: when none is, a
    /// null anywhere is one gap of the whole description.
    marks_nullable: bool,
    /// The name of the run's own identity, as the identity checks name it.
    main_identity: Option<String>,
}

/// Whether any schema of the description (its components, its operations'
/// answers) allows null.
fn marks_nullable(api: &Api) -> bool {
    fn any(s: &crate::model::Schema) -> bool {
        s.nullable()
            || s.items.as_deref().is_some_and(any)
            || s.additional_properties.as_deref().is_some_and(any)
            || s.properties.values().any(any)
            || s.alternatives.iter().any(any)
    }
    api.schemas.values().any(any)
        || api
            .operations
            .iter()
            .flat_map(|op| op.responses.values())
            .flat_map(|r| r.content.values())
            .any(any)
}

/// What a reproducer looks for in an answer whose `errors` is malformed: a
/// kind `errors` may not be, an entry that is not an object, or a `message`
/// that is missing or not a string.
fn malformed_errors_check(body: Option<&serde_json::Value>, status: u16) -> Option<FaultCheck> {
    use serde_json::Value;
    let kind_check = |pointer: &str, v: &Value, allowed: &str| FaultCheck::JsonType {
        status,
        pointer: pointer.into(),
        json_type: pointer::kind(v).to_string(),
        allowed: vec![allowed.into()],
    };
    let errors = body?.get("errors")?;
    let Value::Array(items) = errors else {
        return Some(kind_check("/errors", errors, "array"));
    };
    if let Some(bad) = items.iter().find(|e| !e.is_object()) {
        return Some(kind_check("/errors/*", bad, "object"));
    }
    let messages: Vec<Option<&Value>> = items.iter().map(|e| e.get("message")).collect();
    if let Some(bad) = messages.iter().flatten().find(|m| !m.is_string()) {
        return Some(kind_check("/errors/*/message", bad, "string"));
    }
    messages.contains(&None).then(|| FaultCheck::JsonMissing {
        status,
        pointer: "/errors/*/message".into(),
    })
}

impl Checker {
    /// Checks for `api` with some codes turned off; `target` resolves
    /// `Location` headers (without it only relative ones are followed).
    pub fn new(api: &Api, skip: Vec<String>, target: Option<url::Url>) -> Checker {
        Checker {
            skip: registry::expand(&skip)
                .into_iter()
                .map(String::from)
                .collect(),
            positions: api.operation_positions(),
            schemas: Arc::new(schema::ResponseSchemas::new(api)),
            target,
            graphql: api.graphql.clone().map(Arc::new),
            marks_nullable: marks_nullable(api),
            main_identity: None,
        }
    }

    /// The same, naming the run's own identity `name` in the identity
    /// checks' findings (`main` otherwise).
    pub fn with_main_identity(mut self, name: &str) -> Checker {
        self.main_identity = Some(name.to_string());
        self
    }

    fn enabled(&self, code: &str) -> bool {
        !self.skip.iter().any(|s| s == code)
    }

    /// Each operation's position in the API's operations, by name
    /// ([`Api::operation_positions`], made once).
    pub fn positions(&self) -> &std::collections::HashMap<String, usize> {
        &self.positions
    }

    /// The request path a `Location` header points to, under the target.
    pub fn location_path(&self, location: &str) -> Option<String> {
        match &self.target {
            Some(t) => crate::execution::target_relative(t, location),
            None => location.starts_with('/').then(|| location.to_string()),
        }
    }

    /// Warnings about checks that cannot run fully (schemas that do not compile).
    pub fn warnings(&self) -> Vec<String> {
        self.schemas.warnings()
    }

    /// How a REST answer's JSON body breaks the schema documented for its
    /// status and media type (what `schema_violation` reports the first of).
    pub fn violations(&self, api: &Api, ex: &Exchange) -> Vec<schema::Violation> {
        let (Some(&op), Some(status), Some(body)) = (
            self.positions.get(&ex.request.operation),
            ex.status,
            ex.json(),
        ) else {
            return Vec::new();
        };
        self.schemas
            .check_text(api, op, status, ex.header("content-type"), body, &ex.body)
    }

    /// What one GraphQL answer shows: [`graphql::check`] on the query sent.
    fn graphql(&self, ts: &crate::model::graphql::TypeSystem, ex: &Exchange) -> Vec<Finding> {
        let sent: serde_json::Value = ex
            .request
            .body
            .as_deref()
            .and_then(|b| serde_json::from_str(b).ok())
            .unwrap_or_default();
        let query = sent
            .get("query")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("");
        let name = sent
            .get("operationName")
            .and_then(serde_json::Value::as_str);
        let variables = sent.get("variables").cloned().unwrap_or_default();
        graphql::check(ts, query, name, &variables, ex.status, ex.json(), &ex.body)
            .into_iter()
            .filter(|f| self.enabled(f.code))
            // A negative test's out-of-range Int or malformed custom scalar
            // is meant to be refused: a rejection is not the tool's bug.
            .filter(|f| !(f.code == "graphql_validation_error" && ex.request.breach.is_some()))
            .map(|f| {
                let status = ex.status.unwrap_or(0);
                let check = match f.code {
                    "server_error" => Some(FaultCheck::ServerError),
                    code if leaks::CODES.contains(&code) => {
                        leaks::find(&ex.body).map(|(_, _, marker)| FaultCheck::BodyContains {
                            status,
                            text: marker.trim().to_string(),
                        })
                    }
                    // What made the rules judge the `errors` entry, at its
                    // path: a server answering 200 to everything, or data
                    // there, does not pass for the fault.
                    "graphql_internal_error" | "graphql_validation_error" => {
                        graphql::error_check(ex.json(), f.code, &f.path, status)
                    }
                    // The server's own report of a null it could not return.
                    "graphql_null_violation" if f.message.starts_with("errors[") => {
                        if let Some(check) =
                            graphql::error_check(ex.json(), f.code, &f.path, status)
                        {
                            return Finding {
                                check: Some(check),
                                shared: true,
                                ..Finding::new(f.code, &f.root_field, f.message, f.location)
                            };
                        }
                        let lower = ex.body.to_lowercase();
                        graphql::NULL_REPORT_WORDING.iter().find_map(|w| {
                            // Byte offsets of the lower-cased text match the
                            // original's for these ASCII phrases only when
                            // nothing before them changed length.
                            let at = lower.find(w)?;
                            let text = ex.body.get(at..at + w.len())?;
                            (text.to_lowercase() == *w).then(|| FaultCheck::BodyContains {
                                status,
                                text: text.to_string(),
                            })
                        })
                    }
                    "graphql_null_violation" if f.message.starts_with("`data` is null") => {
                        Some(FaultCheck::JsonValue {
                            status,
                            pointer: "/data".into(),
                            value: serde_json::Value::Null,
                        })
                    }
                    // A null where the walk found it: a null parent is not a
                    // null field (nothing is there under it).
                    "graphql_null_violation" if f.path.starts_with("data") => {
                        Some(FaultCheck::JsonValue {
                            status,
                            pointer: pointer::from_graphql_path(&f.path),
                            value: serde_json::Value::Null,
                        })
                    }
                    // The very value the walk found wrong, where it found it.
                    _ if f.path.starts_with("data") && f.seen.is_some() => {
                        let at = pointer::from_graphql_path(&f.path);
                        match f.seen.clone() {
                            Some(
                                v @ (serde_json::Value::Array(_) | serde_json::Value::Object(_)),
                            ) => Some(FaultCheck::JsonType {
                                status,
                                pointer: at,
                                json_type: json_type(&v).to_string(),
                                allowed: Vec::new(),
                            }),
                            Some(value) => Some(FaultCheck::JsonValue {
                                status,
                                pointer: at,
                                value,
                            }),
                            None => None,
                        }
                    }
                    "graphql_malformed_errors" => malformed_errors_check(ex.json(), status),
                    "graphql_missing_field" if f.path.starts_with("data.") => {
                        Some(FaultCheck::JsonMissing {
                            status,
                            pointer: pointer::from_graphql_path(&f.path),
                        })
                    }
                    _ => None,
                };
                // One fault per (code, schema location or root field, kind),
                // however many query paths and root fields reach it.
                Finding {
                    check,
                    shared: true,
                    ..Finding::new(f.code, &f.root_field, f.message, f.location)
                }
            })
            .collect()
    }

    /// What one answer shows on its own.
    pub fn exchange(&self, api: &Api, ex: &Exchange) -> Vec<Finding> {
        self.judge(api, &[], ex, false, &Echoes::new())
    }

    /// What each answer of a test shows, on its own and after the earlier
    /// answers of the same test.
    pub fn test(&self, api: &Api, exchanges: &[Exchange]) -> Vec<Vec<Finding>> {
        self.test_after(api, exchanges, &Echoes::new())
    }

    /// [`Checker::test`] after the earlier tests of a run planted `echoes`:
    /// what they made the server store and serve back is not a fault of
    /// the answers that show it.
    pub fn test_after(
        &self,
        api: &Api,
        exchanges: &[Exchange],
        echoes: &Echoes,
    ) -> Vec<Vec<Finding>> {
        (0..exchanges.len())
            .map(|k| self.judge(api, &exchanges[..k], &exchanges[k], true, echoes))
            .collect()
    }

    /// The registry's oracles that are on, applied to `ex` after `earlier`
    /// (the sequence checks only when `sequence`).
    fn judge(
        &self,
        api: &Api,
        earlier: &[Exchange],
        ex: &Exchange,
        sequence: bool,
        echoes: &Echoes,
    ) -> Vec<Finding> {
        let mut out = Vec::new();
        if ex.failure.is_some() {
            // A delay the request asked for is no timeout of the server.
            let asked_to_wait = || {
                let op = self
                    .positions
                    .get(&ex.request.operation)
                    .map(|&i| &api.operations[i]);
                explained::delay(op, ex).is_some()
            };
            for o in registry::ORACLES {
                if let registry::Judge::NoAnswer(check) = o.rest
                    && self.enabled(o.code)
                    && !(o.code == "timeout" && asked_to_wait())
                {
                    out.extend(check(ex));
                }
            }
            return out;
        }
        if let Some(ts) = &self.graphql {
            return self.graphql(ts, ex);
        }
        let Some(status) = ex.status else { return out };
        let op_index = self.positions.get(&ex.request.operation).copied();
        let answer = Answer {
            checker: self,
            api,
            ex,
            status,
            op_index,
            op: op_index.map(|i| &api.operations[i]),
            earlier,
            echoes,
            documented: std::cell::OnceCell::new(),
            media: std::cell::OnceCell::new(),
            leak: std::cell::OnceCell::new(),
            explained: std::cell::OnceCell::new(),
        };
        for o in registry::ORACLES {
            if !self.enabled(o.code) {
                continue;
            }
            let found = match o.rest {
                registry::Judge::Answer { guard, check } if guard(&answer) => check(&answer),
                registry::Judge::Sequence(check) if sequence => check(&answer),
                _ => None,
            };
            out.extend(found);
        }
        out
    }
}

/// One REST answer as the registry's guards and checks see it; what more
/// than one of them asks for is worked out once.
pub struct Answer<'a> {
    checker: &'a Checker,
    /// The API.
    pub api: &'a Api,
    /// The exchange judged.
    pub ex: &'a Exchange,
    /// Its status.
    pub status: u16,
    /// The position of its operation in the API, when known.
    pub op_index: Option<usize>,
    /// Its operation, when known.
    pub op: Option<&'a crate::model::Operation>,
    /// The earlier exchanges of its test, oldest first.
    pub earlier: &'a [Exchange],
    echoes: &'a Echoes,
    documented: std::cell::OnceCell<Option<&'a crate::model::Response>>,
    media: std::cell::OnceCell<Option<(&'static str, String, String)>>,
    leak: std::cell::OnceCell<Option<(&'static str, &'static str, &'static str)>>,
    explained: std::cell::OnceCell<Option<String>>,
}

impl<'a> Answer<'a> {
    /// Whether the description marks any schema nullable.
    pub fn marks_nullable(&self) -> bool {
        self.checker.marks_nullable
    }

    /// The name of the run's own identity.
    pub fn main_identity(&self) -> &str {
        self.checker
            .main_identity
            .as_deref()
            .unwrap_or(crate::execution::identities::MAIN)
    }

    /// The operation's name, as the request named it.
    pub fn operation(&self) -> &str {
        &self.ex.request.operation
    }

    /// The response entry documenting the status.
    pub fn documented(&self) -> Option<&'a crate::model::Response> {
        *self.documented.get_or_init(|| {
            self.op
                .and_then(|op| conformance::documented(op, self.status))
        })
    }

    /// The media-type finding of a documented status: its code, message and
    /// the media type that came.
    pub fn media(&self) -> Option<&(&'static str, String, String)> {
        self.media
            .get_or_init(|| {
                self.op
                    .and_then(|op| conformance::media_finding(op, self.ex))
            })
            .as_ref()
    }

    /// The leak the body shows: code, what it looks like, the marker.
    pub fn leak(&self) -> Option<(&'static str, &'static str, &'static str)> {
        *self.leak.get_or_init(|| leaks::find(&self.ex.body))
    }

    /// Why the request itself explains the status, if it does (an
    /// oversized or route-changing value, a status it asked for):
    /// [`explained::status`].
    pub fn explained(&self) -> Option<&str> {
        self.explained
            .get_or_init(|| explained::status(self.op, self.ex, self.status))
            .as_deref()
    }

    /// The response schemas.
    pub fn schemas(&self) -> &schema::ResponseSchemas {
        &self.checker.schemas
    }

    /// Whether a violation of the answer's `body` shows back a wrong value
    /// the run planted ([`Echoes`]).
    pub fn echoes(&self, v: &schema::Violation, body: &serde_json::Value) -> bool {
        let test: Vec<&Exchange> = self.earlier.iter().chain([self.ex]).collect();
        self.echoes.explain(&test, v, body)
    }

    /// The answer with the earlier ones of its test, for the stateful checks.
    pub fn with_sequence<T>(&self, judge: impl FnOnce(&stateful::Sequence<'_>) -> T) -> T {
        let location = |l: &str| self.checker.location_path(l);
        let single = |e: &Exchange| {
            self.checker
                .positions
                .get(&e.request.operation)
                .is_some_and(|&i| identity::names_one_resource(&self.api.operations[i]))
        };
        let param = |e: &Exchange| {
            let &i = self.checker.positions.get(&e.request.operation)?;
            let last = self.api.operations[i]
                .path
                .trim_end_matches('/')
                .rsplit('/')
                .next()?;
            last.strip_prefix('{')?
                .strip_suffix('}')
                .map(str::to_string)
        };
        judge(&stateful::Sequence {
            earlier: self.earlier,
            ex: self.ex,
            location: &location,
            single: &single,
            param: &param,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execution::RequestSpec;

    fn answer(status: u16) -> Exchange {
        Exchange {
            request: RequestSpec {
                operation: "listAuthors".into(),
                method: "GET".into(),
                path: "/authors".into(),
                headers: Vec::new(),
                body: None,
                content_type: None,
                graphql_query: false,
                breach: None,
                identity: None,
            },
            status: Some(status),
            ..Default::default()
        }
    }

    #[test]
    fn server_error_means_500_to_599_only() {
        let api = crate::load::load_text(
            crate::demo::OPENAPI_YAML,
            std::path::Path::new("openapi.yaml"),
        )
        .unwrap()
        .api;
        let checker = Checker::new(&api, Vec::new(), None);
        let codes = |status| -> Vec<&str> {
            checker
                .exchange(&api, &answer(status))
                .iter()
                .map(|f| f.code)
                .collect()
        };
        assert_eq!(codes(500), ["server_error"]);
        assert_eq!(codes(599), ["server_error"]);
        assert_eq!(codes(800), ["undocumented_status"]);
        assert_eq!(codes(600), ["undocumented_status"]);
        assert_eq!(codes(499), ["undocumented_status"]);
    }
}
