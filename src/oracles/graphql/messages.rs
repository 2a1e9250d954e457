//! What an `errors` entry says: our own request rejected (validation), a
//! leak (stack trace, SQL, debug page), the server reporting a null it
//! should not have returned, or an unexpected internal failure; told apart by
//! `extensions.code` and by the wording of the common GraphQL servers.

use crate::oracles::leaks::Family;
use std::borrow::Cow;

use serde_json::Value;

use super::Kind;
use super::findings::Seg;

/// Lower-case message phrases that only a validation (or request) error of the
/// query itself uses, whatever the path.
pub const VALIDATION_WORDING: &[&str] = &[
    "cannot query field",
    "unknown field \"",
    "unknown field '",
    "unknown argument",
    "unknown type \"",
    "unknown type '",
    "unknown fragment",
    "unknown directive",
    "unknown operation named",
    "is required, but it was not provided",
    "is required but not provided",
    "must have a selection of subfields",
    "must not have a selection since type",
    "must have a sub selection",
    "use different aliases on the fields",
    "cannot be spread here",
    "there can only be one argument named",
    "there can only be one variable named",
    "there can only be one fragment named",
    "there can only be one operation named",
    "invalid value for argument",
    "invalid default value for argument",
    "failed to parse \"",
    "is not defined by type",
    "\" may not be used on",
    "cannot condition non composite type",
    "anonymous operation must be the only defined operation",
    "must provide operation name",
    "document contains multiple operations",
    "schema is not configured for",
    "does not exist on the type",
    "validation error (",
    "validation error of type",
];

/// Lower-case phrases after `variable ` at the start of a message that make it
/// a variable error of the request (graphql-js, Apollo, graphql-java and
/// async-graphql wordings): a value refused, missing, null where it must
/// not be, or a variable the document misuses.
const VARIABLE_WORDING: &[&str] = &[
    "of type",
    "of required type",
    "of non-null type",
    "must not be null",
    "got invalid value",
    "has an invalid value",
    "has coerced null value",
    "is not defined",
    "is never used",
    "is not used",
    "was not provided",
    "cannot be of non-input type",
];

/// Lower-case phrases after `argument ` at the start of a message that make
/// it a refusal of an argument's value while executing (graphql-js's
/// `getArgumentValues`): the value is refused, missing or null.
const ARGUMENT_WORDING: &[&str] = &[
    "of required type",
    "of non-null type",
    "has invalid value",
    "was not provided",
    "must not be null",
];

/// Lower-case input-coercion phrases: a validation error on an entry without
/// `path`, but an output (serialisation) error of the server on one with it.
const COERCION_WORDING: &[&str] = &["cannot represent", "expected value of type"];

/// Lower-case phrases of a query the server could not parse.
const PARSE_WORDING: &[&str] = &[
    "syntax error",
    "invalid syntax",
    "parse error",
    "failed to parse query",
];

/// Lower-case phrases of a server reporting a non-null field it resolved to null.
pub const NULL_REPORT_WORDING: &[&str] = &[
    "cannot return null for non-nullable",
    "was declared as a non null type",
];

/// Lower-case message phrases of an unexpected failure; each names a crash or
/// the masked message frameworks put in its place, never a business rule.
pub const INTERNAL_WORDING: &[&str] = &[
    "internal error",
    "internal server error",
    "internal_server_error",
    "unexpected error",
    "unexpected exception",
    "unexpected execution error",
    "nullpointerexception",
    "nullreferenceexception",
    "classcastexception",
    "indexoutofboundsexception",
    "arithmeticexception",
    "cannot read properties of undefined",
    "cannot read properties of null",
    "cannot read property",
    "is not a function",
    "'nonetype' object",
    "called `option::unwrap()`",
    "called `result::unwrap()`",
    "attempt to divide by zero",
    "division by zero",
    "nil pointer dereference",
    "runtime error: index out of range",
];

/// `extensions.code` / `classification` values of an unexpected failure.
const INTERNAL_CODES: &[&str] = &["INTERNAL_SERVER_ERROR", "INTERNAL_ERROR", "INTERNAL"];

