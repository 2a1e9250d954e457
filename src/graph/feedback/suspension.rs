//! How values passed along consumes edges fare: λ consecutive failures
//! suspend an edge, a success re-activates it (and counts a pass on the
//! equivalences that added its bindings); an edge's evidence keeps the
//! first and latest state changes.

use petgraph::Direction;
use petgraph::graph::{EdgeIndex, NodeIndex};
use petgraph::visit::EdgeRef;

use super::{Change, Feedback};
use crate::graph::{EdgeKind, EdgeState, Evidence, Label, Origin, PropertyGraph};

/// Suspensions and re-activations kept in an edge's evidence: the first and
/// the latest few, with a count of those between (an edge whose values work
/// for some objects and not others flips state all run long).
const STATE_EVIDENCE: usize = 3;

/// The start of the note that counts the state changes left out.
const ELIDED: &str = "… and ";

impl Feedback {
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

#[cfg(test)]
mod tests {
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
