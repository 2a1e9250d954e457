//! The RESTful-service Property Graph (Morest, Definition 2), on petgraph.
//!
//! Operation nodes and schema nodes; directed `produces` edges (operation →
//! schema) and `consumes` edges (schema → operation, labelled with which property
//! feeds which input); undirected `equivalent` edges (schema – schema, labelled with
//! property pairs) and `same_endpoint` edges (operation – operation). Undirected
//! edges are stored once, from the node with the smaller id to the larger.
//!
//! Every edge records where it came from ([`Origin`]) and whether it is in use
//! ([`EdgeState`]); later stages suspend and add edges from what the server answers.

mod build;
pub mod export;
pub mod feedback;
pub mod query;

use std::collections::HashMap;

use petgraph::Direction;
use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};
use petgraph::visit::EdgeRef;
use serde::{Deserialize, Serialize};

use crate::model::{Location, Method, SpecFormat};

pub use build::build;

/// Whether a node stands for an operation or a schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// An operation (REST method + path, or GraphQL root field).
    Operation,
    /// A named schema (object, interface or union type).
    Schema,
}

/// One input of an operation, as shown on a node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputAttr {
    /// Parameter name, or dotted body-field path.
    pub name: String,
    /// Where it travels.
    pub location: Location,
    /// Whether the operation needs it.
    pub required: bool,
    /// Its type, in one word (`integer`, `Pet`, `array<string>`).
    #[serde(rename = "type")]
    pub ty: String,
    /// What a run learnt from the server's answers about the values this
    /// input takes (none before a run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learnt: Option<InputLearnt>,
}

/// What the answers taught about one input's values in positive tests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputLearnt {
    /// `pooled` (only values earlier answers gave, never made-up ones),
    /// `left_out` (an optional input the server refuses whenever it is
    /// sent), or `accepted_value` (that input, set to [`Self::value`], the
    /// one value it accepted).
    pub values: String,
    /// The value an `accepted_value` input takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<serde_json::Value>,
    /// The answers that taught it.
    pub evidence: Evidence,
}

/// Attributes of an operation node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OperationAttrs {
    /// HTTP method or GraphQL root type.
    pub method: Method,
    /// Path template, or GraphQL root field name.
    pub path: String,
    /// The declared operationId.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub operation_id: Option<String>,
    /// Its inputs: parameters, then top-level body fields.
    pub inputs: Vec<InputAttr>,
    /// Documented response status codes.
    pub responses: Vec<String>,
    /// Whether it is deprecated.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub deprecated: bool,
}

/// One property of a schema node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PropertyAttr {
    /// Its name.
    pub name: String,
    /// Its type, in one word.
    #[serde(rename = "type")]
    pub ty: String,
    /// Whether objects must carry it.
    pub required: bool,
}

/// Attributes of a schema node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchemaAttrs {
    /// Its properties (for unions: none).
    pub properties: Vec<PropertyAttr>,
    /// Member schemas of a union/interface or `oneOf`/`anyOf`.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub alternatives: Vec<String>,
}

/// Node attributes, by kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Attributes {
    /// Of an operation.
    Operation(OperationAttrs),
    /// Of a schema.
    Schema(SchemaAttrs),
}

/// A node of the graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// Stable id: `op:NAME` or `schema:NAME`.
    pub id: String,
    /// Its kind.
    pub kind: NodeKind,
    /// The operation's or schema's name.
    pub name: String,
    /// Kind-specific attributes.
    pub attributes: Attributes,
}

impl Node {
    /// The operation attributes, if this is an operation node.
    pub fn operation(&self) -> Option<&OperationAttrs> {
        match &self.attributes {
            Attributes::Operation(a) => Some(a),
            Attributes::Schema(_) => None,
        }
    }

    /// The schema attributes, if this is a schema node.
    pub fn schema(&self) -> Option<&SchemaAttrs> {
        match &self.attributes {
            Attributes::Schema(a) => Some(a),
            Attributes::Operation(_) => None,
        }
    }
}

/// The four kinds of edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// Operation → schema: a 2xx response carries objects of the schema.
    Produces,
    /// Schema → operation: properties of the schema feed inputs of the operation.
    Consumes,
    /// Schema – schema: property pairs believed to hold the same values.
    Equivalent,
    /// Operation – operation: both act on the same path.
    SameEndpoint,
}

