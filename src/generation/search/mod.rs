//! The search, one for every protocol: MIO over tests sampled from the
//! graph's call sequences, from resource templates and at random, mutated in
//! their values and structure, every answer judged by the oracles and fed
//! back into the property graph. A [`Protocol`] supplies the genes: how calls
//! are sampled, mutated, sent and read.
//!
//! A run starts with one call per operation (EvoMaster's initial individuals).
//! Then, with probability P_r (annealed to 0), a new test is sampled;
//! otherwise a test from the archive is mutated (for REST 1 to 10 times in a
//! chain, keeping a mutant that improves).

mod context;
pub mod edges;
mod mio;
mod protocol;
pub mod targets;

use std::collections::VecDeque;
use std::sync::Arc;

use rand::Rng;
use serde::Serialize;

pub use context::{Cx, LinkFlow, RESEQUENCE_EVERY, SearchConfig};
pub use mio::{Archive, Length, MioConfig};
pub use protocol::Protocol;

use super::test::{Sampler, SharedTest, TestCase};
use crate::execution::{Driver, Exchange, TestRun};
use crate::faults::{Faults, witness::Ledger};
use crate::graph::PropertyGraph;
use crate::graph::feedback::{Change, Feedback};
use crate::model::Api;
use crate::oracles::{Checker, echoes::Echoes};

/// What the search did, for the report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SearchSummary {
    /// Tests run.
    pub tests: u64,
    /// Testing targets seen.
    pub targets: usize,
    /// Testing targets covered.
    pub covered: usize,
    /// Covered targets by kind (`status`, `ok`, `fault`, `edge`, `flow`).
    pub covered_by_kind: std::collections::BTreeMap<String, usize>,
    /// Tests in the final suite (the archive).
    pub suite: usize,
    /// Call sequences built from the graph (last build).
    pub graph_sequences: usize,
    /// Tests sampled (not mutated) per sampler.
    pub sampled: std::collections::BTreeMap<String, u64>,
    /// Archive improvements per sampler of origin.
    pub improvements: std::collections::BTreeMap<String, u64>,
    /// Covered targets with the exchange that first covered each.
    pub covered_at: Vec<(String, u64)>,
    /// Constraints read from the description's prose and from refusals
    /// (400, 422), which later values keep.
    pub learnt_constraints: Vec<crate::generation::constraints::Learnt>,
    /// Requests per phase of the search: `initial` (one call per
    /// operation), `edge_pass` (every input's classes of edge values, the
    /// most productive first), `search` (MIO).
    pub phases: std::collections::BTreeMap<String, u64>,
    /// Per class of edge value the negative tests sent: requests, the
    /// inputs and operations it reached, the operations it broke (5xx).
    pub edge_classes:
        std::collections::BTreeMap<String, crate::generation::search::edges::ClassTally>,
    /// Whether every operation's (input, class) pairs each had a value.
    pub edge_pass_complete: bool,
    /// Answers per second, measured over the first requests (what the
    /// edge pass planned with) and over the whole search.
    pub answer_rate: AnswerRate,
}

/// The server's measured speed.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct AnswerRate {
    /// Over the first [`EARLY_REQUESTS`] answers (or all, when fewer came).
    pub early: f64,
    /// Over the whole search.
    pub search: f64,
}

/// Answers after which the server's speed is first measured.
pub const EARLY_REQUESTS: u64 = 100;

/// Where the search is: the first call of each operation, then the edge
/// pass, then MIO.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Initial,
    EdgePass,
    Search,
}

impl Phase {
    fn as_str(self) -> &'static str {
        match self {
            Phase::Initial => "initial",
            Phase::EdgePass => "edge_pass",
            Phase::Search => "search",
        }
    }
}

/// Share of the search's budget the edge pass may take, at most: on a slow
/// server it cannot hold every (input, class) pair, and the search still
/// needs time to build the states that deeper faults need.
const EDGE_PASS_BUDGET: f64 = 0.5;

/// Share of the tests the edge pass gives to negative tests while it lasts;
/// the rest keeps the search building bases (a 2xx of each operation) that
/// the edge values ride on.
const EDGE_PASS_SHARE: f64 = 0.8;

/// Slow answers (or timeouts, dropped connections, invalid HTTP) in a row
/// after which an operation is called less often.
const SLOW_AFTER: u32 = 3;

