//! The search for GraphQL APIs: MIO over tests that are sequences of root
//! field calls (mutations first, so what they create flows into the queries
//! after them), sampled and mutated with the genes of
//! [`super::graphql`], judged by the same oracles and archive as REST.
//!
//! Like REST's search it follows the property graph: root fields are its
//! operation nodes, a call's arguments are prepared by the mutations that
//! produce the schemas their consumes edges name (`book(id)` ← `Book.id` ←
//! `createBook`), values of those schemas' properties in earlier answers of a
//! test flow into the arguments, and the answers refine the graph through
//! [`Feedback`] (observed produces edges, equivalences, edges suspended after
//! λ answers with an error or null data for the values they gave).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use indexmap::IndexMap;
use petgraph::visit::EdgeRef;
use petgraph::Direction;
use rand::{Rng, SeedableRng};
use serde_json::Value;

use super::coverage::CoverageTally;
use super::graphql::{ArgMode, FieldSelection, GqlCall, GqlGenerator, Selection};
use super::mio::{Archive, Length};
use super::values::Rng64;
use super::SearchConfig;
use crate::execution::{Driver, Exchange, RequestSpec, TestRun};
use crate::generation::flow::RETRY_SUSPENDED;
use crate::graph::feedback::{Change, Feedback};
use crate::graph::{EdgeKind, EdgeState, Label, NodeKind, PropertyGraph};
use crate::model::graphql::{TypeKind, TypeRef, TypeSystem};
use crate::model::{Api, Location, Method};
use crate::oracles::{witness::Ledger, Checker, Faults};

/// A GraphQL test: root field calls in order.
#[derive(Debug, Clone, PartialEq)]
pub struct GqlTest {
    /// The calls.
    pub calls: Vec<GqlCall>,
}

impl Length for GqlTest {
    fn calls(&self) -> usize {
        self.calls.len()
    }
}

pub use super::coverage::SchemaCoverage;

/// The operation name Cartograph gives a root field: `Query.book`.
pub fn root_name(ts: &TypeSystem, call: &GqlCall) -> String {
    let word = if Some(call.root.as_str()) == ts.mutation_type.as_deref() || call.root == "Mutation"
    {
        "Mutation"
    } else {
        "Query"
    };
    format!("{word}.{}", call.field)
}

/// A scalar value an answer carried: `(type, field, value)`.
type Seen = (String, String, Value);

/// Walks `data` along `selection`, noting each (type, field) that came back
/// and each scalar value by (type, field): what later calls' arguments may be
/// fed from (`Book.id`, `Author.id`, `Order.quantity`).
fn walk(sel: &Selection, data: &Value, pairs: &mut Vec<(String, String)>, seen: &mut Vec<Seen>) {
    match data {
        Value::Array(items) => {
            for item in items.iter().take(16) {
                walk(sel, item, pairs, seen);
            }
        }
        Value::Object(obj) => {
            let concrete = obj
                .get("__typename")
                .and_then(Value::as_str)
                .unwrap_or(&sel.on)
                .to_string();
            let mut visit = |fields: &[FieldSelection], on: &str, also: Option<&str>| {
                for f in fields {
                    let Some(v) = obj.get(&f.name) else { continue };
                    if v.is_null() {
                        continue;
                    }
                    pairs.push((on.to_string(), f.name.clone()));
                    if !v.is_object() && !v.is_array() {
                        seen.push((on.to_string(), f.name.clone(), v.clone()));
                        // A field selected on an interface is also that
                        // interface's property (a binding may name either).
                        if let Some(other) = also {
                            seen.push((other.to_string(), f.name.clone(), v.clone()));
                        }
                    }
                    if let Some(child) = &f.selection {
                        walk(child, v, pairs, seen);
                    }
                }
            };
            let also = (sel.on != concrete).then_some(sel.on.as_str());
            visit(&sel.fields, &concrete, also);
            for frag in &sel.fragments {
                if frag.on == concrete {
                    visit(&frag.fields, &frag.on, None);
                }
            }
        }
        _ => {}
    }
}

