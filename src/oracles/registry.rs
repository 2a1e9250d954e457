//! Every oracle, one row each: its code, what its faults say about the
//! server (class and severity), one line for titles, exactly when it fires,
//! the protocols it judges, and how it judges (a guard and a check).
//!
//! Everything else is derived from these rows or tested against them: the
//! codes `--skip-check` and `--fail-on` accept (and their help), the SARIF
//! rules, the README's table of checks and the fault codes of
//! `models/report.schema.json`. Adding an oracle is adding a row here (its
//! check beside the others of its kind) and a fixture under
//! `fixtures/oracles/` that makes it fire (`oracles::registry::tests`).

use serde::Serialize;

use super::{Answer, FaultCheck, Finding, acceptance, leaks, stateful};
use crate::execution::{Exchange, FailureKind};

/// What a fault says about the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// The server misbehaved whatever its description says: it failed,
    /// crashed, hung, leaked its internals, broke a promise across requests
    /// or let in a caller it must refuse.
    Defect,
    /// An answer does not match the API's description: the server or the
    /// description is wrong, and changing the description may settle it.
    Conformance,
}

impl Class {
    /// Its name in reports (`defect`, `conformance`).
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Defect => "defect",
            Class::Conformance => "conformance",
        }
    }
}

/// How much a fault matters, most first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// A crash, a failure of the server, or a security hole.
    High,
    /// A broken promise, a leak, or an answer clients cannot read as described.
    Medium,
    /// A gap in the description, or an answer clients can still read.
    Low,
}

impl Severity {
    /// Its name in reports (`high`, `medium`, `low`).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::High => "high",
            Severity::Medium => "medium",
            Severity::Low => "low",
        }
    }
}

/// What is at stake, for code-scanning tags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Concern {
    /// The server's reliability.
    Reliability,
    /// Its security: leaks, callers let in.
    Security,
    /// Its correctness against the description.
    Correctness,
    /// The server rejected a request built from its own schema: most
    /// likely Cartograph's own mistake.
    Tool,
}

impl Concern {
    /// Its tag (`reliability`, `security`, `correctness`, `tool`).
    pub fn as_str(self) -> &'static str {
        match self {
            Concern::Reliability => "reliability",
            Concern::Security => "security",
            Concern::Correctness => "correctness",
            Concern::Tool => "tool",
        }
    }
}

/// When two faults of one oracle are one cause: the oracle fired for the
/// same reason ([`super::causes`] works the reason out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// The same code path: the server's answer names the same exception
    /// type or stack frame; without one, each operation and status is a
    /// cause of its own.
    CodePath,
    /// Each operation is a cause of its own (a promise about its resource).
    Operation,
    /// The same place: the schema location and keyword, the leak marker, the
    /// media type that came, the GraphQL schema location.
    Detail,
    /// The same answer: the status with the same body shape (media type,
    /// JSON keys, message with its values hidden).
    AnswerShape,
    /// The same triggering input: the same header, query parameter, body
    /// field or credentials, given the same kind of bad value.
    Input,
    /// The same message, with its values hidden.
    Message,
}

