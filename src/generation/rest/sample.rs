//! Sampling new tests: a call with Morest's parameter rules, a resource
//! handling from a template, and whole tests from the graph's sequences,
//! templates or at random.

use std::collections::HashSet;

use rand::seq::SliceRandom;
use rand::Rng;
use serde_json::Value;

use super::{sampler_index, SearchDriver};
use crate::generation::pool::location_key;
use crate::generation::templates::Template;
use crate::generation::testcase::{Call, Group, Sampler, Slot, TestCase};
use crate::generation::values::value_for;
use crate::model::Location;

/// Probability of reusing a pooled value for an input the graph (or its name)
/// ties to responses, rather than a fresh one (Morest reuses with high probability).
const REUSE: f64 = 0.85;

/// Probability of starting a new call from the values of the operation's last
/// success (Morest's first parameter rule).
const REUSE_LAST_SUCCESS: f64 = 0.2;

/// Probability that a sampled test chains a second resource handling onto the first.
const SECOND_HANDLING: f64 = 0.3;

impl SearchDriver {
    /// A value from the run's pool for input `(location, name)` of `op`.
    pub(super) fn pooled(&mut self, op: usize, location: Location, name: &str) -> Option<Value> {
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
    pub(super) fn fresh_call(&mut self, op: usize, group: u32, creates: bool) -> Call {
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
            prefix.push_str(&crate::generation::request::encode_segment(&v));
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
    pub(super) fn handling(
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

    pub(super) fn random_op(&mut self) -> usize {
        self.ops[self.rng.random_range(0..self.ops.len())]
    }

    /// An operation the graph says consumes what one of `t`'s calls produces
    /// (the resource paper's dependency-aware structure mutation, with the
    /// graph's edges as the dependencies).
    pub(super) fn consumer_of(&mut self, t: &TestCase) -> Option<usize> {
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
    pub(super) fn sample(&mut self) -> TestCase {
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
}
