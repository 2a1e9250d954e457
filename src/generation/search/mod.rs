//! The search: MIO over tests sampled from the graph's call sequences, from
//! resource templates and at random, mutated in their values and structure,
//! with every response fed back into the value pool and the property graph.
//!
//! A run starts with one call per operation (EvoMaster's initial individuals).
//! Then, with probability P_r (annealed to 0), a new test is sampled, the
//! sampler chosen by how many archive improvements each produced (the
//! resource paper's archive-based strategy); otherwise a test from the archive
//! is mutated, 1 to 10 times in a chain, keeping a mutant that improves.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use serde::Serialize;

mod learning;
mod mutate;
mod sampling;

use super::flow::FlowRun;
use super::mio::{Archive, MioConfig};
use super::mutation::Heat;
use super::plan::Plan;
use super::pool::ValuePool;
use super::sequences::call_sequences;
use super::templates::Resources;
use super::testcase::{Call, Group, Sampler, SharedTest, TestCase};
use super::values::Rng64;
use crate::execution::{Driver, Exchange, TestRun};
use crate::graph::feedback::{Change, Feedback};
use crate::graph::PropertyGraph;
use crate::model::{Api, Method};
use crate::oracles::{witness::Ledger, Checker, Faults};

/// Values kept per key in the run's pool.
const POOL_DEPTH: usize = 16;

/// Most call sequences kept from the graph.
const MAX_SEQUENCES: usize = 2_000;

/// Tests between two rebuilds of the call sequences after the graph changed
/// (a rebuild costs milliseconds; edges flap between suspended and active).
const RESEQUENCE_EVERY: u64 = 500;

/// What the search is told about the run.
#[derive(Debug, Clone)]
pub struct SearchConfig {
    /// MIO's parameters.
    pub mio: MioConfig,
    /// Seed of every choice.
    pub seed: u64,
    /// Only operations that cannot change state.
    pub read_only: bool,
    /// Use the property graph (false: the `--no-graph` ablation).
    pub use_graph: bool,
    /// The run's request cap, which measures the budget spent when set.
    pub max_requests: Option<u64>,
    /// The run's time budget, which measures it otherwise.
    pub budget: Option<Duration>,
    /// Oracles turned off (their faults are not targets either).
    pub skip_checks: Vec<String>,
    /// The run's target, to follow `Location` headers under it.
    pub target: Option<url::Url>,
}

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
}

/// A chain of mutations from one archived test.
struct Chain {
    current: SharedTest,
    remaining: usize,
}

/// The MIO search driver.
pub struct SearchDriver {
    api: Arc<Api>,
    graph: PropertyGraph,
    feedback: Option<Feedback>,
    config: SearchConfig,
    plan: Arc<Plan>,
    sequences: Vec<Vec<usize>>,
    cursor: usize,
    stale_since: Option<u64>,
    sequenced_shape: Vec<(usize, bool)>,
    resources: Resources,
    ops: Vec<usize>,
    initial: VecDeque<usize>,
    rng: Rng64,
    pool: ValuePool,
    last_success: Vec<Option<Call>>,
    archive: Archive,
    checker: Checker,
    faults: Faults,
    ledger: Ledger,
    started: Instant,
    requests: u64,
    tests: u64,
    sampled: [u64; 4],
    improvements: [u64; 4],
    chain: Option<Chain>,
    changes: Vec<Change>,
}

fn sampler_index(s: Sampler) -> usize {
    match s {
        Sampler::Initial => 0,
        Sampler::Graph => 1,
        Sampler::Template => 2,
        Sampler::Random => 3,
    }
}