/// One input of a root field fed by a schema property through a consumes
/// edge of the graph: an argument (`id`, `authorId`) or a field of an
/// input-object argument (`input.authorId`).
#[derive(Debug, Clone, PartialEq)]
struct ArgSource {
    /// The input: the argument's name, dotted for an input-object field.
    input: String,
    /// The schema (the edge's source).
    schema: String,
    /// The schema's property that feeds the input.
    property: String,
    /// Whether the edge is active (not suspended).
    active: bool,
    /// The binding's confidence.
    score: f64,
}

/// A mutation that produces a schema.
#[derive(Debug, Clone, PartialEq)]
struct Maker {
    /// The mutation root field.
    field: String,
    /// Whether the schema is the field's own value (`$`, `$[*]`), not
    /// something nested in it (`createAuthor` returns `Author.books` too).
    top: bool,
}

/// What the graph tells the GraphQL search, read once per version of the
/// graph (like REST's `Plan`): which schema properties feed each root field's
/// arguments, and which mutations produce each schema. Empty for `--no-graph`.
#[derive(Debug, Clone, Default)]
struct Links {
    /// Operation (`Query.book`) → its fed inputs, by input name, then active
    /// first, best score first, then schema name.
    sources: IndexMap<String, Vec<ArgSource>>,
    /// Schema → the mutations producing it through active produces edges,
    /// by field name.
    makers: IndexMap<String, Vec<Maker>>,
}

impl Links {
    /// Reads the consumes and produces edges of `g`.
    fn from_graph(g: &PropertyGraph) -> Links {
        let mut links = Links::default();
        for op in g.nodes(NodeKind::Operation) {
            let node = &g.graph[op];
            let mut sources = Vec::new();
            for e in g.graph.edges_directed(op, Direction::Incoming) {
                if e.weight().kind != EdgeKind::Consumes {
                    continue;
                }
                let Label::Consumes { bindings } = &e.weight().label else {
                    continue;
                };
                for b in bindings {
                    // GraphQL arguments (and their input-object fields) travel
                    // as `Location::Argument`; a binding of a whole object
                    // (empty property) names nothing to copy.
                    if b.location != Location::Argument
                        || b.input.is_empty()
                        || b.property.is_empty()
                    {
                        continue;
                    }
                    sources.push(ArgSource {
                        input: b.input.clone(),
                        schema: g.graph[e.source()].name.clone(),
                        property: b.property.clone(),
                        active: e.weight().state == EdgeState::Active,
                        score: b.score,
                    });
                }
            }
            sources.sort_by(|a, b| {
                a.input
                    .cmp(&b.input)
                    .then_with(|| b.active.cmp(&a.active))
                    .then_with(|| {
                        b.score
                            .partial_cmp(&a.score)
                            .unwrap_or(std::cmp::Ordering::Equal)
                    })
                    .then_with(|| a.schema.cmp(&b.schema))
                    .then_with(|| a.property.cmp(&b.property))
            });
            if !sources.is_empty() {
                links.sources.insert(node.name.clone(), sources);
            }
            let Some(attrs) = node.operation() else {
                continue;
            };
            if attrs.method != Method::GraphqlMutation {
                continue;
            }
            for e in g.active_edges(op, EdgeKind::Produces, Direction::Outgoing) {
                let top = match &e.weight().label {
                    Label::Produces { sites } => {
                        sites.iter().any(|s| s.path == "$" || s.path == "$[*]")
                    }
                    _ => false,
                };
                links
                    .makers
                    .entry(g.graph[e.target()].name.clone())
                    .or_default()
                    .push(Maker {
                        field: attrs.path.clone(),
                        top,
                    });
            }
        }
        for makers in links.makers.values_mut() {
            makers.sort_by(|a, b| a.field.cmp(&b.field));
            makers.dedup_by(|a, b| a.field == b.field);
        }
        links.makers.sort_keys();
        links
    }

