//! The run's records: `report.json` (shape in `models/report.schema.json`),
//! built from the exchanges as they come, written with secrets redacted; and
//! for people and CI, `junit.xml` ([`render_junit`]), `report.sarif`
//! ([`render_sarif`], for code-scanning uploads) and the self-contained
//! `report.html` ([`render_html`]), written by [`write_extras`]; for the
//! description's authors, `spec-fixes.overlay.yaml` ([`overlay`]).

mod coverage;
pub mod events;
mod explorer;
mod html;
mod junit;
pub mod overlay;
pub mod planted;
mod sarif;

pub use explorer::{GRAPH_DATA_ID, NOSCRIPT_EDGES};
pub use html::render_html;
pub use junit::render_junit;
pub use sarif::render_sarif;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime};

use serde::Serialize;

use crate::execution::{Exchange, RunOutcome, secrets::Secrets};
use crate::graph::export::GraphDocument;
use crate::model::Api;
use crate::oracles::Fault;

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
    pub skipped_checks: Vec<String>,
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
    pub causes: Vec<crate::oracles::causes::Cause>,
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

/// Answers looked at before deciding that most of them are 404.
const EARLY_ANSWERS: u64 = 40;

/// Answers in a row an operation that had answered 2xx must refuse (401 or
/// 403) to count as refusing now.
const REFUSED_STREAK: u64 = 20;

/// Operations that must turn so before the run's credentials count as lost
/// (and at least a quarter of those that had worked): a few may just need
/// more rights on one resource after a change the run made to it.
const TURNED: usize = 3;

/// Credentials that worked and then stopped: the run may have deleted or
/// changed the very account it uses (`DELETE /accounts`). Watched per
/// operation, as endpoints open to all keep answering. A refusal counts
/// only with evidence that it is about credentials: a 401, a
/// `WWW-Authenticate` header, or a 403 on a resource the run did not
/// delete (servers answer 403 for what is gone, or was never there).
#[derive(Default)]
struct AuthWatch {
    /// The latest successful change.
    last_change: Option<Change>,
    /// Per operation position.
    ops: Vec<OpWatch>,
    /// The operations that turned, the change before the first did, and
    /// the refusal that showed it.
    lost: Option<(Vec<String>, Option<Change>, String)>,
    /// Paths the run deleted (a refusal under one says nothing of the
    /// credentials).
    deleted: std::collections::HashSet<String>,
}

/// Deleted paths remembered, at most.
const DELETED: usize = 1 << 16;

/// A successful change: its operation and `METHOD path`.
type Change = (String, String);

#[derive(Default, Clone)]
struct OpWatch {
    turned: bool,
    streak: u64,
    /// The last change before this run of refusals began.
    since: Option<Change>,
    /// The first refusal that said it was about credentials (a 401, a
    /// `WWW-Authenticate` header), for the warning to name.
    evidence: Option<String>,
}

/// What a refusal says about credentials, for people: `GET /a answered
/// 401 (WWW-Authenticate: Bearer realm="x")`; `None` when nothing in it
/// speaks of credentials.
fn auth_evidence(ex: &Exchange, status: u16) -> Option<String> {
    let challenge = ex.header("www-authenticate");
    if status != 401 && challenge.is_none() {
        return None;
    }
    let path = ex.request.path.split('?').next().unwrap_or("");
    let mut said = format!("{} {path} answered {status}", ex.request.method);
    if let Some(c) = challenge {
        let c: String = c.chars().filter(|c| !c.is_control()).take(80).collect();
        said.push_str(&format!(" with WWW-Authenticate: {c}"));
    }
    Some(said)
}