/// An operation whose answers keep breaking gets one over this of a fair
/// share of the requests.
const BROKEN_SHARE_DIVISOR: u64 = 10;

/// An answer that took this long counts as slow: an endpoint that sleeps
/// (httpbin's `/delay/{n}`, `/drip`) costs seconds per request, and a run
/// under a time budget spends itself there unless it calls it less.
const SLOW_ANSWER: std::time::Duration = std::time::Duration::from_secs(2);

/// An operation whose requests took more than this many fair shares of the
/// time spent waiting for answers (and at least [`HOG_MIN`]), each this
/// many times as long as the average request and at least
/// [`SLOW_AVERAGE`], counts as slow too: a sleeping endpoint whose bad
/// inputs fail fast.
const HOG_SHARES: u32 = 4;

/// The average answer an operation must take to count as slow by its
/// share: a cheap listing that many tests call first takes many fair shares
/// of the time (the demo's `listAuthors`, 1.3 ms an answer), and holding it
/// to one would starve the tests that need it.
const SLOW_AVERAGE: std::time::Duration = std::time::Duration::from_millis(250);

/// Time an operation's requests must have taken before it can count as
/// taking more than its share: fast servers never trip it.
const HOG_MIN: std::time::Duration = std::time::Duration::from_secs(2);

/// Share of the tests after the initial ones that are negative or boundary
/// tests, while some are left: most server errors outside the valid input
/// space show on the first probe of an input (Schemathesis's coverage phase
/// finds them in its first few thousand requests), and the rest of the
/// search keeps building the states they start from.
const NEGATIVE_SHARE: f64 = 0.25;

/// Tests set aside in a row, at most, before one is run anyway.
const MAX_SKIPS: usize = 32;

/// When an operation was found slow.
#[derive(Debug, Clone, Copy)]
struct SlowSince {
    /// Its requests then.
    requests: u64,
    /// The time they had taken.
    spent: std::time::Duration,
}

/// An operation whose answers were slow, and what it cost (a warning, not
/// a fault: slowness alone breaks no promise of the description).
#[derive(Debug, Clone, PartialEq)]
pub struct SlowOperation {
    /// Its name.
    pub operation: String,
    /// Requests it got before it was found slow, and their time.
    pub requests_before: u64,
    /// See `requests_before`.
    pub spent_before: std::time::Duration,
    /// Requests it got in all, and their time.
    pub requests: u64,
    /// See `requests`.
    pub spent: std::time::Duration,
    /// Its slowest request.
    pub slowest: std::time::Duration,
    /// The time every request of the search took waiting for its answer.
    pub total: std::time::Duration,
    /// Its fair share of that time: one over the operations called.
    pub share: f64,
}

impl std::fmt::Display for SlowOperation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secs = |d: std::time::Duration| d.as_secs_f64();
        let average = secs(self.spent_before) / self.requests_before.max(1) as f64;
        write!(
            f,
            "{} answered slowly: {} request(s) took {:.1}s (slowest {:.2}s, {:.2}s on average) before it was held to its share of the time spent waiting for answers ({:.0}%); in all it got {} request(s), {:.1}s of {:.1}s ({:.0}%). Slowness is not a fault; --exclude '{}' leaves it out",
            self.operation,
            self.requests_before,
            secs(self.spent_before),
            secs(self.slowest),
            average,
            self.share * 100.0,
            self.requests,
            secs(self.spent),
            secs(self.total),
            100.0 * secs(self.spent) / secs(self.total).max(1e-9),
            self.operation,
        )
    }
}

/// A chain of mutations from one archived test.
struct Chain<G> {
    current: SharedTest<G>,
    remaining: usize,
}

