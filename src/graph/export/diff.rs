//! Comparing two exported graphs: what a run added, suspended, re-activated or
//! changed, with the evidence recorded for each.

use std::collections::HashMap;
use std::fmt::Write;

use super::json::{EdgeDocument, GraphDocument};
use crate::graph::EdgeState;

/// Differences between two graphs, by edge id.
#[derive(Debug, Default)]
pub struct GraphDiff<'a> {
    /// Edges only in the second graph.
    pub added: Vec<&'a EdgeDocument>,
    /// Edges active in the first graph and suspended in the second.
    pub suspended: Vec<&'a EdgeDocument>,
    /// Edges suspended in the first graph and active in the second.
    pub reactivated: Vec<&'a EdgeDocument>,
    /// Edges in both whose label or origin changed (new bindings or pairs,
    /// an inferred edge confirmed by observation).
    pub changed: Vec<(&'a EdgeDocument, &'a EdgeDocument)>,
    /// Edges only in the first graph.
    pub removed: Vec<&'a EdgeDocument>,
}

/// Compares `before` with `after`.
pub fn diff<'a>(before: &'a GraphDocument, after: &'a GraphDocument) -> GraphDiff<'a> {
    let old: HashMap<&str, &EdgeDocument> =
        before.edges.iter().map(|e| (e.id.as_str(), e)).collect();
    let new: HashMap<&str, &EdgeDocument> =
        after.edges.iter().map(|e| (e.id.as_str(), e)).collect();
    let mut d = GraphDiff::default();
    for e in &after.edges {
        match old.get(e.id.as_str()) {
            None => d.added.push(e),
            Some(o) => {
                match (o.state, e.state) {
                    (EdgeState::Active, EdgeState::Suspended) => d.suspended.push(e),
                    (EdgeState::Suspended, EdgeState::Active) => d.reactivated.push(e),
                    _ => {}
                }
                if o.label != e.label || o.origin != e.origin {
                    d.changed.push((o, e));
                }
            }
        }
    }
    for e in &before.edges {
        if !new.contains_key(e.id.as_str()) {
            d.removed.push(e);
        }
    }
    d
}

impl GraphDiff<'_> {
    /// Whether the graphs have the same edges in the same states.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.suspended.is_empty()
            && self.reactivated.is_empty()
            && self.changed.is_empty()
            && self.removed.is_empty()
    }

    /// The differences as text for people.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let line = |out: &mut String, e: &EdgeDocument| {
            let _ = writeln!(
                out,
                "  {} {} → {}  [{}]  ({})",
                e.kind.as_str(),
                e.source,
                e.target,
                e.label,
                e.origin.as_str()
            );
            for ev in &e.evidence {
                let exchanges = if ev.exchanges.is_empty() {
                    String::new()
                } else {
                    format!(
                        " (exchanges {})",
                        ev.exchanges
                            .iter()
                            .map(u64::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                let _ = writeln!(out, "      evidence: {}{exchanges}", ev.note);
            }
        };
        for (title, list) in [
            ("Added", &self.added),
            ("Suspended", &self.suspended),
            ("Re-activated", &self.reactivated),
            ("Removed", &self.removed),
        ] {
            if !list.is_empty() {
                let _ = writeln!(out, "{title} ({}):", list.len());
                for e in list.iter() {
                    line(&mut out, e);
                }
            }
        }
        if !self.changed.is_empty() {
            let _ = writeln!(out, "Changed ({}):", self.changed.len());
            for (o, e) in &self.changed {
                let _ = writeln!(out, "  was [{}] ({})", o.label, o.origin.as_str());
                line(&mut out, e);
            }
        }
        if out.is_empty() {
            out.push_str("The graphs have the same edges in the same states.\n");
        }
        out
    }
}
