//! Sending requests: the HTTP transport, politeness (rate, concurrency, server
//! signals), credentials, and the run loop that executes tests within a budget.
//!
//! The engine knows nothing about how requests are chosen: a [`Driver`] hands it
//! tests, each a [`TestRun`] that produces its next request from the exchanges so
//! far, and receives every finished test back.

mod auth;
mod bounded;
pub mod breach;
pub mod canary;
mod decode;
mod engine;
pub mod fence;
pub mod identities;
pub mod interrupt;
pub mod out_dir;
mod plain;
mod politeness;
pub mod reset;
pub mod secrets;
pub mod tls;
mod trace;
mod transport;
pub mod wire;

use std::time::Duration;

use serde::Serialize;

pub use auth::{
    AUTH_COMMAND_LIMIT, Credentials, Userinfo, parse_header, parse_query_key, take_userinfo,
    without_userinfo,
};
pub use bounded::{JSON_DEPTH, JSON_ITEMS};
pub use breach::{Breach, BreachKind, EdgeClass};
pub use engine::{Driver, RunOutcome, StopReason, TestRun, plain_words, run, runtime};
pub use out_dir::{OutDir, OutDirError};
pub use politeness::{Politeness, Rate, parse_rate};
pub use tls::ClientError;
pub use trace::{TraceCounts, TraceWriter};
pub use transport::{Transport, fetch_client};
pub use wire::target_relative;

/// What to send: everything needed to build one HTTP request.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RequestSpec {
    /// The graph's name for the operation this request exercises.
    pub operation: String,
    /// HTTP method (`GET`, `POST`…).
    pub method: String,
    /// Path with parameters substituted and query string, relative to the target.
    pub path: String,
    /// Extra headers (not the credentials, which the transport adds).
    pub headers: Vec<(String, String)>,
    /// The body, already serialised.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// The body's media type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// Set for a GraphQL query: it reads, although it travels as a POST.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub graphql_query: bool,
    /// What it deliberately gets wrong, for a negative or boundary test.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub breach: Option<Breach>,
    /// Whose credentials it carries instead of the run's own: another
    /// identity's, by name, or none ([`identities::ANONYMOUS`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identity: Option<String>,
}

impl RequestSpec {
    /// Whether it may change server state, so read-only mode must refuse it:
    /// anything but GET, HEAD, OPTIONS and GraphQL queries.
    pub fn is_mutation(&self) -> bool {
        let reads = matches!(self.method.as_str(), "GET" | "HEAD" | "OPTIONS")
            || (self.method == "POST" && self.graphql_query);
        !reads
    }

    /// Whether it goes without the run's own credentials.
    pub fn without_credentials(&self) -> bool {
        self.breach
            .as_ref()
            .is_some_and(|b| b.kind.drops_credentials())
    }
}

/// What went wrong when no (valid) HTTP response came back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The request took longer than `--timeout`.
    Timeout,
    /// The connection could not be made (refused, a name that does not
    /// resolve, TLS): the server was not reached.
    Connection,
    /// The connection was made, then closed or reset before any answer.
    NoAnswer,
    /// What came back is not valid HTTP (a bad status line or header, a
    /// negative `Content-Length`), or the answer was cut off by a reset
    /// or a close in the middle of its body.
    InvalidHttp,
    /// Anything else the HTTP stack reported.
    Other,
    /// The end of the budget cut the request short: no verdict on the server.
    Interrupted,
}

impl FailureKind {
    /// Its name in reports (`timeout`, `connection`, `no_answer`,
    /// `invalid_http`, `other`, `interrupted`).
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Timeout => "timeout",
            FailureKind::Connection => "connection",
            FailureKind::NoAnswer => "no_answer",
            FailureKind::InvalidHttp => "invalid_http",
            FailureKind::Other => "other",
            FailureKind::Interrupted => "interrupted",
        }
    }

    /// Whether the server was reached and misbehaved (as opposed to not
    /// reached at all, or a limit of ours).
    pub fn is_broken_answer(self) -> bool {
        matches!(self, FailureKind::NoAnswer | FailureKind::InvalidHttp)
    }
}

/// Why a connection could not be made, for a message that fits the error
/// (read from the error's kind, never from its wording).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Cause {
    /// Not known, or not a connection failure.
    #[default]
    Unknown,
    /// Nothing listens there.
    Refused,
    /// The host name does not resolve.
    Dns,
    /// No route to the host or network.
    Unreachable,
    /// The TLS handshake failed (an untrusted or invalid certificate).
    Tls,
    /// The TLS handshake was answered in plain HTTP: an `https://` target
    /// on a port that speaks `http://`.
    PlainHttp,
}