impl SearchDriver {
    /// A search over `api` with its `graph`; with `feedback`, the graph is
    /// refined from the responses.
    pub fn new(
        api: Arc<Api>,
        graph: PropertyGraph,
        feedback: Option<Feedback>,
        config: SearchConfig,
    ) -> SearchDriver {
        let read_only = config.read_only;
        let allowed: Vec<bool> = api
            .operations
            .iter()
            .map(|op| {
                !matches!(op.method, Method::GraphqlSubscription | Method::Trace)
                    && (!read_only || op.method.is_safe())
            })
            .collect();
        let ops: Vec<usize> = (0..api.operations.len()).filter(|&i| allowed[i]).collect();
        // Creations first, deletions last, parents before children, so that the
        // first calls leave ids for the later ones.
        let rank = |m: Method| match m {
            Method::Post | Method::GraphqlMutation => 0,
            Method::Put => 1,
            Method::Get | Method::GraphqlQuery | Method::Head | Method::Options => 2,
            Method::Patch => 3,
            Method::Delete => 5,
            _ => 4,
        };
        let mut initial = ops.clone();
        initial.sort_by_key(|&i| {
            let op = &api.operations[i];
            (rank(op.method), op.path.matches('/').count(), i)
        });
        let resources = Resources::new(&api, &|i| allowed[i]);
        let plan = if config.use_graph {
            Plan::from_graph(&api, &graph)
        } else {
            Plan::empty(&api)
        };
        let mut driver = SearchDriver {
            rng: Rng64::seed_from_u64(config.seed),
            last_success: vec![None; api.operations.len()],
            checker: Checker::new(&api, config.skip_checks.clone(), config.target.clone()),
            faults: Faults::new(),
            ledger: Ledger::new(),
            plan: Arc::new(plan),
            feedback: if config.use_graph { feedback } else { None },
            sequences: Vec::new(),
            cursor: 0,
            stale_since: None,
            sequenced_shape: Vec::new(),
            resources,
            ops,
            initial: initial.into(),
            pool: ValuePool::new(POOL_DEPTH),
            archive: Archive::default(),
            started: Instant::now(),
            requests: 0,
            tests: 0,
            sampled: [0; 4],
            improvements: [0; 4],
            chain: None,
            changes: Vec::new(),
            api,
            graph,
            config,
        };
        driver.resequence();
        driver
    }

    /// The graph, as refined so far.
    pub fn graph(&self) -> &PropertyGraph {
        &self.graph
    }

    /// The changes feedback made to the graph, in order.
    pub fn changes(&self) -> &[Change] {
        &self.changes
    }

