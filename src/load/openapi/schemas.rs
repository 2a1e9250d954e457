//! The schemas of a document: each schema object converted once, named
//! definitions (and `$ref` targets that can recur) as named schemas,
//! `allOf` merged, `oneOf`/`anyOf` kept as alternatives, 3.0 and 3.1
//! nullability read alike.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::Converter;
use super::MAX_INLINE_DEPTH;
use super::file_stem;
use super::string_list;
use crate::load::document::{DocId, DocSet, Target, escape_pointer};
use crate::model::{Method, Schema, SchemaType};

impl<'a> Converter<'a> {
    /// Where `$ref` `r` (written at `pointer` of `doc`) leads; when nowhere,
    /// a warning there saying why, followed by `consequence`.
    fn target_or_warn(
        &mut self,
        doc: DocId,
        r: &str,
        pointer: &str,
        consequence: &str,
    ) -> Option<Target> {
        let target = self.docs.target(doc, r);
        if target.is_none() {
            let why = self.docs.unresolvable(doc, r);
            self.warn(doc, format!("#{pointer}"), format!("{why}{consequence}"));
        }
        target
    }

    pub(super) fn register_named(&mut self, target: Target, name: String) -> String {
        if let Some(existing) = self.named.get(&target) {
            return existing.clone();
        }
        // Two files may both define `Error`: the second becomes `Error_2`.
        let mut unique = name.clone();
        let mut n = 2;
        while self.schemas.contains_key(&unique) {
            unique = format!("{name}_{n}");
            n += 1;
        }
        self.schemas.insert(unique.clone(), Schema::default());
        self.named.insert(target.clone(), unique.clone());
        self.pending.push((target, unique.clone()));
        unique
    }

    /// Converts a schema at the top of a parameter, body or response.
    pub(super) fn schema_root(&mut self, doc: DocId, value: &Value, pointer: &str) -> Schema {
        let mut visiting = Vec::new();
        self.schema(doc, value, pointer, 0, &mut visiting)
    }

    /// Converts the schema at `pointer`. A place that `$ref`s elsewhere point at,
    /// and that is converted under a name of its own, becomes a reference to that
    /// name here too, so that its owner and its referrers share one schema.
    pub(super) fn schema(
        &mut self,
        doc: DocId,
        value: &Value,
        pointer: &str,
        depth: usize,
        visiting: &mut Vec<Target>,
    ) -> Schema {
        // The pointer is a location for messages; only a value read from that very
        // place is the target (a response reached through `$ref` keeps the
        // operation's pointer).
        if self
            .ref_targets
            .get(&doc)
            .is_some_and(|ps| ps.contains(pointer))
            && self
                .docs
                .get(doc, pointer)
                .is_some_and(|v| std::ptr::eq(v, value))
        {
            let target = Target {
                doc,
                pointer: pointer.to_string(),
            };
            if let Some(name) = self.pointer_target_name(&target) {
                return Schema::named(name);
            }
        }
        self.schema_body(doc, value, pointer, depth, visiting)
    }

    /// The name under which a `$ref` target that is not a named definition is
    /// converted, or `None` when it is inlined at each reference instead.
    ///
    /// A target that refers by pointer to another target that refers on is
    /// named: inlining it copies everything it reaches, once per path through the
    /// references, which is factorial in a mesh of them and infinite in a cycle.
    /// Any other target costs no more than its own text and that of the small
    /// targets it names (`#/definitions/Pet/properties/id`, a `type: integer`),
    /// and keeps its shape at every use, as it always did.
    pub(super) fn pointer_target_name(&mut self, target: &Target) -> Option<String> {
        if let Some(name) = self.named.get(target) {
            return Some(name.clone());
        }
        if !self.is_shared(target) {
            return None;
        }
        let name = pointer_schema_name(self.docs, target);
        Some(self.register_named(target.clone(), name))
    }

    /// Whether the schema at `target` refers, in its own structure, to a pointer
    /// target that is not a leaf. A target that is only a `$ref` is followed
    /// instead: its target decides.
    pub(super) fn is_shared(&mut self, target: &Target) -> bool {
        if let Some(&shared) = self.shared.get(target) {
            return shared;
        }
        let docs = self.docs;
        let shared = docs.get(target.doc, &target.pointer).is_some_and(|v| {
            v.get("$ref").is_none()
                && pointer_refs(docs, target.doc, v, 0, &mut |t| !self.is_leaf(t))
        });
        self.shared.insert(target.clone(), shared);
        shared
    }

