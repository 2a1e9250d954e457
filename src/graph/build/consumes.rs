//! Consumes edges: which schema property feeds each input (path, query,
//! header and cookie parameters, body fields, GraphQL arguments and their
//! input-object fields), from OpenAPI links, then from names, scored and
//! kept when few enough share the best score.

use std::collections::{BTreeMap, HashMap, HashSet};

use petgraph::graph::NodeIndex;

use super::super::{
    Binding, Edge, EdgeKind, EdgeState, Label, NodeKind, Origin, PropertyGraph, Site,
};
use crate::model::names;
use crate::model::{Api, Location, Method, Operation, Schema, SchemaType};

use super::name_index::{Candidate, NameIndex, keep_best, name_candidates, retain_compatible};
use super::produces::Produced;
use super::round;

/// A field of a request body that can receive a value.
pub(super) struct BodyField<'a> {
    pub(super) name: String,
    pub(super) schema: &'a Schema,
    pub(super) required: bool,
    /// The named schema the field belongs to, when the body is one.
    pub(super) owner: Option<String>,
}

/// Top-level body fields, and the fields of objects nested one level down
/// (`owner.id`), leaving out read-only ones the server fills in.
pub(super) fn body_fields<'a>(api: &'a Api, op: &'a Operation) -> Vec<BodyField<'a>> {
    let Some((_, schema)) = op.request_body.as_ref().and_then(|b| b.primary_schema()) else {
        return Vec::new();
    };
    let owner = schema.reference.clone();
    let body = api.resolve(schema);
    let mut out = Vec::new();
    for (name, field) in &body.properties {
        let resolved = api.resolve(field);
        if resolved.read_only {
            continue;
        }
        out.push(BodyField {
            name: name.clone(),
            schema: field,
            required: body.required.contains(name),
            owner: owner.clone(),
        });
        if resolved.primary_type() == Some(SchemaType::Object) || !resolved.properties.is_empty() {
            for (inner, inner_schema) in &resolved.properties {
                if api.resolve(inner_schema).read_only {
                    continue;
                }
                out.push(BodyField {
                    name: format!("{name}.{inner}"),
                    schema: inner_schema,
                    required: false,
                    owner: field.reference.clone(),
                });
            }
        }
    }
    out
}

/// One input an operation takes, for binding.
pub(super) struct InputSlot<'a> {
    pub(super) location: Location,
    pub(super) name: String,
    pub(super) schema: &'a Schema,
    /// The schema this input is a field of (a body's own schema), never its source.
    pub(super) owner: Option<String>,
}

/// Bindings by (schema position, operation position), in a stable order.
type Bindings = BTreeMap<(usize, usize), Vec<Binding>>;

pub(super) fn consumes_edges(
    api: &Api,
    index: &NameIndex,
    produced: &Produced,
    g: &mut PropertyGraph,
) {
    let mut edges: Bindings = BTreeMap::new();
    let op_pos: HashMap<&str, usize> = api
        .operations
        .iter()
        .enumerate()
        .map(|(i, o)| (o.name.as_str(), i))
        .collect();

    let answered = super::produces::answered_schemas(api);
    let made: HashSet<usize> = answered
        .iter()
        .filter_map(|name| index.position(name))
        .collect();
    for (op_i, op) in api.operations.iter().enumerate() {
        body_binding(index, op, op_i, &mut edges);
        let context = op_context(api, index, op, &produced[op_i]);
        for slot in input_slots(api, op) {
            let mut best = bind_input(api, index, op, &slot, &context, &made);
            if best.is_empty() && slot.location == Location::Path {
                best = listed_by_collection(api, op, &slot.name, produced);
            }
            for c in best {
                edges.entry((c.schema, op_i)).or_default().push(Binding {
                    location: slot.location,
                    input: slot.name.clone(),
                    property: c.property,
                    origin: Origin::Inferred,
                    score: round(c.score),
                    rule: c.rule.into(),
                });
            }
        }
        link_bindings(api, index, op, &op_pos, &mut edges);
    }
    add_consumes_edges(g, edges);
}

