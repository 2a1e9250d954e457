//! What a finished GraphQL test teaches: the testing targets its answers
//! reached (each root field answering data, answering errors, each distinct
//! error wording, each fault, each (type, field) pair returned, each consumes
//! edge whose values fed an answer), what the answers tell the graph, the
//! values later tests may take, and the schema coverage they add.

use std::sync::Arc;

use serde_json::Value;

use super::links::Links;
use super::run::{GqlRun, POOLED, root_name};
use super::{Graphql, reusable_scalar, scalar_key};
use crate::execution::Exchange;
use crate::generation::search::Cx;
use crate::model::graphql::TypeSystem;
use crate::oracles::Finding;

impl Graphql {
    /// After a deleting mutation (`deleteEvent`, `removePerson`) answered
    /// data, the ids it took name nothing any more: the pool forgets them.
    fn forget_deleted(&mut self, ts: &TypeSystem, call: &super::GqlCall) {
        if Some(call.root.as_str()) != ts.mutation_type.as_deref() {
            return;
        }
        let deletes = crate::model::names::words(&call.field)
            .first()
            .is_some_and(|w| matches!(w.as_str(), "delete" | "remove" | "destroy"));
        if !deletes {
            return;
        }
        for (_, v) in &call.args {
            if let Some(v @ (Value::String(_) | Value::Number(_))) = v {
                self.pool.forget(v);
            }
        }
    }

    /// Learns from a finished test and returns the targets it reached.
    pub(super) fn learn_from(
        &mut self,
        cx: &mut Cx,
        run: &GqlRun,
        exchanges: &[Exchange],
        findings: &[Vec<Finding>],
    ) -> Vec<(String, f64)> {
        let ts = self.generator.type_system().clone();
        let mut reached: Vec<(String, f64)> = Vec::new();
        let (mut answered, mut root_pairs) = (Vec::new(), Vec::new());
        let mut changed = false;
        for (k, ex) in exchanges.iter().enumerate() {
            let call = &run.test.calls[k].genes;
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
                if body.is_some() {
                    cx.link_flowed(
                        schema,
                        &name,
                        data && !errors,
                        if errors { "errors" } else { "no data" },
                    );
                }
            }
            if let Some(feedback) = &mut cx.feedback {
                // The root field's value is what its produces sites describe.
                if let (Some(status), Some(value)) = (ex.status, value) {
                    let c = feedback.observe(&mut cx.graph, &name, status, value, ex.seq);
                    changed |= !c.is_empty();
                    cx.changes.extend(c);
                }
                // GraphQL answers 200 either way: the body says whether the
                // values given worked (data, no error) or not (an error, or
                // null data). No JSON body says nothing about them.
                // A value from an earlier test may be gone since (deleted):
                // its failure says nothing about the link.
                if body.is_some() {
                    for (schema, from) in used {
                        if *from == POOLED && (errors || !data) {
                            continue;
                        }
                        if let Some(c) = feedback.binding_result(
                            &mut cx.graph,
                            schema,
                            &name,
                            data && !errors,
                            ex.seq,
                        ) {
                            changed = true;
                            cx.changes.push(c);
                        }
                    }
                }
            }
            if data
                && !errors
                && call.breach.is_none()
                && let Some(&op) = self.positions.get(&name)
            {
                let mut base = run.test.clone();
                base.calls.truncate(k + 1);
                self.negative_base(op, base);
            }
            if data && !errors {
                self.forget_deleted(&ts, call);
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
                    let wording =
                        crate::generation::search::targets::message_target(msg, &ex.request);
                    reached.push((format!("error:{name}:{wording}"), 1.0));
                }
            }
            for f in &findings[k] {
                reached.push((format!("fault:{}", f.signature(ex.status)), 1.0));
            }
        }
        for (t, f, v) in &run.harvest {
            self.pool.add(format!("{t}.{f}"), v.clone());
            let ty = ts.get(t).and_then(|t| t.field(f)).map(|f| f.ty.base());
            if let Some(ty) = ty.filter(|ty| reusable_scalar(&ts, ty)) {
                self.pool.add(scalar_key(ty), v.clone());
            }
        }
        if changed {
            self.links = Arc::new(Links::from_graph(&cx.graph));
            cx.graph_changed();
        }
        for pair in &run.pairs {
            reached.push((format!("field:{}.{}", pair.0, pair.1), 1.0));
        }
        root_pairs.extend(run.pairs.iter().cloned());
        self.coverage.add_pairs(&root_pairs, &answered);
        reached
    }
}
