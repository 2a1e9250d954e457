//! Swagger 2.0 and OpenAPI 3.0/3.1 documents into the API model.
//!
//! One tolerant walker over JSON values serves all three versions: they share
//! most of their vocabulary, and a typed parser for each (such as `openapiv3`)
//! rejects a whole document for one bad field, while users need every operation
//! that can be read.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use indexmap::IndexMap;
use serde_json::{Map, Value};

use super::document::{escape_pointer, DocId, DocSet, Target};
use super::{Loaded, SpecError, Warning};
use crate::model::{
    Api, Link, Location, Method, Operation, Parameter, RequestBody, Response, Schema, SchemaType,
    SpecFormat, Webhook,
};

/// Nesting depth past which inline schemas are cut off. A `$ref` that could recur
/// becomes a named schema (see [`Converter::pointer_target_name`]), so only
/// structure nested this deep in the document itself reaches it.
const MAX_INLINE_DEPTH: usize = 40;

/// Loads a parsed Swagger/OpenAPI document.
pub fn load(root: Value, path: &Path) -> Result<Loaded, SpecError> {
    let format = detect_version(&root, path)?;
    if !root.is_object() {
        return Err(SpecError::new(path, "the document is not a JSON/YAML mapping").at("#/"));
    }
    let docs = DocSet::load(root, path);
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
    };
    let api = cx.convert_api()?;
    let mut warnings = cx.warnings;
    warnings.dedup();
    Ok(Loaded { api, warnings })
}

fn detect_version(root: &Value, path: &Path) -> Result<SpecFormat, SpecError> {
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

struct Converter<'a> {
    docs: &'a DocSet,
    format: SpecFormat,
    schemas: IndexMap<String, Schema>,
    /// Where each named schema lives → its name.
    named: HashMap<Target, String>,
    /// Named schemas referenced but not yet converted.
    pending: Vec<(Target, String)>,
    /// Per document, the pointers that some `$ref` targets which are not named
    /// definitions (`/definitions/Root/properties/n1`).
    ref_targets: HashMap<DocId, HashSet<String>>,
    /// Whether a pointer target is converted once under a name of its own rather
    /// than inlined at every reference ([`Converter::is_shared`]).
    shared: HashMap<Target, bool>,
    /// Whether a pointer target holds no pointer `$ref`s ([`Converter::is_leaf`]).
    leaf: HashMap<Target, bool>,
    /// Named targets as merged into an `allOf`: `None` once expanded, the
    /// expansion to copy from the second time on.
    expanded: HashMap<Target, Option<Schema>>,
    warnings: Vec<Warning>,
    /// (file, location) pairs already warned about, so each skipped part warns once.
    warned: HashSet<(DocId, String)>,
}

/// Why an operation could not be loaded.
struct Skip(String);

