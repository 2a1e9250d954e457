//! Sampling new REST tests: a call with Morest's parameter rules, a resource
//! handling from a template, and whole tests from the graph's sequences,
//! templates or at random.

use std::collections::HashSet;

use rand::Rng;
use serde_json::Value;

use super::paths::{below_to_next_id, path_property};
use super::{Genes, Rest, RestCall, RestTest, Slot};
use crate::generation::pool::{location_key, member_key};
use crate::generation::search::Cx;
use crate::generation::templates::Template;
use crate::generation::test::{Call, Group, Sampler, TestCase};
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

impl Rest {
    /// A value from the run's pool for input `(location, name)` of `op`, as
    /// the input takes it (a list input a list of one).
    pub(super) fn pooled(
        &mut self,
        cx: &mut Cx,
        op: usize,
        location: Location,
        name: &str,
    ) -> Option<Value> {
        let v = self.pooled_value(cx, op, location, name)?;
        Some(super::run::as_input_of(
            &cx.api,
            &cx.api.operations[op],
            location,
            name,
            v,
        ))
    }

    fn pooled_value(
        &mut self,
        cx: &mut Cx,
        op: usize,
        location: Location,
        name: &str,
    ) -> Option<Value> {
        if let Some(sources) = self.plan.sources[op].get(&(location, name.to_string())) {
            let keys: Vec<String> = sources
                .iter()
                .filter(|s| s.active)
                .map(|s| s.key.clone())
                .collect();
            for key in keys {
                if let Some(v) = self.pool.pick(&key, REUSE, &mut cx.rng) {
                    return Some(v);
                }
            }
        }
        // By bare name, only identifiers (`bookId`, `slug`, a path's `{tag}`)
        // are worth reusing: free text and numbers drawn from responses would
        // crowd out the fresh values (quotes, bounds) that find faults.
        let identifies = location == Location::Path || crate::model::names::is_id_name(name);
        if identifies && cx.rng.random_bool(REUSE) {
            self.pool.pick(name, REUSE, &mut cx.rng)
        } else {
            None
        }
    }

    /// Whether `value` of input `(location, name)` of `op` is one earlier
    /// answers gave: pooled under a key the graph binds it to, or under its
    /// name. (One listed or created in its collection is pooled under its
    /// schema's key too; looking through every collection's ids for it
    /// would cost more than a pooled value replacing it.)
    pub(super) fn known(&self, op: usize, location: Location, name: &str, value: &Value) -> bool {
        if let Some(sources) = self.plan.sources[op].get(&(location, name.to_string()))
            && sources.iter().any(|s| self.pool.holds(&s.key, value))
        {
            return true;
        }
        self.pool.holds(name, value)
    }

    /// A value earlier answers gave for input `(location, name)` of `op`,
    /// whatever the state of the edges it came through: an input the
    /// answers showed takes only such values (see [`super::verdicts`]).
    pub(super) fn pooled_any(
        &mut self,
        cx: &mut Cx,
        op: usize,
        location: Location,
        name: &str,
    ) -> Option<Value> {
        if let Some(sources) = self.plan.sources[op].get(&(location, name.to_string())) {
            let keys: Vec<String> = sources.iter().map(|s| s.key.clone()).collect();
            for key in keys {
                if let Some(v) = self.pool.pick(&key, REUSE, &mut cx.rng) {
                    return Some(v);
                }
            }
        }
        self.pool.pick(name, REUSE, &mut cx.rng)
    }

