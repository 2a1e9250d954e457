//! Oracles: named checks, each with a stable code, that decide whether an
//! answer shows a fault. Every oracle is a row of [`registry::ORACLES`]: its
//! code, class (defect or conformance), severity, exactly when it fires, and
//! its guard and check; `--skip-check CODE` turns one off. What they find
//! is kept in the books of [`crate::faults`].
//!
//! Stateful faults are reported under the operation whose promise broke: the
//! DELETE, the creation, the PUT.

pub mod acceptance;
pub mod conformance;
pub mod echoes;
pub mod explained;
pub mod graphql;
pub mod identities;
pub mod identity;
pub mod leaks;
pub mod mask;
pub mod pointer;
pub mod registry;
pub mod schema;
pub mod security;
pub mod stateful;

mod checker;
mod finding;

pub use checker::{Answer, Checker};
pub use finding::{FaultCheck, Finding, Found};

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