    /// Whether the schema at `target` holds no pointer `$ref` at all, so that
    /// inlining it copies its own text and nothing more.
    pub(super) fn is_leaf(&mut self, target: &Target) -> bool {
        if let Some(&leaf) = self.leaf.get(target) {
            return leaf;
        }
        let leaf = !self
            .docs
            .get(target.doc, &target.pointer)
            .is_some_and(|v| pointer_refs(self.docs, target.doc, v, 0, &mut |_| true));
        self.leaf.insert(target.clone(), leaf);
        leaf
    }

    /// Converts one schema object in place. `visiting` holds the inline `$ref`
    /// targets being expanded, so that recursion through them stops.
    pub(super) fn schema_body(
        &mut self,
        doc: DocId,
        value: &Value,
        pointer: &str,
        depth: usize,
        visiting: &mut Vec<Target>,
    ) -> Schema {
        let Some(obj) = value.as_object() else {
            // `true`/`{}` mean anything; `false` means nothing, which we cannot use.
            return Schema::default();
        };
        if depth > MAX_INLINE_DEPTH {
            self.warn(
                doc,
                format!("#{pointer}"),
                "schema nested too deeply; cut off here",
            );
            return Schema::default();
        }
        if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
            return self.ref_schema(doc, obj, r, pointer, depth, visiting);
        }
        let nullable = obj.get("nullable").and_then(Value::as_bool) == Some(true)
            || obj.get("x-nullable").and_then(Value::as_bool) == Some(true);
        let mut s = keywords(obj);
        self.subschemas(&mut s, doc, obj, pointer, depth, visiting);
        if s.types.is_empty() {
            if !s.properties.is_empty() || s.additional_properties.is_some() {
                s.types.push(SchemaType::Object);
            } else if s.items.is_some() {
                s.types.push(SchemaType::Array);
            }
        }
        // `nullable` next to `oneOf`/`anyOf` allows null besides the members.
        let typed = !s.types.is_empty() || !s.alternatives.is_empty();
        if nullable && typed && !s.types.contains(&SchemaType::Null) {
            s.types.push(SchemaType::Null);
        }
        self.check_bounds(doc, obj, pointer, s)
    }

    /// `s` with bounds no value can satisfy taken off, each remembered at
    /// its place (its owner, a parameter or a property, is then left out
    /// with a warning); and a warning where a length or a count is past
    /// what generation makes.
    fn check_bounds(
        &mut self,
        doc: DocId,
        obj: &Map<String, Value>,
        pointer: &str,
        mut s: Schema,
    ) -> Schema {
        use crate::model::{MAX_GENERATED_ITEMS, MAX_GENERATED_LENGTH};
        let no_items = obj.get("items") == Some(&Value::Bool(false))
            && obj.get("prefixItems").is_none()
            && s.min_items.is_some_and(|n| n > 0);
        let why = s.contradiction().or_else(|| {
            no_items.then(|| {
                format!(
                    "minItems {} with `items: false`, which allows no item",
                    s.min_items.unwrap_or_default()
                )
            })
        });
        if let Some(why) = why {
            s = s.without_contradiction();
            if no_items {
                s.min_items = None;
            }
            self.impossible
                .entry((doc, pointer.to_string()))
                .or_insert(why);
        }
        if let Some(n) = s.min_length.filter(|n| *n > MAX_GENERATED_LENGTH) {
            self.warn(
                doc,
                format!("#{pointer}"),
                format!("minLength {n} is past the longest string generated ({MAX_GENERATED_LENGTH} characters): values are cut there, and are too short"),
            );
        }
        if let Some(n) = s.min_items.filter(|n| *n > MAX_GENERATED_ITEMS) {
            self.warn(
                doc,
                format!("#{pointer}"),
                format!("minItems {n} is past the most items generated ({MAX_GENERATED_ITEMS}): arrays are cut there, and are too short"),
            );
        }
        s
    }

    /// A schema that is a `$ref` to `r`: a reference to the name its target
    /// is converted under, else the target converted in place (a cycle of
    /// bare `$ref`s, or one that leads nowhere, reads as any value).
    fn ref_schema(
        &mut self,
        doc: DocId,
        obj: &Map<String, Value>,
        r: &str,
        pointer: &str,
        depth: usize,
        visiting: &mut Vec<Target>,
    ) -> Schema {
        let Some(target) = self.target_or_warn(doc, r, pointer, "; the schema is treated as `any`")
        else {
            return Schema::default();
        };
        let name = match named_schema_name(self.docs, &target) {
            Some(name) => Some(self.register_named(target.clone(), name)),
            None => self.pointer_target_name(&target),
        };
        if let Some(name) = name {
            let mut s = Schema::named(name);
            // 3.1 allows siblings of $ref; a description is all we keep.
            s.description = obj
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_string);
            return s;
        }
        if visiting.contains(&target) {
            // Only `$ref`s that are nothing else come back here (a target
            // with a shape of its own that recurs is named): a cycle.
            self.warn(
                doc,
                format!("#{pointer}"),
                format!("`$ref` cycle through {r}: the references only lead to each other and never to a shape; read as any JSON value"),
            );
            return Schema::default();
        }
        let Some(inner) = self.docs.get(target.doc, &target.pointer) else {
            return Schema::default();
        };
        visiting.push(target.clone());
        let s = self.schema_body(target.doc, inner, &target.pointer, depth + 1, visiting);
        visiting.pop();
        s
    }

    /// Converts the subschemas of `obj` into `s`: items, properties,
    /// additional properties, `oneOf`/`anyOf` alternatives, and `allOf`
    /// members merged in.
    fn subschemas(
        &mut self,
        s: &mut Schema,
        doc: DocId,
        obj: &Map<String, Value>,
        pointer: &str,
        depth: usize,
        visiting: &mut Vec<Target>,
    ) {
        if let Some(items) = obj.get("items") {
            let it = self.schema(doc, items, &format!("{pointer}/items"), depth + 1, visiting);
            s.items = Some(Box::new(it));
        }
        let mut left_out = Vec::new();
        if let Some(Value::Object(props)) = obj.get("properties") {
            for (name, p) in props {
                let ploc = format!("{pointer}/properties/{}", escape_pointer(name));
                let ps = self.schema(doc, p, &ploc, depth + 1, visiting);
                if let Some(why) = self.impossible.shift_remove(&(doc, ploc.clone())) {
                    self.warn(
                        doc,
                        format!("#{ploc}"),
                        format!("{why}: no value satisfies it; property {name:?} left out"),
                    );
                    left_out.push(name.clone());
                    continue;
                }
                s.properties.insert(name.clone(), ps);
            }
        }
        s.required = string_list(obj.get("required"));
        s.required.retain(|r| !left_out.contains(r));
        if let Some(ap) = obj.get("additionalProperties")
            && ap.is_object()
        {
            let aps = self.schema(
                doc,
                ap,
                &format!("{pointer}/additionalProperties"),
                depth + 1,
                visiting,
            );
            s.additional_properties = Some(Box::new(aps));
        }
        for (key, exclusive) in [("oneOf", true), ("anyOf", false)] {
            if let Some(Value::Array(alts)) = obj.get(key) {
                for (i, a) in alts.iter().enumerate() {
                    let aloc = format!("{pointer}/{key}/{i}");
                    let alt = self.schema(doc, a, &aloc, depth + 1, visiting);
                    s.alternatives.push(alt);
                }
                s.exclusive_alternatives |= exclusive;
            }
        }
        if let Some(Value::Array(parts)) = obj.get("allOf") {
            for (i, part) in parts.iter().enumerate() {
                let ploc = format!("{pointer}/allOf/{i}");
                let merged = self.all_of_member(doc, part, &ploc, depth + 1, visiting);
                merge_into(s, merged);
            }
        }
    }

    /// An `allOf` member is merged into its parent, so a reference to a named schema
    /// is expanded here rather than kept as a reference.
    pub(super) fn all_of_member(
        &mut self,
        doc: DocId,
        value: &Value,
        pointer: &str,
        depth: usize,
        visiting: &mut Vec<Target>,
    ) -> Schema {
        let Some(r) = value.get("$ref").and_then(Value::as_str) else {
            // In place even where pointers elsewhere name it: a reference would
            // merge as nothing.
            return self.schema_body(doc, value, pointer, depth, visiting);
        };
        let Some(target) =
            self.target_or_warn(doc, r, pointer, " (in allOf); that part is left out")
        else {
            return Schema::default();
        };
        // Make sure the named schema itself also exists in the model.
        let named = match named_schema_name(self.docs, &target) {
            Some(name) => {
                self.register_named(target.clone(), name);
                true
            }
            None => self.pointer_target_name(&target).is_some(),
        };
        if visiting.contains(&target) {
            return Schema::default();
        }
        if named && let Some(Some(s)) = self.expanded.get(&target) {
            return s.clone();
        }
        let Some(inner) = self.docs.get(target.doc, &target.pointer) else {
            return Schema::default();
        };
        visiting.push(target.clone());
        let s = self.schema_body(target.doc, inner, &target.pointer, depth, visiting);
        visiting.pop();
        // A named schema that merges others in turn is expanded at most twice:
        // expanding it at every use costs one copy per path through the
        // `allOf`s, which is factorial in a mesh of them. It is kept from its
        // second use on, so that one merged only once (large ones in OpenAI's
        // description) is not kept for nothing; one that merges nothing
        // (`String` in most properties of the AWS descriptions) is cheaper
        // converted again than kept. Only a cycle of `allOf`s, which no value
        // can satisfy anyway, makes the expansion depend on where it was first
        // met.
        if named && merges_references(inner) {
            let keep = self.expanded.contains_key(&target).then(|| s.clone());
            self.expanded.insert(target, keep);
        }
        s
    }
}