/// How an oracle judges REST exchanges.
#[derive(Clone, Copy)]
pub enum Judge {
    /// A request that got no answer (REST and GraphQL alike).
    NoAnswer(fn(&Exchange) -> Option<Finding>),
    /// One answer on its own; `guard` says when the check applies.
    Answer {
        /// When the check applies at all.
        guard: fn(&Answer<'_>) -> bool,
        /// What it finds.
        check: fn(&Answer<'_>) -> Option<Finding>,
    },
    /// One answer after the earlier answers of its test.
    Sequence(fn(&Answer<'_>) -> Option<Finding>),
    /// Not a REST oracle.
    None,
}

/// Which part of the GraphQL oracle reports an oracle's faults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphqlJudge {
    /// Not a GraphQL oracle.
    None,
    /// The walk of the answer against the query and the schema
    /// ([`super::graphql::check`]) reports it.
    Walk,
    /// The same judge as REST (a request that got no answer).
    Same,
}

/// One oracle.
pub struct Oracle {
    /// Its stable code (`server_error`).
    pub code: &'static str,
    /// Defect or conformance.
    pub class: Class,
    /// How much its faults matter.
    pub severity: Severity,
    /// What is at stake.
    pub concern: Concern,
    /// One line, for titles: what a fault of it is.
    pub title: &'static str,
    /// Exactly when it fires, in Markdown (the README's table says the same).
    pub fires_when: &'static str,
    /// When two of its faults are one cause.
    pub group: Group,
    /// Earlier codes of the same concept, still accepted by `--skip-check`
    /// and `--fail-on`.
    pub aliases: &'static [&'static str],
    /// How it judges REST exchanges.
    pub rest: Judge,
    /// How it judges GraphQL answers.
    pub graphql: GraphqlJudge,
}

impl Oracle {
    /// Whether it judges REST APIs.
    pub fn judges_rest(&self) -> bool {
        !matches!(self.rest, Judge::None)
    }

    /// Whether it judges GraphQL APIs.
    pub fn judges_graphql(&self) -> bool {
        self.graphql != GraphqlJudge::None
    }

    /// The protocols it judges, for people (`REST, GraphQL`).
    pub fn protocols(&self) -> &'static str {
        match (self.judges_rest(), self.judges_graphql()) {
            (true, true) => "REST, GraphQL",
            (true, false) => "REST",
            (false, true) => "GraphQL",
            (false, false) => "",
        }
    }
}

/// Every oracle, defects first.
pub const ORACLES: &[Oracle] = &[
    Oracle {
        code: "server_error",
        class: Class::Defect,
        severity: Severity::High,
        concern: Concern::Reliability,
        title: "The server answered 500-599",
        fires_when: "the status is 500–599 but 501 (an unknown status such as 800, and 501 Not Implemented, the server declining what a documented operation offers, are `undocumented_status` when undocumented), unless the request asked for it (a status or code parameter of that value, as echo endpoints take: `/status/563`, `?code=503`); for GraphQL, once per root field of the operation",
        group: Group::CodePath,
        aliases: &["graphql_server_error"],
        rest: Judge::Answer {
            guard: unexplained,
            check: server_error,
        },
        graphql: GraphqlJudge::Walk,
    },
    Oracle {
        code: "no_answer",
        class: Class::Defect,
        severity: Severity::High,
        concern: Concern::Reliability,
        title: "The server closed the connection without answering",
        fires_when: "the connection was made and the request sent, then the server closed or reset it before any answer (a crash on that request, most often); not when no connection could be made at all (the run then stops, unreachable)",
        group: Group::CodePath,
        aliases: &[],
        rest: Judge::NoAnswer(no_answer),
        graphql: GraphqlJudge::Same,
    },
    Oracle {
        code: "invalid_http",
        class: Class::Defect,
        severity: Severity::High,
        concern: Concern::Reliability,
        title: "The answer is not valid HTTP",
        fires_when: "what came back is not valid HTTP: a status line or header the HTTP stack cannot parse (a status that is not three digits, a negative or non-numeric `Content-Length`…), or an answer cut off by a reset or close in the middle of its body; the message quotes its first bytes, escaped (read by sending the request once more over a plain socket, for the first such answer of each operation, over plain HTTP)",
        group: Group::Operation,
        aliases: &[],
        rest: Judge::NoAnswer(invalid_http),
        graphql: GraphqlJudge::Same,
    },
    Oracle {
        code: "timeout",
        class: Class::Defect,
        severity: Severity::Medium,
        concern: Concern::Reliability,
        title: "No answer within the timeout",
        fires_when: "no answer came within `--timeout` to a request that was not waiting behind another (sent while another was in flight, or while one that had timed out could still hold the server, and overtaken by no later request), and that did not ask for a delay (`/delay/5`, `?sleep=3`); a request the end of the budget cut short is `interrupted`, no fault",
        group: Group::Operation,
        aliases: &[],
        rest: Judge::NoAnswer(timeout),
        graphql: GraphqlJudge::Same,
    },
    Oracle {
        code: "graphql_internal_error",
        class: Class::Defect,
        severity: Severity::High,
        concern: Concern::Reliability,
        title: "A GraphQL error shows an internal failure",
        fires_when: "an `errors` entry shows an unexpected failure: `extensions.code` (or graphql-java's `classification`) `INTERNAL_SERVER_ERROR`, `INTERNAL_ERROR` or `INTERNAL`, or a message such as `internal server error`, `unexpected error`, `NullPointerException`, `Cannot read properties of undefined`, a Rust `unwrap()` panic, `attempt to divide by zero` or `nil pointer dereference`; ordinary domain errors (`not found`, `invalid id \"abc\"`, `BAD_USER_INPUT`) never fire",
        group: Group::Message,
        aliases: &[],
        rest: Judge::None,
        graphql: GraphqlJudge::Walk,
    },
    Oracle {
        code: "ignored_auth",
        class: Class::Defect,
        severity: Severity::High,
        concern: Concern::Security,
        title: "A request without valid credentials was let in",
        fires_when: "a negative test's request with no credentials, or malformed ones (another scheme word, an empty token, garbage), to an operation whose `security` requires credentials (no anonymous `{}` alternative) answers 2xx",
        group: Group::Input,
        aliases: &[],
        rest: Judge::Answer {
            guard: conformance_applies,
            check: ignored_auth,
        },
        graphql: GraphqlJudge::None,
    },
    Oracle {
        code: "stack_trace_leak",
        class: Class::Defect,
        severity: Severity::Medium,
        concern: Concern::Security,
        title: "The body leaks a stack trace",
        fires_when: "a body (any status) holds a stack trace marker of a common runtime: Rust (`stack backtrace:`, `panicked at`), Python, Java, .NET, Go, PHP, Node.js; for GraphQL, an `errors` entry's message or `extensions` holding one (or a non-empty `extensions` `stacktrace`), or a body that is not a GraphQL response holding one",
        group: Group::Detail,
        aliases: &["graphql_stack_leak"],
        rest: Judge::Answer {
            guard: always,
            check: leak::<0>,
        },
        graphql: GraphqlJudge::Walk,
    },
    Oracle {
        code: "sql_leak",
        class: Class::Defect,
        severity: Severity::Medium,
        concern: Concern::Security,
        title: "The body leaks an SQL error",
        fires_when: "a body holds the error text of a common SQL database or driver (MySQL, PostgreSQL, SQLite, SQL Server, Oracle, JDBC, Hibernate); for GraphQL, an `errors` entry's message or `extensions` holding one",
        group: Group::Detail,
        aliases: &["graphql_stack_leak"],
        rest: Judge::Answer {
            guard: always,
            check: leak::<1>,
        },
        graphql: GraphqlJudge::Walk,
    },
    Oracle {
        code: "debug_page_leak",
        class: Class::Defect,
        severity: Severity::Medium,
        concern: Concern::Security,
        title: "The body is a framework's debug or default error page",
        fires_when: "a body is a framework debug or default error page (Werkzeug, Django, Rails, Spring's Whitelabel, ASP.NET, Laravel, Symfony); for GraphQL, an `errors` entry's message or `extensions` holding one",
        group: Group::Detail,
        aliases: &["graphql_stack_leak"],
        rest: Judge::Answer {
            guard: always,
            check: leak::<2>,
        },
        graphql: GraphqlJudge::Walk,
    },
    Oracle {
        code: "use_after_delete",
        class: Class::Defect,
        severity: Severity::Medium,
        concern: Concern::Reliability,
        title: "A deleted resource is still readable",
        fires_when: "a GET answers 2xx with a body that shows something (not empty, `{}`, `[]` or `null`) for a path that a DELETE answered 2xx for earlier in the same test, with no successful PUT or POST to it in between, when that path names one resource: its template ends in a parameter that identifies something (`/books/{bookId}`, `/users/{username}`, `/pets/{pet}`, a uuid), not a collection (`DELETE /things` then `GET /things` may rightly answer `[]`) nor an argument (`/anything/{anything}`, `/calc/{n}`), and holds a value of its kind (not an object's `id` that an earlier answer gave, where a `{slug}` or `{name}` goes)",
        group: Group::Operation,
        aliases: &[],
        rest: Judge::Sequence(use_after_delete),
        graphql: GraphqlJudge::None,
    },
    Oracle {
        code: "created_not_readable",
        class: Class::Defect,
        severity: Severity::Medium,
        concern: Concern::Reliability,
        title: "A created resource cannot be read",
        fires_when: "a GET of `collection/{id}` answers 404 or 410 right after a POST to the collection answered 2xx with that id (in `Location` or the body's `id`), when the id is of the path parameter's kind (not put where a `{slug}` or `{name}` goes)",
        group: Group::Operation,
        aliases: &[],
        rest: Judge::Sequence(created_not_readable),
        graphql: GraphqlJudge::None,
    },
    Oracle {
        code: "dangling_location",
        class: Class::Defect,
        severity: Severity::Medium,
        concern: Concern::Reliability,
        title: "The Location header leads nowhere",
        fires_when: "a GET of the `Location` a 2xx answer gave (same origin, under the target) answers 404 or 410",
        group: Group::Operation,
        aliases: &[],
        rest: Judge::Sequence(dangling_location),
        graphql: GraphqlJudge::None,
    },
    Oracle {
        code: "non_idempotent",
        class: Class::Defect,
        severity: Severity::Medium,
        concern: Concern::Reliability,
        title: "A repeated PUT or DELETE fails",
        fires_when: "a PUT repeated identically right after a 2xx answers a 4xx other than 401, 403 (who may change the resource changed with it) and 412 (its `If-Match` went stale); a DELETE repeated identically right after a 2xx answers a 4xx other than 404 and 410 (5xx are `server_error`)",
        group: Group::Operation,
        aliases: &[],
        rest: Judge::Sequence(non_idempotent),
        graphql: GraphqlJudge::None,
    },
    Oracle {
        code: "schema_violation",
        class: Class::Conformance,
        severity: Severity::Medium,
        concern: Concern::Correctness,
        title: "The body breaks the documented schema",
        fires_when: "a JSON body of a status outside 300–399 and 500–599 does not match the schema documented for that status and media type. The schema is converted to JSON Schema 2020-12 and checked with the `jsonschema` crate: `nullable` (and `x-nullable`) allow null, write-only properties are never required in answers, `oneOf` is read as `anyOf` (members overlap in real descriptions), `format` is never asserted, extra properties are never a violation, missing required ones are not when the request asked for some fields only (`fields`, `_fields`, `select`, `$select`, `only` in its query), and `minItems` above 16 is dropped (bodies are read with arrays cut at 16 items)",
        group: Group::Detail,
        aliases: &[],
        rest: Judge::Answer {
            guard: body_applies,
            check: schema_violation,
        },
        graphql: GraphqlJudge::None,
    },
    Oracle {
        code: "invalid_input_accepted",
        class: Class::Conformance,
        severity: Severity::Medium,
        concern: Concern::Correctness,
        title: "An input the description forbids was accepted",
        fires_when: "a negative test's request whose one wrong input breaks a documented constraint answers 2xx: a value of another type, `null` where not nullable, a required parameter or field left out, a value outside the enum, a bound or length overstepped, or malformed JSON for a required body. A near miss of a `pattern`, a malformed `format`, a broken multipart body and unusual but valid values are never judged (regex dialects differ, formats are annotations, multipart parsers skip parts they cannot read)",
        group: Group::Input,
        aliases: &[],
        rest: Judge::Answer {
            guard: conformance_applies,
            check: invalid_input_accepted,
        },
        graphql: GraphqlJudge::None,
    },
    Oracle {
        code: "invalid_json",
        class: Class::Conformance,
        severity: Severity::Medium,
        concern: Concern::Correctness,
        title: "A body declared JSON is not JSON",
        fires_when: "the answer's own `Content-Type` says JSON (`application/json`, or any `+json` type such as `application/problem+json`) and its body, read whole (not cut by `--max-body` or the timeout) and not empty or blank, does not parse as JSON (a byte order mark is allowed); a status outside 500–599 and not 429; whatever the description documents",
        group: Group::AnswerShape,
        aliases: &[],
        rest: Judge::Answer {
            guard: declared_json_applies,
            check: invalid_json,
        },
        graphql: GraphqlJudge::None,
    },
    Oracle {
        code: "html_instead_of_json",
        class: Class::Conformance,
        severity: Severity::Medium,
        concern: Concern::Correctness,
        title: "An HTML page came where JSON is documented",
        fires_when: "JSON is documented for the status (not a redirect), HTML is not (`text/html` or `text/*`), and an HTML page came (`text/html`, or no `Content-Type` and a body starting `<!DOCTYPE html` or `<html`)",
        group: Group::AnswerShape,
        aliases: &[],
        rest: Judge::Answer {
            guard: documented_applies,
            check: html_instead_of_json,
        },
        graphql: GraphqlJudge::None,
    },
    Oracle {
        code: "content_type_mismatch",
        class: Class::Conformance,
        severity: Severity::Low,
        concern: Concern::Correctness,
        title: "The Content-Type is not a documented media type",
        fires_when: "a non-empty body of a status outside 300–399 and 500–599 has a `Content-Type` that none of the documented media types for that status covers (wildcards, and JSON flavours such as `problem+json` for `application/json`, cover); silent when the status documents no content, or when there is no `Content-Type`",
        group: Group::Detail,
        aliases: &[],
        rest: Judge::Answer {
            guard: documented_applies,
            check: content_type_mismatch,
        },
        graphql: GraphqlJudge::None,
    },
    Oracle {
        code: "undocumented_status",
        class: Class::Conformance,
        severity: Severity::Low,
        concern: Concern::Correctness,
        title: "The status is not documented for the operation",
        fires_when: "the status is not 500–599 (501 counts as not), is not 429 (an answer to our rate, not to the request), is not documented for the operation (exactly, by a `4XX` range, or by `default`), and is not explained by the request itself: a 414, 431 or 413 to its own 2,000-character URI, 2,000 bytes of headers or 8 KiB body, a 404 or 405 after an encoded `/` or `\\` (or a `.` or `..`) in a path value, a status it asked an echo endpoint for, a 4xx to a negative test's deliberately wrong or unusual input when the operation documents no client error at all (the gap is the whole operation's)",
        group: Group::AnswerShape,
        aliases: &[],
        rest: Judge::Answer {
            guard: conformance_applies,
            check: undocumented_status,
        },
        graphql: GraphqlJudge::None,
    },
    Oracle {
        code: "graphql_null_violation",
        class: Class::Conformance,
        severity: Severity::Medium,
        concern: Concern::Correctness,
        title: "A non-null field is null and no error explains it",
        fires_when: "a selected field whose type is non-null is `null` in `data`, and no `errors` entry's `path` is at, above or below that location (null propagation); also an `errors` entry in which the server itself reports it (`Cannot return null for non-nullable field`, graphql-java's `was declared as a non null type`); also `data: null` with no `errors` at all, for each non-null root field selected",
        group: Group::Detail,
        aliases: &[],
        rest: Judge::None,
        graphql: GraphqlJudge::Walk,
    },
    Oracle {
        code: "graphql_missing_field",
        class: Class::Conformance,
        severity: Severity::Medium,
        concern: Concern::Correctness,
        title: "A selected field is missing from the data",
        fires_when: "a selected field (included for certain: not skipped, its `@skip`/`@include` condition known) is absent from a non-null object in `data`, and no `errors` entry's `path` is at, above or below it; also a 2xx JSON object body with neither `data` nor `errors`, for each root field",
        group: Group::Detail,
        aliases: &[],
        rest: Judge::None,
        graphql: GraphqlJudge::Walk,
    },
    Oracle {
        code: "graphql_wrong_type",
        class: Class::Conformance,
        severity: Severity::Medium,
        concern: Concern::Correctness,
        title: "A value has the wrong type",
        fires_when: "a built-in scalar of the wrong JSON type (`Int` an integer within i32, `Float` a number, `String` a string, `Boolean` a bool, `ID` a string or an integer), or a composite type's value is not a JSON object (and not a list); custom scalars accept anything",
        group: Group::Detail,
        aliases: &[],
        rest: Judge::None,
        graphql: GraphqlJudge::Walk,
    },
    Oracle {
        code: "graphql_enum_violation",
        class: Class::Conformance,
        severity: Severity::Medium,
        concern: Concern::Correctness,
        title: "A value is not one of its enum's values",
        fires_when: "an enum's value is not one of its values (a non-string included)",
        group: Group::Detail,
        aliases: &[],
        rest: Judge::None,
        graphql: GraphqlJudge::Walk,
    },
    Oracle {
        code: "graphql_list_mismatch",
        class: Class::Conformance,
        severity: Severity::Medium,
        concern: Concern::Correctness,
        title: "A list and a single value are swapped",
        fires_when: "a list type's value is not a JSON array, or a JSON array stands where an object, enum or built-in scalar was promised",
        group: Group::Detail,
        aliases: &[],
        rest: Judge::None,
        graphql: GraphqlJudge::Walk,
    },
    Oracle {
        code: "graphql_typename_violation",
        class: Class::Conformance,
        severity: Severity::Low,
        concern: Concern::Correctness,
        title: "__typename names the wrong type",
        fires_when: "`__typename` is not a string naming the object type itself, or, under an interface or union, one of its possible object types (a name not in the schema included)",
        group: Group::Detail,
        aliases: &[],
        rest: Judge::None,
        graphql: GraphqlJudge::Walk,
    },
    Oracle {
        code: "graphql_validation_error",
        class: Class::Conformance,
        severity: Severity::Low,
        concern: Concern::Tool,
        title: "The server rejected a query built from its own schema",
        fires_when: "an `errors` entry rejects the request itself (a validation or parse failure, by `extensions.code` `GRAPHQL_VALIDATION_FAILED`, `GRAPHQL_PARSE_FAILED` or `OPERATION_RESOLUTION_FAILURE`, graphql-java's `ValidationError` or `InvalidSyntax`, or the validation wording of graphql-js, async-graphql, Apollo, gqlgen, graphql-java or Juniper): the query Cartograph built from the schema is not one the server accepts, most likely a Cartograph bug; it stands alone, masking the other codes of the entry, and a negative test's deliberately wrong value never fires it",
        group: Group::Message,
        aliases: &[],
        rest: Judge::None,
        graphql: GraphqlJudge::Walk,
    },
];

/// The oracle of a code.
pub fn oracle(code: &str) -> Option<&'static Oracle> {
    ORACLES.iter().find(|o| o.code == code)
}