    /// The sources of one input, best first.
    fn of<'a>(&'a self, op: &str, input: &'a str) -> impl Iterator<Item = &'a ArgSource> + 'a {
        self.sources
            .get(op)
            .into_iter()
            .flatten()
            .filter(move |s| s.input == input)
    }

    /// The inputs of argument `arg` that the graph feeds: the argument
    /// itself, then fields of it (one level into an input object), each once.
    fn inputs_of(&self, op: &str, arg: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for s in self.sources.get(op).into_iter().flatten() {
            let field_of = s
                .input
                .strip_prefix(arg)
                .and_then(|r| r.strip_prefix('.'))
                .is_some_and(|f| !f.is_empty() && !f.contains('.'));
            if (s.input == arg || field_of) && !out.contains(&s.input) {
                out.push(s.input.clone());
            }
        }
        // The argument itself before its fields.
        out.sort_by_key(|i| i != arg);
        out
    }
}

/// `value` as the GraphQL input type `ty` takes it, when it fits: an `ID`
/// from a number becomes its text, an `Int` from a numeric string a number, a
/// list argument a one-item list.
fn coerce(ts: &TypeSystem, ty: &TypeRef, value: &Value) -> Option<Value> {
    let inner = match ty {
        TypeRef::NonNull(t) => return coerce(ts, t, value),
        TypeRef::List(t) => return coerce(ts, t, value).map(|v| Value::Array(vec![v])),
        TypeRef::Named(n) => n.as_str(),
    };
    match (inner, value) {
        ("ID", Value::String(_) | Value::Number(_)) => {
            Some(Value::String(crate::generation::request::as_text(value)))
        }
        ("String", Value::String(_)) => Some(value.clone()),
        ("Int", Value::Number(n)) if n.is_i64() || n.is_u64() => Some(value.clone()),
        ("Int", Value::String(s)) => s.parse::<i64>().ok().map(Value::from),
        ("Float", Value::Number(_)) => Some(value.clone()),
        ("Boolean", Value::Bool(_)) => Some(value.clone()),
        (name, _) => match ts.get(name).map(|t| t.kind) {
            Some(TypeKind::Enum) => value
                .as_str()
                .filter(|s| {
                    ts.get(name)
                        .is_some_and(|t| t.enum_values.iter().any(|e| e == s))
                })
                .map(|_| value.clone()),
            // Custom scalars take what the server gave.
            Some(TypeKind::Scalar) | None => Some(value.clone()),
            _ => None,
        },
    }
}

/// A GraphQL test being run.
pub struct GqlRun {
    gen: Arc<GqlGenerator>,
    links: Arc<Links>,
    rng: Rng64,
    path: String,
    /// The test (its calls as they were sent, once run).
    pub test: GqlTest,
    next: usize,
    /// Latest value per (type, field) from earlier answers of the test, with
    /// the call that gave it.
    values: HashMap<(String, String), (Value, usize)>,
    /// (type, field) pairs that came back.
    pub pairs: Vec<(String, String)>,
    /// Per call sent: the schemas whose values it was given, with the call
    /// that gave each (sorted by schema).
    pub used: Vec<Vec<(String, usize)>>,
}

impl GqlRun {
    fn learn(&mut self, call: usize, ex: &Exchange) {
        let Some(data) = ex
            .json()
            .and_then(|b| b.get("data"))
            .and_then(|d| d.get(&self.test.calls[call].field))
        else {
            return;
        };
        if let Some(sel) = &self.test.calls[call].selection {
            let mut seen = Vec::new();
            walk(sel, data, &mut self.pairs, &mut seen);
            for (t, f, v) in seen {
                self.values.insert((t, f), (v, call));
            }
        }
    }

