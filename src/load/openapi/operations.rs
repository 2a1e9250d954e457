//! The operations of a document: path items, operations, parameters,
//! request bodies and responses, each skipped with a warning when it cannot
//! be read.

use indexmap::IndexMap;
use serde_json::{Map, Value};

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

/// The media types a Swagger 2 document declares for all its operations
/// (`consumes`, `produces`); an operation's own lists replace them.
#[derive(Clone, Copy)]
pub(super) struct MediaDefaults<'d> {
    /// What request bodies are sent as.
    pub(super) consumes: &'d [String],
    /// What responses come back as.
    pub(super) produces: &'d [String],
}

/// The path item an operation is declared in: its path, the document it was
/// read from (after following a `$ref`), and the parameters it declares for
/// all its operations.
struct PathItem<'a, 'p> {
    path: &'p str,
    doc: DocId,
    shared_params: Vec<&'a Value>,
}

/// What an operation's parameter declarations hold: parameters proper, and
/// Swagger 2's `body` and `formData` parameters, which make its body.
#[derive(Default)]
struct DeclaredInputs {
    parameters: Vec<Parameter>,
    body: Option<RequestBody>,
    /// `formData` fields: name, schema, whether required.
    form_fields: Vec<(String, Schema, bool)>,
    /// Whether a `formData` field is a file.
    has_file: bool,
}

/// Parameter declarations by (name, location), each with the document it is
/// in and its pointer.
type ParamDecls<'a> = IndexMap<(String, String), (DocId, &'a Value, String)>;

impl<'a> Converter<'a> {
    pub(super) fn path_item(
        &mut self,
        path: &str,
        item: &'a Value,
        doc: DocId,
        pointer: &str,
        media: MediaDefaults<'_>,
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
        let context = PathItem {
            path,
            doc,
            shared_params,
        };
        for (key, op) in item {
            let Some(method) = Method::from_http(key) else {
                continue;
            };
            let op_pointer = format!("{pointer}/{key}");
            match self.operation(&context, method, op, &op_pointer, media) {
                Ok(operation) => out.push(operation),
                Err(Skip(reason)) => self.warn(
                    doc,
                    format!("#{op_pointer}"),
                    format!("operation {} {path} skipped: {reason}", method.as_str()),
                ),
            }
        }
    }