/// Every oracle's code, in the table's order.
pub fn codes() -> impl Iterator<Item = &'static str> {
    ORACLES.iter().map(|o| o.code)
}

/// The codes a name given to `--skip-check` or `--fail-on` stands for: the
/// code itself, or every code that lists it as an earlier name.
pub fn resolve(name: &str) -> Result<Vec<&'static str>, String> {
    if let Some(o) = oracle(name) {
        return Ok(vec![o.code]);
    }
    let by_alias: Vec<&'static str> = ORACLES
        .iter()
        .filter(|o| o.aliases.contains(&name))
        .map(|o| o.code)
        .collect();
    if !by_alias.is_empty() {
        return Ok(by_alias);
    }
    let closest = codes()
        .map(|c| (strsim::jaro_winkler(c, name), c))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .filter(|(score, _)| *score > 0.85)
        .map(|(_, c)| format!(" (did you mean `{c}`?)"))
        .unwrap_or_default();
    Err(format!(
        "unknown check code `{name}`{closest}; the codes are: {}",
        codes().collect::<Vec<_>>().join(", ")
    ))
}

/// The codes some names stand for (codes, or earlier names of codes);
/// names that are neither are left out (the flags refuse them).
pub fn expand(names: &[String]) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for name in names {
        for code in resolve(name).unwrap_or_default() {
            if !out.contains(&code) {
                out.push(code);
            }
        }
    }
    out
}