/// A body that is a named schema (or a list of one) consumes that schema
/// whole.
fn body_binding(index: &NameIndex, op: &Operation, op_i: usize, edges: &mut Bindings) {
    if let Some((_, body)) = op.request_body.as_ref().and_then(|b| b.primary_schema()) {
        let named = body
            .reference
            .as_deref()
            .or_else(|| body.items.as_ref().and_then(|i| i.reference.as_deref()));
        if let Some(i) = named.and_then(|n| index.position(n)) {
            edges.entry((i, op_i)).or_default().push(Binding {
                location: Location::Body,
                input: String::new(),
                property: String::new(),
                origin: Origin::Spec,
                score: 1.0,
                rule: "body".into(),
            });
        }
    }
}

/// The inputs of `op` a value can be bound to: its parameters, its body
/// fields, and the fields of its object-valued parameters.
fn input_slots<'a>(api: &'a Api, op: &'a Operation) -> Vec<InputSlot<'a>> {
    let mut slots: Vec<InputSlot> = op
        .parameters
        .iter()
        .map(|p| InputSlot {
            location: p.location,
            name: p.name.clone(),
            schema: &p.schema,
            owner: None,
        })
        .collect();
    for f in body_fields(api, op) {
        slots.push(InputSlot {
            location: Location::Body,
            name: f.name,
            schema: f.schema,
            owner: f.owner,
        });
    }
    // Fields of object-valued parameters (GraphQL input objects, deepObject
    // query parameters) are inputs too: `input.authorId`.
    for p in &op.parameters {
        for (field, schema) in &api.resolve(&p.schema).properties {
            slots.push(InputSlot {
                location: p.location,
                name: format!("{}.{field}", p.name),
                schema,
                owner: p.schema.reference.clone(),
            });
        }
    }
    slots
}

/// OpenAPI links of `op`'s answers state outright which response value
/// feeds which parameter of their target: such a binding replaces one
/// inferred for the same input.
fn link_bindings(
    api: &Api,
    index: &NameIndex,
    op: &Operation,
    op_pos: &HashMap<&str, usize>,
    edges: &mut Bindings,
) {
    for (status, response) in op.success_responses() {
        for link in &response.links {
            let Some(&target_i) = op_pos.get(link.operation_id.as_str()) else {
                continue;
            };
            let target = &api.operations[target_i];
            for (param, expr) in &link.parameters {
                let Some(pointer) = expr.strip_prefix("$response.body#") else {
                    continue;
                };
                let Some((_, schema)) = response.primary_schema() else {
                    continue;
                };
                let Some((schema_i, property)) = locate_pointer(api, index, schema, pointer) else {
                    continue;
                };
                let (pname, location) = match param.split_once('.') {
                    Some((loc, name)) => (name, location_named(loc)),
                    None => (param.as_str(), None),
                };
                let location = location.or_else(|| {
                    target
                        .parameters
                        .iter()
                        .find(|p| p.name == pname)
                        .map(|p| p.location)
                });
                let Some(location) = location else { continue };
                let _ = status;
                let bindings = edges.entry((schema_i, target_i)).or_default();
                bindings.retain(|b| !(b.location == location && b.input == pname));
                bindings.push(Binding {
                    location,
                    input: pname.to_string(),
                    property,
                    origin: Origin::Spec,
                    score: 1.0,
                    rule: "link".into(),
                });
            }
        }
    }
}

/// One consumes edge per (schema, operation) with bindings, of their best
/// origin and score.
fn add_consumes_edges(g: &mut PropertyGraph, edges: Bindings) {
    let schema_nodes: Vec<NodeIndex> = g.nodes(NodeKind::Schema).collect();
    let op_nodes: Vec<NodeIndex> = g.nodes(NodeKind::Operation).collect();
    for ((schema_i, op_i), bindings) in edges {
        let origin = bindings
            .iter()
            .map(|b| b.origin)
            .min()
            .unwrap_or(Origin::Inferred);
        let score = bindings.iter().map(|b| b.score).fold(0.0, f64::max);
        g.add_edge(
            schema_nodes[schema_i],
            op_nodes[op_i],
            Edge {
                kind: EdgeKind::Consumes,
                label: Label::Consumes { bindings },
                origin,
                score,
                evidence: Vec::new(),
                state: EdgeState::Active,
            },
        );
    }
}

