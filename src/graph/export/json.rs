//! The JSON export: the one graph format other tools (and `graph --diff`) read.

use petgraph::visit::EdgeRef;
use serde::{Deserialize, Serialize};

use super::edge_id;
use crate::graph::{
    Binding, EdgeKind, EdgeState, Evidence, Label, Node, Origin, PropertyGraph, PropertyPair, Site,
};

/// Version of the document shape; bumped only on incompatible changes.
pub const FORMAT_VERSION: u32 = 1;

/// What the graph describes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiInfo {
    /// The API's title.
    pub title: String,
    /// The description format (`openapi_3_0`, `graphql_sdl`…).
    pub format: String,
}

/// An exported graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphDocument {
    /// Shape version ([`FORMAT_VERSION`]).
    pub format_version: u32,
    /// The API.
    pub api: ApiInfo,
    /// Operation and schema nodes.
    pub nodes: Vec<Node>,
    /// Edges.
    pub edges: Vec<EdgeDocument>,
}

/// The structured part of an edge label, by kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Detail {
    /// `consumes`: which property feeds which input.
    Consumes {
        /// The bindings.
        bindings: Vec<Binding>,
    },
    /// `produces`: where in the response.
    Produces {
        /// The places.
        sites: Vec<Site>,
    },
    /// `equivalent`: property pairs.
    Equivalent {
        /// The pairs.
        pairs: Vec<PropertyPair>,
    },
    /// `same_endpoint`: the shared path.
    SameEndpoint {
        /// The path.
        path: String,
    },
}

/// An exported edge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EdgeDocument {
    /// Stable id: `KIND:SOURCE->TARGET`.
    pub id: String,
    /// `produces`, `consumes`, `equivalent` or `same_endpoint`.
    pub kind: EdgeKind,
    /// Source node id.
    pub source: String,
    /// Target node id.
    pub target: String,
    /// The label as one line of text.
    pub label: String,
    /// The label's structure.
    #[serde(flatten)]
    pub detail: Detail,
    /// `spec`, `inferred` or `observed`.
    pub origin: Origin,
    /// Confidence in 0..=1.
    pub score: f64,
    /// What justified an observed edge.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<Evidence>,
    /// `active` or `suspended`.
    pub state: EdgeState,
}

/// Builds the export document.
pub fn to_document(g: &PropertyGraph) -> GraphDocument {
    let nodes = g.graph.node_weights().cloned().collect();
    let edges = g
        .graph
        .edge_references()
        .map(|e| {
            let w = e.weight();
            let source = g.graph[e.source()].id.clone();
            let target = g.graph[e.target()].id.clone();
            let detail = match &w.label {
                Label::Consumes { bindings } => Detail::Consumes {
                    bindings: bindings.clone(),
                },
                Label::Produces { sites } => Detail::Produces {
                    sites: sites.clone(),
                },
                Label::Equivalent { pairs } => Detail::Equivalent {
                    pairs: pairs.clone(),
                },
                Label::SameEndpoint { path } => Detail::SameEndpoint { path: path.clone() },
            };
            EdgeDocument {
                id: edge_id(w.kind, &source, &target),
                kind: w.kind,
                source,
                target,
                label: w.label.text(),
                detail,
                origin: w.origin,
                score: w.score,
                evidence: w.evidence.clone(),
                state: w.state,
            }
        })
        .collect();
    GraphDocument {
        format_version: FORMAT_VERSION,
        api: ApiInfo {
            title: g.title.clone(),
            format: serde_json::to_value(g.format)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
        },
        nodes,
        edges,
    }
}

/// Renders the JSON export, pretty-printed, with a final newline.
pub(super) fn to_json(g: &PropertyGraph) -> String {
    let mut s = serde_json::to_string_pretty(&to_document(g)).unwrap_or_else(|_| "{}".into());
    s.push('\n');
    s
}

/// Reads a JSON export back.
pub fn from_json(text: &str) -> Result<GraphDocument, serde_json::Error> {
    serde_json::from_str(text)
}