    fn operation(
        &mut self,
        item: &PathItem<'a, '_>,
        method: Method,
        op: &'a Value,
        pointer: &str,
        media: MediaDefaults<'_>,
    ) -> Result<Operation, Skip> {
        let op = op.as_object().ok_or_else(|| Skip("not a mapping".into()))?;
        let operation_id = op
            .get("operationId")
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .map(str::to_string);
        let consumes = match op.get("consumes") {
            Some(v) => string_list(Some(v)),
            None => media.consumes.to_vec(),
        };
        let produces = match op.get("produces") {
            Some(v) => string_list(Some(v)),
            None => media.produces.to_vec(),
        };
        let params = self.parameter_declarations(item, op, pointer)?;
        let DeclaredInputs {
            mut parameters,
            mut body,
            form_fields,
            has_file,
        } = self.declared_inputs(params, &consumes);
        declare_template_parameters(item.path, &mut parameters);
        if let Some(form) = form_body(form_fields, has_file, &consumes) {
            body = Some(form);
        }
        if let Some(rb) = op.get("requestBody") {
            body = self.request_body(item.doc, rb, &format!("{pointer}/requestBody"))?;
        }
        let responses = self.responses(item.doc, op, pointer, &produces)?;

        Ok(Operation {
            name: String::new(),
            operation_id,
            method,
            path: item.path.to_string(),
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

    /// The parameter declarations of operation `op` (at `pointer`), each
    /// followed to where it is written: the path item's, overridden by the
    /// operation's own with the same name and location.
    fn parameter_declarations(
        &mut self,
        item: &PathItem<'a, '_>,
        op: &'a Map<String, Value>,
        pointer: &str,
    ) -> Result<ParamDecls<'a>, Skip> {
        let doc = item.doc;
        let mut raw: Vec<(DocId, &'a Value, String)> = Vec::new();
        for (i, p) in item.shared_params.iter().enumerate() {
            let loc = format!("{}/parameters/{i}", parent_pointer(pointer));
            raw.push((doc, p, loc));
        }
        if let Some(Value::Array(ps)) = op.get("parameters") {
            for (i, p) in ps.iter().enumerate() {
                raw.push((doc, p, format!("{pointer}/parameters/{i}")));
            }
        }
        let mut params: ParamDecls<'a> = IndexMap::new();
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
        Ok(params)
    }

    /// Reads each parameter declaration by its location; an unsupported
    /// location is skipped with a warning.
    fn declared_inputs(&mut self, params: ParamDecls<'a>, consumes: &[String]) -> DeclaredInputs {
        let mut out = DeclaredInputs::default();
        for ((name, location), (pdoc, p, loc)) in params {
            let location = match location.as_str() {
                "path" => Location::Path,
                "query" => Location::Query,
                "header" => Location::Header,
                "cookie" => Location::Cookie,
                "body" if self.format == SpecFormat::Swagger2 => {
                    out.body = Some(self.swagger_body(pdoc, p, &loc, consumes));
                    continue;
                }
                "formData" if self.format == SpecFormat::Swagger2 => {
                    if p.get("type").and_then(Value::as_str) == Some("file") {
                        out.has_file = true;
                    }
                    let schema = self.schema_root(pdoc, p, &loc);
                    let required = p.get("required").and_then(Value::as_bool).unwrap_or(false);
                    out.form_fields.push((name, schema, required));
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
            // A header (or cookie) name is written as it is into a header
            // line: one that is no token would split or break the request.
            if location == Location::Header && crate::model::headers::ignored_by_openapi(&name) {
                continue;
            }
            let refused = match location {
                Location::Header => crate::model::headers::refused(&name),
                Location::Cookie if !crate::model::headers::is_token(&name) => Some(format!(
                    "cookie name {} is not an HTTP token",
                    crate::model::text::one_line(&format!("{name:?}"))
                )),
                _ => None,
            };
            if let Some(why) = refused {
                self.warn(pdoc, format!("#{loc}"), format!("{why}; parameter skipped"));
                continue;
            }
            let parameter = self.parameter(pdoc, p, &loc, name, location);
            let schema_at = if p.get("schema").is_some() {
                format!("{loc}/schema")
            } else {
                loc.clone()
            };
            if let Some(why) = self.impossible.shift_remove(&(pdoc, schema_at.clone())) {
                self.warn(
                    pdoc,
                    format!("#{schema_at}"),
                    format!(
                        "{why}: no value satisfies it; parameter {:?} left out",
                        parameter.name
                    ),
                );
                continue;
            }
            out.parameters.push(parameter);
        }
        out
    }

    /// The request body a Swagger 2 `body` parameter declares, in each of
    /// the media types the operation consumes (JSON when it names none).
    fn swagger_body(
        &mut self,
        pdoc: DocId,
        p: &'a Value,
        loc: &str,
        consumes: &[String],
    ) -> RequestBody {
        let schema = match p.get("schema") {
            Some(s) => self.schema_root(pdoc, s, &format!("{loc}/schema")),
            None => Schema::default(),
        };
        let content_types = if consumes.is_empty() {
            vec!["application/json".to_string()]
        } else {
            consumes.to_vec()
        };
        let examples = p
            .get("x-examples")
            .and_then(Value::as_object)
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default();
        RequestBody {
            required: p.get("required").and_then(Value::as_bool).unwrap_or(false),
            content: content_types
                .into_iter()
                .map(|c| (c, schema.clone()))
                .collect(),
            examples,
        }
    }

    /// The responses of operation `op` by status code (`x-` keys left out);
    /// one that cannot be followed skips the operation.
    fn responses(
        &mut self,
        doc: DocId,
        op: &'a Map<String, Value>,
        pointer: &str,
        produces: &[String],
    ) -> Result<IndexMap<String, Response>, Skip> {
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
                let response = self.response(rdoc, r, &loc, produces);
                responses.insert(code.clone(), response);
            }
        }
        Ok(responses)
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

/// Declares every `{name}` of `path` that no parameter declares: the
/// description forgot it, and without it the operation can never be called.
fn declare_template_parameters(path: &str, parameters: &mut Vec<Parameter>) {
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
}

/// The body Swagger 2 `formData` fields make: multipart when one is a file
/// or the operation consumes multipart, else URL-encoded; none without
/// fields.
fn form_body(
    form_fields: Vec<(String, Schema, bool)>,
    has_file: bool,
    consumes: &[String],
) -> Option<RequestBody> {
    if form_fields.is_empty() {
        return None;
    }
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
    Some(RequestBody {
        required,
        content: IndexMap::from([(mime.to_string(), schema)]),
        examples: Vec::new(),
    })
}
