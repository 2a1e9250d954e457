//! Swagger 2.0 and OpenAPI 3.0/3.1 documents into the API model.
//!
//! One tolerant walker over JSON values serves all three versions: they share
//! most of their vocabulary, and a typed parser for each (such as `openapiv3`)
//! rejects a whole document for one bad field, while users need every operation
//! that can be read. The document's frame (version, servers, naming) is read
//! here, its operations in [`operations`], its schemas in [`schemas`].

use std::collections::{HashMap, HashSet};
use std::path::Path;

use indexmap::IndexMap;
use serde_json::{Map, Value};

mod inline;
mod operations;
mod schemas;
mod security;
#[cfg(test)]
mod tests;

use super::document::{DocId, DocSet, Target, escape_pointer};
use super::{Loaded, SpecError, Warning};
use crate::model::{Api, Method, Operation, Schema, SourceDocument, SpecFormat, Webhook};
use operations::MediaDefaults;
use schemas::pointer_ref_targets;

/// Nesting depth past which inline schemas are cut off. A `$ref` that could recur
/// becomes a named schema (see [`Converter::pointer_target_name`]), so only
/// structure nested this deep in the document itself reaches it.
pub(super) const MAX_INLINE_DEPTH: usize = 40;

/// Loads a parsed Swagger/OpenAPI document; its `$ref`s read files only
/// inside `within`, when given (see [`DocSet::load`]).
pub(super) fn load(root: Value, path: &Path, within: Option<&Path>) -> Result<Loaded, SpecError> {
    let format = detect_version(&root, path)?;
    if !root.is_object() {
        return Err(SpecError::new(path, "the document is not a JSON/YAML mapping").at("#/"));
    }
    let mut docs = DocSet::load(root, path, within);
    let ref_targets = pointer_ref_targets(&docs);
    let mut cx = Converter {
        docs: &docs,
        format,
        schemas: IndexMap::new(),
        named: HashMap::new(),
        pending: Vec::new(),
        ref_targets,
        shared: HashMap::new(),
        leaf: HashMap::new(),
        expanded: HashMap::new(),
        warnings: Vec::new(),
        warned: HashSet::new(),
        why_empty: None,
        impossible: IndexMap::new(),
    };
    let mut api = cx.convert_api()?;
    // Bounds at odds where no parameter or property could be left out.
    for ((doc, pointer), why) in std::mem::take(&mut cx.impossible) {
        cx.warn(
            doc,
            format!("#{pointer}"),
            format!("{why}: no value satisfies it; the bounds are ignored"),
        );
    }
    let mut warnings = cx.warnings;
    warnings.dedup();
    let why_empty = cx.why_empty;
    // Kept, not copied: findings point back into it, the spec fixes change it.
    api.document = Some(SourceDocument::new(std::mem::take(&mut docs.docs[0].value)));
    Ok(Loaded {
        api,
        warnings,
        why_empty,
    })
}

pub(super) fn detect_version(root: &Value, path: &Path) -> Result<SpecFormat, SpecError> {
    let version_of = |key: &str| -> Option<String> {
        root.get(key).map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    };
    if let Some(v) = version_of("openapi") {
        if v.starts_with("3.0") {
            return Ok(SpecFormat::OpenApi30);
        }
        if v.starts_with("3.1") {
            return Ok(SpecFormat::OpenApi31);
        }
        if v.starts_with('3') {
            // A later 3.x is closest to 3.1.
            return Ok(SpecFormat::OpenApi31);
        }
        return Err(
            SpecError::new(path, format!("unsupported OpenAPI version {v:?}"))
                .at("#/openapi")
                .hint("Cartograph reads Swagger 2.0 and OpenAPI 3.0 and 3.1"),
        );
    }
    if let Some(v) = version_of("swagger") {
        if v.starts_with('2') {
            return Ok(SpecFormat::Swagger2);
        }
        return Err(
            SpecError::new(path, format!("unsupported Swagger version {v:?}"))
                .at("#/swagger")
                .hint("Cartograph reads Swagger 2.0 and OpenAPI 3.0 and 3.1"),
        );
    }
    Err(SpecError::new(path, "no `openapi` or `swagger` version field").at("#/"))
}