/// The MIO search over one protocol's tests.
pub struct Search<P: Protocol> {
    cx: Cx,
    protocol: P,
    initial: VecDeque<usize>,
    archive: Archive<TestCase<P::Genes>>,
    chain: Option<Chain<P::Genes>>,
    checker: Checker,
    faults: Faults,
    ledger: Ledger,
    /// What the run's accepted wrong inputs made the server store.
    echoes: Echoes,
    /// Per operation: requests in a row that timed out or were answered slowly.
    timeouts: Vec<u32>,
    /// Per operation: requests in a row that got no answer or invalid HTTP.
    broken: Vec<u32>,
    /// Per operation: whether it was found slow (then it gets no more than
    /// its fair share of the time spent waiting for answers), and when.
    slow: Vec<Option<SlowSince>>,
    /// Per operation: requests answered or failed, and the longest one.
    answers: Vec<(u64, std::time::Duration)>,
    /// Per operation: the server asked to wait on it past the budget.
    aside: Vec<bool>,
    /// Per operation: time its requests took, and the total over all.
    spent: Vec<std::time::Duration>,
    spent_total: std::time::Duration,
    /// Requests counted in `spent_total`.
    requests_total: u64,
    /// Operation name → position, to read exchanges back.
    positions: std::collections::HashMap<String, usize>,
    /// Where the search is.
    phase: Phase,
    /// Requests answered per phase, in [`Phase`] order.
    phase_requests: [u64; 3],
    /// Whether the edge pass ended with every pair tried.
    edge_pass_complete: bool,
    /// Answers per second over the first [`EARLY_REQUESTS`].
    early_rate: Option<f64>,
    /// The identity tests, with a second identity.
    identities: Option<crate::generation::identities::Planner>,
}

impl<G> Length for TestCase<G> {
    fn calls(&self) -> usize {
        self.len()
    }
}

impl<P: Protocol> Search<P> {
    /// A search over `api` with its `graph`, through `protocol`; with
    /// `feedback`, the graph is refined from the answers. With
    /// `config.use_graph` false (`--no-graph`) the graph neither guides the
    /// tests nor learns.
    pub fn new(
        protocol: P,
        api: Arc<Api>,
        graph: PropertyGraph,
        feedback: Option<Feedback>,
        config: SearchConfig,
    ) -> Search<P> {
        let mut checker = Checker::new(&api, config.skip_checks.clone(), config.target.clone());
        if let Some(main) = &config.main_identity {
            checker = checker.with_main_identity(main);
        }
        // The protocol decides which operations are callable; the shared
        // state (templates, sequences) is built over those.
        let ops = protocol.operations(&api, &config);
        let initial = protocol.initial_order(&api, &ops).into();
        let timeouts = vec![0; api.operations.len()];
        let broken = vec![0; api.operations.len()];
        let slow = vec![None; api.operations.len()];
        let answers = vec![(0, std::time::Duration::ZERO); api.operations.len()];
        let aside = vec![false; api.operations.len()];
        let spent = vec![std::time::Duration::ZERO; api.operations.len()];
        let positions = api.operation_positions();
        let identities = crate::generation::identities::Planner::new(
            api.clone(),
            &config.identities,
            config.read_only,
        );
        let cx = Cx::new(api, graph, feedback, config, ops);
        Search {
            timeouts,
            broken,
            slow,
            answers,
            aside,
            spent,
            spent_total: std::time::Duration::ZERO,
            requests_total: 0,
            positions,
            cx,
            protocol,
            initial,
            archive: Archive::default(),
            chain: None,
            checker,
            faults: Faults::new(),
            ledger: Ledger::new(),
            echoes: Echoes::new(),
            phase: Phase::Initial,
            phase_requests: [0; 3],
            edge_pass_complete: false,
            early_rate: None,
            identities,
        }
    }

    /// The API searched.
    pub fn api(&self) -> &Api {
        &self.cx.api
    }

    /// The graph, as refined so far.
    pub fn graph(&self) -> &PropertyGraph {
        &self.cx.graph
    }

    /// The changes feedback made to the graph, in order.
    pub fn changes(&self) -> &[Change] {
        &self.cx.changes
    }

    /// The faults found so far.
    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    /// The oracles the search applies.
    pub fn checker(&self) -> &Checker {
        &self.checker
    }

    /// Which request created which id, for completing witnesses.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// Gives the ledger the values answers gave that the generator still
    /// holds, once the search is over: scripts built from then on tell
    /// the server's values from their own.
    pub fn note_given(&mut self) {
        for (name, value) in self.protocol.given() {
            self.ledger.note_given(&name, &value);
        }
    }

    /// The ledger, to record what is sent after the search.
    pub fn ledger_mut(&mut self) -> &mut Ledger {
        &mut self.ledger
    }

    /// What the run's accepted wrong inputs planted, for witnesses that do
    /// not show their fault without it.
    pub fn echoes(&self) -> &Echoes {
        &self.echoes
    }

    /// What the run planted, taken for the replays after the search.
    pub fn take_echoes(&mut self) -> Echoes {
        std::mem::take(&mut self.echoes)
    }