/// The long help of a flag that takes codes: `first`, then every code by
/// class with its title.
pub fn flag_help(first: &str) -> String {
    let mut out = format!("{first}\n");
    for class in [Class::Defect, Class::Conformance] {
        out.push_str(&format!("\n{} checks:\n", class.as_str()));
        for o in ORACLES.iter().filter(|o| o.class == class) {
            out.push_str(&format!("  {:<27} {}\n", o.code, o.title));
        }
    }
    out.push_str("\nExactly when each fires: the README's table of checks.");
    out
}

/// The class of a code; conformance for a code this version does not know.
pub fn class_of(code: &str) -> Class {
    oracle(code).map_or(Class::Conformance, |o| o.class)
}

/// The severity of a code; low for a code this version does not know.
pub fn severity_of(code: &str) -> Severity {
    oracle(code).map_or(Severity::Low, |o| o.severity)
}

/// The order faults and causes are listed and replayed in: defects first,
/// then by severity, then in the table's order.
pub fn rank(code: &str) -> (Class, Severity, usize) {
    let at = ORACLES
        .iter()
        .position(|o| o.code == code)
        .unwrap_or(ORACLES.len());
    (class_of(code), severity_of(code), at)
}

/// The README's table of checks, as the registry writes it.
pub fn markdown_table() -> String {
    let mut out =
        String::from("| code | class | severity | judges | fires when |\n|---|---|---|---|---|\n");
    for o in ORACLES {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            o.code,
            o.class.as_str(),
            o.severity.as_str(),
            o.protocols(),
            o.fires_when
        ));
    }
    out
}