    /// The value earlier answers give input `input` of `op`, through the
    /// graph: among its sources (a suspended one now and then, so that it can
    /// prove itself again), the one an answer gave latest; ties go to the
    /// better source.
    fn flowed(&mut self, op: &str, input: &str) -> Option<(Value, String, usize)> {
        let links = self.links.clone();
        let mut best: Option<(Value, String, usize)> = None;
        for s in links.of(op, input) {
            if !s.active && !self.rng.random_bool(RETRY_SUSPENDED) {
                continue;
            }
            let key = (s.schema.clone(), s.property.clone());
            if let Some((v, call)) = self.values.get(&key) {
                if best.as_ref().is_none_or(|(_, _, c)| call > c) {
                    best = Some((v.clone(), s.schema.clone(), *call));
                }
            }
        }
        best
    }
}

impl TestRun for GqlRun {
    fn next_request(&mut self, done: &[Exchange]) -> Option<RequestSpec> {
        if let Some(last) = done.last() {
            self.learn(self.next - 1, last);
        }
        let gen = self.gen.clone();
        let ts = gen.type_system();
        let mut call = self.test.calls.get(self.next)?.clone();
        let op = root_name(ts, &call);
        let field = ts.get(&call.root).and_then(|t| t.field(&call.field));
        // Values created or read earlier in the test flow into the arguments
        // the graph binds to them, at the top and one level into input objects.
        let mut used: Vec<(String, usize)> = Vec::new();
        for (name, value) in call.args.iter_mut() {
            let Some(arg) = field.and_then(|f| f.args.iter().find(|a| &a.name == name)) else {
                continue;
            };
            for input in self.links.clone().inputs_of(&op, name) {
                let Some((v, schema, from)) = self.flowed(&op, &input) else {
                    continue;
                };
                let fed = if input == *name {
                    coerce(ts, &arg.ty, &v).map(|v| *value = Some(v))
                } else {
                    let leaf = &input[name.len() + 1..];
                    let ty = ts
                        .get(arg.ty.base())
                        .and_then(|t| t.input_fields.iter().find(|f| f.name == leaf))
                        .map(|f| &f.ty);
                    match (ty, value.as_mut()) {
                        (Some(ty), Some(Value::Object(obj))) => coerce(ts, ty, &v).map(|v| {
                            obj.insert(leaf.to_string(), v);
                        }),
                        _ => None,
                    }
                };
                if fed.is_some() && !used.iter().any(|(s, _)| *s == schema) {
                    used.push((schema, from));
                }
            }
        }
        used.sort();
        self.used.push(used);
        self.test.calls[self.next] = call.clone();
        self.next += 1;
        let mutation = Some(call.root.as_str()) == ts.mutation_type.as_deref();
        let (query, variables) = gen.render(&call, ArgMode::Variables);
        let body = serde_json::json!({ "query": query, "variables": variables });
        Some(RequestSpec {
            operation: op,
            method: "POST".into(),
            path: self.path.clone(),
            headers: Vec::new(),
            body: Some(body.to_string()),
            content_type: Some("application/json".into()),
            graphql_query: !mutation,
        })
    }
}

/// What an error message says without the values in it, so each random
/// argument does not make a target of its own: digits become `#`, quoted
/// text `"…"` (escapes inside it included), and only the first 60
/// characters count.
fn error_wording(msg: &str) -> String {
    let mut out = String::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in msg.chars() {
        match quote {
            // `\"` inside a quoted value (Debug formatting) does not end it.
            Some(_) if escaped => escaped = false,
            Some(_) if c == '\\' => escaped = true,
            Some(q) if c == q => {
                out.push('…');
                out.push(c);
                quote = None;
            }
            Some(_) => {}
            None if c == '"' || c == '\'' || c == '`' => {
                out.push(c);
                quote = Some(c);
            }
            None if c.is_ascii_digit() => out.push('#'),
            None => out.push(c),
        }
        if out.chars().count() >= 60 {
            break;
        }
    }
    out
}

