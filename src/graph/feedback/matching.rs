//! Values seen again under another schema's property (`Order.bookId` = 4
//! after `Book.id` = 4): counted per pair of properties, weighed against
//! what the names say and what a counter could make, and recorded as an
//! equivalence once one match dominates.

use std::collections::HashSet;

use petgraph::graph::NodeIndex;
use serde_json::Value;

use super::equivalence::{add_equivalence, propagate};
use super::{Change, Feedback, Prop, Support};
use crate::graph::{Evidence, PropertyGraph};

/// Observations before an equivalence is believed.
const MIN_SUPPORT: u32 = 4;

/// Share of a property's value matches that must go to one other property.
const DOMINANCE: f64 = 0.6;

/// Distinct values remembered for matching; the memory is cleared past this.
const MAX_VALUES: usize = 100_000;

impl Feedback {
    pub(super) fn learn_values(
        &mut self,
        g: &mut PropertyGraph,
        schema: NodeIndex,
        obj: &serde_json::Map<String, Value>,
        seq: u64,
        changes: &mut Vec<Change>,
    ) {
        if self.seen.len() > MAX_VALUES {
            self.seen.clear();
        }
        for (prop, value) in obj {
            let Some(key) = distinctive(value) else {
                continue;
            };
            let known = self.seen.entry(key).or_default();
            // Only a value's first appearance under a property counts: re-reading
            // the same objects proves nothing, and it keeps the direction of a
            // reference visible (an id exists before the references to it).
            if known.iter().any(|(s, p, _)| *s == schema && p == prop) {
                continue;
            }
            let matches: Vec<(NodeIndex, String, u64)> = known
                .iter()
                .filter(|(s, _, _)| *s != schema)
                .cloned()
                .collect();
            known.push((schema, prop.clone(), seq));
            if matches.is_empty() {
                continue;
            }
            let me = (schema, prop.clone());
            *self.totals.entry(me.clone()).or_default() += 1;
            let mut counted: HashSet<(NodeIndex, String)> = HashSet::new();
            for (other, other_prop, other_seq) in matches {
                if both_own_ids(prop, &other_prop)
                    || name_contradicts(prop, &g.graph[other].name, &other_prop)
                    || name_contradicts(&other_prop, &g.graph[schema].name, prop)
                {
                    continue;
                }
                let them = (other, other_prop.clone());
                if !counted.insert(them.clone()) {
                    continue;
                }
                let entry = self
                    .support
                    .entry(me.clone())
                    .or_default()
                    .entry(them)
                    .or_insert((0, 0, Vec::new()));
                entry.0 += 1;
                entry.1 += u32::from(!counter_like(value));
                if entry.2.len() < 6 {
                    entry.2.push(other_seq);
                    entry.2.push(seq);
                }
            }
            self.decide(g, &me, changes);
        }
    }

    /// Records an equivalence once one match dominates a property's matches.
    fn decide(
        &mut self,
        g: &mut PropertyGraph,
        me: &(NodeIndex, String),
        changes: &mut Vec<Change>,
    ) {
        let total = self.totals.get(me).copied().unwrap_or(0);
        let Some(options) = self.support.get(me) else {
            return;
        };
        let mut ranked: Vec<(&Prop, &Support)> = options.iter().collect();
        // Fully ordered (count, then schema and property names), so that the same
        // run makes the same decisions whatever the hash maps' order.
        ranked.sort_by(|a, b| {
            b.1.0
                .cmp(&a.1.0)
                .then_with(|| g.graph[a.0.0].name.cmp(&g.graph[b.0.0].name))
                .then_with(|| a.0.1.cmp(&b.0.1))
        });
        let Some((them, (count, distinctive_values, evidence))) =
            ranked.first().map(|(t, c)| ((*t).clone(), (*c).clone()))
        else {
            return;
        };
        let runner_up = ranked.get(1).map_or(0, |(_, c)| c.0);
        // A reference matches only one way (the id first, then references to
        // it); values that coincide in both directions are counters or small
        // numbers moving together.
        let reverse = self
            .support
            .get(&them)
            .and_then(|m| m.get(me))
            .map_or(0, |c| c.0);
        // A match the names agree with (`bookId` and `Book.id`) needs only to
        // dominate; one they say nothing about needs twice the evidence and no
        // close second.
        let named = names_agree(&me.1, &g.graph[them.0].name, &them.1)
            || names_agree(&them.1, &g.graph[me.0].name, &me.1);
        let enough = if named {
            count >= MIN_SUPPORT
        } else {
            count >= 2 * MIN_SUPPORT && runner_up * 2 <= count
        };
        if !enough || (count as f64) < DOMINANCE * total as f64 || reverse * 3 > count {
            return;
        }
        // Without the names' word for it, small integers meeting prove
        // nothing: ids and stock counts both start low and meet by chance.
        // Such a match is kept as a candidate, with its counts, and feeds no
        // input until values no counter makes (names, uuids, large numbers)
        // confirm it.
        let proven = named || distinctive_values >= MIN_SUPPORT;
        let key = (me.0, me.1.clone(), them.0, them.1.clone());
        let mirror = (them.0, them.1.clone(), me.0, me.1.clone());
        let settled = |k: &(NodeIndex, String, NodeIndex, String)| {
            self.decided.get(k).is_some_and(|active| *active || !proven)
        };
        if settled(&key) || settled(&mirror) {
            return;
        }
        self.decided.remove(&mirror);
        self.decided.insert(key, proven);
        let (a, pa, b, pb) = (me.0, me.1.clone(), them.0, them.1.clone());
        let note = format!(
            "{}.{pa} held a value seen before as {}.{pb} {count} times out of {total} ({distinctive_values} of them no counter could make){}",
            g.graph[a].name,
            g.graph[b].name,
            if proven {
                ""
            } else {
                "; a candidate until values no counter could make confirm it"
            }
        );
        add_equivalence(
            g,
            (a, &pa),
            (b, &pb),
            (count, proven),
            Evidence {
                exchanges: evidence.clone(),
                note,
            },
        );
        if !proven {
            return;
        }
        changes.push(Change::Equivalent {
            left: format!("{}.{pa}", g.graph[a].name),
            right: format!("{}.{pb}", g.graph[b].name),
        });
        propagate(g, a, &pa, b, &pb, &evidence, changes);
        propagate(g, b, &pb, a, &pa, &evidence, changes);
    }
}