/// A schema object's own keywords (types, format, values, bounds, flags,
/// description, discriminator), its subschemas left out.
fn keywords(obj: &Map<String, Value>) -> Schema {
    let mut s = Schema::default();
    match obj.get("type") {
        Some(Value::String(t)) => s.types.extend(SchemaType::parse(t)),
        Some(Value::Array(ts)) => {
            s.types.extend(
                ts.iter()
                    .filter_map(Value::as_str)
                    .filter_map(SchemaType::parse),
            );
        }
        _ => {}
    }
    // Swagger's `file` type is a binary string for every purpose we have.
    if obj.get("type").and_then(Value::as_str) == Some("file") {
        s.types = vec![SchemaType::String];
        s.format = Some("binary".into());
    }
    if let Some(f) = obj.get("format").and_then(Value::as_str) {
        s.format = Some(f.to_string());
    }
    if let Some(Value::Array(e)) = obj.get("enum") {
        s.enum_values = e.clone();
    }
    if let Some(c) = obj.get("const") {
        s.enum_values = vec![c.clone()];
    }
    s.default = obj.get("default").cloned();
    if let Some(e) = obj.get("example") {
        s.examples.push(e.clone());
    }
    if let Some(Value::Array(es)) = obj.get("examples") {
        s.examples.extend(es.iter().cloned());
    }
    s.minimum = obj.get("minimum").and_then(Value::as_f64);
    s.maximum = obj.get("maximum").and_then(Value::as_f64);
    // 3.0 writes exclusiveMinimum as a flag beside minimum; 3.1 as the bound.
    match obj.get("exclusiveMinimum") {
        Some(Value::Bool(b)) => s.exclusive_minimum = *b,
        Some(v) if v.is_number() => {
            s.minimum = v.as_f64();
            s.exclusive_minimum = true;
        }
        _ => {}
    }
    match obj.get("exclusiveMaximum") {
        Some(Value::Bool(b)) => s.exclusive_maximum = *b,
        Some(v) if v.is_number() => {
            s.maximum = v.as_f64();
            s.exclusive_maximum = true;
        }
        _ => {}
    }
    s.multiple_of = obj.get("multipleOf").and_then(Value::as_f64);
    s.min_length = obj.get("minLength").and_then(Value::as_u64);
    s.max_length = obj.get("maxLength").and_then(Value::as_u64);
    s.pattern = obj
        .get("pattern")
        .and_then(Value::as_str)
        .map(str::to_string);
    s.min_items = obj.get("minItems").and_then(Value::as_u64);
    s.max_items = obj.get("maxItems").and_then(Value::as_u64);
    s.unique_items = obj.get("uniqueItems").and_then(Value::as_bool) == Some(true);
    s.read_only = obj.get("readOnly").and_then(Value::as_bool) == Some(true);
    s.write_only = obj.get("writeOnly").and_then(Value::as_bool) == Some(true);
    s.description = obj
        .get("description")
        .and_then(Value::as_str)
        .map(str::to_string);
    s.discriminator = match obj.get("discriminator") {
        Some(Value::String(p)) => Some(p.clone()),
        Some(d) => d
            .get("propertyName")
            .and_then(Value::as_str)
            .map(str::to_string),
        None => None,
    };
    s
}

