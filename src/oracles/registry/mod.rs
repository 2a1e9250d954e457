//! Every oracle, one row each: its [`Code`] variant and name, what its
//! faults say about the server (class and severity), one line for titles,
//! exactly when it fires, the protocols it judges, and how it judges (a
//! guard and a check, a family of leak markers, a kind of GraphQL finding).
//! A check returns what it saw ([`Found`](crate::oracles::Found)); the
//! checker stamps the row's code on it, so no check names a code.
//!
//! Everything else is derived from these rows or tested against them: the
//! codes `--skip-check` and `--fail-on` accept (their help and shell
//! completion), the SARIF rules, and the guide's page of checks
//! (`docs/src/reference/checks.md`) and the fault codes of
//! `models/report.schema.json`, which `UPDATE_GOLDEN=1 cargo test --lib
//! registry::` rewrites. Adding an oracle is adding a row here, its check
//! (in `registry/checks.rs`, beside the others of its kind) and a fixture
//! under `fixtures/oracles/` that makes it fire (`oracles::registry::tests`).

mod checks;
mod graphql;
mod row;

pub use checks::{duration_text, leak};
pub use row::{Class, Concern, GraphqlJudge, Group, Judge, Oracle, Severity};

use crate::oracles::graphql::Kind;
use crate::oracles::leaks::Family;
use checks::*;
use graphql::*;

/// Declares the oracles once: each row's variant of [`Code`] (named for
/// its code, documented by its title) and its [`Oracle`], in one table
/// whose order is both the enum's and [`ORACLES`]'s, so a code indexes its
/// row and no check writes its own code.
macro_rules! oracles {
    ($(
        $variant:ident {
            code: $code:literal,
            title: $title:literal,
            $($field:ident: $value:expr),* $(,)?
        }
    ),* $(,)?) => {
        /// An oracle's code: one per row of [`ORACLES`], in its order.
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash,
            serde::Serialize, serde::Deserialize,
        )]
        pub enum Code {
            $(
                #[doc = $title]
                #[serde(rename = $code)]
                $variant,
            )*
        }

        impl Code {
            /// Every code, in the table's order.
            pub const ALL: &'static [Code] = &[$(Code::$variant),*];

            /// Its stable name, in reports and flags (`server_error`).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $code,)*
                }
            }
        }

        /// Every oracle, defects first.
        pub const ORACLES: &[Oracle] = &[
            $(Oracle { code: Code::$variant, title: $title, $($field: $value),* },)*
        ];
    };
}