    /// The ledger, taken for the replays after the search.
    pub fn take_ledger(&mut self) -> Ledger {
        std::mem::take(&mut self.ledger)
    }

    /// The protocol, for what only it knows (GraphQL's schema coverage).
    pub fn protocol(&self) -> &P {
        &self.protocol
    }

    /// The final test suite: the archive's tests for covered targets.
    pub fn suite(&self) -> Vec<(SharedTest<P::Genes>, Vec<String>)> {
        self.archive.suite()
    }

    /// The final suite as `suite.json` holds it: per test, the targets it
    /// covers, its sampler, and its calls with the inputs sent when no
    /// earlier call of the test gave a value.
    pub fn suite_document(&self) -> serde_json::Value {
        let tests: Vec<serde_json::Value> = self
            .suite()
            .iter()
            .map(|(test, covers)| {
                let calls: Vec<serde_json::Value> = test
                    .calls
                    .iter()
                    .map(|c| {
                        let op = &self.cx.api.operations[c.op];
                        let mut call = serde_json::json!({
                            "operation": op.name,
                            "method": op.method.as_str(),
                            "path": op.path,
                        });
                        if let (Some(call), serde_json::Value::Object(inputs)) =
                            (call.as_object_mut(), self.protocol.describe(&self.cx, c))
                        {
                            call.extend(inputs);
                        }
                        call
                    })
                    .collect();
                serde_json::json!({
                    "covers": covers,
                    "sampler": test.sampler.as_str(),
                    "calls": calls,
                })
            })
            .collect();
        serde_json::json!({ "tests": tests })
    }

    /// Per consumes link (schema, operation): values passed along it, the
    /// consumer's successes after them and its other answers.
    pub fn link_flows(&self) -> &std::collections::BTreeMap<(String, String), LinkFlow> {
        &self.cx.link_flows
    }

    /// The operations found slow, with their times.
    pub fn slow_operations(&self) -> Vec<SlowOperation> {
        let share = 1.0 / self.cx.ops.len().max(1) as f64;
        self.slow
            .iter()
            .enumerate()
            .filter_map(|(op, since)| {
                let since = since.as_ref()?;
                let (requests, slowest) = self.answers[op];
                Some(SlowOperation {
                    operation: self.cx.api.operations[op].name.clone(),
                    requests_before: since.requests,
                    spent_before: since.spent,
                    requests,
                    spent: self.spent[op],
                    slowest,
                    total: self.spent_total,
                    share,
                })
            })
            .collect()
    }

    /// Lets the identity planner ask the graph which property a path
    /// parameter takes (a pool's `name`), as the REST sampler does.
    pub(crate) fn advise_identities(
        &mut self,
        properties: Vec<std::collections::BTreeMap<String, String>>,
    ) {
        if let Some(planner) = &mut self.identities {
            planner.set_path_properties(properties);
        }
    }

    /// Why other identities were given but no identity test on a created
    /// resource ran, with what to do; `None` when one ran or none were
    /// given.
    pub fn identity_silence(&self) -> Option<String> {
        if self.cx.config.identities.is_empty() {
            return None;
        }
        match &self.identities {
            Some(planner) => planner.silence(),
            None => Some(format!(
                "identities were given ({}), but the identity tests are planned for REST APIs only: no identity check ran on this GraphQL API",
                self.cx.config.identities.join(", ")
            )),
        }
    }

    /// What the search did so far.
    pub fn summary(&self) -> SearchSummary {
        let mut by_kind = std::collections::BTreeMap::new();
        let mut covered_at = Vec::new();
        for (t, seq) in self.archive.covered() {
            let kind = t.split(':').next().unwrap_or("").to_string();
            *by_kind.entry(kind).or_insert(0) += 1;
            covered_at.push((t.to_string(), seq));
        }
        SearchSummary {
            tests: self.cx.tests,
            targets: self.archive.target_count(),
            covered: self.archive.covered_count(),
            covered_by_kind: by_kind,
            suite: self.archive.suite().len(),
            graph_sequences: self.cx.sequences.len(),
            sampled: Sampler::ALL
                .iter()
                .map(|s| (s.as_str().to_string(), self.cx.sampled[s.index()]))
                .collect(),
            improvements: Sampler::ALL
                .iter()
                .map(|s| (s.as_str().to_string(), self.cx.improvements[s.index()]))
                .collect(),
            covered_at,
            learnt_constraints: self.protocol.learnt(),
            phases: [Phase::Initial, Phase::EdgePass, Phase::Search]
                .iter()
                .zip(self.phase_requests)
                .map(|(p, n)| (p.as_str().to_string(), n))
                .chain(
                    self.identities
                        .as_ref()
                        .map(|p| ("identities".to_string(), p.requests)),
                )
                .collect(),
            edge_classes: self.protocol.edge_classes(),
            edge_pass_complete: self.edge_pass_complete,
            answer_rate: AnswerRate {
                early: self.early_rate.unwrap_or_else(|| self.rate()),
                search: self.rate(),
            },
        }
    }

