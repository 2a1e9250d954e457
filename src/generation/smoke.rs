//! The smoke pass: every operation called in turn with values built from its
//! schema, reusing values seen in earlier responses wherever the graph says an
//! input is fed by a schema property (ids above all). It repeats, with fresh
//! values, until the run's budget ends.

use std::collections::HashMap;
use std::sync::Arc;

use petgraph::visit::EdgeRef;
use petgraph::Direction;
use rand::{Rng, SeedableRng};
use serde_json::Value;

use super::request::{build_request, Inputs};
use super::values::{value_for, Rng64};
use crate::execution::{Driver, Exchange, RequestSpec, TestRun};
use crate::graph::feedback::{Change, Feedback};
use crate::graph::{EdgeKind, EdgeState, Label, PropertyGraph};
use crate::model::{Api, Location, Method};

/// Values kept per pool key.
const POOL_DEPTH: usize = 16;

/// Objects of a list response harvested: enough to vary ids, and bounded as
/// collections grow during a run.
const HARVEST_ITEMS: usize = 8;

/// Probability of reusing a value seen in a response rather than a fresh one,
/// when one is available (Morest reuses earlier successes with high probability).
const REUSE: f64 = 0.85;

/// Values seen in responses, keyed by `Schema.property` and by bare property name.
#[derive(Debug, Default)]
pub struct ValuePool {
    values: HashMap<String, Vec<Value>>,
}

impl ValuePool {
    fn add(&mut self, key: String, value: Value) {
        let list = self.values.entry(key).or_default();
        if list.last() != Some(&value) {
            list.push(value);
            if list.len() > POOL_DEPTH {
                list.remove(0);
            }
        }
    }

    fn pick(&self, key: &str, rng: &mut Rng64) -> Option<Value> {
        let list = self.values.get(key).filter(|l| !l.is_empty())?;
        if rng.random_bool(REUSE) {
            list.last().cloned()
        } else {
            Some(list[rng.random_range(0..list.len())].clone())
        }
    }
}

/// Probability of still drawing on a suspended consumes edge, so that an edge
/// suspended by bad luck can prove itself again.
const RETRY_SUSPENDED: f64 = 0.1;

/// A pool key that feeds an input: `Schema.property`, and whether its edge is active.
#[derive(Debug, Clone)]
struct Source {
    key: String,
    active: bool,
}

/// Drives the smoke pass.
pub struct SmokeDriver {
    api: Arc<Api>,
    graph: PropertyGraph,
    feedback: Option<Feedback>,
    order: Vec<usize>,
    next: usize,
    rng: Rng64,
    pool: ValuePool,
    /// Per operation: for each input `(location, name)`, the sources that feed it.
    sources: Vec<HashMap<(Location, String), Vec<Source>>>,
    /// Per operation: produced schemas with the JSON paths where they appear.
    produced: Vec<Vec<(String, String)>>,
    positions: HashMap<String, usize>,
    /// Every change the feedback made, in order.
    changes: Vec<Change>,
}

struct OneCall(Option<RequestSpec>);

impl TestRun for OneCall {
    fn next_request(&mut self, _done: &[Exchange]) -> Option<RequestSpec> {
        self.0.take()
    }
}