oracles! {
    ServerError {
        code: "server_error",
        title: "The server answered 500-599",
        class: Class::Defect,
        severity: Severity::High,
        concern: Concern::Reliability,
        fires_when: "the status is 500–599 but 501 (an unknown status such as 800, and 501 Not Implemented, the server declining what a documented operation offers, are `undocumented_status` when undocumented), unless the request asked for it (a status or code parameter of that value, as echo endpoints take: `/status/563`, `?code=503`); for GraphQL, once per root field of the operation",
        group: Group::CodePath,
        aliases: &["graphql_server_error"],
        rest: Judge::Answer {
            guard: unexplained,
            check: server_error,
        },
        graphql: GraphqlJudge::Walk(Kind::ServerError, gq_server_error),
        wfc: Some(100),
    },
    NoAnswer {
        code: "no_answer",
        title: "The server closed the connection without answering",
        class: Class::Defect,
        severity: Severity::High,
        concern: Concern::Reliability,
        fires_when: "the connection was made and the request sent, then the server closed or reset it before any answer (a crash on that request, most often); not when no connection could be made at all (the run then stops, unreachable)",
        group: Group::CodePath,
        aliases: &[],
        rest: Judge::NoAnswer(no_answer),
        graphql: GraphqlJudge::Same,
        wfc: None,
    },
    InvalidHttp {
        code: "invalid_http",
        title: "The answer is not valid HTTP",
        class: Class::Defect,
        severity: Severity::High,
        concern: Concern::Reliability,
        fires_when: "what came back is not valid HTTP: a status line or header the HTTP stack cannot parse (a status that is not three digits, a negative or non-numeric `Content-Length`…), or an answer cut off by a reset or close in the middle of its body; the message quotes its first bytes, escaped (read by sending the request once more over a plain socket, for the first such answer of each operation, over plain HTTP)",
        group: Group::Operation,
        aliases: &[],
        rest: Judge::NoAnswer(invalid_http),
        graphql: GraphqlJudge::Same,
        wfc: None,
    },
    Timeout {
        code: "timeout",
        title: "No answer within the timeout",
        class: Class::Defect,
        severity: Severity::Medium,
        concern: Concern::Reliability,
        fires_when: "no answer came within `--timeout` to a request that was not waiting behind another (sent while another was in flight, or while one that had timed out could still hold the server, and overtaken by no later request), and that did not ask for a delay (`/delay/5`, `?sleep=3`); a request the end of the budget cut short is `interrupted`, no fault",
        group: Group::Operation,
        aliases: &[],
        rest: Judge::NoAnswer(timeout),
        graphql: GraphqlJudge::Same,
        wfc: Some(312),
    },
    GraphqlInternalError {
        code: "graphql_internal_error",
        title: "A GraphQL error shows an internal failure",
        class: Class::Defect,
        severity: Severity::High,
        concern: Concern::Reliability,
        fires_when: "an `errors` entry shows an unexpected failure: `extensions.code` (or graphql-java's `classification`) `INTERNAL_SERVER_ERROR`, `INTERNAL_ERROR` or `INTERNAL`, or a message such as `internal server error`, `unexpected error`, `NullPointerException`, `Cannot read properties of undefined`, a Rust `unwrap()` panic, `attempt to divide by zero` or `nil pointer dereference`, or a stack trace in the message; ordinary domain errors (`not found`, `invalid id \"abc\"`, `BAD_USER_INPUT`) never fire, nor does a message refusing the request's input (`Variable \"$x\" of non-null type \"String!\" must not be null`, `got invalid value`, `Unknown argument`) whatever code is stamped on it",
        group: Group::Message,
        aliases: &[],
        rest: Judge::None,
        graphql: GraphqlJudge::Walk(Kind::InternalError, gq_internal_error),
        wfc: None,
    },
    IgnoredAuth {
        code: "ignored_auth",
        title: "A request without valid credentials was let in",
        class: Class::Defect,
        severity: Severity::High,
        concern: Concern::Security,
        fires_when: "a negative test's request with no credentials, or malformed ones (another scheme word, an empty token, garbage), to an operation whose `security` requires credentials (no anonymous `{}` alternative) answers 2xx",
        group: Group::Input,
        aliases: &[],
        rest: Judge::Answer {
            guard: conformance_applies,
            check: ignored_auth,
        },
        graphql: GraphqlJudge::None,
        wfc: Some(307),
    },
    OtherIdentityWrite {
        code: "other_identity_write",
        title: "Another identity modified or deleted a resource it does not own",
        class: Class::Defect,
        severity: Severity::High,
        concern: Concern::Security,
        fires_when: "with a second identity (`--identity`, `--auth-file`), a PUT, PATCH or DELETE sent as one identity, on a resource another identity created earlier in the test (the id a 2xx POST or PUT of the owner gave, or the name its body chose, is a segment of the path), is answered 2xx; the message says so when the same identity was refused (401, 403) another method on it, and when the collection's listing showed it the resource (a workspace its users share, where this may be by design). An identity allowed to change what others own (an admin) is not a second identity to give",
        group: Group::Operation,
        aliases: &[],
        rest: Judge::Sequence(other_identity_write),
        graphql: GraphqlJudge::None,
        wfc: Some(306),
    },
    AnonymousModification {
        code: "anonymous_modification",
        title: "A modification without credentials was let in",
        class: Class::Defect,
        severity: Severity::High,
        concern: Concern::Security,
        fires_when: "with a second identity, a PUT, PATCH or DELETE sent with no credentials at all, on a resource the run created, to an operation whose `security` requires credentials (no anonymous `{}` alternative), is answered 2xx (`ignored_auth` judges the negative tests' requests)",
        group: Group::Operation,
        aliases: &[],
        rest: Judge::Answer {
            guard: conformance_applies,
            check: anonymous_modification,
        },
        graphql: GraphqlJudge::None,
        wfc: Some(308),
    },
    OtherIdentityRead {
        code: "other_identity_read",
        title: "An identity refused a change of a resource can read it",
        class: Class::Defect,
        severity: Severity::Low,
        concern: Concern::Security,
        fires_when: "with a second identity, a GET sent as one identity, on a resource another identity created earlier in the test, answers 2xx with a body (not empty, `{}`, `[]` or `null`) after that identity was refused (401, 403) a PUT, PATCH or DELETE of the same path, and the collection's listing did not show it the resource earlier in the test: the server guards the resource against it but lets it read it (a resource meant to be public: skip the check)",
        group: Group::Operation,
        aliases: &[],
        rest: Judge::Sequence(other_identity_read),
        graphql: GraphqlJudge::None,
        wfc: None,
    },
    ExistenceLeak {
        code: "existence_leak",
        title: "A refusal tells which resources exist",
        class: Class::Defect,
        severity: Severity::Medium,
        concern: Concern::Security,
        fires_when: "with a second identity, the same operation answers that identity 403 for a resource another identity created earlier in the test and 404 for one no one created: the status tells a caller without access which ids exist (404 for both, or 403 for both, is right)",
        group: Group::Operation,
        aliases: &[],
        rest: Judge::Sequence(existence_leak),
        graphql: GraphqlJudge::None,
        wfc: Some(304),
    },
    ValidCredentialsTold401 {
        code: "valid_credentials_told_401",
        title: "Valid credentials were answered 401",
        class: Class::Defect,
        severity: Severity::Low,
        concern: Concern::Security,
        fires_when: "with a second identity, a request sent as an identity other than the run's own whose credentials another operation accepted (2xx) earlier in the test is answered 401 (not authenticated) where 403 (not allowed) is due",
        group: Group::Operation,
        aliases: &[],
        rest: Judge::Sequence(valid_credentials_told_401),
        graphql: GraphqlJudge::None,
        wfc: Some(305),
    },
    StackTraceLeak {
        code: "stack_trace_leak",
        title: "The body leaks a stack trace",
        class: Class::Defect,
        severity: Severity::Medium,
        concern: Concern::Security,
        fires_when: "a body (any status) holds a stack trace marker of a common runtime: Rust (`stack backtrace:`, `panicked at`), Python, Java, .NET, Go, PHP, Node.js; for GraphQL, an `errors` entry's message or `extensions` holding one (or a non-empty `extensions` `stacktrace`), or a body that is not a GraphQL response holding one",
        group: Group::Detail,
        aliases: &["graphql_stack_leak"],
        rest: Judge::Leak(Family::StackTrace),
        graphql: GraphqlJudge::Walk(Kind::Leak(Family::StackTrace), gq_leak),
        wfc: Some(309),
    },
    SqlLeak {
        code: "sql_leak",
        title: "The body leaks an SQL error",
        class: Class::Defect,
        severity: Severity::Medium,
        concern: Concern::Security,
        fires_when: "a body holds the error text of a common SQL database or driver (MySQL, PostgreSQL, SQLite, SQL Server, Oracle, JDBC, Hibernate); for GraphQL, an `errors` entry's message or `extensions` holding one",
        group: Group::Detail,
        aliases: &["graphql_stack_leak"],
        rest: Judge::Leak(Family::Sql),
        graphql: GraphqlJudge::Walk(Kind::Leak(Family::Sql), gq_leak),
        wfc: None,
    },
    DebugPageLeak {
        code: "debug_page_leak",
        title: "The body is a framework's debug or default error page",
        class: Class::Defect,
        severity: Severity::Medium,
        concern: Concern::Security,
        fires_when: "a body is a framework debug or default error page (Werkzeug, Django, Rails, Spring's Whitelabel, ASP.NET, Laravel, Symfony); for GraphQL, an `errors` entry's message or `extensions` holding one",
        group: Group::Detail,
        aliases: &["graphql_stack_leak"],
        rest: Judge::Leak(Family::DebugPage),
        graphql: GraphqlJudge::Walk(Kind::Leak(Family::DebugPage), gq_leak),
        wfc: None,
    },
    SqlInjection {
        code: "sql_injection",
        title: "An input reaches an SQL query unescaped",
        class: Class::Defect,
        severity: Severity::High,
        concern: Concern::Security,
        fires_when: "a security probe after the search (REST; at most three string inputs without enum, format or pattern of each operation that answered 2xx: path and query parameters and top-level JSON body fields; with `--read-only` only those of reads) sends the request that answered 2xx four times with the input changed: a plain word (`cartograph`), the word and a quote (`cartograph'`), the word and a tautology (`cartograph' OR '1'='1`), the tautology's words without quotes (`cartograph OR 1 1`); it fires when the quote's answer holds a database's error text (what `sql_leak` reads, or a shorter text of SQLite, PostgreSQL or MySQL such as `unrecognized token:`) and the plain word's does not, or when the plain word and the tautology both answer 2xx and the tautology's JSON lists more items (a top-level array, or an object's first array member) than the plain word's and than the quoteless words' (a search that matches words is no injection)",
        group: Group::Operation,
        aliases: &[],
        rest: Judge::Probe,
        graphql: GraphqlJudge::None,
        wfc: Some(300),
    },
    StoredXss {
        code: "stored_xss",
        title: "A script stored through one operation comes back unescaped in HTML",
        class: Class::Defect,
        severity: Severity::High,
        concern: Concern::Security,
        fires_when: "a security probe after the search (REST; not with `--read-only`) sends again a write that answered 2xx to a JSON body (POST, PUT, PATCH) with a marked `<script>` element in each top-level string field without enum, format or pattern, then sends again the GET requests that answered `text/html` in the search, and the GET of the resource written (its path, or the collection's path and the id the answer gives) when the description has one; it fires when a `text/html` answer holds the marked element exactly as sent, not escaped",
        group: Group::Operation,
        aliases: &[],
        rest: Judge::Probe,
        graphql: GraphqlJudge::None,
        wfc: Some(301),
    },
    Ssrf {
        code: "ssrf",
        title: "The server fetched a URL a client gave it",
        class: Class::Defect,
        severity: Severity::High,
        concern: Concern::Security,
        fires_when: "a security probe after the search (REST, against a target on the loopback interface only; with `--read-only` only reads) sends again a request that answered 2xx with each input that takes a URL (`format: uri` or `url`, or a string named `url`, `uri`, `callback`, `webhook`, `href`, `endpoint`, `…_url`, `…Url`; query parameters and top-level JSON body fields) set to the address of a listener Cartograph runs on 127.0.0.1 with a token for that input in its path, and a request bearing the token arrives at the listener within a second of the probes' end",
        group: Group::Operation,
        aliases: &[],
        rest: Judge::Probe,
        graphql: GraphqlJudge::None,
        wfc: Some(302),
    },
    MassAssignment {
        code: "mass_assignment",
        title: "A read-only property was set by a client",
        class: Class::Defect,
        severity: Severity::High,
        concern: Concern::Security,
        fires_when: "a security probe after the search (REST; not with `--read-only`) sends again a write that answered 2xx to a JSON body (POST, PUT, PATCH) with every top-level property its request schema marks `readOnly` set to a marked value (integers from 7340033, strings `cartograph-readonly-N`; booleans and other formats are not probed), then reads the resource (GET of the written path, or of the collection's path and the id the write's answer gives, when the description has that GET), and the read answers 2xx with a marked value at that property (at the top, or in an envelope's object)",
        group: Group::Operation,
        aliases: &[],
        rest: Judge::Probe,
        graphql: GraphqlJudge::None,
        wfc: Some(303),
    },
    HiddenEndpoint {
        code: "hidden_endpoint",
        title: "A method the description does not list answered 2xx",
        class: Class::Defect,
        severity: Severity::Medium,
        concern: Concern::Security,
        fires_when: "a security probe after the search (REST) sends, to the path of a request that answered 2xx, each of GET, POST, PUT, PATCH and DELETE that the description does not list for that path template (POST, PUT and PATCH with the body `{}`; HEAD and OPTIONS are never sent, frameworks answer them for every route; with `--read-only` only GET), DELETE last, and one answers 2xx (405, 404 and every other refusal are right) unlike the listed method's answer on that path (the listed GET sent again just before, else the search's answer of a listed method; not the same status with the same body, or JSON object with the same members: a route that ignores the method answers every method alike), while the same method on a path no API has (`/cartograph-no-such-path-7f3a`, asked once per method) does not answer 2xx (a catch-all route answers 2xx to anything); reported under the operation `METHOD /template`",
        group: Group::Operation,
        aliases: &[],
        rest: Judge::Probe,
        graphql: GraphqlJudge::None,
        wfc: Some(310),
    },
    UseAfterDelete {
        code: "use_after_delete",
        title: "A deleted resource is still readable",
        class: Class::Defect,
        severity: Severity::Medium,
        concern: Concern::Reliability,
        fires_when: "a GET answers 2xx with a body that shows something (not empty, `{}`, `[]` or `null`) for a path that a DELETE answered 2xx for earlier in the same test, with no successful PUT or POST to it in between, when that path names one resource: its template ends in a parameter that identifies something (`/books/{bookId}`, `/users/{username}`, `/pets/{pet}`, a uuid), not a collection (`DELETE /things` then `GET /things` may rightly answer `[]`) nor an argument (`/anything/{anything}`, `/calc/{n}`), and holds a value of its kind (not an object's `id` that an earlier answer gave, where a `{slug}` or `{name}` goes)",
        group: Group::Operation,
        aliases: &[],
        rest: Judge::Sequence(use_after_delete),
        graphql: GraphqlJudge::None,
        wfc: Some(113),
    },
    CreatedNotReadable {
        code: "created_not_readable",
        title: "A created resource cannot be read",
        class: Class::Defect,
        severity: Severity::Medium,
        concern: Concern::Reliability,
        fires_when: "a GET of `collection/{id}` answers 404 or 410 right after a POST to the collection answered 2xx with that id (in `Location` or the body's `id`), when the id is of the path parameter's kind (not put where a `{slug}` or `{name}` goes)",
        group: Group::Operation,
        aliases: &[],
        rest: Judge::Sequence(created_not_readable),
        graphql: GraphqlJudge::None,
        wfc: Some(122),
    },
    DanglingLocation {
        code: "dangling_location",
        title: "The Location header leads nowhere",
        class: Class::Defect,
        severity: Severity::Medium,
        concern: Concern::Reliability,
        fires_when: "a GET of the `Location` a 2xx answer gave (same origin, under the target) answers 404 or 410",
        group: Group::Operation,
        aliases: &[],
        rest: Judge::Sequence(dangling_location),
        graphql: GraphqlJudge::None,
        wfc: Some(120),
    },
    NonIdempotent {
        code: "non_idempotent",
        title: "A repeated PUT or DELETE fails",
        class: Class::Defect,
        severity: Severity::Medium,
        concern: Concern::Reliability,
        fires_when: "a PUT repeated identically right after a 2xx answers a 4xx other than 401, 403 (who may change the resource changed with it) and 412 (its `If-Match` went stale); a DELETE repeated identically right after a 2xx answers a 4xx other than 404 and 410 (5xx are `server_error`)",
        group: Group::Operation,
        aliases: &[],
        rest: Judge::Sequence(non_idempotent),
        graphql: GraphqlJudge::None,
        wfc: None,
    },
    MissingAllow {
        code: "missing_allow",
        title: "A 405 answer does not say which methods are allowed",
        class: Class::Defect,
        severity: Severity::Low,
        concern: Concern::Correctness,
        fires_when: "an answer is 405 Method Not Allowed and has no `Allow` header, which HTTP requires of every 405 (RFC 9110, 15.5.6): a client cannot tell which methods the resource takes",
        group: Group::Operation,
        aliases: &[],
        rest: Judge::Answer {
            guard: method_refused,
            check: missing_allow,
        },
        graphql: GraphqlJudge::None,
        wfc: Some(110),
    },
    SchemaViolation {
        code: "schema_violation",
        title: "The body breaks the documented schema",
        class: Class::Conformance,
        severity: Severity::Medium,
        concern: Concern::Correctness,
        fires_when: "a JSON body of a status outside 300–399 and 500–599 does not match the schema documented for that status and media type. The schema is converted to JSON Schema 2020-12 and checked with the `jsonschema` crate: `nullable` (and `x-nullable`) allow null, write-only properties are never required in answers, `oneOf` is read as `anyOf` (members overlap in real descriptions), `format` is never asserted, extra properties are never a violation, missing required ones are not when the request asked for some fields only (`fields`, `_fields`, `select`, `$select`, `only` in its query), `minItems` above 16 is dropped (bodies are read with arrays cut at 16 items), and a value the run itself planted is not a violation: a body member the description forbids that the server accepted (2xx, `invalid_input_accepted`) and now serves back, the same value (or the same member left out) at the same place, in that answer or any later one",
        group: Group::Detail,
        aliases: &[],
        rest: Judge::Answer {
            guard: body_applies,
            check: schema_violation,
        },
        graphql: GraphqlJudge::None,
        wfc: Some(200),
    },
    InvalidInputAccepted {
        code: "invalid_input_accepted",
        title: "An input the description forbids was accepted",
        class: Class::Conformance,
        severity: Severity::Medium,
        concern: Concern::Correctness,
        fires_when: "a negative test's request whose one wrong input breaks a documented constraint answers 2xx: a value of another type, `null` where not nullable, a required parameter or field left out, a value outside the enum, a bound or length overstepped, or malformed JSON for a required body. A near miss of a `pattern`, a malformed `format`, a broken multipart body and unusual but valid values are never judged (regex dialects differ, formats are annotations, multipart parsers skip parts they cannot read)",
        group: Group::Input,
        aliases: &[],
        rest: Judge::Answer {
            guard: conformance_applies,
            check: invalid_input_accepted,
        },
        graphql: GraphqlJudge::None,
        wfc: Some(206),
    },
    InvalidJson {
        code: "invalid_json",
        title: "A body declared JSON is not JSON",
        class: Class::Conformance,
        severity: Severity::Medium,
        concern: Concern::Correctness,
        fires_when: "the answer's own `Content-Type` says JSON (`application/json`, or any `+json` type such as `application/problem+json`) and its body, read whole (not cut by `--max-body` or the timeout) and not empty or blank, does not parse as JSON (a byte order mark is allowed); a status outside 500–599 and not 429; whatever the description documents",
        group: Group::AnswerShape,
        aliases: &[],
        rest: Judge::Answer {
            guard: declared_json_applies,
            check: invalid_json,
        },
        graphql: GraphqlJudge::None,
        wfc: None,
    },
    HtmlInsteadOfJson {
        code: "html_instead_of_json",
        title: "An HTML page came where JSON is documented",
        class: Class::Conformance,
        severity: Severity::Medium,
        concern: Concern::Correctness,
        fires_when: "JSON is documented for the status (not a redirect), HTML is not (`text/html` or `text/*`), and an HTML page came (`text/html`, or no `Content-Type` and a body starting `<!DOCTYPE html` or `<html`)",
        group: Group::AnswerShape,
        aliases: &[],
        rest: Judge::Answer {
            guard: documented_applies,
            check: html_instead_of_json,
        },
        graphql: GraphqlJudge::None,
        wfc: None,
    },
    ContentTypeMismatch {
        code: "content_type_mismatch",
        title: "The Content-Type is not a documented media type",
        class: Class::Conformance,
        severity: Severity::Low,
        concern: Concern::Correctness,
        fires_when: "a non-empty body of a status outside 300–399 and 500–599 has a `Content-Type` that none of the documented media types for that status covers (wildcards, and JSON flavours such as `problem+json` for `application/json`, cover); silent when the status documents no content, or when there is no `Content-Type`",
        group: Group::Detail,
        aliases: &[],
        rest: Judge::Answer {
            guard: documented_applies,
            check: content_type_mismatch,
        },
        graphql: GraphqlJudge::None,
        wfc: None,
    },
    UndocumentedStatus {
        code: "undocumented_status",
        title: "The status is not documented for the operation",
        class: Class::Conformance,
        severity: Severity::Low,
        concern: Concern::Correctness,
        fires_when: "the status is not 500–599 (501 counts as not), is not 429 (an answer to our rate, not to the request), is not documented for the operation (exactly, by a `4XX` range, or by `default`), and is not explained by the request itself: a 414, 431 or 413 to its own 2,000-character URI, 2,000 bytes of headers or 8 KiB body, a 404 or 405 after an encoded `/` or `\\` (or a `.` or `..`) in a path value, a status it asked an echo endpoint for, a 4xx to a negative test's deliberately wrong or unusual input when the operation documents no client error at all (the gap is the whole operation's)",
        group: Group::AnswerShape,
        aliases: &[],
        rest: Judge::Answer {
            guard: conformance_applies,
            check: undocumented_status,
        },
        graphql: GraphqlJudge::None,
        wfc: None,
    },
    GraphqlNullViolation {
        code: "graphql_null_violation",
        title: "A non-null field is null and no error explains it",
        class: Class::Conformance,
        severity: Severity::Medium,
        concern: Concern::Correctness,
        fires_when: "a selected field whose type is non-null is `null` in `data`, and no `errors` entry's `path` is at, above or below that location (null propagation); also an `errors` entry in which the server itself reports it (`Cannot return null for non-nullable field`, graphql-java's `was declared as a non null type`); also `data: null` with no `errors` at all, for each non-null root field selected",
        group: Group::Detail,
        aliases: &[],
        rest: Judge::None,
        graphql: GraphqlJudge::Walk(Kind::NullViolation, gq_null_violation),
        wfc: None,
    },
    GraphqlMissingField {
        code: "graphql_missing_field",
        title: "A selected field is missing from the data",
        class: Class::Conformance,
        severity: Severity::Medium,
        concern: Concern::Correctness,
        fires_when: "a selected field (included for certain: not skipped, its `@skip`/`@include` condition known) is absent from a non-null object in `data`, and no `errors` entry's `path` is at, above or below it; also a 2xx JSON object body with neither `data` nor `errors`, for each root field",
        group: Group::Detail,
        aliases: &[],
        rest: Judge::None,
        graphql: GraphqlJudge::Walk(Kind::MissingField, gq_missing_field),
        wfc: None,
    },
    GraphqlWrongType {
        code: "graphql_wrong_type",
        title: "A value has the wrong type",
        class: Class::Conformance,
        severity: Severity::Medium,
        concern: Concern::Correctness,
        fires_when: "a built-in scalar of the wrong JSON type (`Int` an integer within i32, `Float` a number, `String` a string, `Boolean` a bool, `ID` a string or an integer), or a composite type's value is not a JSON object (and not a list); custom scalars accept anything",
        group: Group::Detail,
        aliases: &[],
        rest: Judge::None,
        graphql: GraphqlJudge::Walk(Kind::WrongType, gq_value_seen),
        wfc: None,
    },
    GraphqlEnumViolation {
        code: "graphql_enum_violation",
        title: "A value is not one of its enum's values",
        class: Class::Conformance,
        severity: Severity::Medium,
        concern: Concern::Correctness,
        fires_when: "an enum's value is not one of its values (a non-string included)",
        group: Group::Detail,
        aliases: &[],
        rest: Judge::None,
        graphql: GraphqlJudge::Walk(Kind::EnumViolation, gq_value_seen),
        wfc: None,
    },
    GraphqlListMismatch {
        code: "graphql_list_mismatch",
        title: "A list and a single value are swapped",
        class: Class::Conformance,
        severity: Severity::Medium,
        concern: Concern::Correctness,
        fires_when: "a list type's value is not a JSON array, or a JSON array stands where an object, enum or built-in scalar was promised",
        group: Group::Detail,
        aliases: &[],
        rest: Judge::None,
        graphql: GraphqlJudge::Walk(Kind::ListMismatch, gq_value_seen),
        wfc: None,
    },
    GraphqlMalformedErrors {
        code: "graphql_malformed_errors",
        title: "`errors` is not a list of objects with a `message`",
        class: Class::Conformance,
        severity: Severity::Medium,
        concern: Concern::Correctness,
        fires_when: "`errors` is not a list, or an entry of it is not an object with a string `message` (a bare string, an object without one), as the GraphQL spec requires, once per root field; the text such an entry carries is judged as any other message (a stack trace in it is also `graphql_internal_error`)",
        group: Group::Detail,
        aliases: &[],
        rest: Judge::None,
        graphql: GraphqlJudge::Walk(Kind::MalformedErrors, gq_malformed_errors),
        wfc: None,
    },
    GraphqlTypenameViolation {
        code: "graphql_typename_violation",
        title: "__typename names the wrong type",
        class: Class::Conformance,
        severity: Severity::Low,
        concern: Concern::Correctness,
        fires_when: "`__typename` is not a string naming the object type itself, or, under an interface or union, one of its possible object types (a name not in the schema included)",
        group: Group::Detail,
        aliases: &[],
        rest: Judge::None,
        graphql: GraphqlJudge::Walk(Kind::TypenameViolation, gq_value_seen),
        wfc: None,
    },
    GraphqlValidationError {
        code: "graphql_validation_error",
        title: "The server rejected a query built from its own schema",
        class: Class::Conformance,
        severity: Severity::Low,
        concern: Concern::Tool,
        fires_when: "an `errors` entry rejects the request itself (a validation or parse failure, by `extensions.code` `GRAPHQL_VALIDATION_FAILED`, `GRAPHQL_PARSE_FAILED` or `OPERATION_RESOLUTION_FAILURE`, graphql-java's `ValidationError` or `InvalidSyntax`, or the validation wording of graphql-js, async-graphql, Apollo, gqlgen, graphql-java or Juniper): the query Cartograph built from the schema is not one the server accepts, most likely a Cartograph bug; it stands alone, masking the other codes of the entry, and a negative test's deliberately wrong value never fires it, nor does a refusal of a value Cartograph made up for a custom scalar (the message says the value is invalid and names the scalar, or the variable of that scalar)",
        group: Group::Message,
        aliases: &[],
        rest: Judge::None,
        graphql: GraphqlJudge::Walk(Kind::ValidationError, gq_validation_error),
        wfc: None,
    },
}

