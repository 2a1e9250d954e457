//! The report's record of a fault ([`Fault`]): how often it was seen, its
//! first witness, what replaying it showed and its reproducer.

use serde::{Deserialize, Serialize};

use crate::execution::Exchange;
use crate::oracles::registry::{self, Code};

/// A fault, with how often it was seen and its first witness.
#[derive(Debug, Clone, Serialize)]
pub struct Fault {
    /// The oracle's code.
    pub code: Code,
    /// The oracle's class: `defect` or `conformance`.
    pub class: registry::Class,
    /// The oracle's severity.
    pub severity: registry::Severity,
    /// The id of its cause (`report.json` `causes`).
    pub cause: String,
    /// Its cause's title, values hidden.
    #[serde(skip)]
    pub cause_title: String,
    /// Where its cause shows it, when the cause spans places (a schema
    /// location, an operation's input): listed under the cause.
    #[serde(skip)]
    pub place: Option<String>,
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
    /// How many first steps plant what the fault needs: inputs the
    /// description forbids that the server accepted earlier in the run.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub planted: usize,
    /// What it did when run after a reset (`--reset-command`) before it
    /// was written; absent without a reset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fresh: Option<Fresh>,
}

/// What a reproducer did when run on a fresh server (after the run's reset).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fresh {
    /// It ran to its end and its last answer showed the fault.
    Shows,
    /// It ran to its end and the fault did not show.
    DoesNotShow,
    /// It could not run to its end: an answer lacked a value a later
    /// request needs, or no answer came.
    CannotRun,
}

impl Fresh {
    /// As written in report.json and the script's header.
    pub fn as_str(self) -> &'static str {
        match self {
            Fresh::Shows => "shows",
            Fresh::DoesNotShow => "does_not_show",
            Fresh::CannotRun => "cannot_run",
        }
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
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