/// The MIO driver for GraphQL.
pub struct GqlDriver {
    api: Arc<Api>,
    gen: Arc<GqlGenerator>,
    config: SearchConfig,
    path: String,
    rng: Rng64,
    archive: Archive<GqlTest>,
    initial: VecDeque<(String, String)>,
    roots: Vec<(String, String)>,
    checker: Checker,
    faults: Faults,
    ledger: Ledger,
    started: Instant,
    requests: u64,
    tests: u64,
    coverage: CoverageTally,
    /// The property graph, refined by what the server answers.
    graph: PropertyGraph,
    /// What the graph says, read from `graph` (empty for `--no-graph`).
    links: Arc<Links>,
    /// The feedback loop (none for `--no-graph` and `--no-feedback`).
    feedback: Option<Feedback>,
    /// What the feedback loop changed in the graph, in order.
    changes: Vec<Change>,
}

impl GqlDriver {
    /// A driver for the GraphQL API `api` served at `path` under the target,
    /// with `graph` (from [`crate::graph::build`]) deciding which mutations
    /// create what a call needs and which answers' values feed which
    /// arguments, and `feedback` refining it from the answers. With
    /// `config.use_graph` false (`--no-graph`) neither happens: tests are
    /// random calls, and `feedback` is ignored.
    pub fn new(
        api: Arc<Api>,
        ts: &TypeSystem,
        path: String,
        graph: PropertyGraph,
        feedback: Option<Feedback>,
        config: SearchConfig,
    ) -> GqlDriver {
        let mut roots = Vec::new();
        let read_only = config.read_only;
        for root in [ts.mutation_type.clone(), ts.query_type.clone()]
            .into_iter()
            .flatten()
        {
            if read_only && Some(&root) == ts.mutation_type.as_ref() {
                continue;
            }
            if let Some(t) = ts.get(&root) {
                for f in &t.fields {
                    roots.push((root.clone(), f.name.clone()));
                }
            }
        }
        let coverage = CoverageTally::new(ts, roots.len());
        let (links, feedback) = if config.use_graph {
            (Links::from_graph(&graph), feedback)
        } else {
            (Links::default(), None)
        };
        GqlDriver {
            checker: Checker::new(&api, config.skip_checks.clone(), config.target.clone()),
            gen: Arc::new(GqlGenerator::new(ts, super::graphql::DEFAULT_MAX_DEPTH)),
            rng: Rng64::seed_from_u64(config.seed),
            initial: roots.iter().cloned().collect(),
            roots,
            api,
            config,
            path,
            archive: Archive::default(),
            faults: Faults::new(),
            ledger: Ledger::new(),
            started: Instant::now(),
            requests: 0,
            tests: 0,
            coverage,
            graph,
            links: Arc::new(links),
            feedback,
            changes: Vec::new(),
        }
    }

    /// The property graph, as the answers so far refined it.
    pub fn graph(&self) -> &PropertyGraph {
        &self.graph
    }

    /// What the feedback loop changed in the graph, in order.
    pub fn changes(&self) -> &[Change] {
        &self.changes
    }

    /// The faults found so far.
    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    /// The oracles applied.
    pub fn checker(&self) -> &Checker {
        &self.checker
    }

    /// Which request created which id.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// Schema coverage so far.
    pub fn coverage(&self) -> SchemaCoverage {
        self.coverage.summary()
    }

    /// Testing targets seen and covered.
    pub fn targets(&self) -> (usize, usize) {
        (self.archive.target_count(), self.archive.covered_count())
    }

    fn spent(&self) -> f64 {
        match (self.config.max_requests, self.config.budget) {
            (Some(m), _) => self.requests as f64 / m.max(1) as f64,
            (None, Some(b)) => self.started.elapsed().as_secs_f64() / b.as_secs_f64().max(1e-3),
            _ => 0.0,
        }
    }

    /// The final suite as runs (values flow again from each run's own
    /// answers), each with a title naming the targets it covers.
    pub fn suite_runs(&mut self) -> Vec<(Box<dyn TestRun>, String)> {
        let suite = self.archive.suite();
        suite
            .into_iter()
            .map(|(test, covers)| {
                let run: Box<dyn TestRun> = Box::new(self.run((*test).clone()));
                (run, format!("Covers: {}", covers.join(", ")))
            })
            .collect()
    }

