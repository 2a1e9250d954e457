//! GraphQL through the one search: a call's genes are a root field's
//! arguments and selection ([`genes`]); a test is a sequence of root field
//! calls whose first ones are the mutations the graph says create what the
//! last one needs (`book(id)` ← `Book.id` ← `createBook`); values of those
//! schemas' properties in earlier answers flow into the arguments ([`run`]);
//! and an answer is read by its data, errors and nulls (`learn`), which
//! refine the graph through the shared feedback (observed produces edges,
//! equivalences, edges suspended after λ answers with an error or null data
//! for the values they gave).
//!
//! Its files pair with [`crate::generation::rest`]'s by job: `request` (a
//! call as what is sent), `sample` and `mutate` (under `generate/`, beside
//! the generator they share), `negative`, `run` and `learn`.

pub mod coverage;
mod creators;
pub mod generate;
pub mod genes;
mod learn;
mod links;
pub mod negative;
pub mod request;
pub mod run;
pub mod valid;

use std::collections::HashMap;
use std::sync::Arc;

use rand::{Rng, SeedableRng};
use serde_json::Value;

pub use coverage::SchemaCoverage;
pub use generate::{DEFAULT_MAX_DEPTH, GqlGenerator};
pub use genes::{ArgMode, FieldSelection, GqlCall, Selection};
pub use request::to_sdl;
pub use run::{GqlRun, root_name};

use self::coverage::CoverageTally;
use self::links::Links;
use self::run::coerce;
use super::pool::{POOL_DEPTH, ValuePool};
use super::search::{Cx, Protocol, Search, SearchConfig};
use super::test::{Call, Sampler, TestCase};
use super::values::Rng64;
use crate::execution::Exchange;
use crate::graph::PropertyGraph;
use crate::graph::feedback::Feedback;
use crate::model::graphql::{BUILTIN_SCALARS, TypeKind, TypeSystem};
use crate::model::{Api, Method};
use crate::oracles::Finding;

/// A GraphQL call of a test.
pub type GqlTestCall = Call<GqlCall>;

/// Probability that an argument no link binds, of type `ID` or a custom
/// scalar (`UUID`), takes a value of that type an earlier answer carried.
const REUSE_SCALAR: f64 = 0.5;

/// Probability that a pooled value is the latest one of its key, rather
/// than any of those kept.
const LATEST: f64 = 0.5;

/// The pool key of the values of scalar type `name` (`scalar.UUID`): its
/// last word names the type, so deleting an `ID` forgets it there too.
fn scalar_key(name: &str) -> String {
    format!("scalar.{name}")
}

/// Whether values of scalar `name` identify things or have a shape that
/// random text rarely hits, so that values servers gave are worth reusing:
/// `ID` and custom scalars, not `String`, `Int`, `Float` or `Boolean`.
fn reusable_scalar(ts: &TypeSystem, name: &str) -> bool {
    name == "ID"
        || (!BUILTIN_SCALARS.contains(&name)
            && ts.get(name).is_some_and(|t| t.kind == TypeKind::Scalar))
}

/// A GraphQL test.
pub type GqlTest = TestCase<GqlCall>;

/// The GraphQL protocol: the type system's generator, what the graph says
/// (creators and value sources), and the schema coverage answers showed.
pub struct Graphql {
    generator: Arc<GqlGenerator>,
    /// Every query is checked against the schema before it is sent.
    check: Arc<valid::QueryCheck>,
    links: Arc<Links>,
    /// Requests go to the endpoint itself: an empty path under the target.
    path: String,
    /// Operation position → (root type, field), for the callable root fields.
    roots: HashMap<usize, (String, String)>,
    /// Operation positions of the root fields, by name (`Mutation.createBook`).
    positions: HashMap<String, usize>,
    coverage: CoverageTally,
    /// Per operation: the negative tests' base (and whether it answered
    /// data), and the breaches still to try on it.
    negatives: HashMap<usize, (GqlTest, std::collections::VecDeque<genes::GqlBreach>, bool)>,
    /// Whose turn it is among the operations for a negative test.
    negative_turn: usize,
    /// Scalar values answers carried, by `Type.field` and by scalar type
    /// ([`scalar_key`]): what a test's arguments take when none of its
    /// own earlier calls gives them one.
    pool: ValuePool,
}

impl Graphql {
    /// The protocol for the GraphQL API `api` (whose type system is `ts`),
    /// with `graph` deciding which mutations create what a call needs and
    /// which answers' values feed which arguments; with `config.use_graph`
    /// false (`--no-graph`) neither happens and tests are random calls.
    pub fn new(
        api: &Api,
        ts: &TypeSystem,
        graph: &PropertyGraph,
        config: &SearchConfig,
    ) -> Graphql {
        let positions = api.operation_positions();
        let mut roots = HashMap::new();
        for (root, word) in [
            (ts.mutation_type.clone(), "Mutation"),
            (ts.query_type.clone(), "Query"),
        ] {
            let Some(t) = root.as_ref().and_then(|r| ts.get(r)) else {
                continue;
            };
            for f in &t.fields {
                if let Some(&op) = positions.get(&format!("{word}.{}", f.name)) {
                    roots.insert(op, (t.name.clone(), f.name.clone()));
                }
            }
        }
        let callable = Graphql::callable(api, ts, &roots, config.read_only);
        let links = if config.use_graph {
            Links::from_graph(graph)
        } else {
            Links::default()
        };
        Graphql {
            generator: Arc::new(GqlGenerator::new(ts, DEFAULT_MAX_DEPTH)),
            check: Arc::default(),
            links: Arc::new(links),
            path: String::new(),
            coverage: CoverageTally::new(ts, callable.len()),
            roots,
            positions,
            negatives: HashMap::new(),
            negative_turn: 0,
            pool: ValuePool::new(POOL_DEPTH),
        }
    }