impl EdgeKind {
    /// All kinds, in export order.
    pub const ALL: [EdgeKind; 4] = [
        EdgeKind::Produces,
        EdgeKind::Consumes,
        EdgeKind::Equivalent,
        EdgeKind::SameEndpoint,
    ];

    /// The export name.
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Produces => "produces",
            EdgeKind::Consumes => "consumes",
            EdgeKind::Equivalent => "equivalent",
            EdgeKind::SameEndpoint => "same_endpoint",
        }
    }

    /// Whether the edge has no direction.
    pub fn is_undirected(self) -> bool {
        matches!(self, EdgeKind::Equivalent | EdgeKind::SameEndpoint)
    }
}

/// What justified an observed edge: the exchanges that showed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// Sequence numbers of the exchanges in the run's trace.
    pub exchanges: Vec<u64>,
    /// What was seen.
    pub note: String,
}

/// Where an edge (or one binding of it) came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Stated by the description (`$ref`, links, response schemas, paths).
    Spec,
    /// Guessed from names, with a score.
    Inferred,
    /// Seen in the server's answers, with evidence.
    Observed,
}

impl Origin {
    /// The export name.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Spec => "spec",
            Origin::Inferred => "inferred",
            Origin::Observed => "observed",
        }
    }
}

/// Whether an edge is used for generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeState {
    /// In use.
    Active,
    /// Set aside after repeated failures; may be tried again.
    Suspended,
    /// Observed, but on evidence a coincidence could give: shown, never used.
    Candidate,
}

/// One input of an operation fed by one property of a schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Binding {
    /// The input's location.
    pub location: Location,
    /// The input's name (dotted for nested body fields; empty for the whole body).
    pub input: String,
    /// The schema property (dotted when nested; empty for the whole object).
    pub property: String,
    /// Where this binding came from.
    pub origin: Origin,
    /// Confidence in 0..=1 (1 for spec bindings).
    pub score: f64,
    /// The rule that made it (`link`, `body`, `compound-name`, `context-name`, `fuzzy-name`).
    pub rule: String,
}

/// A pair of properties of two schemas believed to hold the same values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PropertyPair {
    /// Property of the edge's source schema.
    pub source: String,
    /// Property of the edge's target schema.
    pub target: String,
    /// Confidence in 0..=1.
    pub score: f64,
    /// The rule that made it.
    pub rule: String,
    /// Observed pairs: distinct values seen under both properties.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<u32>,
    /// Observed pairs: values passed along a binding this pair added that the
    /// consumer then answered with success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passes: Option<u64>,
    /// A coincidence could explain the values seen: recorded, never used.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub candidate: bool,
}

/// Where in a response a produced schema appears.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Site {
    /// Response status (`200`, `2XX`).
    pub status: String,
    /// Path into the body (`$`, `$.items[*]`, `$.owner`).
    pub path: String,
}

/// The structured label of an edge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Label {
    /// Where the produced objects are.
    Produces {
        /// The places.
        sites: Vec<Site>,
    },
    /// Which property feeds which input.
    Consumes {
        /// The bindings.
        bindings: Vec<Binding>,
    },
    /// Which properties are equivalent.
    Equivalent {
        /// The pairs.
        pairs: Vec<PropertyPair>,
    },
    /// The shared path.
    SameEndpoint {
        /// The path template.
        path: String,
    },
}

impl Label {
    /// A one-line text for people (`petId ← id`, `$.items[*]`, `petId = id`).
    pub fn text(&self) -> String {
        match self {
            Label::Produces { sites } => sites
                .iter()
                .map(|s| format!("{} {}", s.status, s.path))
                .collect::<Vec<_>>()
                .join(", "),
            Label::Consumes { bindings } => bindings
                .iter()
                .map(|b| {
                    let input = if b.input.is_empty() {
                        "body".to_string()
                    } else {
                        b.input.clone()
                    };
                    let prop = if b.property.is_empty() {
                        "*".to_string()
                    } else {
                        b.property.clone()
                    };
                    format!("{input} ← {prop}")
                })
                .collect::<Vec<_>>()
                .join(", "),
            Label::Equivalent { pairs } => pairs
                .iter()
                .map(|p| format!("{} = {}", p.source, p.target))
                .collect::<Vec<_>>()
                .join(", "),
            Label::SameEndpoint { path } => path.clone(),
        }
    }
}