/// Merges an `allOf` member into the schema being built.
pub(super) fn merge_into(into: &mut Schema, from: Schema) {
    if into.types.is_empty() {
        into.types = from.types;
    } else if !from.types.is_empty() {
        // Both constrain the type: the value must satisfy both.
        let both: Vec<SchemaType> = into
            .types
            .iter()
            .copied()
            .filter(|t| from.allows(*t))
            .collect();
        if !both.is_empty() {
            into.types = both;
        }
    }
    for (k, v) in from.properties {
        into.properties.entry(k).or_insert(v);
    }
    for r in from.required {
        if !into.required.contains(&r) {
            into.required.push(r);
        }
    }
    macro_rules! take_if_none {
        ($($f:ident),*) => { $( if into.$f.is_none() { into.$f = from.$f; } )* };
    }
    take_if_none!(
        format,
        default,
        minimum,
        maximum,
        multiple_of,
        min_length,
        max_length,
        pattern,
        min_items,
        max_items,
        items,
        additional_properties,
        discriminator,
        description
    );
    if into.enum_values.is_empty() {
        into.enum_values = from.enum_values;
    }
    into.examples.extend(from.examples);
    into.alternatives.extend(from.alternatives);
    into.exclusive_alternatives |= from.exclusive_alternatives;
    into.exclusive_minimum |= from.exclusive_minimum;
    into.exclusive_maximum |= from.exclusive_maximum;
    into.read_only |= from.read_only;
    into.write_only |= from.write_only;
    into.unique_items |= from.unique_items;
}