// The guards.

fn always(_: &Answer<'_>) -> bool {
    true
}

/// An answer the request itself does not explain ([`super::explained`]:
/// a status an echo endpoint was asked for, a refusal of the request's own
/// oversized or route-changing value).
fn unexplained(a: &Answer<'_>) -> bool {
    a.explained().is_none()
}

/// An answer of a known operation that is not a server error and not a 429
/// (an answer to our rate, not to the request), and that the request does
/// not explain: the description's promises apply to it.
fn conformance_applies(a: &Answer<'_>) -> bool {
    a.op.is_some() && !super::is_server_error(a.status) && a.status != 429 && unexplained(a)
}

/// As [`conformance_applies`], the status is documented, and it is no
/// redirect (whose body is for people, and not the answer the operation
/// documents content for).
/// A whole, non-blank body whose own media type says JSON, of a status
/// that is not a server error nor 429.
fn declared_json_applies(a: &Answer<'_>) -> bool {
    !super::is_server_error(a.status)
        && a.status != 429
        && !a.ex.truncated
        && !a.ex.body.trim().is_empty()
        && a.ex
            .header("content-type")
            .is_some_and(|c| super::conformance::is_json(&super::conformance::essence(c)))
}

/// As [`conformance_applies`], and the status is documented.
fn documented_applies(a: &Answer<'_>) -> bool {
    conformance_applies(a) && !(300..400).contains(&a.status) && a.documented().is_some()
}