/// `extensions.code` / `classification` values of a rejected request.
const VALIDATION_CODES: &[&str] = &[
    "GRAPHQL_VALIDATION_FAILED",
    "GRAPHQL_PARSE_FAILED",
    "OPERATION_RESOLUTION_FAILURE",
    "VALIDATIONERROR",
    "VALIDATION_ERROR",
    "INVALIDSYNTAX",
    "INVALID_SYNTAX",
];

/// The parts of an `errors` entry the rules look at.
pub(super) struct ErrorEntry<'b> {
    /// Its `message`; for an entry that has none (a bare string, an object
    /// without a string `message`), the text it does carry, so that a
    /// crash reported that way is still judged by what it says.
    pub(super) message: Cow<'b, str>,
    /// What is wrong with its form, when it is not an object with a string
    /// `message` as the GraphQL spec requires (`a string`).
    pub(super) malformed: Option<&'static str>,
    pub(super) path: Option<Vec<Seg>>,
    pub(super) location: Option<(usize, usize)>,
    pub(super) extensions: Option<&'b Value>,
    /// `extensions.code`, `extensions.classification` and the top-level
    /// `errorType`/`classification` of older graphql-java, upper-cased.
    pub(super) codes: Vec<String>,
}

impl<'b> ErrorEntry<'b> {
    pub(super) fn new(v: &'b Value) -> ErrorEntry<'b> {
        let (message, malformed) = match v {
            Value::Object(map) => match map.get("message") {
                Some(Value::String(m)) => (Cow::Borrowed(m.as_str()), None),
                _ => {
                    // Its text is wherever it put it, but not where it says
                    // where it is.
                    let mut text = String::new();
                    for (k, item) in map {
                        if !matches!(k.as_str(), "path" | "locations") {
                            string_leaves(item, &mut text, 1);
                        }
                    }
                    let what = if map.contains_key("message") {
                        "an object whose `message` is not a string"
                    } else {
                        "an object without a `message`"
                    };
                    (Cow::Owned(text.trim_end().to_string()), Some(what))
                }
            },
            Value::String(m) => (Cow::Borrowed(m.as_str()), Some("a string")),
            other => {
                let mut text = String::new();
                string_leaves(other, &mut text, 1);
                let what = match other {
                    Value::Array(_) => "a list",
                    Value::Number(_) => "a number",
                    Value::Bool(_) => "a boolean",
                    _ => "null",
                };
                (Cow::Owned(text.trim_end().to_string()), Some(what))
            }
        };
        let path = v.get("path").and_then(Value::as_array).map(|items| {
            items
                .iter()
                .filter_map(|s| match s {
                    Value::String(k) => Some(Seg::Key(k.clone())),
                    Value::Number(n) => n.as_u64().map(|i| Seg::Index(i as usize)),
                    _ => None,
                })
                .collect::<Vec<_>>()
        });
        let location = v
            .get("locations")
            .and_then(Value::as_array)
            .and_then(|l| l.first())
            .and_then(|l| {
                let line = l.get("line")?.as_u64()? as usize;
                let column = l.get("column")?.as_u64()? as usize;
                Some((line, column))
            });
        let extensions = v.get("extensions").filter(|e| !e.is_null());
        let mut codes = Vec::new();
        for c in [
            extensions.and_then(|e| e.get("code")),
            extensions.and_then(|e| e.get("classification")),
            v.get("errorType"),
            v.get("classification"),
        ]
        .into_iter()
        .flatten()
        {
            if let Some(s) = c.as_str() {
                codes.push(s.to_ascii_uppercase().replace('-', "_"));
            }
        }
        ErrorEntry {
            message,
            malformed,
            path: path.filter(|p| !p.is_empty()),
            location,
            extensions,
            codes,
        }
    }

    pub(super) fn has_code(&self, table: &[&str]) -> bool {
        self.codes.iter().any(|c| table.contains(&c.as_str()))
    }
}

/// Whether the entry rejects the request itself rather than reporting what
/// happened while executing it.
pub(super) fn is_validation(e: &ErrorEntry, data_absent: bool) -> bool {
    if e.has_code(VALIDATION_CODES) || refuses_input(e) {
        return true;
    }
    let m = e.message.to_lowercase();
    data_absent
        && (PARSE_WORDING.iter().any(|w| m.contains(w))
            || (e.message.trim_start().starts_with("-->") && m.contains("= expected")))
}

/// Whether the message says the request was refused: a field, argument or
/// type it does not know, a variable or argument value it would not take,
/// one missing or null where it must not be. What the message says wins over
/// any code stamped on it: servers (Apollo Server 2, CMSs built on it) stamp
/// `INTERNAL_SERVER_ERROR` on every error, correct refusals included.
pub(super) fn refuses_input(e: &ErrorEntry) -> bool {
    let m = e.message.to_lowercase();
    let m = m.trim_start();
    if VALIDATION_WORDING.iter().any(|w| m.contains(w)) {
        return true;
    }
    let after = |prefix: &str, wording: &[&str]| {
        m.strip_prefix(prefix)
            .is_some_and(|rest| wording.iter().any(|w| rest.contains(w)))
    };
    if after("variable ", VARIABLE_WORDING) || after("argument ", ARGUMENT_WORDING) {
        return true;
    }
    // An input object's field left out (graphql-js's literal and variable
    // coercion): `Field "CreateBook.title" of required type "String!" was
    // not provided.`
    if m.starts_with("field ") && m.contains("of required type") && m.contains("was not provided") {
        return true;
    }
    e.path.is_none() && COERCION_WORDING.iter().any(|w| m.contains(w))
}

/// Whether the entry (not a refusal of the request) reports an unexpected
/// failure: an internal code, a crash's wording, or a stack trace in its
/// message (an exception no handler caught, whatever the server calls it).
pub(super) fn is_internal(e: &ErrorEntry) -> bool {
    if e.has_code(INTERNAL_CODES) {
        return true;
    }
    let m = e.message.to_lowercase();
    INTERNAL_WORDING.iter().any(|w| m.contains(w))
        || crate::oracles::leaks::find(&e.message)
            .is_some_and(|(family, ..)| family == Family::StackTrace)
}

/// What made the rules judge an `errors` entry, as a reproducer looks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence {
    /// An internal failure (`graphql_internal_error`).
    Internal,
    /// A refusal of the query itself (`graphql_validation_error`).
    Validation,
    /// The server's own report of a null it could not return.
    NullReport,
}