impl AuthWatch {
    /// Notes answer `status` to `ex`, of the operation at position `i`,
    /// which had answered 2xx before when `worked`.
    fn see(&mut self, i: usize, worked: bool, ex: &Exchange, status: u16) {
        let path = ex.request.path.split('?').next().unwrap_or("");
        let evidence = match status {
            401 | 403 => auth_evidence(ex, status),
            _ => None,
        };
        let op = &mut self.ops[i];
        if op.evidence.is_none() {
            op.evidence.clone_from(&evidence);
        }
        match status {
            200..=299 => {
                op.streak = 0;
                if ex.request.is_mutation() {
                    self.last_change = Some((
                        ex.request.operation.clone(),
                        format!("{} {path}", ex.request.method),
                    ));
                }
                if ex.request.method == "DELETE" && self.deleted.len() < DELETED {
                    self.deleted.insert(path.trim_end_matches('/').to_string());
                }
            }
            401 | 403 => {
                let gone = {
                    let mut at = path.trim_end_matches('/');
                    let mut found = false;
                    while !at.is_empty() {
                        if self.deleted.contains(at) {
                            found = true;
                            break;
                        }
                        at = at.rsplit_once('/').map_or("", |(head, _)| head);
                    }
                    found
                };
                // A 403 on what the run deleted says the thing is gone.
                if evidence.is_none() && gone {
                    return;
                }
                let op = &mut self.ops[i];
                if op.streak == 0 {
                    op.since = self.last_change.clone();
                }
                op.streak += 1;
                if worked && !op.turned && op.streak == REFUSED_STREAK {
                    op.turned = true;
                    let name = ex.request.operation.clone();
                    let shown = evidence.unwrap_or_else(|| {
                        format!("{} {path} answered {status}", ex.request.method)
                    });
                    match &mut self.lost {
                        Some((ops, _, _)) => ops.push(name),
                        None => self.lost = Some((vec![name], op.since.clone(), shown)),
                    }
                }
            }
            // Anything else got past the credentials check.
            _ => op.streak = 0,
        }
    }
}

/// Accumulates per-operation counts as exchanges arrive.
pub struct Tally {
    operations: Vec<OperationReport>,
    positions: std::collections::HashMap<String, usize>,
    reached: usize,
    /// Answers and 404s among the first [`EARLY_ANSWERS`] answers.
    early: (u64, u64),
    warned_early: bool,
    /// Warnings given during the run, for the report.
    warnings: Vec<String>,
    auth: AuthWatch,
    /// Whether the run sends credentials (`-H`, `--auth-command`, a user in
    /// the target): the advice for refusals differs.
    credentials_given: bool,
}

impl Tally {
    /// A tally with every operation of the API at zero.
    pub fn new(api: &Api) -> Tally {
        Tally {
            positions: api.operation_positions(),
            reached: 0,
            early: (0, 0),
            warned_early: false,
            warnings: Vec::new(),
            credentials_given: false,
            auth: AuthWatch {
                ops: vec![OpWatch::default(); api.operations.len()],
                ..AuthWatch::default()
            },
            operations: api
                .operations
                .iter()
                .map(|o| OperationReport {
                    operation: o.name.clone(),
                    method: o.method.as_str().to_string(),
                    path: o.path.clone(),
                    line: None,
                    spec: None,
                    status_counts: BTreeMap::new(),
                    failures: BTreeMap::new(),
                })
                .collect(),
        }
    }

    /// Records where the description writes each operation (operation name →
    /// line, as [`crate::load::operation_lines`] finds them).
    pub fn with_lines(mut self, lines: &std::collections::HashMap<String, u32>) -> Tally {
        for op in &mut self.operations {
            op.line = lines.get(&op.operation).copied();
        }
        self
    }

    /// Records that the run sends credentials.
    pub fn with_credentials(mut self, given: bool) -> Tally {
        self.credentials_given = given;
        self
    }

    /// Counts one exchange.
    pub fn add(&mut self, ex: &Exchange) {
        let Some(&i) = self.positions.get(&ex.request.operation) else {
            return;
        };
        let op = &mut self.operations[i];
        if let Some(s) = ex.status {
            if self.early.0 < EARLY_ANSWERS {
                self.early.0 += 1;
                self.early.1 += u64::from(s == 404);
            }
            let worked = op.status_counts.keys().any(|k| k.starts_with('2'));
            self.auth.see(i, worked, ex, s);
        }
        match (ex.status, &ex.failure) {
            // A head, then a reset or close mid-body: no answer a client
            // could read, and no status to count as reached.
            (Some(_), Some(f)) if f.kind == crate::execution::FailureKind::InvalidHttp => {
                *op.failures.entry(f.kind.as_str().to_string()).or_default() += 1;
            }
            (Some(s), _) => {
                let first_2xx =
                    (200..300).contains(&s) && !op.status_counts.keys().any(|k| k.starts_with('2'));
                *op.status_counts.entry(s.to_string()).or_default() += 1;
                if first_2xx {
                    self.reached += 1;
                }
            }
            (None, Some(f)) => {
                *op.failures.entry(f.kind.as_str().to_string()).or_default() += 1;
            }
            (None, None) => {}
        }
    }