    /// Answers per second so far.
    fn rate(&self) -> f64 {
        self.cx.requests as f64 / self.cx.started.elapsed().as_secs_f64().max(1e-3)
    }

    /// Whether the edge pass goes on: pairs are left and its share of the
    /// budget is not spent. Once over, it does not come back; the negative
    /// tests left go on at [`NEGATIVE_SHARE`].
    fn edge_pass_goes_on(&mut self) -> bool {
        if self.phase != Phase::EdgePass {
            return false;
        }
        let left = self.protocol.edges_left(&self.cx);
        if left && self.cx.spent() < EDGE_PASS_BUDGET {
            return true;
        }
        self.edge_pass_complete = !left;
        self.phase = Phase::Search;
        false
    }

    /// The final suite as runs to replay (without follow-up requests), each
    /// with a title naming the targets it covers.
    /// Tests that call a slow operation come last, so that they cannot
    /// keep the others from being recorded.
    pub fn suite_runs(&mut self) -> Vec<(Box<dyn TestRun>, String)> {
        let mut suite = self.suite();
        suite.sort_by_key(|(test, _)| test.calls.iter().any(|c| self.slow[c.op].is_some()));
        suite
            .into_iter()
            .map(|(test, covers)| {
                let run: Box<dyn TestRun> =
                    Box::new(self.protocol.start(&mut self.cx, (*test).clone(), false));
                (run, format!("Covers: {}", covers.join(", ")))
            })
            .collect()
    }

    /// A new test, sampled as the search samples one.
    pub fn sample(&mut self) -> TestCase<P::Genes> {
        self.protocol.sample(&mut self.cx)
    }

    /// Starts `test` as the search runs it (with follow-ups).
    pub fn run(&mut self, test: TestCase<P::Genes>) -> P::Run {
        self.protocol.start(&mut self.cx, test, true)
    }

    fn start(&mut self, test: TestCase<P::Genes>) -> Box<dyn TestRun> {
        Box::new(self.protocol.start(&mut self.cx, test, true))
    }

    /// The next test after the initial ones: a mutant of the current chain,
    /// a new sample (P_r), or a mutant of an archived test.
    fn next_case(&mut self) -> TestCase<P::Genes> {
        if let Some(chain) = &mut self.chain {
            if chain.remaining > 0 {
                chain.remaining -= 1;
                let base = chain.current.clone();
                return self.protocol.mutate(&mut self.cx, &base);
            }
            self.chain = None;
        }
        let spent = self.cx.spent();
        let mio = self.cx.config.mio;
        let p_r = mio.anneal(spent, mio.random_sampling, 0.0);
        if self.cx.rng.random_bool(p_r.clamp(0.0, 1.0)) {
            return self.protocol.sample(&mut self.cx);
        }
        match self.archive.sample(&mut self.cx.rng) {
            Some(base) => {
                if P::CHAINS {
                    let n = mio
                        .anneal(spent, mio.start_mutations as f64, mio.end_mutations as f64)
                        .round()
                        .max(1.0) as usize;
                    self.chain = Some(Chain {
                        current: base.clone(),
                        remaining: n - 1,
                    });
                }
                self.protocol.mutate(&mut self.cx, &base)
            }
            None => self.protocol.sample(&mut self.cx),
        }
    }

    /// Whether to set `test` aside: it calls a slow operation that has
    /// taken its fair share of the time spent waiting for answers (one over
    /// the operations called), so that it cannot starve the others. Once
    /// the others have waited long enough, its turn comes again: a
    /// recovered endpoint is noticed.
    fn too_slow(&self, test: &TestCase<P::Genes>) -> bool {
        let ops = self.cx.ops.len().max(1) as u32;
        let share = self.spent_total / ops;
        // Its requests would not be sent at all.
        if test.calls.iter().any(|c| self.aside[c.op]) {
            return true;
        }
        // An operation that keeps dropping the connection or answering
        // invalid HTTP answers fast, so its time share never fills: it gets
        // a fraction of a fair share of the requests instead.
        let broken_share = self.requests_total / u64::from(ops) / BROKEN_SHARE_DIVISOR;
        test.calls.iter().any(|c| {
            (self.slow[c.op].is_some() && self.spent[c.op] > share)
                || (self.broken[c.op] >= SLOW_AFTER && self.answers[c.op].0 > broken_share)
        })
    }

