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
//! [`MAX_FINDINGS`] per response, and each fires exactly when the table says:
//!
//! | code | fires when |
//! |---|---|
//! | `graphql_server_error` | the status is 5xx; once per root field of the operation |
//! | `graphql_validation_error` | an `errors` entry rejects our request itself (a tool bug, reported apart): `extensions.code` `GRAPHQL_VALIDATION_FAILED`, `GRAPHQL_PARSE_FAILED` or `OPERATION_RESOLUTION_FAILURE`, a graphql-java `classification`/`errorType` `ValidationError` or `InvalidSyntax`, or a message in the wording of graphql-js, async-graphql, Apollo, gqlgen, graphql-java or Juniper validation ([`VALIDATION_WORDING`], variable errors such as `Variable "$id" of required type …`); input coercion wordings (`Int cannot represent …`, `Expected value of type …`) only on entries without `path`, since on an entry with `path` they are output errors; parse-error wordings (`Syntax Error`, `Invalid Syntax`, a pest ` --> 1:3 … = expected`) only when `data` is absent or null |
//! | `graphql_stack_leak` | an `errors` entry's message or `extensions` holds a stack trace, panic report, SQL error or debug page ([`super::leaks::find`]), or its `extensions` carry a non-empty `stacktrace`/`stackTrace`/`stack`; also a body that is not a GraphQL response (not JSON, or neither `data` nor `errors`) holding such text |
//! | `graphql_null_violation` | a selected field whose type is non-null is `null` in `data`, and no `errors` entry's `path` is at, above or below that location (null propagation); also an `errors` entry in which the server itself reports it (`Cannot return null for non-nullable field`, graphql-java's `was declared as a non null type`); also `data: null` with no `errors` at all, for each non-null root field selected |
//! | `graphql_internal_error` | an `errors` entry that is neither of the above and shows an unexpected failure: `extensions.code` (or graphql-java `classification`) `INTERNAL_SERVER_ERROR`, `INTERNAL_ERROR` or `INTERNAL`, or a message with one of the phrases in [`INTERNAL_WORDING`] (`internal error`, `internal server error`, `unexpected error`, runtime faults such as `NullPointerException`, `Cannot read properties of undefined`, Rust `unwrap()` panic messages, `attempt to divide by zero`, `nil pointer dereference`); ordinary domain errors (`not found`, `invalid id "abc"`, `not enough stock`, `BAD_USER_INPUT`) never fire |
//! | `graphql_missing_field` | a selected field (included for certain: not skipped, its `@skip`/`@include` condition known) is absent from a non-null object in `data`, and no `errors` entry's `path` is at, above or below it; also a 2xx JSON object body with neither `data` nor `errors`, for each root field |
//! | `graphql_wrong_type` | a built-in scalar of the wrong JSON type (`Int` an integer within i32, `Float` a number, `String` a string, `Boolean` a bool, `ID` a string or an integer), or a composite type's value is not a JSON object (and not a list); custom scalars accept anything |
//! | `graphql_enum_violation` | an enum's value is not one of its values (a non-string included) |
//! | `graphql_list_mismatch` | a list type's value is not a JSON array, or a JSON array stands where an object, enum or built-in scalar was promised |
//! | `graphql_typename_violation` | `__typename` is not a string naming the object type itself, or, under an interface or union, one of its possible object types (a name not in the schema included) |
//!
//! The walk is conservative where the response cannot say what the schema
//! promised: under an interface or union whose concrete type is unknown (no
//! valid `__typename`, several possible types), fragments on narrower types
//! are not checked; fields whose inclusion depends on an unknown variable are
//! checked only when present; fields the schema does not know are skipped.
//! `data: null` with errors is how async-graphql reports a failed root field,
//! so it is never walked.

use std::collections::{HashMap, HashSet};

use graphql_parser::query as q;
use serde_json::{Map, Value};

use crate::model::graphql::{NamedType, TypeKind, TypeRef, TypeSystem};

/// Every code this oracle reports.
pub const CODES: &[&str] = &[
    "graphql_server_error",
    "graphql_validation_error",
    "graphql_stack_leak",
    "graphql_internal_error",
    "graphql_missing_field",
    "graphql_null_violation",
    "graphql_wrong_type",
    "graphql_enum_violation",
    "graphql_list_mismatch",
    "graphql_typename_violation",
];