/// One request and what came back.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Exchange {
    /// Sequence number in the run (0-based), as in `trace.ndjson`.
    pub seq: u64,
    /// What was sent.
    pub request: RequestSpec,
    /// The status code, when a response came back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Response headers (lower-case names).
    pub headers: Vec<(String, String)>,
    /// The response body as text (lossy UTF-8), at most the body cap.
    pub body: String,
    /// Whether the body was cut at the cap (or the timeout) before its end.
    pub truncated: bool,
    /// Why there is no response, when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// Time from sending to the end of the body.
    #[serde(serialize_with = "as_millis")]
    pub elapsed: Duration,
    /// Whether it may have waited behind another request: sent while
    /// another was in flight, or while one given up on at its timeout could
    /// still hold the server, and overtaken by no later request. Its
    /// `elapsed` is then not all its own.
    #[serde(skip)]
    pub behind_another: bool,
    /// The body parsed as JSON, once asked for.
    #[serde(skip)]
    pub parsed: std::sync::OnceLock<Option<serde_json::Value>>,
}

/// No response: its kind and message.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Failure {
    /// The kind.
    pub kind: FailureKind,
    /// The HTTP stack's message (for invalid HTTP, with the first bytes
    /// that came, escaped).
    pub message: String,
    /// Why a connection could not be made.
    #[serde(skip)]
    pub cause: Cause,
    /// The time limit that ran out, for a timeout.
    #[serde(skip)]
    pub limit: Option<Duration>,
}

impl Failure {
    /// A failure of `kind`, with the HTTP stack's `message`.
    pub fn new(kind: FailureKind, message: impl Into<String>) -> Failure {
        Failure {
            kind,
            message: message.into(),
            cause: Cause::Unknown,
            limit: None,
        }
    }
}

impl Exchange {
    /// A response header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body parsed as JSON, when it is JSON (parsed once, then kept),
    /// with every array cut at [`JSON_ITEMS`] items: generation and feedback
    /// read only the first few, and a list that grows through a run would
    /// otherwise cost more to parse with every request.
    pub fn json(&self) -> Option<&serde_json::Value> {
        self.parsed
            .get_or_init(|| {
                if self.truncated || self.body.is_empty() {
                    return None;
                }
                bounded::parse(&self.body)
            })
            .as_ref()
    }

    /// Whether the body is JSON nested deeper than the parser reads
    /// ([`JSON_DEPTH`] levels): an answer no check can look into.
    pub fn too_deep(&self) -> bool {
        !self.truncated && self.json().is_none() && bounded::too_deep(&self.body)
    }

    /// Whether the status is 2xx, and the answer came whole (not cut off by
    /// a reset in the middle of its body).
    pub fn is_success(&self) -> bool {
        self.status.is_some_and(|s| (200..300).contains(&s)) && self.failure.is_none()
    }
}

fn as_millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64((d.as_secs_f64() * 1000.0 * 1000.0).round() / 1000.0)
}

/// How a run talks to the server.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Base URL requests are sent to.
    pub target: url::Url,
    /// Wall-clock budget.
    pub budget: Option<Duration>,
    /// Most requests to send.
    pub max_requests: Option<u64>,
    /// Seed of every random choice.
    pub seed: u64,
    /// Global request rate, when limited.
    pub rate: Option<Rate>,
    /// Requests allowed at once above the rate.
    pub burst: u32,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Send only GET, HEAD, OPTIONS (and GraphQL queries).
    pub read_only: bool,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Largest response body read, in bytes.
    pub max_body: usize,
    /// How many times a request answered 429/503 is retried after waiting.
    pub max_retries: u32,
    /// Operations never to call (`--include`/`--exclude`).
    pub fence: std::sync::Arc<fence::Fence>,
    /// Limits of some operations only (`--rate-for`): each rate is shared by
    /// the operations named with it.
    pub per_operation: Vec<(Rate, Vec<String>)>,
    /// How servers' certificates are checked (`--cacert`, `--insecure`, `--cert`).
    pub tls: tls::Tls,
    /// Most bytes written to each exchange log (`trace.ndjson`,
    /// `replay.ndjson`, `security.ndjson`; `--trace-limit`), 0 for no limit.
    pub trace_limit: usize,
}

/// The default of `--trace-limit`: a minute against a fast server sends
/// well over 100,000 requests, and a log that size helps nobody.
pub const TRACE_LIMIT: usize = 32 * 1024 * 1024;

impl RunConfig {
    /// The politeness these settings ask for: created once per run and
    /// shared by its phases.
    pub fn politeness(&self) -> Politeness {
        let mut politeness = Politeness::new(self.rate, self.burst, self.concurrency);
        for (rate, operations) in &self.per_operation {
            politeness.limit_operations(*rate, operations.iter().cloned());
        }
        politeness
    }
}