    /// Once, as soon as it shows: most of the first answers were 404, which
    /// usually means the requests go to the wrong place (`base` is the path
    /// the description's paths are relative to, as the run uses it).
    pub fn early_warning(&mut self, base: &str) -> Option<String> {
        let (answers, not_found) = self.early;
        if self.warned_early || answers < EARLY_ANSWERS || not_found * 5 < answers * 4 {
            return None;
        }
        self.warned_early = true;
        let w = format!(
            "{not_found} of the first {answers} answers were 404: the requests may go to the wrong place; the description's paths are sent under {base}: check --target's path (or the description's base path)"
        );
        self.warnings.push(w.clone());
        Some(w)
    }

    /// What the counts say about the run as a whole, for the user: the early
    /// 404s, and the operations the server only ever refused (401/403).
    pub fn diagnose(&self) -> Vec<String> {
        let mut out = Vec::new();
        // Out of the operations that answered at all: a short run over a
        // large API calls many only once or never.
        let answered = self
            .operations
            .iter()
            .filter(|op| op.status_counts.values().sum::<u64>() > 0)
            .count();
        // Only refusals that speak of credentials (a 401, a challenge)
        // earn the advice: a 403 alone often means "no such id".
        let refused: Vec<(&str, &str)> = self
            .operations
            .iter()
            .zip(&self.auth.ops)
            .filter(|(op, _)| {
                let total: u64 = op.status_counts.values().sum();
                let denied: u64 = op
                    .status_counts
                    .iter()
                    .filter(|(s, _)| *s == "401" || *s == "403")
                    .map(|(_, n)| n)
                    .sum();
                total > 0 && denied == total
            })
            .filter_map(|(op, watch)| {
                watch
                    .evidence
                    .as_deref()
                    .map(|e| (op.operation.as_str(), e))
            })
            .collect();
        if !refused.is_empty() {
            let shown: Vec<&str> = refused.iter().take(8).map(|(op, _)| *op).collect();
            let advice = if self.credentials_given {
                "the credentials the run sends are refused there: check that they are the ones these operations take (or --exclude them)"
            } else {
                "pass them with -H 'Authorization: …' or --auth-command"
            };
            out.push(format!(
                "{} of the {} operations called got only 401 or 403 answers ({}{}), and the server asked for credentials ({}): {advice}",
                refused.len(),
                answered,
                shown.join(", "),
                if refused.len() > shown.len() { ", …" } else { "" },
                refused[0].1
            ));
        }
        // Operations with a 2xx: those whose credentials could stop working.
        let worked = self.reached;
        if let Some((ops, before, evidence)) = self
            .auth
            .lost
            .as_ref()
            .filter(|(ops, _, _)| ops.len() >= TURNED && ops.len() * 4 >= worked)
        {
            let turned = ops.len();
            let cause = match before {
                Some((op, request)) => format!(
                    "; the last change that succeeded before was {request}: if it removed or changed the account the run uses, leave it out with --exclude '{op}', or run with a throwaway account"
                ),
                None => String::new(),
            };
            let shown: Vec<&str> = ops.iter().take(4).map(String::as_str).collect();
            out.push(format!(
                "the credentials stopped working during the run: {turned} of the {worked} operations that had answered 2xx then answered 401 or 403 {REFUSED_STREAK} times in a row on what the run had not deleted ({}{}; first: {evidence}){cause}",
                shown.join(", "),
                if ops.len() > shown.len() { ", …" } else { "" }
            ));
        }
        out
    }

    /// Operations with at least one 2xx.
    pub fn reached(&self) -> usize {
        self.reached
    }

    /// Operations counted.
    pub fn operation_count(&self) -> usize {
        self.operations.len()
    }

    /// The finished report.
    pub fn report(self, settings: Settings, outcome: &RunOutcome, faults: Vec<Fault>) -> Report {
        let reached = self.reached();
        let mut warnings = self.warnings.clone();
        warnings.extend(self.diagnose());
        Report {
            tool: BTreeMap::from([
                ("name", "cartograph"),
                ("version", env!("CARGO_PKG_VERSION")),
            ]),
            settings,
            requests: outcome.requests,
            refused_mutations: outcome.refused,
            excluded_requests: outcome.fenced,
            stop: serde_json::to_value(outcome.stop)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            elapsed_s: (outcome.elapsed.as_secs_f64() * 1000.0).round() / 1000.0,
            operations: self.operations,
            operations_reached: reached,
            causes: crate::oracles::causes::group(&faults),
            faults,
            search: None,
            schema_coverage: None,
            query_log: None,
            warnings,
            graph_coverage: None,
        }
    }
}

