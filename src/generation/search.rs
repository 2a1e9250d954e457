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

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use serde_json::Value;

use super::flow::FlowRun;
use super::mio::{Archive, MioConfig};
use super::mutation::{mutate_value, Heat};
use super::plan::Plan;
use super::pool::{location_id, location_key, ValuePool};
use super::sequences::call_sequences;
use super::templates::{Resources, Template};
use super::testcase::{Call, Group, Sampler, SharedTest, Slot, TestCase};
use super::values::{value_for, Rng64};
use crate::execution::{Driver, Exchange, TestRun};
use crate::graph::feedback::{Change, Feedback};
use crate::graph::PropertyGraph;
use crate::model::{Api, Location, Method};
use crate::oracles::{signature, Checker};

/// Values kept per key in the run's pool.
const POOL_DEPTH: usize = 16;

/// Probability of reusing a pooled value for an input the graph (or its name)
/// ties to responses, rather than a fresh one (Morest reuses with high probability).
const REUSE: f64 = 0.85;

/// Probability of starting a new call from the values of the operation's last
/// success (Morest's first parameter rule).
const REUSE_LAST_SUCCESS: f64 = 0.2;

/// Probability that a mutation changes a test's structure rather than its values.
const STRUCTURE_MUTATION: f64 = 0.5;