/// An edge of the graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Edge {
    /// Its kind.
    pub kind: EdgeKind,
    /// What it says.
    pub label: Label,
    /// Where it came from (the strongest origin among its bindings or pairs).
    pub origin: Origin,
    /// Confidence in 0..=1 (the best among its bindings or pairs).
    pub score: f64,
    /// Exchanges that justified it (observed edges).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub evidence: Vec<Evidence>,
    /// Whether it is in use.
    pub state: EdgeState,
}

/// The property graph of one API.
#[derive(Debug, Clone)]
pub struct PropertyGraph {
    /// The API's title.
    pub title: String,
    /// The format the API was described in.
    pub format: SpecFormat,
    /// The petgraph graph; undirected edges are stored once.
    pub graph: DiGraph<Node, Edge>,
    index: HashMap<String, NodeIndex>,
}

impl PropertyGraph {
    /// An empty graph.
    pub fn new(title: impl Into<String>, format: SpecFormat) -> PropertyGraph {
        PropertyGraph {
            title: title.into(),
            format,
            graph: DiGraph::new(),
            index: HashMap::new(),
        }
    }

    /// Adds a node (its id must be new) and returns its index.
    pub fn add_node(&mut self, node: Node) -> NodeIndex {
        let id = node.id.clone();
        let ix = self.graph.add_node(node);
        self.index.insert(id, ix);
        ix
    }

    /// The node with this id (`op:NAME`, `schema:NAME`).
    pub fn node_by_id(&self, id: &str) -> Option<NodeIndex> {
        self.index.get(id).copied()
    }

    /// The operation node named `name`.
    pub fn operation(&self, name: &str) -> Option<NodeIndex> {
        self.node_by_id(&operation_id(name))
    }

    /// The schema node named `name`.
    pub fn schema(&self, name: &str) -> Option<NodeIndex> {
        self.node_by_id(&schema_id(name))
    }

    /// Adds an edge; undirected kinds are normalised to run from the smaller id.
    pub fn add_edge(&mut self, a: NodeIndex, b: NodeIndex, edge: Edge) -> EdgeIndex {
        let (a, b) = if edge.kind.is_undirected() && self.graph[a].id > self.graph[b].id {
            (b, a)
        } else {
            (a, b)
        };
        self.graph.add_edge(a, b, edge)
    }

    /// The edge of `kind` between `a` and `b` (either way round for undirected kinds).
    pub fn find_edge(&self, a: NodeIndex, b: NodeIndex, kind: EdgeKind) -> Option<EdgeIndex> {
        let matches = |from: NodeIndex, to: NodeIndex| {
            self.graph
                .edges_connecting(from, to)
                .find(|e| e.weight().kind == kind)
                .map(|e| e.id())
        };
        matches(a, b).or_else(|| {
            if kind.is_undirected() {
                matches(b, a)
            } else {
                None
            }
        })
    }

