//! What `report.json` holds (its shape is `models/report.schema.json`):
//! the run's settings, per-operation counts, causes and faults, and what
//! the search and the graph covered; and how a part's report (the demo's
//! GraphQL part) joins another.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::faults::Fault;

/// Run settings as recorded (secret values never appear).
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    /// The target base URL.
    pub target: String,
    /// The API description the run read: its path (relative to the working
    /// directory when under it), the endpoint's URL when the schema came from
    /// introspection, or the demo's embedded description's path in the repository.
    pub spec: Option<String>,
    /// The seed, written as a JSON string: above 2^53 a JSON number loses
    /// digits in JavaScript and jq, and the run would not repeat.
    #[serde(serialize_with = "as_text")]
    pub seed: u64,
    /// Budget in seconds.
    pub budget_s: Option<f64>,
    /// Request cap.
    pub max_requests: Option<u64>,
    /// Rate limit, requests per second.
    pub rate_per_s: Option<f64>,
    /// Burst.
    pub burst: u32,
    /// Concurrency.
    pub concurrency: usize,
    /// Read-only mode.
    pub read_only: bool,
    /// Timeout per request, in seconds.
    pub timeout_s: f64,
    /// Header names given with `--header` (values are secrets).
    pub headers: Vec<String>,
    /// Whether an auth command was used (its text may hold secrets).
    pub auth_command: bool,
    /// Oracle codes turned off.
    pub skipped_checks: Vec<crate::oracles::registry::Code>,
    /// Whether the property graph guided generation (`--no-graph` turns it off).
    pub graph: bool,
    /// Whether responses refined the graph (`--no-feedback` turns it off).
    pub feedback: bool,
    /// `--include` patterns, as given.
    pub include: Vec<String>,
    /// `--exclude` patterns, as given.
    pub exclude: Vec<String>,
    /// The operations those patterns left out: never called.
    pub excluded_operations: Vec<String>,
    /// Per-operation rate limits (`--rate-for`), pattern → requests per second.
    pub rate_for: BTreeMap<String, f64>,
    /// Whether TLS certificates went unchecked (`--insecure`).
    pub insecure: bool,
}

/// Status counts of one operation.
#[derive(Debug, Clone, Serialize)]
pub struct OperationReport {
    /// The graph's name for the operation.
    pub operation: String,
    /// HTTP method.
    pub method: String,
    /// Path template.
    pub path: String,
    /// The line of its description where the operation is written, when found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// Its description, when not [`Settings::spec`] (the demo's combined
    /// report holds the REST and the GraphQL operations).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec: Option<String>,
    /// Status code (as a string) → count.
    pub status_counts: BTreeMap<String, u64>,
    /// Requests that got no response: failure kind → count.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub failures: BTreeMap<String, u64>,
}

/// Everything `report.json` holds.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Tool name and version.
    pub tool: BTreeMap<&'static str, &'static str>,
    /// Settings.
    pub settings: Settings,
    /// Requests sent.
    pub requests: u64,
    /// Requests refused by read-only mode.
    pub refused_mutations: u64,
    /// Requests not sent because they would have reached an excluded operation.
    pub excluded_requests: u64,
    /// Why the run ended.
    pub stop: String,
    /// Wall-clock seconds.
    pub elapsed_s: f64,
    /// Per operation, in description order.
    pub operations: Vec<OperationReport>,
    /// Operations answered with a 2xx at least once.
    pub operations_reached: usize,
    /// The distinct causes of the faults, most important first: defects,
    /// then conformance, each by severity.
    pub causes: Vec<crate::faults::causes::Cause>,
    /// Faults found.
    pub faults: Vec<Fault>,
    /// What the search did: targets, archive, samplers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<crate::generation::SearchSummary>,
    /// GraphQL APIs: (type, field) pairs returned over all pairs, and the
    /// root fields that answered data (AutoGraphQL's schema coverage).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_coverage: Option<crate::generation::graphql::SchemaCoverage>,
    /// `replay-queries`: what the log held and what was sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_log: Option<QueryLogSummary>,
    /// What a user should know about the run itself (most answers 404,
    /// operations the server refused without credentials), each said once.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Which consumes links of the graph the run exercised.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph_coverage: Option<GraphCoverage>,
}

