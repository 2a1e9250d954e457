//! Running one GraphQL test: each root field call is rendered when its turn
//! comes, its arguments (and input-object fields) fed by the values of the
//! schema properties earlier answers of the test returned, along the graph's
//! consumes edges; each answer is walked along the call's selection to note
//! the (type, field) pairs and the scalar values it carried.

use std::collections::HashMap;
use std::sync::Arc;

use rand::Rng;
use serde_json::Value;

use super::GqlTest;
use super::generate::GqlGenerator;
use super::genes::{ArgMode, FieldSelection, GqlCall, Selection};
use super::links::Links;
use crate::execution::{Exchange, RequestSpec, TestRun};
use crate::generation::plan::RETRY_SUSPENDED;
use crate::generation::values::Rng64;
use crate::model::graphql::{TypeKind, TypeRef, TypeSystem};

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
pub(super) type Seen = (String, String, Value);

/// The "call" that gave a value taken from the run's pool (an earlier test).
pub(super) const POOLED: usize = usize::MAX;

/// Values one test keeps for the pool, bounded as listings grow.
const HARVEST: usize = 256;

/// Walks `data` along `selection`, noting each (type, field) that came back
/// and each scalar value by (type, field): what later calls' arguments may be
/// fed from (`Book.id`, `Author.id`, `Order.quantity`).
pub(super) fn walk(
    sel: &Selection,
    data: &Value,
    pairs: &mut Vec<(String, String)>,
    seen: &mut Vec<Seen>,
) {
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
                    // A list of scalars (`tags`) gives each element as a
                    // value of the field: an argument takes one.
                    for v in crate::generation::pool::scalars(v) {
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

/// `value` as the GraphQL input type `ty` takes it, when it fits: an `ID`
/// from a number becomes its text, an `Int` from a numeric string a number, a
/// list argument a one-item list.
pub(super) fn coerce(ts: &TypeSystem, ty: &TypeRef, value: &Value) -> Option<Value> {
    let inner = match ty {
        TypeRef::NonNull(t) => return coerce(ts, t, value),
        TypeRef::List(t) => return coerce(ts, t, value).map(|v| Value::Array(vec![v])),
        TypeRef::Named(n) => n.as_str(),
    };
    match (inner, value) {
        ("ID", Value::String(_) | Value::Number(_)) => {
            Some(Value::String(crate::execution::wire::as_text(value)))
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
    pub(super) generator: Arc<GqlGenerator>,
    /// The validator every query passes before it is sent.
    pub(super) check: Arc<super::valid::QueryCheck>,
    pub(super) links: Arc<Links>,
    pub(super) rng: Rng64,
    pub(super) path: String,
    /// The test (its calls as they were sent, once run).
    pub test: GqlTest,
    pub(super) next: usize,
    /// Latest value per (type, field) from earlier answers of the test, with
    /// the call that gave it.
    pub(super) values: HashMap<(String, String), (Value, usize)>,
    /// (type, field) pairs that came back.
    pub pairs: Vec<(String, String)>,
    /// Per call sent: the schemas whose values it was given, with the call
    /// that gave each, or `POOLED` (sorted by schema).
    pub used: Vec<Vec<(String, usize)>>,
    /// Per (call, input): a value of a source schema that earlier tests
    /// saw, for when no earlier call of this test gives one.
    pub(super) fallback: HashMap<(usize, String), (Value, String)>,
    /// The scalar values the answers carried, for the run's pool.
    pub(super) harvest: Vec<Seen>,
}

impl GqlRun {
    fn learn(&mut self, call: usize, ex: &Exchange) {
        let Some(data) = ex
            .json()
            .and_then(|b| b.get("data"))
            .and_then(|d| d.get(&self.test.calls[call].genes.field))
        else {
            return;
        };
        if let Some(sel) = &self.test.calls[call].genes.selection {
            let mut seen = Vec::new();
            walk(sel, data, &mut self.pairs, &mut seen);
            let room = HARVEST.saturating_sub(self.harvest.len());
            self.harvest.extend(seen.iter().take(room).cloned());
            for (t, f, v) in seen {
                self.values.insert((t, f), (v, call));
            }
        }
    }

    /// The value earlier answers give input `input` of `op`, through the
    /// graph: among its sources (a suspended one now and then, so that it can
    /// prove itself again), the one an answer gave latest; ties go to the
    /// better source. Without any, a value an earlier test saw.
    fn flowed(&mut self, op: &str, input: &str) -> Option<(Value, String, usize)> {
        let links = self.links.clone();
        let mut best: Option<(Value, String, usize)> = None;
        for s in links.of(op, input) {
            if !s.active && !self.rng.random_bool(RETRY_SUSPENDED) {
                continue;
            }
            let key = (s.schema.clone(), s.property.clone());
            if let Some((v, call)) = self.values.get(&key)
                && best.as_ref().is_none_or(|(_, _, c)| call > c)
            {
                best = Some((v.clone(), s.schema.clone(), *call));
            }
        }
        best.or_else(|| {
            let (v, schema) = self.fallback.get(&(self.next, input.to_string()))?;
            Some((v.clone(), schema.clone(), POOLED))
        })
    }
}

impl TestRun for GqlRun {
    fn next_request(&mut self, done: &[Exchange]) -> Option<RequestSpec> {
        if let Some(last) = done.last() {
            self.learn(self.next - 1, last);
        }
        let generator = self.generator.clone();
        let ts = generator.type_system();
        let mut call = self.test.calls.get(self.next)?.genes.clone();
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
        if let Some(b) = call.breach.clone() {
            b.apply(&mut call);
        }
        let (query, variables) = generator.render(&call, ArgMode::Variables);
        // A query the validator refuses is a generator bug: it is counted and
        // not sent, and the test ends before it.
        if !self.check.accepts(ts, &query) {
            return None;
        }
        self.used.push(used);
        self.test.calls[self.next].genes = call.clone();
        self.next += 1;
        let mutation = Some(call.root.as_str()) == ts.mutation_type.as_deref();
        let body = serde_json::json!({ "query": query, "variables": variables });
        Some(RequestSpec {
            operation: op,
            method: "POST".into(),
            path: self.path.clone(),
            headers: Vec::new(),
            body: Some(crate::execution::wire::json_text(&body)),
            content_type: Some("application/json".into()),
            graphql_query: !mutation,
            breach: call.breach.as_ref().map(|b| b.note.clone()),
            identity: None,
        })
    }
}