/// Most findings kept for one response; one broken resolver under a list can
/// otherwise repeat the same story for every element and sibling.
pub const MAX_FINDINGS: usize = 10;

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
/// a variable error of the request (graphql-js and async-graphql wordings).
const VARIABLE_WORDING: &[&str] = &[
    "of type",
    "of required type",
    "got invalid value",
    "is not defined",
    "is never used",
    "is not used",
    "was not provided",
    "cannot be of non-input type",
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
const NULL_REPORT_WORDING: &[&str] = &[
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

/// What one answer to a GraphQL request shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphqlFinding {
    /// The code, one of [`CODES`].
    pub code: &'static str,
    /// The root field the fault is under, `Query.book`; `-` when unknown.
    pub root_field: String,
    /// The response path, list indexes as `[*]` (`data.books[*].price`); `-` when none.
    pub path: String,
    /// What was seen, for people.
    pub message: String,
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
    let doc = q::parse_query::<&str>(query).ok();
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

    if let Some(s) = status.filter(|s| (500..600).contains(s)) {
        for root in &roots {
            out.push(
                "graphql_server_error",
                root.clone(),
                "-".into(),
                format!("the server answered {s}"),
            );
        }
    }

    let obj = body.and_then(Value::as_object);
    let is_graphql = obj.is_some_and(|o| o.contains_key("data") || o.contains_key("errors"));
    if !is_graphql {
        if let Some((_, what, marker)) = super::leaks::find(body_text) {
            for root in &roots {
                out.push(
                    "graphql_stack_leak",
                    root.clone(),
                    "-".into(),
                    format!("the body holds {what} ({marker:?})"),
                );
            }
        }
        if let (Some(w), Some(s)) = (&walker, status) {
            if obj.is_some() && (200..300).contains(&s) {
                for (key, name) in &w.root_keys {
                    out.push(
                        "graphql_missing_field",
                        w.root_label(name),
                        format!("data.{key}"),
                        "the answer has neither `data` nor `errors`".into(),
                    );
                }
            }
        }
        return out.answer();
    }
    let obj = obj.expect("checked above");

    let data = obj.get("data");
    let data_absent = data.is_none_or(Value::is_null);
    let errors: Vec<ErrorEntry> = match obj.get("errors") {
        Some(Value::Array(items)) => items.iter().map(ErrorEntry::new).collect(),
        Some(Value::Object(_)) => vec![ErrorEntry::new(&obj["errors"])],
        _ => Vec::new(),
    };
    for (i, e) in errors.iter().enumerate() {
        classify_error(i, e, data_absent, walker.as_ref(), &roots, &mut out);
    }

    if let Some(w) = walker.as_mut() {
        w.error_paths = errors.iter().filter_map(|e| e.path.clone()).collect();
        match data {
            Some(Value::Object(d)) => w.walk_root(d, &mut out),
            Some(Value::Null) if errors.is_empty() => w.null_data(&mut out),
            Some(other) if !other.is_null() => out.push(
                "graphql_wrong_type",
                "-".into(),
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

// ---------------------------------------------------------------------------
// Findings

/// The findings of one response, deduplicated and capped.
#[derive(Default)]
struct Out {
    items: Vec<GraphqlFinding>,
    seen: HashSet<(&'static str, String, String)>,
    covered: indexmap::IndexSet<(String, String)>,
    data_roots: Vec<String>,
}

impl Out {
    fn answer(self) -> Answer {
        Answer {
            findings: self.items,
            covered: self.covered.into_iter().collect(),
            data_roots: self.data_roots,
        }
    }

    fn push(&mut self, code: &'static str, root_field: String, path: String, message: String) {
        if self.items.len() >= MAX_FINDINGS {
            return;
        }
        if self.seen.insert((code, root_field.clone(), path.clone())) {
            self.items.push(GraphqlFinding {
                code,
                root_field,
                path,
                message,
            });
        }
    }
}

/// One step of a response path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    Key(String),
    Index(usize),
}

/// `data.a[*].b`: the signature form of a path.
fn render(path: &[Seg]) -> String {
    let mut s = String::from("data");
    for seg in path {
        match seg {
            Seg::Key(k) => {
                s.push('.');
                s.push_str(k);
            }
            Seg::Index(_) => s.push_str("[*]"),
        }
    }
    s
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a fractional number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A short, bounded rendering of a value for messages.
fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s
    }
}

// ---------------------------------------------------------------------------
// Errors entries

/// The parts of an `errors` entry the rules look at.
struct ErrorEntry<'b> {
    message: &'b str,
    path: Option<Vec<Seg>>,
    location: Option<(usize, usize)>,
    extensions: Option<&'b Value>,
    /// `extensions.code`, `extensions.classification` and the top-level
    /// `errorType`/`classification` of older graphql-java, upper-cased.
    codes: Vec<String>,
}

impl<'b> ErrorEntry<'b> {
    fn new(v: &'b Value) -> ErrorEntry<'b> {
        let message = v.get("message").and_then(Value::as_str).unwrap_or("");
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
            path: path.filter(|p| !p.is_empty()),
            location,
            extensions,
            codes,
        }
    }

    fn has_code(&self, table: &[&str]) -> bool {
        self.codes.iter().any(|c| table.contains(&c.as_str()))
    }
}

/// Whether the entry rejects the request itself rather than reporting what
/// happened while executing it.
fn is_validation(e: &ErrorEntry, data_absent: bool) -> bool {
    if e.has_code(VALIDATION_CODES) {
        return true;
    }
    let m = e.message.to_lowercase();
    if VALIDATION_WORDING.iter().any(|w| m.contains(w)) {
        return true;
    }
    if let Some(rest) = m.strip_prefix("variable ") {
        if VARIABLE_WORDING.iter().any(|w| rest.contains(w)) {
            return true;
        }
    }
    if e.path.is_none() && COERCION_WORDING.iter().any(|w| m.contains(w)) {
        return true;
    }
    data_absent
        && (PARSE_WORDING.iter().any(|w| m.contains(w))
            || (e.message.trim_start().starts_with("-->") && m.contains("= expected")))
}

/// A stack trace carried as structured data (Apollo's `exception.stacktrace`,
/// `stackTrace` of other servers), at any depth of `extensions`.
fn structured_stacktrace(v: &Value, depth: usize) -> bool {
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
fn string_leaves(v: &Value, out: &mut String, depth: usize) {
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

/// The leak an entry shows: what it looks like and the marker.
fn entry_leak(e: &ErrorEntry) -> Option<(&'static str, String)> {
    if let Some((_, what, marker)) = super::leaks::find(e.message) {
        return Some((what, format!("{marker:?}")));
    }
    let ext = e.extensions?;
    let mut text = String::new();
    string_leaves(ext, &mut text, 0);
    if let Some((_, what, marker)) = super::leaks::find(&text) {
        return Some((what, format!("{marker:?}")));
    }
    structured_stacktrace(ext, 0).then(|| ("a stack trace", "`extensions` stacktrace".to_string()))
}

/// Applies the error rules to entry `i`.
fn classify_error(
    i: usize,
    e: &ErrorEntry,
    data_absent: bool,
    walker: Option<&Walker>,
    roots: &[String],
    out: &mut Out,
) {
    let path = e.path.as_deref().map_or("-".to_string(), render);
    let excerpt = {
        let one_line = e.message.lines().next().unwrap_or("");
        if one_line.chars().count() > 120 {
            format!("{}…", one_line.chars().take(120).collect::<String>())
        } else {
            one_line.to_string()
        }
    };
    let (code, message) = if let Some((what, marker)) = entry_leak(e) {
        (
            "graphql_stack_leak",
            format!("errors[{i}] holds {what} ({marker}): {excerpt}"),
        )
    } else if is_validation(e, data_absent) {
        (
            "graphql_validation_error",
            format!("errors[{i}] rejects the query itself: {excerpt}"),
        )
    } else if NULL_REPORT_WORDING
        .iter()
        .any(|w| e.message.to_lowercase().contains(w))
    {
        (
            "graphql_null_violation",
            format!("errors[{i}]: the server resolved a non-null field to null: {excerpt}"),
        )
    } else if e.has_code(INTERNAL_CODES) || {
        let m = e.message.to_lowercase();
        INTERNAL_WORDING.iter().any(|w| m.contains(w))
    } {
        (
            "graphql_internal_error",
            format!("errors[{i}] reports an internal failure: {excerpt}"),
        )
    } else {
        return;
    };
    let targets: Vec<String> = match walker {
        Some(w) => w.roots_of_error(e),
        None => roots.to_vec(),
    };
    for root in targets {
        out.push(code, root, path.clone(), message.clone());
    }
}

// ---------------------------------------------------------------------------
// The operation and the walk

/// The operation that was executed.
struct Operation<'q> {
    /// `Query`, `Mutation` or `Subscription`.
    word: &'static str,
    root: &'q NamedType,
    selection: &'q q::SelectionSet<'q, &'q str>,
    variables: &'q [q::VariableDefinition<'q, &'q str>],
}

impl<'q> Operation<'q> {
    /// The operation named `name`, or the only one; `None` when there is no
    /// such operation or its root type is not in the schema.
    fn pick(
        ts: &'q TypeSystem,
        doc: &'q q::Document<'q, &'q str>,
        name: Option<&str>,
    ) -> Option<Operation<'q>> {
        let ops: Vec<&q::OperationDefinition<&str>> = doc
            .definitions
            .iter()
            .filter_map(|d| match d {
                q::Definition::Operation(o) => Some(o),
                q::Definition::Fragment(_) => None,
            })
            .collect();
        let op_name = |o: &q::OperationDefinition<'q, &'q str>| match o {
            q::OperationDefinition::SelectionSet(_) => None,
            q::OperationDefinition::Query(x) => x.name,
            q::OperationDefinition::Mutation(x) => x.name,
            q::OperationDefinition::Subscription(x) => x.name,
        };
        let op = match name.filter(|n| !n.is_empty()) {
            Some(n) => *ops.iter().find(|o| op_name(o) == Some(n))?,
            None if ops.len() == 1 => ops[0],
            None => return None,
        };
        let (word, root, selection, variables): (_, _, _, &[_]) = match op {
            q::OperationDefinition::SelectionSet(s) => ("Query", &ts.query_type, s, &[]),
            q::OperationDefinition::Query(x) => (
                "Query",
                &ts.query_type,
                &x.selection_set,
                &x.variable_definitions,
            ),
            q::OperationDefinition::Mutation(x) => (
                "Mutation",
                &ts.mutation_type,
                &x.selection_set,
                &x.variable_definitions,
            ),
            q::OperationDefinition::Subscription(x) => (
                "Subscription",
                &ts.subscription_type,
                &x.selection_set,
                &x.variable_definitions,
            ),
        };
        let root = ts.get(root.as_deref()?)?;
        Some(Operation {
            word,
            root,
            selection,
            variables,
        })
    }
}

/// Whether a selection is in the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Incl {
    /// Skipped for certain: must be absent, and is not checked.
    No,
    /// Depends on a variable we cannot read: checked only when present.
    Maybe,
    /// Included for certain.
    Yes,
}

/// Whether a fragment's type condition holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Applies {
    Yes,
    No,
    /// The concrete type is unknown and narrower than the condition's.
    Unknown,
}

/// The selections under one response key, merged (CollectFields of the spec).
struct Collected<'q> {
    key: &'q str,
    name: &'q str,
    /// The type the field was selected on (the innermost type condition).
    owner: &'q str,
    include: Incl,
    fields: Vec<&'q q::Field<'q, &'q str>>,
}