    fn start(&mut self, test: GqlTest) -> Box<dyn TestRun> {
        Box::new(self.run(test))
    }

    fn run(&mut self, test: GqlTest) -> GqlRun {
        GqlRun {
            gen: self.gen.clone(),
            links: self.links.clone(),
            rng: Rng64::seed_from_u64(self.rng.random()),
            path: self.path.clone(),
            test,
            next: 0,
            values: HashMap::new(),
            pairs: Vec::new(),
            used: Vec::new(),
        }
    }

    /// A call of `(root, field)` with random genes.
    fn call(&mut self, root: &str, field: &str) -> GqlCall {
        self.gen.sample(root, field, &mut self.rng)
    }

    /// The mutations that create what a call's arguments are fed from,
    /// nearest first (`book(id)` ← `createBook(authorId)` ← `createAuthor`):
    /// for each argument (and field of an input-object argument) bound by an
    /// active consumes edge, the best such source schema some mutation
    /// produces, and a mutation producing it (one returning it, named
    /// `create…`, if there is one), itself preceded by its own creators.
    fn creators(&mut self, call: &GqlCall, depth: usize) -> Vec<GqlCall> {
        let ts = self.gen.type_system().clone();
        let Some(mutation) = ts.mutation_type.clone() else {
            return Vec::new();
        };
        if depth == 0 || self.config.read_only || !self.config.use_graph {
            return Vec::new();
        }
        let links = self.links.clone();
        let op = root_name(&ts, call);
        let own = (call.root == mutation).then_some(call.field.as_str());
        let mut made: Vec<String> = Vec::new();
        let mut out = Vec::new();
        for (name, _) in &call.args {
            for input in links.inputs_of(&op, name) {
                let Some((schema, makers)) = links.of(&op, &input).find_map(|s| {
                    let makers: Vec<&Maker> = links
                        .makers
                        .get(&s.schema)
                        .into_iter()
                        .flatten()
                        .filter(|m| Some(m.field.as_str()) != own)
                        .collect();
                    (s.active && !makers.is_empty()).then_some((s.schema.as_str(), makers))
                }) else {
                    continue;
                };
                if made.iter().any(|m| m == schema) {
                    continue;
                }
                made.push(schema.to_string());
                // Best tier first: returns the schema and is a creation, then
                // returns it, then a creation, then any producer.
                let tier = |m: &Maker| (!m.top, !m.field.starts_with("create"));
                let best = makers.iter().map(|m| tier(m)).min().unwrap_or_default();
                let tied: Vec<&str> = makers
                    .iter()
                    .filter(|m| tier(m) == best)
                    .map(|m| m.field.as_str())
                    .collect();
                let maker = tied[self.rng.random_range(0..tied.len())].to_string();
                if ts.get(&mutation).and_then(|t| t.field(&maker)).is_none() {
                    continue;
                }
                let made_call = self.call(&mutation, &maker);
                let mut before = self.creators(&made_call, depth - 1);
                before.push(made_call);
                out.extend(before);
            }
        }
        out
    }

    /// A new test: a root field, the creations it needs, and now and then a
    /// random mutation before it (a delete or an update of what was made).
    fn sample(&mut self) -> GqlTest {
        let k = self.rng.random_range(0..self.roots.len());
        let (root, field) = self.roots[k].clone();
        let last = self.call(&root, &field);
        let mut calls = self.creators(&last, 2);
        if !calls.is_empty() && self.rng.random_bool(0.5) {
            let mutations: Vec<(String, String)> = self
                .roots
                .iter()
                .filter(|(r, _)| Some(r) == self.gen.type_system().mutation_type.as_ref())
                .cloned()
                .collect();
            if !mutations.is_empty() {
                let (r, f) = mutations[self.rng.random_range(0..mutations.len())].clone();
                let extra = self.call(&r, &f);
                calls.push(extra);
            }
        }
        calls.push(last);
        GqlTest { calls }
    }

