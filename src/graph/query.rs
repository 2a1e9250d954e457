//! Questions people (and the generator) ask of the graph: where can an input come
//! from, what uses an operation's outputs, and which calls obtain every required
//! input of an operation.

use std::collections::{BTreeSet, HashMap};

use petgraph::Direction;
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;

use super::{Binding, EdgeKind, EdgeState, Label, NodeKind, Origin, PropertyGraph};
use crate::model::Location;

/// A place an input's value can come from.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// The schema whose property feeds the input.
    pub schema: String,
    /// The property (empty: the whole object).
    pub property: String,
    /// How the binding was found.
    pub origin: Origin,
    /// Its confidence.
    pub score: f64,
    /// The rule that made it.
    pub rule: String,
    /// Operations that produce the schema (active edges only).
    pub producers: Vec<String>,
}

/// One input of an operation with its possible sources.
#[derive(Debug, Clone, PartialEq)]
pub struct InputSources {
    /// Where the input travels.
    pub location: Location,
    /// Its name.
    pub name: String,
    /// Whether it is required.
    pub required: bool,
    /// Its type in one word.
    pub ty: String,
    /// Where values can come from, best first.
    pub sources: Vec<Source>,
    /// Sources a run set aside after repeated failures (a `graph-final.json`),
    /// best first: not used until taken back.
    pub suspended: Vec<Source>,
}

impl InputSources {
    /// Whether some operation can produce a value for it.
    pub fn has_producer(&self) -> bool {
        self.sources.iter().any(|s| !s.producers.is_empty())
    }
}

/// Names of the operations producing a schema through active edges.
pub fn producers(g: &PropertyGraph, schema: NodeIndex) -> Vec<String> {
    let mut out: Vec<String> = g
        .active_edges(schema, EdgeKind::Produces, Direction::Incoming)
        .map(|e| g.graph[e.source()].name.clone())
        .collect();
    out.sort();
    out
}

/// Every input of an operation, with where its values can come from.
pub fn input_sources(g: &PropertyGraph, op: NodeIndex) -> Vec<InputSources> {
    let Some(attrs) = g.graph[op].operation() else {
        return Vec::new();
    };
    let incoming: Vec<(NodeIndex, &Binding)> = g
        .active_edges(op, EdgeKind::Consumes, Direction::Incoming)
        .flat_map(|e| match &e.weight().label {
            Label::Consumes { bindings } => bindings.iter().map(|b| (e.source(), b)).collect(),
            _ => Vec::new(),
        })
        .collect();
    let suspended: Vec<(NodeIndex, &Binding)> = g
        .graph
        .edges_directed(op, Direction::Incoming)
        .filter(|e| {
            e.weight().kind == EdgeKind::Consumes && e.weight().state == EdgeState::Suspended
        })
        .flat_map(|e| match &e.weight().label {
            Label::Consumes { bindings } => bindings.iter().map(|b| (e.source(), b)).collect(),
            _ => Vec::new(),
        })
        .collect();
    let of = |edges: &[(NodeIndex, &Binding)], location: Location, name: &str| {
        let mut found: Vec<Source> = edges
            .iter()
            .filter(|(_, b)| b.location == location && b.input == name)
            .map(|(schema, b)| source(g, *schema, b))
            .collect();
        sort_sources(&mut found);
        found
    };
    let mut out: Vec<InputSources> = attrs
        .inputs
        .iter()
        .map(|input| InputSources {
            location: input.location,
            name: input.name.clone(),
            required: input.required,
            ty: input.ty.clone(),
            sources: of(&incoming, input.location, &input.name),
            suspended: of(&suspended, input.location, &input.name),
        })
        .collect();
    // The whole body, when it is a named schema, is an input of its own.
    let mut whole: Vec<Source> = incoming
        .iter()
        .filter(|(_, b)| b.location == Location::Body && b.input.is_empty())
        .map(|(schema, b)| source(g, *schema, b))
        .collect();
    if !whole.is_empty() {
        sort_sources(&mut whole);
        out.insert(
            0,
            InputSources {
                location: Location::Body,
                name: String::new(),
                required: true,
                ty: whole[0].schema.clone(),
                sources: whole,
                suspended: of(&suspended, Location::Body, ""),
            },
        );
    }
    out
}