    /// Nodes of one kind, in insertion order.
    pub fn nodes(&self, kind: NodeKind) -> impl Iterator<Item = NodeIndex> + '_ {
        self.graph
            .node_indices()
            .filter(move |&ix| self.graph[ix].kind == kind)
    }

    /// Active edges of `kind` leaving (`Outgoing`) or entering (`Incoming`) a node.
    pub fn active_edges(
        &self,
        node: NodeIndex,
        kind: EdgeKind,
        dir: Direction,
    ) -> impl Iterator<Item = petgraph::graph::EdgeReference<'_, Edge>> {
        self.graph
            .edges_directed(node, dir)
            .filter(move |e| e.weight().kind == kind && e.weight().state == EdgeState::Active)
    }

    /// Records what the answers taught about input `(location, name)` of
    /// the operation named `op`; false when the graph has no such input.
    pub fn note_input(
        &mut self,
        op: &str,
        location: Location,
        name: &str,
        learnt: InputLearnt,
    ) -> bool {
        let Some(ix) = self.operation(op) else {
            return false;
        };
        let Attributes::Operation(attrs) = &mut self.graph[ix].attributes else {
            return false;
        };
        match attrs
            .inputs
            .iter_mut()
            .find(|i| i.location == location && i.name == name)
        {
            Some(input) => {
                input.learnt = Some(learnt);
                true
            }
            None => false,
        }
    }

    /// The graph an export describes (`graph-final.json`), for questions
    /// about a run's refined graph; edges between unknown nodes are skipped.
    pub fn from_document(doc: &export::GraphDocument) -> PropertyGraph {
        let format = serde_json::from_value(serde_json::Value::String(doc.api.format.clone()))
            .unwrap_or(SpecFormat::OpenApi30);
        let mut g = PropertyGraph::new(doc.api.title.clone(), format);
        for n in &doc.nodes {
            g.add_node(n.clone());
        }
        for e in &doc.edges {
            let (Some(a), Some(b)) = (g.node_by_id(&e.source), g.node_by_id(&e.target)) else {
                continue;
            };
            let label = match &e.detail {
                export::Detail::Consumes { bindings } => Label::Consumes {
                    bindings: bindings.clone(),
                },
                export::Detail::Produces { sites } => Label::Produces {
                    sites: sites.clone(),
                },
                export::Detail::Equivalent { pairs } => Label::Equivalent {
                    pairs: pairs.clone(),
                },
                export::Detail::SameEndpoint { path } => Label::SameEndpoint { path: path.clone() },
            };
            g.graph.add_edge(
                a,
                b,
                Edge {
                    kind: e.kind,
                    label,
                    origin: e.origin,
                    score: e.score,
                    evidence: e.evidence.clone(),
                    state: e.state,
                },
            );
        }
        g
    }

    /// Number of edges of each kind and origin.
    pub fn edge_counts(&self) -> Vec<((EdgeKind, Origin), usize)> {
        let mut counts: std::collections::BTreeMap<(EdgeKind, Origin), usize> =
            std::collections::BTreeMap::new();
        for e in self.graph.edge_weights() {
            *counts.entry((e.kind, e.origin)).or_default() += 1;
        }
        counts.into_iter().collect()
    }
}

/// The node id of the operation named `name`.
pub fn operation_id(name: &str) -> String {
    // Made for every lookup of a node (several per answer): no formatting.
    ["op:", name].concat()
}

/// The node id of the schema named `name`.
pub fn schema_id(name: &str) -> String {
    ["schema:", name].concat()
}

/// Evaluates a produces-site path (`$`, `$[*]`, `$.items[*]`, `$.a.b`, `$.*`)
/// on a body.
pub fn select<'v>(body: &'v serde_json::Value, path: &str) -> Vec<&'v serde_json::Value> {
    use serde_json::Value;
    let mut tokens: Vec<&str> = Vec::new();
    let mut rest = path.strip_prefix('$').unwrap_or(path);
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("[*]") {
            tokens.push("[*]");
            rest = r;
        } else if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            tokens.push(&r[..end]);
            rest = &r[end..];
        } else {
            return Vec::new();
        }
    }
    let mut current = vec![body];
    for token in tokens {
        let mut next = Vec::new();
        for v in current {
            match (token, v) {
                ("[*]", Value::Array(items)) => next.extend(items.iter()),
                ("*", Value::Object(m)) => next.extend(m.values()),
                ("[*]", _) => {}
                (key, Value::Object(m)) => next.extend(m.get(key)),
                _ => {}
            }
        }
        current = next;
    }
    current
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn select_follows_site_paths() {
        let body = json!({"items": [{"id": 1}, {"id": 2}], "owner": {"id": 9}});
        assert_eq!(select(&body, "$").len(), 1);
        assert_eq!(
            select(&body, "$.items[*]"),
            vec![&json!({"id": 1}), &json!({"id": 2})]
        );
        assert_eq!(select(&body, "$.owner"), vec![&json!({"id": 9})]);
        let list = json!([{"id": 1}, {"id": 2}]);
        assert_eq!(select(&list, "$[*]").len(), 2);
        assert!(select(&body, "$.missing").is_empty());
    }
}