/// As [`documented_applies`], and the body is of a documented media type.
fn body_applies(a: &Answer<'_>) -> bool {
    documented_applies(a) && a.media().is_none()
}

// The checks.

fn server_error(a: &Answer<'_>) -> Option<Finding> {
    super::is_server_error(a.status).then(|| {
        Finding::new(
            "server_error",
            a.operation(),
            format!("the server answered {}", a.status),
            String::new(),
        )
    })
}

fn timeout(ex: &Exchange) -> Option<Finding> {
    let failure = ex.failure.as_ref()?;
    // Its time may have been another request's: blamed only on its own.
    if failure.kind != FailureKind::Timeout || ex.behind_another {
        return None;
    }
    // The limit that ran out, as given: the time measured is always a
    // little longer.
    let limit = failure.limit.unwrap_or(ex.elapsed);
    let seconds = limit.as_secs_f64().ceil().max(1.0) as u64;
    Some(Finding {
        check: Some(FaultCheck::Timeout { seconds }),
        ..Finding::new(
            "timeout",
            &ex.request.operation,
            format!("no answer within {} (--timeout)", duration_text(limit)),
            String::new(),
        )
    })
}

/// `10 s`, `1.5 s`, `700 ms`: a duration as given, to the millisecond.
pub fn duration_text(d: std::time::Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        let text = format!("{:.3}", d.as_secs_f64());
        format!("{} s", text.trim_end_matches('0'))
    }
}

