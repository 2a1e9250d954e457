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
//!
//! Here: the changes, the loop's memory and what a 2xx body says an
//! operation produces; values matched across schemas are in `matching`,
//! equivalences written into the graph in `equivalence`, suspension and
//! re-activation of consumes edges in `suspension`.

mod equivalence;
mod matching;
mod suspension;
#[cfg(test)]
mod tests;

use std::collections::{HashMap, HashSet};

use petgraph::Direction;
use petgraph::graph::{EdgeIndex, NodeIndex};
use petgraph::visit::EdgeRef;
use serde_json::Value;

use super::{Edge, EdgeKind, EdgeState, Evidence, Label, NodeKind, Origin, PropertyGraph, Site};

/// Default consecutive failures before a consumes edge is suspended (λ).
pub const DEFAULT_LAMBDA: u32 = 3;

/// Jaccard similarity of a body object's keys and a schema's properties above
/// which the object is taken to be of that schema.
const SHAPE_MATCH: f64 = 0.8;

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
/// many of those values no counter could have made (`matching::counter_like`), and in
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
