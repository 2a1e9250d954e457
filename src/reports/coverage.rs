//! Graph coverage: which consumes links of the final graph carried a value
//! that the consuming operation then answered with success (Schemathesis
//! reports the OpenAPI links it covered; this is the same question asked of
//! every link the graph holds, spec, inferred or observed). A link that only
//! says which schema an operation's body is (no binding names an input)
//! passes no value from one call to another and is not counted.

use std::collections::BTreeMap;

use petgraph::visit::EdgeRef;

use super::{GraphCoverage, LinkCoverage};
use crate::graph::{Edge, EdgeKind, Label, PropertyGraph};

impl GraphCoverage {
    /// The coverage of `graph`'s consumes links, given per (schema,
    /// operation) the values passed along them and the successes after.
    pub fn of(
        graph: &PropertyGraph,
        flows: &BTreeMap<(String, String), (u64, u64)>,
    ) -> GraphCoverage {
        let mut edges: Vec<LinkCoverage> = graph
            .graph
            .edge_references()
            .filter(|e| carries_values(e.weight()))
            .map(|e| {
                let (s, o) = (&graph.graph[e.source()], &graph.graph[e.target()]);
                let (flows, successes) = flows
                    .get(&(s.name.clone(), o.name.clone()))
                    .copied()
                    .unwrap_or_default();
                LinkCoverage {
                    id: crate::graph::export::edge_id(EdgeKind::Consumes, &s.id, &o.id),
                    schema: s.name.clone(),
                    operation: o.name.clone(),
                    flows,
                    successes,
                    exercised: successes > 0,
                }
            })
            .collect();
        edges.sort_by(|a, b| a.id.cmp(&b.id));
        GraphCoverage {
            links: edges.len(),
            links_exercised: edges.iter().filter(|l| l.exercised).count(),
            edges,
        }
    }

    /// Exercised links as a share of all links (1.0 for a graph without any).
    pub fn share(&self) -> f64 {
        if self.links == 0 {
            1.0
        } else {
            self.links_exercised as f64 / self.links as f64
        }
    }
}

/// Whether a consumes edge passes values into some named input.
fn carries_values(edge: &Edge) -> bool {
    edge.kind == EdgeKind::Consumes
        && matches!(&edge.label, Label::Consumes { bindings } if bindings.iter().any(|b| !b.input.is_empty()))
}
