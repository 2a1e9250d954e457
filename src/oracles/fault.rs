//! What a fault is: the check a script runs to tell that it showed
//! ([`FaultCheck`]), what one check found in one answer ([`Finding`]), and
//! the report's record of a fault ([`Fault`]) with its witness, its
//! confirmation and its reproducer.

use serde::{Deserialize, Serialize};

use super::registry;
use super::registry::Code;
use crate::execution::Exchange;

/// A condition on the last step's response that a shell script can evaluate
/// as `cartograph replay` does ([`pointer`](mod@super::pointer) says how pointers are read: a
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
    /// schema does not allow: none of `allowed` ([`pointer::kind`](super::pointer::kind)'s names;
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
    /// The status is this, and an entry of the GraphQL answer's `errors`
    /// is at `path` and says `text`: what made the oracle judge it (an
    /// internal failure's code or wording, a refusal's wording, the
    /// server's report of a null for a non-null field), found in any ASCII
    /// case among the entry's texts but its path ([`graphql::error_says`](super::graphql::error_says)).
    GraphqlError {
        /// The status.
        status: u16,
        /// The entry's path as signatures write it (`data.book[*].author`:
        /// any index), `-` for an entry without one
        /// ([`graphql::error_path`](super::graphql::error_path)).
        path: String,
        /// What the entry says.
        text: String,
    },
}

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

/// What a check saw in one answer: everything of a [`Finding`] but the
/// code, which the registry stamps from the check's row.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
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
    /// A gap that runs through the whole description rather than one place
    /// of it (`null where the description marks no field nullable`): its
    /// faults are one cause, listing their places.
    pub drift: Option<&'static str>,
}

impl Found {
    /// What was seen under `operation`, without a script check (one is
    /// derived from the status).
    pub fn new(operation: &str, message: String, detail: String) -> Found {
        Found {
            operation: operation.to_string(),
            message,
            detail,
            check: None,
            shared: false,
            place: None,
            drift: None,
        }
    }

    /// The finding of the oracle `code`.
    pub fn stamped(self, code: Code) -> Finding {
        Finding { code, found: self }
    }
}

/// What one check found in one answer: what it saw, under its oracle's code.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The oracle's code.
    pub code: Code,
    /// What the check saw.
    pub found: Found,
}

impl Finding {
    /// A finding of `code` without a script check (one is derived from the
    /// status), for what is judged outside the registry's checks (the
    /// security probes).
    pub fn new(code: Code, operation: &str, message: String, detail: String) -> Finding {
        Found::new(operation, message, detail).stamped(code)
    }

    /// What makes two occurrences the same fault.
    pub fn signature(&self, status: Option<u16>) -> String {
        let status = status.map_or("-".to_string(), |s| s.to_string());
        let (code, f) = (self.code.as_str(), &self.found);
        if f.shared {
            return format!("{code}:{}:{status}", f.detail);
        }
        if f.detail.is_empty() {
            format!("{code}:{}:{status}", f.operation)
        } else {
            format!("{code}:{}:{status}:{}", f.operation, f.detail)
        }
    }

    /// The script check, derived from the code and status when not given.
    pub fn script_check(&self, status: Option<u16>) -> FaultCheck {
        if let Some(c) = &self.found.check {
            return c.clone();
        }
        match (self.code, status) {
            (Code::ServerError, _) => FaultCheck::ServerError,
            (Code::UseAfterDelete, _) => FaultCheck::Success,
            (_, Some(status)) => FaultCheck::Status { status },
            (_, None) => FaultCheck::ServerError,
        }
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
