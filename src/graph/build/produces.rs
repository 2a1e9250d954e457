//! Produces edges: which named schemas each operation's 2xx answers carry,
//! and where in them (the returned object, items of a list, objects one
//! named level down).

use indexmap::IndexMap;
use petgraph::graph::NodeIndex;

use super::super::{Edge, EdgeKind, EdgeState, Label, NodeKind, Origin, PropertyGraph, Site};
use crate::model::{Api, Schema};

use super::name_index::NameIndex;
use super::{MAX_NESTED_NAMED, MAX_WALK_DEPTH};

/// For each operation, the named node schemas its 2xx responses carry, with where.
pub(super) type Produced = Vec<Vec<(usize, Site, usize)>>;

pub(super) fn produced_schemas(api: &Api, index: &NameIndex) -> Produced {
    api.operations
        .iter()
        .map(|op| {
            let mut found = Vec::new();
            for (status, response) in op.success_responses() {
                for (mime, schema) in &response.content {
                    if !crate::model::is_json_mime(mime) && response.content.len() > 1 {
                        continue;
                    }
                    let mut walk = ProducedWalk {
                        api,
                        index,
                        visiting: Vec::new(),
                        sites: Vec::new(),
                    };
                    walk.walk(schema, "$".into(), 0, 0);
                    for (schema, path, depth) in walk.sites {
                        let site = Site {
                            status: status.clone(),
                            path,
                        };
                        if !found
                            .iter()
                            .any(|(s, x, _): &(usize, Site, usize)| *s == schema && *x == site)
                        {
                            found.push((schema, site, depth));
                        }
                    }
                    // One media type is enough: the others describe the same objects.
                    break;
                }
            }
            found
        })
        .collect()
}

/// The named schemas some 2xx answer holds, at any depth (S3's `Bucket`
/// inside `ListBucketsOutput.Buckets`): every other schema (a request
/// body's) has values only where the client sent them.
pub(super) fn answered_schemas(api: &Api) -> std::collections::HashSet<&str> {
    let mut seen = std::collections::HashSet::new();
    let mut todo: Vec<&Schema> = api
        .operations
        .iter()
        .flat_map(|op| op.success_responses())
        .flat_map(|(_, r)| r.content.values())
        .collect();
    while let Some(schema) = todo.pop() {
        if let Some(name) = &schema.reference {
            if let Some((name, def)) = api.schemas.get_key_value(name.as_str())
                && seen.insert(name.as_str())
            {
                todo.push(def);
            }
            continue;
        }
        todo.extend(schema.items.as_deref());
        todo.extend(schema.additional_properties.as_deref());
        todo.extend(schema.properties.values());
        todo.extend(schema.alternatives.iter());
    }
    seen
}

/// A walk through one answer's schema for the named node schemas it holds.
struct ProducedWalk<'a> {
    api: &'a Api,
    index: &'a NameIndex<'a>,
    /// The named schemas on the way down (a cycle guard).
    visiting: Vec<String>,
    /// What was found: the schema's node position, the path to it, and how
    /// many named levels down it is.
    sites: Vec<(usize, String, usize)>,
}

impl ProducedWalk<'_> {
    /// Walks `schema` at `path`, `named_depth` named levels and `depth`
    /// schemas below the answer.
    fn walk(&mut self, schema: &Schema, path: String, named_depth: usize, depth: usize) {
        if depth > MAX_WALK_DEPTH {
            return;
        }
        if let Some(name) = &schema.reference {
            if self.visiting.contains(name) {
                return;
            }
            let Some(def) = self.api.schemas.get(name) else {
                return;
            };
            let mut next_depth = named_depth;
            if let Some(i) = self.index.position(name) {
                self.sites.push((i, path.clone(), named_depth));
                // A body's inline objects got names only to be seen: an envelope
                // (`{data: Task}`) counts as no level, as it would inline.
                if !self.api.inline.contains_key(name) {
                    if named_depth >= MAX_NESTED_NAMED {
                        return;
                    }
                    next_depth += 1;
                }
            }
            self.visiting.push(name.clone());
            self.walk(def, path, next_depth, depth + 1);
            self.visiting.pop();
            return;
        }
        if let Some(items) = &schema.items {
            self.walk(items, format!("{path}[*]"), named_depth, depth + 1);
        }
        for (name, prop) in &schema.properties {
            self.walk(prop, format!("{path}.{name}"), named_depth, depth + 1);
        }
        if let Some(extra) = &schema.additional_properties {
            self.walk(extra, format!("{path}.*"), named_depth, depth + 1);
        }
        for alt in &schema.alternatives {
            self.walk(alt, path.clone(), named_depth, depth + 1);
        }
    }
}

pub(super) fn produces_edges(produced: &Produced, g: &mut PropertyGraph) {
    let op_nodes: Vec<NodeIndex> = g.nodes(NodeKind::Operation).collect();
    let schema_nodes: Vec<NodeIndex> = g.nodes(NodeKind::Schema).collect();
    for (op_i, sites) in produced.iter().enumerate() {
        let mut by_schema: IndexMap<usize, Vec<Site>> = IndexMap::new();
        for (schema, site, _) in sites {
            by_schema.entry(*schema).or_default().push(site.clone());
        }
        for (schema, sites) in by_schema {
            g.add_edge(
                op_nodes[op_i],
                schema_nodes[schema],
                Edge {
                    kind: EdgeKind::Produces,
                    label: Label::Produces { sites },
                    origin: Origin::Spec,
                    score: 1.0,
                    evidence: Vec::new(),
                    state: EdgeState::Active,
                },
            );
        }
    }
}