fn no_answer(ex: &Exchange) -> Option<Finding> {
    let failure = ex.failure.as_ref()?;
    (failure.kind == FailureKind::NoAnswer).then(|| Finding {
        check: Some(FaultCheck::NoAnswer),
        ..Finding::new(
            "no_answer",
            &ex.request.operation,
            format!(
                "the server closed the connection without answering ({})",
                failure.message
            ),
            String::new(),
        )
    })
}

fn invalid_http(ex: &Exchange) -> Option<Finding> {
    let failure = ex.failure.as_ref()?;
    (failure.kind == FailureKind::InvalidHttp).then(|| Finding {
        check: Some(FaultCheck::InvalidHttp),
        ..Finding::new(
            "invalid_http",
            &ex.request.operation,
            format!("the answer is not valid HTTP: {}", failure.message),
            String::new(),
        )
    })
}

fn invalid_json(a: &Answer<'_>) -> Option<Finding> {
    if a.ex.json().is_some() || super::conformance::parses_as_json(&a.ex.body) {
        return None;
    }
    let media = super::conformance::essence(a.ex.header("content-type").unwrap_or(""));
    let start: String = a.ex.body.trim_start().chars().take(40).collect();
    Some(Finding {
        check: Some(FaultCheck::NotJson { status: a.status }),
        ..Finding::new(
            "invalid_json",
            a.operation(),
            format!(
                "status {} says {media} but its body is not JSON (it begins {start:?})",
                a.status
            ),
            String::new(),
        )
    })
}

/// The leak of kind `K` (stack trace, SQL, debug page) a body shows.
fn leak<const K: usize>(a: &Answer<'_>) -> Option<Finding> {
    let (code, what, marker) = a.leak()?;
    if code != leaks::CODES[K] {
        return None;
    }
    let status = a.status;
    Some(Finding {
        check: Some(FaultCheck::BodyContains {
            status,
            text: marker.trim().to_string(),
        }),
        ..Finding::new(
            code,
            a.operation(),
            format!("status {status} holds {what} ({:?})", marker.trim()),
            marker.trim().to_string(),
        )
    })
}

