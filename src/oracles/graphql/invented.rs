//! Refusals of values Cartograph invented for custom scalars. A custom
//! scalar's values are whatever its server says (a `BigInt` of digits, a
//! `Date` of the server's format); Cartograph invents them from the name and
//! description, and a server refusing one it cannot parse is right: the
//! query is not wrong, and no finding is due.

use apollo_compiler::ast;

use super::messages::ErrorEntry;
use super::operation::Operation;
use crate::model::graphql::{TypeKind, TypeSystem};

/// Lower-case phrases of a refusal of a value (rather than of the document).
const VALUE_REFUSAL: &[&str] = &[
    "invalid",
    "cannot represent",
    "can not represent",
    "cannot parse",
    "could not parse",
    "failed to parse",
    "unable to parse",
    "not a valid",
    "expected type",
    "expected value of type",
    "does not match",
    "cannot be converted",
    "can be converted",
];

/// Lower-case phrases of a refusal of the document or of a value left out:
/// the query's own mistake whatever scalar it names.
const NOT_ABOUT_THE_VALUE: &[&str] = &[
    "used in position",
    "unknown type",
    "is not defined",
    "never used",
    "is not used",
    "cannot query field",
    "unknown argument",
    "unknown field",
    "not provided",
    "must not be null",
    "of non-null type",
    "of required type",
    "is required",
    "null value for nonnull",
];

/// The custom scalars a request's values reach.
pub(super) struct Invented<'a> {
    /// Custom scalars its variables reach, through input objects too, and
    /// those of its root fields' arguments (for values written inline).
    scalars: Vec<&'a str>,
    /// Its variables whose type is a custom scalar itself.
    variables: Vec<&'a str>,
}

impl<'a> Invented<'a> {
    /// The custom scalars of `op`'s variables and root arguments.
    pub(super) fn of(ts: &'a TypeSystem, op: Option<&Operation<'a>>) -> Invented<'a> {
        let mut out = Invented {
            scalars: Vec::new(),
            variables: Vec::new(),
        };
        let Some(op) = op else { return out };
        for def in op.variables {
            let base = def.ty.inner_named_type().as_str();
            if is_custom(ts, base) {
                out.variables.push(def.name.as_str());
            }
            out.reach(ts, base, 0);
        }
        for item in op.selection {
            if let ast::Selection::Field(f) = item
                && let Some(def) = op.root.field(&f.name)
            {
                for arg in &def.args {
                    out.reach(ts, arg.ty.base(), 0);
                }
            }
        }
        out
    }

    /// Adds the custom scalars type `name` reaches.
    fn reach(&mut self, ts: &'a TypeSystem, name: &str, depth: usize) {
        let Some(t) = ts.get(name) else { return };
        match t.kind {
            TypeKind::Scalar
                if is_custom(ts, &t.name) && !self.scalars.contains(&t.name.as_str()) =>
            {
                self.scalars.push(&t.name);
            }
            // Input objects nest without end only in invalid schemas; the
            // bound keeps such a one from overflowing the stack.
            TypeKind::InputObject if depth < 16 => {
                for f in &t.input_fields {
                    self.reach(ts, f.ty.base(), depth + 1);
                }
            }
            _ => {}
        }
    }

    /// Whether the entry refuses a value of one of these custom scalars:
    /// it says a value is invalid, and names the scalar (`Expected type
    /// "BigInt"`, `Failed to parse "UUID"`, `Date cannot represent…`) or a
    /// variable of that scalar (`Variable "$since" got invalid value`).
    pub(super) fn refused(&self, e: &ErrorEntry) -> bool {
        if self.scalars.is_empty() {
            return false;
        }
        let m = e.message.as_ref();
        let lower = m.to_lowercase();
        if NOT_ABOUT_THE_VALUE.iter().any(|w| lower.contains(w))
            || !VALUE_REFUSAL.iter().any(|w| lower.contains(w))
        {
            return false;
        }
        // Case kept: a scalar called `Value` is not named by "Invalid value".
        if self.scalars.iter().any(|s| names_word(m, s)) {
            return true;
        }
        lower.starts_with("variable ")
            && self.variables.iter().any(|v| {
                names_word(m, &format!("${v}"))
                    || ['"', '\'', '`']
                        .iter()
                        .any(|quote| m.contains(&format!("{quote}{v}{quote}")))
            })
    }
}

/// Whether `word` stands in `text` on its own (not inside a longer name).
fn names_word(text: &str, word: &str) -> bool {
    let is_name = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_name) && !after.is_some_and(is_name)
    })
}

fn is_custom(ts: &TypeSystem, name: &str) -> bool {
    ts.get(name).is_some_and(|t| t.kind == TypeKind::Scalar)
        && !crate::model::graphql::BUILTIN_SCALARS.contains(&name)
}