    /// Counts, per operation, the time its requests took and those in a row
    /// that timed out or were answered slowly, and notes when it turns slow:
    /// [`SLOW_AFTER`] such requests in a row, or more than [`HOG_SHARES`]
    /// fair shares of the time (and [`HOG_MIN`]) at a slow average, even if
    /// fast answers came in between (a sleeping endpoint whose bad inputs
    /// fail fast).
    fn note_timeouts(&mut self, exchanges: &[Exchange]) {
        let mut touched = Vec::new();
        for ex in exchanges {
            let Some(&op) = self.positions.get(&ex.request.operation) else {
                continue;
            };
            touched.push(op);
            self.spent[op] += ex.elapsed;
            self.spent_total += ex.elapsed;
            self.requests_total += 1;
            let (requests, slowest) = &mut self.answers[op];
            *requests += 1;
            *slowest = (*slowest).max(ex.elapsed);
            // A dropped connection or an answer that is not HTTP teaches
            // nothing more the tenth time: such an operation is called less.
            match &ex.failure {
                Some(f) if f.kind.is_broken_answer() => self.broken[op] += 1,
                _ if ex.status.is_some() => self.broken[op] = 0,
                _ => {}
            }
            match &ex.failure {
                // A timeout costs a whole --timeout.
                Some(f) if f.kind == crate::execution::FailureKind::Timeout => {
                    self.timeouts[op] += 1;
                }
                _ if ex.status.is_some() && ex.elapsed >= SLOW_ANSWER => self.timeouts[op] += 1,
                _ if ex.status.is_some() => self.timeouts[op] = 0,
                _ => {}
            }
        }
        let ops = self.cx.ops.len();
        for op in touched {
            let all = (self.spent_total, self.requests_total);
            let hog = hog((self.spent[op], self.answers[op].0), all, ops);
            if self.slow[op].is_none() && (self.timeouts[op] >= SLOW_AFTER || hog) {
                self.slow[op] = Some(SlowSince {
                    requests: self.answers[op].0,
                    spent: self.spent[op],
                });
            }
        }
    }
}

/// Whether an operation whose requests took `(time, requests)`, out of
/// `all` of the run's, over `ops` operations, takes far more than its share
/// of the time because its answers are slow.
fn hog(
    (spent, requests): (std::time::Duration, u64),
    (total, all): (std::time::Duration, u64),
    ops: usize,
) -> bool {
    let per =
        |time: std::time::Duration, n: u64| time / u32::try_from(n.max(1)).unwrap_or(u32::MAX);
    let share = total / u32::try_from(ops.max(1)).unwrap_or(u32::MAX) * HOG_SHARES;
    spent >= HOG_MIN
        && spent > share
        && per(spent, requests) >= SLOW_AVERAGE.max(per(total, all) * HOG_SHARES)
}

impl<P: Protocol> Search<P> {
    /// An identity test is over: its answers are judged and its faults
    /// kept like any test's, but it teaches the search nothing (it is not
    /// archived, and its requests go as other callers).
    fn identity_finished(
        &mut self,
        run: &crate::generation::identities::IdentityRun,
        exchanges: &[Exchange],
    ) {
        self.cx.requests += exchanges.len() as u64;
        if let Some(planner) = &mut self.identities {
            planner.finished(run, exchanges);
        }
        if exchanges.is_empty() {
            return;
        }
        let findings = self
            .checker
            .test_after(&self.cx.api, exchanges, &self.echoes);
        let known = self.faults.len();
        self.faults.record(exchanges, &findings, &self.ledger);
        for ex in exchanges {
            self.ledger.note(ex);
            self.echoes.note(ex);
        }
        for seq in self.faults.first_seqs_since(known) {
            self.echoes.keep_writes_before(seq);
        }
    }
}

