//! The GraphQL response oracle: what one answer to one GraphQL request shows.
//!
//! Pure: it is given the type system, the query document that was sent, its
//! operation name and variables, and the HTTP status and body of the answer.
//! The schema checks follow AutoGraphQL (Zetterlund et al., ICST 2022): the
//! selection set of the operation is walked against `data` (fragments, inline
//! fragments, aliases, `__typename`, `@skip`/`@include` resolved) and every
//! selected field must be present, non-null where the schema says so, of the
//! right kind and type. Each finding names the root field it is under
//! (`Query.book`, `Mutation.createAuthor`, the real field name, not the alias;
//! `-` when the query could not be parsed here) and a response path with list
//! indexes written `[*]` (`data.books[*].price`; `-` when there is none).
//! Findings are kept once per (code, root field, path), at most
//! [`MAX_FINDINGS`] per response. Which codes it reports, and exactly when
//! each fires, is in the oracles' registry ([`super::registry::ORACLES`],
//! the rows whose `graphql` judge is the walk).
//!
//! The walk is conservative where the response cannot say what the schema
//! promised: under an interface or union whose concrete type is unknown (no
//! valid `__typename`, several possible types), fragments on narrower types
//! are not checked; fields whose inclusion depends on an unknown variable are
//! checked only when present; fields the schema does not know are skipped.
//! `data: null` with errors is how async-graphql reports a failed root field,
//! so it is never walked.

/// Most findings kept for one response; one broken resolver under a list can
/// otherwise repeat the same story for every element and sibling.
pub const MAX_FINDINGS: usize = 10;

mod findings;
mod invented;
mod kinds;
mod messages;
mod operation;
#[cfg(test)]
mod tests;
mod walk;

use serde_json::Value;

use crate::model::graphql::TypeSystem;
use findings::{Out, Seg, json_kind, render};
use invented::Invented;
use messages::{ErrorEntry, entry_leak, is_internal, is_validation};
pub use messages::{
    Evidence, INTERNAL_WORDING, NULL_REPORT_WORDING, VALIDATION_WORDING, error_wording,
};
use operation::Operation;
use walk::Walker;

/// What kind of fault a GraphQL finding is: each names the registry row
/// that reports it (`registry::graphql_code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The server answered 500-599.
    ServerError,
    /// An `errors` entry shows an internal failure.
    InternalError,
    /// A leak of the family in a message, `extensions` or a body that is
    /// not a GraphQL response.
    Leak(super::leaks::Family),
    /// A non-null field is null and no error explains it.
    NullViolation,
    /// A selected field is missing from the data.
    MissingField,
    /// A value has the wrong type.
    WrongType,
    /// A value is not one of its enum's values.
    EnumViolation,
    /// A list and a single value are swapped.
    ListMismatch,
    /// `errors` is not a list of objects with a `message`.
    MalformedErrors,
    /// `__typename` names the wrong type.
    TypenameViolation,
    /// The server rejected the query itself.
    ValidationError,
}

/// What one answer to a GraphQL request shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphqlFinding {
    /// What kind of fault it is.
    pub kind: Kind,
    /// The root field the fault is under, `Query.book`; `-` when unknown.
    pub root_field: String,
    /// The response path, list indexes as `[*]` (`data.books[*].price`); `-` when none.
    pub path: String,
    /// What makes two findings one fault, besides the code: the schema
    /// location (`Book.author`: a broken field is one fault whichever query
    /// path or root field reaches it), or for an `errors` entry its root
    /// field and the wording of its message with the values hidden.
    pub location: String,
    /// What was seen, for people.
    pub message: String,
    /// The value seen at `path` when it is the fault itself (a wrong
    /// scalar, an enum or `__typename` value): scalars as they are, an
    /// array or object as an empty one of its kind.
    pub seen: Option<Value>,
}

