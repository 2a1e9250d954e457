//! Graphviz DOT: operations as boxes, schemas as records listing their properties.

use std::fmt::Write;

use petgraph::visit::EdgeRef;

use crate::graph::{EdgeKind, EdgeState, NodeKind, Origin, PropertyGraph};

/// Renders DOT text that `dot -Tsvg` lays out.
pub(super) fn to_dot(g: &PropertyGraph) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph \"{}\" {{", esc(&g.title));
    out.push_str("  graph [rankdir=LR, fontname=\"Helvetica\", overlap=false];\n");
    out.push_str("  node [fontname=\"Helvetica\", fontsize=10];\n");
    out.push_str("  edge [fontname=\"Helvetica\", fontsize=9];\n");
    for ix in g.graph.node_indices() {
        let n = &g.graph[ix];
        match n.kind {
            NodeKind::Operation => {
                let subtitle = n
                    .operation()
                    .map(|a| format!("{} {}", a.method.as_str(), a.path))
                    .unwrap_or_default();
                let label = if subtitle.ends_with(&n.name) || n.name == subtitle {
                    n.name.clone()
                } else {
                    format!("{}\n{}", n.name, subtitle)
                };
                let _ = writeln!(
                    out,
                    "  \"{}\" [shape=box, style=\"rounded,filled\", fillcolor=\"#e8f0fe\", label=\"{}\"];",
                    esc(&n.id),
                    esc(&label)
                );
            }
            NodeKind::Schema => {
                let props: Vec<String> = n
                    .schema()
                    .map(|s| {
                        s.properties
                            .iter()
                            .take(12)
                            .map(|p| format!("{}: {}", p.name, p.ty))
                            .collect()
                    })
                    .unwrap_or_default();
                let more = n
                    .schema()
                    .map_or(0, |s| s.properties.len().saturating_sub(12));
                let mut label = n.name.clone();
                for p in props {
                    label.push('\n');
                    label.push_str(&p);
                }
                if more > 0 {
                    let _ = write!(label, "\n… {more} more");
                }
                let _ = writeln!(
                    out,
                    "  \"{}\" [shape=note, style=filled, fillcolor=\"#fff4e0\", label=\"{}\"];",
                    esc(&n.id),
                    esc(&label)
                );
            }
        }
    }
    for e in g.graph.edge_references() {
        let w = e.weight();
        let mut attrs: Vec<String> = Vec::new();
        match w.kind {
            EdgeKind::Produces => attrs.push("color=\"#2e7d32\"".into()),
            EdgeKind::Consumes => {
                attrs.push("color=\"#1565c0\"".into());
                attrs.push(format!("label=\"{}\"", esc(&w.label.text())));
            }
            EdgeKind::Equivalent => {
                attrs.push("dir=none, style=dotted, color=\"#6a1b9a\"".into());
                attrs.push(format!("label=\"{}\"", esc(&w.label.text())));
            }
            EdgeKind::SameEndpoint => attrs.push("dir=none, color=\"#9e9e9e\"".into()),
        }
        if w.origin == Origin::Inferred {
            attrs.push("style=dashed".into());
        }
        if w.origin == Origin::Observed {
            attrs.push("penwidth=2".into());
        }
        if w.state != EdgeState::Active {
            attrs.push("color=\"#bdbdbd\", fontcolor=\"#bdbdbd\"".into());
        }
        let _ = writeln!(
            out,
            "  \"{}\" -> \"{}\" [{}];",
            esc(&g.graph[e.source()].id),
            esc(&g.graph[e.target()].id),
            attrs.join(", ")
        );
    }
    out.push_str("}\n");
    out
}

/// Escapes text for a DOT double-quoted string; newlines become `\l`-free `\n`.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}
