//! The security probes, after the search (REST only): requests of their
//! own, each made from a request that answered 2xx in the search
//! ([`Bases`]) with one thing changed, and judged across answers (a quote
//! against a plain word, a write then a read, a request arriving at
//! Cartograph's own listener). What each looks for is in
//! [`crate::oracles::security`]; exactly when each fires, in the rows of
//! the registry whose judge is [`crate::oracles::registry::Judge::Probe`].
//!
//! They cost a small, bounded share: one probe per input or operation, at
//! most [`MAX_REQUESTS`] requests and [`MAX_TIME`], one at a time (a read
//! must follow the write it checks), recorded in `security.ndjson`. A
//! finding's probe is sent once more to confirm it, and a confirmed finding
//! whose last answer shows it gets a reproducer script (not SSRF, whose
//! evidence reaches the listener, nor a tautology's extra rows, which only
//! another answer's count measures).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use super::link::Link;
use crate::execution::canary::Canary;
use crate::execution::{self, Driver, Exchange, OutDir, RequestSpec, TestRun, TraceWriter};
use crate::faults::{Confirmation, Fault, causes, steps};
use crate::model::{Api, Location, Method, Operation};
use crate::oracles::registry::Code;
use crate::oracles::security as sec;
use crate::oracles::{FaultCheck, Finding};

/// Requests the probes may send, at most (confirmations included).
pub(crate) const MAX_REQUESTS: u64 = 400;
/// Time the probes may take, at most.
pub(crate) const MAX_TIME: Duration = Duration::from_secs(20);
/// String inputs of one operation the SQL probe tries, at most.
const SQL_INPUTS: usize = 3;
/// How long the SSRF listener waits, after the probes, for a fetch the
/// server makes late (in the background, after answering).
const SSRF_WAIT: Duration = Duration::from_secs(1);
/// A path no API has: a method that answers 2xx there answers 2xx
/// everywhere (a catch-all route), and says nothing on a documented path.
const NOWHERE: &str = "/cartograph-no-such-path-7f3a";
/// Methods a hidden-endpoint probe may try, DELETE last (it may remove
/// what the others use).
const METHODS: [&str; 5] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/// The first request of each operation that answered 2xx in the search,
/// with what it sent as the search meant it (no negative test): what
/// every probe is made from.
#[derive(Default)]
pub(crate) struct Bases {
    by_op: HashMap<String, Exchange>,
}

impl Bases {
    /// Keeps `ex` when it is its operation's first 2xx.
    pub(crate) fn note(&mut self, ex: &Exchange) {
        if ex.is_success()
            && ex.request.breach.is_none()
            && !ex.request.graphql_query
            && !self.by_op.contains_key(&ex.request.operation)
        {
            self.by_op.insert(ex.request.operation.clone(), ex.clone());
        }
    }
}

/// What the probes found, and what they cost.
pub(crate) struct Probed {
    /// The faults, each confirmed or flaky.
    pub faults: Vec<Fault>,
    /// Requests sent.
    pub requests: u64,
    /// What the user should know (a probe not run, and why).
    pub warnings: Vec<String>,
}

/// One probe: a request, and perhaps a read of what it wrote.
#[derive(Clone)]
struct Probe {
    first: RequestSpec,
    then: Then,
}

/// What follows a probe's request when it answered 2xx.
#[derive(Clone)]
enum Then {
    Nothing,
    /// A GET by `op`: of the written path, or (`collection`) of the path
    /// and the id the answer gives.
    ReadBack {
        op: String,
        collection: bool,
    },
}

impl Probe {
    fn one(first: RequestSpec) -> Probe {
        Probe {
            first,
            then: Then::Nothing,
        }
    }

    fn next(&self, done: &[Exchange]) -> Option<RequestSpec> {
        match done.len() {
            0 => Some(self.first.clone()),
            1 => {
                let Then::ReadBack { op, collection } = &self.then else {
                    return None;
                };
                let written = &done[0];
                if !written.is_success() {
                    return None;
                }
                let at = strip_query(&self.first.path).trim_end_matches('/');
                let path = if *collection {
                    let id = crate::oracles::identity::given_ids(written)
                        .into_iter()
                        .next()?;
                    format!("{at}/{}", encode_segment(&id))
                } else {
                    at.to_string()
                };
                Some(RequestSpec {
                    operation: op.clone(),
                    method: "GET".into(),
                    path,
                    ..Default::default()
                })
            }
            _ => None,
        }
    }
}