/// Checks one answer to `query` (with `operation_name` and `variables`):
/// `status` and `body` (the parsed JSON, `None` when it was not JSON) and its
/// raw text `body_text`.
pub fn check(
    ts: &TypeSystem,
    query: &str,
    operation_name: Option<&str>,
    variables: &Value,
    status: Option<u16>,
    body: Option<&Value>,
    body_text: &str,
) -> Vec<GraphqlFinding> {
    inspect(
        ts,
        query,
        operation_name,
        variables,
        status,
        body,
        body_text,
    )
    .findings
}

/// What one answer shows and what of the schema it exercised.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answer {
    /// The findings, as [`check`] returns them.
    pub findings: Vec<GraphqlFinding>,
    /// (type, field) pairs of the schema that came back non-null in `data`,
    /// once each, in walk order (AutoGraphQL's schema coverage).
    pub covered: Vec<(String, String)>,
    /// Root fields (`Query.book`) that answered a non-null value with no
    /// `errors` entry at or under them.
    pub data_roots: Vec<String>,
}

/// [`check`], and also the schema coverage of the answer.
pub fn inspect(
    ts: &TypeSystem,
    query: &str,
    operation_name: Option<&str>,
    variables: &Value,
    status: Option<u16>,
    body: Option<&Value>,
    body_text: &str,
) -> Answer {
    let doc = crate::model::graphql::parse_executable(query).ok();
    let op = doc
        .as_ref()
        .and_then(|d| Operation::pick(ts, d, operation_name));
    let mut out = Out::default();
    let mut walker = op
        .as_ref()
        .map(|op| Walker::new(ts, op, doc.as_ref(), variables));
    let roots: Vec<String> = match &walker {
        Some(w) => w.root_fields(),
        None => vec!["-".to_string()],
    };

    if let Some(s) = status.filter(|s| super::is_server_error(*s)) {
        for root in &roots {
            out.push(
                Kind::ServerError,
                root.clone(),
                "-".into(),
                root.clone(),
                format!("the server answered {s}"),
            );
        }
    }

    let obj = body.and_then(Value::as_object);
    let is_graphql = obj.is_some_and(|o| o.contains_key("data") || o.contains_key("errors"));
    if !is_graphql {
        if let Some((family, what, marker)) = super::leaks::find(body_text) {
            for root in &roots {
                out.push(
                    Kind::Leak(family),
                    root.clone(),
                    "-".into(),
                    format!("{root} {}", marker.trim()),
                    format!("the body holds {what} ({marker:?})"),
                );
            }
        }
        if let (Some(w), Some(s)) = (&walker, status)
            && obj.is_some()
            && (200..300).contains(&s)
        {
            for (key, name) in &w.root_keys {
                out.push(
                    Kind::MissingField,
                    w.root_label(name),
                    format!("data.{key}"),
                    w.root_label(name),
                    "the answer has neither `data` nor `errors`".into(),
                );
            }
        }
        return out.answer();
    }
    let obj = obj.expect("checked above");

    let data = obj.get("data");
    let data_absent = data.is_none_or(Value::is_null);
    let errors: Vec<ErrorEntry> = match obj.get("errors") {
        Some(Value::Array(items)) => items.iter().map(ErrorEntry::new).collect(),
        Some(Value::Null) | None => Vec::new(),
        Some(other) => vec![ErrorEntry::new(other)],
    };
    malformed_errors(obj.get("errors"), &errors, &roots, &mut out);
    // What the request sent: a message that echoes it is one message
    // whatever was sent, quotes inside the value included.
    let mut sent = Vec::new();
    super::mask::leaves(variables, 64, &mut sent);
    sent.extend(string_literals(query));
    let sent: Vec<&str> = sent.iter().map(String::as_str).collect();
    let invented = Invented::of(ts, op.as_ref());
    let request = Request {
        walker: walker.as_ref(),
        roots: &roots,
        sent: &sent,
        invented: &invented,
    };
    for (i, e) in errors.iter().enumerate() {
        classify_error(i, e, data_absent, &request, &mut out);
    }

    if let Some(w) = walker.as_mut() {
        w.error_paths = errors.iter().filter_map(|e| e.path.clone()).collect();
        match data {
            Some(Value::Object(d)) => w.walk_root(d, &mut out),
            Some(Value::Null) if errors.is_empty() => w.null_data(&mut out),
            Some(other) if !other.is_null() => out.push(
                Kind::WrongType,
                "-".into(),
                "data".into(),
                "data".into(),
                format!("`data` is {}, not an object", json_kind(other)),
            ),
            _ => {}
        }
        if let Some(Value::Object(d)) = data {
            for (key, name) in &w.root_keys {
                let label = w.root_label(name);
                let root_path = [Seg::Key(key.clone())];
                let answered = d.get(key).is_some_and(|v| !v.is_null());
                if answered && !w.explained(&root_path) && !out.data_roots.contains(&label) {
                    out.data_roots.push(label);
                }
            }
        }
    }
    out.answer()
}

