//! Building the initial property graph from the API model: schema and
//! operation nodes, then the edges, each kind inferred in its own module
//! ([`produces`]: which operations' answers carry which schemas;
//! [`consumes`]: which schema properties feed which inputs, found by name
//! through [`names`]; [`equivalence`]: properties that hold the same values).

mod consumes;
mod equivalence;
mod name_index;
mod produces;
#[cfg(test)]
mod tests;

use std::collections::HashSet;

use indexmap::IndexMap;

use consumes::{body_fields, consumes_edges};
use equivalence::equivalent_edges;
use name_index::NameIndex;
use produces::{produced_schemas, produces_edges};

use super::{
    Attributes, Edge, EdgeKind, EdgeState, InputAttr, Label, Node, NodeKind, OperationAttrs,
    Origin, PropertyAttr, PropertyGraph, SchemaAttrs, operation_id, schema_id,
};
use crate::model::graphql::TypeKind;
use crate::model::{Api, Location, Operation, Schema};

/// How many named schemas deep a response is searched for produced objects: the
/// returned object itself (0) and the named objects it embeds directly (1). Deeper
/// objects are reachable from the operations that return them directly; following
/// them further makes every operation of a large API produce nearly every schema.
pub(super) const MAX_NESTED_NAMED: usize = 1;

/// How deep anonymous structure (arrays, inline objects) is followed.
pub(super) const MAX_WALK_DEPTH: usize = 8;

/// At most this many schemas may feed one input at the best score; beyond that
/// the name is too common to mean anything.
pub(super) const MAX_SOURCES_PER_INPUT: usize = 4;

/// Builds the property graph of an API.
pub fn build(api: &Api) -> PropertyGraph {
    let mut g = PropertyGraph::new(&api.title, api.format);
    let node_schemas = schema_nodes(api);
    for name in &node_schemas {
        let schema = &api.schemas[name.as_str()];
        g.add_node(schema_node(name, schema));
    }
    for op in &api.operations {
        g.add_node(operation_node(api, op));
    }
    let index = NameIndex::new(api, &node_schemas);
    let produced = produced_schemas(api, &index);
    same_endpoint_edges(api, &mut g);
    produces_edges(&produced, &mut g);
    consumes_edges(api, &index, &produced, &mut g);
    equivalent_edges(api, &index, &mut g);
    g
}

/// The named schemas that become nodes: objects with properties and unions of
/// named schemas (GraphQL: object, interface and union types, not the roots).
fn schema_nodes(api: &Api) -> Vec<String> {
    if let Some(ts) = &api.graphql {
        let roots: HashSet<&str> = [&ts.query_type, &ts.mutation_type, &ts.subscription_type]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect();
        return api
            .schemas
            .keys()
            .filter(|name| {
                !roots.contains(name.as_str())
                    && ts.get(name).is_some_and(|t| {
                        matches!(
                            t.kind,
                            TypeKind::Object | TypeKind::Interface | TypeKind::Union
                        )
                    })
            })
            .cloned()
            .collect();
    }
    api.schemas
        .iter()
        .filter(|(_, s)| {
            !s.properties.is_empty()
                || (!s.alternatives.is_empty()
                    && s.alternatives.iter().all(|a| a.reference.is_some()))
        })
        .map(|(n, _)| n.clone())
        .collect()
}

fn schema_node(name: &str, schema: &Schema) -> Node {
    let properties = schema
        .properties
        .iter()
        .map(|(p, s)| PropertyAttr {
            name: p.clone(),
            ty: s.describe(),
            required: schema.required.contains(p),
        })
        .collect();
    let alternatives = schema
        .alternatives
        .iter()
        .filter_map(|a| a.reference.clone())
        .collect();
    Node {
        id: schema_id(name),
        kind: NodeKind::Schema,
        name: name.to_string(),
        attributes: Attributes::Schema(SchemaAttrs {
            properties,
            alternatives,
        }),
    }
}

fn operation_node(api: &Api, op: &Operation) -> Node {
    let mut inputs: Vec<InputAttr> = op
        .parameters
        .iter()
        .map(|p| InputAttr {
            name: p.name.clone(),
            location: p.location,
            required: p.required,
            ty: p.schema.describe(),
            learnt: None,
        })
        .collect();
    for field in body_fields(api, op) {
        inputs.push(InputAttr {
            name: field.name,
            location: Location::Body,
            required: field.required,
            ty: field.schema.describe(),
            learnt: None,
        });
    }
    Node {
        id: operation_id(&op.name),
        kind: NodeKind::Operation,
        name: op.name.clone(),
        attributes: Attributes::Operation(OperationAttrs {
            method: op.method,
            path: op.path.clone(),
            operation_id: op.operation_id.clone(),
            inputs,
            responses: op.responses.keys().cloned().collect(),
            deprecated: op.deprecated,
        }),
    }
}

fn same_endpoint_edges(api: &Api, g: &mut PropertyGraph) {
    let mut by_path: IndexMap<&str, Vec<&str>> = IndexMap::new();
    for op in &api.operations {
        if api.graphql.is_some() {
            continue;
        }
        by_path.entry(op.path.as_str()).or_default().push(&op.name);
    }
    for (path, ops) in by_path {
        for (i, a) in ops.iter().enumerate() {
            for b in &ops[i + 1..] {
                let (Some(ia), Some(ib)) = (g.operation(a), g.operation(b)) else {
                    continue;
                };
                g.add_edge(
                    ia,
                    ib,
                    Edge {
                        kind: EdgeKind::SameEndpoint,
                        label: Label::SameEndpoint {
                            path: path.to_string(),
                        },
                        origin: Origin::Spec,
                        score: 1.0,
                        evidence: Vec::new(),
                        state: EdgeState::Active,
                    },
                );
            }
        }
    }
}

/// Scores are shown with three decimals so that exports are stable across
/// platforms' floating-point formatting.
pub(super) fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
