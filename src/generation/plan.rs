//! What the graph tells generation, read once per version of the graph: which
//! schema properties feed each input, and where each operation's produced
//! objects sit in its responses. Tests in flight share one snapshot.

use std::collections::HashMap;

use petgraph::Direction;
use petgraph::visit::EdgeRef;

use crate::graph::{EdgeKind, EdgeState, Label, Origin, PropertyGraph};
use crate::model::{Api, Location};

/// Probability of still drawing on a suspended consumes edge, so that an edge
/// suspended by bad luck can prove itself again.
pub const RETRY_SUSPENDED: f64 = 0.1;

/// A schema property that feeds an input, through one consumes edge.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// The schema (the edge's source).
    pub schema: String,
    /// `Schema.property`: the key values are pooled under.
    pub key: String,
    /// Whether the edge is active (not suspended).
    pub active: bool,
    /// The binding's standing: spec 0, inferred 1, observed 2 (lower first).
    pub rank: u8,
    /// The binding's confidence.
    pub score: f64,
}

/// The graph's advice for generation, per operation position.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// For each input `(location, name)`, the properties that feed it.
    pub sources: Vec<HashMap<(Location, String), Vec<Source>>>,
    /// Produced schemas with the JSON paths where they appear.
    pub produced: Vec<Vec<(String, String)>>,
    /// What is worth remembering from a response: nothing else is ever asked for.
    pub wanted: Wanted,
}

/// The keys some input may ask a value pool for: `Schema.property` keys the
/// graph's bindings name, and the names of inputs (parameters and top-level
/// body fields). Harvesting only these keeps a run's cost per response small.
#[derive(Debug, Clone, Default)]
pub struct Wanted {
    /// Schema → properties some binding reads.
    pub properties: HashMap<String, std::collections::HashSet<String>>,
    /// Input names.
    pub names: std::collections::HashSet<String>,
}

impl Wanted {
    /// Whether `schema.property` is asked for.
    pub fn property(&self, schema: &str, property: &str) -> bool {
        self.properties
            .get(schema)
            .is_some_and(|p| p.contains(property))
    }

    /// Whether an input is named `name`.
    pub fn name(&self, name: &str) -> bool {
        self.names.contains(name)
    }
}

impl Plan {
    /// A plan that knows nothing (the `--no-graph` ablation): values flow only
    /// by name and through `Location` headers.
    pub fn empty(api: &Api) -> Plan {
        let mut wanted = Wanted::default();
        for op in &api.operations {
            for p in &op.parameters {
                wanted.names.insert(p.name.clone());
            }
            if let Some((_, schema)) = op.request_body.as_ref().and_then(|b| b.primary_schema()) {
                wanted
                    .names
                    .extend(api.resolve(schema).properties.keys().cloned());
            }
        }
        Plan {
            sources: vec![HashMap::new(); api.operations.len()],
            produced: vec![Vec::new(); api.operations.len()],
            wanted,
        }
    }

    /// Reads the consumes and produces edges of `graph`.
    pub fn from_graph(api: &Api, graph: &PropertyGraph) -> Plan {
        let mut plan = Plan::empty(api);
        for (i, op) in api.operations.iter().enumerate() {
            let Some(ix) = graph.operation(&op.name) else {
                continue;
            };
            let mut map = std::mem::take(&mut plan.sources[i]);
            for e in graph.graph.edges_directed(ix, Direction::Incoming) {
                if e.weight().kind != EdgeKind::Consumes {
                    continue;
                }
                let schema = &graph.graph[e.source()].name;
                let active = e.weight().state == EdgeState::Active;
                if let Label::Consumes { bindings } = &e.weight().label {
                    for b in bindings {
                        if b.input.is_empty() || b.property.is_empty() {
                            continue;
                        }
                        plan.wanted
                            .properties
                            .entry(schema.clone())
                            .or_default()
                            .insert(b.property.clone());
                        map.entry((b.location, b.input.clone()))
                            .or_default()
                            .push(Source {
                                schema: schema.clone(),
                                key: format!("{schema}.{}", b.property),
                                active,
                                rank: match b.origin {
                                    Origin::Spec => 0,
                                    Origin::Inferred => 1,
                                    Origin::Observed => 2,
                                },
                                score: b.score,
                            });
                    }
                }
            }
            // What the description says first, then the best guesses; edges
            // come out of the graph newest first, which would put an
            // equivalence learnt in passing ahead of the spec.
            #[expect(
                clippy::iter_over_hash_type,
                reason = "each list is sorted on its own: the order cannot show"
            )]
            for list in map.values_mut() {
                list.sort_by(|a, b| {
                    a.rank
                        .cmp(&b.rank)
                        .then(b.score.total_cmp(&a.score))
                        .then(a.key.cmp(&b.key))
                });
            }
            plan.sources[i] = map;
            for e in graph.active_edges(ix, EdgeKind::Produces, Direction::Outgoing) {
                let schema = graph.graph[e.target()].name.clone();
                if let Label::Produces { sites } = &e.weight().label {
                    for s in sites {
                        plan.produced[i].push((schema.clone(), s.path.clone()));
                    }
                }
            }
        }
        plan
    }
}