/// What in entry `e` made the rules judge it (its raw form `raw`):
/// the code it carries (`INTERNAL_SERVER_ERROR` as the server wrote it),
/// else the wording the rules matched (`cannot read properties of
/// undefined`, `of required type`), else a stack trace's marker. A
/// reproducer looks for it in the entry at the same path: a server that
/// answers 200 with data there, or another error, does not show the fault.
pub(super) fn evidence(e: &ErrorEntry, raw: &Value, evidence: Evidence) -> Option<String> {
    let m = e.message.to_lowercase();
    let phrase = |table: &[&str]| {
        table
            .iter()
            .find(|w| m.contains(**w))
            .map(|w| (*w).to_string())
    };
    // The code as the server wrote it, wherever the rules read codes.
    let code_in = |table: &[&str]| {
        [
            raw.get("extensions").and_then(|x| x.get("code")),
            raw.get("extensions").and_then(|x| x.get("classification")),
            raw.get("errorType"),
            raw.get("classification"),
        ]
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .find(|c| table.contains(&c.to_ascii_uppercase().replace('-', "_").as_str()))
        .map(str::to_string)
    };
    let found = match evidence {
        Evidence::Internal => code_in(INTERNAL_CODES)
            .or_else(|| phrase(INTERNAL_WORDING))
            .or_else(|| {
                crate::oracles::leaks::find(&e.message)
                    .filter(|(family, ..)| *family == Family::StackTrace)
                    .map(|(.., marker)| marker.trim().to_string())
            }),
        Evidence::Validation => code_in(VALIDATION_CODES)
            .or_else(|| phrase(VALIDATION_WORDING))
            .or_else(|| phrase(VARIABLE_WORDING))
            .or_else(|| phrase(ARGUMENT_WORDING))
            .or_else(|| phrase(COERCION_WORDING))
            .or_else(|| phrase(PARSE_WORDING))
            .or_else(|| phrase(&["= expected"])),
        Evidence::NullReport => phrase(NULL_REPORT_WORDING),
    };
    // Only what a script finds there as the rules did.
    found.filter(|t| !t.is_empty() && !t.contains('\n') && says(raw, t))
}