pub(super) fn location_named(loc: &str) -> Option<Location> {
    Some(match loc {
        "path" => Location::Path,
        "query" => Location::Query,
        "header" => Location::Header,
        "cookie" => Location::Cookie,
        _ => return None,
    })
}

/// Follows a JSON pointer into a response schema to the deepest named node schema
/// it passes through, returning that schema and the property path below it.
pub(super) fn locate_pointer(
    api: &Api,
    index: &NameIndex,
    schema: &Schema,
    pointer: &str,
) -> Option<(usize, String)> {
    let mut current = schema;
    let mut owner: Option<(usize, Vec<String>)> = None;
    let segments: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect();
    for seg in segments {
        if let Some(name) = &current.reference
            && let Some(i) = index.position(name)
        {
            owner = Some((i, Vec::new()));
        }
        let resolved = api.resolve(current);
        if let (Some(items), true) = (&resolved.items, seg.parse::<usize>().is_ok()) {
            current = items;
            continue;
        }
        current = resolved.properties.get(&seg)?;
        if let Some((_, path)) = &mut owner {
            path.push(seg);
        }
    }
    let (i, path) = owner?;
    if path.is_empty() {
        return None;
    }
    Some((i, path.join(".")))
}

/// What an operation is about: the schemas it takes as a body or returns at the
/// top of a response, and those named by the last fixed segment of its path (or,
/// for GraphQL, by the words of its field name).
pub(super) fn op_context(
    api: &Api,
    index: &NameIndex,
    op: &Operation,
    produced: &[(usize, Site, usize)],
) -> HashSet<usize> {
    let mut context = HashSet::new();
    for (schema, _, depth) in produced {
        if *depth == 0 {
            context.insert(*schema);
        }
    }
    if let Some((_, body)) = op.request_body.as_ref().and_then(|b| b.primary_schema())
        && let Some(i) = body.reference.as_deref().and_then(|n| index.position(n))
    {
        context.insert(i);
    }
    let words: Vec<String> = if api.graphql.is_some() {
        names::words(&op.path)
            .iter()
            .map(|w| names::singular(w))
            .collect()
    } else {
        names::path_resource(&op.path)
    };
    for start in 0..words.len() {
        for (i, score, _) in index.by_name(&names::join(&words[start..])) {
            if score >= 0.95 {
                context.insert(i);
            }
        }
    }
    context
}

/// The best sources for one input.
pub(super) fn bind_input(
    api: &Api,
    index: &NameIndex,
    op: &Operation,
    slot: &InputSlot,
    context: &HashSet<usize>,
    made: &HashSet<usize>,
) -> Vec<Candidate> {
    let allow_bare = slot.location == Location::Path || slot.location == Location::Argument;
    // What a request sends to be stored (body fields, mutation arguments).
    let writes = slot.location == Location::Body || op.method == Method::GraphqlMutation;
    let leaf = slot.name.rsplit('.').next().unwrap_or(&slot.name);
    let mut candidates = Vec::new();
    if slot.location == Location::Argument && slot.name.contains('.') {
        // A field of a GraphQL input object (`input.authorId`). What a mutation
        // writes is fed by an earlier answer only when it identifies an object:
        // in `addReview(review: {bookId, stars})` the argument's name is the
        // object being made and `stars` data the request sends, not
        // `Review.stars` (as a body field that is not an identifier is not fed
        // by its own resource either). A query's filter fields may be fed by
        // anything (`filter.authorUsername` ← User.username).
        let identifier = is_identifier(api, leaf, slot.schema);
        if !writes || identifier {
            // `book.id`: the leaf with the parent as its resource.
            candidates = name_candidates(api, index, &slot.name, slot.schema, false);
            // The leaf names its source by itself, like a top-level argument:
            // `input.authorId` → Author.id; a bare resource name
            // (`input.author`) only when typed as an identifier.
            candidates.extend(name_candidates(api, index, leaf, slot.schema, identifier));
        }
    } else {
        candidates = name_candidates(api, index, &slot.name, slot.schema, allow_bare);
        if slot.name.contains('.') {
            // `book.id`: also try the leaf with the parent as its resource.
            candidates.extend(name_candidates(
                api,
                index,
                &slot.name.replace('.', "_"),
                slot.schema,
                false,
            ));
        }
    }
    // Context: the same property name on a schema the operation is about.
    let key = names::key(leaf);
    let mut contextual: Vec<Candidate> = Vec::new();
    if slot.location == Location::Path {
        // `/pets/{id}`: the segment before the parameter names the resource.
        if let Some(segment) = segment_before(&op.path, &slot.name) {
            for (schema, score, _) in index.by_name(&names::key(segment)) {
                if score < 0.95 {
                    continue;
                }
                if let Some(prop) = index.property(schema, &key) {
                    contextual.push(Candidate {
                        schema,
                        property: prop.to_string(),
                        score,
                        rule: "context-name",
                    });
                }
            }
        }
    }
    // What a request sends to be stored is fed by the objects the operation
    // returns only when it names one of them (`id`): a creation's `name` is not,
    // and saying so would make every creation depend on itself.
    let mut ctx: Vec<usize> = if writes && !names::is_id_like(&key) {
        Vec::new()
    } else {
        context.iter().copied().collect()
    };
    ctx.sort_unstable();
    for schema in ctx {
        if let Some(prop) = index.property(schema, &key) {
            contextual.push(Candidate {
                schema,
                property: prop.to_string(),
                score: 0.9,
                rule: "context-name",
            });
        }
    }
    retain_compatible(api, index, slot.schema, &mut contextual);
    candidates.extend(contextual);
    // A body field is never fed by the very schema it belongs to.
    if let Some(owner) = slot.owner.as_deref().and_then(|o| index.position(o)) {
        candidates.retain(|c| c.schema != owner);
    }
    // A schema no answer holds (a request body's) has values only where the
    // client chose the new resource's identity (`name`, `slug`): its other
    // properties (`expand`, `limit`) never reach another call.
    candidates
        .retain(|c| made.contains(&c.schema) || names::is_identifying(&names::key(&c.property)));
    keep_best(candidates)
}

