//! Oracles: named checks, each with a stable code, that decide whether an
//! answer shows a fault. Every oracle is a row of [`registry::ORACLES`]: its
//! code, class (defect or conformance), severity, exactly when it fires, and
//! its guard and check; `--skip-check CODE` turns one off. Faults are
//! deduplicated by signature (code, operation, status, and the schema
//! location or leak kind), counted, and the first and the smallest witness
//! kept.
//!
//! Stateful faults are reported under the operation whose promise broke: the
//! DELETE, the creation, the PUT.

pub mod acceptance;
pub mod causes;
pub mod conformance;
pub mod explained;
pub mod graphql;
pub mod identity;
pub mod leaks;
pub mod mask;
pub mod pointer;
pub mod registry;
pub mod schema;
pub mod stateful;
pub mod witness;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use crate::execution::Exchange;
use crate::model::Api;

/// Every oracle's code, REST and GraphQL, for `--skip-check` and `--fail-on`.
pub fn all_codes() -> impl Iterator<Item = &'static str> {
    registry::codes()
}

/// A condition on the last step's response that a shell script can evaluate
/// as `cartograph replay` does ([`pointer`](mod@pointer) says how pointers are read: a
/// `*` token is any item of an array, and nothing is there under a missing
/// or null parent). Each says what the oracle judged, so that a server
/// without the fault never passes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FaultCheck {
    /// The status is exactly this.
    Status {
        /// The status.
        status: u16,
    },
    /// The status is 5xx.
    ServerError,
    /// The status is 2xx.
    Success,
    /// The status is this, and a JSON value at `pointer` is of a kind the
    /// schema does not allow: none of `allowed` ([`pointer::kind`]'s names;
    /// `number` allows integers). Without `allowed` (a reproducer of an
    /// earlier version), a value of jq's type `json_type`.
    JsonType {
        /// The status.
        status: u16,
        /// JSON pointer into the body (`/price`, `/*/price`).
        pointer: String,
        /// The kind the run saw there.
        json_type: String,
        /// The kinds the schema allows there.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        allowed: Vec<String>,
    },
    /// The status is this, and a JSON value at `pointer` is this value.
    JsonValue {
        /// The status.
        status: u16,
        /// JSON pointer into the body.
        pointer: String,
        /// The value the run saw there, which the schema does not allow.
        value: serde_json::Value,
    },
    /// The status is this, and an object is where `pointer`'s parent is,
    /// without `pointer`'s last member.
    JsonMissing {
        /// The status.
        status: u16,
        /// JSON pointer into the body.
        pointer: String,
    },
    /// The status is this, and the `Content-Type` is this media type.
    ContentType {
        /// The status.
        status: u16,
        /// The media type (without parameters).
        media: String,
    },
    /// No answer came within `seconds`.
    Timeout {
        /// The timeout the run used, rounded up.
        seconds: u64,
    },
    /// The connection was closed or reset before any answer.
    NoAnswer,
    /// What came back is not valid HTTP (or was cut off mid-answer).
    InvalidHttp,
    /// The status is this, the `Content-Type` says JSON, and the body does
    /// not parse as JSON.
    NotJson {
        /// The status.
        status: u16,
    },
    /// The status is this, and the body contains `text`.
    BodyContains {
        /// The status.
        status: u16,
        /// The text.
        text: String,
    },
}

/// A fault, with how often it was seen and its first witness.
#[derive(Debug, Clone, Serialize)]
pub struct Fault {
    /// The oracle's code.
    pub code: String,
    /// The oracle's class: `defect` or `conformance`.
    pub class: registry::Class,
    /// The oracle's severity.
    pub severity: registry::Severity,
    /// The id of its cause (`report.json` `causes`).
    pub cause: String,
    /// Its cause's title, values hidden.
    #[serde(skip)]
    pub cause_title: String,
    /// The operation.
    pub operation: String,
    /// The status, when there was a response.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// What makes two occurrences the same fault: code, operation, status.
    pub signature: String,
    /// What was seen.
    pub message: String,
    /// How many exchanges showed it.
    pub count: u64,
    /// The first exchange that showed it (its `seq` in the trace).
    pub first_seq: u64,
    /// The smallest witness seen: the requests of the test that showed it,
    /// up to the one that did.
    pub witness: Vec<WitnessStep>,
    /// Whether replaying the witness showed the fault again.
    pub confirmation: Confirmation,
    /// The minimised reproducer, when the fault was confirmed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reproducer: Option<Reproducer>,
}

