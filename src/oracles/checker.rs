//! The checks themselves ([`Checker`]), without memory: the registry's
//! oracles that are on, applied to each answer of a test, and GraphQL
//! answers judged against their query; and one REST answer as the
//! registry's guards and checks see it ([`Answer`]).

use std::sync::Arc;

use super::echoes::Echoes;
use super::{
    Finding, Found, conformance, explained, graphql, identity, leaks, registry, schema, stateful,
};
use crate::execution::Exchange;
use crate::model::Api;
use registry::Code;

/// The checks themselves, without memory: what the answers of one test show.
#[derive(Clone)]
pub struct Checker {
    skip: Vec<Code>,
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

impl Checker {
    /// Checks for `api` with some codes turned off; `target` resolves
    /// `Location` headers (without it only relative ones are followed).
    pub fn new(api: &Api, skip: Vec<Code>, target: Option<url::Url>) -> Checker {
        Checker {
            skip,
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

    fn enabled(&self, code: Code) -> bool {
        !self.skip.contains(&code)
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
            // A negative test's out-of-range Int or malformed custom scalar
            // is meant to be refused: a rejection is not the tool's bug.
            .filter(|f| !(f.kind == graphql::Kind::ValidationError && ex.request.breach.is_some()))
            .filter_map(|f| {
                let code = registry::graphql_code(f.kind);
                if !self.enabled(code) {
                    return None;
                }
                let check = match code.oracle().graphql {
                    registry::GraphqlJudge::Walk(_, script) => script(&f, ex),
                    _ => None,
                };
                // One fault per (code, schema location or root field, kind),
                // however many query paths and root fields reach it.
                Some(
                    Found {
                        check,
                        shared: true,
                        ..Found::new(&f.root_field, f.message, f.location)
                    }
                    .stamped(code),
                )
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
            let op = self
                .positions
                .get(&ex.request.operation)
                .map(|&i| &api.operations[i]);
            for o in registry::ORACLES {
                if let registry::Judge::NoAnswer(check) = o.rest
                    && self.enabled(o.code)
                {
                    out.extend(check(ex, op).map(|f| f.stamped(o.code)));
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
                registry::Judge::Leak(family) => registry::leak(&answer, family),
                registry::Judge::Sequence(check) if sequence => check(&answer),
                _ => None,
            };
            // The row's code, whatever the check: it names none.
            out.extend(found.map(|f| f.stamped(o.code)));
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
    media: std::cell::OnceCell<Option<conformance::MediaGap>>,
    leak: std::cell::OnceCell<Option<(leaks::Family, &'static str, &'static str)>>,
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

    /// How the media type that came misses the documented ones.
    pub fn media(&self) -> Option<&conformance::MediaGap> {
        self.media
            .get_or_init(|| {
                self.op
                    .and_then(|op| conformance::media_finding(op, self.ex))
            })
            .as_ref()
    }

    /// The leak the body shows: its family, what it looks like, the marker.
    pub fn leak(&self) -> Option<(leaks::Family, &'static str, &'static str)> {
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
                .map(|f| f.code.as_str())
                .collect()
        };
        assert_eq!(codes(500), ["server_error"]);
        assert_eq!(codes(599), ["server_error"]);
        assert_eq!(codes(800), ["undocumented_status"]);
        assert_eq!(codes(600), ["undocumented_status"]);
        assert_eq!(codes(499), ["undocumented_status"]);
    }
}