/// Walks one operation's selection against a response.
struct Walker<'q> {
    ts: &'q TypeSystem,
    op: &'q Operation<'q>,
    fragments: HashMap<&'q str, &'q q::FragmentDefinition<'q, &'q str>>,
    variables: &'q Value,
    /// Response key → field name of the root selection (skipped ones left out).
    root_keys: Vec<(String, String)>,
    /// The `path` of every `errors` entry that has one.
    error_paths: Vec<Vec<Seg>>,
}

impl<'q> Walker<'q> {
    fn new(
        ts: &'q TypeSystem,
        op: &'q Operation<'q>,
        doc: Option<&'q q::Document<'q, &'q str>>,
        variables: &'q Value,
    ) -> Walker<'q> {
        let fragments = doc
            .map(|d| {
                d.definitions
                    .iter()
                    .filter_map(|d| match d {
                        q::Definition::Fragment(f) => Some((f.name, f)),
                        q::Definition::Operation(_) => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut w = Walker {
            ts,
            op,
            fragments,
            variables,
            root_keys: Vec::new(),
            error_paths: Vec::new(),
        };
        let collected = w.collect(&[op.selection], Some(op.root), op.root);
        w.root_keys = collected
            .iter()
            .map(|c| (c.key.to_string(), c.name.to_string()))
            .collect();
        w
    }

    fn root_label(&self, name: &str) -> String {
        format!("{}.{name}", self.op.word)
    }

    /// Every root field of the operation, once each; `-` when all are skipped.
    fn root_fields(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (_, name) in &self.root_keys {
            let label = self.root_label(name);
            if !out.contains(&label) {
                out.push(label);
            }
        }
        if out.is_empty() {
            out.push("-".into());
        }
        out
    }

    /// The root field a response path is under.
    fn root_of(&self, path: &[Seg]) -> Option<String> {
        let Some(Seg::Key(key)) = path.first() else {
            return None;
        };
        let name = self
            .root_keys
            .iter()
            .find(|(k, _)| k == key)
            .map_or(key.as_str(), |(_, n)| n.as_str());
        Some(self.root_label(name))
    }

    /// The root fields an `errors` entry is about: by its `path`, else by its
    /// first location inside a root field of the operation text, else all.
    fn roots_of_error(&self, e: &ErrorEntry) -> Vec<String> {
        if let Some(root) = e.path.as_deref().and_then(|p| self.root_of(p)) {
            return vec![root];
        }
        if let Some((line, column)) = e.location {
            let at = (line, column);
            let end = self.op.selection.span.1;
            let mut found = None;
            for item in &self.op.selection.items {
                if let q::Selection::Field(f) = item {
                    if (f.position.line, f.position.column) <= at {
                        found = Some(f.name);
                    }
                }
            }
            if let Some(name) = found.filter(|_| at <= (end.line, end.column)) {
                return vec![self.root_label(name)];
            }
        }
        self.root_fields()
    }

    /// Whether an `errors` entry's path is at, above or below `path`.
    fn explained(&self, path: &[Seg]) -> bool {
        self.error_paths.iter().any(|p| {
            let n = p.len().min(path.len());
            p[..n] == path[..n]
        })
    }

    // --- collecting fields ------------------------------------------------

    /// The value of a boolean directive argument: a literal, a variable, or
    /// the variable's default.
    fn bool_arg(&self, v: &q::Value<'q, &'q str>) -> Option<bool> {
        match v {
            q::Value::Boolean(b) => Some(*b),
            q::Value::Variable(name) => match self.variables.get(*name) {
                Some(v) => v.as_bool(),
                None => self
                    .op
                    .variables
                    .iter()
                    .find(|d| d.name == *name)
                    .and_then(|d| match &d.default_value {
                        Some(q::Value::Boolean(b)) => Some(*b),
                        _ => None,
                    }),
            },
            _ => None,
        }
    }

    /// What `@skip` and `@include` say about a selection.
    fn inclusion(&self, directives: &[q::Directive<'q, &'q str>]) -> Incl {
        let mut incl = Incl::Yes;
        for d in directives {
            let skip = match d.name {
                "skip" => true,
                "include" => false,
                _ => continue,
            };
            let cond = d
                .arguments
                .iter()
                .find(|(n, _)| *n == "if")
                .and_then(|(_, v)| self.bool_arg(v));
            match cond {
                Some(b) if b == skip => return Incl::No,
                Some(_) => {}
                None => incl = Incl::Maybe,
            }
        }
        incl
    }

    /// Whether `obj` (an object type) is one of the possible types of `abs`.
    fn is_possible(&self, abs: &NamedType, obj: &str) -> bool {
        let Some(o) = self.ts.get(obj).filter(|o| o.kind == TypeKind::Object) else {
            return false;
        };
        match abs.kind {
            TypeKind::Object => abs.name == obj,
            TypeKind::Interface => {
                abs.possible_types.iter().any(|p| p == obj) || o.interfaces.contains(&abs.name)
            }
            TypeKind::Union => abs.possible_types.iter().any(|p| p == obj),
            _ => false,
        }
    }

    /// Whether a type condition holds for a value of static type `stat` whose
    /// concrete type is `runtime` when known.
    fn applies(&self, cond: &str, runtime: Option<&NamedType>, stat: &NamedType) -> Applies {
        let Some(c) = self.ts.get(cond) else {
            return Applies::No;
        };
        if let Some(r) = runtime {
            return if c.name == r.name || self.is_possible(c, &r.name) {
                Applies::Yes
            } else {
                Applies::No
            };
        }
        if c.name == stat.name {
            return Applies::Yes;
        }
        let possible = &stat.possible_types;
        if !possible.is_empty() && possible.iter().all(|p| self.is_possible(c, p)) {
            return Applies::Yes;
        }
        if possible.iter().any(|p| self.is_possible(c, p)) {
            Applies::Unknown
        } else {
            Applies::No
        }
    }

    /// The fields selected by `sets` on a value of static type `stat`, by
    /// response key, in order. Fragments whose condition may or may not hold
    /// (the concrete type unknown) are left out.
    fn collect(
        &self,
        sets: &[&'q q::SelectionSet<'q, &'q str>],
        runtime: Option<&'q NamedType>,
        stat: &'q NamedType,
    ) -> Vec<Collected<'q>> {
        let mut out = Vec::new();
        let mut visiting = Vec::new();
        for set in sets {
            self.collect_into(
                set,
                runtime,
                stat,
                stat.name.as_str(),
                Incl::Yes,
                &mut out,
                &mut visiting,
            );
        }
        out
    }

    #[allow(clippy::too_many_arguments)]
    fn collect_into(
        &self,
        set: &'q q::SelectionSet<'q, &'q str>,
        runtime: Option<&'q NamedType>,
        stat: &'q NamedType,
        owner: &'q str,
        outer: Incl,
        out: &mut Vec<Collected<'q>>,
        visiting: &mut Vec<&'q str>,
    ) {
        for item in &set.items {
            let (directives, cond, inner): (_, Option<&'q str>, _) = match item {
                q::Selection::Field(f) => {
                    let incl = min_incl(outer, self.inclusion(&f.directives));
                    if incl == Incl::No {
                        continue;
                    }
                    let key = f.alias.unwrap_or(f.name);
                    match out.iter_mut().find(|c| c.key == key) {
                        Some(c) => {
                            c.include = c.include.max_incl(incl);
                            c.fields.push(f);
                        }
                        None => out.push(Collected {
                            key,
                            name: f.name,
                            owner,
                            include: incl,
                            fields: vec![f],
                        }),
                    }
                    continue;
                }
                q::Selection::InlineFragment(fr) => (
                    &fr.directives,
                    fr.type_condition.as_ref().map(|q::TypeCondition::On(t)| *t),
                    &fr.selection_set,
                ),
                q::Selection::FragmentSpread(sp) => {
                    let Some(def) = self.fragments.get(sp.fragment_name) else {
                        continue;
                    };
                    // A fragment that spreads itself is invalid; do not loop.
                    if visiting.contains(&sp.fragment_name) {
                        continue;
                    }
                    let q::TypeCondition::On(t) = &def.type_condition;
                    (&sp.directives, Some(*t), &def.selection_set)
                }
            };
            let incl = min_incl(outer, self.inclusion(directives));
            if incl == Incl::No {
                continue;
            }
            let owner = match cond {
                Some(c) => match self.applies(c, runtime, stat) {
                    Applies::Yes => c,
                    Applies::No | Applies::Unknown => continue,
                },
                None => owner,
            };
            let spread = match item {
                q::Selection::FragmentSpread(sp) => Some(sp.fragment_name),
                _ => None,
            };
            if let Some(name) = spread {
                visiting.push(name);
            }
            self.collect_into(inner, runtime, stat, owner, incl, out, visiting);
            if spread.is_some() {
                visiting.pop();
            }
        }
    }

    // --- checking values --------------------------------------------------

    /// `data: null` without any error: every non-null root field is null.
    fn null_data(&self, out: &mut Out) {
        let collected = self.collect(&[self.op.selection], Some(self.op.root), self.op.root);
        for c in collected.iter().filter(|c| c.include == Incl::Yes) {
            if let Some(f) = self.op.root.field(c.name).filter(|f| f.ty.is_non_null()) {
                out.push(
                    "graphql_null_violation",
                    self.root_label(c.name),
                    format!("data.{}", c.key),
                    format!(
                        "`data` is null with no error, though {}.{} is {}",
                        self.op.root.name, f.name, f.ty
                    ),
                );
            }
        }
    }

    fn walk_root(&self, data: &Map<String, Value>, out: &mut Out) {
        let mut path = Vec::new();
        self.check_object(self.op.root, data, &[self.op.selection], &mut path, out);
    }

    fn finding(&self, out: &mut Out, code: &'static str, path: &[Seg], message: String) {
        let root = self.root_of(path).unwrap_or_else(|| "-".into());
        out.push(code, root, render(path), message);
    }

    /// The concrete type of an object value of static type `stat`: itself
    /// for an object type, else the valid `__typename` the value carries, else
    /// the only possible type.
    fn runtime_type(
        &self,
        stat: &'q NamedType,
        obj: &Map<String, Value>,
        sets: &[&'q q::SelectionSet<'q, &'q str>],
    ) -> Option<&'q NamedType> {
        if stat.kind == TypeKind::Object {
            return Some(stat);
        }
        let named = self
            .collect(sets, None, stat)
            .iter()
            .filter(|c| c.name == "__typename")
            .find_map(|c| obj.get(c.key).and_then(Value::as_str))
            .filter(|t| self.is_possible(stat, t))
            .and_then(|t| self.ts.get(t));
        named.or_else(|| match stat.possible_types.as_slice() {
            [only] => self.ts.get(only).filter(|t| t.kind == TypeKind::Object),
            _ => None,
        })
    }

    fn check_object(
        &self,
        stat: &'q NamedType,
        obj: &Map<String, Value>,
        sets: &[&'q q::SelectionSet<'q, &'q str>],
        path: &mut Vec<Seg>,
        out: &mut Out,
    ) {
        let runtime = self.runtime_type(stat, obj, sets);
        for c in self.collect(sets, runtime, stat) {
            path.push(Seg::Key(c.key.to_string()));
            match obj.get(c.key) {
                None => {
                    if c.include == Incl::Yes && !self.explained(path) {
                        let on = runtime.map_or(stat.name.as_str(), |r| r.name.as_str());
                        self.finding(
                            out,
                            "graphql_missing_field",
                            path,
                            format!("the selected field {on}.{} is absent", c.name),
                        );
                    }
                }
                Some(v) if c.name == "__typename" => self.check_typename(stat, v, path, out),
                Some(v) => {
                    let def = runtime
                        .and_then(|r| r.field(c.name))
                        .or_else(|| self.ts.get(c.owner).and_then(|o| o.field(c.name)))
                        .or_else(|| stat.field(c.name));
                    if let Some(def) = def {
                        let sub: Vec<_> = c.fields.iter().map(|f| &f.selection_set).collect();
                        let on = runtime.map_or(c.owner, |r| r.name.as_str());
                        if !v.is_null() {
                            out.covered.insert((on.to_string(), def.name.clone()));
                        }
                        let label = format!("{on}.{}", def.name);
                        self.check_value(&def.ty, &def.ty, v, &sub, &label, path, out);
                    }
                }
            }
            path.pop();
        }
    }

    fn check_typename(&self, stat: &NamedType, v: &Value, path: &[Seg], out: &mut Out) {
        let ok = v.as_str().is_some_and(|t| self.is_possible(stat, t));
        if ok {
            return;
        }
        let expected = if stat.kind == TypeKind::Object {
            format!("`{}`", stat.name)
        } else {
            format!("one of the possible types of {}", stat.name)
        };
        let what = match v.as_str() {
            Some(t) if self.ts.get(t).is_none() => {
                format!("{t:?}, a type the schema does not have")
            }
            Some(t) => format!("{t:?}"),
            None => json_kind(v).to_string(),
        };
        self.finding(
            out,
            "graphql_typename_violation",
            path,
            format!("__typename is {what}, expected {expected}"),
        );
    }

    /// Checks `v` against `ty` (a part of `full`, the field's type `label`).
    #[allow(clippy::too_many_arguments)]
    fn check_value(
        &self,
        ty: &TypeRef,
        full: &TypeRef,
        v: &Value,
        sets: &[&'q q::SelectionSet<'q, &'q str>],
        label: &str,
        path: &mut Vec<Seg>,
        out: &mut Out,
    ) {
        match ty {
            TypeRef::NonNull(inner) => {
                if v.is_null() {
                    if !self.explained(path) {
                        self.finding(
                            out,
                            "graphql_null_violation",
                            path,
                            format!(
                                "{label} is {full}, but {} is null and no error explains it",
                                render(path)
                            ),
                        );
                    }
                } else {
                    self.check_value(inner, full, v, sets, label, path, out);
                }
            }
            _ if v.is_null() => {}
            TypeRef::List(inner) => match v {
                Value::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        path.push(Seg::Index(i));
                        self.check_value(inner, full, item, sets, label, path, out);
                        path.pop();
                    }
                }
                other => self.finding(
                    out,
                    "graphql_list_mismatch",
                    path,
                    format!(
                        "{label} is {full}, but the value is {}, not a list",
                        json_kind(other)
                    ),
                ),
            },
            TypeRef::Named(name) => {
                let Some(t) = self.ts.get(name) else { return };
                let custom_scalar = t.kind == TypeKind::Scalar && !is_builtin(name);
                if custom_scalar {
                    return;
                }
                if v.is_array() {
                    self.finding(
                        out,
                        "graphql_list_mismatch",
                        path,
                        format!("{label} is {full}, but the value is a list"),
                    );
                    return;
                }
                match t.kind {
                    TypeKind::Scalar => {
                        if !scalar_fits(name, v) {
                            self.finding(
                                out,
                                "graphql_wrong_type",
                                path,
                                format!(
                                    "{label} is {full}, but the value is {} ({})",
                                    json_kind(v),
                                    show(v)
                                ),
                            );
                        }
                    }
                    TypeKind::Enum => {
                        let ok = v
                            .as_str()
                            .is_some_and(|s| t.enum_values.iter().any(|e| e == s));
                        if !ok {
                            self.finding(
                                out,
                                "graphql_enum_violation",
                                path,
                                format!(
                                    "{label} is {full}, but {} is not one of its values",
                                    show(v)
                                ),
                            );
                        }
                    }
                    TypeKind::Object | TypeKind::Interface | TypeKind::Union => match v {
                        Value::Object(obj) => self.check_object(t, obj, sets, path, out),
                        other => self.finding(
                            out,
                            "graphql_wrong_type",
                            path,
                            format!(
                                "{label} is {full}, but the value is {} ({})",
                                json_kind(other),
                                show(other)
                            ),
                        ),
                    },
                    TypeKind::InputObject => {}
                }
            }
        }
    }
}

impl Incl {
    fn max_incl(self, other: Incl) -> Incl {
        match (self, other) {
            (Incl::Yes, _) | (_, Incl::Yes) => Incl::Yes,
            (Incl::Maybe, _) | (_, Incl::Maybe) => Incl::Maybe,
            _ => Incl::No,
        }
    }
}

/// The weaker of a selection's own inclusion and its enclosing fragment's.
fn min_incl(a: Incl, b: Incl) -> Incl {
    match (a, b) {
        (Incl::No, _) | (_, Incl::No) => Incl::No,
        (Incl::Maybe, _) | (_, Incl::Maybe) => Incl::Maybe,
        _ => Incl::Yes,
    }
}

fn is_builtin(name: &str) -> bool {
    matches!(name, "Int" | "Float" | "String" | "Boolean" | "ID")
}

/// Whether a non-null, non-list JSON value is a valid serialisation of a
/// built-in scalar.
fn scalar_fits(name: &str, v: &Value) -> bool {
    let in_i32 = |v: &Value| match v {
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i32::try_from(i).is_ok()
            } else if n.is_u64() {
                false
            } else {
                // `3.0` is an integer written loosely; accept it.
                n.as_f64().is_some_and(|f| {
                    f.fract() == 0.0 && f >= f64::from(i32::MIN) && f <= f64::from(i32::MAX)
                })
            }
        }
        _ => false,
    };
    match name {
        "Int" => in_i32(v),
        "Float" => v.is_number(),
        "String" => v.is_string(),
        "Boolean" => v.is_boolean(),
        "ID" => v.is_string() || v.is_i64() || v.is_u64(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;

    fn demo() -> TypeSystem {
        crate::spec::load_text(crate::demo::GRAPHQL_SDL, Path::new("schema.graphql"))
            .expect("demo SDL loads")
            .api
            .graphql
            .expect("a type system")
    }

    /// A schema with an interface, a union, a custom scalar and nested lists.
    const LIB_SDL: &str = r#"
        interface Node { id: ID! }
        type Book implements Node { id: ID! title: String! pages: Int rating: Float genre: Genre tags: [String!]! }
        type Author implements Node { id: ID! name: String! books: [Book!] }
        type Shelf { id: ID! grid: [[Int!]!] }
        union SearchResult = Book | Author
        enum Genre { SF FANTASY }
        scalar JSON
        type Query {
          node(id: ID!): Node
          search(q: String!): [SearchResult!]!
          meta: JSON
          shelf: Shelf
          ok: Boolean!
        }
    "#;

    fn lib() -> TypeSystem {
        crate::spec::load_text(LIB_SDL, Path::new("lib.graphql"))
            .expect("lib SDL loads")
            .api
            .graphql
            .expect("a type system")
    }

    fn run(
        ts: &TypeSystem,
        query: &str,
        vars: Value,
        status: u16,
        body: Value,
    ) -> Vec<GraphqlFinding> {
        let text = body.to_string();
        check(ts, query, None, &vars, Some(status), Some(&body), &text)
    }

    fn codes(f: &[GraphqlFinding]) -> Vec<(&'static str, &str, &str)> {
        f.iter()
            .map(|f| (f.code, f.root_field.as_str(), f.path.as_str()))
            .collect()
    }

    const ORDER_Q: &str = r#"{ order(id: "2") { book { title author { name } } } }"#;

    #[test]
    fn f7_null_author_is_one_null_violation() {
        let ts = demo();
        let body = json!({"data":{"order":{"book":{"title":"Ancillary Justice","author":null}}}});
        let f = run(&ts, ORDER_Q, json!({}), 200, body);
        assert_eq!(
            codes(&f),
            vec![(
                "graphql_null_violation",
                "Query.order",
                "data.order.book.author"
            )]
        );
        assert!(
            f[0].message.contains("Book.author is Author!"),
            "{}",
            f[0].message
        );
        let good = json!({"data":{"order":{"book":{"title":"Ancillary Justice","author":{"name":"Ann Leckie"}}}}});
        assert!(run(&ts, ORDER_Q, json!({}), 200, good).is_empty());
    }

    #[test]
    fn f8_backtrace_is_a_stack_leak_only() {
        let ts = demo();
        let q = r#"{ book(id: "abc") { title } }"#;
        let body = json!({"data":null,"errors":[{
            "message":"called `Result::unwrap()` on an `Err` value: ParseIntError { kind: InvalidDigit }\nthread 'tokio-runtime-worker' panicked at src/store.rs:42:9:\nstack backtrace:\n   0: rust_begin_unwind",
            "locations":[{"line":1,"column":3}],
            "path":["book"]}]});
        let f = run(&ts, q, json!({}), 200, body);
        assert_eq!(
            codes(&f),
            vec![("graphql_stack_leak", "Query.book", "data.book")]
        );
        // The near miss: a plain domain error, and the root field's null data.
        let plain =
            json!({"data":null,"errors":[{"message":"invalid id \"abc\"","path":["author"]}]});
        assert!(run(
            &ts,
            r#"{ author(id: "abc") { name } }"#,
            json!({}),
            200,
            plain
        )
        .is_empty());
        let good = json!({"data":{"book":{"title":"Dune"}}});
        assert!(run(&ts, r#"{ book(id: "1") { title } }"#, json!({}), 200, good).is_empty());
    }

    #[test]
    fn stack_traces_in_extensions_leak_too() {
        let ts = demo();
        let q = r#"{ book(id: "1") { title } }"#;
        let apollo = json!({"data":{"book":null},"errors":[{"message":"boom","path":["book"],
            "extensions":{"code":"INTERNAL_SERVER_ERROR","exception":{"stacktrace":["Error: boom","    at resolve (/app/x.js:1:2)"]}}}]});
        assert_eq!(
            codes(&run(&ts, q, json!({}), 200, apollo)),
            vec![("graphql_stack_leak", "Query.book", "data.book")]
        );
        let sql = json!({"data":{"book":null},"errors":[{"message":"db","path":["book"],
            "extensions":{"detail":"ERROR: syntax error at or near \"abc\""}}]});
        assert_eq!(
            run(&ts, q, json!({}), 200, sql)[0].code,
            "graphql_stack_leak"
        );
    }

    #[test]
    fn server_errors_name_every_root_field() {
        let ts = demo();
        let q = r#"{ a: book(id: "1") { title } authors { name } }"#;
        let f = check(&ts, q, None, &json!({}), Some(502), None, "Bad Gateway");
        assert_eq!(
            codes(&f),
            vec![
                ("graphql_server_error", "Query.book", "-"),
                ("graphql_server_error", "Query.authors", "-"),
            ]
        );
        let f = check(&ts, "{ book(", None, &json!({}), Some(500), None, "");
        assert_eq!(codes(&f), vec![("graphql_server_error", "-", "-")]);
        let good = json!({"data":{"a":{"title":"Dune"},"authors":[]}});
        assert!(run(&ts, q, json!({}), 200, good).is_empty());
    }

    #[test]
    fn mutations_are_named_by_their_root_type() {
        let ts = demo();
        let q = r#"mutation M { createAuthor(name: "x") { id name } }"#;
        let bad = json!({"data":{"createAuthor":{"id":"3","name":7}}});
        assert_eq!(
            codes(&run(&ts, q, json!({}), 200, bad)),
            vec![(
                "graphql_wrong_type",
                "Mutation.createAuthor",
                "data.createAuthor.name"
            )]
        );
        let f1 = json!({"data":null,"errors":[{"message":"internal error","path":["placeOrder"]}]});
        assert_eq!(
            codes(&run(
                &ts,
                r#"mutation { placeOrder(bookId: "4", quantity: 1) { id } }"#,
                json!({}),
                200,
                f1
            )),
            vec![(
                "graphql_internal_error",
                "Mutation.placeOrder",
                "data.placeOrder"
            )]
        );
    }

    #[test]
    fn validation_errors_are_told_apart() {
        let ts = demo();
        let q = "{ book(id: \"1\") {\n  title\n  foo\n} }";
        for (message, ext) in [
            ("Unknown field \"foo\" on type \"Book\".", Value::Null),
            ("Cannot query field \"foo\" on type \"Book\".", json!({"code":"GRAPHQL_VALIDATION_FAILED"})),
            ("Field \"book\" argument \"id\" of type \"ID!\" is required, but it was not provided.", Value::Null),
            ("Variable \"$id\" of required type \"ID!\" was not provided.", Value::Null),
            ("Unknown argument \"x\" on field \"book\" of type \"Query\".", Value::Null),
            ("whatever", json!({"classification":"ValidationError"})),
        ] {
            let body = json!({"data":null,"errors":[{"message":message,"locations":[{"line":3,"column":3}],"extensions":ext}]});
            assert_eq!(
                codes(&run(&ts, q, json!({}), 200, body)),
                vec![("graphql_validation_error", "Query.book", "-")],
                "{message}"
            );
        }
        // A parse error counts only when there is no data.
        let parse = json!({"errors":[{"message":"Syntax Error: Expected Name, found <EOF>."}]});
        assert_eq!(
            run(&ts, q, json!({}), 400, parse)[0].code,
            "graphql_validation_error"
        );
        let pest = json!({"data":null,"errors":[{"message":" --> 1:7\n  |\n1 | { book(\n  |       ^---\n  |\n  = expected name"}]});
        assert_eq!(
            codes(&run(&ts, "{ book(", json!({}), 200, pest)),
            vec![("graphql_validation_error", "-", "-")]
        );
        // Output coercion errors carry a path: not ours.
        let coerce = json!({"data":{"book":null},"errors":[{"message":"Int cannot represent non-integer value: 1.5","path":["book","stock"]}]});
        assert!(run(
            &ts,
            r#"{ book(id: "1") { stock } }"#,
            json!({}),
            200,
            coerce
        )
        .is_empty());
    }

    #[test]
    fn internal_errors_are_conservative() {
        let ts = demo();
        let q = r#"{ book(id: "1") { title } }"#;
        for (message, ext) in [
            ("internal error", Value::Null),
            (
                "Internal Server Error(s) while executing query",
                Value::Null,
            ),
            ("boom", json!({"code":"INTERNAL_SERVER_ERROR"})),
            (
                "Cannot read properties of undefined (reading 'title')",
                Value::Null,
            ),
            ("Unexpected error.", Value::Null),
        ] {
            let body = json!({"data":{"book":null},"errors":[{"message":message,"path":["book"],"extensions":ext}]});
            assert_eq!(
                codes(&run(&ts, q, json!({}), 200, body)),
                vec![("graphql_internal_error", "Query.book", "data.book")],
                "{message}"
            );
        }
        for message in [
            "book 9 not found",
            "invalid id \"abc\"",
            "not enough stock",
            "quantity must be between 1 and 10",
            "there can only be one admin",
        ] {
            let body = json!({"data":{"book":null},"errors":[{"message":message,"path":["book"],"extensions":{"code":"BAD_USER_INPUT"}}]});
            assert!(run(&ts, q, json!({}), 200, body).is_empty(), "{message}");
        }
    }

    #[test]
    fn missing_field_is_reported_unless_an_error_covers_it() {
        let ts = demo();
        let q = r#"{ book(id: "1") { title price } }"#;
        let bad = json!({"data":{"book":{"title":"Dune"}}});
        assert_eq!(
            codes(&run(&ts, q, json!({}), 200, bad)),
            vec![("graphql_missing_field", "Query.book", "data.book.price")]
        );
        let covered = json!({"data":{"book":{"title":"Dune"}},"errors":[{"message":"price unavailable","path":["book","price"]}]});
        assert!(run(&ts, q, json!({}), 200, covered).is_empty());
        // A null parent has no fields to miss.
        assert!(run(&ts, q, json!({}), 200, json!({"data":{"book":null}})).is_empty());
        let good = json!({"data":{"book":{"title":"Dune","price":9.5}}});
        assert!(run(&ts, q, json!({}), 200, good).is_empty());
        // A 2xx JSON body that is no GraphQL response misses the root field.
        assert_eq!(
            codes(&run(&ts, q, json!({}), 200, json!({"ok":true}))),
            vec![("graphql_missing_field", "Query.book", "data.book")]
        );
    }

    #[test]
    fn null_propagation_with_an_error_path_is_not_a_violation() {
        let ts = demo();
        // `author` (Author!) failed: its parent `book` (Book!) became null, so
        // `order` (nullable) is null; the error's path points below each null.
        let q = r#"{ order(id: "2") { book { author { name } } } }"#;
        let body = json!({"data":{"order":null},"errors":[{"message":"author gone","path":["order","book","author"]}]});
        assert!(run(&ts, q, json!({}), 200, body).is_empty());
        // A server that stops the propagation early still has its error at or below.
        let body = json!({"data":{"order":{"book":null}},"errors":[{"message":"author gone","path":["order","book","author"]}]});
        assert!(run(&ts, q, json!({}), 200, body).is_empty());
        // An error elsewhere does not explain it.
        let body =
            json!({"data":{"order":{"book":null}},"errors":[{"message":"x","path":["other"]}]});
        assert_eq!(
            codes(&run(&ts, q, json!({}), 200, body)),
            vec![("graphql_null_violation", "Query.order", "data.order.book")]
        );
        // The server's own report of the violation is the fault.
        let body = json!({"data":{"order":null},"errors":[{"message":"Cannot return null for non-nullable field Book.author.","path":["order","book","author"]}]});
        assert_eq!(
            codes(&run(&ts, q, json!({}), 200, body)),
            vec![(
                "graphql_null_violation",
                "Query.order",
                "data.order.book.author"
            )]
        );
    }

    #[test]
    fn data_null_without_errors_breaks_non_null_roots() {
        let ts = demo();
        let f = run(
            &ts,
            "{ authors { name } }",
            json!({}),
            200,
            json!({"data":null}),
        );
        assert_eq!(
            codes(&f),
            vec![("graphql_null_violation", "Query.authors", "data.authors")]
        );
        assert!(run(
            &ts,
            r#"{ book(id: "1") { title } }"#,
            json!({}),
            200,
            json!({"data":null})
        )
        .is_empty());
    }

    #[test]
    fn wrong_scalar_types() {
        let ts = demo();
        let q = r#"{ book(id: "1") { id title price stock } }"#;
        let good = json!({"data":{"book":{"id":1,"title":"Dune","price":12,"stock":3}}});
        assert!(run(&ts, q, json!({}), 200, good).is_empty());
        for (field, value) in [
            ("price", json!("12.50")),
            ("stock", json!(1.5)),
            ("stock", json!(3_000_000_000u64)),
            ("title", json!(5)),
            ("id", json!(true)),
            ("id", json!(1.5)),
        ] {
            let mut book = json!({"id":"1","title":"Dune","price":12.5,"stock":3});
            book[field] = value.clone();
            let f = run(&ts, q, json!({}), 200, json!({"data":{"book":book}}));
            let path = format!("data.book.{field}");
            assert_eq!(
                codes(&f),
                vec![("graphql_wrong_type", "Query.book", path.as_str())],
                "{value}"
            );
        }
        let b = json!({"data":{"book":{"id":"1","title":"Dune","price":1,"stock":3.0}}});
        assert!(
            run(&ts, q, json!({}), 200, b).is_empty(),
            "an integral float is an Int"
        );
        let nested = json!({"data":{"book":"Dune"}});
        assert_eq!(
            run(&ts, q, json!({}), 200, nested)[0].code,
            "graphql_wrong_type"
        );
    }

    #[test]
    fn enum_values_outside_the_enum() {
        let ts = demo();
        let q = r#"{ book(id: "1") { status } }"#;
        for bad in [json!("SHIPPED"), json!("available"), json!(1)] {
            let f = run(
                &ts,
                q,
                json!({}),
                200,
                json!({"data":{"book":{"status":bad}}}),
            );
            assert_eq!(
                codes(&f),
                vec![("graphql_enum_violation", "Query.book", "data.book.status")]
            );
        }
        assert!(run(
            &ts,
            q,
            json!({}),
            200,
            json!({"data":{"book":{"status":"RETIRED"}}})
        )
        .is_empty());
    }

    #[test]
    fn lists_and_non_lists() {
        let ts = demo();
        let q = r#"{ authors { name books { tags } } }"#;
        let good = json!({"data":{"authors":[{"name":"A","books":[{"tags":["sf"]},{"tags":[]}]},{"name":"B","books":[]}]}});
        assert!(run(&ts, q, json!({}), 200, good).is_empty());
        let not_list = json!({"data":{"authors":{"name":"A","books":[]}}});
        assert_eq!(
            codes(&run(&ts, q, json!({}), 200, not_list)),
            vec![("graphql_list_mismatch", "Query.authors", "data.authors")]
        );
        let list_for_scalar = json!({"data":{"authors":[{"name":["A"],"books":[]}]}});
        assert_eq!(
            codes(&run(&ts, q, json!({}), 200, list_for_scalar)),
            vec![(
                "graphql_list_mismatch",
                "Query.authors",
                "data.authors[*].name"
            )]
        );
        // The same fault in many elements is one finding; different paths are not.
        let many = json!({"data":{"authors":[
            {"name":"A","books":[{"tags":"sf"},{"tags":"x"}]},
            {"name":"B","books":[{"tags":[null]}]}]}});
        assert_eq!(
            codes(&run(&ts, q, json!({}), 200, many)),
            vec![
                (
                    "graphql_list_mismatch",
                    "Query.authors",
                    "data.authors[*].books[*].tags"
                ),
                (
                    "graphql_null_violation",
                    "Query.authors",
                    "data.authors[*].books[*].tags[*]"
                ),
            ]
        );
        let lib = lib();
        let grid = "{ shelf { grid } }";
        assert!(run(
            &lib,
            grid,
            json!({}),
            200,
            json!({"data":{"shelf":{"grid":[[1,2],[]]}}})
        )
        .is_empty());
        assert_eq!(
            codes(&run(
                &lib,
                grid,
                json!({}),
                200,
                json!({"data":{"shelf":{"grid":[1]}}})
            )),
            vec![("graphql_list_mismatch", "Query.shelf", "data.shelf.grid[*]")]
        );
    }

    #[test]
    fn findings_are_capped() {
        let ts = lib();
        let q = "{ search(q: \"x\") { ... on Book { id title pages rating genre tags } ... on Author { id name } __typename } }";
        let body = json!({"data":{"search":[
            {"__typename":"Book","id":[],"title":1,"pages":"x","rating":"y","genre":"Z","tags":3},
            {"__typename":"Author","id":{},"name":2},
            {"__typename":"Nope"},
            {"__typename":"Book"}]}});
        let f = run(&ts, q, json!({}), 200, body);
        assert_eq!(f.len(), MAX_FINDINGS, "{f:#?}");
    }

    #[test]
    fn aliases_report_the_response_key_and_the_real_field() {
        let ts = demo();
        let q = r#"{ first: book(id: "1") { name: title } second: book(id: "2") { name: title } }"#;
        let good = json!({"data":{"first":{"name":"Dune"},"second":{"name":"Emma"}}});
        assert!(run(&ts, q, json!({}), 200, good).is_empty());
        let bad = json!({"data":{"first":{"name":"Dune"},"second":{"name":null}}});
        assert_eq!(
            codes(&run(&ts, q, json!({}), 200, bad)),
            vec![("graphql_null_violation", "Query.book", "data.second.name")]
        );
        let missing = json!({"data":{"first":{"title":"Dune"},"second":{"name":"Emma"}}});
        assert_eq!(
            codes(&run(&ts, q, json!({}), 200, missing)),
            vec![("graphql_missing_field", "Query.book", "data.first.name")]
        );
    }

    #[test]
    fn fragments_on_interfaces_and_unions_with_typename() {
        let ts = lib();
        let q = r#"
            query Q($id: ID!) {
              node(id: $id) { __typename id ...BookParts ... on Author { name } }
              search(q: "x") { kind: __typename ... on Node { id } ... on Book { title genre } ... on Author { name } }
            }
            fragment BookParts on Book { title pages }
        "#;
        let good = json!({"data":{
            "node":{"__typename":"Book","id":"1","title":"Dune","pages":412},
            "search":[
                {"kind":"Book","id":"1","title":"Dune","genre":"SF"},
                {"kind":"Author","id":"2","name":"Frank"}]}});
        let f = check(
            &ts,
            q,
            Some("Q"),
            &json!({"id":"1"}),
            Some(200),
            Some(&good),
            "",
        );
        assert!(f.is_empty(), "{f:#?}");
        // Missing fields of the concrete type's fragments are found.
        let missing = json!({"data":{
            "node":{"__typename":"Author","id":"2"},
            "search":[{"kind":"Book","id":"1","title":"Dune"}]}});
        let f = check(
            &ts,
            q,
            Some("Q"),
            &json!({"id":"2"}),
            Some(200),
            Some(&missing),
            "",
        );
        assert_eq!(
            codes(&f),
            vec![
                ("graphql_missing_field", "Query.node", "data.node.name"),
                (
                    "graphql_missing_field",
                    "Query.search",
                    "data.search[*].genre"
                ),
            ]
        );
        // A __typename outside the possible types, or unknown to the schema.
        for bad in ["Shelf", "Query", "Ghost", "Node"] {
            let body = json!({"data":{"node":{"__typename":bad,"id":"1"},"search":[]}});
            let f = check(
                &ts,
                q,
                Some("Q"),
                &json!({"id":"1"}),
                Some(200),
                Some(&body),
                "",
            );
            assert_eq!(
                codes(&f),
                vec![(
                    "graphql_typename_violation",
                    "Query.node",
                    "data.node.__typename"
                )],
                "{bad}"
            );
        }
        // On an object type it must be the type itself.
        let obj_q = "{ shelf { __typename id } }";
        assert!(run(
            &ts,
            obj_q,
            json!({}),
            200,
            json!({"data":{"shelf":{"__typename":"Shelf","id":"1"}}})
        )
        .is_empty());
        assert_eq!(
            codes(&run(
                &ts,
                obj_q,
                json!({}),
                200,
                json!({"data":{"shelf":{"__typename":"Book","id":"1"}}})
            )),
            vec![(
                "graphql_typename_violation",
                "Query.shelf",
                "data.shelf.__typename"
            )]
        );
    }

    #[test]
    fn abstract_values_without_typename_are_checked_conservatively() {
        let ts = lib();
        // Without __typename the concrete type is unknown: `... on Book` fields
        // may be absent, but the interface's own fields are still checked.
        let q = "{ node(id: \"1\") { id ... on Book { title } } }";
        assert!(run(&ts, q, json!({}), 200, json!({"data":{"node":{"id":"1"}}})).is_empty());
        assert_eq!(
            codes(&run(
                &ts,
                q,
                json!({}),
                200,
                json!({"data":{"node":{"title":"Dune"}}})
            )),
            vec![("graphql_missing_field", "Query.node", "data.node.id")]
        );
        // Custom scalars accept anything.
        assert!(run(
            &ts,
            "{ meta }",
            json!({}),
            200,
            json!({"data":{"meta":{"a":[1,"b"]}}})
        )
        .is_empty());
    }

    #[test]
    fn skip_and_include() {
        let ts = demo();
        let q = r#"query ($noPrice: Boolean!, $withStock: Boolean = true, $unknown: Boolean) {
            book(id: "1") { title price @skip(if: $noPrice) stock @include(if: $withStock) status @skip(if: $unknown) tags @include(if: false) }
        }"#;
        let skipped = json!({"data":{"book":{"title":"Dune","stock":1}}});
        assert!(run(&ts, q, json!({"noPrice":true}), 200, skipped.clone()).is_empty());
        // Not skipped: now the price must be there.
        assert_eq!(
            codes(&run(&ts, q, json!({"noPrice":false}), 200, skipped)),
            vec![("graphql_missing_field", "Query.book", "data.book.price")]
        );
        // Without the default's field.
        let no_stock = json!({"data":{"book":{"title":"Dune"}}});
        assert_eq!(
            codes(&run(&ts, q, json!({"noPrice":true}), 200, no_stock)),
            vec![("graphql_missing_field", "Query.book", "data.book.stock")]
        );
        // A field under an unknown condition is checked only when present.
        let bad_status = json!({"data":{"book":{"title":"Dune","stock":1,"status":"NOPE"}}});
        assert_eq!(
            codes(&run(&ts, q, json!({"noPrice":true}), 200, bad_status)),
            vec![("graphql_enum_violation", "Query.book", "data.book.status")]
        );
        // Skipped fragments too.
        let fq = r#"{ book(id: "1") { title ... on Book @skip(if: true) { price } } }"#;
        assert!(run(
            &ts,
            fq,
            json!({}),
            200,
            json!({"data":{"book":{"title":"Dune"}}})
        )
        .is_empty());
    }

    #[test]
    fn operation_name_picks_the_operation() {
        let ts = demo();
        let q = r#"query A { authors { name } } mutation B { deleteAuthor(id: "1") }"#;
        let body = json!({"data":{"deleteAuthor":"yes"}});
        let f = check(&ts, q, Some("B"), &json!({}), Some(200), Some(&body), "");
        assert_eq!(
            codes(&f),
            vec![(
                "graphql_wrong_type",
                "Mutation.deleteAuthor",
                "data.deleteAuthor"
            )]
        );
        let ok = json!({"data":{"deleteAuthor":true}});
        assert!(check(&ts, q, Some("B"), &json!({}), Some(200), Some(&ok), "").is_empty());
    }

    #[test]
    fn non_json_bodies_with_traces_leak() {
        let ts = demo();
        let text = "<html>Traceback (most recent call last):\n  File \"app.py\"</html>";
        let f = check(
            &ts,
            "{ authors { name } }",
            None,
            &json!({}),
            Some(200),
            None,
            text,
        );
        assert_eq!(
            codes(&f),
            vec![("graphql_stack_leak", "Query.authors", "-")]
        );
    }

    #[test]
    fn every_code_is_listed_and_documented() {
        let doc = include_str!("graphql.rs");
        for code in CODES {
            assert!(doc.contains(&format!("//! | `{code}` |")), "{code}");
        }
    }
}