impl Report {
    /// Groups the faults into causes again (after the replays confirmed
    /// some, or after reports were merged).
    pub fn group_causes(&mut self) {
        self.causes = crate::oracles::causes::group(&self.faults);
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

/// Writes `report.json` into `dir`, secrets redacted.
pub fn write_report(dir: &Path, report: &Report, secrets: &Secrets) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(report).map_err(std::io::Error::other)?;
    std::fs::write(
        dir.join("report.json"),
        format!("{}\n", secrets.redact(&text)),
    )
}

/// Writes `junit.xml`, `report.sarif` and `report.html` into `dir`, secrets
/// redacted, and returns warnings for the user. `graphs` are the final graphs
/// of the APIs the run tested (`graph::export::to_document`), which the
/// page's explorer draws; empty when there is none.
pub fn write_extras(
    dir: &Path,
    report: &Report,
    graphs: &[GraphDocument],
    secrets: &Secrets,
) -> std::io::Result<Vec<String>> {
    let mut warnings = Vec::new();
    // The run is just over: now minus its length is when it began.
    let ended = SystemTime::now();
    let started = ended
        .checked_sub(Duration::from_secs_f64(report.elapsed_s.max(0.0)))
        .unwrap_or(ended);
    let junit = render_junit(report, started, secrets);
    std::fs::write(dir.join("junit.xml"), secrets.redact(&junit).as_bytes())?;
    let sarif = render_sarif(report, ended, secrets);
    std::fs::write(dir.join("report.sarif"), secrets.redact(&sarif).as_bytes())?;

    let unmatched = explorer::unmatched_coverage(report, graphs);
    if unmatched > 0 {
        warnings.push(format!(
            "{unmatched} graph_coverage link(s) name no edge of the graph; report.html cannot mark them"
        ));
    }
    let html = render_html(report, graphs, secrets);
    std::fs::write(dir.join("report.html"), secrets.redact(&html).as_bytes())?;
    Ok(warnings)
}

/// Whether XML 1.0 allows the character (HTML parsers accept the same set).
fn xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
}

/// The text without the characters XML 1.0 forbids (control characters other
/// than tab, newline and carriage return; U+FFFE, U+FFFF): one of them makes
/// the whole file unreadable to a CI system.
fn legal(s: &str) -> Cow<'_, str> {
    if s.chars().all(xml_char) {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(s.chars().filter(|&c| xml_char(c)).collect())
    }
}

/// Text for an XML or HTML element: illegal characters dropped, markup escaped.
fn escape_text(s: &str) -> String {
    quick_xml::escape::escape(legal(s)).into_owned()
}

/// Text for an attribute value: as [`escape_text`], with line breaks and tabs
/// as character references, which attribute-value normalisation would
/// otherwise turn into spaces.
fn escape_attr(s: &str) -> String {
    escape_text(s)
        .replace('\n', "&#10;")
        .replace('\r', "&#13;")
        .replace('\t', "&#9;")
}

/// A witness step in words: `POST /orders -> 500`.
fn step_text(s: &crate::oracles::WitnessStep) -> String {
    format!(
        "{} {} -> {}",
        s.method,
        s.path,
        s.status
            .map_or("no response".to_string(), |s| s.to_string())
    )
}