/// One request of a witness, as sent during the run.
#[derive(Debug, Clone, Serialize)]
pub struct WitnessStep {
    /// Its `seq` in the trace.
    pub seq: u64,
    /// The operation.
    pub operation: String,
    /// HTTP method.
    pub method: String,
    /// Path and query.
    pub path: String,
    /// The status, when there was a response.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
}

/// What replaying a fault's witness showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Confirmation {
    /// Not replayed (replay turned off, read-only refusals, or the run was cut short).
    NotReplayed,
    /// Replayed, but the server gave no answer to the replays (it timed out
    /// or dropped the connection): no verdict either way.
    NoAnswer,
    /// The replay showed the same signature.
    Confirmed,
    /// The replays did not show it: kept, but marked.
    Flaky,
}

/// A confirmed fault's minimised sequence and the files that replay it.
#[derive(Debug, Clone, Serialize)]
pub struct Reproducer {
    /// The minimised steps: method, path (with `{{var}}` for carried values)
    /// and the status the last replay saw.
    pub steps: Vec<WitnessStep>,
    /// The shell script, relative to the output folder (`reproducers/….sh`).
    pub shell: String,
    /// The same sequence as JSON, for `cartograph replay`.
    pub json: String,
    /// Requests spent confirming and shrinking it.
    pub requests: u64,
    /// Whether it creates what it uses; false when it names resources it does
    /// not create (the server's own data, or what the run made earlier).
    pub standalone: bool,
    /// What it names without creating (`getBook bookId = 4`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmade: Vec<String>,
    /// Why it may not show the fault on a freshly started server (empty
    /// when it is standalone).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_standalone: Vec<String>,
}

/// What one check found in one answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The oracle's code.
    pub code: &'static str,
    /// The operation the fault is reported under.
    pub operation: String,
    /// What was seen, for people.
    pub message: String,
    /// The part of the signature beyond code, operation and status (a schema
    /// location, a media type, a leak marker), possibly empty.
    pub detail: String,
    /// How a script without Cartograph tells that the fault showed.
    pub check: Option<FaultCheck>,
    /// Whether the fault belongs to `detail` alone (a GraphQL schema
    /// location such as `Book.author`), whichever operation reached it: its
    /// signature then leaves the operation out.
    pub shared: bool,
    /// Where the description says what the answer broke, when the oracle
    /// knows (`#/components/schemas/Book/properties/price: type`): faults
    /// at one place are one cause, whichever operation answered them.
    pub place: Option<String>,
}

impl Finding {
    /// A finding without a script check (one is derived from the status).
    pub fn new(code: &'static str, operation: &str, message: String, detail: String) -> Finding {
        Finding {
            code,
            operation: operation.to_string(),
            message,
            detail,
            check: None,
            shared: false,
            place: None,
        }
    }

    /// What makes two occurrences the same fault.
    pub fn signature(&self, status: Option<u16>) -> String {
        let status = status.map_or("-".to_string(), |s| s.to_string());
        if self.shared {
            return format!("{}:{}:{status}", self.code, self.detail);
        }
        if self.detail.is_empty() {
            format!("{}:{}:{status}", self.code, self.operation)
        } else {
            format!("{}:{}:{status}:{}", self.code, self.operation, self.detail)
        }
    }

    /// The script check, derived from the code and status when not given.
    pub fn script_check(&self, status: Option<u16>) -> FaultCheck {
        if let Some(c) = &self.check {
            return c.clone();
        }
        match (self.code, status) {
            ("server_error", _) => FaultCheck::ServerError,
            ("use_after_delete", _) => FaultCheck::Success,
            (_, Some(status)) => FaultCheck::Status { status },
            (_, None) => FaultCheck::ServerError,
        }
    }
}