/// Probability that a sampled test chains a second resource handling onto the first.
const SECOND_HANDLING: f64 = 0.3;

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
            checker: Checker::new(&api, config.skip_checks.clone()),
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
    pub fn suite(&self) -> Vec<SharedTest> {
        self.archive.suite()
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

    /// A value from the run's pool for input `(location, name)` of `op`.
    fn pooled(&mut self, op: usize, location: Location, name: &str) -> Option<Value> {
        if let Some(sources) = self.plan.sources[op].get(&(location, name.to_string())) {
            let keys: Vec<String> = sources
                .iter()
                .filter(|s| s.active)
                .map(|s| s.key.clone())
                .collect();
            for key in keys {
                if let Some(v) = self.pool.pick(&key, REUSE, &mut self.rng) {
                    return Some(v);
                }
            }
        }
        // By bare name, only identifiers (`bookId`, `slug`) are worth reusing:
        // free text and numbers drawn from responses would crowd out the
        // fresh values (quotes, bounds) that find faults.
        let identifies = crate::graph::names::words(name)
            .last()
            .is_some_and(|w| crate::graph::names::is_id_like(w));
        if identifies && self.rng.random_bool(REUSE) {
            self.pool.pick(name, REUSE, &mut self.rng)
        } else {
            None
        }
    }

    /// A new call of `op`: with some probability the values of its last
    /// success, else pooled values where the graph or the name says where they
    /// come from, else values inside the spec's constraints.
    fn fresh_call(&mut self, op: usize, group: u32, creates: bool) -> Call {
        if let Some(last) = &self.last_success[op] {
            if self.rng.random_bool(REUSE_LAST_SUCCESS) {
                let mut c = last.clone();
                c.group = group;
                c.creates = creates;
                c.bind = true;
                return c;
            }
        }
        let api = self.api.clone();
        let operation = &api.operations[op];
        // Path parameters below a collection prefer an id created into that
        // very collection (the author's own books), so that nested paths hold
        // together.
        let mut nested: std::collections::HashMap<&str, Value> = Default::default();
        let mut prefix = String::new();
        for seg in operation.path.split('/').filter(|s| !s.is_empty()) {
            let Some(name) = seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) else {
                prefix.push('/');
                prefix.push_str(seg);
                continue;
            };
            let v = self
                .pool
                .pick(&location_key(&prefix), REUSE, &mut self.rng)
                .or_else(|| self.pooled(op, Location::Path, name))
                .unwrap_or_else(|| {
                    let schema = operation
                        .parameters
                        .iter()
                        .find(|p| p.location == Location::Path && p.name == name)
                        .map(|p| p.schema.clone())
                        .unwrap_or_default();
                    value_for(&api, &schema, &mut self.rng)
                });
            prefix.push('/');
            prefix.push_str(&super::request::encode_segment(&v));
            nested.insert(name, v);
        }
        let mut params = Vec::with_capacity(operation.parameters.len());
        for p in &operation.parameters {
            if p.location == Location::Path {
                if let Some(v) = nested.remove(p.name.as_str()) {
                    params.push(Slot {
                        present: true,
                        value: v,
                    });
                    continue;
                }
            }
            let pooled = self.pooled(op, p.location, &p.name);
            let present = p.required || pooled.is_some() || self.rng.random_bool(0.5);
            let value = match pooled {
                Some(v) => v,
                None if !p.examples.is_empty() && self.rng.random_bool(0.3) => {
                    p.examples[self.rng.random_range(0..p.examples.len())].clone()
                }
                None => value_for(&api, &p.schema, &mut self.rng),
            };
            params.push(Slot { present, value });
        }
        let body = operation
            .request_body
            .as_ref()
            .and_then(|b| b.primary_schema())
            .map(|(mime, schema)| {
                let mut value = value_for(&api, schema, &mut self.rng);
                if let Value::Object(fields) = &mut value {
                    for name in api.resolve(schema).properties.keys() {
                        if !self.plan.sources[op].contains_key(&(Location::Body, name.clone())) {
                            continue;
                        }
                        if let Some(v) = self.pooled(op, Location::Body, name) {
                            fields.insert(name.clone(), v);
                        }
                    }
                }
                (mime.to_string(), value)
            });
        Call {
            op,
            params,
            body,
            bind: true,
            creates,
            group,
        }
    }

    /// A resource handling for `op`: a template of Table 1 made concrete.
    fn handling(
        &mut self,
        op: usize,
        group: u32,
        template: Option<Template>,
    ) -> Option<(Vec<Call>, Group)> {
        let max = self.config.mio.max_length;
        let template = match template {
            Some(t) => t,
            None => {
                let applicable = self.resources.applicable(&self.api, op);
                let creating: Vec<Template> = applicable
                    .iter()
                    .copied()
                    .filter(|t| *t != Template::Alone)
                    .collect();
                if !creating.is_empty() && self.rng.random_bool(0.7) {
                    creating[self.rng.random_range(0..creating.len())]
                } else {
                    Template::Alone
                }
            }
        };
        let h = self
            .resources
            .instantiate(&self.api, op, template, max, &mut self.rng)?;
        let calls = h
            .calls
            .iter()
            .zip(&h.creates)
            .map(|(&o, &c)| self.fresh_call(o, group, c))
            .collect();
        Some((
            calls,
            Group {
                id: group,
                template: Some(template),
                target: op,
            },
        ))
    }

    fn random_op(&mut self) -> usize {
        self.ops[self.rng.random_range(0..self.ops.len())]
    }

    /// An operation the graph says consumes what one of `t`'s calls produces
    /// (the resource paper's dependency-aware structure mutation, with the
    /// graph's edges as the dependencies).
    fn consumer_of(&mut self, t: &TestCase) -> Option<usize> {
        let produced: HashSet<&str> = t
            .calls
            .iter()
            .flat_map(|c| self.plan.produced[c.op].iter().map(|(s, _)| s.as_str()))
            .collect();
        let candidates: Vec<usize> = self
            .ops
            .iter()
            .copied()
            .filter(|&o| {
                self.plan.sources[o]
                    .values()
                    .flatten()
                    .any(|s| s.active && produced.contains(s.schema.as_str()))
            })
            .collect();
        (!candidates.is_empty()).then(|| candidates[self.rng.random_range(0..candidates.len())])
    }

    /// Samples a new test with the sampler the archive favours.
    fn sample(&mut self) -> TestCase {
        let mut choices: Vec<(Sampler, f64)> = Vec::new();
        for s in Sampler::CHOSEN {
            if s == Sampler::Graph && self.sequences.is_empty() {
                continue;
            }
            choices.push((s, 1.0 + self.improvements[sampler_index(s)] as f64));
        }
        let total: f64 = choices.iter().map(|(_, w)| w).sum();
        let mut x = self.rng.random_range(0.0..total);
        let mut sampler = choices[choices.len() - 1].0;
        for (s, w) in &choices {
            if x < *w {
                sampler = *s;
                break;
            }
            x -= w;
        }
        self.sampled[sampler_index(sampler)] += 1;
        let seed = self.rng.random();
        let mut test = TestCase {
            calls: Vec::new(),
            groups: Vec::new(),
            sampler,
            seed,
        };
        match sampler {
            Sampler::Graph => {
                // Every sequence once, in a seeded order, before any repeats.
                if self.cursor.is_multiple_of(self.sequences.len()) {
                    self.sequences.shuffle(&mut self.rng);
                }
                let seq = self.sequences[self.cursor % self.sequences.len()].clone();
                self.cursor += 1;
                test.calls = seq.iter().map(|&o| self.fresh_call(o, 0, false)).collect();
                test.groups.push(Group {
                    id: 0,
                    template: None,
                    target: *seq.last().unwrap_or(&0),
                });
            }
            Sampler::Template => {
                let op = self.random_op();
                if let Some((calls, group)) = self.handling(op, 0, None) {
                    test.calls = calls;
                    test.groups.push(group);
                }
                if self.rng.random_bool(SECOND_HANDLING) {
                    let op = self.random_op();
                    if let Some((calls, group)) = self.handling(op, 1, None) {
                        if test.len() + calls.len() <= self.config.mio.max_length {
                            test.calls.extend(calls);
                            test.groups.push(group);
                        }
                    }
                }
            }
            Sampler::Random | Sampler::Initial => {
                let n = self.rng.random_range(1..=4.min(self.config.mio.max_length));
                for g in 0..n as u32 {
                    let op = self.random_op();
                    let call = self.fresh_call(op, g, false);
                    test.calls.push(call);
                    test.groups.push(Group {
                        id: g,
                        template: None,
                        target: op,
                    });
                }
            }
        }
        if test.calls.is_empty() {
            let op = self.random_op();
            test.calls.push(self.fresh_call(op, 0, false));
            test.groups = vec![Group {
                id: 0,
                template: None,
                target: op,
            }];
        }
        test
    }

    /// A mutant of `base`: its structure (resource handlings) or its values.
    fn mutate(&mut self, base: &TestCase) -> TestCase {
        let mut t = base.clone();
        t.seed = self.rng.random();
        if self.rng.random_bool(STRUCTURE_MUTATION) && self.mutate_structure(&mut t) {
            return t;
        }
        self.mutate_values(&mut t);
        t
    }

    /// Mutates each gene with probability 1/k (k genes in the test), at least one.
    fn mutate_values(&mut self, t: &mut TestCase) {
        let api = self.api.clone();
        let heat = self.heat();
        let genes: usize = t
            .calls
            .iter()
            .map(|c| c.params.len() + usize::from(c.body.is_some()))
            .sum();
        if genes == 0 {
            if let Some(c) = t.calls.first_mut() {
                c.bind = !c.bind;
            }
            return;
        }
        let p = 1.0 / genes as f64;
        let mut changed = false;
        while !changed {
            for c in &mut t.calls {
                let op = &api.operations[c.op];
                for (j, slot) in c.params.iter_mut().enumerate() {
                    if !self.rng.random_bool(p) {
                        continue;
                    }
                    let param = &op.parameters[j];
                    if !slot.present {
                        slot.present = true;
                    } else if !param.required && self.rng.random_bool(0.05) {
                        slot.present = false;
                    } else {
                        slot.value =
                            mutate_value(&api, &param.schema, &slot.value, heat, &mut self.rng);
                    }
                    changed = true;
                }
                if let (Some((_, value)), Some(schema)) = (
                    &mut c.body,
                    op.request_body.as_ref().and_then(|b| b.primary_schema()),
                ) {
                    if self.rng.random_bool(p) {
                        *value = mutate_value(&api, schema.1, value, heat, &mut self.rng);
                        changed = true;
                    }
                }
            }
        }
        // Rarely, a call forgoes the values earlier calls would give it.
        if self.rng.random_bool(0.05) {
            let k = self.rng.random_range(0..t.calls.len());
            t.calls[k].bind = !t.calls[k].bind;
        }
    }

    /// Adds, removes, swaps or replaces a resource handling, or changes one's
    /// template; false when the chosen change does not apply.
    fn mutate_structure(&mut self, t: &mut TestCase) -> bool {
        let max = self.config.mio.max_length;
        let groups: Vec<u32> = t.groups.iter().map(|g| g.id).collect();
        let span = |t: &TestCase, g: u32| -> (usize, usize) {
            let start = t.calls.iter().position(|c| c.group == g).unwrap_or(0);
            let end = t
                .calls
                .iter()
                .rposition(|c| c.group == g)
                .map_or(start, |e| e + 1);
            (start, end)
        };
        match self.rng.random_range(0..5) {
            // Add a handling at a group boundary; half the time, at the end,
            // one for an operation that consumes what the test produces.
            0 => {
                let consumer = if self.config.use_graph && self.rng.random_bool(0.5) {
                    self.consumer_of(t)
                } else {
                    None
                };
                let op = consumer.unwrap_or_else(|| self.random_op());
                let id = t.next_group();
                let template = consumer.map(|_| Template::Alone);
                let Some((calls, group)) = self.handling(op, id, template) else {
                    return false;
                };
                if t.len() + calls.len() > max {
                    return false;
                }
                let at = if groups.is_empty() || consumer.is_some() {
                    t.len()
                } else {
                    let g = groups[self.rng.random_range(0..groups.len())];
                    span(t, g).1
                };
                t.calls.splice(at..at, calls);
                t.groups.push(group);
                true
            }
            // Remove one.
            1 if groups.len() > 1 => {
                let g = groups[self.rng.random_range(0..groups.len())];
                t.calls.retain(|c| c.group != g);
                t.prune_groups();
                true
            }
            // Swap two neighbours.
            2 if groups.len() > 1 => {
                let order: Vec<u32> = {
                    let mut seen = Vec::new();
                    for c in &t.calls {
                        if !seen.contains(&c.group) {
                            seen.push(c.group);
                        }
                    }
                    seen
                };
                if order.len() < 2 {
                    return false;
                }
                let k = self.rng.random_range(0..order.len() - 1);
                let (a, b) = (order[k], order[k + 1]);
                let (sa, _) = span(t, a);
                let (_, eb) = span(t, b);
                let mut part: Vec<Call> = t.calls[sa..eb].to_vec();
                part.sort_by_key(|c| c.group != b);
                t.calls.splice(sa..eb, part);
                true
            }
            // Replace one with a handling of another operation, or change its
            // template (same operation, another template).
            k @ (3 | 4) if !groups.is_empty() => {
                let g = groups[self.rng.random_range(0..groups.len())];
                let Some(old) = t.groups.iter().find(|x| x.id == g).cloned() else {
                    return false;
                };
                let (op, template) = if k == 3 {
                    (self.random_op(), None)
                } else {
                    let others: Vec<Template> = self
                        .resources
                        .applicable(&self.api, old.target)
                        .into_iter()
                        .filter(|x| Some(*x) != old.template)
                        .collect();
                    if others.is_empty() {
                        return false;
                    }
                    (
                        old.target,
                        Some(others[self.rng.random_range(0..others.len())]),
                    )
                };
                let Some((calls, group)) = self.handling(op, g, template) else {
                    return false;
                };
                let (s, e) = span(t, g);
                if t.len() - (e - s) + calls.len() > max {
                    return false;
                }
                t.calls.splice(s..e, calls);
                t.groups.retain(|x| x.id != g);
                t.groups.push(group);
                true
            }
            _ => false,
        }
    }

    /// The testing targets a finished test reached, with heuristic values:
    /// each (operation, status), each operation answered 2xx (0.5 for another
    /// answer), each fault signature, and each consumes edge whose values
    /// flowed into a 2xx (0.5 when they flowed into another answer, 0.1 when
    /// the consumer ran without them).
    fn targets(&self, run: &FlowRun, exchanges: &[Exchange]) -> Vec<(String, f64)> {
        let mut out: Vec<(String, f64)> = Vec::new();
        for (k, ex) in exchanges.iter().enumerate() {
            let op = run.test.calls[run.sent[k]].op;
            let name = &self.api.operations[op].name;
            let ok = ex.is_success();
            match ex.status {
                Some(s) => out.push((format!("status:{name}:{s}"), 1.0)),
                None => out.push((format!("status:{name}:none"), 1.0)),
            }
            let h = if ok {
                1.0
            } else if ex.status.is_some() {
                0.5
            } else {
                0.3
            };
            out.push((format!("ok:{name}"), h));
            for (code, _) in self.checker.findings(&self.api, ex) {
                out.push((format!("fault:{}", signature(code, ex)), 1.0));
            }
            let used = &run.used[k];
            let h = if ok { 1.0 } else { 0.5 };
            for (schema, from) in used {
                out.push((format!("edge:{schema}>{name}"), h));
                // Finer than the edge: which operation's answer fed this one.
                // It keeps tests where a value passed through an update (say)
                // before reaching its consumer, a state worth mutating.
                let producer = &self.api.operations[run.test.calls[*from].op].name;
                out.push((format!("flow:{producer}>{name}"), h));
            }
            let mut others: Vec<&str> = self.plan.sources[op]
                .values()
                .flatten()
                .filter(|s| s.active && !used.iter().any(|(u, _)| u == &s.schema))
                .map(|s| s.schema.as_str())
                .collect();
            others.sort_unstable();
            others.dedup();
            for schema in others {
                out.push((format!("edge:{schema}>{name}"), 0.1));
            }
        }
        out
    }

    /// Learns from a finished test: the pool, each operation's last success,
    /// and the graph (observed produces, equivalences, edge suspension).
    fn learn(&mut self, run: &FlowRun, exchanges: &[Exchange]) {
        let mut changed = false;
        for (k, ex) in exchanges.iter().enumerate() {
            let call = &run.test.calls[run.sent[k]];
            let op = call.op;
            self.pool
                .harvest(&self.plan.produced[op], &self.plan.wanted, ex);
            if ex.request.method == "DELETE" && ex.is_success() {
                // A deleted resource's id is no longer worth sending.
                let path = ex.request.path.split('?').next().unwrap_or("");
                if let Some(id) = location_id(path) {
                    self.pool.forget(&id);
                }
            }
            if ex.is_success() {
                self.last_success[op] = Some(call.clone());
            }
            let Some(feedback) = &mut self.feedback else {
                continue;
            };
            let name = &self.api.operations[op].name;
            if let (Some(status), Some(body)) = (ex.status, ex.json()) {
                let c = feedback.observe(&mut self.graph, name, status, body, ex.seq);
                changed |= !c.is_empty();
                self.changes.extend(c);
            }
            // Morest: only a value taken from another call of the same test
            // counts against the edge it came through, and only an answer
            // that says the value was wrong (not found, gone, invalid); a
            // conflict or a refusal (auth, rate) means the reference resolved
            // or was never looked at.
            let verdict = match ex.status {
                Some(s) if (200..300).contains(&s) => Some(true),
                Some(400 | 404 | 410 | 422) => Some(false),
                _ => None,
            };
            if let Some(success) = verdict {
                let mut schemas: Vec<String> = run.used[k].iter().map(|(s, _)| s.clone()).collect();
                schemas.sort();
                for schema in schemas {
                    if let Some(c) =
                        feedback.binding_result(&mut self.graph, &schema, name, success, ex.seq)
                    {
                        changed = true;
                        self.changes.push(c);
                    }
                }
            }
        }
        if changed {
            self.plan = Arc::new(Plan::from_graph(&self.api, &self.graph));
            self.stale_since.get_or_insert(self.tests);
        }
    }

    fn start(&mut self, test: TestCase) -> Box<dyn TestRun> {
        Box::new(FlowRun::new(self.api.clone(), self.plan.clone(), test))
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
        self.learn(&run, &exchanges);
        let reached = self.targets(&run, &exchanges);
        let n = self
            .config
            .mio
            .anneal(self.spent(), self.config.mio.population as f64, 1.0)
            .round()
            .max(1.0) as usize;
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