    /// Values earlier tests saw, for `test`'s calls: per input a link binds,
    /// a value of its best active source (sent only when no earlier call of
    /// the test gives one); and for an unbound argument of type `ID` or a
    /// custom scalar, now and then a value of that type, set in the call.
    fn pooled_values(
        &self,
        test: &mut GqlTest,
        rng: &mut Rng64,
    ) -> HashMap<(usize, String), (Value, String)> {
        let ts = self.generator.type_system();
        let mut out = HashMap::new();
        for (i, call) in test.calls.iter_mut().enumerate() {
            let op = root_name(ts, &call.genes);
            let Some(field) = ts
                .get(&call.genes.root)
                .and_then(|t| t.field(&call.genes.field))
            else {
                continue;
            };
            for (name, value) in call.genes.args.iter_mut() {
                let inputs = self.links.inputs_of(&op, name);
                for input in &inputs {
                    let pooled = self
                        .links
                        .of(&op, input)
                        .filter(|s| s.active)
                        .find_map(|s| {
                            let key = format!("{}.{}", s.schema, s.property);
                            let v = self.pool.pick(&key, LATEST, rng)?;
                            Some((v, s.schema.clone()))
                        });
                    if let Some(pooled) = pooled {
                        out.insert((i, input.clone()), pooled);
                    }
                }
                let Some(arg) = field.args.iter().find(|a| &a.name == name) else {
                    continue;
                };
                let base = arg.ty.base();
                if !inputs.is_empty() || value.is_none() || !reusable_scalar(ts, base) {
                    continue;
                }
                if !rng.random_bool(REUSE_SCALAR) {
                    continue;
                }
                if let Some(v) = self.pool.pick(&scalar_key(base), LATEST, rng)
                    && let Some(v) = coerce(ts, &arg.ty, &v)
                {
                    *value = Some(v);
                }
            }
        }
        out
    }

    /// Notes that `base` (its last call the operation's) answered data
    /// without errors: the operation's negative tests are built on it,
    /// unless they already were on such a test.
    fn negative_base(&mut self, op: usize, base: GqlTest) {
        if self
            .negatives
            .get(&op)
            .is_some_and(|(_, _, answered)| *answered)
        {
            return;
        }
        let Some(last) = base.calls.last() else {
            return;
        };
        let breaches = negative::breaches(self.generator.type_system(), &last.genes);
        self.negatives.insert(op, (base, breaches, true));
    }

    /// The callable root fields: mutations first (in schema order), then
    /// queries; no mutation in read-only mode, and never a subscription.
    fn callable(
        api: &Api,
        ts: &TypeSystem,
        roots: &HashMap<usize, (String, String)>,
        read_only: bool,
    ) -> Vec<usize> {
        let mut out = Vec::new();
        for (root, method) in [
            (ts.mutation_type.as_deref(), Method::GraphqlMutation),
            (ts.query_type.as_deref(), Method::GraphqlQuery),
        ] {
            if read_only && method == Method::GraphqlMutation {
                continue;
            }
            let Some(t) = root.and_then(|r| ts.get(r)) else {
                continue;
            };
            for f in &t.fields {
                if let Some((&op, _)) = roots.iter().find(|(op, (_, field))| {
                    *field == f.name && api.operations[**op].method == method
                }) {
                    out.push(op);
                }
            }
        }
        out
    }

    /// Schema coverage so far.
    pub fn coverage(&self) -> SchemaCoverage {
        self.coverage.summary()
    }

    /// How many generated queries the validator refused (and so were not
    /// sent), with the first; `None` when every one was valid.
    pub fn invalid_queries(&self) -> Option<String> {
        self.check.warning()
    }

    /// A call of `op` with random genes.
    fn call(&self, cx: &mut Cx, op: usize) -> GqlTestCall {
        let (root, field) = &self.roots[&op];
        Call::of(op, self.generator.sample(root, field, &mut cx.rng))
    }
}

impl Search<Graphql> {
    /// The search over a GraphQL `api` (whose type system is `ts`) with its
    /// `graph`; with `feedback`, the graph is refined from the answers.
    pub fn graphql(
        api: Arc<Api>,
        ts: &TypeSystem,
        graph: PropertyGraph,
        feedback: Option<Feedback>,
        config: SearchConfig,
    ) -> Search<Graphql> {
        let protocol = Graphql::new(&api, ts, &graph, &config);
        Search::new(protocol, api, graph, feedback, config)
    }
}

