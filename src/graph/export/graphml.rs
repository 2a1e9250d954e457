//! GraphML, the XML graph format Gephi, yEd and networkx read.

use std::fmt::Write;

use petgraph::visit::EdgeRef;
use quick_xml::escape::escape;

use crate::graph::PropertyGraph;

/// Renders a GraphML document. Undirected edges are marked per edge
/// (`directed="false"`), since the graph mixes both kinds.
pub(super) fn to_graphml(g: &PropertyGraph) -> String {
    let mut out = String::new();
    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str("<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:schemaLocation=\"http://graphml.graphdrawing.org/xmlns http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd\">\n");
    for (id, target, name, ty) in [
        ("kind", "node", "kind", "string"),
        ("name", "node", "name", "string"),
        ("method", "node", "method", "string"),
        ("path", "node", "path", "string"),
        ("properties", "node", "properties", "string"),
        ("ekind", "edge", "kind", "string"),
        ("label", "edge", "label", "string"),
        ("origin", "edge", "origin", "string"),
        ("score", "edge", "score", "double"),
        ("state", "edge", "state", "string"),
    ] {
        let _ = writeln!(
            out,
            "  <key id=\"{id}\" for=\"{target}\" attr.name=\"{name}\" attr.type=\"{ty}\"/>"
        );
    }
    let _ = writeln!(
        out,
        "  <graph id=\"{}\" edgedefault=\"directed\">",
        escape(&g.title)
    );
    for ix in g.graph.node_indices() {
        let n = &g.graph[ix];
        let kind = serde_json::to_value(n.kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let _ = writeln!(out, "    <node id=\"{}\">", escape(&n.id));
        data(&mut out, "kind", &kind);
        data(&mut out, "name", &n.name);
        if let Some(op) = n.operation() {
            data(&mut out, "method", op.method.as_str());
            data(&mut out, "path", &op.path);
        }
        if let Some(s) = n.schema() {
            let props: Vec<String> = s
                .properties
                .iter()
                .map(|p| format!("{}: {}", p.name, p.ty))
                .collect();
            data(&mut out, "properties", &props.join(", "));
        }
        out.push_str("    </node>\n");
    }
    for e in g.graph.edge_references() {
        let w = e.weight();
        let directed = if w.kind.is_undirected() {
            " directed=\"false\""
        } else {
            ""
        };
        let source = &g.graph[e.source()].id;
        let target = &g.graph[e.target()].id;
        let _ = writeln!(
            out,
            "    <edge id=\"{}\" source=\"{}\" target=\"{}\"{directed}>",
            escape(super::edge_id(w.kind, source, target)),
            escape(source),
            escape(target)
        );
        data(&mut out, "ekind", w.kind.as_str());
        data(&mut out, "label", &w.label.text());
        data(&mut out, "origin", w.origin.as_str());
        data(&mut out, "score", &w.score.to_string());
        data(
            &mut out,
            "state",
            match w.state {
                crate::graph::EdgeState::Active => "active",
                crate::graph::EdgeState::Suspended => "suspended",
                crate::graph::EdgeState::Candidate => "candidate",
            },
        );
        out.push_str("    </edge>\n");
    }
    out.push_str("  </graph>\n</graphml>\n");
    out
}

fn data(out: &mut String, key: &str, value: &str) {
    let _ = writeln!(out, "      <data key=\"{key}\">{}</data>", escape(value));
}