/// Whether an input named `name` (a leaf, no dots) and typed `ty` holds an
/// object's identity: its last word says so (`id`, `authorId`, `book_uuid`), or
/// it is a GraphQL `ID`.
pub(super) fn is_identifier(api: &Api, name: &str, ty: &Schema) -> bool {
    names::is_id_name(name)
        || ty.format.as_deref() == Some("ID")
        || api.resolve(ty).format.as_deref() == Some("ID")
}

pub(super) fn segment_before<'p>(path: &'p str, param: &str) -> Option<&'p str> {
    let needle = format!("{{{param}}}");
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let at = segments.iter().position(|s| s.contains(&needle))?;
    segments[..at]
        .iter()
        .rev()
        .find(|s| !s.contains('{'))
        .copied()
}

/// Sources for a path parameter that identifies a member of the collection
/// before it (`{id}` in `/buckets/{bucket_id}/collections/{id}`,
/// `{bucket_id}`, `{server_name}`) when no name in the description leads to
/// one: the objects the collection's listing returns (its array items),
/// read at the property the parameter's last word names, declared or not.
/// Real descriptions often leave the identity out of the objects' schemas
/// (Kinto's answers carry `id`, its description does not), and without a
/// source the parameter could only take made-up values, which name nothing.
fn listed_by_collection(
    api: &Api,
    op: &Operation,
    param: &str,
    produced: &Produced,
) -> Vec<Candidate> {
    let words = names::words(param);
    let Some(property) = words.last().filter(|w| names::is_identifying(w)) else {
        return Vec::new();
    };
    let needle = format!("{{{param}}}");
    let Some(at) = op.path.find(&needle) else {
        return Vec::new();
    };
    let collection = op.path[..at].trim_end_matches('/');
    if collection.is_empty() || collection.ends_with('}') {
        return Vec::new();
    }
    let mut out: Vec<Candidate> = Vec::new();
    for (i, other) in api.operations.iter().enumerate() {
        if other.method != Method::Get || other.path.trim_end_matches('/') != collection {
            continue;
        }
        for (schema, site, _) in &produced[i] {
            if site.path.ends_with("[*]") && !out.iter().any(|c| c.schema == *schema) {
                out.push(Candidate {
                    schema: *schema,
                    property: property.clone(),
                    score: 0.9,
                    rule: "collection-name",
                });
            }
        }
    }
    out.truncate(super::MAX_SOURCES_PER_INPUT);
    out
}