    fn mutate(&mut self, base: &GqlTest) -> GqlTest {
        let mut test = base.clone();
        let n = test.calls.len();
        if self.rng.random_bool(0.8) || n >= self.config.mio.max_length {
            let i = self.rng.random_range(0..n);
            self.gen.mutate(&mut test.calls[i], &mut self.rng);
        } else {
            let k = self.rng.random_range(0..self.roots.len());
            let (root, field) = self.roots[k].clone();
            let extra = self.call(&root, &field);
            let at = self.rng.random_range(0..n);
            test.calls.insert(at, extra);
        }
        test
    }
}

impl Driver for GqlDriver {
    fn next_test(&mut self) -> Option<Box<dyn TestRun>> {
        if self.roots.is_empty() {
            return None;
        }
        if let Some((root, field)) = self.initial.pop_front() {
            let call = self.call(&root, &field);
            return Some(self.start(GqlTest { calls: vec![call] }));
        }
        let mio = self.config.mio;
        let p_r = mio.anneal(self.spent(), mio.random_sampling, 0.0);
        if self.rng.random_bool(p_r.clamp(0.0, 1.0)) {
            let test = self.sample();
            return Some(self.start(test));
        }
        match self.archive.sample(&mut self.rng) {
            Some(base) => {
                let test = self.mutate(&base);
                Some(self.start(test))
            }
            None => {
                let test = self.sample();
                Some(self.start(test))
            }
        }
    }