/// The path of an `errors` entry as signatures write it: `data`, then
/// `.key` per name and `[*]` per index (`data.books[*].author`); `-` for
/// an entry without one. What a reproducer's check compares.
pub fn error_path(entry: &Value) -> String {
    match entry.get("path") {
        Some(Value::Array(items)) if !items.is_empty() => {
            let mut s = String::from("data");
            for seg in items {
                match seg {
                    Value::Number(_) => s.push_str("[*]"),
                    Value::String(k) => {
                        s.push('.');
                        s.push_str(k);
                    }
                    other => {
                        s.push('.');
                        s.push_str(&other.to_string());
                    }
                }
            }
            s
        }
        _ => "-".to_string(),
    }
}

/// Whether the `errors` entry `entry` says `text`: one of its strings
/// (its path's aside) holds it, in any ASCII case.
pub fn error_says(entry: &Value, text: &str) -> bool {
    messages::says(entry, text)
}

/// The entries of an answer's `errors`: its items, or the one value it is.
pub fn error_entries(body: &Value) -> Vec<&Value> {
    match body.get("errors") {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(Value::Null) | None => Vec::new(),
        Some(other) => vec![other],
    }
}

/// What a reproducer checks of a finding about an `errors` entry at `path`
/// (a finding's own path) in `body`, answered `status`: that an entry there
/// says what made the rules judge it, as `evidence` reads it
/// ([`FaultCheck::GraphqlError`](crate::oracles::FaultCheck::GraphqlError)).
/// `None` when no entry there carries it.
pub fn error_check(
    body: Option<&Value>,
    evidence: Evidence,
    path: &str,
    status: u16,
) -> Option<crate::oracles::FaultCheck> {
    error_entries(body?)
        .into_iter()
        .filter(|raw| error_path(raw) == path)
        .find_map(|raw| messages::evidence(&ErrorEntry::new(raw), raw, evidence))
        .map(|text| crate::oracles::FaultCheck::GraphqlError {
            status,
            path: path.to_string(),
            text,
        })
}

/// `errors` that is not a list of objects each with a string `message`
/// (the spec's form): once per root field, naming the first entry that
/// breaks it. A client reading `errors[i].message` finds nothing, and a
/// run that read it alone reported nothing of the crashes such entries told.
fn malformed_errors(raw: Option<&Value>, errors: &[ErrorEntry], roots: &[String], out: &mut Out) {
    let what = match raw {
        Some(Value::Array(_)) => errors
            .iter()
            .enumerate()
            .find_map(|(i, e)| e.malformed.map(|m| (format!("`errors[{i}]` is {m}"), m))),
        Some(v) if !v.is_null() => {
            let kind = match v {
                Value::Object(_) => "an object",
                Value::String(_) => "a string",
                other => json_kind(other),
            };
            Some((format!("`errors` is {kind}, not a list"), kind))
        }
        _ => None,
    };
    let Some((what, kind)) = what else { return };
    let excerpt = errors
        .iter()
        .find(|e| e.malformed.is_some())
        .map(|e| excerpt(&e.message))
        .filter(|x| !x.is_empty())
        .map_or(String::new(), |x| format!(": {x}"));
    for root in roots {
        out.push(
            Kind::MalformedErrors,
            root.clone(),
            "-".into(),
            format!("{root} errors {kind}"),
            format!("{what}, not an object with a `message`{excerpt}"),
        );
    }
}