impl<'a> Converter<'a> {
    fn root(&self) -> &'a Map<String, Value> {
        self.docs.docs[0]
            .value
            .as_object()
            .expect("checked to be an object in load")
    }

    fn warn(&mut self, doc: DocId, location: impl Into<String>, message: impl Into<String>) {
        let location = location.into();
        if self.warned.insert((doc, location.clone())) {
            self.warnings.push(Warning {
                file: self.docs.path(doc).to_path_buf(),
                location,
                message: message.into(),
            });
        }
    }

    fn convert_api(&mut self) -> Result<Api, SpecError> {
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
        let global_consumes = string_list(root.get("consumes"));
        let global_produces = string_list(root.get("produces"));
        match root.get("paths") {
            Some(Value::Object(paths)) => {
                for (path, item) in paths {
                    if path.starts_with("x-") {
                        continue;
                    }
                    let pointer = format!("/paths/{}", escape_pointer(path));
                    self.path_item(
                        path,
                        item,
                        0,
                        &pointer,
                        &global_consumes,
                        &global_produces,
                        &mut operations,
                    );
                }
            }
            Some(_) => self.warn(
                0,
                "#/paths",
                "`paths` is not a mapping; no operations loaded",
            ),
            None => {}
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

        name_operations(&mut operations, &mut self.warnings, self.docs.path(0));
        resolve_links(&mut operations);

        Ok(Api {
            title,
            version,
            format: self.format,
            servers,
            operations,
            schemas: std::mem::take(&mut self.schemas),
            webhooks,
            graphql: None,
        })
    }

    fn servers(&self) -> Vec<String> {
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
    fn follow(&self, doc: DocId, value: &'a Value) -> Result<(DocId, &'a Value), String> {
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
    fn follow_or_warn(
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

    #[allow(clippy::too_many_arguments)]
    fn path_item(
        &mut self,
        path: &str,
        item: &'a Value,
        doc: DocId,
        pointer: &str,
        global_consumes: &[String],
        global_produces: &[String],
        out: &mut Vec<Operation>,
    ) {
        let Some((doc, item)) = self.follow_or_warn(doc, item, &format!("#{pointer}")) else {
            return;
        };
        let Some(item) = item.as_object() else {
            self.warn(
                doc,
                format!("#{pointer}"),
                "path item is not a mapping; skipped",
            );
            return;
        };
        let shared_params: Vec<&Value> = match item.get("parameters") {
            Some(Value::Array(ps)) => ps.iter().collect(),
            _ => Vec::new(),
        };
        for (key, op) in item {
            let Some(method) = Method::from_http(key) else {
                continue;
            };
            let op_pointer = format!("{pointer}/{key}");
            match self.operation(
                path,
                method,
                op,
                doc,
                &op_pointer,
                &shared_params,
                global_consumes,
                global_produces,
            ) {
                Ok(operation) => out.push(operation),
                Err(Skip(reason)) => self.warn(
                    doc,
                    format!("#{op_pointer}"),
                    format!("operation {} {path} skipped: {reason}", method.as_str()),
                ),
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn operation(
        &mut self,
        path: &str,
        method: Method,
        op: &'a Value,
        doc: DocId,
        pointer: &str,
        shared_params: &[&'a Value],
        global_consumes: &[String],
        global_produces: &[String],
    ) -> Result<Operation, Skip> {
        let op = op.as_object().ok_or_else(|| Skip("not a mapping".into()))?;
        let operation_id = op
            .get("operationId")
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .map(str::to_string);
        let consumes = match op.get("consumes") {
            Some(v) => string_list(Some(v)),
            None => global_consumes.to_vec(),
        };
        let produces = match op.get("produces") {
            Some(v) => string_list(Some(v)),
            None => global_produces.to_vec(),
        };

        // Operation-level parameters override path-level ones with the same name
        // and location.
        let mut raw: Vec<(DocId, &'a Value, String)> = Vec::new();
        for (i, p) in shared_params.iter().enumerate() {
            let loc = format!("{}/parameters/{i}", parent_pointer(pointer));
            raw.push((doc, p, loc));
        }
        if let Some(Value::Array(ps)) = op.get("parameters") {
            for (i, p) in ps.iter().enumerate() {
                raw.push((doc, p, format!("{pointer}/parameters/{i}")));
            }
        }
        let mut params: IndexMap<(String, String), (DocId, &'a Value, String)> = IndexMap::new();
        for (pdoc, p, loc) in raw {
            let (pdoc, p) = self
                .follow(pdoc, p)
                .map_err(|why| Skip(format!("parameter at #{loc}: {why}")))?;
            let name = p.get("name").and_then(Value::as_str).unwrap_or("");
            let location = p.get("in").and_then(Value::as_str).unwrap_or("");
            if name.is_empty() || location.is_empty() {
                return Err(Skip(format!("parameter at #{loc} has no `name` or `in`")));
            }
            params.insert((name.to_string(), location.to_string()), (pdoc, p, loc));
        }

        let mut parameters = Vec::new();
        let mut body: Option<RequestBody> = None;
        let mut form_fields: Vec<(String, Schema, bool)> = Vec::new();
        let mut has_file = false;
        for ((name, location), (pdoc, p, loc)) in params {
            let location = match location.as_str() {
                "path" => Location::Path,
                "query" => Location::Query,
                "header" => Location::Header,
                "cookie" => Location::Cookie,
                "body" if self.format == SpecFormat::Swagger2 => {
                    let schema = match p.get("schema") {
                        Some(s) => self.schema_root(pdoc, s, &format!("{loc}/schema")),
                        None => Schema::default(),
                    };
                    let content_types = if consumes.is_empty() {
                        vec!["application/json".to_string()]
                    } else {
                        consumes.clone()
                    };
                    let examples = p
                        .get("x-examples")
                        .and_then(Value::as_object)
                        .map(|m| m.values().cloned().collect())
                        .unwrap_or_default();
                    body = Some(RequestBody {
                        required: p.get("required").and_then(Value::as_bool).unwrap_or(false),
                        content: content_types
                            .into_iter()
                            .map(|c| (c, schema.clone()))
                            .collect(),
                        examples,
                    });
                    continue;
                }
                "formData" if self.format == SpecFormat::Swagger2 => {
                    if p.get("type").and_then(Value::as_str) == Some("file") {
                        has_file = true;
                    }
                    let schema = self.schema_root(pdoc, p, &loc);
                    let required = p.get("required").and_then(Value::as_bool).unwrap_or(false);
                    form_fields.push((name, schema, required));
                    continue;
                }
                other => {
                    self.warn(
                        pdoc,
                        format!("#{loc}"),
                        format!("parameter location {other:?} is not supported; parameter skipped"),
                    );
                    continue;
                }
            };
            parameters.push(self.parameter(pdoc, p, &loc, name, location));
        }
        // Every `{name}` in the path must be a parameter, even when the description
        // forgot to declare it, or the operation can never be called.
        for name in path_template_names(path) {
            if !parameters
                .iter()
                .any(|p| p.location == Location::Path && p.name == name)
            {
                parameters.push(Parameter {
                    name,
                    location: Location::Path,
                    required: true,
                    schema: Schema::of_type(SchemaType::String),
                    description: None,
                    examples: Vec::new(),
                });
            }
        }

        if !form_fields.is_empty() {
            let mut schema = Schema::of_type(SchemaType::Object);
            for (name, field, required) in form_fields {
                if required {
                    schema.required.push(name.clone());
                }
                schema.properties.insert(name, field);
            }
            let mime = if has_file || consumes.iter().any(|c| c.contains("multipart")) {
                "multipart/form-data"
            } else {
                "application/x-www-form-urlencoded"
            };
            let required = !schema.required.is_empty();
            body = Some(RequestBody {
                required,
                content: IndexMap::from([(mime.to_string(), schema)]),
                examples: Vec::new(),
            });
        }
        if let Some(rb) = op.get("requestBody") {
            body = self.request_body(doc, rb, &format!("{pointer}/requestBody"))?;
        }

        let mut responses = IndexMap::new();
        if let Some(Value::Object(rs)) = op.get("responses") {
            for (code, r) in rs {
                if code.starts_with("x-") {
                    continue;
                }
                let loc = format!("{pointer}/responses/{}", escape_pointer(code));
                let (rdoc, r) = self
                    .follow(doc, r)
                    .map_err(|why| Skip(format!("response {code}: {why}")))?;
                let response = self.response(rdoc, r, &loc, &produces);
                responses.insert(code.clone(), response);
            }
        }

        Ok(Operation {
            name: String::new(),
            operation_id,
            method,
            path: path.to_string(),
            summary: op
                .get("summary")
                .and_then(Value::as_str)
                .map(|s| s.lines().next().unwrap_or("").to_string()),
            tags: string_list(op.get("tags")),
            deprecated: op
                .get("deprecated")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            parameters,
            request_body: body,
            responses,
            pointer: format!("#{pointer}"),
        })
    }

    fn parameter(
        &mut self,
        doc: DocId,
        p: &'a Value,
        loc: &str,
        name: String,
        location: Location,
    ) -> Parameter {
        // Swagger 2 and OpenAPI 3 `content` parameters keep the schema elsewhere;
        // Swagger 2 non-body parameters carry it on the parameter itself.
        let schema = if let Some(s) = p.get("schema") {
            self.schema_root(doc, s, &format!("{loc}/schema"))
        } else if let Some(Value::Object(content)) = p.get("content") {
            match content.iter().next() {
                Some((mime, media)) => self.media_schema(doc, media, loc, mime),
                None => Schema::default(),
            }
        } else {
            self.schema_root(doc, p, loc)
        };
        let mut examples = Vec::new();
        for key in ["example", "x-example"] {
            if let Some(e) = p.get(key) {
                examples.push(e.clone());
            }
        }
        if let Some(Value::Object(ex)) = p.get("examples") {
            for e in ex.values() {
                if let Some(v) = e.get("value") {
                    examples.push(v.clone());
                }
            }
        }
        Parameter {
            required: location == Location::Path
                || p.get("required").and_then(Value::as_bool).unwrap_or(false),
            name,
            location,
            schema,
            description: p
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_string),
            examples,
        }
    }

    fn request_body(
        &mut self,
        doc: DocId,
        rb: &'a Value,
        loc: &str,
    ) -> Result<Option<RequestBody>, Skip> {
        let (doc, rb) = self
            .follow(doc, rb)
            .map_err(|why| Skip(format!("request body: {why}")))?;
        let mut content = IndexMap::new();
        let mut examples = Vec::new();
        if let Some(Value::Object(media)) = rb.get("content") {
            for (mime, m) in media {
                let schema = self.media_schema(doc, m, loc, mime);
                media_examples(m, &mut examples);
                content.insert(mime.clone(), schema);
            }
        }
        Ok(Some(RequestBody {
            required: rb.get("required").and_then(Value::as_bool).unwrap_or(false),
            content,
            examples,
        }))
    }

    fn response(&mut self, doc: DocId, r: &'a Value, loc: &str, produces: &[String]) -> Response {
        let description = r
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let mut content = IndexMap::new();
        if self.format == SpecFormat::Swagger2 {
            if let Some(s) = r.get("schema") {
                let schema = self.schema_root(doc, s, &format!("{loc}/schema"));
                let mimes = if produces.is_empty() {
                    vec!["application/json".to_string()]
                } else {
                    produces.to_vec()
                };
                for m in mimes {
                    content.insert(m, schema.clone());
                }
            }
        } else if let Some(Value::Object(media)) = r.get("content") {
            for (mime, m) in media {
                let schema = self.media_schema(doc, m, loc, mime);
                content.insert(mime.clone(), schema);
            }
        }
        let mut headers = IndexMap::new();
        if let Some(Value::Object(hs)) = r.get("headers") {
            for (name, h) in hs {
                let hloc = format!("{loc}/headers/{}", escape_pointer(name));
                let Some((hdoc, h)) = self.follow_or_warn(doc, h, &format!("#{hloc}")) else {
                    continue;
                };
                let schema = match h.get("schema") {
                    Some(s) => self.schema_root(hdoc, s, &format!("{hloc}/schema")),
                    None => self.schema_root(hdoc, h, &hloc),
                };
                headers.insert(name.clone(), schema);
            }
        }
        let mut links = Vec::new();
        if let Some(Value::Object(ls)) = r.get("links") {
            for (name, l) in ls {
                let lloc = format!("{loc}/links/{}", escape_pointer(name));
                let Some((_, l)) = self.follow_or_warn(doc, l, &format!("#{lloc}")) else {
                    continue;
                };
                let target = l
                    .get("operationId")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .or_else(|| {
                        l.get("operationRef")
                            .and_then(Value::as_str)
                            .map(|r| format!("ref:{r}"))
                    });
                let Some(operation_id) = target else { continue };
                let parameters = l
                    .get("parameters")
                    .and_then(Value::as_object)
                    .map(|m| {
                        m.iter()
                            .map(|(k, v)| {
                                (
                                    k.clone(),
                                    v.as_str().map_or_else(|| v.to_string(), str::to_string),
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                links.push(Link {
                    name: name.clone(),
                    operation_id,
                    parameters,
                });
            }
        }
        Response {
            description,
            content,
            headers,
            links,
        }
    }

    /// The schema of one media type entry of a `content` map at `loc`.
    fn media_schema(&mut self, doc: DocId, media: &Value, loc: &str, mime: &str) -> Schema {
        match media.get("schema") {
            Some(s) => self.schema_root(
                doc,
                s,
                &format!("{loc}/content/{}/schema", escape_pointer(mime)),
            ),
            None => Schema::default(),
        }
    }

    fn register_named(&mut self, target: Target, name: String) -> String {
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
    fn schema_root(&mut self, doc: DocId, value: &Value, pointer: &str) -> Schema {
        let mut visiting = Vec::new();
        self.schema(doc, value, pointer, 0, &mut visiting)
    }

    /// Converts the schema at `pointer`. A place that `$ref`s elsewhere point at,
    /// and that is converted under a name of its own, becomes a reference to that
    /// name here too, so that its owner and its referrers share one schema.
    fn schema(
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
    fn pointer_target_name(&mut self, target: &Target) -> Option<String> {
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
    fn is_shared(&mut self, target: &Target) -> bool {
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
    fn is_leaf(&mut self, target: &Target) -> bool {
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
    fn schema_body(
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
            let Some(target) = self.docs.target(doc, r) else {
                let why = self.docs.unresolvable(doc, r);
                self.warn(
                    doc,
                    format!("#{pointer}"),
                    format!("{why}; the schema is treated as `any`"),
                );
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
                return Schema::default();
            }
            let Some(inner) = self.docs.get(target.doc, &target.pointer) else {
                return Schema::default();
            };
            visiting.push(target.clone());
            let s = self.schema_body(target.doc, inner, &target.pointer, depth + 1, visiting);
            visiting.pop();
            return s;
        }

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
        let nullable = obj.get("nullable").and_then(Value::as_bool) == Some(true)
            || obj.get("x-nullable").and_then(Value::as_bool) == Some(true);
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
        if let Some(items) = obj.get("items") {
            let it = self.schema(doc, items, &format!("{pointer}/items"), depth + 1, visiting);
            s.items = Some(Box::new(it));
        }
        if let Some(Value::Object(props)) = obj.get("properties") {
            for (name, p) in props {
                let ploc = format!("{pointer}/properties/{}", escape_pointer(name));
                let ps = self.schema(doc, p, &ploc, depth + 1, visiting);
                s.properties.insert(name.clone(), ps);
            }
        }
        s.required = string_list(obj.get("required"));
        if let Some(ap) = obj.get("additionalProperties") {
            if ap.is_object() {
                let aps = self.schema(
                    doc,
                    ap,
                    &format!("{pointer}/additionalProperties"),
                    depth + 1,
                    visiting,
                );
                s.additional_properties = Some(Box::new(aps));
            }
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
                merge_into(&mut s, merged);
            }
        }
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
        s
    }

    /// An `allOf` member is merged into its parent, so a reference to a named schema
    /// is expanded here rather than kept as a reference.
    fn all_of_member(
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
        let Some(target) = self.docs.target(doc, r) else {
            let why = self.docs.unresolvable(doc, r);
            self.warn(
                doc,
                format!("#{pointer}"),
                format!("{why} (in allOf); that part is left out"),
            );
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
        if named {
            if let Some(Some(s)) = self.expanded.get(&target) {
                return s.clone();
            }
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

/// Merges an `allOf` member into the schema being built.
fn merge_into(into: &mut Schema, from: Schema) {
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
fn named_schema_name(docs: &DocSet, target: &Target) -> Option<String> {
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
fn pointer_refs(
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
fn merges_references(v: &Value) -> bool {
    matches!(v.get("allOf"), Some(Value::Array(members)) if members.iter().any(|m| m.get("$ref").is_some()))
}

/// Every place that some `$ref`, in any document of the set, points at and that
/// is not a named definition, by document.
fn pointer_ref_targets(docs: &DocSet) -> HashMap<DocId, HashSet<String>> {
    let mut out: HashMap<DocId, HashSet<String>> = HashMap::new();
    for (id, doc) in docs.docs.iter().enumerate() {
        let mut refs = HashSet::new();
        collect_refs(&doc.value, &mut refs);
        for r in refs {
            if let Some(t) = docs.target(id, r) {
                if named_schema_name(docs, &t).is_none() {
                    out.entry(t.doc).or_default().insert(t.pointer);
                }
            }
        }
    }
    out
}

fn collect_refs<'v>(v: &'v Value, out: &mut HashSet<&'v str>) {
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
fn pointer_schema_name(docs: &DocSet, target: &Target) -> String {
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

fn file_stem(path: &Path) -> String {
    path.file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("api")
        .to_string()
}

fn string_list(v: Option<&Value>) -> Vec<String> {
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

fn media_examples(media: &Value, out: &mut Vec<Value>) {
    if let Some(e) = media.get("example") {
        out.push(e.clone());
    }
    if let Some(Value::Object(ex)) = media.get("examples") {
        for e in ex.values() {
            if let Some(v) = e.get("value") {
                out.push(v.clone());
            }
        }
    }
}

fn parent_pointer(pointer: &str) -> &str {
    pointer.rsplit_once('/').map_or("", |(p, _)| p)
}

/// `{name}` segments of a path template, in order.
pub fn path_template_names(path: &str) -> Vec<String> {
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

fn substitute_server_variables(url: &str, vars: Option<&Value>) -> String {
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
fn name_operations(ops: &mut [Operation], warnings: &mut Vec<Warning>, file: &Path) {
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
fn resolve_links(ops: &mut [Operation]) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn load_yaml(text: &str) -> Loaded {
        let v = super::super::parse_text(text, Path::new("t.yaml")).unwrap();
        load(v, Path::new("t.yaml")).unwrap()
    }

    #[test]
    fn swagger2_body_and_form_data_become_request_bodies() {
        let l = load_yaml(
            r##"
swagger: "2.0"
info: {title: t, version: "1"}
host: api.example.com
basePath: /v1/
schemes: [http, https]
consumes: [application/json]
paths:
  /pets:
    post:
      operationId: addPet
      parameters:
        - {name: body, in: body, required: true, schema: {$ref: "#/definitions/Pet"}}
      responses: {"200": {description: ok, schema: {$ref: "#/definitions/Pet"}}}
  /pets/{id}/photo:
    post:
      parameters:
        - {name: id, in: path, required: true, type: integer, format: int64}
        - {name: file, in: formData, type: file, required: true}
        - {name: note, in: formData, type: string}
      responses: {"200": {description: ok}}
definitions:
  Pet:
    type: object
    required: [name]
    properties:
      id: {type: integer, x-nullable: true}
      name: {type: string, example: Rex}
"##,
        );
        assert!(l.is_complete(), "{:?}", l.warnings);
        let api = &l.api;
        assert_eq!(api.format, SpecFormat::Swagger2);
        assert_eq!(
            api.servers,
            vec!["http://api.example.com/v1", "https://api.example.com/v1"]
        );
        let add = api.operation("addPet").unwrap();
        let body = add.request_body.as_ref().unwrap();
        assert!(body.required);
        assert_eq!(
            body.content["application/json"].reference.as_deref(),
            Some("Pet")
        );
        let photo = api.operation("POST /pets/{id}/photo").unwrap();
        assert_eq!(photo.parameters.len(), 1);
        assert_eq!(photo.parameters[0].schema.types, vec![SchemaType::Integer]);
        let form = &photo.request_body.as_ref().unwrap().content["multipart/form-data"];
        assert_eq!(form.required, vec!["file"]);
        assert_eq!(form.properties["file"].format.as_deref(), Some("binary"));
        let pet = &api.schemas["Pet"];
        assert_eq!(
            pet.properties["id"].types,
            vec![SchemaType::Integer, SchemaType::Null]
        );
    }

    #[test]
    fn openapi31_type_arrays_webhooks_and_recursion() {
        let l = load_yaml(
            r##"
openapi: 3.1.0
info: {title: t, version: "1"}
servers: [{url: "https://{env}.example.com", variables: {env: {default: api}}}]
paths:
  /nodes/{id}:
    get:
      parameters: [{name: id, in: path, required: true, schema: {type: [string, "null"]}}]
      responses:
        "200":
          description: ok
          content: {application/json: {schema: {$ref: "#/components/schemas/Node"}}}
webhooks:
  newNode:
    post:
      operationId: onNewNode
      responses: {"200": {description: ok}}
components:
  schemas:
    Node:
      type: object
      properties:
        id: {type: string}
        children: {type: array, items: {$ref: "#/components/schemas/Node"}}
        parent: {$ref: "#/components/schemas/Node"}
        size: {type: integer, exclusiveMinimum: 0}
"##,
        );
        assert!(l.is_complete(), "{:?}", l.warnings);
        let api = &l.api;
        assert_eq!(api.servers, vec!["https://api.example.com"]);
        assert_eq!(api.webhooks.len(), 1);
        assert_eq!(api.webhooks[0].operation_id.as_deref(), Some("onNewNode"));
        let op = api.operation("GET /nodes/{id}").unwrap();
        assert_eq!(
            op.parameters[0].schema.types,
            vec![SchemaType::String, SchemaType::Null]
        );
        let node = &api.schemas["Node"];
        assert_eq!(
            node.properties["children"]
                .items
                .as_ref()
                .unwrap()
                .reference
                .as_deref(),
            Some("Node")
        );
        assert_eq!(node.properties["size"].minimum, Some(0.0));
        assert!(node.properties["size"].exclusive_minimum);
    }

    #[test]
    fn all_of_is_merged_and_one_of_kept_as_alternatives() {
        let l = load_yaml(
            r##"
openapi: 3.0.0
info: {title: t, version: "1"}
paths: {}
components:
  schemas:
    Base: {type: object, required: [id], properties: {id: {type: integer}}}
    Dog:
      allOf:
        - $ref: "#/components/schemas/Base"
        - {type: object, properties: {bark: {type: boolean}}}
    Pet:
      oneOf: [{$ref: "#/components/schemas/Dog"}, {type: string}]
      discriminator: {propertyName: kind}
    Loop:
      allOf: [{$ref: "#/components/schemas/Loop"}]
"##,
        );
        let dog = &l.api.schemas["Dog"];
        assert_eq!(dog.required, vec!["id"]);
        assert!(dog.properties.contains_key("id") && dog.properties.contains_key("bark"));
        let pet = &l.api.schemas["Pet"];
        assert_eq!(pet.alternatives.len(), 2);
        assert!(pet.exclusive_alternatives);
        assert_eq!(pet.discriminator.as_deref(), Some("kind"));
        assert!(l.api.schemas.contains_key("Loop"));
    }

    #[test]
    fn broken_operation_is_skipped_with_one_warning_and_rest_loads() {
        let l = load_yaml(
            r##"
openapi: 3.0.0
info: {title: t, version: "1"}
paths:
  /a:
    get:
      parameters: [{$ref: "#/components/parameters/Missing"}]
      responses: {"200": {description: ok}}
    post: "not an operation"
  /b:
    get:
      operationId: getB
      responses: {"200": {description: ok}}
"##,
        );
        assert_eq!(l.api.operations.len(), 1);
        assert_eq!(l.api.operations[0].name, "getB");
        assert_eq!(l.warnings.len(), 2, "{:#?}", l.warnings);
        assert!(l.warnings[0].location.contains("/paths/~1a/get"));
    }

    #[test]
    fn undeclared_path_parameters_are_added_and_duplicate_ids_renamed() {
        let l = load_yaml(
            r##"
openapi: 3.0.0
info: {title: t, version: "1"}
paths:
  /a/{x}:
    get: {operationId: same, responses: {"200": {description: ok}}}
  /b:
    get: {operationId: same, responses: {"200": {description: ok}}}
"##,
        );
        assert_eq!(l.api.operations[0].parameters[0].name, "x");
        assert!(l.api.operations[0].parameters[0].required);
        assert_eq!(l.api.operations[1].name, "GET /b");
        assert_eq!(l.warnings.len(), 1);
    }

    /// k schemas that each merge all the others through `allOf`, as pointer
    /// targets and as named definitions: each expanded once, not once per path
    /// through the mesh (8! before), and each with every property of the mesh.
    #[test]
    fn all_of_meshes_are_merged_once_each() {
        const K: usize = 8;
        let head = "openapi: 3.0.0\ninfo: {title: t, version: \"1\"}\npaths: {}\ncomponents:\n  schemas:\n";
        let mut pointer = format!("{head}    Mesh:\n      type: object\n      properties:\n");
        let mut named = head.to_string();
        for x in 1..=K {
            let own = format!("properties: {{f{x}: {{type: string}}}}");
            pointer.push_str(&format!(
                "        a{x}:\n          {own}\n          allOf:\n"
            ));
            named.push_str(&format!("    A{x}:\n      {own}\n      allOf:\n"));
            for y in (1..=K).filter(|y| *y != x) {
                pointer.push_str(&format!(
                    "            - $ref: \"#/components/schemas/Mesh/properties/a{y}\"\n"
                ));
                named.push_str(&format!("        - $ref: \"#/components/schemas/A{y}\"\n"));
            }
        }
        let all: Vec<String> = (1..=K).map(|y| format!("f{y}")).collect();
        for (text, prefix, extra) in [(pointer, "Mesh.a", Some("Mesh")), (named, "A", None)] {
            let l = load_yaml(&text);
            assert!(l.is_complete(), "{:?}", l.warnings);
            let mut names: Vec<&str> = l.api.schemas.keys().map(String::as_str).collect();
            names.sort_unstable();
            let mut want: Vec<String> = extra.into_iter().map(str::to_string).collect();
            want.extend((1..=K).map(|x| format!("{prefix}{x}")));
            assert_eq!(names, want);
            for x in 1..=K {
                let a = &l.api.schemas[&format!("{prefix}{x}")];
                let mut props: Vec<&str> = a.properties.keys().map(String::as_str).collect();
                props.sort_unstable();
                assert_eq!(props, all, "{prefix}{x}");
            }
        }
    }

    /// Pointer targets with no pointer `$ref`s of their own stay inline, so a
    /// primitive keeps its type at every use; responses and parameters are
    /// followed as before; a pointer target that is a `$ref` is followed to
    /// what it points at.
    #[test]
    fn small_pointer_targets_stay_inline() {
        let l = load_yaml(
            r##"
swagger: "2.0"
info: {title: t, version: "1"}
paths:
  /pets/{id}:
    parameters: [{$ref: "#/parameters/Id"}]
    get:
      operationId: getPet
      responses:
        "200": {$ref: "#/responses/PetOk"}
  /owners:
    get:
      operationId: listOwners
      parameters:
        - {name: pet, in: query, type: integer, format: int64}
      responses:
        "200":
          description: ok
          schema: {type: array, items: {$ref: "#/definitions/Pet/properties/owner"}}
        "201": {description: ok, schema: {$ref: "#/definitions/Pet/properties/alias"}}
        "202": {description: ok, schema: {$ref: "#/definitions/Pet/properties/tags"}}
parameters:
  Id: {name: id, in: path, required: true, type: integer}
responses:
  PetOk: {description: ok, schema: {$ref: "#/definitions/Pet"}}
definitions:
  Pet:
    type: object
    properties:
      id: {type: integer, format: int64}
      owner:
        type: object
        properties:
          petId: {$ref: "#/definitions/Pet/properties/id"}
          name: {type: string}
      alias: {$ref: "#/definitions/Pet/properties/owner"}
      tags: {type: array, items: {$ref: "#/definitions/Tag"}}
  Tag: {type: object, properties: {name: {type: string}}}
"##,
        );
        assert!(l.is_complete(), "{:?}", l.warnings);
        let api = &l.api;
        // `owner` refers only to a primitive (`id`): it is inlined, as before.
        assert_eq!(api.schemas.keys().collect::<Vec<_>>(), vec!["Pet", "Tag"]);
        let owners = api.operation("listOwners").unwrap();
        let items = owners.responses["200"].content["application/json"]
            .items
            .as_deref()
            .unwrap();
        assert_eq!(items.properties["petId"].types, vec![SchemaType::Integer]);
        assert_eq!(items.properties["petId"].format.as_deref(), Some("int64"));
        let alias = &owners.responses["201"].content["application/json"];
        assert_eq!(alias.properties.len(), 2);
        let tags = &owners.responses["202"].content["application/json"];
        assert_eq!(
            tags.items.as_deref().unwrap().reference.as_deref(),
            Some("Tag")
        );
        let get = api.operation("getPet").unwrap();
        assert_eq!(get.parameters[0].schema.types, vec![SchemaType::Integer]);
        assert_eq!(
            get.responses["200"].content["application/json"]
                .reference
                .as_deref(),
            Some("Pet")
        );
    }

    /// A pointer target that refers to another is named, the name read from its
    /// place and kept apart from a definition of the same name.
    #[test]
    fn pointer_targets_are_named_from_their_place() {
        let l = load_yaml(
            r##"
openapi: 3.0.0
info: {title: t, version: "1"}
paths:
  /a:
    get:
      operationId: getA
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties:
                  next: {$ref: "#/paths/~1b/get/responses/200/content/application~1json/schema"}
  /b:
    get:
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties:
                  back: {$ref: "#/paths/~1a/get/responses/200/content/application~1json/schema"}
                  list: {$ref: "#/components/schemas/List/items"}
components:
  schemas:
    getA.200: {type: string}
    List:
      type: array
      items:
        type: object
        properties: {up: {$ref: "#/components/schemas/List/items"}}
    Both:
      allOf:
        - $ref: "#/components/schemas/List/items"
        - {properties: {own: {type: boolean}}}
"##,
        );
        assert!(l.is_complete(), "{:?}", l.warnings);
        let names: Vec<&str> = l.api.schemas.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            vec![
                "getA.200",
                "List",
                "Both",
                "getA.200_2",
                "GET /b.200",
                "List.items"
            ]
        );
        let a = &l.api.operation("getA").unwrap().responses["200"].content["application/json"];
        assert_eq!(a.reference.as_deref(), Some("getA.200_2"));
        assert_eq!(
            l.api.schemas["getA.200_2"].properties["next"]
                .reference
                .as_deref(),
            Some("GET /b.200")
        );
        let list = &l.api.schemas["List"];
        assert_eq!(
            list.items.as_deref().unwrap().reference.as_deref(),
            Some("List.items")
        );
        let both = &l.api.schemas["Both"];
        assert_eq!(
            both.properties.keys().collect::<Vec<_>>(),
            vec!["up", "own"]
        );
    }

    #[test]
    fn path_template_names_in_order() {
        assert_eq!(
            path_template_names("/a/{x}/b/{y}.{fmt}"),
            vec!["x", "y", "fmt"]
        );
    }
}