/// The checks themselves, without memory: what the answers of one test show.
#[derive(Clone)]
pub struct Checker {
    skip: Vec<String>,
    positions: std::collections::HashMap<String, usize>,
    schemas: Arc<schema::ResponseSchemas>,
    target: Option<url::Url>,
    graphql: Option<Arc<crate::model::graphql::TypeSystem>>,
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
        }
    }

    fn enabled(&self, code: &str) -> bool {
        !self.skip.iter().any(|s| s == code)
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
            .check(api, op, status, ex.header("content-type"), body)
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
                    // The server's own report of a null it could not return.
                    "graphql_null_violation" if f.message.starts_with("errors[") => {
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
        self.judge(api, &[], ex, false)
    }

    /// What each answer of a test shows, on its own and after the earlier
    /// answers of the same test.
    pub fn test(&self, api: &Api, exchanges: &[Exchange]) -> Vec<Vec<Finding>> {
        (0..exchanges.len())
            .map(|k| self.judge(api, &exchanges[..k], &exchanges[k], true))
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
    documented: std::cell::OnceCell<Option<&'a crate::model::Response>>,
    media: std::cell::OnceCell<Option<(&'static str, String, String)>>,
    leak: std::cell::OnceCell<Option<(&'static str, &'static str, &'static str)>>,
    explained: std::cell::OnceCell<Option<String>>,
}

impl<'a> Answer<'a> {
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

/// Whether a status is a server error: 500 to 599, but for 501 Not
/// Implemented, which is the server saying it does not offer what was asked
/// (a documented operation it does not implement is a gap in the
/// description, judged as an undocumented status, not a crash). Servers do
/// answer statuses above 599 (an echo endpoint returns whatever it is asked
/// for); those are merely undocumented.
pub fn is_server_error(status: u16) -> bool {
    (500..600).contains(&status) && status != 501
}

/// jq's name for a JSON value's type.
pub fn json_type(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

/// A fault as kept during a run: the report's record, the script check, and
/// the exchanges of its smallest witness (with the earlier requests that
/// created the ids it uses).
#[derive(Debug, Clone)]
pub struct Kept {
    /// The report's record.
    pub fault: Fault,
    /// How a script tells that it showed.
    pub check: FaultCheck,
    /// The smallest witness: producers of the ids it uses, then the test's
    /// requests up to the one that showed the fault.
    pub witness: Vec<Exchange>,
    /// The first witness, completed the same way (replayed when the smallest
    /// does not show the fault: it may rely on less of the run's state).
    pub first: Vec<Exchange>,
}

/// The faults of a run, by signature, in the order first seen.
#[derive(Default)]
pub struct Faults {
    kept: IndexMap<String, Kept>,
    count: Arc<AtomicUsize>,
    news: Arc<News>,
}

/// Faults first seen since the last look, for whoever listens (`--events`).
#[derive(Default)]
pub struct News {
    listening: std::sync::atomic::AtomicBool,
    fresh: std::sync::Mutex<Vec<Fault>>,
}

impl News {
    /// The faults first seen since the last call, in the order seen.
    pub fn take(&self) -> Vec<Fault> {
        std::mem::take(&mut *self.fresh.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Faults {
    /// An empty record.
    pub fn new() -> Faults {
        Faults::default()
    }

    /// A counter of distinct faults that other threads can read (progress).
    pub fn counter(&self) -> Arc<AtomicUsize> {
        self.count.clone()
    }

    /// Faults first seen from now on, as other threads can read them; only
    /// a caller of this keeps them.
    pub fn news(&self) -> Arc<News> {
        self.news.listening.store(true, Ordering::Relaxed);
        self.news.clone()
    }

    /// How many distinct faults so far.
    pub fn len(&self) -> usize {
        self.kept.len()
    }

    /// Whether none was found.
    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    /// Records what a test's answers showed (`findings` from [`Checker::test`]).
    pub fn record(
        &mut self,
        exchanges: &[Exchange],
        findings: &[Vec<Finding>],
        ledger: &witness::Ledger,
    ) {
        for (k, found) in findings.iter().enumerate() {
            let ex = &exchanges[k];
            for f in found {
                let signature = f.signature(ex.status);
                let shorter = |kept: &Kept| kept.fault.witness.len() > k + 1;
                match self.kept.get_mut(&signature) {
                    Some(kept) => {
                        kept.fault.count += 1;
                        if shorter(kept) {
                            if kept.first.is_empty() {
                                kept.first = std::mem::take(&mut kept.witness);
                            }
                            kept.witness = ledger.complete(&exchanges[..=k]);
                            kept.fault.witness = steps(&exchanges[..=k]);
                        }
                    }
                    None => {
                        let reason = causes::reason(f, ex);
                        let fault = Fault {
                            code: f.code.to_string(),
                            class: registry::class_of(f.code),
                            severity: registry::severity_of(f.code),
                            cause: causes::id(&reason.key),
                            cause_title: reason.title,
                            operation: f.operation.clone(),
                            status: ex.status,
                            signature: signature.clone(),
                            message: f.message.clone(),
                            count: 1,
                            first_seq: ex.seq,
                            witness: steps(&exchanges[..=k]),
                            confirmation: Confirmation::NotReplayed,
                            reproducer: None,
                        };
                        if self.news.listening.load(Ordering::Relaxed) {
                            self.news
                                .fresh
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .push(fault.clone());
                        }
                        self.kept.insert(
                            signature.clone(),
                            Kept {
                                fault,
                                check: f.script_check(ex.status),
                                witness: ledger.complete(&exchanges[..=k]),
                                first: Vec::new(),
                            },
                        );
                        self.count.store(self.kept.len(), Ordering::Relaxed);
                    }
                }
            }
        }
    }

    /// The faults as kept.
    pub fn kept(&self) -> impl Iterator<Item = &Kept> {
        self.kept.values()
    }

    /// The faults, in the order first seen.
    pub fn faults(&self) -> Vec<Fault> {
        self.kept.values().map(|k| k.fault.clone()).collect()
    }
}

/// The witness steps of some exchanges.
pub fn steps(exchanges: &[Exchange]) -> Vec<WitnessStep> {
    exchanges
        .iter()
        .map(|e| WitnessStep {
            seq: e.seq,
            operation: e.request.operation.clone(),
            method: e.request.method.clone(),
            path: e.request.path.clone(),
            status: e.status,
        })
        .collect()
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

#[cfg(test)]
mod graphql_identity_tests {
    use super::*;
    use crate::execution::RequestSpec;

    fn answer(seq: u64, query: &str, body: serde_json::Value) -> Exchange {
        Exchange {
            seq,
            request: RequestSpec {
                operation: "Query.book".into(),
                method: "POST".into(),
                path: String::new(),
                headers: Vec::new(),
                body: Some(serde_json::json!({ "query": query }).to_string()),
                content_type: Some("application/json".into()),
                graphql_query: true,
                breach: None,
            },
            status: Some(200),
            body: body.to_string(),
            ..Default::default()
        }
    }

    #[test]
    fn one_broken_field_is_one_fault_whatever_path_reaches_it() {
        let api = crate::load::load_text(
            crate::demo::GRAPHQL_SDL,
            std::path::Path::new("schema.graphql"),
        )
        .unwrap()
        .api;
        let checker = Checker::new(&api, Vec::new(), None);
        let mut faults = Faults::new();
        let ledger = witness::Ledger::new();
        let answers = [
            answer(
                0,
                "{ book(id: \"4\") { author { name } } }",
                serde_json::json!({"data": {"book": {"author": null}}}),
            ),
            answer(
                1,
                "{ order(id: \"2\") { book { author { name } } } }",
                serde_json::json!({"data": {"order": {"book": {"author": null}}}}),
            ),
            answer(
                2,
                "{ authors { books { author { name } } } }",
                serde_json::json!({"data": {"authors": [{"books": [{"author": null}, {"author": null}]}]}}),
            ),
        ];
        for ex in &answers {
            let findings = checker.test(&api, std::slice::from_ref(ex));
            faults.record(std::slice::from_ref(ex), &findings, &ledger);
        }
        let all = faults.faults();
        assert_eq!(all.len(), 1, "{all:#?}");
        assert_eq!(all[0].code, "graphql_null_violation");
        assert_eq!(all[0].count, 3);
        assert!(
            all[0].signature.contains("Book.author"),
            "{}",
            all[0].signature
        );
    }
}