impl Code {
    /// Its row.
    pub fn oracle(self) -> &'static Oracle {
        &ORACLES[self as usize]
    }

    /// The code of a name, if it is one (earlier names are not: see
    /// [`resolve`]).
    pub fn from_name(name: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|c| c.as_str() == name)
    }

    /// Whether it is a leak's (its row judges a family of leak markers).
    pub fn is_leak(self) -> bool {
        matches!(self.oracle().rest, Judge::Leak(_))
    }
}

/// The code of the row that reports GraphQL findings of `kind`.
pub fn graphql_code(kind: Kind) -> Code {
    ORACLES
        .iter()
        .find(|o| matches!(o.graphql, GraphqlJudge::Walk(k, _) if k == kind))
        .map(|o| o.code)
        .expect("every kind of GraphQL finding has its registry row")
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `pad`, so that a width (`{:<27}`, the flags' help) applies.
        f.pad(self.as_str())
    }
}

/// Every oracle's code, in the table's order.
pub fn codes() -> impl Iterator<Item = &'static str> {
    Code::ALL.iter().map(|c| c.as_str())
}

/// The codes a name given to `--skip-check` or `--fail-on` stands for: the
/// code itself, or every code that lists it as an earlier name.
pub fn resolve(name: &str) -> Result<Vec<Code>, String> {
    if let Some(code) = Code::from_name(name) {
        return Ok(vec![code]);
    }
    let by_alias: Vec<Code> = ORACLES
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
    out.push_str(
        "\nExactly when each fires: the guide's page of checks (docs/src/reference/checks.md).",
    );
    out
}

