//! Refining the graph from what the server answers (Morest, section 3.3).
//!
//! - A 2xx body whose objects match a schema's properties, from an operation the
//!   description does not say produces that schema, adds an `observed` produces
//!   edge.
//! - Values seen again under another schema's property (`Order.bookId` = 4 after
//!   `Book.id` = 4) are counted; when one property of one schema keeps matching
//!   one property of another, and that match dominates the coincidences, the two
//!   are recorded as equivalent, and every input fed by one is also fed by the
//!   other.
//! - A consumes binding whose values keep failing (λ consecutive non-2xx
//!   answers) is suspended; one that works again is re-activated.
//!
//! Every change carries its evidence: the exchanges that justified it.

use std::collections::{HashMap, HashSet};

use petgraph::Direction;
use petgraph::graph::{EdgeIndex, NodeIndex};
use petgraph::visit::EdgeRef;
use serde_json::Value;

use super::{
    Binding, Edge, EdgeKind, EdgeState, Evidence, Label, NodeKind, Origin, PropertyGraph,
    PropertyPair, Site,
};

/// Default consecutive failures before a consumes edge is suspended (λ).
pub const DEFAULT_LAMBDA: u32 = 3;

/// Observations before an equivalence is believed.
const MIN_SUPPORT: u32 = 4;

/// Share of a property's value matches that must go to one other property.
const DOMINANCE: f64 = 0.6;

/// Jaccard similarity of a body object's keys and a schema's properties above
/// which the object is taken to be of that schema.
const SHAPE_MATCH: f64 = 0.8;

/// Distinct values remembered for matching; the memory is cleared past this.
const MAX_VALUES: usize = 100_000;

/// A change made to the graph.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// An observed produces edge was added.
    Produces {
        /// The operation.
        operation: String,
        /// The schema.
        schema: String,
    },
    /// Two properties were found to hold the same values.
    Equivalent {
        /// `Schema.property`.
        left: String,
        /// `Schema.property`.
        right: String,
    },
    /// A binding was added to a consumes edge because of an equivalence.
    Binding {
        /// The schema.
        schema: String,
        /// The operation.
        operation: String,
        /// The input.
        input: String,
    },
    /// A consumes edge was suspended.
    Suspended {
        /// The schema.
        schema: String,
        /// The operation.
        operation: String,
    },
    /// A suspended consumes edge worked again.
    Reactivated {
        /// The schema.
        schema: String,
        /// The operation.
        operation: String,
    },
}

/// A property of a schema node.
type Prop = (NodeIndex, String);

/// How often one property's new values were seen before under another, how
/// many of those values no counter could have made ([`counter_like`]), and in
/// which exchanges (the first few).
type Support = (u32, u32, Vec<u64>);

/// What the feedback loop remembers between exchanges.
pub struct Feedback {
    lambda: u32,
    /// A value (as JSON text) → where it was seen: (schema node, property, seq).
    seen: HashMap<String, Vec<(NodeIndex, String, u64)>>,
    /// (schema, property) → (other schema, other property) → support.
    support: HashMap<Prop, HashMap<Prop, Support>>,
    /// (schema, property) → observations that matched anything.
    totals: HashMap<Prop, u32>,
    /// Equivalences recorded, and whether each is active (not a candidate).
    decided: HashMap<(NodeIndex, String, NodeIndex, String), bool>,
    failures: HashMap<EdgeIndex, u32>,
}

impl Default for Feedback {
    fn default() -> Self {
        Feedback::new(DEFAULT_LAMBDA)
    }
}

impl Feedback {
    /// A feedback loop suspending edges after `lambda` consecutive failures.
    pub fn new(lambda: u32) -> Feedback {
        Feedback {
            lambda: lambda.max(1),
            seen: HashMap::new(),
            support: HashMap::new(),
            totals: HashMap::new(),
            decided: HashMap::new(),
            failures: HashMap::new(),
        }
    }