    /// Makes a test's positive calls keep what the answers taught about
    /// each input ([`super::verdicts`]): inputs that take only known values
    /// get one in place of a made-up value, refused optional inputs are
    /// left out or set to the value that was accepted.
    pub(super) fn apply_verdicts(&mut self, cx: &mut Cx, test: &mut RestTest) {
        if self.verdicts.verdicts.is_empty() {
            return;
        }
        let api = cx.api.clone();
        for c in &mut test.calls {
            let op = &api.operations[c.op];
            // A path value the answers say must be a known one, and is not,
            // is chosen again with every path value after it (the ids
            // below a parent belong to that parent): one chain.
            let order: Vec<usize> = op
                .path
                .split('/')
                .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
                .filter_map(|name| {
                    op.parameters
                        .iter()
                        .position(|p| p.location == Location::Path && p.name == name)
                })
                .collect();
            // (The last one, below which nothing sits, is replaced alone,
            // as any other input, below.)
            let parents = order.len().saturating_sub(1);
            let stale = order[..parents].iter().position(|&j| {
                let p = &op.parameters[j];
                matches!(
                    self.verdicts.param(c.op, j),
                    Some(super::verdicts::Verdict::Pooled)
                ) && !self.known(c.op, p.location, &p.name, &c.genes.params[j].value)
            });
            if let Some(m) = stale {
                let keep: Vec<Option<Value>> = (0..op.parameters.len())
                    .map(|j| {
                        order[..m]
                            .contains(&j)
                            .then(|| c.genes.params[j].value.clone())
                    })
                    .collect();
                let chain = self.path_chain(cx, c.op, &keep, true);
                for &j in &order[m..] {
                    if let Some(v) = &chain[j] {
                        c.genes.params[j].value = v.clone();
                    }
                }
            }
            for (j, p) in op.parameters.iter().enumerate() {
                let Some(verdict) = self.verdicts.param(c.op, j) else {
                    continue;
                };
                if order[..parents].contains(&j)
                    && matches!(verdict, super::verdicts::Verdict::Pooled)
                {
                    continue;
                }
                let slot = &mut c.genes.params[j];
                match verdict {
                    super::verdicts::Verdict::LeftOut if !p.required => slot.present = false,
                    super::verdicts::Verdict::Accepted(v) if slot.present => slot.value = v.clone(),
                    super::verdicts::Verdict::Pooled if slot.present || p.required => {
                        let value = &c.genes.params[j].value;
                        if !self.known(c.op, p.location, &p.name, value)
                            && let Some(v) = self.pooled_any(cx, c.op, p.location, &p.name)
                        {
                            c.genes.params[j].value = v;
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    /// A new call of `op`: with some probability the values of its last
    /// success, else pooled values where the graph or the name says where they
    /// come from, else values inside the spec's constraints.
    pub(super) fn fresh_call(
        &mut self,
        cx: &mut Cx,
        op: usize,
        group: u32,
        creates: bool,
    ) -> RestCall {
        if let Some(last) = &self.last_success[op]
            && cx.rng.random_bool(REUSE_LAST_SUCCESS)
        {
            let mut c = last.clone();
            c.group = group;
            c.creates = creates;
            c.bind = true;
            return c;
        }
        let api = cx.api.clone();
        let operation = &api.operations[op];
        let mut chain = self.path_chain(cx, op, &[], false);
        let mut params = Vec::with_capacity(operation.parameters.len());
        for (j, p) in operation.parameters.iter().enumerate() {
            if let Some(v) = chain[j].take() {
                params.push(Slot {
                    present: true,
                    value: v,
                });
                continue;
            }
            let pooled = self.pooled(cx, op, p.location, &p.name);
            let present = p.required || pooled.is_some() || cx.rng.random_bool(0.5);
            let value = match pooled {
                Some(v) => v,
                None if !p.examples.is_empty() && cx.rng.random_bool(0.3) => {
                    p.examples[cx.rng.random_range(0..p.examples.len())].clone()
                }
                None => value_for(&api, &p.schema, &mut cx.rng),
            };
            params.push(Slot { present, value });
        }
        let body = operation
            .request_body
            .as_ref()
            .and_then(|b| b.primary_schema())
            .map(|(mime, schema)| {
                let mut value = value_for(&api, schema, &mut cx.rng);
                if let Value::Object(fields) = &mut value {
                    for name in api.resolve(schema).properties.keys() {
                        if !self.plan.sources[op].contains_key(&(Location::Body, name.clone())) {
                            continue;
                        }
                        if let Some(v) = self.pooled(cx, op, Location::Body, name) {
                            fields.insert(name.clone(), v);
                        }
                    }
                }
                (mime.to_string(), value)
            });
        Call {
            op,
            genes: Genes {
                params,
                body,
                breach: None,
            },
            bind: true,
            creates,
            group,
        }
    }

    /// The values of `op`'s path parameters (by parameter position), left
    /// to right as one chain: those `keep` gives stay; each other is a
    /// member of the collection its prefix names, by the property the path
    /// takes ([`path_property`]): a parent under which children are known
    /// when a child follows (both ids then come from one chain, not a child
    /// of another), else a member; else a value pooled for the parameter
    /// (`any`: whatever the state of the edge it came through); else, for a
    /// path that takes names, the member's id; else one inside the
    /// parameter's constraints.
    fn path_chain(
        &mut self,
        cx: &mut Cx,
        op: usize,
        keep: &[Option<Value>],
        any: bool,
    ) -> Vec<Option<Value>> {
        let api = cx.api.clone();
        let operation = &api.operations[op];
        let mut chain: Vec<Option<Value>> = vec![None; operation.parameters.len()];
        let mut prefix = String::new();
        let segments: Vec<&str> = operation
            .path
            .split('/')
            .filter(|s| !s.is_empty())
            .collect();
        for (k, seg) in segments.iter().enumerate() {
            let Some(name) = seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) else {
                prefix.push('/');
                prefix.push_str(seg);
                continue;
            };
            let j = operation
                .parameters
                .iter()
                .position(|p| p.location == Location::Path && p.name == name);
            let kept = j.and_then(|j| keep.get(j).cloned().flatten());
            let v = match kept {
                Some(v) => v,
                None => self.chain_member(cx, op, &prefix, &segments[k + 1..], name, any),
            };
            prefix.push('/');
            prefix.push_str(&crate::execution::wire::encode_segment(&v));
            if let Some(j) = j
                && chain[j].is_none()
            {
                chain[j] = Some(v);
            }
        }
        chain
    }

    /// The value of path parameter `name` of `op` below the concrete
    /// collection `prefix`, the segments `rest` after it (see
    /// [`Rest::path_chain`]).
    fn chain_member(
        &mut self,
        cx: &mut Cx,
        op: usize,
        prefix: &str,
        rest: &[&str],
        name: &str,
        any: bool,
    ) -> Value {
        let api = cx.api.clone();
        let below = below_to_next_id(rest);
        let property = path_property(&self.plan, &api, op, name);
        let key = match &property {
            Some(p) => member_key(prefix, p),
            None => location_key(prefix),
        };
        let mut v = below.and_then(|below| {
            self.pool
                .pick_parent(prefix, &below, property.as_deref(), REUSE, &mut cx.rng)
        });
        if v.is_none() {
            v = self.pool.pick(&key, REUSE, &mut cx.rng);
        }
        if v.is_none() {
            v = if any {
                self.pooled_any(cx, op, Location::Path, name)
            } else {
                self.pooled(cx, op, Location::Path, name)
            };
        }
        if v.is_none() && property.is_some() {
            v = self.pool.pick(&location_key(prefix), REUSE, &mut cx.rng);
        }
        v.unwrap_or_else(|| {
            let schema = api.operations[op]
                .parameters
                .iter()
                .find(|p| p.location == Location::Path && p.name == name)
                .map(|p| p.schema.clone())
                .unwrap_or_default();
            value_for(&api, &schema, &mut cx.rng)
        })
    }

    /// A resource handling for `op`: a template of Table 1 made concrete.
    pub(super) fn handling(
        &mut self,
        cx: &mut Cx,
        op: usize,
        group: u32,
        template: Option<Template>,
    ) -> Option<(Vec<RestCall>, Group)> {
        let max = cx.config.mio.max_length;
        let template = match template {
            Some(t) => t,
            None => {
                let applicable = cx.resources.applicable(&cx.api, op);
                let creating: Vec<Template> = applicable
                    .iter()
                    .copied()
                    .filter(|t| *t != Template::Alone)
                    .collect();
                if !creating.is_empty() && cx.rng.random_bool(0.7) {
                    creating[cx.rng.random_range(0..creating.len())]
                } else {
                    Template::Alone
                }
            }
        };
        let api = cx.api.clone();
        let h = cx
            .resources
            .instantiate(&api, op, template, max, &mut cx.rng)?;
        let calls = h
            .calls
            .iter()
            .zip(&h.creates)
            .map(|(&o, &c)| self.fresh_call(cx, o, group, c))
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

    /// An operation the graph says consumes what one of `t`'s calls produces
    /// (the resource paper's dependency-aware structure mutation, with the
    /// graph's edges as the dependencies).
    pub(super) fn consumer_of(&mut self, cx: &mut Cx, t: &RestTest) -> Option<usize> {
        let produced: HashSet<&str> = t
            .calls
            .iter()
            .flat_map(|c| self.plan.produced[c.op].iter().map(|(s, _)| s.as_str()))
            .collect();
        let candidates: Vec<usize> = cx
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
        (!candidates.is_empty()).then(|| candidates[cx.rng.random_range(0..candidates.len())])
    }

    /// The first test of an operation: one call.
    pub(super) fn initial_test(&mut self, cx: &mut Cx, op: usize) -> RestTest {
        let mut call = self.fresh_call(cx, op, 0, false);
        // The plainest call first: a listing without its optional filters
        // (random text in `owner` or `name_pattern` matches nothing) answers
        // with data at once, and its ids flow to the operations below it.
        let operation = &cx.api.operations[op];
        for (slot, p) in call.genes.params.iter_mut().zip(&operation.parameters) {
            if !p.required && p.location != Location::Path {
                slot.present = false;
            }
        }
        // A listing by POST (`POST /work_pools/filter`) takes its filters,
        // offset and limit in the body: the first call sends only the
        // fields it must, as a listing by GET sends no optional query.
        if crate::generation::pool::lists_by_post(&operation.path)
            && let Some((_, Value::Object(fields))) = &mut call.genes.body
            && let Some((_, schema)) = operation
                .request_body
                .as_ref()
                .and_then(|b| b.primary_schema())
        {
            let required = &cx.api.resolve(schema).required;
            fields.retain(|k, _| required.contains(k));
        }
        TestCase {
            calls: vec![call],
            groups: vec![Group {
                id: 0,
                template: None,
                target: op,
            }],
            sampler: Sampler::Initial,
            seed: cx.rng.random(),
        }
    }

    /// Samples a new test with the sampler the archive favours.
    pub(super) fn sample_test(&mut self, cx: &mut Cx) -> RestTest {
        let choices: Vec<Sampler> = Sampler::CHOSEN
            .into_iter()
            .filter(|s| *s != Sampler::Graph || !cx.sequences.is_empty())
            .collect();
        let sampler = cx.choose_sampler(&choices);
        let seed = cx.rng.random();
        let mut test = TestCase {
            calls: Vec::new(),
            groups: Vec::new(),
            sampler,
            seed,
        };
        match sampler {
            Sampler::Graph => {
                let seq = cx.next_sequence().unwrap_or_default();
                test.calls = seq
                    .iter()
                    .map(|&o| self.fresh_call(cx, o, 0, false))
                    .collect();
                test.groups.push(Group {
                    id: 0,
                    template: None,
                    target: *seq.last().unwrap_or(&0),
                });
            }
            Sampler::Template => {
                let op = cx.random_op();
                if let Some((calls, group)) = self.handling(cx, op, 0, None) {
                    test.calls = calls;
                    test.groups.push(group);
                }
                if cx.rng.random_bool(SECOND_HANDLING) {
                    let op = cx.random_op();
                    if let Some((calls, group)) = self.handling(cx, op, 1, None)
                        && test.len() + calls.len() <= cx.config.mio.max_length
                    {
                        test.calls.extend(calls);
                        test.groups.push(group);
                    }
                }
            }
            Sampler::Random | Sampler::Initial | Sampler::Negative => {
                let n = cx.rng.random_range(1..=4.min(cx.config.mio.max_length));
                for g in 0..n as u32 {
                    let op = cx.random_op();
                    let call = self.fresh_call(cx, op, g, false);
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
            let op = cx.random_op();
            test.calls.push(self.fresh_call(cx, op, 0, false));
            test.groups = vec![Group {
                id: 0,
                template: None,
                target: op,
            }];
        }
        test
    }
}