    /// The final test suite: the archive's tests for covered targets.
    pub fn suite(&self) -> Vec<(SharedTest, Vec<String>)> {
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
                        let op = &self.api.operations[c.op];
                        let inputs: Vec<serde_json::Value> = op
                            .parameters
                            .iter()
                            .zip(&c.params)
                            .filter(|(_, s)| s.present)
                            .map(|(p, s)| {
                                serde_json::json!({
                                    "in": p.location.as_str(),
                                    "name": p.name,
                                    "value": s.value,
                                })
                            })
                            .collect();
                        let mut call = serde_json::json!({
                            "operation": op.name,
                            "method": op.method.as_str(),
                            "path": op.path,
                            "parameters": inputs,
                            "takes_earlier_values": c.bind,
                        });
                        if let Some((mime, body)) = &c.body {
                            call["content_type"] = mime.clone().into();
                            call["body"] = body.clone();
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

    /// What the search did so far.
    pub fn summary(&self) -> SearchSummary {
        let mut by_kind = std::collections::BTreeMap::new();
        let mut covered_at = Vec::new();
        for (t, seq) in self.archive.covered() {
            let kind = t.split(':').next().unwrap_or("").to_string();
            *by_kind.entry(kind).or_insert(0) += 1;
            covered_at.push((t.to_string(), seq));
        }
        let names = [
            Sampler::Initial,
            Sampler::Graph,
            Sampler::Template,
            Sampler::Random,
        ];
        SearchSummary {
            tests: self.tests,
            targets: self.archive.target_count(),
            covered: self.archive.covered_count(),
            covered_by_kind: by_kind,
            suite: self.archive.suite().len(),
            graph_sequences: self.sequences.len(),
            sampled: names
                .iter()
                .map(|s| (s.as_str().to_string(), self.sampled[sampler_index(*s)]))
                .collect(),
            improvements: names
                .iter()
                .map(|s| (s.as_str().to_string(), self.improvements[sampler_index(*s)]))
                .collect(),
            covered_at,
        }
    }

    /// The share of the budget spent: by requests when they are capped (so a
    /// seeded run repeats exactly), else by the clock.
    fn spent(&self) -> f64 {
        if let Some(max) = self.config.max_requests {
            return self.requests as f64 / max.max(1) as f64;
        }
        if let Some(b) = self.config.budget {
            return self.started.elapsed().as_secs_f64() / b.as_secs_f64().max(1e-9);
        }
        self.requests as f64 / 100_000.0
    }

    fn heat(&self) -> Heat {
        let focus = self.config.mio.focus;
        Heat {
            progress: if focus <= 0.0 {
                1.0
            } else {
                (self.spent() / focus).min(1.0)
            },
        }
    }

    /// Rebuilds the graph's call sequences (after the graph changed).
    fn resequence(&mut self) {
        self.stale_since = None;
        if !self.config.use_graph {
            self.sequences.clear();
            return;
        }
        // Sequences depend only on which edges exist and are active.
        let shape: Vec<(usize, bool)> = self
            .graph
            .graph
            .edge_indices()
            .map(|e| {
                (
                    e.index(),
                    self.graph.graph[e].state == crate::graph::EdgeState::Active,
                )
            })
            .collect();
        if shape == self.sequenced_shape && !self.sequences.is_empty() {
            return;
        }
        self.sequenced_shape = shape;
        let read_only = self.config.read_only;
        let api = &self.api;
        let allowed = |i: usize| {
            let m = api.operations[i].method;
            !matches!(m, Method::GraphqlSubscription | Method::Trace) && (!read_only || m.is_safe())
        };
        self.sequences = call_sequences(
            api,
            &self.graph,
            self.config.mio.max_length,
            MAX_SEQUENCES,
            &allowed,
        );
        self.cursor = 0;
    }

    fn start(&mut self, test: TestCase) -> Box<dyn TestRun> {
        Box::new(
            FlowRun::new(self.api.clone(), self.plan.clone(), test)
                .with_probes(super::flow::PROBE, self.config.target.clone()),
        )
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

    /// The ledger, to record what is sent after the search.
    pub fn ledger_mut(&mut self) -> &mut Ledger {
        &mut self.ledger
    }

    /// The final suite as runs to replay (without follow-up requests), each
    /// with a title naming the targets it covers.
    pub fn suite_runs(&self) -> Vec<(Box<dyn TestRun>, String)> {
        self.suite()
            .into_iter()
            .map(|(test, covers)| {
                let run: Box<dyn TestRun> = Box::new(
                    FlowRun::new(self.api.clone(), self.plan.clone(), (*test).clone())
                        .with_probes(0.0, self.config.target.clone()),
                );
                let title = format!("Covers: {}", covers.join(", "));
                (run, title)
            })
            .collect()
    }
}

impl Driver for SearchDriver {
    fn next_test(&mut self) -> Option<Box<dyn TestRun>> {
        if self.ops.is_empty() {
            return None;
        }
        if let Some(op) = self.initial.pop_front() {
            let call = self.fresh_call(op, 0, false);
            self.sampled[sampler_index(Sampler::Initial)] += 1;
            let test = TestCase {
                calls: vec![call],
                groups: vec![Group {
                    id: 0,
                    template: None,
                    target: op,
                }],
                sampler: Sampler::Initial,
                seed: self.rng.random(),
            };
            return Some(self.start(test));
        }
        if self
            .stale_since
            .is_some_and(|since| self.tests >= since + RESEQUENCE_EVERY)
        {
            self.resequence();
        }
        if let Some(chain) = &mut self.chain {
            if chain.remaining > 0 {
                chain.remaining -= 1;
                let base = chain.current.clone();
                let mutant = self.mutate(&base);
                return Some(self.start(mutant));
            }
            self.chain = None;
        }
        let spent = self.spent();
        let mio = self.config.mio;
        let p_r = mio.anneal(spent, mio.random_sampling, 0.0);
        if self.rng.random_bool(p_r.clamp(0.0, 1.0)) {
            let test = self.sample();
            return Some(self.start(test));
        }
        match self.archive.sample(&mut self.rng) {
            Some(base) => {
                let n = mio
                    .anneal(spent, mio.start_mutations as f64, mio.end_mutations as f64)
                    .round()
                    .max(1.0) as usize;
                self.chain = Some(Chain {
                    current: base.clone(),
                    remaining: n - 1,
                });
                let mutant = self.mutate(&base);
                Some(self.start(mutant))
            }
            None => {
                let test = self.sample();
                Some(self.start(test))
            }
        }
    }

    fn finished(&mut self, test: Box<dyn TestRun>, exchanges: Vec<Exchange>) {
        let any: Box<dyn std::any::Any> = test;
        let Ok(run) = any.downcast::<FlowRun>() else {
            return;
        };
        self.tests += 1;
        self.requests += exchanges.len() as u64;
        if exchanges.is_empty() {
            return;
        }
        let findings = self.checker.test(&self.api, &exchanges);
        self.faults.record(&exchanges, &findings, &self.ledger);
        for ex in &exchanges {
            self.ledger.note(ex);
        }
        self.learn(&run, &exchanges);
        let reached = self.targets(&run, &exchanges, &findings);
        let n = self.config.mio.population_at(self.spent());
        let seq = exchanges.last().map_or(0, |e| e.seq);
        let run = *run;
        let sampler = run.test.sampler;
        // The archive keeps only the calls that ran (a test stopped early is
        // as long as what it did).
        let mut test = run.test;
        let ran: HashSet<usize> = run.sent.iter().copied().collect();
        if ran.len() < test.calls.len() {
            let mut k = 0;
            test.calls.retain(|_| {
                k += 1;
                ran.contains(&(k - 1))
            });
            test.prune_groups();
        }
        let test: SharedTest = Arc::new(test);
        if self.archive.update(&test, &reached, n, seq) {
            self.improvements[sampler_index(sampler)] += 1;
            if let Some(chain) = &mut self.chain {
                chain.current = test;
            }
        }
    }
}