/// `2024-05-01T12:34:56`, in UTC: the form the JUnit schema's timestamp takes
/// (no zone).
fn utc_timestamp(t: SystemTime) -> String {
    // humantime writes `2024-05-01T12:34:56Z`; the schema takes no zone.
    let text = humantime::format_rfc3339_seconds(t).to_string();
    text.trim_end_matches('Z').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_utc_civil_dates() {
        let at = |s: u64| utc_timestamp(SystemTime::UNIX_EPOCH + Duration::from_secs(s));
        assert_eq!(at(0), "1970-01-01T00:00:00");
        // 2000-02-29 (a leap day of a century leap year) 23:59:59.
        assert_eq!(at(951_868_799), "2000-02-29T23:59:59");
        assert_eq!(at(1_709_251_200), "2024-03-01T00:00:00");
    }

    fn answer(op: &str, method: &str, status: u16) -> Exchange {
        Exchange {
            request: crate::execution::RequestSpec {
                operation: op.into(),
                method: method.into(),
                path: format!("/{op}"),
                ..Default::default()
            },
            status: Some(status),
            ..Default::default()
        }
    }

    fn api_of(ops: &[&str]) -> Api {
        let mut paths = String::new();
        for op in ops {
            paths.push_str(&format!(
                "  /{op}:\n    get:\n      operationId: {op}\n      responses: {{\"200\": {{description: ok}}}}\n"
            ));
        }
        let yaml = format!("openapi: 3.0.0\ninfo: {{title: t, version: '1'}}\npaths:\n{paths}");
        crate::load::load_text(&yaml, Path::new("t.yaml"))
            .unwrap()
            .api
    }

    #[test]
    fn credentials_that_stop_working_are_told_with_the_change_before() {
        let ops = ["a", "b", "c", "d", "health", "drop_accounts"];
        let mut tally = Tally::new(&api_of(&ops));
        for op in ["a", "b", "c", "d", "health"] {
            tally.add(&answer(op, "GET", 200));
        }
        tally.add(&answer("drop_accounts", "DELETE", 204));
        assert!(tally.diagnose().is_empty());
        for _ in 0..REFUSED_STREAK {
            for op in ["a", "b", "c"] {
                tally.add(&answer(op, "GET", 401));
                // An endpoint open to all goes on answering.
                tally.add(&answer("health", "GET", 200));
            }
        }
        let said = tally.diagnose().join("\n");
        assert!(said.contains("credentials stopped working"), "{said}");
        assert!(said.contains("3 of the 6"), "{said}");
        assert!(said.contains("--exclude 'drop_accounts'"), "{said}");
        assert!(said.contains("first: GET /a answered 401"), "{said}");

        // Two operations refused on one resource whose rights a change
        // took away, among many that still work: no loss.
        let mut tally = Tally::new(&api_of(&ops));
        for op in ops {
            tally.add(&answer(op, "GET", 200));
        }
        for _ in 0..REFUSED_STREAK {
            for op in ["a", "b"] {
                tally.add(&answer(op, "GET", 403));
            }
            tally.add(&answer("c", "GET", 404));
        }
        assert!(tally.diagnose().is_empty(), "{:?}", tally.diagnose());
    }

    #[test]
    fn text_loses_characters_xml_forbids_and_escapes_markup() {
        assert_eq!(
            escape_text("a\u{0}b\u{1b}c\td<e>&\"'\u{FFFE}"),
            "abc\td&lt;e&gt;&amp;&quot;&apos;"
        );
        assert_eq!(escape_attr("x\ny"), "x&#10;y");
    }

    fn at(op: &str, method: &str, path: &str, status: u16) -> Exchange {
        let mut ex = answer(op, method, status);
        ex.request.path = path.into();
        ex
    }

    #[test]
    fn refusals_of_what_the_run_deleted_are_not_lost_credentials() {
        let ops = ["a", "b", "c", "d", "create", "remove"];
        let mut tally = Tally::new(&api_of(&ops));
        for op in ["a", "b", "c", "d"] {
            tally.add(&at(op, "GET", &format!("/{op}/1"), 200));
        }
        for op in ["a", "b", "c"] {
            tally.add(&at("remove", "DELETE", &format!("/{op}/1"), 204));
        }
        for _ in 0..REFUSED_STREAK {
            for op in ["a", "b", "c"] {
                tally.add(&at(op, "GET", &format!("/{op}/1"), 403));
                tally.add(&at(op, "GET", &format!("/{op}/1/items"), 403));
            }
            // Creations keep succeeding.
            tally.add(&at("create", "POST", "/a", 201));
        }
        assert!(tally.diagnose().is_empty(), "{:?}", tally.diagnose());
    }

    #[test]
    fn the_advice_to_pass_credentials_needs_the_server_to_ask_for_them() {
        let mut tally = Tally::new(&api_of(&["vault", "admin"]));
        for _ in 0..5 {
            tally.add(&answer("vault", "GET", 403));
        }
        assert!(tally.diagnose().is_empty(), "{:?}", tally.diagnose());
        let mut asked = answer("admin", "GET", 403);
        asked
            .headers
            .push(("www-authenticate".into(), "Bearer realm=\"admin\"".into()));
        tally.add(&asked);
        let said = tally.diagnose().join("\n");
        assert!(said.contains("(admin)"), "{said}");
        assert!(
            said.contains("WWW-Authenticate: Bearer realm=\"admin\""),
            "{said}"
        );
        assert!(!said.contains("vault"), "{said}");
        assert!(said.contains("pass them with -H"), "{said}");
        // With credentials sent, the advice is about them, not to send some.
        let mut given = Tally::new(&api_of(&["admin"])).with_credentials(true);
        given.add(&asked);
        let said = given.diagnose().join("\n");
        assert!(!said.contains("pass them with -H"), "{said}");
        assert!(
            said.contains("credentials the run sends are refused"),
            "{said}"
        );
    }
}
