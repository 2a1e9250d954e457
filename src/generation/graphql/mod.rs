//! GraphQL through the one search: a call's genes are a root field's
//! arguments and selection ([`genes`]); a test is a sequence of root field
//! calls whose first ones are the mutations the graph says create what the
//! last one needs (`book(id)` ← `Book.id` ← `createBook`); values of those
//! schemas' properties in earlier answers flow into the arguments ([`run`]);
//! and an answer is read by its data, errors and nulls (`learn`), which
//! refine the graph through the shared feedback (observed produces edges,
//! equivalences, edges suspended after λ answers with an error or null data
//! for the values they gave).

pub mod coverage;
pub mod generate;
pub mod genes;
mod learn;
mod links;
pub mod negative;
pub mod render;
pub mod run;

use std::collections::HashMap;
use std::sync::Arc;

use indexmap::IndexMap;
use rand::{Rng, SeedableRng};
use serde_json::Value;

pub use coverage::SchemaCoverage;
pub use generate::{DEFAULT_MAX_DEPTH, GqlGenerator};
pub use genes::{ArgMode, FieldSelection, GqlCall, Selection};
pub use render::to_sdl;
pub use run::{GqlRun, root_name};

use self::coverage::CoverageTally;
use self::links::{Links, Maker};
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

/// Probability of listing a schema first (`events`, before `event(id:)`)
/// when earlier tests already saw values of it.
const LIST_AGAIN: f64 = 0.3;

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

    /// A call of `op` with random genes.
    fn call(&self, cx: &mut Cx, op: usize) -> GqlTestCall {
        let (root, field) = &self.roots[&op];
        Call::of(op, self.generator.sample(root, field, &mut cx.rng))
    }

    /// The calls that make or list what a call's arguments are fed from,
    /// nearest first (`book(id)` ← `createBook(authorId)` ← `createAuthor`):
    /// for each argument (and field of an input-object argument) bound by an
    /// active consumes edge, the best such source schema some mutation
    /// produces, and a mutation producing it (one returning it, named
    /// `create…`, if there is one), itself preceded by its own creators. A
    /// source no mutation makes (or any, read-only) is listed instead by a
    /// query without required arguments (`events`), unless earlier tests
    /// saw its values already (then now and then). Each selects the property
    /// the link passes on.
    fn creators(&self, cx: &mut Cx, call: &GqlCall, depth: usize) -> Vec<GqlTestCall> {
        if depth == 0 || !cx.config.use_graph {
            return Vec::new();
        }
        let ts = self.generator.type_system();
        let links = self.links.clone();
        let op = root_name(ts, call);
        let mut made: Vec<String> = Vec::new();
        let mut out = Vec::new();
        for (name, _) in &call.args {
            for input in links.inputs_of(&op, name) {
                let sources: Vec<&links::ArgSource> =
                    links.of(&op, &input).filter(|s| s.active).collect();
                let by = |map: &IndexMap<String, Vec<Maker>>, root: &str| {
                    sources.iter().find_map(|s| {
                        let makers: Vec<Maker> = map
                            .get(&s.schema)
                            .into_iter()
                            .flatten()
                            .filter(|m| format!("{root}.{}", m.field) != op)
                            .filter(|m| root == "Mutation" || self.lists_freely(&m.field))
                            .cloned()
                            .collect();
                        (!makers.is_empty()).then_some((*s, makers))
                    })
                };
                let mutation = (!cx.config.read_only)
                    .then(|| by(&links.makers, "Mutation"))
                    .flatten();
                let (root, (source, makers)) = match mutation {
                    Some(found) => ("Mutation", found),
                    None => match by(&links.listers, "Query") {
                        Some(found) => ("Query", found),
                        None => continue,
                    },
                };
                if made.contains(&source.schema) {
                    continue;
                }
                made.push(source.schema.clone());
                let key = format!("{}.{}", source.schema, source.property);
                if root == "Query"
                    && self.pool.latest(&key).is_some()
                    && !cx.rng.random_bool(LIST_AGAIN)
                {
                    continue;
                }
                // Best tier first: returns the schema and is a creation, then
                // returns it, then a creation, then any producer.
                let tier = |m: &Maker| (!m.top, !m.field.starts_with("create"));
                let best = makers.iter().map(tier).min().unwrap_or_default();
                let tied: Vec<&Maker> = makers.iter().filter(|m| tier(m) == best).collect();
                let maker = tied[cx.rng.random_range(0..tied.len())];
                let Some(&maker_op) = self.positions.get(&format!("{root}.{}", maker.field)) else {
                    continue;
                };
                if !self.roots.contains_key(&maker_op) || !cx.ops.contains(&maker_op) {
                    continue;
                }
                let mut made_call = self.call(cx, maker_op);
                self.generator.ensure_selected(
                    &mut made_call.genes,
                    &maker.path,
                    &source.property,
                    &mut cx.rng,
                );
                let mut before = if root == "Mutation" {
                    self.creators(cx, &made_call.genes, depth - 1)
                } else {
                    Vec::new()
                };
                before.push(made_call);
                out.extend(before);
            }
        }
        out
    }

    /// Whether query `field` can be called without any argument (a listing).
    fn lists_freely(&self, field: &str) -> bool {
        let ts = self.generator.type_system();
        ts.query_type
            .as_deref()
            .and_then(|q| ts.get(q))
            .and_then(|t| t.field(field))
            .is_some_and(|f| !f.args.iter().any(generate::required))
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
mod tests {
    use super::*;
    use crate::execution::{Driver, RequestSpec, TestRun};
    use crate::graph::feedback::Change;
    use crate::graph::{EdgeKind, EdgeState};

    use serde_json::json;
    use std::path::Path;

    fn load(sdl: &str) -> (Arc<Api>, TypeSystem, PropertyGraph) {
        let loaded = crate::load::load_text(sdl, Path::new("schema.graphql")).unwrap();
        let graph = crate::graph::build(&loaded.api);
        let ts = loaded.api.graphql.clone().unwrap();
        (Arc::new(loaded.api), ts, graph)
    }

    fn config(seed: u64, use_graph: bool) -> SearchConfig {
        SearchConfig {
            mio: Default::default(),
            seed,
            read_only: false,
            use_graph,
            max_requests: Some(1000),
            budget: None,
            skip_checks: Vec::new(),
            target: None,
        }
    }

    type Searcher = Search<Graphql>;

    fn searcher(
        api: Arc<Api>,
        ts: &TypeSystem,
        graph: PropertyGraph,
        feedback: Option<Feedback>,
        config: SearchConfig,
    ) -> Searcher {
        Search::graphql(api, ts, graph, feedback, config)
    }

    fn driver(sdl: &str, seed: u64, use_graph: bool, lambda: u32) -> Searcher {
        let (api, ts, graph) = load(sdl);
        searcher(
            api,
            &ts,
            graph,
            Some(Feedback::new(lambda)),
            config(seed, use_graph),
        )
    }

    fn names(test: &GqlTest) -> Vec<String> {
        test.calls.iter().map(|c| c.genes.field.clone()).collect()
    }

    /// Sampled tests ending in `field`.
    fn samples_ending_in(d: &mut Searcher, field: &str) -> Vec<Vec<String>> {
        (0..400)
            .map(|_| d.sample())
            .filter(|t| t.calls.last().is_some_and(|c| c.genes.field == field))
            .map(|t| names(&t))
            .collect()
    }

    /// A test of these calls of `d`'s root fields.
    fn test_of(d: &Searcher, calls: Vec<GqlCall>) -> GqlTest {
        let positions = d.api().operation_positions();
        let calls = calls
            .into_iter()
            .map(|c| {
                let word = if c.root == "Mutation" {
                    "Mutation"
                } else {
                    "Query"
                };
                let op = positions
                    .get(&format!("{word}.{}", c.field))
                    .copied()
                    .expect("a root field of the schema");
                Call::of(op, c)
            })
            .collect();
        TestCase::of(calls, Sampler::Random, 0)
    }

    fn answer(seq: u64, request: RequestSpec, body: Value) -> Exchange {
        Exchange {
            seq,
            request,
            status: Some(200),
            body: body.to_string(),
            ..Default::default()
        }
    }

    /// Runs `calls` in `d`, answering call k with `answers[k]`; the run and
    /// its exchanges.
    fn run(d: &mut Searcher, calls: Vec<GqlCall>, answers: &[Value]) -> (GqlRun, Vec<Exchange>) {
        let test = test_of(d, calls);
        let mut run = d.run(test);
        let mut done: Vec<Exchange> = Vec::new();
        for (k, body) in answers.iter().enumerate() {
            let req = run.next_request(&done).expect("a request per call");
            done.push(answer(k as u64, req, body.clone()));
        }
        assert!(run.next_request(&done).is_none());
        (run, done)
    }

    /// `root.field` selecting only `id` (when it returns an object), with
    /// these arguments.
    fn call(root: &str, field: &str, args: &[(&str, Value)]) -> GqlCall {
        let on = match field {
            "createAuthor" | "author" => "Author",
            "createBook" | "book" => "Book",
            "placeOrder" | "order" => "Order",
            _ => "",
        };
        GqlCall {
            root: root.into(),
            field: field.into(),
            args: args
                .iter()
                .map(|(n, v)| (n.to_string(), Some(v.clone())))
                .collect(),
            selection: (!on.is_empty()).then(|| Selection {
                on: on.into(),
                typename: false,
                fields: vec![FieldSelection {
                    name: "id".into(),
                    args: Vec::new(),
                    selection: None,
                }],
                fragments: Vec::new(),
            }),
            breach: None,
        }
    }

    fn arg<'c>(c: &'c GqlCall, name: &str) -> Option<&'c Value> {
        c.args.iter().find(|(n, _)| n == name)?.1.as_ref()
    }

    #[test]
    fn the_graph_says_which_mutations_create_what_a_query_needs() {
        let mut d = driver(crate::demo::GRAPHQL_SDL, 7, true, 3);
        let books = samples_ending_in(&mut d, "book");
        assert!(books.len() > 10, "{books:?}");
        for t in &books {
            // book(id) ← Book.id ← createBook(authorId) ← Author.id ← createAuthor.
            assert_eq!(t[..2], ["createAuthor", "createBook"], "{t:?}");
        }
        // placeOrder is not named `create…`, but it is the mutation returning
        // an Order, so it is the one order(id) is prepared with.
        let orders = samples_ending_in(&mut d, "order");
        assert!(!orders.is_empty());
        for t in &orders {
            assert_eq!(t[..2], ["createBook", "placeOrder"], "{t:?}");
        }
        // Nothing feeds createAuthor's arguments.
        for t in samples_ending_in(&mut d, "createAuthor") {
            assert_eq!(t, ["createAuthor"]);
        }
    }

    #[test]
    fn without_the_graph_tests_are_random_calls() {
        let mut d = driver(crate::demo::GRAPHQL_SDL, 7, false, 3);
        for _ in 0..200 {
            assert_eq!(d.sample().calls.len(), 1);
        }
        let (run, _) = run(
            &mut d,
            vec![
                call("Mutation", "createAuthor", &[("name", json!("Ann"))]),
                call("Query", "author", &[("id", json!("999"))]),
            ],
            &[
                json!({"data": {"createAuthor": {"id": "17"}}}),
                json!({"data": {"author": null}}),
            ],
        );
        assert_eq!(arg(&run.test.calls[1].genes, "id"), Some(&json!("999")));
        assert!(run.used.iter().all(Vec::is_empty));
    }

    #[test]
    fn ids_flow_along_consumes_edges_and_are_recorded_per_call() {
        let mut d = driver(crate::demo::GRAPHQL_SDL, 1, true, 3);
        let calls = vec![
            call("Mutation", "createAuthor", &[("name", json!("Ann"))]),
            call(
                "Mutation",
                "createBook",
                &[
                    ("authorId", json!("0")),
                    ("input", json!({"title": "T", "price": 1.5, "stock": 2})),
                ],
            ),
            call("Mutation", "deleteAuthor", &[("id", json!("0"))]),
            call("Query", "book", &[("id", json!("0"))]),
            call("Query", "order", &[("id", json!("5"))]),
        ];
        let (run, _) = run(
            &mut d,
            calls,
            &[
                json!({"data": {"createAuthor": {"id": 17}}}),
                json!({"data": {"createBook": {"id": "42"}}}),
                json!({"data": {"deleteAuthor": true}}),
                json!({"data": {"book": {"id": "42"}}}),
                json!({"data": {"order": null}}),
            ],
        );
        let sent: Vec<&GqlCall> = run.test.calls.iter().map(|c| &c.genes).collect();
        // A number answered for an ID travels as its text.
        assert_eq!(arg(sent[1], "authorId"), Some(&json!("17")));
        assert_eq!(arg(sent[2], "id"), Some(&json!("17")));
        assert_eq!(arg(sent[3], "id"), Some(&json!("42")));
        // No Order came back: order(id) keeps its own value.
        assert_eq!(arg(sent[4], "id"), Some(&json!("5")));
        assert_eq!(
            run.used,
            vec![
                vec![],
                vec![("Author".to_string(), 0)],
                vec![("Author".to_string(), 0)],
                vec![("Book".to_string(), 1)],
                vec![],
            ]
        );
    }

    #[test]
    fn input_object_fields_bound_by_the_graph_are_created_and_fed() {
        let sdl = "type Query { book(id: ID!): Book }
            type Mutation { createAuthor(name: String!): Author! createBook(input: BookInput!): Book! }
            type Author { id: ID! name: String! }
            type Book { id: ID! title: String! }
            input BookInput { authorId: ID! title: String! }";
        let (api, ts, graph) = load(sdl);
        // graph::build binds the input object's id field: `input.authorId ← Author.id`.
        let (author, create) = (
            graph.schema("Author").unwrap(),
            graph.operation("Mutation.createBook").unwrap(),
        );
        assert!(
            graph
                .find_edge(author, create, EdgeKind::Consumes)
                .is_some()
        );
        let mut d = searcher(api, &ts, graph, None, config(4, true));
        let books = samples_ending_in(&mut d, "book");
        assert!(!books.is_empty());
        for t in &books {
            assert_eq!(t[..2], ["createAuthor", "createBook"], "{t:?}");
        }
        let (run, _) = run(
            &mut d,
            vec![
                call("Mutation", "createAuthor", &[("name", json!("Ann"))]),
                call(
                    "Mutation",
                    "createBook",
                    &[("input", json!({"authorId": "1", "title": "T"}))],
                ),
            ],
            &[
                json!({"data": {"createAuthor": {"id": "17"}}}),
                json!({"data": {"createBook": {"id": "42"}}}),
            ],
        );
        assert_eq!(
            arg(&run.test.calls[1].genes, "input"),
            Some(&json!({"authorId": "17", "title": "T"}))
        );
        assert_eq!(run.used[1], [("Author".to_string(), 0)]);
    }

    #[test]
    fn an_answer_the_schema_does_not_promise_teaches_a_producer() {
        let sdl = "scalar JSON
            type Query { book(id: ID!): Book }
            type Mutation { touch: JSON }
            type Book { id: ID! title: String! }";
        let mut d = driver(sdl, 5, true, 3);
        for t in samples_ending_in(&mut d, "book") {
            assert_eq!(t, ["book"], "nothing is known to make a Book");
        }
        let touch = GqlCall {
            root: "Mutation".into(),
            field: "touch".into(),
            args: Vec::new(),
            selection: None,
            breach: None,
        };
        let (r, ex) = run(
            &mut d,
            vec![touch],
            &[json!({"data": {"touch": {"id": "8", "title": "Dune"}}})],
        );
        d.finished(Box::new(r), ex);
        assert_eq!(
            d.changes(),
            [Change::Produces {
                operation: "Mutation.touch".into(),
                schema: "Book".into()
            }]
        );
        // The lookup is rebuilt: book(id) is now prepared with touch.
        let books = samples_ending_in(&mut d, "book");
        assert!(!books.is_empty());
        for t in books {
            assert_eq!(t[0], "touch", "{t:?}");
        }
    }

    /// The edge `schema → op`, and its state.
    fn state(g: &PropertyGraph, schema: &str, op: &str) -> EdgeState {
        let e = g
            .find_edge(
                g.schema(schema).unwrap(),
                g.operation(op).unwrap(),
                EdgeKind::Consumes,
            )
            .unwrap();
        g.graph[e].state
    }

    #[test]
    fn lambda_failed_answers_suspend_the_edge_and_a_success_reactivates_it() {
        let mut d = driver(crate::demo::GRAPHQL_SDL, 2, true, 3);
        let test = || {
            vec![
                call("Mutation", "createAuthor", &[("name", json!("Ann"))]),
                call("Query", "author", &[("id", json!("0"))]),
            ]
        };
        let created = json!({"data": {"createAuthor": {"id": "17"}}});
        for k in 0..3 {
            assert_eq!(
                state(d.graph(), "Author", "Query.author"),
                EdgeState::Active,
                "after {k} failure(s)"
            );
            // Null data with an error: the id given did not work (an answer
            // of 200 all the same).
            let (r, ex) = run(
                &mut d,
                test(),
                &[
                    created.clone(),
                    json!({"data": {"author": null}, "errors": [{"message": "no author 17"}]}),
                ],
            );
            assert_eq!(r.used[1], [("Author".to_string(), 0)]);
            d.finished(Box::new(r), ex);
        }
        assert_eq!(
            state(d.graph(), "Author", "Query.author"),
            EdgeState::Suspended
        );
        assert!(d.changes().contains(&Change::Suspended {
            schema: "Author".into(),
            operation: "Query.author".into()
        }));
        assert_eq!(
            state(d.graph(), "Author", "Mutation.deleteAuthor"),
            EdgeState::Active,
            "only the failing edge"
        );
        // The cached lookup follows: author(id) is no longer prepared with
        // createAuthor, and its id flows only now and then.
        for t in samples_ending_in(&mut d, "author") {
            assert_eq!(t.len(), 1, "{t:?}");
        }
        let mut flowed = false;
        for _ in 0..200 {
            let (r, ex) = run(
                &mut d,
                test(),
                &[created.clone(), json!({"data": {"author": {"id": "17"}}})],
            );
            if !r.used[1].is_empty() {
                // It worked: the edge is back.
                d.finished(Box::new(r), ex);
                flowed = true;
                break;
            }
        }
        assert!(flowed, "a suspended edge is retried now and then");
        assert_eq!(
            state(d.graph(), "Author", "Query.author"),
            EdgeState::Active
        );
        assert!(matches!(
            d.changes().last(),
            Some(Change::Reactivated { .. })
        ));
    }
}