pub(super) struct Converter<'a> {
    pub(super) docs: &'a DocSet,
    pub(super) format: SpecFormat,
    pub(super) schemas: IndexMap<String, Schema>,
    /// Where each named schema lives → its name.
    pub(super) named: HashMap<Target, String>,
    /// Named schemas referenced but not yet converted.
    pub(super) pending: Vec<(Target, String)>,
    /// Per document, the pointers that some `$ref` targets which are not named
    /// definitions (`/definitions/Root/properties/n1`).
    pub(super) ref_targets: HashMap<DocId, HashSet<String>>,
    /// Whether a pointer target is converted once under a name of its own rather
    /// than inlined at every reference ([`Converter::is_shared`]).
    pub(super) shared: HashMap<Target, bool>,
    /// Whether a pointer target holds no pointer `$ref`s ([`Converter::is_leaf`]).
    pub(super) leaf: HashMap<Target, bool>,
    /// Named targets as merged into an `allOf`: `None` once expanded, the
    /// expansion to copy from the second time on.
    pub(super) expanded: HashMap<Target, Option<Schema>>,
    pub(super) warnings: Vec<Warning>,
    /// (file, location) pairs already warned about, so each skipped part warns once.
    pub(super) warned: HashSet<(DocId, String)>,
    /// Why `paths` gave no operation, when it gave none.
    pub(super) why_empty: Option<String>,
    /// Schemas whose bounds no value satisfies, by place, and why; their
    /// owner (a parameter, a property) takes them out and warns.
    pub(super) impossible: IndexMap<(DocId, String), String>,
}

/// Why an operation could not be loaded.
pub(super) struct Skip(String);