    /// Learns from one successful response of `operation` (exchange `seq`) with
    /// JSON body `body` and status `status`; returns the changes made.
    pub fn observe(
        &mut self,
        g: &mut PropertyGraph,
        operation: &str,
        status: u16,
        body: &Value,
        seq: u64,
    ) -> Vec<Change> {
        let mut changes = Vec::new();
        let Some(op) = g.operation(operation) else {
            return changes;
        };
        if !(200..300).contains(&status) {
            return changes;
        }
        // Objects the graph already says this operation returns.
        let mut typed: Vec<(NodeIndex, &serde_json::Map<String, Value>)> = Vec::new();
        let produced: Vec<(NodeIndex, Vec<Site>)> = g
            .active_edges(op, EdgeKind::Produces, Direction::Outgoing)
            .map(|e| match &e.weight().label {
                Label::Produces { sites } => (e.target(), sites.clone()),
                _ => (e.target(), Vec::new()),
            })
            .collect();
        for (schema, sites) in &produced {
            for site in sites {
                for obj in super::select(body, &site.path).into_iter().take(8) {
                    if let Value::Object(map) = obj {
                        typed.push((*schema, map));
                    }
                }
            }
        }
        // A top-level object (or list of objects) nothing accounts for: match its
        // shape against the schemas.
        if typed.is_empty() {
            let (objects, path) = match body {
                Value::Object(map) => (vec![map], "$"),
                Value::Array(items) => (
                    items.iter().filter_map(Value::as_object).take(8).collect(),
                    "$[*]",
                ),
                _ => (Vec::new(), "$"),
            };
            if let Some(first) = objects.first()
                && let Some(schema) = best_shape(g, first)
            {
                let edge = Edge {
                    kind: EdgeKind::Produces,
                    label: Label::Produces {
                        sites: vec![Site {
                            status: status.to_string(),
                            path: path.to_string(),
                        }],
                    },
                    origin: Origin::Observed,
                    score: 1.0,
                    evidence: vec![Evidence {
                        exchanges: vec![seq],
                        note: format!(
                            "the {status} body matches the properties of {}, which the description does not promise here",
                            g.graph[schema].name
                        ),
                    }],
                    state: EdgeState::Active,
                };
                if g.find_edge(op, schema, EdgeKind::Produces).is_none() {
                    g.add_edge(op, schema, edge);
                    changes.push(Change::Produces {
                        operation: operation.to_string(),
                        schema: g.graph[schema].name.clone(),
                    });
                }
                for o in objects {
                    typed.push((schema, o));
                }
            }
        }
        for (schema, obj) in typed {
            self.learn_values(g, schema, obj, seq, &mut changes);
        }
        changes
    }