/// The line of an error message that tells what happened: the first, or
/// for a Python traceback its last (the exception; its first line is the
/// same for every crash).
fn telling_line(message: &str) -> &str {
    let line = if message
        .trim_start()
        .starts_with("Traceback (most recent call last)")
    {
        message.lines().rev().find(|l| !l.trim().is_empty())
    } else {
        message.lines().next()
    };
    line.unwrap_or("").trim()
}

/// [`telling_line`] for people: at most 120 characters.
fn excerpt(message: &str) -> String {
    let line = telling_line(message);
    if line.chars().count() > 120 {
        format!("{}…", line.chars().take(120).collect::<String>())
    } else {
        line.to_string()
    }
}

/// The string literals of a query document (`book(id: "4")` gives `4`),
/// escapes resolved.
fn string_literals(query: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = query.chars();
    while let Some(c) = chars.next() {
        if c != '"' {
            continue;
        }
        let mut value = String::new();
        while let Some(c) = chars.next() {
            match c {
                '\\' => value.extend(chars.next()),
                '"' => break,
                c => value.push(c),
            }
        }
        out.push(value);
    }
    out
}

/// What the error rules know of the request an answer is to.
struct Request<'r, 'q> {
    walker: Option<&'r Walker<'q>>,
    /// Its root fields (`-` when the query could not be read).
    roots: &'r [String],
    /// The values it sent, which messages echo.
    sent: &'r [&'r str],
    /// The custom scalars its values reach.
    invented: &'r Invented<'q>,
}

/// Applies the error rules to entry `i`.
fn classify_error(i: usize, e: &ErrorEntry, data_absent: bool, request: &Request, out: &mut Out) {
    let sent = request.sent;
    let path = e.path.as_deref().map_or("-".to_string(), render);
    // A sent value with a line break in it would move where a traceback's
    // last line starts: hidden first, it leaves the exception line whole.
    let mut message = e.message.to_string();
    for v in sent.iter().filter(|v| v.contains('\n')) {
        message = message.replace(v, "…");
    }
    let excerpt = excerpt(&message);
    // Codes do not mask each other: a stack trace of a database failure is
    // a leak and an internal error; only our own rejected query stands alone.
    // Masked whole: a long value sent is hidden whole, not cut.
    let wording = super::mask::mask(telling_line(&message), sent, 60);
    let mut found: Vec<(Kind, String, String)> = Vec::new();
    if is_validation(e, data_absent) {
        // The server refusing a value Cartograph made up for one of its
        // custom scalars is right: the query is not wrong.
        if request.invented.refused(e) {
            return;
        }
        found.push((
            Kind::ValidationError,
            format!("errors[{i}] rejects the query itself: {excerpt}"),
            wording.clone(),
        ));
    } else {
        if let Some((code, what, marker)) = entry_leak(e) {
            found.push((
                code,
                format!("errors[{i}] holds {what} ({marker}): {excerpt}"),
                marker.to_string(),
            ));
        }
        if NULL_REPORT_WORDING
            .iter()
            .any(|w| e.message.to_lowercase().contains(w))
        {
            found.push((
                Kind::NullViolation,
                format!("errors[{i}]: the server resolved a non-null field to null: {excerpt}"),
                wording.clone(),
            ));
        }
        if is_internal(e) {
            found.push((
                Kind::InternalError,
                format!("errors[{i}] reports an internal failure: {excerpt}"),
                wording.clone(),
            ));
        }
    }
    if found.is_empty() {
        return;
    }
    let targets: Vec<String> = match request.walker {
        Some(w) => w.roots_of_error(e),
        None => request.roots.to_vec(),
    };
    for root in targets {
        for (code, message, kind) in &found {
            out.push(
                *code,
                root.clone(),
                path.clone(),
                format!("{root} {kind}"),
                message.clone(),
            );
        }
    }
}