impl<'a> Converter<'a> {
    pub(super) fn root(&self) -> &'a Map<String, Value> {
        self.docs.docs[0]
            .value
            .as_object()
            .expect("checked to be an object in load")
    }

    pub(super) fn warn(
        &mut self,
        doc: DocId,
        location: impl Into<String>,
        message: impl Into<String>,
    ) {
        let location = location.into();
        if self.warned.insert((doc, location.clone())) {
            self.warnings.push(Warning {
                file: self.docs.path(doc).to_path_buf(),
                location,
                message: message.into(),
            });
        }
    }

    pub(super) fn convert_api(&mut self) -> Result<Api, SpecError> {
        let root = self.root();
        let info = root.get("info");
        let title = info
            .and_then(|i| i.get("title"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| file_stem(self.docs.path(0)));
        let version = info
            .and_then(|i| i.get("version"))
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string));

        // Register component schemas first so they keep document order and their
        // own names even when first met through a reference elsewhere.
        let container = if self.format == SpecFormat::Swagger2 {
            "/definitions"
        } else {
            "/components/schemas"
        };
        if let Some(Value::Object(defs)) = self.docs.get(0, container) {
            for name in defs.keys() {
                let target = Target {
                    doc: 0,
                    pointer: format!("{container}/{}", escape_pointer(name)),
                };
                self.register_named(target, name.clone());
            }
        }

        let servers = self.servers();
        let mut operations = Vec::new();
        let warned_before = self.warnings.len();
        let global_consumes = string_list(root.get("consumes"));
        let global_produces = string_list(root.get("produces"));
        match root.get("paths") {
            Some(Value::Object(paths)) => {
                for (path, item) in paths {
                    if path.starts_with("x-") {
                        continue;
                    }
                    let pointer = format!("/paths/{}", escape_pointer(path));
                    let media = MediaDefaults {
                        consumes: &global_consumes,
                        produces: &global_produces,
                    };
                    self.path_item(path, item, 0, &pointer, media, &mut operations);
                }
            }
            Some(_) => self.warn(
                0,
                "#/paths",
                "`paths` is not a mapping; no operations loaded",
            ),
            None => {}
        }
        if operations.is_empty() {
            self.why_empty = Some(self.why_no_operations(warned_before));
        }

        let mut webhooks = Vec::new();
        if let Some(Value::Object(hooks)) = root.get("webhooks") {
            for (name, item) in hooks {
                let item = self.follow_or_warn(0, item, &format!("#/webhooks/{name}"));
                if let Some((_, Value::Object(map))) = item {
                    for (key, op) in map {
                        if let Some(method) = Method::from_http(key) {
                            webhooks.push(Webhook {
                                name: name.clone(),
                                method,
                                operation_id: op
                                    .get("operationId")
                                    .and_then(Value::as_str)
                                    .map(str::to_string),
                            });
                        }
                    }
                }
            }
        }

        // Convert every named schema, including those discovered while converting.
        let mut i = 0;
        while i < self.pending.len() {
            let (target, name) = self.pending[i].clone();
            i += 1;
            let value = self
                .docs
                .get(target.doc, &target.pointer)
                .unwrap_or(&Value::Null);
            let mut visiting = vec![target.clone()];
            // The body, not `schema`: that would turn the target into a
            // reference to itself.
            let schema = self.schema_body(target.doc, value, &target.pointer, 0, &mut visiting);
            self.schemas.insert(name, schema);
        }

        self.warn_reference_cycles();
        let security_schemes = self.security_schemes();
        name_operations(&mut operations, &mut self.warnings, self.docs.path(0));
        resolve_links(&mut operations);
        let inline = inline::name_inline_schemas(&mut operations, &mut self.schemas);

        Ok(Api {
            title,
            version,
            format: self.format,
            servers,
            operations,
            schemas: std::mem::take(&mut self.schemas),
            webhooks,
            security_schemes,
            graphql: None,
            left_out: Vec::new(),
            inline,
            document: None,
        })
    }

    /// Warns, once per cycle and where it starts, about named schemas that
    /// only refer to each other (`A: {$ref: B}`, `B: {$ref: A}`): no shape
    /// is ever defined, so their values are generated and checked as any
    /// JSON value.
    fn warn_reference_cycles(&mut self) {
        let bare = |s: &Schema| {
            let mut s = s.clone();
            s.description = None;
            s.reference.is_some() && s == Schema::named(s.reference.clone().unwrap_or_default())
        };
        let places: HashMap<String, crate::load::document::Target> = self
            .named
            .iter()
            .map(|(t, n)| (n.clone(), t.clone()))
            .collect();
        let mut reported: HashSet<String> = HashSet::new();
        let mut found = Vec::new();
        for start in self.schemas.keys() {
            if reported.contains(start) {
                continue;
            }
            let mut chain = vec![start.clone()];
            let mut at = start;
            while let Some(next) = self
                .schemas
                .get(at)
                .filter(|s| bare(s))
                .and_then(|s| s.reference.as_ref())
            {
                if let Some(k) = chain.iter().position(|n| n == next) {
                    let cycle: Vec<String> = chain[k..].to_vec();
                    if cycle.iter().all(|n| !reported.contains(n)) {
                        reported.extend(cycle.iter().cloned());
                        found.push(cycle);
                    }
                    break;
                }
                chain.push(next.clone());
                at = next;
            }
        }
        for cycle in found {
            let Some(target) = places.get(&cycle[0]).cloned() else {
                continue;
            };
            let path = cycle
                .iter()
                .chain(std::iter::once(&cycle[0]))
                .cloned()
                .collect::<Vec<_>>()
                .join(" → ");
            self.warn(
                target.doc,
                format!("#{}", target.pointer),
                format!("`$ref` cycle {path}: these schemas only refer to each other and never define a shape; their values are generated and checked as any JSON value"),
            );
        }
    }

    /// Why `paths` gave no operation; `skipped_from` is where the warnings
    /// about the parts of `paths` begin.
    fn why_no_operations(&self, skipped_from: usize) -> String {
        let root = self.root();
        let webhooks = if root
            .get("webhooks")
            .is_some_and(|w| w.as_object().is_some_and(|m| !m.is_empty()))
        {
            " (its webhooks are requests the server sends, not operations to call)"
        } else {
            ""
        };
        let paths = match root.get("paths") {
            None => return format!("the document has no `paths`{webhooks}"),
            Some(Value::Object(p)) => p,
            Some(_) => return "`paths` is not a mapping".to_string(),
        };
        let listed = paths.keys().filter(|k| !k.starts_with("x-")).count();
        if listed == 0 {
            return format!("`paths` is empty{webhooks}");
        }
        let skipped: Vec<&Warning> = self.warnings[skipped_from..].iter().collect();
        if skipped.is_empty() {
            return format!(
                "its {listed} path(s) declare no operation (get, put, post, delete, options, head, patch or trace)"
            );
        }
        let shown: Vec<String> = skipped
            .iter()
            .take(5)
            .map(|w| format!("{} ({})", w.location, w.message))
            .collect();
        format!(
            "every operation was skipped ({} part(s) of `paths`): {}{}",
            skipped.len(),
            shown.join("; "),
            if skipped.len() > shown.len() {
                "; …"
            } else {
                ""
            }
        )
    }

    pub(super) fn servers(&self) -> Vec<String> {
        let root = self.root();
        if self.format == SpecFormat::Swagger2 {
            let base = root.get("basePath").and_then(Value::as_str).unwrap_or("");
            let base = base.trim_end_matches('/');
            return match root.get("host").and_then(Value::as_str) {
                Some(host) => {
                    let schemes = string_list(root.get("schemes"));
                    let schemes = if schemes.is_empty() {
                        vec!["https".to_string()]
                    } else {
                        schemes
                    };
                    schemes
                        .iter()
                        .map(|s| format!("{s}://{host}{base}"))
                        .collect()
                }
                None if !base.is_empty() => vec![base.to_string()],
                None => Vec::new(),
            };
        }
        let mut out = Vec::new();
        if let Some(Value::Array(servers)) = root.get("servers") {
            for s in servers {
                if let Some(url) = s.get("url").and_then(Value::as_str) {
                    out.push(substitute_server_variables(url, s.get("variables")));
                }
            }
        }
        out
    }

    /// Follows `$ref`s on a non-schema object (parameter, response, path item…),
    /// returning the document it ends in and the value, or why it cannot.
    pub(super) fn follow(
        &self,
        doc: DocId,
        value: &'a Value,
    ) -> Result<(DocId, &'a Value), String> {
        let mut doc = doc;
        let mut value = value;
        for _ in 0..16 {
            let Some(r) = value.get("$ref").and_then(Value::as_str) else {
                return Ok((doc, value));
            };
            let t = self
                .docs
                .target(doc, r)
                .ok_or_else(|| self.docs.unresolvable(doc, r))?;
            doc = t.doc;
            value = self
                .docs
                .get(t.doc, &t.pointer)
                .ok_or_else(|| self.docs.unresolvable(doc, r))?;
        }
        Err("$ref chain too long (a reference cycle?)".into())
    }

    /// [`Self::follow`], warning (once) at `location` when it fails.
    pub(super) fn follow_or_warn(
        &mut self,
        doc: DocId,
        value: &'a Value,
        location: &str,
    ) -> Option<(DocId, &'a Value)> {
        match self.follow(doc, value) {
            Ok(found) => Some(found),
            Err(why) => {
                self.warn(doc, location, format!("{why}; this part is skipped"));
                None
            }
        }
    }
}

