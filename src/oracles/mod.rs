//! Oracles: named checks, each with a stable code, that decide whether an
//! exchange shows a fault. Faults are deduplicated by signature and counted.
//!
//! | code | fires when |
//! |---|---|
//! | `server_error` | the status is 5xx |
//! | `undocumented_status` | the status is below 500, is not 429 (an answer to our rate, not to the request), and is neither listed for the operation nor covered by a `4XX`-style range or `default`; 5xx are `server_error` alone |

use indexmap::IndexMap;
use serde::Serialize;

use crate::execution::Exchange;
use crate::model::Api;

/// Every oracle's code, for `--skip-check`.
pub const CODES: [&str; 2] = ["server_error", "undocumented_status"];

/// A fault, with how often it was seen and its first witness.
#[derive(Debug, Clone, Serialize)]
pub struct Fault {
    /// The oracle's code.
    pub code: String,
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
}

/// The checks themselves, without memory: what one exchange shows.
#[derive(Debug, Clone)]
pub struct Checker {
    skip: Vec<String>,
    positions: std::collections::HashMap<String, usize>,
}

impl Checker {
    /// Checks for `api` with some codes turned off.
    pub fn new(api: &Api, skip: Vec<String>) -> Checker {
        Checker {
            skip,
            positions: api.operation_positions(),
        }
    }

    fn enabled(&self, code: &str) -> bool {
        !self.skip.iter().any(|s| s == code)
    }

    /// The faults one exchange shows: (code, message).
    pub fn findings(&self, api: &Api, ex: &Exchange) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let Some(status) = ex.status else { return out };
        let op = self
            .positions
            .get(&ex.request.operation)
            .map(|&i| &api.operations[i]);
        if status >= 500 && self.enabled("server_error") {
            out.push(("server_error", format!("the server answered {status}")));
        }
        if let Some(op) = op {
            let documented = op.responses.keys().any(|k| {
                k == &status.to_string()
                    || k.eq_ignore_ascii_case("default")
                    || (k.len() == 3
                        && k.to_ascii_uppercase().ends_with("XX")
                        && k.starts_with(&status.to_string()[..1]))
            });
            if !documented && status < 500 && status != 429 && self.enabled("undocumented_status") {
                let listed: Vec<&str> = op.responses.keys().map(String::as_str).collect();
                out.push((
                    "undocumented_status",
                    format!(
                        "status {status} is not documented (documented: {})",
                        listed.join(", ")
                    ),
                ));
            }
        }
        out
    }
}

/// What makes two occurrences the same fault: code, operation, status.
pub fn signature(code: &str, ex: &Exchange) -> String {
    format!(
        "{code}:{}:{}",
        ex.request.operation,
        ex.status.map_or("-".to_string(), |s| s.to_string())
    )
}

/// The checks of a run and the faults they found.
pub struct Oracles {
    checker: Checker,
    faults: IndexMap<String, Fault>,
}

impl Oracles {
    /// Oracles for `api` with some codes turned off.
    pub fn new(api: &Api, skip: Vec<String>) -> Oracles {
        Oracles {
            checker: Checker::new(api, skip),
            faults: IndexMap::new(),
        }
    }

    /// How many distinct faults were found so far.
    pub fn fault_count(&self) -> usize {
        self.faults.len()
    }

    /// Checks one exchange.
    pub fn check(&mut self, api: &Api, ex: &Exchange) {
        for (code, message) in self.checker.findings(api, ex) {
            self.record(ex, code, message);
        }
    }

    fn record(&mut self, ex: &Exchange, code: &str, message: String) {
        let signature = signature(code, ex);
        self.faults
            .entry(signature.clone())
            .and_modify(|f| f.count += 1)
            .or_insert_with(|| Fault {
                code: code.to_string(),
                operation: ex.request.operation.clone(),
                status: ex.status,
                signature,
                message,
                count: 1,
                first_seq: ex.seq,
                witness: Vec::new(),
                confirmation: Confirmation::NotReplayed,
                reproducer: None,
            });
    }

    /// The faults found, in the order first seen.
    pub fn faults(&self) -> Vec<Fault> {
        self.faults.values().cloned().collect()
    }
}
