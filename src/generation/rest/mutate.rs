//! Mutating a REST test: its values (EvoMaster's per-gene operators) or its
//! structure (resource handlings added, removed, swapped, replaced, or given
//! another template).

use rand::Rng;

use super::{Rest, RestCall, RestTest};
use crate::generation::mutation::mutate_value;
use crate::generation::search::Cx;
use crate::generation::templates::Template;

/// Probability that a mutation changes a test's structure rather than its values.
const STRUCTURE_MUTATION: f64 = 0.5;

impl Rest {
    /// A mutant of `base`: its structure (resource handlings) or its values.
    pub(super) fn mutate_test(&mut self, cx: &mut Cx, base: &RestTest) -> RestTest {
        let mut t = base.clone();
        t.seed = cx.rng.random();
        if cx.rng.random_bool(STRUCTURE_MUTATION) && self.mutate_structure(cx, &mut t) {
            return t;
        }
        self.mutate_values(cx, &mut t);
        t
    }

    /// Mutates each gene with probability 1/k (k genes in the test), at least one.
    pub(super) fn mutate_values(&mut self, cx: &mut Cx, t: &mut RestTest) {
        let api = cx.api.clone();
        let heat = cx.heat();
        let genes: usize = t
            .calls
            .iter()
            .map(|c| c.genes.params.len() + usize::from(c.genes.body.is_some()))
            .sum();
        if genes == 0 {
            if let Some(c) = t.calls.first_mut() {
                c.bind = !c.bind;
            }
            return;
        }
        let p = 1.0 / genes as f64;
        let mut changed = false;
        while !changed {
            for c in &mut t.calls {
                let op = &api.operations[c.op];
                for (j, slot) in c.genes.params.iter_mut().enumerate() {
                    if !cx.rng.random_bool(p) {
                        continue;
                    }
                    let param = &op.parameters[j];
                    if !slot.present {
                        slot.present = true;
                    } else if !param.required && cx.rng.random_bool(0.05) {
                        slot.present = false;
                    } else {
                        // A path value unfit for a URL segment ("", ".") is
                        // replaced when the request is built (`flow::fits_a_segment`).
                        slot.value =
                            mutate_value(&api, &param.schema, &slot.value, heat, &mut cx.rng);
                    }
                    changed = true;
                }
                if let (Some((_, value)), Some(schema)) = (
                    &mut c.genes.body,
                    op.request_body.as_ref().and_then(|b| b.primary_schema()),
                ) && cx.rng.random_bool(p)
                {
                    *value = mutate_value(&api, schema.1, value, heat, &mut cx.rng);
                    changed = true;
                }
            }
        }
        // Rarely, a call forgoes the values earlier calls would give it.
        if cx.rng.random_bool(0.05) {
            let k = cx.rng.random_range(0..t.calls.len());
            t.calls[k].bind = !t.calls[k].bind;
        }
    }

    /// Adds, removes, swaps or replaces a resource handling, or changes one's
    /// template; false when the chosen change does not apply.
    pub(super) fn mutate_structure(&mut self, cx: &mut Cx, t: &mut RestTest) -> bool {
        let max = cx.config.mio.max_length;
        let groups: Vec<u32> = t.groups.iter().map(|g| g.id).collect();
        let span = |t: &RestTest, g: u32| -> (usize, usize) {
            let start = t.calls.iter().position(|c| c.group == g).unwrap_or(0);
            let end = t
                .calls
                .iter()
                .rposition(|c| c.group == g)
                .map_or(start, |e| e + 1);
            (start, end)
        };
        match cx.rng.random_range(0..5) {
            // Add a handling at a group boundary; half the time, at the end,
            // one for an operation that consumes what the test produces.
            0 => {
                let consumer = if cx.config.use_graph && cx.rng.random_bool(0.5) {
                    self.consumer_of(cx, t)
                } else {
                    None
                };
                let op = consumer.unwrap_or_else(|| cx.random_op());
                let id = t.next_group();
                let template = consumer.map(|_| Template::Alone);
                let Some((calls, group)) = self.handling(cx, op, id, template) else {
                    return false;
                };
                if t.len() + calls.len() > max {
                    return false;
                }
                let at = if groups.is_empty() || consumer.is_some() {
                    t.len()
                } else {
                    let g = groups[cx.rng.random_range(0..groups.len())];
                    span(t, g).1
                };
                t.calls.splice(at..at, calls);
                t.groups.push(group);
                true
            }
            // Remove one.
            1 if groups.len() > 1 => {
                let g = groups[cx.rng.random_range(0..groups.len())];
                t.calls.retain(|c| c.group != g);
                t.prune_groups();
                true
            }
            // Swap two neighbours.
            2 if groups.len() > 1 => {
                let order: Vec<u32> = {
                    let mut seen = Vec::new();
                    for c in &t.calls {
                        if !seen.contains(&c.group) {
                            seen.push(c.group);
                        }
                    }
                    seen
                };
                if order.len() < 2 {
                    return false;
                }
                let k = cx.rng.random_range(0..order.len() - 1);
                let (a, b) = (order[k], order[k + 1]);
                let (sa, _) = span(t, a);
                let (_, eb) = span(t, b);
                let mut part: Vec<RestCall> = t.calls[sa..eb].to_vec();
                part.sort_by_key(|c| c.group != b);
                t.calls.splice(sa..eb, part);
                true
            }
            // Replace one with a handling of another operation, or change its
            // template (same operation, another template).
            k @ (3 | 4) if !groups.is_empty() => {
                let g = groups[cx.rng.random_range(0..groups.len())];
                let Some(old) = t.groups.iter().find(|x| x.id == g).cloned() else {
                    return false;
                };
                let (op, template) = if k == 3 {
                    (cx.random_op(), None)
                } else {
                    let others: Vec<Template> = cx
                        .resources
                        .applicable(&cx.api, old.target)
                        .into_iter()
                        .filter(|x| Some(*x) != old.template)
                        .collect();
                    if others.is_empty() {
                        return false;
                    }
                    (
                        old.target,
                        Some(others[cx.rng.random_range(0..others.len())]),
                    )
                };
                let Some((calls, group)) = self.handling(cx, op, g, template) else {
                    return false;
                };
                let (s, e) = span(t, g);
                if t.len() - (e - s) + calls.len() > max {
                    return false;
                }
                t.calls.splice(s..e, calls);
                t.groups.retain(|x| x.id != g);
                t.groups.push(group);
                true
            }
            _ => false,
        }
    }
}