/// The graph's consumes links (schema → operation) and which of them the run
/// exercised; `report.html` marks the exercised ones in the graph explorer.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GraphCoverage {
    /// Consumes links of the final graph.
    pub links: usize,
    /// Links the run exercised (those of `edges` with `exercised`).
    pub links_exercised: usize,
    /// Per link.
    pub edges: Vec<LinkCoverage>,
}

/// What the run did with one consumes link.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkCoverage {
    /// The edge id of the graph export (`consumes:schema:Book->op:getBook`,
    /// as [`crate::graph::export::edge_id`] makes it).
    pub id: String,
    /// The schema's name.
    pub schema: String,
    /// The operation's name.
    pub operation: String,
    /// Values passed along the link.
    pub flows: u64,
    /// Of those, how many the consumer then answered with a 2xx.
    pub successes: u64,
    /// Whether the run counts the link as exercised.
    pub exercised: bool,
    /// Why a link was not exercised: `no_producer` (no operation makes the
    /// schema), `no_producer_reached` (none of its producers answered),
    /// `producer_never_succeeded` (they answered, never with a 2xx),
    /// `no_value_flowed` (a producer succeeded, but no value of it was
    /// passed along the link), `consumer_refused` (values were passed, and
    /// the consumer refused every one: `refused_with`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The reason in words, naming the operations and answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The consumer's answers to the values passed that were not a
    /// success: status (or GraphQL `errors`, `no data`) → count.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub refused_with: BTreeMap<String, u64>,
}

/// What a log of production GraphQL requests held.
#[derive(Debug, Clone, Default, Serialize)]
pub struct QueryLogSummary {
    /// GraphQL requests read, duplicates included.
    pub requests: u64,
    /// Distinct requests (query text, variables and operation name).
    pub distinct: u64,
    /// Requests that repeated an earlier one.
    pub duplicates: u64,
    /// Distinct requests sent.
    pub sent: u64,
    /// Mutation requests skipped by read-only mode (duplicates included).
    pub skipped_mutations: u64,
    /// Lines or entries that could not be read as a GraphQL request.
    pub unreadable: u64,
}

impl Report {
    /// Groups the faults into causes again (after the replays confirmed
    /// some, or after reports were merged).
    pub fn group_causes(&mut self) {
        self.causes = crate::faults::causes::group(&self.faults);
    }

    /// Adds another part's report (the demo's GraphQL part) to this one:
    /// operations, faults (their files are under `folder/`), requests, time,
    /// schema and graph coverage; the causes are grouped again.
    pub fn absorb(&mut self, part: Report, folder: &str) {
        self.requests += part.requests;
        self.refused_mutations += part.refused_mutations;
        self.elapsed_s = ((self.elapsed_s + part.elapsed_s) * 1000.0).round() / 1000.0;
        self.operations_reached += part.operations_reached;
        for mut op in part.operations {
            // The part's operations are written in its own description.
            if op.spec.is_none() && part.settings.spec != self.settings.spec {
                op.spec.clone_from(&part.settings.spec);
            }
            self.operations.push(op);
        }
        for mut f in part.faults {
            if let Some(r) = &mut f.reproducer {
                r.shell = format!("{folder}/{}", r.shell);
                r.json = format!("{folder}/{}", r.json);
            }
            self.faults.push(f);
        }
        self.group_causes();
        self.schema_coverage = part.schema_coverage;
        // Each link's id names its own graph's nodes, so the explorer marks each
        // part's links in that part's graph.
        if let Some(part) = part.graph_coverage {
            let c = self.graph_coverage.get_or_insert_with(Default::default);
            c.links += part.links;
            c.links_exercised += part.links_exercised;
            c.edges.extend(part.edges);
        }
    }
}

/// A number as a JSON string (seeds: every digit kept by any reader).
fn as_text<S: serde::Serializer>(n: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&n.to_string())
}