impl<P: Protocol> Driver for Search<P> {
    fn next_test(&mut self) -> Option<Box<dyn TestRun>> {
        if self.cx.ops.is_empty() {
            return None;
        }
        if let Some(op) = self.initial.pop_front() {
            self.cx.sampled[Sampler::Initial.index()] += 1;
            let test = self.protocol.initial(&mut self.cx, op);
            return Some(self.start(test));
        }
        if self.phase == Phase::Initial {
            self.phase = Phase::EdgePass;
        }
        if let Some(planner) = &mut self.identities
            && let Some(test) = planner.next_test()
        {
            return Some(Box::new(test));
        }
        self.cx.resequence_if_stale();
        self.cx.edge_pass = self.edge_pass_goes_on();
        let share = if self.cx.edge_pass {
            EDGE_PASS_SHARE
        } else {
            NEGATIVE_SHARE
        };
        if self.cx.rng.random_bool(share) {
            // A negative test of an operation that keeps timing out is
            // dropped like any other test of it.
            if let Some(test) = self.protocol.negative(&mut self.cx)
                && !self.too_slow(&test)
            {
                self.cx.sampled[Sampler::Negative.index()] += 1;
                return Some(self.start(test));
            }
        }
        for _ in 0..MAX_SKIPS {
            let test = self.next_case();
            if !self.too_slow(&test) {
                return Some(self.start(test));
            }
        }
        let test = self.next_case();
        Some(self.start(test))
    }

    fn set_aside(&mut self, operation: &str) {
        if let Some(&op) = self.positions.get(operation) {
            self.aside[op] = true;
        }
    }

    fn finished(&mut self, test: Box<dyn TestRun>, exchanges: &[Exchange]) {
        let any: Box<dyn std::any::Any> = test;
        let any = match any.downcast::<crate::generation::identities::IdentityRun>() {
            Ok(run) => return self.identity_finished(&run, exchanges),
            Err(any) => any,
        };
        let Ok(run) = any.downcast::<P::Run>() else {
            return;
        };
        self.cx.tests += 1;
        self.cx.requests += exchanges.len() as u64;
        self.phase_requests[self.phase as usize] += exchanges.len() as u64;
        if self.early_rate.is_none() && self.cx.requests >= EARLY_REQUESTS {
            self.early_rate = Some(self.rate());
        }
        if exchanges.is_empty() {
            return;
        }
        self.note_timeouts(exchanges);
        let findings = self
            .checker
            .test_after(&self.cx.api, exchanges, &self.echoes);
        let known = self.faults.len();
        self.faults.record(exchanges, &findings, &self.ledger);
        for ex in exchanges {
            self.ledger.note(ex);
            self.echoes.note(ex);
        }
        for seq in self.faults.first_seqs_since(known) {
            self.echoes.keep_writes_before(seq);
        }
        if let Some(planner) = &mut self.identities {
            let positions = &self.positions;
            planner.observe(exchanges, |e| positions.get(&e.request.operation).copied());
        }
        let reached = self
            .protocol
            .learn(&mut self.cx, &run, exchanges, &findings);
        let n = self.cx.config.mio.population_at(self.cx.spent());
        let seq = exchanges.last().map_or(0, |e| e.seq);
        let test = P::ran(*run, exchanges);
        let sampler = test.sampler;
        let test: SharedTest<P::Genes> = Arc::new(test);
        if self.archive.update(&test, &reached, n, seq) {
            self.cx.improvements[sampler.index()] += 1;
            if let Some(chain) = &mut self.chain {
                chain.current = test;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::hog;

    #[test]
    fn an_operation_is_slow_by_its_answers_not_by_how_often_it_is_called() {
        let ms = Duration::from_millis;
        // The demo's listAuthors, 30 s into its run: 3,502 requests took
        // 4.7 s of the 18 s some 110,000 requests waited, over 17
        // operations. More than four fair shares, but 1.3 ms an answer: a
        // listing many tests call first.
        assert!(!hog((ms(4_700), 3_502), (ms(18_000), 110_000), 17));
        // A 600 ms endpoint after four answers, among six operations.
        assert!(hog((ms(2_400), 4), (ms(2_500), 60), 6));
        // Its answers slow, but under 2 s in all: not yet.
        assert!(!hog((ms(1_800), 3), (ms(1_900), 50), 6));
        // A whole API at 300 ms an answer: none is slower than the rest.
        assert!(!hog((ms(9_000), 30), (ms(30_000), 100), 6));
    }
}