/// The order faults and causes are listed and replayed in: defects first,
/// then by severity, then in the table's order.
pub fn rank(code: Code) -> (Class, Severity, Code) {
    let o = code.oracle();
    (o.class, o.severity, code)
}

/// The guide's list of checks, as the registry writes it: a table of
/// every code linking to a section per code that says exactly when it
/// fires (long rules read better as paragraphs than as table cells).
pub fn markdown_reference() -> String {
    let mut out = String::from(
        "| code | class | severity | judges | what a fault of it is |\n|---|---|---|---|---|\n",
    );
    for o in ORACLES {
        out.push_str(&format!(
            "| [`{code}`](#{code}) | {} | {} | {} | {} |\n",
            o.class.as_str(),
            o.severity.as_str(),
            o.protocols(),
            o.title,
            code = o.code,
        ));
    }
    for o in ORACLES {
        out.push_str(&format!(
            "\n### `{}`\n\n{} · {} · judges {}. Fires when {}.\n",
            o.code,
            o.class.as_str(),
            o.severity.as_str(),
            o.protocols(),
            o.fires_when.trim_end_matches('.')
        ));
        if !o.aliases.is_empty() {
            let aliases: Vec<String> = o.aliases.iter().map(|a| format!("`{a}`")).collect();
            out.push_str(&format!(
                "\nAlso accepted under its earlier name{}: {}.\n",
                if aliases.len() > 1 { "s" } else { "" },
                aliases.join(", ")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests;