/// What a case looks for.
#[derive(Clone)]
enum Check {
    /// Probes: the plain word, the quote, the tautology.
    Sql { input: String },
    /// One probe, whose input carries `token`.
    Ssrf { input: String, token: String },
    /// One write (with its read): these properties, these marked values.
    Mass { props: Vec<(String, Value)> },
    /// One write (with its read), then the HTML reads: these fields, these
    /// markers.
    Xss { fields: Vec<(String, String)> },
    /// One request of a method the description does not list, after the
    /// listed GET of the same path sent again; without a listed GET, the
    /// search's answer of a listed method there (`like`).
    Hidden {
        method: String,
        template: String,
        like: Box<Exchange>,
    },
    /// One request of a method to a path no API has: when it answers 2xx,
    /// the server has a catch-all route, and `Hidden` of that method says
    /// nothing.
    Nowhere { method: String },
}

/// Probes judged together, and the fault they would show.
#[derive(Clone)]
struct Case {
    code: Code,
    /// The operation the fault is reported under.
    operation: String,
    check: Check,
    probes: Vec<Probe>,
}

/// What a case showed.
struct Verdict {
    message: String,
    detail: String,
    witness: Vec<Exchange>,
    /// How a reproducer tells that it showed on the witness's last answer;
    /// none when no answer can (a request arriving at the SSRF listener,
    /// a count of rows against another answer's).
    check: Option<FaultCheck>,
}

/// A test of the engine: one probe, by its place in the queue.
struct Run {
    at: usize,
    probe: Probe,
}

impl TestRun for Run {
    fn next_request(&mut self, done: &[Exchange]) -> Option<RequestSpec> {
        self.probe.next(done)
    }
}

/// Runs probes in order, one at a time, keeping each one's exchanges.
struct Queue {
    next: usize,
    probes: Vec<Probe>,
    done: Vec<Option<Vec<Exchange>>>,
}

impl Driver for Queue {
    fn next_test(&mut self) -> Option<Box<dyn TestRun>> {
        let probe = self.probes.get(self.next)?.clone();
        self.next += 1;
        Some(Box::new(Run {
            at: self.next - 1,
            probe,
        }))
    }

    fn finished(&mut self, test: Box<dyn TestRun>, exchanges: &[Exchange]) {
        let test: Box<dyn std::any::Any> = test;
        if let Ok(run) = test.downcast::<Run>()
            && let Some(slot) = self.done.get_mut(run.at)
        {
            *slot = Some(exchanges.to_vec());
        }
    }
}