impl SmokeDriver {
    /// A smoke pass over `api` with its graph, seeded; in read-only mode only
    /// operations that do not change state are scheduled. With `feedback`, the
    /// graph is refined from the responses as the pass goes.
    pub fn new(
        api: Arc<Api>,
        graph: PropertyGraph,
        seed: u64,
        read_only: bool,
        feedback: Option<Feedback>,
    ) -> SmokeDriver {
        // Creations first, deletions last, parents before children, so that ids
        // exist by the time something needs them.
        let rank = |m: Method| match m {
            Method::Post | Method::GraphqlMutation => 0,
            Method::Put => 1,
            Method::Get | Method::GraphqlQuery | Method::Head | Method::Options => 2,
            Method::Patch => 3,
            Method::Delete => 5,
            _ => 4,
        };
        let mut order: Vec<usize> = (0..api.operations.len())
            .filter(|&i| {
                let m = api.operations[i].method;
                m != Method::GraphqlSubscription
                    && m != Method::Trace
                    && (!read_only || m.is_safe())
            })
            .collect();
        order.sort_by_key(|&i| {
            let op = &api.operations[i];
            (rank(op.method), op.path.matches('/').count(), i)
        });
        let mut driver = SmokeDriver {
            positions: api.operation_positions(),
            sources: vec![HashMap::new(); api.operations.len()],
            produced: vec![Vec::new(); api.operations.len()],
            api,
            graph,
            feedback,
            order,
            next: 0,
            rng: Rng64::seed_from_u64(seed),
            pool: ValuePool::default(),
            changes: Vec::new(),
        };
        driver.plan();
        driver
    }

    /// Reads, from the graph, where each input's values come from and where each
    /// operation's produced objects are; again after every change to the graph.
    fn plan(&mut self) {
        let graph = &self.graph;
        for (i, op) in self.api.operations.iter().enumerate() {
            let mut map: HashMap<(Location, String), Vec<Source>> = HashMap::new();
            let mut prod = Vec::new();
            if let Some(ix) = graph.operation(&op.name) {
                for e in graph.graph.edges_directed(ix, Direction::Incoming) {
                    if e.weight().kind != EdgeKind::Consumes {
                        continue;
                    }
                    let schema = &graph.graph[e.source()].name;
                    let active = e.weight().state == EdgeState::Active;
                    if let Label::Consumes { bindings } = &e.weight().label {
                        for b in bindings {
                            if b.input.is_empty() || b.property.is_empty() {
                                continue;
                            }
                            map.entry((b.location, b.input.clone()))
                                .or_default()
                                .push(Source {
                                    key: format!("{schema}.{}", b.property),
                                    active,
                                });
                        }
                    }
                }
                for e in graph.active_edges(ix, EdgeKind::Produces, Direction::Outgoing) {
                    let schema = graph.graph[e.target()].name.clone();
                    if let Label::Produces { sites } = &e.weight().label {
                        for s in sites {
                            prod.push((schema.clone(), s.path.clone()));
                        }
                    }
                }
            }
            self.sources[i] = map;
            self.produced[i] = prod;
        }
    }

    /// The value for one input: from the pool when the graph or the name says
    /// where it comes from, else built from its schema.
    fn input_value(&mut self, op: usize, location: Location, name: &str) -> Option<Value> {
        let sources = self.sources[op]
            .get(&(location, name.to_string()))
            .cloned()
            .unwrap_or_default();
        for source in sources {
            if !source.active && !self.rng.random_bool(RETRY_SUSPENDED) {
                continue;
            }
            if let Some(v) = self.pool.pick(&source.key, &mut self.rng) {
                return Some(v);
            }
        }
        self.pool.pick(name, &mut self.rng)
    }

    fn request_for(&mut self, op_i: usize) -> RequestSpec {
        let api = self.api.clone();
        let op = &api.operations[op_i];
        let mut inputs = Inputs::default();
        for p in &op.parameters {
            let pooled = self.input_value(op_i, p.location, &p.name);
            if !p.required && pooled.is_none() && self.rng.random_bool(0.5) {
                continue;
            }
            let value = pooled.unwrap_or_else(|| {
                if !p.examples.is_empty() && self.rng.random_bool(0.3) {
                    p.examples[self.rng.random_range(0..p.examples.len())].clone()
                } else {
                    value_for(&api, &p.schema, &mut self.rng)
                }
            });
            inputs.params.push((p.location, p.name.clone(), value));
        }
        if let Some(body) = &op.request_body {
            if let Some((mime, schema)) = body.primary_schema() {
                let mut value = value_for(&api, schema, &mut self.rng);
                if let Value::Object(fields) = &mut value {
                    let names: Vec<String> =
                        api.resolve(schema).properties.keys().cloned().collect();
                    for name in names {
                        // Only fields the graph ties to another schema are reused;
                        // others keep their fresh value.
                        if !self.sources[op_i].contains_key(&(Location::Body, name.clone())) {
                            continue;
                        }
                        if let Some(v) = self.input_value(op_i, Location::Body, &name) {
                            fields.insert(name, v);
                        }
                    }
                }
                inputs.body = Some((mime.to_string(), value));
            }
        }
        build_request(op, &inputs)
    }