fn source(g: &PropertyGraph, schema: NodeIndex, b: &Binding) -> Source {
    Source {
        schema: g.graph[schema].name.clone(),
        property: b.property.clone(),
        origin: b.origin,
        score: b.score,
        rule: b.rule.clone(),
        producers: producers(g, schema),
    }
}

fn sort_sources(sources: &mut [Source]) {
    sources.sort_by(|a, b| {
        b.score
            .partial_cmp(&a.score)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| a.schema.cmp(&b.schema))
    });
}

/// What an operation's outputs feed: per produced schema, the operations that
/// consume it and how.
pub fn output_consumers(g: &PropertyGraph, op: NodeIndex) -> Vec<(String, Vec<(String, String)>)> {
    let mut out = Vec::new();
    for produced in g.active_edges(op, EdgeKind::Produces, Direction::Outgoing) {
        let schema = produced.target();
        let mut consumers: Vec<(String, String)> = g
            .active_edges(schema, EdgeKind::Consumes, Direction::Outgoing)
            .map(|e| (g.graph[e.target()].name.clone(), e.weight().label.text()))
            .collect();
        consumers.sort();
        out.push((g.graph[schema].name.clone(), consumers));
    }
    out
}

/// A required input that no operation can produce a value for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Unproduced {
    /// The operation.
    pub operation: String,
    /// Where the input travels.
    pub location: Location,
    /// The input.
    pub input: String,
}

/// Required parameters (not body fields) with no producing operation.
pub fn unproduced_required(g: &PropertyGraph) -> Vec<Unproduced> {
    let mut out = Vec::new();
    for op in g.nodes(NodeKind::Operation) {
        for input in input_sources(g, op) {
            // Object-valued inputs (GraphQL input objects) are built, not obtained.
            if input.required
                && input.location != Location::Body
                && is_scalar(&input.ty)
                && !input.has_producer()
            {
                out.push(Unproduced {
                    operation: g.graph[op].name.clone(),
                    location: input.location,
                    input: input.name,
                });
            }
        }
    }
    out
}

/// Whether a one-word type description (`string`, `integer|null`) is a scalar.
fn is_scalar(ty: &str) -> bool {
    ty.split('|').all(|t| {
        matches!(
            t,
            "string" | "integer" | "number" | "boolean" | "null" | "any"
        )
    })
}

/// One call of a chain, with what it provides to later calls.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainStep {
    /// The operation to call.
    pub operation: String,
    /// `(consumer operation, input, schema.property)` fed by this call's response.
    pub provides: Vec<(String, String, String)>,
}

/// A shortest call chain ending in an operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Chain {
    /// The calls, dependencies first; the target is last.
    pub steps: Vec<ChainStep>,
    /// Required inputs no producer can supply: `(operation, input, why)`; their
    /// values must be generated or given.
    pub unresolved: Vec<(String, String, String)>,
}

/// Per operation: its required inputs and, for each, the candidate producers with
/// the property that feeds it.
type Needs = Vec<(String, Vec<(NodeIndex, String)>)>;