/// Sends the probes for `api` made from `bases`, then once more those that
/// found something, and returns the faults; skips the codes in `skip`.
pub(crate) async fn probe(
    api: &Api,
    bases: &Bases,
    link: &Link,
    out: &OutDir,
    secrets: &crate::execution::secrets::Secrets,
    skip: &[Code],
    (time, requests): (Duration, u64),
) -> anyhow::Result<Probed> {
    let read_only = link.config.read_only;
    let mut warnings = Vec::new();
    let on = |code: Code| !skip.contains(&code);
    let canary = if on(Code::Ssrf) && loopback(&link.config.target) {
        match Canary::start().await {
            Ok(c) => Some(c),
            Err(e) => {
                warnings.push(format!(
                    "the SSRF probe did not run: its listener could not bind 127.0.0.1 ({e})"
                ));
                None
            }
        }
    } else {
        None
    };
    let plan = Plan {
        api,
        bases,
        read_only,
        canary: canary.as_ref().map(Canary::base_url),
    };
    let mut cases = Vec::new();
    for (i, op) in api.operations.iter().enumerate() {
        let Some(base) = bases.by_op.get(&op.name) else {
            continue;
        };
        if read_only && base.request.is_mutation() {
            continue;
        }
        if on(Code::SqlInjection) {
            cases.extend(plan.sql(op, base));
        }
        if plan.canary.is_some() {
            cases.extend(plan.ssrf(i, op, base));
        }
        if !read_only && on(Code::MassAssignment) {
            cases.extend(plan.mass(op, base, 0));
        }
        if !read_only && on(Code::StoredXss) {
            cases.extend(plan.xss(i, op, base, 0));
        }
    }
    let reads = plan.html_reads();
    if reads.is_empty() {
        cases.retain(|c| !matches!(c.check, Check::Xss { .. }));
    }
    if on(Code::HiddenEndpoint) {
        cases.extend(plan.hidden());
    }
    // DELETE probes last: they may remove what the others use. The paths
    // no API has first: the hidden methods are judged by them.
    cases.sort_by_key(|c| match &c.check {
        Check::Nowhere { .. } => 0,
        Check::Hidden { method, .. } if method == "DELETE" => 2,
        _ => 1,
    });
    if cases.is_empty() {
        return Ok(Probed {
            faults: Vec::new(),
            requests: 0,
            warnings,
        });
    }
    let mut trace = TraceWriter::create(out, "security.ndjson", secrets.clone())
        .map_err(|e| {
            anyhow::anyhow!(
                "cannot create {}: {e}",
                out.path("security.ndjson").display()
            )
        })?
        .limited(link.config.trace_limit);
    let mut left = (time, requests);
    let first = send(link, &cases, &reads, &mut trace, &mut left).await;
    let seen = Seen {
        hits: settle(canary.as_ref(), &cases, &mut left).await,
        catch_all: catch_all(&cases, &first),
        reads: first.reads,
    };
    let mut found: Vec<(Case, Verdict)> = Vec::new();
    for (k, case) in cases.iter().enumerate() {
        if let Some(v) = judge(case, &first.cases[k], &seen) {
            found.push((case.clone(), v));
        }
    }
    // Once more, each finding's probes: what shows twice is confirmed.
    let again: Vec<Case> = found
        .iter()
        .map(|(c, _)| match &c.check {
            // Fresh markers: the first write may have taken the value, and
            // the first script is stored already.
            Check::Mass { .. } => api
                .operations
                .iter()
                .find(|o| o.name == c.operation)
                .and_then(|op| plan.mass(op, bases.by_op.get(&op.name)?, 100))
                .unwrap_or_else(|| c.clone()),
            Check::Xss { .. } => api
                .operations
                .iter()
                .position(|o| o.name == c.operation)
                .and_then(|i| {
                    let op = &api.operations[i];
                    plan.xss(i, op, bases.by_op.get(&op.name)?, 1)
                })
                .unwrap_or_else(|| c.clone()),
            _ => c.clone(),
        })
        .collect();
    // Each hidden method's path that cannot exist, asked again first.
    let calibration: Vec<Case> = cases
        .iter()
        .filter(|n| match &n.check {
            Check::Nowhere { method } => again
                .iter()
                .any(|c| matches!(&c.check, Check::Hidden { method: m, .. } if m == method)),
            _ => false,
        })
        .cloned()
        .collect();
    let calibrated = calibration.len();
    let again: Vec<Case> = calibration.into_iter().chain(again).collect();
    if let Some(c) = &canary {
        c.clear();
    }
    let confirm_reads = if again.iter().any(|c| matches!(c.check, Check::Xss { .. })) {
        reads.clone()
    } else {
        Vec::new()
    };
    let second = send(link, &again, &confirm_reads, &mut trace, &mut left).await;
    let seen = Seen {
        hits: settle(canary.as_ref(), &again, &mut left).await,
        catch_all: catch_all(&again, &second),
        reads: second.reads,
    };
    let counts = trace.finish()?;
    if let Some(note) =
        super::outputs::trace_note("security.ndjson", counts, link.config.trace_limit)
    {
        warnings.push(note);
    }
    let mut faults = Vec::new();
    let mut outcomes = Vec::new();
    let positions = api.operation_positions();
    let target = &link.config.target;
    let location = |l: &str| crate::execution::target_relative(target, l);
    for (k, (case, verdict)) in found.into_iter().enumerate() {
        let k = k + calibrated;
        let again = judge(&again[k], &second.cases[k], &seen);
        let confirmation = if again.is_some() {
            Confirmation::Confirmed
        } else {
            Confirmation::Flaky
        };
        let fault = fault(&case, verdict, confirmation);
        // The confirming probe, as a script anyone can run.
        if let Some(v) = again
            && let Some(check) = v.check
        {
            let mut script = crate::reproduce::build::script(
                api,
                &positions,
                target.as_str(),
                &v.witness,
                &location,
            );
            script.fault = Some(crate::reproduce::ScriptFault {
                code: fault.code,
                signature: fault.signature.clone(),
                message: fault.message.clone(),
                check,
            });
            outcomes.push(crate::reproduce::shrink::Outcome {
                signature: fault.signature.clone(),
                confirmation,
                script,
                requests: v.witness.len() as u64,
                fresh: None,
            });
        }
        faults.push(fault);
    }
    crate::reproduce::files::attach_reproducers(&mut faults, out, &outcomes, secrets)?;
    Ok(Probed {
        faults,
        requests: first.requests + second.requests,
        warnings,
    })
}