    fn finished(&mut self, test: Box<dyn TestRun>, exchanges: Vec<Exchange>) {
        let any: Box<dyn std::any::Any> = test;
        let Ok(run) = any.downcast::<GqlRun>() else {
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
        let ts = self.gen.type_system().clone();
        let mut reached: Vec<(String, f64)> = Vec::new();
        let (mut answered, mut root_pairs) = (Vec::new(), Vec::new());
        let mut changed = false;
        for (k, ex) in exchanges.iter().enumerate() {
            let call = &run.test.calls[k];
            let name = root_name(&ts, call);
            let body = ex.json();
            let errors = body
                .and_then(|b| b.get("errors"))
                .and_then(Value::as_array)
                .is_some_and(|e| !e.is_empty());
            let value = body
                .and_then(|b| b.get("data"))
                .and_then(|d| d.get(&call.field));
            let data = value.is_some_and(|v| !v.is_null());
            let used = run.used.get(k).map_or(&[][..], Vec::as_slice);
            for (schema, _) in used {
                reached.push((
                    format!("edge:{schema}>{name}"),
                    if data && !errors { 1.0 } else { 0.5 },
                ));
            }
            if let Some(feedback) = &mut self.feedback {
                // The root field's value is what its produces sites describe.
                if let (Some(status), Some(value)) = (ex.status, value) {
                    let c = feedback.observe(&mut self.graph, &name, status, value, ex.seq);
                    changed |= !c.is_empty();
                    self.changes.extend(c);
                }
                // GraphQL answers 200 either way: the body says whether the
                // values given worked (data, no error) or not (an error, or
                // null data). No JSON body says nothing about them.
                if body.is_some() {
                    for (schema, _) in used {
                        if let Some(c) = feedback.binding_result(
                            &mut self.graph,
                            schema,
                            &name,
                            data && !errors,
                            ex.seq,
                        ) {
                            changed = true;
                            self.changes.push(c);
                        }
                    }
                }
            }
            if data && !errors {
                reached.push((format!("data:{name}"), 1.0));
                answered.push(name.clone());
                if Some(&call.root) == ts.query_type.as_ref() {
                    root_pairs.push((call.root.clone(), call.field.clone()));
                }
            } else {
                reached.push((
                    format!("data:{name}"),
                    if ex.status.is_some() { 0.5 } else { 0.3 },
                ));
            }
            if errors {
                reached.push((format!("errors:{name}"), 1.0));
                if let Some(msg) = body
                    .and_then(|b| b.pointer("/errors/0/message"))
                    .and_then(Value::as_str)
                {
                    reached.push((format!("error:{name}:{}", error_wording(msg)), 1.0));
                }
            }
            for f in &findings[k] {
                reached.push((format!("fault:{}", f.signature(ex.status)), 1.0));
            }
        }
        if changed {
            self.links = Arc::new(Links::from_graph(&self.graph));
        }
        for pair in &run.pairs {
            reached.push((format!("field:{}.{}", pair.0, pair.1), 1.0));
        }
        root_pairs.extend(run.pairs.iter().cloned());
        self.coverage.add_pairs(&root_pairs, &answered);
        let n = self.config.mio.population_at(self.spent());
        let seq = exchanges.last().map_or(0, |e| e.seq);
        let mut test = run.test.clone();
        test.calls.truncate(exchanges.len());
        self.archive.update(&Arc::new(test), &reached, n, seq);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_wording_hides_the_values() {
        assert_eq!(
            error_wording("invalid id \"9yzWPJ1y\""),
            error_wording("invalid id \"abc\"")
        );
        assert_eq!(error_wording("no book 42"), "no book ##");
        assert_eq!(
            error_wording(r#"invalid id "\"1e""#),
            error_wording(r#"invalid id "\\J""#)
        );
        assert_ne!(error_wording("no book 42"), error_wording("no author 42"));
    }
    use serde_json::json;
    use std::path::Path;

    fn load(sdl: &str) -> (Arc<Api>, TypeSystem, PropertyGraph) {
        let loaded = crate::spec::load_text(sdl, Path::new("schema.graphql")).unwrap();
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

    fn driver(sdl: &str, seed: u64, use_graph: bool, lambda: u32) -> GqlDriver {
        let (api, ts, graph) = load(sdl);
        GqlDriver::new(
            api,
            &ts,
            String::new(),
            graph,
            Some(Feedback::new(lambda)),
            config(seed, use_graph),
        )
    }

    fn names(test: &GqlTest) -> Vec<String> {
        test.calls.iter().map(|c| c.field.clone()).collect()
    }

    /// Sampled tests ending in `field`.
    fn samples_ending_in(d: &mut GqlDriver, field: &str) -> Vec<Vec<String>> {
        (0..400)
            .map(|_| d.sample())
            .filter(|t| t.calls.last().is_some_and(|c| c.field == field))
            .map(|t| names(&t))
            .collect()
    }

    fn answer(seq: u64, request: RequestSpec, body: Value) -> Exchange {
        Exchange {
            seq,
            request,
            status: Some(200),
            headers: Vec::new(),
            body: body.to_string(),
            truncated: false,
            failure: None,
            elapsed: std::time::Duration::ZERO,
            parsed: Default::default(),
        }
    }

    /// Runs `calls` in `d`, answering call k with `answers[k]`; the run and
    /// its exchanges.
    fn run(d: &mut GqlDriver, calls: Vec<GqlCall>, answers: &[Value]) -> (GqlRun, Vec<Exchange>) {
        let mut run = d.run(GqlTest { calls });
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
        assert!(d.feedback.is_none());
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
        assert_eq!(arg(&run.test.calls[1], "id"), Some(&json!("999")));
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
        let sent = &run.test.calls;
        // A number answered for an ID travels as its text.
        assert_eq!(arg(&sent[1], "authorId"), Some(&json!("17")));
        assert_eq!(arg(&sent[2], "id"), Some(&json!("17")));
        assert_eq!(arg(&sent[3], "id"), Some(&json!("42")));
        // No Order came back: order(id) keeps its own value.
        assert_eq!(arg(&sent[4], "id"), Some(&json!("5")));
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
        assert!(graph
            .find_edge(author, create, EdgeKind::Consumes)
            .is_some());
        let mut d = GqlDriver::new(api, &ts, String::new(), graph, None, config(4, true));
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
            arg(&run.test.calls[1], "input"),
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