/// The name a `$ref` target gets as a named schema, or `None` when the target is a
/// piece of some other structure and should be inlined.
pub(super) fn named_schema_name(docs: &DocSet, target: &Target) -> Option<String> {
    let segments: Vec<&str> = target.pointer.split('/').skip(1).collect();
    let unescape = |s: &str| s.replace("~1", "/").replace("~0", "~");
    match segments.as_slice() {
        ["components", "schemas", name] | ["definitions", name] => Some(unescape(name)),
        // A whole external file, or a top-level entry of one (`defs.yaml#/Pet`).
        [] if target.doc != 0 => Some(file_stem(docs.path(target.doc))),
        [name] if target.doc != 0 => Some(unescape(name)),
        _ => None,
    }
}

/// Whether the schema `v` (in document `doc`), itself or among the subschemas the
/// converter reads, holds a `$ref` to a place that is not a named definition and
/// for which `hit` says yes.
pub(super) fn pointer_refs(
    docs: &DocSet,
    doc: DocId,
    v: &Value,
    depth: usize,
    hit: &mut dyn FnMut(&Target) -> bool,
) -> bool {
    let Some(obj) = v.as_object() else {
        return false;
    };
    if depth > MAX_INLINE_DEPTH {
        // Structure this deep is cut off anyway; a name converts it once.
        return true;
    }
    if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
        return docs
            .target(doc, r)
            .is_some_and(|t| named_schema_name(docs, &t).is_none() && hit(&t));
    }
    let mut children: Vec<&Value> = Vec::new();
    children.extend(obj.get("items"));
    children.extend(obj.get("additionalProperties"));
    if let Some(Value::Object(props)) = obj.get("properties") {
        children.extend(props.values());
    }
    for key in ["allOf", "oneOf", "anyOf"] {
        if let Some(Value::Array(members)) = obj.get(key) {
            children.extend(members);
        }
    }
    children
        .into_iter()
        .any(|child| pointer_refs(docs, doc, child, depth + 1, hit))
}