/// Finds a shortest chain of calls that obtains every required input of `target`
/// from earlier responses, where the graph allows.
///
/// Each operation's cost is one call plus, for each required input, the cheapest
/// producer's cost; costs are found by repeated relaxation (an AND-OR shortest
/// path), so cycles in the graph end at the cheapest acyclic way out.
pub fn chain(g: &PropertyGraph, target: NodeIndex) -> Chain {
    let ops: Vec<NodeIndex> = g.nodes(NodeKind::Operation).collect();
    let mut needs: HashMap<NodeIndex, Needs> = HashMap::new();
    for &op in &ops {
        let mut list = Vec::new();
        for input in input_sources(g, op) {
            if !input.required || input.name.is_empty() {
                continue;
            }
            let mut producers: Vec<(NodeIndex, String)> = Vec::new();
            for s in &input.sources {
                let via = if s.property.is_empty() {
                    s.schema.clone()
                } else {
                    format!("{}.{}", s.schema, s.property)
                };
                for p in &s.producers {
                    if let Some(pix) = g.operation(p)
                        && pix != op
                        && !producers.iter().any(|(x, _)| *x == pix)
                    {
                        producers.push((pix, via.clone()));
                    }
                }
            }
            list.push((input.name.clone(), producers));
        }
        needs.insert(op, list);
    }

    const INF: usize = usize::MAX / 4;
    let mut cost: HashMap<NodeIndex, usize> = ops.iter().map(|&o| (o, INF)).collect();
    loop {
        let mut changed = false;
        for &op in &ops {
            let mut c = 1usize;
            for (_, producers) in &needs[&op] {
                if producers.is_empty() {
                    continue;
                }
                let best = producers.iter().map(|(p, _)| cost[p]).min().unwrap_or(INF);
                // An input whose producers all need this input first is generated.
                c = c.saturating_add(if best >= INF { 0 } else { best });
            }
            if c < cost[&op] {
                cost.insert(op, c);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }

    let mut layout = Layout {
        g,
        needs: &needs,
        cost: &cost,
        steps: Vec::new(),
        placed: BTreeSet::new(),
        unresolved: Vec::new(),
        stack: Vec::new(),
    };
    layout.expand(target);
    Chain {
        steps: layout.steps,
        unresolved: layout.unresolved,
    }
}

/// A chain being laid out, producers before the operations they feed: what
/// it reads (each operation's needs and cost) and what it placed so far.
struct Layout<'g> {
    g: &'g PropertyGraph,
    needs: &'g HashMap<NodeIndex, Needs>,
    cost: &'g HashMap<NodeIndex, usize>,
    steps: Vec<ChainStep>,
    /// Operations already in the chain, by node index.
    placed: BTreeSet<usize>,
    /// Inputs no producer could be placed for: operation, input, why.
    unresolved: Vec<(String, String, String)>,
    /// The operations being expanded (a cycle guard).
    stack: Vec<NodeIndex>,
}

impl Layout<'_> {
    /// Places `op` after the cheapest producer of each of its inputs.
    fn expand(&mut self, op: NodeIndex) {
        let (g, needs, cost) = (self.g, self.needs, self.cost);
        if self.placed.contains(&op.index()) || self.stack.contains(&op) {
            return;
        }
        self.stack.push(op);
        let name = g.graph[op].name.clone();
        for (input, producers) in &needs[&op] {
            if producers.is_empty() {
                self.unresolved.push((
                    name.clone(),
                    input.clone(),
                    "no operation produces it".into(),
                ));
                continue;
            }
            // Cheapest producer; ties go to the one already in the chain, then by name.
            let best = producers
                .iter()
                .filter(|(p, _)| !self.stack.contains(p) && cost[p] < cost[&op])
                .min_by_key(|(p, _)| {
                    (
                        !self.placed.contains(&p.index()),
                        cost[p],
                        g.graph[*p].name.clone(),
                    )
                });
            let Some((producer, via)) = best else {
                self.unresolved.push((
                    name.clone(),
                    input.clone(),
                    "every producer needs a value of this kind first".into(),
                ));
                continue;
            };
            self.expand(*producer);
            if let Some(step) = self
                .steps
                .iter_mut()
                .find(|s| s.operation == g.graph[*producer].name)
            {
                step.provides
                    .push((name.clone(), input.clone(), via.clone()));
            }
        }
        self.stack.pop();
        self.placed.insert(op.index());
        self.steps.push(ChainStep {
            operation: name,
            provides: Vec::new(),
        });
    }
}
