//! One row of the registry ([`Oracle`]) and the kinds its columns take:
//! what a fault says about the server ([`Class`], [`Severity`],
//! [`Concern`]), when two faults are one cause ([`Group`]), and how the
//! oracle judges ([`Judge`], [`GraphqlJudge`]).

use serde::Serialize;

use crate::execution::Exchange;
use crate::model::Operation;
use crate::oracles::graphql::{GraphqlFinding, Kind};
use crate::oracles::leaks::Family;
use crate::oracles::{Answer, FaultCheck, Found};

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
/// same reason ([`crate::faults::causes`] works the reason out).
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
    NoAnswer(fn(&Exchange, Option<&Operation>) -> Option<Found>),
    /// One answer on its own; `guard` says when the check applies.
    Answer {
        /// When the check applies at all.
        guard: fn(&Answer<'_>) -> bool,
        /// What it finds.
        check: fn(&Answer<'_>) -> Option<Found>,
    },
    /// A body holding a marker of the family's leaks (any answer).
    Leak(Family),
    /// One answer after the earlier answers of its test.
    Sequence(fn(&Answer<'_>) -> Option<Found>),
    /// Judged by the security probes after the search
    /// ([`crate::oracles::security`]), which send requests of their own and
    /// compare answers across them (a quote against a plain value, a write
    /// then a read, a request arriving at Cartograph's own listener).
    Probe,
    /// Not a REST oracle.
    None,
}

/// Which part of the GraphQL oracle reports an oracle's faults.
#[derive(Clone, Copy)]
pub enum GraphqlJudge {
    /// Not a GraphQL oracle.
    None,
    /// The walk of the answer against the query and the schema
    /// ([`crate::oracles::graphql::check`]) reports it as findings of the
    /// kind; the function says how a script tells that the fault showed in
    /// the answer, when it can.
    Walk(Kind, fn(&GraphqlFinding, &Exchange) -> Option<FaultCheck>),
    /// The same judge as REST (a request that got no answer).
    Same,
}

/// One oracle.
pub struct Oracle {
    /// Its code (`server_error`).
    pub code: super::Code,
    /// Defect or conformance.
    pub class: Class,
    /// How much its faults matter.
    pub severity: Severity,
    /// What is at stake.
    pub concern: Concern,
    /// One line, for titles: what a fault of it is.
    pub title: &'static str,
    /// Exactly when it fires, in Markdown (the guide's page of checks says
    /// the same).
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
    /// Web Fuzzing Commons fault code, where the catalogue has one.
    pub wfc: Option<u16>,
}

impl Oracle {
    /// Whether it judges REST APIs.
    pub fn judges_rest(&self) -> bool {
        !matches!(self.rest, Judge::None)
    }

    /// Whether it judges GraphQL APIs.
    pub fn judges_graphql(&self) -> bool {
        !matches!(self.graphql, GraphqlJudge::None)
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
