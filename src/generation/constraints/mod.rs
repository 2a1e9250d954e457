//! Constraints a description states only in prose, or a server states only
//! when it refuses a request (400, 422): "The value should be integer between
//! double quotes", "limit must be an integer", FastAPI's `detail` entries
//! with their `loc`, `type` and `ctx`, Cornice's `details` with `location`
//! and `name`. Each names an input and a rule; the rule is written into that
//! input's schema so that later values keep it (unless a negative test breaks
//! it on purpose), and the run reports what it learnt.

mod answers;
mod inputs;
mod message;
mod prose;
mod rule;
#[cfg(test)]
mod tests;

use serde::Serialize;

pub use answers::from_answer;
pub use inputs::{Input, body_field};
pub use message::{message_text, named_inputs, names_input};
pub use prose::rules_in;
pub use rule::{Affix, Rule};

/// One constraint the run learnt, as `report.json` lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Learnt {
    /// The operation.
    pub operation: String,
    /// The input: `query limit`, `header If-Match`, `body /password`.
    pub input: String,
    /// The rule, in words.
    pub rule: String,
    /// Where it was read: `description`, or `answer 400 (seq 12)`.
    pub source: String,
    /// The words it was read from (a description's sentence, the server's
    /// message), cut at 200 characters.
    pub message: String,
}
