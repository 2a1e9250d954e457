//! What each conformance cause changes in the description: where (the
//! operation, response or schema as the document writes it, `$ref`s
//! followed, so a shared response or schema is changed once) and how.
//!
//! | cause | change |
//! |---|---|
//! | `undocumented_status` | a response for the status on each operation it was seen on, with the media type that came and a schema inferred from the bodies (Swagger 2: `schema` under the response, the media type in `produces`) |
//! | `content_type_mismatch`, `html_instead_of_json` | the media type that came, added to the response (Swagger 2: to the operation's `produces`) |
//! | `schema_violation` `required` | the member dropped from `required` (the list removed when it was the last) |
//! | `schema_violation` `type`, `enum` with null | nullable: `nullable`, `x-nullable`, or `"null"` in a 3.1 `type` list; a `$ref` is wrapped (`allOf`, 3.1 `anyOf`) |
//! | `schema_violation` `type` | widened: `integer` to `number`; else the type seen added (3.1 `type` list; 3.0 `anyOf` of the old schema and the new type; Swagger 2 `type` removed from a scalar) |
//! | `schema_violation` `enum` | the values seen added (a `const` becomes an `enum`) |
//! | `schema_violation` bounds | `minimum`, `maximum`, lengths and item counts moved to the values seen; an exclusive bound made inclusive |
//! | `schema_violation` `pattern`, `multipleOf`, `uniqueItems` | removed |
//! | `schema_violation` `anyOf` | a member of the type seen, when no member has that type |
//! | `invalid_input_accepted` | none: the server should refuse the input |

mod responses;
mod schemas;

use std::collections::HashMap;

use serde_json::Value;

use super::edit::{Editor, Why};
use crate::execution::Exchange;
use crate::faults::Fault;
use crate::faults::causes::Cause;
use crate::model::source;
use crate::model::{Api, SpecFormat};
use crate::oracles::Checker;
use crate::oracles::registry::Code;

/// What the planner reads.
pub struct Seen<'a> {
    /// The API, with its document.
    pub api: &'a Api,
    /// The run's faults.
    pub faults: &'a [Fault],
    /// Per fault signature, the answers that showed it.
    pub answers: &'a HashMap<String, Vec<Exchange>>,
    /// The run's checks (schema violations are found again in the answers).
    pub checker: &'a Checker,
}

/// Writes the actions that settle `cause`; `Err` says why none could be.
pub(super) fn plan(editor: &mut Editor, seen: &Seen<'_>, cause: &Cause) -> Result<(), String> {
    let faults: Vec<&Fault> = seen.faults.iter().filter(|f| f.cause == cause.id).collect();
    let base = evidence(cause, &faults);
    let before = editor.actions.len();
    let mut notes: Vec<String> = Vec::new();
    let mut fix = Fix {
        editor,
        seen,
        why: Why {
            cause: cause.id.clone(),
            description: base.clone(),
        },
        base,
        notes: &mut notes,
    };
    match cause.code {
        Code::UndocumentedStatus => fix.statuses(&faults),
        Code::ContentTypeMismatch | Code::HtmlInsteadOfJson => fix.media(&faults),
        Code::SchemaViolation => fix.schemas(&faults),
        Code::InvalidInputAccepted => {
            return Err(
                "the server accepted an input the description forbids: the server should refuse it (loosening the description would hide the missing check)"
                    .into(),
            )
        }
        _ => return Err("no change to an OpenAPI description settles it".into()),
    }
    if editor.actions.len() > before {
        return Ok(());
    }
    notes.dedup();
    Err(if notes.is_empty() {
        "the description already allows what was seen".into()
    } else {
        notes.join("; ")
    })
}

/// The description of a cause's actions: the cause, how often and where it
/// was seen, one example.
fn evidence(cause: &Cause, faults: &[&Fault]) -> String {
    let mut ops: Vec<&str> = cause
        .operations
        .iter()
        .map(String::as_str)
        .take(6)
        .collect();
    if cause.operations.len() > 6 {
        ops.push("…");
    }
    let sample = faults
        .iter()
        .find(|f| f.signature == cause.representative)
        .or(faults.first())
        .map(|f| {
            let step = f
                .witness
                .last()
                .map(|s| {
                    let status = s.status.map_or("no answer".into(), |s| s.to_string());
                    format!("{} {} answered {status}: ", s.method, s.path)
                })
                .unwrap_or_default();
            format!("; e.g. {step}{}", cut(&f.message, 200))
        })
        .unwrap_or_default();
    format!(
        "{} {}: seen {} time(s) on {}{sample}.",
        cause.id,
        cause.title,
        cause.count,
        ops.join(", ")
    )
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max).collect();
    s.push('…');
    s
}

struct Fix<'e, 's> {
    editor: &'e mut Editor,
    seen: &'e Seen<'s>,
    /// The cause and its evidence.
    base: String,
    /// The cause, its evidence and what the next actions do.
    why: Why,
    notes: &'e mut Vec<String>,
}

/// The answers that showed `faults`.
fn answers<'a>(seen: &Seen<'a>, faults: &[&Fault]) -> Vec<&'a Exchange> {
    faults
        .iter()
        .flat_map(|f| seen.answers.get(&f.signature).into_iter().flatten())
        .collect()
}

impl Fix<'_, '_> {
    fn format(&self) -> SpecFormat {
        self.seen.api.format
    }

    /// Says what the next actions do.
    fn doing(&mut self, what: impl std::fmt::Display) {
        self.why.description = format!("{} Fix: {what}.", self.base);
    }

    fn note(&mut self, text: impl Into<String>) {
        self.notes.push(text.into());
    }

    fn update(&mut self, at: &[String], patch: Value) -> bool {
        let Value::Object(patch) = patch else {
            return false;
        };
        self.editor.update(at, patch, &self.why)
    }

    /// Where the document writes operation `name` (its path item followed
    /// when a `$ref`).
    fn operation_at(&mut self, name: &str) -> Option<Vec<String>> {
        let Some(op) = self.seen.api.operation(name) else {
            self.note(format!("{name} is not in the description"));
            return None;
        };
        let at = source::walk(&self.editor.doc, &source::tokens(&op.pointer));
        if at.is_none() {
            self.note(format!(
                "{name} is written in another file than the description's root"
            ));
        }
        at
    }
}
