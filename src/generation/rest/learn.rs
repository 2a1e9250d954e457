//! What a finished REST test teaches: the testing targets it reached, and
//! what its exchanges add to the value pool and the graph.

use std::sync::Arc;

use super::run::FlowRun;
use super::verdicts::Answered;
use super::{Rest, negative};
use serde_json::Value;

use crate::execution::Exchange;
use crate::execution::wire::location_id;
use crate::generation::plan::Plan;
use crate::generation::search::Cx;
use crate::model::{Api, Location};
use crate::oracles::Finding;

impl Rest {
    /// The testing targets a finished test reached, with heuristic values:
    /// each (operation, status), each operation answered 2xx (0.5 for another
    /// answer), each fault signature, and each consumes edge whose values
    /// flowed into a 2xx (0.5 when they flowed into another answer, 0.1 when
    /// the consumer ran without them).
    pub(super) fn targets(
        &self,
        cx: &Cx,
        run: &FlowRun,
        exchanges: &[Exchange],
        findings: &[Vec<Finding>],
    ) -> Vec<(String, f64)> {
        // Made for every answer: joined, not formatted.
        let mut out: Vec<(String, f64)> = Vec::new();
        for (k, ex) in exchanges.iter().enumerate() {
            for f in &findings[k] {
                out.push((format!("fault:{}", f.signature(ex.status)), 1.0));
            }
            if run.probes[k] {
                // A follow-up request counts for the faults it shows only.
                continue;
            }
            let op = run.test.calls[run.sent[k]].op;
            let name = &cx.api.operations[op].name;
            let ok = ex.is_success();
            match ex.status {
                Some(s) => out.push((format!("status:{name}:{s}"), 1.0)),
                None => out.push((["status:", name.as_str(), ":none"].concat(), 1.0)),
            }
            let h = if ok {
                1.0
            } else if ex.status.is_some() {
                0.5
            } else {
                0.3
            };
            out.push((["ok:", name.as_str()].concat(), h));
            let used = &run.used[k];
            let h = if ok { 1.0 } else { 0.5 };
            for (schema, from) in used {
                out.push((["edge:", schema.as_str(), ">", name.as_str()].concat(), h));
                // Finer than the edge: which operation's answer fed this one.
                // It keeps tests where a value passed through an update (say)
                // before reaching its consumer, a state worth mutating.
                let producer = &cx.api.operations[run.test.calls[*from].op].name;
                out.push((["flow:", producer.as_str(), ">", name.as_str()].concat(), h));
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
                out.push((["edge:", schema, ">", name.as_str()].concat(), 0.1));
            }
        }
        out
    }

    /// Learns from a finished test: the pool, each operation's last success,
    /// and the graph (observed produces, equivalences, edge suspension).
    pub(super) fn learn_from(&mut self, cx: &mut Cx, run: &FlowRun, exchanges: &[Exchange]) {
        let mut changed = false;
        for (k, ex) in exchanges.iter().enumerate() {
            if run.probes[k] {
                continue;
            }
            let call = &run.test.calls[run.sent[k]];
            let op = call.op;
            self.harvest(cx, op, ex);
            if let Some(input) = &call.genes.breach {
                self.negative_answer(op, input, ex.status);
            }
            // The inputs a refusal's message names: what it blames.
            let named = match ex.status {
                Some(400 | 422) => crate::generation::constraints::named_inputs(
                    &cx.api,
                    &cx.api.operations[op],
                    ex.json(),
                    &ex.body,
                ),
                _ => Vec::new(),
            };
            if call.genes.breach.is_none() && cx.config.use_graph {
                self.learn_verdicts(cx, run, k, ex, &named);
            }
            if matches!(ex.status, Some(400 | 409 | 422)) {
                let learnt = self.constraints.from_refusal(&cx.api, op, ex);
                if let Some(c) = learnt {
                    self.constraints = Arc::new(c);
                }
            }
            if ex.is_success() {
                self.reached(cx, run, k);
            }
            changed |= self.feed_back(cx, run, k, ex, &named);
        }
        if changed {
            self.plan = Arc::new(Plan::from_graph(&cx.api, &cx.graph));
            cx.graph_changed();
        }
    }

    /// Adds what exchange `ex` of operation `op` showed to the value pool
    /// (its answer, the fields of its request body), and forgets the id of
    /// what a DELETE removed.
    fn harvest(&mut self, cx: &Cx, op: usize, ex: &Exchange) {
        self.pool
            .harvest(&self.plan.produced[op], &self.plan.wanted, ex);
        let body_schema = cx.api.operations[op]
            .request_body
            .as_ref()
            .and_then(|b| b.primary_schema())
            .and_then(|(_, s)| s.reference.as_deref());
        if let Some(schema) = body_schema {
            let sources = &self.plan.sources[op];
            let fed = |field: &str| {
                sources
                    .get(&(Location::Body, field.to_string()))
                    .is_some_and(|s| s.iter().any(|s| s.active))
            };
            self.pool
                .harvest_request(schema, &self.plan.wanted, &fed, ex);
        }
        if ex.request.method == "DELETE" && ex.is_success() {
            // A deleted resource's id is no longer worth sending.
            let path = ex.request.path.split('?').next().unwrap_or("");
            if let Some(id) = location_id(path) {
                self.pool.forget(&id);
            }
        }
    }

