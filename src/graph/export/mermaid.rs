//! Mermaid flowcharts, for Markdown pages that render them.

use std::collections::HashMap;
use std::fmt::Write;

use petgraph::visit::EdgeRef;

use crate::graph::{EdgeKind, EdgeState, NodeKind, Origin, PropertyGraph};

/// Renders a `flowchart LR` block (without the Markdown fence).
pub(super) fn to_mermaid(g: &PropertyGraph) -> String {
    let mut out = String::from("flowchart LR\n");
    // Mermaid ids must be plain words; node ids contain `:`, `/` and spaces.
    let ids: HashMap<_, String> = g
        .graph
        .node_indices()
        .map(|ix| (ix, format!("n{}", ix.index())))
        .collect();
    for ix in g.graph.node_indices() {
        let n = &g.graph[ix];
        let text = esc(&n.name);
        match n.kind {
            NodeKind::Operation => {
                let _ = writeln!(out, "  {}[\"{}\"]", ids[&ix], text);
            }
            NodeKind::Schema => {
                let _ = writeln!(out, "  {}[(\"{}\")]", ids[&ix], text);
            }
        }
    }
    for e in g.graph.edge_references() {
        let w = e.weight();
        let (a, b) = (&ids[&e.source()], &ids[&e.target()]);
        let dashed = w.origin == Origin::Inferred || w.state != EdgeState::Active;
        let arrow = match (w.kind, dashed) {
            (EdgeKind::Produces | EdgeKind::Consumes, false) => "-->",
            (EdgeKind::Produces | EdgeKind::Consumes, true) => "-.->",
            (EdgeKind::Equivalent, _) => "-.-",
            (EdgeKind::SameEndpoint, _) => "---",
        };
        let label = match w.kind {
            EdgeKind::Consumes | EdgeKind::Equivalent => w.label.text(),
            _ => String::new(),
        };
        let suspended = match w.state {
            EdgeState::Active => "",
            EdgeState::Suspended => " (suspended)",
            EdgeState::Candidate => " (candidate)",
        };
        if label.is_empty() && suspended.is_empty() {
            let _ = writeln!(out, "  {a} {arrow} {b}");
        } else {
            let _ = writeln!(out, "  {a} {arrow}|\"{}{}\"| {b}", esc(&label), suspended);
        }
    }
    let _ = writeln!(out, "  classDef schema fill:#fff4e0,stroke:#e0a040");
    let schemas: Vec<&String> = g
        .graph
        .node_indices()
        .filter(|ix| g.graph[*ix].kind == NodeKind::Schema)
        .map(|ix| &ids[&ix])
        .collect();
    if !schemas.is_empty() {
        let list: Vec<&str> = schemas.iter().map(|s| s.as_str()).collect();
        let _ = writeln!(out, "  class {} schema", list.join(","));
    }
    out
}

/// Mermaid labels are double-quoted; quotes and a few markup characters are
/// written as entity codes, which Mermaid decodes.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("#quot;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '|' => out.push_str("#124;"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}