    fn learn_values(
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

    /// Records how a request whose input came from `schema`'s property fared:
    /// λ consecutive failures suspend the consumes edge, a success re-activates it.
    pub fn binding_result(
        &mut self,
        g: &mut PropertyGraph,
        schema: &str,
        operation: &str,
        success: bool,
        seq: u64,
    ) -> Option<Change> {
        let (Some(s), Some(o)) = (g.schema(schema), g.operation(operation)) else {
            return None;
        };
        let e = g.find_edge(s, o, EdgeKind::Consumes)?;
        let failures = self.failures.entry(e).or_default();
        if success {
            *failures = 0;
            count_passes(g, e, s);
            let edge = &mut g.graph[e];
            if edge.state == EdgeState::Suspended {
                edge.state = EdgeState::Active;
                push_state_evidence(
                    &mut edge.evidence,
                    Evidence {
                        exchanges: vec![seq],
                        note: "re-activated: a value from this schema worked".into(),
                    },
                );
                return Some(Change::Reactivated {
                    schema: schema.into(),
                    operation: operation.into(),
                });
            }
            return None;
        }
        *failures += 1;
        let edge = &mut g.graph[e];
        if *failures >= self.lambda && edge.state == EdgeState::Active {
            edge.state = EdgeState::Suspended;
            push_state_evidence(
                &mut edge.evidence,
                Evidence {
                    exchanges: vec![seq],
                    note: format!(
                        "suspended after {} consecutive failures with values from {schema}",
                        self.lambda
                    ),
                },
            );
            return Some(Change::Suspended {
                schema: schema.into(),
                operation: operation.into(),
            });
        }
        None
    }
}

/// Suspensions and re-activations kept in an edge's evidence: the first and
/// the latest few, with a count of those between (an edge whose values work
/// for some objects and not others flips state all run long).
const STATE_EVIDENCE: usize = 3;

/// The start of the note that counts the state changes left out.
const ELIDED: &str = "… and ";

fn is_state_note(note: &str) -> bool {
    note.starts_with("suspended") || note.starts_with("re-activated") || note.starts_with(ELIDED)
}

/// Records a state change, keeping [`STATE_EVIDENCE`] first and last ones.
fn push_state_evidence(evidence: &mut Vec<Evidence>, new: Evidence) {
    let states: Vec<usize> = (0..evidence.len())
        .filter(|&i| is_state_note(&evidence[i].note))
        .collect();
    if states.len() < 2 * STATE_EVIDENCE + 1 {
        evidence.push(new);
        return;
    }
    let summary = states[STATE_EVIDENCE];
    if evidence[summary].note.starts_with(ELIDED) {
        // The oldest of the latest ones joins the count.
        let oldest = states[STATE_EVIDENCE + 1];
        evidence.remove(oldest);
        let n: u64 = evidence[summary]
            .note
            .trim_start_matches(ELIDED)
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        evidence[summary].note = format!("{ELIDED}{} more suspensions and re-activations", n + 1);
    } else {
        evidence.remove(states[STATE_EVIDENCE + 1]);
        evidence[summary] = Evidence {
            exchanges: Vec::new(),
            note: format!("{ELIDED}2 more suspensions and re-activations"),
        };
    }
    evidence.push(new);
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

/// Whether a reference-style property name (`authorId`) names a resource other
/// than the schema whose own `id` it is matched with: then the match is a
/// coincidence of counters, not a reference. Neutral names (`item`) never
/// contradict anything.
fn name_contradicts(prop: &str, other_schema: &str, other_prop: &str) -> bool {
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

/// The schema whose properties best match an object's keys, if one is close.
fn best_shape(g: &PropertyGraph, obj: &serde_json::Map<String, Value>) -> Option<NodeIndex> {
    if obj.len() < 2 {
        return None;
    }
    let keys: HashSet<&str> = obj.keys().map(String::as_str).collect();
    let mut best: Option<(NodeIndex, f64)> = None;
    for ix in g.nodes(NodeKind::Schema) {
        let Some(attrs) = g.graph[ix].schema() else {
            continue;
        };
        let props: HashSet<&str> = attrs.properties.iter().map(|p| p.name.as_str()).collect();
        if props.is_empty() {
            continue;
        }
        let inter = keys.intersection(&props).count() as f64;
        let union = keys.union(&props).count() as f64;
        let score = inter / union;
        if score >= SHAPE_MATCH && best.is_none_or(|(_, b)| score > b) {
            best = Some((ix, score));
        }
    }
    best.map(|(ix, _)| ix)
}

fn add_equivalence(
    g: &mut PropertyGraph,
    (a, pa): (NodeIndex, &str),
    (b, pb): (NodeIndex, &str),
    (values, proven): (u32, bool),
    evidence: Evidence,
) {
    // Stored from the smaller node id, like every undirected edge.
    let (s, ps, t, pt) = if g.graph[a].id <= g.graph[b].id {
        (a, pa, b, pb)
    } else {
        (b, pb, a, pa)
    };
    let pair = PropertyPair {
        source: ps.to_string(),
        target: pt.to_string(),
        score: 1.0,
        rule: "observed-value".into(),
        values: Some(values),
        passes: None,
        candidate: !proven,
    };
    match g.find_edge(s, t, EdgeKind::Equivalent) {
        Some(e) => {
            let edge = &mut g.graph[e];
            if let Label::Equivalent { pairs } = &mut edge.label {
                match pairs.iter_mut().find(|p| p.source == ps && p.target == pt) {
                    // A candidate never overrides what the description or
                    // the names say; it only adds its counts.
                    Some(p) if !proven && p.rule != "observed-value" => p.values = Some(values),
                    Some(p) => *p = pair,
                    None => pairs.push(pair),
                }
            }
            if proven {
                edge.origin = Origin::Observed;
                edge.score = 1.0;
                edge.state = EdgeState::Active;
            }
            edge.evidence.push(evidence);
        }
        None => {
            g.add_edge(
                s,
                t,
                Edge {
                    kind: EdgeKind::Equivalent,
                    label: Label::Equivalent { pairs: vec![pair] },
                    origin: Origin::Observed,
                    score: 1.0,
                    evidence: vec![evidence],
                    state: if proven {
                        EdgeState::Active
                    } else {
                        EdgeState::Candidate
                    },
                },
            );
        }
    }
}

/// Counts a success of a value passed along consumes edge `e` (from schema
/// `s`) on each observed equivalence pair whose propagation added one of its
/// bindings: the evidence that the equivalence carries working values.
fn count_passes(g: &mut PropertyGraph, e: EdgeIndex, s: NodeIndex) {
    let props: Vec<String> = match &g.graph[e].label {
        Label::Consumes { bindings } => bindings
            .iter()
            .filter(|b| b.origin == Origin::Observed && b.rule == "observed-value")
            .map(|b| b.property.clone())
            .collect(),
        _ => return,
    };
    if props.is_empty() {
        return;
    }
    let equivalences: Vec<EdgeIndex> = g
        .graph
        .edges_directed(s, Direction::Outgoing)
        .chain(g.graph.edges_directed(s, Direction::Incoming))
        .filter(|x| x.weight().kind == EdgeKind::Equivalent)
        .map(|x| x.id())
        .collect();
    for x in equivalences {
        let s_is_source = g.graph.edge_endpoints(x).is_some_and(|(a, _)| a == s);
        if let Label::Equivalent { pairs } = &mut g.graph[x].label {
            for p in pairs.iter_mut().filter(|p| p.rule == "observed-value") {
                let mine = if s_is_source { &p.source } else { &p.target };
                if props.contains(mine) {
                    *p.passes.get_or_insert(0) += 1;
                }
            }
        }
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

/// Every input fed by `from.from_prop` can also be fed by `to.to_prop`.
fn propagate(
    g: &mut PropertyGraph,
    from: NodeIndex,
    from_prop: &str,
    to: NodeIndex,
    to_prop: &str,
    exchanges: &[u64],
    changes: &mut Vec<Change>,
) {
    let fed: Vec<(NodeIndex, Binding)> = g
        .active_edges(from, EdgeKind::Consumes, Direction::Outgoing)
        .flat_map(|e| match &e.weight().label {
            Label::Consumes { bindings } => bindings
                .iter()
                .filter(|b| b.property == from_prop && !b.input.is_empty())
                .map(|b| (e.target(), b.clone()))
                .collect(),
            _ => Vec::new(),
        })
        .collect();
    for (op, b) in fed {
        let binding = Binding {
            location: b.location,
            input: b.input.clone(),
            property: to_prop.to_string(),
            origin: Origin::Observed,
            score: 1.0,
            rule: "observed-value".into(),
        };
        let evidence = Evidence {
            exchanges: exchanges.to_vec(),
            note: format!(
                "{}.{to_prop} is equivalent to {}.{from_prop}, which feeds {}",
                g.graph[to].name, g.graph[from].name, b.input
            ),
        };
        match g.find_edge(to, op, EdgeKind::Consumes) {
            Some(e) => {
                let edge = &mut g.graph[e];
                if let Label::Consumes { bindings } = &mut edge.label {
                    if bindings
                        .iter()
                        .any(|x| x.location == b.location && x.input == b.input)
                    {
                        continue;
                    }
                    bindings.push(binding);
                }
                edge.evidence.push(evidence);
            }
            None => {
                g.add_edge(
                    to,
                    op,
                    Edge {
                        kind: EdgeKind::Consumes,
                        label: Label::Consumes {
                            bindings: vec![binding],
                        },
                        origin: Origin::Observed,
                        score: 1.0,
                        evidence: vec![evidence],
                        state: EdgeState::Active,
                    },
                );
            }
        }
        changes.push(Change::Binding {
            schema: g.graph[to].name.clone(),
            operation: g.graph[op].name.clone(),
            input: b.input,
        });
    }
}

#[cfg(test)]
mod evidence_tests {
    use super::*;

    #[test]
    fn flapping_edges_keep_the_first_and_latest_state_changes() {
        let mut ev = vec![Evidence {
            exchanges: vec![1],
            note: "observed".into(),
        }];
        for k in 0..100u64 {
            let note = if k % 2 == 0 {
                "suspended x"
            } else {
                "re-activated y"
            };
            push_state_evidence(
                &mut ev,
                Evidence {
                    exchanges: vec![k],
                    note: note.into(),
                },
            );
        }
        assert_eq!(ev.len(), 1 + 2 * STATE_EVIDENCE + 1);
        assert_eq!(ev[0].note, "observed");
        assert_eq!(ev[1].exchanges, vec![0]);
        assert_eq!(
            ev[STATE_EVIDENCE + 1].note,
            "… and 94 more suspensions and re-activations"
        );
        assert_eq!(ev.last().unwrap().exchanges, vec![99]);
        assert_eq!(ev[ev.len() - 2].exchanges, vec![98]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn petstore() -> PropertyGraph {
        let loaded = crate::load::load(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/specs/morest-petstore.yaml"
        )))
        .unwrap();
        crate::graph::build(&loaded.api)
    }

    #[test]
    fn an_undocumented_body_adds_an_observed_produces_edge() {
        let mut g = petstore();
        let mut f = Feedback::default();
        let changes = f.observe(
            &mut g,
            "addPet",
            200,
            &json!({"id": 7, "name": "Rex", "status": "sold"}),
            11,
        );
        assert_eq!(
            changes,
            [Change::Produces {
                operation: "addPet".into(),
                schema: "Pet".into()
            }]
        );
        let e = g
            .find_edge(
                g.operation("addPet").unwrap(),
                g.schema("Pet").unwrap(),
                EdgeKind::Produces,
            )
            .unwrap();
        assert_eq!(g.graph[e].origin, Origin::Observed);
        assert_eq!(g.graph[e].evidence[0].exchanges, [11]);
    }

    #[test]
    fn the_paper_example_resolves_pet_id_to_order_pet_id_not_order_id() {
        let mut g = petstore();
        let mut f = Feedback::default();
        // First pair: Pet.id equals both Order.id and Order.petId (ambiguous).
        f.observe(
            &mut g,
            "getOrderById",
            200,
            &json!({"id": 11, "petId": 11, "status": "succ"}),
            1,
        );
        f.observe(
            &mut g,
            "getPetById",
            200,
            &json!({"id": 11, "name": "cat", "status": "sold"}),
            2,
        );
        let mut all = Vec::new();
        for (n, (order, pet)) in [(21, 32), (22, 33), (23, 34), (24, 35)]
            .into_iter()
            .enumerate()
        {
            let s = 10 + 2 * n as u64;
            all.extend(f.observe(
                &mut g,
                "getOrderById",
                200,
                &json!({"id": order, "petId": pet, "status": "succ"}),
                s,
            ));
            all.extend(f.observe(
                &mut g,
                "getPetById",
                200,
                &json!({"id": pet, "name": "dog", "status": "sold"}),
                s + 1,
            ));
        }
        assert!(
            all.contains(&Change::Equivalent {
                left: "Pet.id".into(),
                right: "Order.petId".into()
            }),
            "{all:?}"
        );
        let e = g
            .find_edge(
                g.schema("Order").unwrap(),
                g.schema("Pet").unwrap(),
                EdgeKind::Equivalent,
            )
            .unwrap();
        let Label::Equivalent { pairs } = &g.graph[e].label else {
            panic!()
        };
        assert!(
            pairs
                .iter()
                .any(|p| p.source == "petId" && p.target == "id" && p.rule == "observed-value")
        );
        assert!(
            !pairs.iter().any(|p| p.source == "id" && p.target == "id"),
            "Order.id is not Pet.id"
        );
        assert!(
            !pairs.iter().any(|p| p.source == "status"),
            "status values never coincide"
        );
        assert_eq!(g.graph[e].origin, Origin::Observed);
    }

    #[test]
    fn reference_names_that_point_elsewhere_are_not_equated_with_an_id() {
        assert!(name_contradicts("authorId", "Order", "id"));
        assert!(!name_contradicts("authorId", "Author", "id"));
        assert!(!name_contradicts("author_id", "AuthorResponse", "id"));
        assert!(
            !name_contradicts("item", "Order", "id"),
            "neutral names may match"
        );
        assert!(!name_contradicts("authorId", "Order", "authorId"));
    }

    #[test]
    fn lambda_failures_suspend_and_a_success_reactivates() {
        let mut g = petstore();
        let mut f = Feedback::new(3);
        assert_eq!(
            f.binding_result(&mut g, "Pet", "getPetById", false, 1),
            None
        );
        assert_eq!(
            f.binding_result(&mut g, "Pet", "getPetById", false, 2),
            None
        );
        assert_eq!(
            f.binding_result(&mut g, "Pet", "getPetById", false, 3),
            Some(Change::Suspended {
                schema: "Pet".into(),
                operation: "getPetById".into()
            })
        );
        let e = g
            .find_edge(
                g.schema("Pet").unwrap(),
                g.operation("getPetById").unwrap(),
                EdgeKind::Consumes,
            )
            .unwrap();
        assert_eq!(g.graph[e].state, EdgeState::Suspended);
        assert!(matches!(
            f.binding_result(&mut g, "Pet", "getPetById", true, 4),
            Some(Change::Reactivated { .. })
        ));
        assert_eq!(g.graph[e].state, EdgeState::Active);
    }
}