/// Whether a target is on this machine's loopback interface: the only
/// place the SSRF listener can be reached from.
fn loopback(target: &url::Url) -> bool {
    match target.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// What one round sent: each case's probes' exchanges, and the reads'.
struct Sent {
    cases: Vec<Vec<Vec<Exchange>>>,
    reads: Vec<Vec<Exchange>>,
    requests: u64,
}

/// Sends the cases' probes, then the HTML reads, one at a time within
/// `left` (time, requests), which it takes from.
async fn send(
    link: &Link,
    cases: &[Case],
    reads: &[Probe],
    trace: &mut TraceWriter,
    left: &mut (Duration, u64),
) -> Sent {
    // The reads go after the writes they check, before the DELETEs.
    let split = cases
        .iter()
        .position(|c| matches!(&c.check, Check::Hidden { method, .. } if method == "DELETE"))
        .unwrap_or(cases.len());
    let mut probes: Vec<Probe> = Vec::new();
    let mut owner: Vec<Option<(usize, usize)>> = Vec::new();
    for (k, case) in cases.iter().enumerate() {
        if k == split {
            probes.extend(reads.iter().cloned());
            owner.extend(reads.iter().map(|_| None));
        }
        for (j, p) in case.probes.iter().enumerate() {
            probes.push(p.clone());
            owner.push(Some((k, j)));
        }
    }
    if split == cases.len() {
        probes.extend(reads.iter().cloned());
        owner.extend(reads.iter().map(|_| None));
    }
    let mut config = link.config.clone();
    config.budget = Some(left.0);
    config.max_requests = Some(left.1);
    // One at a time: a read must follow the write it checks.
    config.concurrency = 1;
    let queue = Arc::new(Mutex::new(Queue {
        next: 0,
        done: vec![None; probes.len()],
        probes,
    }));
    let mut error = None;
    let outcome = execution::run(
        config,
        link.transport.clone(),
        link.credentials.clone(),
        link.politeness.clone(),
        queue.clone(),
        |ex| {
            if let Err(e) = trace.write(ex) {
                error.get_or_insert(e);
            }
        },
    )
    .await;
    if let Some(e) = error {
        eprintln!("warning: security.ndjson is incomplete: {e}");
    }
    left.0 = left.0.saturating_sub(outcome.elapsed);
    left.1 = left.1.saturating_sub(outcome.requests);
    let done = std::mem::take(&mut queue.lock().unwrap_or_else(|e| e.into_inner()).done);
    let mut sent = Sent {
        cases: cases
            .iter()
            .map(|c| vec![Vec::new(); c.probes.len()])
            .collect(),
        reads: Vec::new(),
        requests: outcome.requests,
    };
    for (exchanges, owner) in done.into_iter().zip(owner) {
        let exchanges = exchanges.unwrap_or_default();
        match owner {
            Some((k, j)) => sent.cases[k][j] = exchanges,
            None => sent.reads.push(exchanges),
        }
    }
    sent
}

/// The requests that reached the SSRF listener: when a token of `cases`
/// has not arrived yet, after waiting for it a little (a server may fetch
/// in the background, after answering), within `left`, which it takes from.
async fn settle(
    canary: Option<&Canary>,
    cases: &[Case],
    left: &mut (Duration, u64),
) -> Vec<String> {
    let Some(canary) = canary else {
        return Vec::new();
    };
    let tokens: Vec<&str> = cases
        .iter()
        .filter_map(|c| match &c.check {
            Check::Ssrf { token, .. } => Some(token.as_str()),
            _ => None,
        })
        .collect();
    let started = std::time::Instant::now();
    let wait = SSRF_WAIT.min(left.0);
    loop {
        let hits = canary.hits();
        let all = tokens.iter().all(|t| hits.iter().any(|h| h.contains(t)));
        if all || started.elapsed() >= wait {
            left.0 = left.0.saturating_sub(started.elapsed());
            return hits;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// What a round showed beyond each case's own exchanges.
struct Seen {
    /// The request targets that reached the SSRF listener.
    hits: Vec<String>,
    /// The methods a path no API has answered 2xx to.
    catch_all: Vec<String>,
    /// The HTML reads' exchanges.
    reads: Vec<Vec<Exchange>>,
}

/// The methods whose `Nowhere` probe answered 2xx.
fn catch_all(cases: &[Case], sent: &Sent) -> Vec<String> {
    cases
        .iter()
        .zip(&sent.cases)
        .filter_map(|(c, ex)| match &c.check {
            Check::Nowhere { method } => ex
                .first()
                .and_then(|e| e.last())
                .filter(|e| e.is_success())
                .map(|_| method.clone()),
            _ => None,
        })
        .collect()
}

/// What a case's exchanges show.
fn judge(case: &Case, probes: &[Vec<Exchange>], seen: &Seen) -> Option<Verdict> {
    let (reads, hits) = (&seen.reads, &seen.hits);
    let last = |k: usize| probes.get(k).and_then(|e| e.last());
    match &case.check {
        Check::Sql { input } => {
            let (plain, quote, tautology, control) = (last(0)?, last(1)?, last(2), last(3));
            if let Some(error) = quote.status.and(sec::sql_error(&quote.body))
                && plain.status.is_some()
                && sec::sql_error(&plain.body).is_none()
            {
                return Some(Verdict {
                    message: format!(
                        "a quote in `{input}` gives a database error ({error:?}, status {}) where a plain word does not (status {})",
                        status(quote),
                        status(plain)
                    ),
                    detail: input.clone(),
                    witness: vec![plain.clone(), quote.clone()],
                    check: quote.status.map(|status| FaultCheck::BodyContains {
                        status,
                        text: error.clone(),
                    }),
                });
            }
            let (tautology, control) = (tautology?, control?);
            let (Some(p), Some(t)) = (sec::rows(plain), sec::rows(tautology)) else {
                return None;
            };
            // The same words without quotes listing as many: a search
            // that matches words (`OR`, `1`), not an injection.
            let words = sec::rows(control).filter(|_| control.is_success());
            let more = t > p && words.is_some_and(|c| t > c);
            (plain.is_success() && tautology.is_success() && more).then(|| Verdict {
                message: format!(
                    "a tautology in `{input}` ({:?}) lists {t} item(s) where the plain word lists {p}",
                    sec::SQL_TAUTOLOGY
                ),
                detail: input.clone(),
                witness: vec![plain.clone(), tautology.clone()],
                check: None,
            })
        }
        Check::Ssrf { input, token } => {
            let sent = last(0)?;
            let hit = hits.iter().find(|h| h.contains(token.as_str()))?;
            Some(Verdict {
                message: format!(
                    "the server fetched the URL given in `{input}`: a request for {hit} reached Cartograph's listener on 127.0.0.1 (the probe's answer: {})",
                    status(sent)
                ),
                detail: input.clone(),
                witness: vec![sent.clone()],
                check: None,
            })
        }
        Check::Mass { props } => {
            let exchanges = probes.first()?;
            let read = exchanges.get(1).filter(|r| r.is_success())?;
            let body = read.json()?;
            let (name, value, pointer) = props.iter().find_map(|(name, value)| {
                sec::value_at(body, name, value).map(|p| (name, value, p))
            })?;
            Some(Verdict {
                message: format!(
                    "read-only `{name}` was sent as {value} in a {} and a later read shows it so",
                    exchanges[0].request.method
                ),
                detail: name.clone(),
                witness: exchanges.clone(),
                check: read.status.map(|status| FaultCheck::JsonValue {
                    status,
                    pointer,
                    value: value.clone(),
                }),
            })
        }
        Check::Xss { fields } => {
            let exchanges = probes.first()?;
            let write = exchanges.first().filter(|w| w.is_success())?;
            let answers = exchanges.iter().skip(1).chain(reads.iter().flatten());
            for ex in answers {
                if let Some((name, marker)) =
                    fields.iter().find(|(_, m)| sec::shows_unescaped(ex, m))
                {
                    return Some(Verdict {
                        message: format!(
                            "a script stored in `{name}` by {} {} comes back unescaped in the text/html answer of {} {}",
                            write.request.method,
                            strip_query(&write.request.path),
                            ex.request.method,
                            ex.request.path
                        ),
                        detail: name.clone(),
                        witness: vec![write.clone(), ex.clone()],
                        check: ex.status.map(|status| FaultCheck::BodyContains {
                            status,
                            text: marker.clone(),
                        }),
                    });
                }
            }
            None
        }
        Check::Hidden {
            method,
            template,
            like,
        } => {
            // A path that cannot exist answering 2xx too: a catch-all
            // route (a single-page app's), whose 2xx says nothing; nor does
            // the listed method's answer again (a route that ignores the
            // method).
            let (ex, like) = match probes.len() {
                2 => (last(1)?, last(0)?),
                _ => (last(0)?, like.as_ref()),
            };
            let hidden =
                ex.is_success() && !seen.catch_all.contains(method) && !sec::same_answer(ex, like);
            hidden.then(|| Verdict {
                message: format!(
                    "{method} {} answered {} but the description lists no {method} for {template}",
                    ex.request.path,
                    status(ex)
                ),
                detail: String::new(),
                witness: vec![ex.clone()],
                check: Some(FaultCheck::Success),
            })
        }
        Check::Nowhere { .. } => None,
    }
}

fn status(ex: &Exchange) -> String {
    ex.status
        .map_or_else(|| "no answer".to_string(), |s| s.to_string())
}

/// The report's record of a case's finding.
fn fault(case: &Case, v: Verdict, confirmation: Confirmation) -> Fault {
    let ex = v.witness.last().cloned().unwrap_or_default();
    let f = Finding::new(case.code, &case.operation, v.message, v.detail);
    let reason = causes::reason(&f, &ex);
    Fault {
        code: case.code,
        class: case.code.oracle().class,
        severity: case.code.oracle().severity,
        cause: causes::id(&reason.key),
        cause_title: reason.title,
        place: reason.place,
        operation: case.operation.clone(),
        status: ex.status,
        signature: f.signature(ex.status),
        message: f.found.message,
        count: 1,
        first_seq: v.witness.first().map_or(0, |e| e.seq),
        witness: steps(&v.witness),
        confirmation,
        reproducer: None,
    }
}

/// What the probes are made from.
struct Plan<'a> {
    api: &'a Api,
    bases: &'a Bases,
    read_only: bool,
    /// The SSRF listener's base URL, when the probe runs.
    canary: Option<String>,
}

/// An input of a request: where it goes and its name.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    Path,
    Query,
    Body,
}

impl Plan<'_> {
    /// The inputs a base request carries, with their schemas: its path and
    /// query parameters, and its JSON body's top-level fields.
    fn inputs(
        &self,
        op: &Operation,
        base: &Exchange,
    ) -> Vec<(Place, String, crate::model::Schema)> {
        let mut out = Vec::new();
        let query: Vec<String> = query_names(&base.request.path);
        for p in &op.parameters {
            let schema = self.api.resolve(&p.schema).clone();
            match p.location {
                Location::Path => out.push((Place::Path, p.name.clone(), schema)),
                Location::Query if query.contains(&p.name) => {
                    out.push((Place::Query, p.name.clone(), schema))
                }
                _ => {}
            }
        }
        if let Some(Value::Object(fields)) = body_json(base)
            && let Some(schema) = body_schema(self.api, op)
        {
            for name in fields.keys() {
                if let Some(s) = schema.properties.get(name) {
                    let s = self.api.resolve(s);
                    if !s.read_only {
                        out.push((Place::Body, name.clone(), s.clone()));
                    }
                }
            }
        }
        out
    }

    fn sql(&self, op: &Operation, base: &Exchange) -> Vec<Case> {
        self.inputs(op, base)
            .into_iter()
            .filter(|(_, name, s)| sec::free_text(s) && !sec::takes_url(name, s))
            .take(SQL_INPUTS)
            .filter_map(|(place, name, _)| {
                let probes = [
                    sec::SQL_PLAIN,
                    sec::SQL_QUOTE,
                    sec::SQL_TAUTOLOGY,
                    sec::SQL_CONTROL,
                ]
                .iter()
                .map(|v| {
                    with_input(op, &base.request, place, &name, Value::from(*v)).map(Probe::one)
                })
                .collect::<Option<Vec<_>>>()?;
                Some(Case {
                    code: Code::SqlInjection,
                    operation: op.name.clone(),
                    check: Check::Sql { input: name },
                    probes,
                })
            })
            .collect()
    }

    fn ssrf(&self, i: usize, op: &Operation, base: &Exchange) -> Vec<Case> {
        let Some(listener) = &self.canary else {
            return Vec::new();
        };
        self.inputs(op, base)
            .into_iter()
            .filter(|(place, name, s)| *place != Place::Path && sec::takes_url(name, s))
            .enumerate()
            .filter_map(|(j, (place, name, _))| {
                // Ended, so that no token is the start of another.
                let token = format!("{}op{i}in{j}end", sec::SSRF_PATH);
                let url = format!("{listener}{token}");
                let first = with_input(op, &base.request, place, &name, Value::from(url))?;
                Some(Case {
                    code: Code::Ssrf,
                    operation: op.name.clone(),
                    check: Check::Ssrf { input: name, token },
                    probes: vec![Probe::one(first)],
                })
            })
            .collect()
    }

    /// The GET that reads what a write of `op` made or changed, and whether
    /// it takes the new id after the write's path.
    fn read_back(&self, op: &Operation) -> Option<Then> {
        let own = op.path.trim_end_matches('/');
        let (path, collection) = match op.method {
            Method::Post => (None, true),
            Method::Put | Method::Patch => (Some(own.to_string()), false),
            _ => return None,
        };
        let get = self.api.operations.iter().find(|g| {
            g.method == Method::Get
                && match &path {
                    Some(p) => g.path.trim_end_matches('/') == p,
                    None => g
                        .path
                        .strip_prefix(own)
                        .and_then(|rest| rest.strip_prefix("/{"))
                        .is_some_and(|rest| rest.ends_with('}') && !rest.contains('/')),
                }
        })?;
        Some(Then::ReadBack {
            op: get.name.clone(),
            collection,
        })
    }

    fn mass(&self, op: &Operation, base: &Exchange, offset: usize) -> Option<Case> {
        let Some(Value::Object(fields)) = body_json(base) else {
            return None;
        };
        let schema = body_schema(self.api, op)?;
        let then = self.read_back(op)?;
        let mut body = fields.clone();
        let mut props = Vec::new();
        for (name, s) in &schema.properties {
            let s = self.api.resolve(s);
            if !s.read_only {
                continue;
            }
            if let Some(marker) = sec::read_only_marker(offset + props.len(), s) {
                body.insert(name.clone(), marker.clone());
                props.push((name.clone(), marker));
            }
        }
        if props.is_empty() {
            return None;
        }
        let mut first = base.request.clone();
        first.body = Some(Value::Object(body).to_string());
        Some(Case {
            code: Code::MassAssignment,
            operation: op.name.clone(),
            check: Check::Mass { props },
            probes: vec![Probe { first, then }],
        })
    }

    fn xss(&self, i: usize, op: &Operation, base: &Exchange, round: usize) -> Option<Case> {
        if !matches!(op.method, Method::Post | Method::Put | Method::Patch) {
            return None;
        }
        let Some(Value::Object(fields)) = body_json(base) else {
            return None;
        };
        let schema = body_schema(self.api, op)?;
        let mut body = fields.clone();
        let mut marked = Vec::new();
        for (j, (name, s)) in schema.properties.iter().enumerate() {
            let s = self.api.resolve(s);
            if s.read_only || !sec::free_text(s) || sec::takes_url(name, s) {
                continue;
            }
            let marker = sec::xss_marker(i, j, round);
            body.insert(name.clone(), Value::from(marker.clone()));
            marked.push((name.clone(), marker));
        }
        if marked.is_empty() {
            return None;
        }
        let mut first = base.request.clone();
        first.body = Some(Value::Object(body).to_string());
        Some(Case {
            code: Code::StoredXss,
            operation: op.name.clone(),
            check: Check::Xss { fields: marked },
            probes: vec![Probe {
                first,
                then: self.read_back(op).unwrap_or(Then::Nothing),
            }],
        })
    }

    /// The GET requests that answered `text/html` in the search, to send again.
    fn html_reads(&self) -> Vec<Probe> {
        self.api
            .operations
            .iter()
            .filter(|op| op.method == Method::Get)
            .filter_map(|op| self.bases.by_op.get(&op.name))
            .filter(|ex| {
                ex.header("content-type")
                    .is_some_and(|c| crate::oracles::conformance::essence(c) == "text/html")
            })
            .map(|ex| Probe::one(ex.request.clone()))
            .collect()
    }

    fn hidden(&self) -> Vec<Case> {
        let mut templates: Vec<&str> = Vec::new();
        for op in &self.api.operations {
            if !templates.contains(&op.path.as_str()) {
                templates.push(&op.path);
            }
        }
        let mut out = Vec::new();
        let mut calibrated: Vec<&str> = Vec::new();
        for template in templates {
            let on_path: Vec<&Operation> = self
                .api
                .operations
                .iter()
                .filter(|o| o.path == template)
                .collect();
            // A GET's path first: it carries no body, and reads.
            let Some(base) = on_path
                .iter()
                .filter_map(|o| self.bases.by_op.get(&o.name))
                .min_by_key(|ex| ex.request.method != "GET")
            else {
                continue;
            };
            let path = strip_query(&base.request.path).to_string();
            for method in METHODS {
                let listed = on_path.iter().any(|o| o.method.as_str() == method);
                if listed || (self.read_only && method != "GET") {
                    continue;
                }
                let body = matches!(method, "POST" | "PUT" | "PATCH");
                let first = RequestSpec {
                    operation: format!("{method} {template}"),
                    method: method.into(),
                    path: path.clone(),
                    body: body.then(|| "{}".to_string()),
                    content_type: body.then(|| "application/json".to_string()),
                    ..Default::default()
                };
                if !calibrated.contains(&method) {
                    calibrated.push(method);
                    let nowhere = RequestSpec {
                        operation: format!("{method} {NOWHERE}"),
                        path: NOWHERE.to_string(),
                        ..first.clone()
                    };
                    out.insert(
                        0,
                        Case {
                            code: Code::HiddenEndpoint,
                            operation: nowhere.operation.clone(),
                            check: Check::Nowhere {
                                method: method.into(),
                            },
                            probes: vec![Probe::one(nowhere)],
                        },
                    );
                }
                out.push(Case {
                    code: Code::HiddenEndpoint,
                    operation: first.operation.clone(),
                    check: Check::Hidden {
                        method: method.into(),
                        template: template.to_string(),
                        like: Box::new((*base).clone()),
                    },
                    probes: if base.request.method == "GET" {
                        let listed = RequestSpec {
                            path: path.clone(),
                            ..base.request.clone()
                        };
                        vec![Probe::one(listed), Probe::one(first)]
                    } else {
                        vec![Probe::one(first)]
                    },
                });
            }
        }
        out
    }
}

/// The JSON body a request sent, when it sent one.
fn body_json(ex: &Exchange) -> Option<Value> {
    let body = ex.request.body.as_deref()?;
    let json = ex
        .request
        .content_type
        .as_deref()
        .is_none_or(|c| c.contains("json"));
    json.then(|| serde_json::from_str(body).ok()).flatten()
}

/// The JSON request body schema of an operation, resolved.
fn body_schema<'a>(api: &'a Api, op: &'a Operation) -> Option<&'a crate::model::Schema> {
    let (media, schema) = op.request_body.as_ref()?.primary_schema()?;
    media.contains("json").then(|| api.resolve(schema))
}

fn strip_query(path: &str) -> &str {
    path.split_once('?').map_or(path, |(p, _)| p)
}

fn query_names(path: &str) -> Vec<String> {
    path.split_once('?')
        .map(|(_, q)| {
            url::form_urlencoded::parse(q.as_bytes())
                .map(|(k, _)| k.into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn encode_segment(value: &str) -> String {
    percent_encoding::utf8_percent_encode(value, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// `base` with one input set to `value`.
fn with_input(
    op: &Operation,
    base: &RequestSpec,
    place: Place,
    name: &str,
    value: Value,
) -> Option<RequestSpec> {
    let text = || match &value {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    };
    let mut req = base.clone();
    match place {
        Place::Path => {
            let (path, query) = base
                .path
                .split_once('?')
                .map_or((base.path.as_str(), None), |(p, q)| (p, Some(q)));
            let t: Vec<&str> = op.path.split('/').collect();
            let mut p: Vec<String> = path.split('/').map(str::to_string).collect();
            if t.len() != p.len() {
                return None;
            }
            let at = t.iter().position(|s| *s == format!("{{{name}}}"))?;
            p[at] = encode_segment(&text());
            req.path = p.join("/");
            if let Some(q) = query {
                req.path = format!("{}?{q}", req.path);
            }
        }
        Place::Query => {
            let (path, query) = base.path.split_once('?')?;
            let mut out = url::form_urlencoded::Serializer::new(String::new());
            for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
                if k == name {
                    out.append_pair(&k, &text());
                } else {
                    out.append_pair(&k, &v);
                }
            }
            req.path = format!("{path}?{}", out.finish());
        }
        Place::Body => {
            let Some(Value::Object(mut fields)) = base
                .body
                .as_deref()
                .and_then(|b| serde_json::from_str(b).ok())
            else {
                return None;
            };
            fields.insert(name.to_string(), value);
            req.body = Some(Value::Object(fields).to_string());
        }
    }
    Some(req)
}
