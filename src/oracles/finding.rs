//! What a check finds: what it saw in one answer ([`Found`]), stamped with
//! its oracle's code ([`Finding`]), and the condition a script runs to tell
//! that the fault showed ([`FaultCheck`]).

use serde::{Deserialize, Serialize};

use super::registry::Code;

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
    /// The status is this, and the answer has no header of this name.
    NoHeader {
        /// The status.
        status: u16,
        /// The header's name, lower case.
        name: String,
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