    /// Learns which inputs of exchange `k` (a call that breaks nothing) the
    /// answer says were right or wrong, telling apart the values the pool
    /// holds from made-up ones; `named` are the inputs its message names.
    fn learn_verdicts(
        &mut self,
        cx: &mut Cx,
        run: &FlowRun,
        k: usize,
        ex: &Exchange,
        named: &[(Location, String)],
    ) {
        let op = run.test.calls[run.sent[k]].op;
        let api = cx.api.clone();
        let operation = &api.operations[op];
        let (pool, plan) = (&self.pool, &self.plan);
        let request_path = ex.request.path.split('?').next().unwrap_or("");
        let mut known = |j: usize, value: &Value| {
            let p = &operation.parameters[j];
            if let Some(sources) = plan.sources[op].get(&(p.location, p.name.clone()))
                && sources.iter().any(|s| pool.holds(&s.key, value))
            {
                return true;
            }
            if pool.holds(&p.name, value) {
                return true;
            }
            p.location == Location::Path
                && concrete_prefix(&operation.path, request_path, &p.name)
                    .is_some_and(|c| pool.holds_member(&c, value))
        };
        // With --no-feedback the graph keeps no evidence; the
        // values still follow what the answers showed.
        let graph = cx.feedback.is_some().then_some(&mut cx.graph);
        let answered = Answered {
            op,
            sent: &run.inputs[k],
            ex,
            named,
        };
        self.verdicts.learn(&api, &answered, &mut known, graph);
    }

    /// Notes that call `k` succeeded: its operation's last success and, for
    /// a call that breaks nothing, the test up to it as a base for the
    /// operation's negative tests.
    fn reached(&mut self, cx: &mut Cx, run: &FlowRun, k: usize) {
        let call = &run.test.calls[run.sent[k]];
        let op = call.op;
        self.last_success[op] = Some(call.clone());
        if call.genes.breach.is_none() {
            // The test up to here reaches the operation: its negative
            // tests get one input wrong on top of it.
            let mut base = run.test.clone();
            base.calls.truncate(run.sent[k] + 1);
            base.prune_groups();
            // Best: a test that makes what the call names (its path
            // values came from earlier calls), so that it still
            // reaches the operation when the server's state moved on.
            let has_path = cx.api.operations[op]
                .parameters
                .iter()
                .any(|p| p.location == crate::model::Location::Path);
            let quality = if !has_path || !run.used[k].is_empty() {
                negative::Quality::SelfContained
            } else {
                negative::Quality::Reached
            };
            self.negative_base(cx, base, quality);
        }
    }

    /// Tells the links and the graph how exchange `k` fared: the values
    /// that flowed into it, what its body shows it produces, and (Morest)
    /// whether the values passed along edges worked; whether the graph
    /// changed.
    fn feed_back(
        &self,
        cx: &mut Cx,
        run: &FlowRun,
        k: usize,
        ex: &Exchange,
        named: &[(Location, String)],
    ) -> bool {
        let op = run.test.calls[run.sent[k]].op;
        let api = cx.api.clone();
        let name = &api.operations[op].name;
        let carried = run.carried.get(k).map_or(&[][..], Vec::as_slice);
        if let Some(status) = ex.status
            && !(run.used[k].is_empty() && carried.is_empty())
        {
            let answer = status.to_string();
            for (schema, _) in run.used[k].iter().chain(carried) {
                cx.link_flowed(schema, name, ex.is_success(), &answer);
            }
        }
        let Some(feedback) = &mut cx.feedback else {
            return false;
        };
        let mut changed = false;
        if let (Some(status), Some(body)) = (ex.status, ex.json()) {
            let c = feedback.observe(&mut cx.graph, name, status, body, ex.seq);
            changed |= !c.is_empty();
            cx.changes.extend(c);
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
            for schema in self.answerable_schemas(&api, run, k, ex, named) {
                if let Some(c) =
                    feedback.binding_result(&mut cx.graph, &schema, name, success, ex.seq)
                {
                    changed = true;
                    cx.changes.push(c);
                }
            }
        }
        changed
    }

    /// The schemas whose values, passed into exchange `k` along edges, its
    /// answer speaks for, in name order: none when a 404 or 410 names a
    /// path some of whose values were made up, and only those feeding the
    /// inputs a refusal's message names (`named`) when it names any.
    fn answerable_schemas(
        &self,
        api: &Api,
        run: &FlowRun,
        k: usize,
        ex: &Exchange,
        named: &[(Location, String)],
    ) -> Vec<String> {
        let op = run.test.calls[run.sent[k]].op;
        let mut schemas: Vec<String> = run.used[k].iter().map(|(s, _)| s.clone()).collect();
        schemas.sort();
        // A path that names nothing, when some of its values were
        // made up, says nothing about the ones passed along edges.
        let made_up_path = matches!(ex.status, Some(404 | 410))
            && api.operations[op]
                .parameters
                .iter()
                .enumerate()
                .any(|(j, p)| {
                    p.location == Location::Path
                        && run.inputs[k].params.iter().any(|(i, _, f)| *i == j && !f)
                });
        if made_up_path {
            schemas.clear();
        }
        // A refusal whose message names inputs blames those: a value
        // passed into another input was not what it refused.
        if !named.is_empty() {
            let sources = &self.plan.sources[op];
            schemas.retain(|schema| {
                named.iter().any(|(l, n)| {
                    sources
                        .get(&(*l, n.clone()))
                        .is_some_and(|s| s.iter().any(|s| &s.schema == schema))
                })
            });
        }
        schemas
    }
}

/// The concrete path a request sent up to (not including) the segment of
/// parameter `name` of `template`: the collection the value was looked up in.
fn concrete_prefix(template: &str, path: &str, name: &str) -> Option<String> {
    let needle = format!("{{{name}}}");
    let mut out = String::new();
    let t = template.split('/').filter(|s| !s.is_empty());
    let mut p = path.split('/').filter(|s| !s.is_empty());
    for seg in t {
        let got = p.next()?;
        if seg == needle {
            return Some(out);
        }
        out.push('/');
        out.push_str(got);
    }
    None
}
