//! Building the initial property graph from the API model.

use std::collections::{BTreeMap, HashMap, HashSet};

use indexmap::IndexMap;
use petgraph::graph::NodeIndex;

use super::{
    operation_id, schema_id, Attributes, Binding, Edge, EdgeKind, EdgeState, InputAttr, Label,
    Node, NodeKind, OperationAttrs, Origin, PropertyAttr, PropertyGraph, PropertyPair, SchemaAttrs,
    Site,
};
use crate::model::graphql::TypeKind;
use crate::model::names;
use crate::model::{Api, Location, Method, Operation, Schema, SchemaType};

/// How many named schemas deep a response is searched for produced objects: the
/// returned object itself (0) and the named objects it embeds directly (1). Deeper
/// objects are reachable from the operations that return them directly; following
/// them further makes every operation of a large API produce nearly every schema.
const MAX_NESTED_NAMED: usize = 1;

/// How deep anonymous structure (arrays, inline objects) is followed.
const MAX_WALK_DEPTH: usize = 8;

/// At most this many schemas may feed one input at the best score; beyond that
/// the name is too common to mean anything.
const MAX_SOURCES_PER_INPUT: usize = 4;

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
        })
        .collect();
    for field in body_fields(api, op) {
        inputs.push(InputAttr {
            name: field.name,
            location: Location::Body,
            required: field.required,
            ty: field.schema.describe(),
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

/// A field of a request body that can receive a value.
struct BodyField<'a> {
    name: String,
    schema: &'a Schema,
    required: bool,
    /// The named schema the field belongs to, when the body is one.
    owner: Option<String>,
}

/// Top-level body fields, and the fields of objects nested one level down
/// (`owner.id`), leaving out read-only ones the server fills in.
fn body_fields<'a>(api: &'a Api, op: &'a Operation) -> Vec<BodyField<'a>> {
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

/// Word count and the first two letters of the first and last words. Names that
/// match word for word share it: an abbreviation keeps at least three leading
/// letters of its word, and spelling variants as close as
/// [`names::FUZZY_THRESHOLD`] differ after the start. Indexing by it keeps fuzzy
/// lookups from scanning every schema (12,700 types in the AWS GraphQL schema).
type Shape = (usize, String, String);

fn shape(words: &[String]) -> Option<Shape> {
    let start = |w: &String| w.chars().take(2).collect::<String>();
    Some((words.len(), start(words.first()?), start(words.last()?)))
}

/// Schemas matched fuzzily, with their score.
type FuzzyHit = (Vec<usize>, f64);

/// One way of naming a schema: its words and the score a match on them earns.
struct NameForm {
    words: Vec<String>,
    schema: usize,
    score: f64,
    rule: &'static str,
}

/// Lookup tables from name words to schema nodes.
struct NameIndex<'a> {
    /// Node schema names, in node order.
    schemas: Vec<&'a str>,
    /// Their definitions.
    defs: Vec<&'a Schema>,
    /// Every name form of every schema.
    forms: Vec<NameForm>,
    /// Joined words of a form → forms (`pet` → Pet; `user` → UserResponse).
    by_key: HashMap<String, Vec<usize>>,
    /// Shape of a form → forms: the only ones a fuzzy match can reach ([`shape`]).
    by_shape: HashMap<Shape, Vec<usize>>,
    /// Per schema: property key → property name.
    props: Vec<HashMap<String, &'a str>>,
    /// Schema name → position.
    position: HashMap<&'a str, usize>,
    /// Fuzzy lookups already made.
    fuzzy_cache: std::cell::RefCell<HashMap<String, Option<FuzzyHit>>>,
}

impl<'a> NameIndex<'a> {
    fn new(api: &'a Api, nodes: &'a [String]) -> NameIndex<'a> {
        let mut index = NameIndex {
            schemas: Vec::new(),
            defs: Vec::new(),
            forms: Vec::new(),
            by_key: HashMap::new(),
            by_shape: HashMap::new(),
            props: Vec::new(),
            position: HashMap::new(),
            fuzzy_cache: Default::default(),
        };
        for (i, name) in nodes.iter().enumerate() {
            let def = &api.schemas[name.as_str()];
            let words = names::schema_words(name);
            let bare = names::strip_decoration(&words);
            // The whole name, then without decoration (`UserResponse` → `user`),
            // then trailing parts (`full-repository` → `repository`).
            index.add_form(words.clone(), i, 1.0, "compound-name");
            if bare.len() < words.len() {
                index.add_form(bare.clone(), i, 0.95, "compound-name");
            }
            for start in 1..bare.len() {
                index.add_form(bare[start..].to_vec(), i, 0.9, "compound-name");
            }
            index.props.push(
                def.properties
                    .keys()
                    .map(|p| (names::key(p), p.as_str()))
                    .collect(),
            );
            index.schemas.push(name);
            index.defs.push(def);
            index.position.insert(name, i);
        }
        index
    }

    fn add_form(&mut self, words: Vec<String>, schema: usize, score: f64, rule: &'static str) {
        let Some(shape) = shape(&words) else {
            return;
        };
        let id = self.forms.len();
        self.by_key.entry(names::join(&words)).or_default().push(id);
        self.by_shape.entry(shape).or_default().push(id);
        self.forms.push(NameForm {
            words,
            schema,
            score,
            rule,
        });
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.position.get(name).copied()
    }

    /// Schemas one of whose name forms is exactly `key`, each with its best score.
    fn by_name(&self, key: &str) -> Vec<(usize, f64, &'static str)> {
        let mut out: Vec<(usize, f64, &'static str)> = Vec::new();
        for &f in self.by_key.get(key).into_iter().flatten() {
            let form = &self.forms[f];
            match out.iter_mut().find(|(s, _, _)| *s == form.schema) {
                Some(existing) if existing.1 >= form.score => {}
                Some(existing) => *existing = (form.schema, form.score, form.rule),
                None => out.push((form.schema, form.score, form.rule)),
            }
        }
        out
    }

    /// The schemas whose name matches `words` word for word, allowing
    /// abbreviations and spelling variants ([`names::word_similarity`]) but not an
    /// exact match (that is [`Self::by_name`]); the best-scoring ones only.
    fn fuzzy(&self, words: &[String]) -> Option<FuzzyHit> {
        let shape = shape(words)?;
        let key = names::join(words);
        if let Some(hit) = self.fuzzy_cache.borrow().get(&key) {
            return hit.clone();
        }
        let mut best: Option<FuzzyHit> = None;
        for &f in self.by_shape.get(&shape).into_iter().flatten() {
            let form = &self.forms[f];
            if form.words == words {
                continue;
            }
            let Some(sim) = names::words_similarity(words, &form.words) else {
                continue;
            };
            let s = sim * form.score;
            match &mut best {
                Some((v, b)) if (s - *b).abs() < 1e-9 => v.push(form.schema),
                Some((_, b)) if s < *b => {}
                _ => best = Some((vec![form.schema], s)),
            }
        }
        if let Some((v, _)) = &mut best {
            v.sort_unstable();
            v.dedup();
        }
        self.fuzzy_cache.borrow_mut().insert(key, best.clone());
        best
    }

    fn property(&self, schema: usize, key: &str) -> Option<&'a str> {
        self.props[schema].get(key).copied()
    }

    /// The property an input that names the resource itself (`{repo}`) most
    /// likely means: the first identifying property whose type fits the input's
    /// exactly (a string `{repo}` is a name, not a numeric id), else the first
    /// that fits at all.
    fn identifying_property(&self, api: &Api, schema: usize, ty: &Schema) -> Option<&'a str> {
        let fit = |w: &&str| {
            let prop = self.property(schema, w)?;
            let factor = compatibility(
                api.resolve(ty),
                api.resolve(&self.defs[schema].properties[prop]),
            )?;
            Some((prop, factor))
        };
        let fits: Vec<(&'a str, f64)> = names::IDENTIFYING.iter().filter_map(fit).collect();
        fits.iter()
            .find(|(_, f)| *f >= 1.0)
            .or(fits.first())
            .map(|(p, _)| *p)
    }
}

/// A candidate source for an input.
#[derive(Clone)]
struct Candidate {
    schema: usize,
    property: String,
    score: f64,
    rule: &'static str,
}

/// Candidates for an input named `name`, typed `ty`, by name alone: `petId` →
/// Pet.id (compound), `repoId` → Repository.id (fuzzy).
fn name_candidates(
    api: &Api,
    index: &NameIndex,
    name: &str,
    ty: &Schema,
    allow_bare_resource: bool,
) -> Vec<Candidate> {
    let words: Vec<String> = names::words(name)
        .iter()
        .map(|w| names::singular(w))
        .collect();
    let mut out = Vec::new();
    // Compound: the input's words are a schema's name followed by a property's.
    for split in 1..words.len() {
        let prefix = names::join(&words[..split]);
        let rest = names::join(&words[split..]);
        for (schema, score, rule) in index.by_name(&prefix) {
            if let Some(prop) = index.property(schema, &rest) {
                out.push(Candidate {
                    schema,
                    property: prop.to_string(),
                    score,
                    rule,
                });
            }
        }
    }
    // Fuzzy: a resource word spelled differently, then an identifying word.
    let (resource, prop_word): (&[String], Option<&String>) = match words.split_last() {
        Some((last, rest)) if !rest.is_empty() && names::is_identifying(last) => (rest, Some(last)),
        _ if allow_bare_resource => (&words, None),
        _ => (&[], None),
    };
    if !resource.is_empty() {
        if let Some((schemas, score)) = index.fuzzy(resource) {
            for schema in schemas {
                let prop = match &prop_word {
                    Some(w) => index.property(schema, w),
                    None => index.identifying_property(api, schema, ty),
                };
                if let Some(prop) = prop {
                    out.push(Candidate {
                        schema,
                        property: prop.to_string(),
                        score,
                        rule: "fuzzy-name",
                    });
                }
            }
        }
        // `{pet}` or `{repo}` alone: the resource's identifying property.
        if prop_word.is_none() {
            // Only whole names: a trailing part (`type` of `CustomerType`) is too weak
            // when the input says nothing but that word.
            for (schema, score, _) in index.by_name(&names::join(resource)) {
                if score < 0.95 {
                    continue;
                }
                if let Some(prop) = index.identifying_property(api, schema, ty) {
                    out.push(Candidate {
                        schema,
                        property: prop.to_string(),
                        score: score * 0.9,
                        rule: "resource-name",
                    });
                }
            }
        }
    }
    retain_compatible(api, index, ty, &mut out);
    out
}

/// Drops candidates whose property cannot hold the input's values, and lowers the
/// score of string/number mixes (ids often travel as strings).
fn retain_compatible(api: &Api, index: &NameIndex, ty: &Schema, out: &mut Vec<Candidate>) {
    out.retain_mut(|c| {
        let prop = index.defs[c.schema]
            .properties
            .get(&c.property)
            .map(|p| api.resolve(p));
        match prop.map(|p| compatibility(api.resolve(ty), p)) {
            Some(Some(factor)) => {
                c.score *= factor;
                true
            }
            _ => false,
        }
    });
}

/// How well values of `a` fit `b`: `None` when they cannot, else a score factor.
fn compatibility(a: &Schema, b: &Schema) -> Option<f64> {
    use SchemaType::*;
    let (Some(x), Some(y)) = (a.primary_type(), b.primary_type()) else {
        // An untyped side (often a GraphQL custom scalar or a bare schema) may fit;
        // an object or array on the other side rarely does.
        let typed = a.primary_type().or(b.primary_type());
        return match typed {
            Some(Object) | Some(Array) => None,
            _ if a.reference.is_some() || b.reference.is_some() => None,
            _ => Some(1.0),
        };
    };
    match (x, y) {
        _ if x == y && x != Object && x != Array => Some(1.0),
        (Integer, Number) | (Number, Integer) => Some(1.0),
        (String, Integer) | (Integer, String) | (String, Number) | (Number, String) => Some(0.9),
        _ => None,
    }
}

/// For each operation, the named node schemas its 2xx responses carry, with where.
type Produced = Vec<Vec<(usize, Site, usize)>>;

fn produced_schemas(api: &Api, index: &NameIndex) -> Produced {
    api.operations
        .iter()
        .map(|op| {
            let mut found = Vec::new();
            for (status, response) in op.success_responses() {
                for (mime, schema) in &response.content {
                    if !crate::model::is_json_mime(mime) && response.content.len() > 1 {
                        continue;
                    }
                    let mut visiting = Vec::new();
                    let mut sites = Vec::new();
                    walk_produced(
                        api,
                        index,
                        schema,
                        "$".into(),
                        0,
                        0,
                        &mut visiting,
                        &mut sites,
                    );
                    for (schema, path, depth) in sites {
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

#[allow(clippy::too_many_arguments)]
fn walk_produced(
    api: &Api,
    index: &NameIndex,
    schema: &Schema,
    path: String,
    named_depth: usize,
    depth: usize,
    visiting: &mut Vec<String>,
    out: &mut Vec<(usize, String, usize)>,
) {
    if depth > MAX_WALK_DEPTH {
        return;
    }
    if let Some(name) = &schema.reference {
        if visiting.contains(name) {
            return;
        }
        let Some(def) = api.schemas.get(name) else {
            return;
        };
        let mut next_depth = named_depth;
        if let Some(i) = index.position(name) {
            out.push((i, path.clone(), named_depth));
            if named_depth >= MAX_NESTED_NAMED {
                return;
            }
            next_depth += 1;
        }
        visiting.push(name.clone());
        walk_produced(api, index, def, path, next_depth, depth + 1, visiting, out);
        visiting.pop();
        return;
    }
    if let Some(items) = &schema.items {
        walk_produced(
            api,
            index,
            items,
            format!("{path}[*]"),
            named_depth,
            depth + 1,
            visiting,
            out,
        );
    }
    for (name, prop) in &schema.properties {
        walk_produced(
            api,
            index,
            prop,
            format!("{path}.{name}"),
            named_depth,
            depth + 1,
            visiting,
            out,
        );
    }
    if let Some(extra) = &schema.additional_properties {
        walk_produced(
            api,
            index,
            extra,
            format!("{path}.*"),
            named_depth,
            depth + 1,
            visiting,
            out,
        );
    }
    for alt in &schema.alternatives {
        walk_produced(
            api,
            index,
            alt,
            path.clone(),
            named_depth,
            depth + 1,
            visiting,
            out,
        );
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

fn produces_edges(produced: &Produced, g: &mut PropertyGraph) {
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

/// One input an operation takes, for binding.
struct InputSlot<'a> {
    location: Location,
    name: String,
    schema: &'a Schema,
    /// The schema this input is a field of (a body's own schema), never its source.
    owner: Option<String>,
}

fn consumes_edges(api: &Api, index: &NameIndex, produced: &Produced, g: &mut PropertyGraph) {
    let schema_nodes: Vec<NodeIndex> = g.nodes(NodeKind::Schema).collect();
    // (schema position, operation name) → bindings, in a stable order.
    let mut edges: BTreeMap<(usize, usize), Vec<Binding>> = BTreeMap::new();
    let op_pos: HashMap<&str, usize> = api
        .operations
        .iter()
        .enumerate()
        .map(|(i, o)| (o.name.as_str(), i))
        .collect();

    for (op_i, op) in api.operations.iter().enumerate() {
        // A body that is a named schema consumes that schema whole.
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

        let context = op_context(api, index, op, &produced[op_i]);
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
        for slot in slots {
            let best = bind_input(api, index, op, &slot, &context);
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

        // OpenAPI links state outright which response value feeds which parameter.
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
                    let Some((schema_i, property)) = locate_pointer(api, index, schema, pointer)
                    else {
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

fn location_named(loc: &str) -> Option<Location> {
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
fn locate_pointer(
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
        if let Some(name) = &current.reference {
            if let Some(i) = index.position(name) {
                owner = Some((i, Vec::new()));
            }
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
fn op_context(
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
    if let Some((_, body)) = op.request_body.as_ref().and_then(|b| b.primary_schema()) {
        if let Some(i) = body.reference.as_deref().and_then(|n| index.position(n)) {
            context.insert(i);
        }
    }
    let words: Vec<String> = if api.graphql.is_some() {
        names::words(&op.path)
    } else {
        op.path
            .split('/')
            .rev()
            .find(|s| !s.is_empty() && !s.contains('{'))
            .map(names::words)
            .unwrap_or_default()
    };
    let words: Vec<String> = words.iter().map(|w| names::singular(w)).collect();
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
fn bind_input(
    api: &Api,
    index: &NameIndex,
    op: &Operation,
    slot: &InputSlot,
    context: &HashSet<usize>,
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
    keep_best(candidates)
}

/// Whether an input named `name` (a leaf, no dots) and typed `ty` holds an
/// object's identity: its last word says so (`id`, `authorId`, `book_uuid`), or
/// it is a GraphQL `ID`.
fn is_identifier(api: &Api, name: &str, ty: &Schema) -> bool {
    names::is_id_name(name)
        || ty.format.as_deref() == Some("ID")
        || api.resolve(ty).format.as_deref() == Some("ID")
}

/// Keeps the top-scoring candidate per schema, then the top score overall.
fn keep_best(mut candidates: Vec<Candidate>) -> Vec<Candidate> {
    candidates.sort_by(|a, b| {
        b.score
            .partial_cmp(&a.score)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.schema.cmp(&b.schema))
    });
    let Some(top) = candidates.first().map(|c| c.score) else {
        return Vec::new();
    };
    let mut seen = HashSet::new();
    candidates
        .into_iter()
        .filter(|c| (c.score - top).abs() < 1e-9 && seen.insert(c.schema))
        .take(MAX_SOURCES_PER_INPUT)
        .collect()
}

fn segment_before<'p>(path: &'p str, param: &str) -> Option<&'p str> {
    let needle = format!("{{{param}}}");
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let at = segments.iter().position(|s| s.contains(&needle))?;
    segments[..at]
        .iter()
        .rev()
        .find(|s| !s.contains('{'))
        .copied()
}

fn equivalent_edges(api: &Api, index: &NameIndex, g: &mut PropertyGraph) {
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

/// Scores are shown with three decimals so that exports are stable across
/// platforms' floating-point formatting.
fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use petgraph::visit::EdgeRef;

    const SDL: &str = r#"
type Query { book(id: ID!): Book }
type Mutation { createBook(input: BookInput!): Book!  createAuthor(name: String!): Author!  addReview(review: ReviewInput!): Review! }
type Author { id: ID! name: String! }
type Book { id: ID! title: String! author: Author! }
type Review { id: ID! stars: Int! book: Book! }
input BookInput { title: String!, authorId: ID! }
input ReviewInput { bookId: ID!, stars: Int! }
"#;

    fn graph_of(sdl: &str) -> PropertyGraph {
        let loaded = crate::spec::load_text(sdl, std::path::Path::new("t.graphql")).unwrap();
        build(&loaded.api)
    }

    /// Every consumes binding of operation `op`, as (schema, input, property, location).
    fn bindings(g: &PropertyGraph, op: &str) -> Vec<(String, String, String, Location)> {
        let node = g.operation(op).expect("operation");
        let mut out = Vec::new();
        for e in g.graph.edges_directed(node, petgraph::Direction::Incoming) {
            let Label::Consumes { bindings } = &e.weight().label else {
                continue;
            };
            for b in bindings {
                out.push((
                    g.graph[e.source()].name.clone(),
                    b.input.clone(),
                    b.property.clone(),
                    b.location,
                ));
            }
        }
        out.sort_by(|a, b| (&a.0, &a.1, &a.2).cmp(&(&b.0, &b.1, &b.2)));
        out
    }

    fn binding(schema: &str, input: &str, property: &str) -> (String, String, String, Location) {
        (
            schema.into(),
            input.into(),
            property.into(),
            Location::Argument,
        )
    }

    #[test]
    fn identifier_fields_of_graphql_input_objects_are_bound_to_their_resource() {
        let g = graph_of(SDL);
        // Named as the GraphQL search reads them: `arg.field`, as an argument.
        assert_eq!(
            bindings(&g, "Mutation.createBook"),
            [binding("Author", "input.authorId", "id")]
        );
        assert!(bindings(&g, "Mutation.addReview").contains(&binding(
            "Book",
            "review.bookId",
            "id"
        )));
        assert_eq!(
            bindings(&g, "Query.book"),
            [binding("Book", "id", "id")],
            "top-level arguments keep their binding"
        );
    }

    #[test]
    fn data_fields_a_mutation_writes_are_not_fed_from_answers() {
        let g = graph_of(SDL);
        // `review` names the object being made; `stars` is data it sends.
        assert_eq!(
            bindings(&g, "Mutation.addReview"),
            [binding("Book", "review.bookId", "id")]
        );
        let review = g.schema("Review").unwrap();
        let add = g.operation("Mutation.addReview").unwrap();
        assert!(g.find_edge(review, add, EdgeKind::Consumes).is_none());
        assert!(bindings(&g, "Mutation.createAuthor").is_empty());
    }

    #[test]
    fn graphql_input_fields_typed_id_or_named_as_an_id_are_identifiers() {
        let g = graph_of(
            r#"
type Query { reviews(filter: ReviewFilter): [Review!]! }
type Mutation { addReview(input: ReviewInput!): Review!  updateBook(input: BookPatch!): Book! }
type Author { id: ID! name: String! }
type Book { id: ID! title: String! }
type Review { id: ID! stars: Int! book: Book! }
input ReviewInput { book: ID!, stars: Int!, author_id: ID }
input BookPatch { id: ID!, title: String }
input ReviewFilter { bookTitle: String }
"#,
        );
        // A bare resource name typed `ID`, and a snake_case id.
        assert_eq!(
            bindings(&g, "Mutation.addReview"),
            [
                binding("Author", "input.author_id", "id"),
                binding("Book", "input.book", "id"),
            ]
        );
        // The object a mutation changes is named by its `id`; its title is data.
        assert_eq!(
            bindings(&g, "Mutation.updateBook"),
            [binding("Book", "input.id", "id")]
        );
        // A query's filter may be fed by any field of an earlier answer.
        assert_eq!(
            bindings(&g, "Query.reviews"),
            [binding("Book", "filter.bookTitle", "title")]
        );
    }
}