    /// Learns values from a successful exchange: the produced schemas' properties
    /// at their documented places, every field by name, and a `Location` id.
    fn harvest(&mut self, op_i: usize, ex: &Exchange) {
        if !ex.is_success() {
            return;
        }
        if let Some(body) = ex.json() {
            for (schema, path) in &self.produced[op_i] {
                for obj in crate::graph::select(body, path)
                    .into_iter()
                    .take(HARVEST_ITEMS)
                {
                    if let Value::Object(fields) = obj {
                        for (k, v) in fields {
                            if is_scalar(v) {
                                self.pool.add(format!("{schema}.{k}"), v.clone());
                            }
                        }
                    }
                }
            }
            collect_by_name(body, &mut self.pool, 0);
        }
        if let Some(location) = ex.header("location") {
            let id = location
                .split(['?', '#'])
                .next()
                .unwrap_or("")
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or("");
            if !id.is_empty() {
                let value = id
                    .parse::<i64>()
                    .map(Value::from)
                    .unwrap_or_else(|_| Value::String(id.to_string()));
                for (schema, path) in self.produced[op_i].clone() {
                    if path == "$" {
                        self.pool.add(format!("{schema}.id"), value.clone());
                    }
                }
            }
        }
    }

    /// The graph, as refined so far.
    pub fn graph(&self) -> &PropertyGraph {
        &self.graph
    }

    /// The changes feedback made to the graph, in order.
    pub fn changes(&self) -> &[Change] {
        &self.changes
    }

    /// Feeds one exchange to the feedback loop; re-plans if the graph changed.
    ///
    /// Edges are suspended only on failures of values taken from earlier calls
    /// of the same test (Morest); a smoke test is one call, whose pooled values
    /// may come from unrelated objects, so the smoke pass never suspends.
    fn learn(&mut self, op_i: usize, ex: &Exchange) {
        let Some(feedback) = &mut self.feedback else {
            return;
        };
        let op = &self.api.operations[op_i].name;
        let mut changes = Vec::new();
        if let (Some(status), Some(body)) = (ex.status, ex.json()) {
            changes.extend(feedback.observe(&mut self.graph, op, status, body, ex.seq));
        }
        if !changes.is_empty() {
            self.changes.extend(changes);
            self.plan();
        }
    }
}

impl Driver for SmokeDriver {
    fn next_test(&mut self) -> Option<Box<dyn TestRun>> {
        if self.order.is_empty() {
            return None;
        }
        let op = self.order[self.next % self.order.len()];
        self.next += 1;
        let request = self.request_for(op);
        Some(Box::new(OneCall(Some(request))))
    }

    fn finished(&mut self, _test: Box<dyn TestRun>, exchanges: Vec<Exchange>) {
        for ex in &exchanges {
            if let Some(&op) = self.positions.get(&ex.request.operation) {
                self.harvest(op, ex);
                self.learn(op, ex);
            }
        }
    }
}

fn is_scalar(v: &Value) -> bool {
    matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_))
}

fn collect_by_name(v: &Value, pool: &mut ValuePool, depth: usize) {
    if depth > 4 {
        return;
    }
    match v {
        Value::Object(fields) => {
            for (k, v) in fields {
                if is_scalar(v) {
                    pool.add(k.clone(), v.clone());
                } else {
                    collect_by_name(v, pool, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            for item in items.iter().take(HARVEST_ITEMS) {
                collect_by_name(item, pool, depth + 1);
            }
        }
        _ => {}
    }
}