impl Protocol for Graphql {
    type Genes = GqlCall;
    type Run = GqlRun;
    const CHAINS: bool = false;

    fn operations(&self, api: &Api, config: &SearchConfig) -> Vec<usize> {
        match &api.graphql {
            Some(ts) => Graphql::callable(api, ts, &self.roots, config.read_only),
            None => Vec::new(),
        }
    }

    fn initial_order(&self, _api: &Api, ops: &[usize]) -> Vec<usize> {
        ops.to_vec()
    }

    fn initial(&mut self, cx: &mut Cx, op: usize) -> GqlTest {
        TestCase::of(vec![self.call(cx, op)], Sampler::Initial, 0)
    }

    /// The next negative test: one argument of a root field wrong or
    /// unusual, on the last test that reached it (or a lone call), one
    /// root field after another.
    fn negative(&mut self, cx: &mut Cx) -> Option<GqlTest> {
        let ops = cx.ops.clone();
        for _ in 0..ops.len() {
            let op = ops[self.negative_turn % ops.len()];
            self.negative_turn += 1;
            if !self.negatives.contains_key(&op) {
                let base = self.initial(cx, op);
                let breaches = match base.calls.last() {
                    Some(last) => negative::breaches(self.generator.type_system(), &last.genes),
                    None => Default::default(),
                };
                self.negatives.insert(op, (base, breaches, false));
            }
            let Some((base, breaches, _)) = self.negatives.get_mut(&op) else {
                continue;
            };
            let Some(b) = breaches.pop_front() else {
                continue;
            };
            let mut test = base.clone();
            test.sampler = Sampler::Negative;
            if let Some(last) = test.calls.last_mut() {
                last.genes.breach = Some(b);
            }
            return Some(test);
        }
        None
    }

    /// A new test: a root field, the creations it needs, and now and then a
    /// random mutation before it (a delete or an update of what was made).
    fn sample(&mut self, cx: &mut Cx) -> GqlTest {
        let op = cx.random_op();
        let last = self.call(cx, op);
        let mut calls = self.creators(cx, &last.genes, 2);
        if !calls.is_empty() && cx.rng.random_bool(0.5) {
            let mutations: Vec<usize> = cx
                .ops
                .iter()
                .copied()
                .filter(|&o| cx.api.operations[o].method == Method::GraphqlMutation)
                .collect();
            if !mutations.is_empty() {
                let extra = mutations[cx.rng.random_range(0..mutations.len())];
                let extra = self.call(cx, extra);
                calls.push(extra);
            }
        }
        calls.push(last);
        TestCase::of(calls, Sampler::Graph, 0)
    }

    /// A mutant: one call's genes (most of the time), or a random call
    /// inserted.
    fn mutate(&mut self, cx: &mut Cx, base: &GqlTest) -> GqlTest {
        let mut test = base.clone();
        let n = test.calls.len();
        if cx.rng.random_bool(0.8) || n >= cx.config.mio.max_length {
            let i = cx.rng.random_range(0..n);
            self.generator.mutate(&mut test.calls[i].genes, &mut cx.rng);
        } else {
            let op = cx.random_op();
            let extra = self.call(cx, op);
            let at = cx.rng.random_range(0..n);
            test.calls.insert(at, extra);
        }
        test
    }

    fn start(&mut self, cx: &mut Cx, mut test: GqlTest, _follow_ups: bool) -> GqlRun {
        // Drawn as the test starts, after its calls: the order of the draws
        // is what makes a seeded run repeat.
        test.seed = cx.rng.random();
        // A stream of its own, so that what the pool holds never shifts the
        // search's own draws.
        let mut rng = Rng64::seed_from_u64(test.seed ^ 0x9e37_79b9_7f4a_7c15);
        let fallback = self.pooled_values(&mut test, &mut rng);
        GqlRun {
            generator: self.generator.clone(),
            check: self.check.clone(),
            links: self.links.clone(),
            rng: Rng64::seed_from_u64(test.seed),
            path: self.path.clone(),
            test,
            next: 0,
            values: HashMap::new(),
            pairs: Vec::new(),
            used: Vec::new(),
            fallback,
            harvest: Vec::new(),
        }
    }

    fn learn(
        &mut self,
        cx: &mut Cx,
        run: &GqlRun,
        exchanges: &[Exchange],
        findings: &[Vec<Finding>],
    ) -> Vec<(String, f64)> {
        self.learn_from(cx, run, exchanges, findings)
    }

    fn ran(run: GqlRun, exchanges: &[Exchange]) -> GqlTest {
        let mut test = run.test;
        test.calls.truncate(exchanges.len());
        test
    }

    fn describe(&self, _cx: &Cx, call: &GqlTestCall) -> Value {
        let (query, variables) = self.generator.render(&call.genes, ArgMode::Variables);
        let mut out = serde_json::json!({
            "query": query,
            "variables": variables,
            "takes_earlier_values": call.bind,
        });
        if let Some(b) = &call.genes.breach {
            out["breach"] = serde_json::to_value(&b.note).unwrap_or_default();
        }
        out
    }
}

#[cfg(test)]
mod tests;
