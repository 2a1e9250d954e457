//! Writing an equivalence into the graph: the equivalent edge and its
//! property pair (a candidate until proven), and the consumes bindings it
//! adds to every input the one property fed.

use petgraph::Direction;
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;

use super::Change;
use crate::graph::{
    Binding, Edge, EdgeKind, EdgeState, Evidence, Label, Origin, PropertyGraph, PropertyPair,
};

pub(super) fn add_equivalence(
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

/// Every input fed by `from.from_prop` can also be fed by `to.to_prop`.
pub(super) fn propagate(
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
