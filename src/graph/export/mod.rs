//! Writing the property graph for people and tools: JSON (the stable exchange
//! format, published as `models/graph.schema.json`), Graphviz DOT, Mermaid and
//! GraphML.

mod diff;
mod dot;
mod graphml;
mod json;
mod mermaid;

pub use diff::{GraphDiff, diff};
pub use json::{Detail, EdgeDocument, FORMAT_VERSION, GraphDocument, from_json, to_document};

use super::PropertyGraph;

/// An export format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The stable JSON document (see `models/graph.schema.json`).
    Json,
    /// Graphviz DOT (render with `dot -Tsvg`).
    Dot,
    /// A Mermaid flowchart (renders in GitHub Markdown).
    Mermaid,
    /// GraphML, for Gephi, yEd and graph libraries.
    Graphml,
}

/// Renders the graph in the given format.
pub fn render(graph: &PropertyGraph, format: Format) -> String {
    match format {
        Format::Json => json::to_json(graph),
        Format::Dot => dot::to_dot(graph),
        Format::Mermaid => mermaid::to_mermaid(graph),
        Format::Graphml => graphml::to_graphml(graph),
    }
}

/// The stable id of an edge: its kind and its two node ids. The graph holds at most
/// one edge of each kind between two nodes, so this is unique and survives rebuilds.
pub fn edge_id(kind: super::EdgeKind, source: &str, target: &str) -> String {
    format!("{}:{source}->{target}", kind.as_str())
}