/// Whether the `errors` entry `entry` says `text`: one of its strings
/// (its path's aside) holds it, in any ASCII case.
pub(super) fn says(entry: &Value, text: &str) -> bool {
    fn any(v: &Value, text: &str, depth: usize) -> bool {
        match v {
            Value::String(s) => s.to_ascii_lowercase().contains(text),
            Value::Array(items) if depth < 32 => items.iter().any(|i| any(i, text, depth + 1)),
            Value::Object(map) if depth < 32 => map.values().any(|i| any(i, text, depth + 1)),
            _ => false,
        }
    }
    let text = text.to_ascii_lowercase();
    match entry {
        Value::Object(map) => map.iter().any(|(k, v)| k != "path" && any(v, &text, 1)),
        other => any(other, &text, 0),
    }
}

/// A stack trace carried as structured data (Apollo's `exception.stacktrace`,
/// `stackTrace` of other servers), at any depth of `extensions`.
pub(super) fn structured_stacktrace(v: &Value, depth: usize) -> bool {
    let Value::Object(map) = v else { return false };
    if depth > 8 {
        return false;
    }
    map.iter().any(|(k, v)| {
        let trace_key = matches!(k.to_ascii_lowercase().as_str(), "stacktrace" | "stack");
        (trace_key
            && match v {
                Value::Array(lines) => lines
                    .iter()
                    .any(|l| l.as_str().is_some_and(|s| !s.is_empty())),
                Value::String(s) => s.contains('\n'),
                _ => false,
            })
            || structured_stacktrace(v, depth + 1)
    })
}

/// Every string in `v`, one per line: the text a leak would be in, unescaped.
pub(super) fn string_leaves(v: &Value, out: &mut String, depth: usize) {
    if depth > 16 {
        return;
    }
    match v {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|i| string_leaves(i, out, depth + 1)),
        Value::Object(map) => map.values().for_each(|i| string_leaves(i, out, depth + 1)),
        _ => {}
    }
}

/// The leak an entry shows: its code, what it looks like and the marker.
pub(super) fn entry_leak(e: &ErrorEntry) -> Option<(Kind, &'static str, String)> {
    if let Some((family, what, marker)) = crate::oracles::leaks::find(&e.message) {
        return Some((Kind::Leak(family), what, format!("{marker:?}")));
    }
    let ext = e.extensions?;
    let mut text = String::new();
    string_leaves(ext, &mut text, 0);
    if let Some((family, what, marker)) = crate::oracles::leaks::find(&text) {
        return Some((Kind::Leak(family), what, format!("{marker:?}")));
    }
    structured_stacktrace(ext, 0).then(|| {
        (
            Kind::Leak(Family::StackTrace),
            "a stack trace",
            "`extensions` stacktrace".to_string(),
        )
    })
}

/// What an error message says without the values in it, so each random
/// argument does not make a target of its own: digits become `#`, quoted
/// text `"…"` (escapes inside it included), and only the first 60
/// characters count.
pub fn error_wording(msg: &str) -> String {
    let mut out = String::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in msg.chars() {
        match quote {
            // `\"` inside a quoted value (Debug formatting) does not end it.
            Some(_) if escaped => escaped = false,
            Some(_) if c == '\\' => escaped = true,
            Some(q) if c == q => {
                out.push('…');
                out.push(c);
                quote = None;
            }
            Some(_) => {}
            None if c == '"' || c == '\'' || c == '`' => {
                out.push(c);
                quote = Some(c);
            }
            None if c.is_ascii_digit() => out.push('#'),
            None => out.push(c),
        }
        if out.chars().count() >= 60 {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_wording_hides_the_values() {
        assert_eq!(
            error_wording("invalid id \"9yzWPJ1y\""),
            error_wording("invalid id \"abc\"")
        );
        assert_eq!(error_wording("no book 42"), "no book ##");
        assert_eq!(
            error_wording(r#"invalid id "\"1e""#),
            error_wording(r#"invalid id "\\J""#)
        );
        assert_ne!(error_wording("no book 42"), error_wording("no author 42"));
    }
}