fn ignored_auth(a: &Answer<'_>) -> Option<Finding> {
    acceptance::check(a.op?, a.ex).filter(|f| f.code == "ignored_auth")
}

fn invalid_input_accepted(a: &Answer<'_>) -> Option<Finding> {
    acceptance::check(a.op?, a.ex).filter(|f| f.code == "invalid_input_accepted")
}

fn undocumented_status(a: &Answer<'_>) -> Option<Finding> {
    let op = a.op?;
    if a.documented().is_some() || acceptance::rightly_refused(op, a.ex) {
        return None;
    }
    let listed: Vec<&str> = op.responses.keys().map(String::as_str).collect();
    Some(Finding::new(
        "undocumented_status",
        &op.name,
        format!(
            "status {} is not documented (documented: {})",
            a.status,
            listed.join(", ")
        ),
        String::new(),
    ))
}

fn html_instead_of_json(a: &Answer<'_>) -> Option<Finding> {
    let (code, message, _) = a.media()?;
    (*code == "html_instead_of_json")
        .then(|| Finding::new(code, a.operation(), message.clone(), String::new()))
}

fn content_type_mismatch(a: &Answer<'_>) -> Option<Finding> {
    let (code, message, media) = a.media()?;
    (*code == "content_type_mismatch").then(|| Finding {
        check: Some(FaultCheck::ContentType {
            status: a.status,
            media: media.clone(),
        }),
        ..Finding::new(code, a.operation(), message.clone(), media.clone())
    })
}

/// Whether a request's query names a field projection: `fields`,
/// `_fields`, `$select`, `select` or `only`, with a value.
fn asks_for_some_fields(path: &str) -> bool {
    let Some((_, query)) = path.split_once('?') else {
        return false;
    };
    url::form_urlencoded::parse(query.as_bytes()).any(|(k, v)| {
        let k = k.trim_start_matches(['_', '$']).to_ascii_lowercase();
        matches!(k.as_str(), "fields" | "select" | "only") && !v.is_empty()
    })
}

fn schema_violation(a: &Answer<'_>) -> Option<Finding> {
    let index = a.op_index?;
    let body = a.ex.json()?;
    let status = a.status;
    let ct = a.ex.header("content-type");
    // A request that asks for some fields only (`?fields=a,b`, Kinto's
    // `_fields`, OData's `$select`) gets an answer without the others.
    let projected = asks_for_some_fields(&a.ex.request.path);
    let v = a
        .schemas()
        .check(a.api, index, status, ct, body)
        .into_iter()
        .find(|v| !(projected && v.keyword == "required"))?;
    // Checked where the signature places it (`/*/price`: some item, as the
    // oracle judged the whole body), for what the schema says there.
    let at = v.location.clone();
    let check = match (v.keyword.as_str(), body.pointer(&v.pointer)) {
        // A `required` violation's pointer already names the missing member.
        ("required", _) => FaultCheck::JsonMissing {
            status,
            pointer: at,
        },
        ("type", Some(value)) => FaultCheck::JsonType {
            status,
            pointer: at,
            json_type: super::pointer::kind(value).to_string(),
            allowed: v.expected.clone(),
        },
        (_, Some(value)) => FaultCheck::JsonValue {
            status,
            pointer: at,
            value: value.clone(),
        },
        (_, None) => FaultCheck::Status { status },
    };
    let place = v.schema.as_ref().map(|schema| match v.keyword.as_str() {
        // The member the list names, as written in the description.
        "required" => {
            let name = v.pointer.rsplit('/').next().unwrap_or("");
            let name = name.replace("~1", "/").replace("~0", "~");
            format!("{schema}: required {name:?}")
        }
        keyword => format!("{schema}: {keyword}"),
    });
    Some(Finding {
        check: Some(check),
        place,
        ..Finding::new(
            "schema_violation",
            a.operation(),
            v.message.clone(),
            format!("{} {}", v.location, v.keyword),
        )
    })
}

fn use_after_delete(a: &Answer<'_>) -> Option<Finding> {
    a.with_sequence(stateful::use_after_delete)
}

fn created_not_readable(a: &Answer<'_>) -> Option<Finding> {
    a.with_sequence(stateful::created_not_readable)
}

fn dangling_location(a: &Answer<'_>) -> Option<Finding> {
    a.with_sequence(stateful::dangling_location)
}

fn non_idempotent(a: &Answer<'_>) -> Option<Finding> {
    a.with_sequence(stateful::non_idempotent)
}

#[cfg(test)]
mod tests;
