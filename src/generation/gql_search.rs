//! The search for GraphQL APIs: MIO over tests that are sequences of root
//! field calls (mutations first, so what they create flows into the queries
//! after them), sampled and mutated with the genes of
//! [`super::graphql`], judged by the same oracles and archive as REST.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use indexmap::IndexSet;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use serde_json::Value;

use super::graphql::{ArgMode, FieldSelection, GqlCall, GqlGenerator, Selection};
use super::mio::{Archive, Length};
use super::values::Rng64;
use super::SearchConfig;
use crate::execution::{Driver, Exchange, RequestSpec, TestRun};
use crate::model::graphql::TypeSystem;
use crate::model::Api;
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

/// Schema coverage as AutoGraphQL measures it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SchemaCoverage {
    /// (type, field) pairs that came back in a `data` answer.
    pub covered: usize,
    /// (type, field) pairs of the schema's object and interface types.
    pub total: usize,
    /// Root fields that answered `data` (not null, no error for them).
    pub root_fields_reached: Vec<String>,
    /// Root fields in the schema (queries and mutations).
    pub root_fields: usize,
}

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

/// Walks `data` along `selection`, noting each (type, field) that came back
/// and each object's `id` by type.
fn walk(
    sel: &Selection,
    data: &Value,
    pairs: &mut Vec<(String, String)>,
    ids: &mut Vec<(String, Value)>,
) {
    match data {
        Value::Array(items) => {
            for item in items.iter().take(16) {
                walk(sel, item, pairs, ids);
            }
        }
        Value::Object(obj) => {
            let concrete = obj
                .get("__typename")
                .and_then(Value::as_str)
                .unwrap_or(&sel.on)
                .to_string();
            let mut visit = |fields: &[FieldSelection], on: &str| {
                for f in fields {
                    let Some(v) = obj.get(&f.name) else { continue };
                    if v.is_null() {
                        continue;
                    }
                    pairs.push((on.to_string(), f.name.clone()));
                    if f.name == "id" && !v.is_object() && !v.is_array() {
                        ids.push((on.to_string(), v.clone()));
                    }
                    if let Some(child) = &f.selection {
                        walk(child, v, pairs, ids);
                    }
                }
            };
            visit(&sel.fields, &concrete);
            for frag in &sel.fragments {
                if frag.on == concrete {
                    visit(&frag.fields, &frag.on);
                }
            }
        }
        _ => {}
    }
}

/// The type an id-like argument names: `bookId` → `Book`; `id` → the field's
/// composite return type, else the noun of its name (`deleteAuthor` → `Author`).
fn named_type(ts: &TypeSystem, call: &GqlCall, arg: &str) -> Option<String> {
    let cap = |s: &str| {
        let mut c = s.chars();
        c.next()
            .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
            .unwrap_or_default()
    };
    if let Some(prefix) = arg.strip_suffix("Id").or_else(|| arg.strip_suffix("_id")) {
        return Some(cap(prefix));
    }
    if arg != "id" {
        return None;
    }
    let field = ts.get(&call.root).and_then(|t| t.field(&call.field))?;
    let base = field.ty.base();
    if ts.is_composite(base) && Some(base) != ts.query_type.as_deref() {
        return Some(base.to_string());
    }
    let noun = call
        .field
        .trim_start_matches(|c: char| c.is_ascii_lowercase());
    (!noun.is_empty()).then(|| noun.to_string())
}

/// A GraphQL test being run.
pub struct GqlRun {
    gen: Arc<GqlGenerator>,
    path: String,
    /// The test (its calls as they were sent, once run).
    pub test: GqlTest,
    next: usize,
    /// Latest id per type from earlier answers of the test.
    ids: HashMap<String, Value>,
    /// (type, field) pairs that came back.
    pub pairs: Vec<(String, String)>,
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
            let mut ids = Vec::new();
            walk(sel, data, &mut self.pairs, &mut ids);
            for (t, v) in ids {
                self.ids.insert(t, v);
            }
        }
    }
}