/// A value worth matching: the kinds identifiers take, strings of three
/// characters or more and integers of two digits or more; never booleans, nulls,
/// short strings, one-digit integers or fractions, which coincide without
/// meaning anything (a quantity of 3 and author 3, a total equal to a price).
fn distinctive(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if s.chars().count() >= 3 => Some(format!("s:{s}")),
        Value::Number(n)
            if n.as_i64().is_some_and(|i| i.abs() >= 10) || n.as_u64().is_some_and(|u| u >= 10) =>
        {
            Some(format!("n:{n}"))
        }
        _ => None,
    }
}

/// Whether a value could come from a counter or a small quantity: an
/// integer below a million, or a string of digits.
fn counter_like(v: &Value) -> bool {
    match v {
        // Beyond i64 (and fractions) no counter reaches.
        Value::Number(n) => n.as_i64().is_some_and(|i| i.unsigned_abs() < 1_000_000),
        Value::String(s) => s.chars().all(|c| c.is_ascii_digit()),
        _ => true,
    }
}

/// Whether a reference-style property name (`authorId`) names a resource other
/// than the schema whose own `id` it is matched with: then the match is a
/// coincidence of counters, not a reference. Neutral names (`item`) never
/// contradict anything.
pub(super) fn name_contradicts(prop: &str, other_schema: &str, other_prop: &str) -> bool {
    if !other_prop.eq_ignore_ascii_case("id") {
        return false;
    }
    let words: Vec<String> = crate::model::names::words(prop)
        .iter()
        .map(|w| crate::model::names::singular(w))
        .collect();
    let Some((last, resource)) = words.split_last() else {
        return false;
    };
    if resource.is_empty() || !crate::model::names::is_id_like(last) {
        return false;
    }
    let schema =
        crate::model::names::strip_decoration(&crate::model::names::schema_words(other_schema));
    let resource_key = crate::model::names::join(resource);
    let matches_whole = crate::model::names::join(&schema) == resource_key;
    let matches_tail =
        (1..schema.len()).any(|i| crate::model::names::join(&schema[i..]) == resource_key);
    let abbreviates = crate::model::names::words_similarity(resource, &schema).is_some();
    !(matches_whole || matches_tail || abbreviates)
}

/// Whether a reference-style name (`bookId`) names exactly the schema whose own
/// `id` it is matched with.
fn names_agree(prop: &str, other_schema: &str, other_prop: &str) -> bool {
    let words = crate::model::names::words(prop);
    other_prop.eq_ignore_ascii_case("id")
        && words.len() >= 2
        && crate::model::names::is_id_like(&words[words.len() - 1])
        && !name_contradicts(prop, other_schema, other_prop)
}

/// Two schemas' own `id`s are never the same thing, however often their values
/// coincide: independent counters advancing together make them equal.
fn both_own_ids(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case("id") && b.eq_ignore_ascii_case("id")
}
