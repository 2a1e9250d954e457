//! The operations of a document: path items, operations, parameters,
//! request bodies and responses, each skipped with a warning when it cannot
//! be read.

use indexmap::IndexMap;
use serde_json::Value;

use super::Converter;
use super::Skip;
use super::parent_pointer;
use super::path_template_names;
use super::string_list;
use crate::load::document::{DocId, escape_pointer};
use crate::model::{
    Link, Location, Method, Operation, Parameter, RequestBody, Response, Schema, SchemaType,
    SpecFormat,
};

impl<'a> Converter<'a> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn path_item(
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
    pub(super) fn operation(
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
                    deep_object: false,
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
            // The operation's own list wins, even an empty one (no security).
            security: super::security::requirements(op.get("security"))
                .or_else(|| super::security::requirements(self.root().get("security")))
                .unwrap_or_default(),
        })
    }

    pub(super) fn parameter(
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
            deep_object: p.get("style").and_then(Value::as_str) == Some("deepObject"),
            description: p
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_string),
            examples,
        }
    }

    pub(super) fn request_body(
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

    pub(super) fn response(
        &mut self,
        doc: DocId,
        r: &'a Value,
        loc: &str,
        produces: &[String],
    ) -> Response {
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
    pub(super) fn media_schema(
        &mut self,
        doc: DocId,
        media: &Value,
        loc: &str,
        mime: &str,
    ) -> Schema {
        match media.get("schema") {
            Some(s) => self.schema_root(
                doc,
                s,
                &format!("{loc}/content/{}/schema", escape_pointer(mime)),
            ),
            None => Schema::default(),
        }
    }
}

pub(super) fn media_examples(media: &Value, out: &mut Vec<Value>) {
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