/// Whether a schema merges a `$ref` through its `allOf`.
pub(super) fn merges_references(v: &Value) -> bool {
    matches!(v.get("allOf"), Some(Value::Array(members)) if members.iter().any(|m| m.get("$ref").is_some()))
}

/// Every place that some `$ref`, in any document of the set, points at and that
/// is not a named definition, by document.
pub(super) fn pointer_ref_targets(docs: &DocSet) -> HashMap<DocId, HashSet<String>> {
    let mut out: HashMap<DocId, HashSet<String>> = HashMap::new();
    for (id, doc) in docs.docs.iter().enumerate() {
        let mut refs = HashSet::new();
        collect_refs(&doc.value, &mut refs);
        #[expect(
            clippy::iter_over_hash_type,
            reason = "each target goes into a set: the order cannot show"
        )]
        for r in refs {
            if let Some(t) = docs.target(id, r)
                && named_schema_name(docs, &t).is_none()
            {
                out.entry(t.doc).or_default().insert(t.pointer);
            }
        }
    }
    out
}

pub(super) fn collect_refs<'v>(v: &'v Value, out: &mut HashSet<&'v str>) {
    match v {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get("$ref") {
                out.insert(r);
            }
            for child in map.values() {
                collect_refs(child, out);
            }
        }
        Value::Array(items) => {
            for child in items {
                collect_refs(child, out);
            }
        }
        _ => {}
    }
}

/// A readable name for a `$ref` target that is not a named definition, from its
/// place: `Root.n1` for `#/definitions/Root/properties/n1`, `Pet.items`,
/// `Pet.allOf[0]`, `listPets.200` for the schema of that operation's response.
/// Keywords that only lead to a schema (`content/<mime>`, `schema`) are left out.
/// Not necessarily unique: [`Converter::register_named`] makes it so.
pub(super) fn pointer_schema_name(docs: &DocSet, target: &Target) -> String {
    let segments: Vec<String> = target
        .pointer
        .split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect();
    let is_keyword = |s: &str| {
        matches!(
            s,
            "properties" | "items" | "additionalProperties" | "allOf" | "oneOf" | "anyOf"
        )
    };
    let mut parts: Vec<String> = Vec::new();
    let rest: &[String] = match segments.as_slice() {
        [c, _kind, name, rest @ ..] if c == "components" => {
            parts.push(name.clone());
            rest
        }
        [p, path, method, rest @ ..] if p == "paths" && Method::from_http(method).is_some() => {
            let op = docs
                .get(
                    target.doc,
                    &format!("/paths/{}/{method}", escape_pointer(path)),
                )
                .and_then(|op| op.get("operationId"))
                .and_then(Value::as_str);
            parts.push(match op {
                Some(id) => id.to_string(),
                None => format!("{} {path}", method.to_uppercase()),
            });
            rest
        }
        [p, path, rest @ ..] if p == "paths" => {
            parts.push(path.clone());
            rest
        }
        [first, name, rest @ ..]
            if matches!(first.as_str(), "definitions" | "parameters" | "responses") =>
        {
            parts.push(name.clone());
            rest
        }
        [first, rest @ ..] if !is_keyword(first) => {
            parts.push(first.clone());
            rest
        }
        all => {
            parts.push(file_stem(docs.path(target.doc)));
            all
        }
    };
    let mut i = 0;
    while i < rest.len() {
        let seg = rest[i].as_str();
        let next = rest.get(i + 1);
        match seg {
            "properties" | "responses" if next.is_some() => {
                parts.push(next.cloned().unwrap_or_default());
                i += 2;
            }
            "allOf" | "oneOf" | "anyOf" | "parameters" if next.is_some() => {
                parts.push(format!("{seg}[{}]", next.map_or("", String::as_str)));
                i += 2;
            }
            "content" if next.is_some() => i += 2,
            "schema" => i += 1,
            "requestBody" => {
                parts.push("body".into());
                i += 1;
            }
            _ => {
                parts.push(seg.to_string());
                i += 1;
            }
        }
    }
    parts.join(".")
}
