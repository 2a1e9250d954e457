//! Equivalence edges: properties of two schemas that hold the same values
//! (`Book.authorId` and `Author.id`), inferred from names.

use std::collections::BTreeMap;

use petgraph::graph::NodeIndex;

use super::super::{
    Edge, EdgeKind, EdgeState, Label, NodeKind, Origin, PropertyGraph, PropertyPair,
};
use crate::model::{Api, SchemaType};

use super::name_index::{NameIndex, keep_best, name_candidates};
use super::round;

pub(super) fn equivalent_edges(api: &Api, index: &NameIndex, g: &mut PropertyGraph) {
    let schema_nodes: Vec<NodeIndex> = g.nodes(NodeKind::Schema).collect();
    let mut pairs: BTreeMap<(usize, usize), Vec<PropertyPair>> = BTreeMap::new();
    for (a, def) in index.defs.iter().enumerate() {
        for (prop, schema) in &def.properties {
            let resolved = api.resolve(schema);
            if !matches!(
                resolved.primary_type(),
                Some(SchemaType::String | SchemaType::Integer | SchemaType::Number) | None
            ) || schema.reference.is_some()
            {
                continue;
            }
            let mut candidates = name_candidates(api, index, prop, schema, false);
            candidates.retain(|c| c.schema != a);
            for c in keep_best(candidates) {
                // Stored from the node with the smaller id, like the edge itself.
                let (key, pair) = if index.schemas[a] <= index.schemas[c.schema] {
                    (
                        (a, c.schema),
                        PropertyPair {
                            source: prop.clone(),
                            target: c.property,
                            score: round(c.score),
                            rule: c.rule.into(),
                            values: None,
                            passes: None,
                            candidate: false,
                        },
                    )
                } else {
                    (
                        (c.schema, a),
                        PropertyPair {
                            source: c.property,
                            target: prop.clone(),
                            score: round(c.score),
                            rule: c.rule.into(),
                            values: None,
                            passes: None,
                            candidate: false,
                        },
                    )
                };
                let list = pairs.entry(key).or_default();
                if !list
                    .iter()
                    .any(|p| p.source == pair.source && p.target == pair.target)
                {
                    list.push(pair);
                }
            }
        }
    }
    for ((a, b), pairs) in pairs {
        let score = pairs.iter().map(|p| p.score).fold(0.0, f64::max);
        g.add_edge(
            schema_nodes[a],
            schema_nodes[b],
            Edge {
                kind: EdgeKind::Equivalent,
                label: Label::Equivalent { pairs },
                origin: Origin::Inferred,
                score,
                evidence: Vec::new(),
                state: EdgeState::Active,
            },
        );
    }
}
