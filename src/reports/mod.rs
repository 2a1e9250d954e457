//! The run's records: `report.json` (shape in `models/report.schema.json`),
//! built from the exchanges as they come, written with secrets redacted.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::execution::{secrets::Secrets, Exchange, FailureKind, RunOutcome};
use crate::model::Api;
use crate::oracles::Fault;

/// Run settings as recorded (secret values never appear).
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    /// The target base URL.
    pub target: String,
    /// The seed.
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
    pub skipped_checks: Vec<String>,
    /// Whether the property graph guided generation (`--no-graph` turns it off).
    pub graph: bool,
    /// Whether responses refined the graph (`--no-feedback` turns it off).
    pub feedback: bool,
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
    /// Why the run ended.
    pub stop: String,
    /// Wall-clock seconds.
    pub elapsed_s: f64,
    /// Per operation, in description order.
    pub operations: Vec<OperationReport>,
    /// Operations answered with a 2xx at least once.
    pub operations_reached: usize,
    /// Faults found.
    pub faults: Vec<Fault>,
    /// What the search did: targets, archive, samplers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<crate::generation::SearchSummary>,
}

/// Accumulates per-operation counts as exchanges arrive.
pub struct Tally {
    operations: Vec<OperationReport>,
    positions: std::collections::HashMap<String, usize>,
    reached: usize,
}

impl Tally {
    /// A tally with every operation of the API at zero.
    pub fn new(api: &Api) -> Tally {
        Tally {
            positions: api.operation_positions(),
            reached: 0,
            operations: api
                .operations
                .iter()
                .map(|o| OperationReport {
                    operation: o.name.clone(),
                    method: o.method.as_str().to_string(),
                    path: o.path.clone(),
                    status_counts: BTreeMap::new(),
                    failures: BTreeMap::new(),
                })
                .collect(),
        }
    }

    /// Counts one exchange.
    pub fn add(&mut self, ex: &Exchange) {
        let Some(&i) = self.positions.get(&ex.request.operation) else {
            return;
        };
        let op = &mut self.operations[i];
        match (ex.status, &ex.failure) {
            (Some(s), _) => {
                let first_2xx =
                    (200..300).contains(&s) && !op.status_counts.keys().any(|k| k.starts_with('2'));
                *op.status_counts.entry(s.to_string()).or_default() += 1;
                if first_2xx {
                    self.reached += 1;
                }
            }
            (None, Some(f)) => {
                let kind = match f.kind {
                    FailureKind::Timeout => "timeout",
                    FailureKind::Connection => "connection",
                    FailureKind::Other => "other",
                };
                *op.failures.entry(kind.to_string()).or_default() += 1;
            }
            (None, None) => {}
        }
    }

    /// Operations with at least one 2xx.
    pub fn reached(&self) -> usize {
        self.reached
    }

    /// The finished report.
    pub fn report(self, settings: Settings, outcome: &RunOutcome, faults: Vec<Fault>) -> Report {
        let reached = self.reached();
        Report {
            tool: BTreeMap::from([
                ("name", "cartograph"),
                ("version", env!("CARGO_PKG_VERSION")),
            ]),
            settings,
            requests: outcome.requests,
            refused_mutations: outcome.refused,
            stop: serde_json::to_value(outcome.stop)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            elapsed_s: (outcome.elapsed.as_secs_f64() * 1000.0).round() / 1000.0,
            operations: self.operations,
            operations_reached: reached,
            faults,
            search: None,
        }
    }
}

/// Writes `report.json` into `dir`, secrets redacted.
pub fn write_report(dir: &Path, report: &Report, secrets: &Secrets) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(report).map_err(std::io::Error::other)?;
    std::fs::write(
        dir.join("report.json"),
        format!("{}\n", secrets.redact(&text)),
    )
}