impl TestRun for GqlRun {
    fn next_request(&mut self, done: &[Exchange]) -> Option<RequestSpec> {
        if let Some(last) = done.last() {
            self.learn(self.next - 1, last);
        }
        let ts = self.gen.type_system();
        let mut call = self.test.calls.get(self.next)?.clone();
        // Ids created or read earlier in the test flow into the arguments
        // that name them, at the top and one level into input objects.
        for (name, value) in call.args.iter_mut() {
            if let Some(t) = named_type(ts, &self.test.calls[self.next], name) {
                if let Some(v) = self.ids.get(&t) {
                    *value = Some(Value::String(crate::generation::request::as_text(v)));
                }
            }
        }
        self.test.calls[self.next] = call.clone();
        self.next += 1;
        let mutation = Some(call.root.as_str()) == ts.mutation_type.as_deref();
        let (query, variables) = self.gen.render(&call, ArgMode::Variables);
        let body = serde_json::json!({ "query": query, "variables": variables });
        Some(RequestSpec {
            operation: root_name(ts, &call),
            method: "POST".into(),
            path: self.path.clone(),
            headers: Vec::new(),
            body: Some(body.to_string()),
            content_type: Some("application/json".into()),
            graphql_query: !mutation,
        })
    }
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
    covered: IndexSet<(String, String)>,
    reached: IndexSet<String>,
    total_pairs: usize,
}

impl GqlDriver {
    /// A driver for the GraphQL API `api` served at `path` under the target.
    pub fn new(api: Arc<Api>, ts: &TypeSystem, path: String, config: SearchConfig) -> GqlDriver {
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
        let total_pairs = ts
            .types
            .values()
            .filter(|t| {
                matches!(
                    t.kind,
                    crate::model::graphql::TypeKind::Object
                        | crate::model::graphql::TypeKind::Interface
                ) && !t.name.starts_with("__")
                    && Some(t.name.as_str()) != ts.mutation_type.as_deref()
                    && Some(t.name.as_str()) != ts.subscription_type.as_deref()
            })
            .map(|t| t.fields.len())
            .sum();
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
            covered: IndexSet::new(),
            reached: IndexSet::new(),
            total_pairs,
        }
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
        SchemaCoverage {
            covered: self.covered.len(),
            total: self.total_pairs,
            root_fields_reached: self.reached.iter().cloned().collect(),
            root_fields: self.roots.len(),
        }
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

    fn start(&self, test: GqlTest) -> Box<dyn TestRun> {
        Box::new(GqlRun {
            gen: self.gen.clone(),
            path: self.path.clone(),
            test,
            next: 0,
            ids: HashMap::new(),
            pairs: Vec::new(),
        })
    }

    /// A call of `(root, field)` with random genes.
    fn call(&mut self, root: &str, field: &str) -> GqlCall {
        self.gen.sample(root, field, &mut self.rng)
    }

    /// The mutations that create what a call's id-like arguments name,
    /// nearest first (`book(id)` ← `createBook(authorId)` ← `createAuthor`).
    fn creators(&mut self, call: &GqlCall, depth: usize) -> Vec<GqlCall> {
        let ts = self.gen.type_system().clone();
        let Some(mutation) = ts.mutation_type.clone() else {
            return Vec::new();
        };
        if depth == 0 || self.config.read_only {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (name, _) in &call.args {
            let Some(t) = named_type(&ts, call, name) else {
                continue;
            };
            let maker = ts.get(&mutation).and_then(|m| {
                m.fields
                    .iter()
                    .find(|f| f.ty.base() == t && f.name.starts_with("create"))
                    .map(|f| f.name.clone())
            });
            if let Some(maker) = maker {
                let made = self.call(&mutation, &maker);
                let mut before = self.creators(&made, depth - 1);
                before.push(made);
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
        for (k, ex) in exchanges.iter().enumerate() {
            let call = &run.test.calls[k];
            let name = root_name(&ts, call);
            let body = ex.json();
            let errors = body
                .and_then(|b| b.get("errors"))
                .and_then(Value::as_array)
                .is_some_and(|e| !e.is_empty());
            let data = body
                .and_then(|b| b.get("data"))
                .and_then(|d| d.get(&call.field))
                .is_some_and(|v| !v.is_null());
            if data && !errors {
                reached.push((format!("data:{name}"), 1.0));
                self.reached.insert(name.clone());
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
                    // Digits and quoted values vary; the wording is the signature.
                    let sig: String = msg
                        .chars()
                        .take(60)
                        .map(|c| if c.is_ascii_digit() { '#' } else { c })
                        .collect();
                    reached.push((format!("error:{name}:{sig}"), 1.0));
                }
            }
            for f in &findings[k] {
                reached.push((format!("fault:{}", f.signature(ex.status)), 1.0));
            }
        }
        for pair in &run.pairs {
            reached.push((format!("field:{}.{}", pair.0, pair.1), 1.0));
            self.covered.insert(pair.clone());
        }
        let n = self
            .config
            .mio
            .anneal(self.spent(), self.config.mio.population as f64, 1.0)
            .round()
            .max(1.0) as usize;
        let seq = exchanges.last().map_or(0, |e| e.seq);
        let mut test = run.test.clone();
        test.calls.truncate(exchanges.len());
        self.archive.update(&Arc::new(test), &reached, n, seq);
    }
}