pub(super) fn file_stem(path: &Path) -> String {
    path.file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("api")
        .to_string()
}

pub(super) fn string_list(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        Some(Value::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    }
}

pub(super) fn parent_pointer(pointer: &str) -> &str {
    pointer.rsplit_once('/').map_or("", |(p, _)| p)
}

/// `{name}` segments of a path template, in order.
pub(super) fn path_template_names(path: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = path;
    while let Some(start) = rest.find('{') {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        let name = &rest[start + 1..start + len];
        if !name.is_empty() && !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
        rest = &rest[start + len + 1..];
    }
    names
}

pub(super) fn substitute_server_variables(url: &str, vars: Option<&Value>) -> String {
    let mut out = url.to_string();
    if let Some(Value::Object(vars)) = vars {
        for (name, var) in vars {
            if let Some(default) = var.get("default") {
                let d = default
                    .as_str()
                    .map_or_else(|| default.to_string(), str::to_string);
                out = out.replace(&format!("{{{name}}}"), &d);
            }
        }
    }
    out
}

/// Gives every operation its graph name: its operationId, else `METHOD /path`; a
/// repeated operationId falls back to `METHOD /path` for the later operations.
pub(super) fn name_operations(ops: &mut [Operation], warnings: &mut Vec<Warning>, file: &Path) {
    let mut seen: HashSet<String> = HashSet::new();
    for op in ops.iter_mut() {
        let fallback = format!("{} {}", op.method.as_str(), op.path);
        let name = match &op.operation_id {
            Some(id) if !seen.contains(id) => id.clone(),
            Some(id) => {
                warnings.push(Warning {
                    file: file.to_path_buf(),
                    location: op.pointer.clone(),
                    message: format!(
                        "operationId {id:?} is used more than once; this operation is named {fallback:?}"
                    ),
                });
                fallback
            }
            None => fallback,
        };
        seen.insert(name.clone());
        op.name = name;
    }
}

/// Turns link targets written as operationRefs or operationIds into graph names.
pub(super) fn resolve_links(ops: &mut [Operation]) {
    let by_id: HashMap<String, String> = ops
        .iter()
        .filter_map(|o| o.operation_id.clone().map(|id| (id, o.name.clone())))
        .collect();
    let by_pointer: HashMap<String, String> = ops
        .iter()
        .map(|o| (o.pointer.clone(), o.name.clone()))
        .collect();
    for op in ops.iter_mut() {
        for response in op.responses.values_mut() {
            response.links.retain_mut(|link| {
                let resolved = match link.operation_id.strip_prefix("ref:") {
                    Some(r) => by_pointer.get(r).cloned(),
                    None => by_id.get(&link.operation_id).cloned(),
                };
                match resolved {
                    Some(name) => {
                        link.operation_id = name;
                        true
                    }
                    None => false,
                }
            });
        }
    }
}
