//! What each conformance cause changes in the description: where (the
//! operation, response or schema as the document writes it, `$ref`s
//! followed, so a shared response or schema is changed once) and how.
//!
//! | cause | change |
//! |---|---|
//! | `undocumented_status` | a response for the status on each operation it was seen on, with the media type that came and a schema inferred from the bodies (Swagger 2: `schema` under the response, the media type in `produces`) |
//! | `content_type_mismatch`, `html_instead_of_json` | the media type that came, added to the response (Swagger 2: to the operation's `produces`) |
//! | `schema_violation` `required` | the member dropped from `required` (the list removed when it was the last) |
//! | `schema_violation` `type`, `enum` with null | nullable: `nullable`, `x-nullable`, or `"null"` in a 3.1 `type` list; a `$ref` is wrapped (`allOf`, 3.1 `anyOf`) |
//! | `schema_violation` `type` | widened: `integer` to `number`; else the type seen added (3.1 `type` list; 3.0 `anyOf` of the old schema and the new type; Swagger 2 `type` removed from a scalar) |
//! | `schema_violation` `enum` | the values seen added (a `const` becomes an `enum`) |
//! | `schema_violation` bounds | `minimum`, `maximum`, lengths and item counts moved to the values seen; an exclusive bound made inclusive |
//! | `schema_violation` `pattern`, `multipleOf`, `uniqueItems` | removed |
//! | `schema_violation` `anyOf` | a member of the type seen, when no member has that type |
//! | `invalid_input_accepted` | none: the server should refuse the input |

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::edit::{Editor, Why};
use super::infer;
use crate::execution::Exchange;
use crate::model::source;
use crate::model::{Api, SpecFormat};
use crate::oracles::causes::Cause;
use crate::oracles::{Checker, Fault, json_type};

/// What the planner reads.
pub struct Seen<'a> {
    /// The API, with its document.
    pub api: &'a Api,
    /// The run's faults.
    pub faults: &'a [Fault],
    /// Per fault signature, the answers that showed it.
    pub answers: &'a HashMap<String, Vec<Exchange>>,
    /// The run's checks (schema violations are found again in the answers).
    pub checker: &'a Checker,
}

/// Writes the actions that settle `cause`; `Err` says why none could be.
pub fn plan(editor: &mut Editor, seen: &Seen<'_>, cause: &Cause) -> Result<(), String> {
    let faults: Vec<&Fault> = seen.faults.iter().filter(|f| f.cause == cause.id).collect();
    let base = evidence(cause, &faults);
    let before = editor.actions.len();
    let mut notes: Vec<String> = Vec::new();
    let mut fix = Fix {
        editor,
        seen,
        why: Why {
            cause: cause.id.clone(),
            description: base.clone(),
        },
        base,
        notes: &mut notes,
    };
    match cause.code.as_str() {
        "undocumented_status" => fix.statuses(&faults),
        "content_type_mismatch" | "html_instead_of_json" => fix.media(&faults),
        "schema_violation" => fix.schemas(&faults),
        "invalid_input_accepted" => {
            return Err(
                "the server accepted an input the description forbids: the server should refuse it (loosening the description would hide the missing check)"
                    .into(),
            )
        }
        _ => return Err("no change to an OpenAPI description settles it".into()),
    }
    if editor.actions.len() > before {
        return Ok(());
    }
    notes.dedup();
    Err(if notes.is_empty() {
        "the description already allows what was seen".into()
    } else {
        notes.join("; ")
    })
}

/// The description of a cause's actions: the cause, how often and where it
/// was seen, one example.
fn evidence(cause: &Cause, faults: &[&Fault]) -> String {
    let mut ops: Vec<&str> = cause
        .operations
        .iter()
        .map(String::as_str)
        .take(6)
        .collect();
    if cause.operations.len() > 6 {
        ops.push("…");
    }
    let sample = faults
        .iter()
        .find(|f| f.signature == cause.representative)
        .or(faults.first())
        .map(|f| {
            let step = f
                .witness
                .last()
                .map(|s| {
                    let status = s.status.map_or("no answer".into(), |s| s.to_string());
                    format!("{} {} answered {status}: ", s.method, s.path)
                })
                .unwrap_or_default();
            format!("; e.g. {step}{}", cut(&f.message, 200))
        })
        .unwrap_or_default();
    format!(
        "{} {}: seen {} time(s) on {}{sample}.",
        cause.id,
        cause.title,
        cause.count,
        ops.join(", ")
    )
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max).collect();
    s.push('…');
    s
}

struct Fix<'e, 's> {
    editor: &'e mut Editor,
    seen: &'e Seen<'s>,
    /// The cause and its evidence.
    base: String,
    /// The cause, its evidence and what the next actions do.
    why: Why,
    notes: &'e mut Vec<String>,
}

/// Where a schema was broken: the schema's pointer, the keyword, and for
/// `required` the member.
type Place = (String, String, Option<String>);

/// The answers that showed `faults`.
fn answers<'a>(seen: &Seen<'a>, faults: &[&Fault]) -> Vec<&'a Exchange> {
    faults
        .iter()
        .flat_map(|f| seen.answers.get(&f.signature).into_iter().flatten())
        .collect()
}

/// The media type of an answer, without parameters, lower-case.
fn media_of(ex: &Exchange) -> Option<String> {
    ex.header("content-type")
        .map(crate::oracles::conformance::essence)
        .filter(|m| !m.is_empty())
}

fn is_json(media: &str) -> bool {
    media.ends_with("/json") || media.ends_with("+json")
}

impl Fix<'_, '_> {
    fn format(&self) -> SpecFormat {
        self.seen.api.format
    }

    /// Says what the next actions do.
    fn doing(&mut self, what: impl std::fmt::Display) {
        self.why.description = format!("{} Fix: {what}.", self.base);
    }

    fn note(&mut self, text: impl Into<String>) {
        self.notes.push(text.into());
    }

    fn update(&mut self, at: &[String], patch: Value) -> bool {
        let Value::Object(patch) = patch else {
            return false;
        };
        self.editor.update(at, patch, &self.why)
    }

    /// Where the document writes operation `name` (its path item followed
    /// when a `$ref`).
    fn operation_at(&mut self, name: &str) -> Option<Vec<String>> {
        let Some(op) = self.seen.api.operation(name) else {
            self.note(format!("{name} is not in the description"));
            return None;
        };
        let at = source::walk(&self.editor.doc, &source::tokens(&op.pointer));
        if at.is_none() {
            self.note(format!(
                "{name} is written in another file than the description's root"
            ));
        }
        at
    }

    // Undocumented statuses.

    fn statuses(&mut self, faults: &[&Fault]) {
        let answers = answers(self.seen, faults);
        for f in faults {
            let Some(status) = f.status else { continue };
            if !(100..=599).contains(&status) {
                self.note(format!(
                    "{status} is not an HTTP status a description can document"
                ));
                continue;
            }
            let Some(op_at) = self.operation_at(&f.operation) else {
                continue;
            };
            let mine: Vec<&Exchange> = answers
                .iter()
                .copied()
                .filter(|e| e.status == Some(status))
                .collect();
            self.document_status(&op_at, status, &mine);
        }
    }

    fn document_status(&mut self, op_at: &[String], status: u16, answers: &[&Exchange]) {
        let media = answers.iter().find_map(|e| media_of(e));
        let with_body: Vec<&Exchange> = answers
            .iter()
            .copied()
            .filter(|e| !e.body.trim().is_empty())
            .collect();
        let schema = match &media {
            _ if with_body.is_empty() => None,
            None => None,
            Some(m) if is_json(m) => {
                let bodies: Vec<&Value> = with_body.iter().filter_map(|e| e.json()).collect();
                Some(if bodies.is_empty() {
                    json!({})
                } else {
                    infer::schema(&bodies, self.format())
                })
            }
            Some(_) => Some(json!({"type": "string"})),
        };
        let code = status.to_string();
        let reason = reqwest::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("Undocumented status");
        let description = format!("{reason} (as the server answers it)");
        let doing = match &media {
            Some(m) if schema.is_some() => format!("document status {code} ({m})"),
            _ => format!("document status {code}"),
        };
        let mut responses_at = op_at.to_vec();
        responses_at.push("responses".into());
        let mut response_at = responses_at.clone();
        response_at.push(code.clone());
        if self.format() == SpecFormat::Swagger2 {
            let mut response = json!({ "description": description });
            if let (Some(schema), Some(m)) = (&schema, &media) {
                response["schema"] = schema.clone();
                self.produce(op_at, m);
            }
            self.doing(&doing);
            self.add_response(op_at, &responses_at, &code, response);
            return;
        }
        self.doing(&doing);
        let mut response = json!({ "description": description });
        if let (Some(schema), Some(m)) = (schema, &media) {
            response["content"] = json!({ m.clone(): { "schema": schema } });
        }
        if self.editor.get(&response_at).is_some() {
            // Another cause documented the status already: add the media type.
            if let Some(content) = response.get("content").cloned()
                && let Some(at) = source::follow(&self.editor.doc, &response_at)
            {
                self.update(&at, json!({ "content": content }));
            }
            return;
        }
        self.add_response(op_at, &responses_at, &code, response);
    }

    fn add_response(
        &mut self,
        op_at: &[String],
        responses_at: &[String],
        code: &str,
        response: Value,
    ) {
        if self.editor.get(responses_at).is_some() {
            self.update(responses_at, json!({ code: response }));
        } else {
            self.update(op_at, json!({ "responses": { code: response } }));
        }
    }

    /// Swagger 2: `media` among what the operation produces.
    fn produce(&mut self, op_at: &[String], media: &str) {
        let Some(op) = self.editor.get(op_at) else {
            return;
        };
        let own = op.get("produces").and_then(Value::as_array).cloned();
        let listed: Vec<String> = match &own {
            Some(list) => list
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            None => self
                .editor
                .doc
                .get("produces")
                .and_then(Value::as_array)
                .map(|l| {
                    l.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
        };
        // The loader's default when nothing is listed.
        let effective = if listed.is_empty() {
            vec!["application/json".to_string()]
        } else {
            listed.clone()
        };
        if effective
            .iter()
            .any(|d| crate::oracles::conformance::media_matches(d, media))
        {
            return;
        }
        self.doing(format_args!("list {media} in the operation's produces"));
        let add = match own {
            // Appended to the operation's own list.
            Some(_) => vec![media.to_string()],
            // An operation's list replaces the document's: repeat it.
            None => {
                let mut all = effective;
                all.push(media.to_string());
                all
            }
        };
        self.update(op_at, json!({ "produces": add }));
    }

    // Media types.

    fn media(&mut self, faults: &[&Fault]) {
        for f in faults {
            let Some(status) = f.status else { continue };
            let answers = answers(self.seen, &[f]);
            let media = if f.code == "html_instead_of_json" {
                Some("text/html".to_string())
            } else {
                answers.iter().find_map(|e| media_of(e))
            };
            let Some(media) = media else { continue };
            let Some(op_at) = self.operation_at(&f.operation) else {
                continue;
            };
            if self.format() == SpecFormat::Swagger2 {
                self.produce(&op_at, &media);
                continue;
            }
            let Some(key) = self
                .seen
                .api
                .operation(&f.operation)
                .and_then(|op| documented_key(op, status))
            else {
                continue;
            };
            let mut at = op_at.clone();
            at.extend(["responses".to_string(), key]);
            let Some(response_at) = source::follow(&self.editor.doc, &at) else {
                self.note(format!(
                    "the response {status} of {} is in another file",
                    f.operation
                ));
                continue;
            };
            // A JSON flavour never mismatches: what comes here is text.
            self.doing(format_args!("document {media} for status {status}"));
            self.update(
                &response_at,
                json!({ "content": { media: { "schema": { "type": "string" } } } }),
            );
        }
    }

    // Schemas.

    fn schemas(&mut self, faults: &[&Fault]) {
        let mut places: Vec<(Place, Vec<Option<Value>>)> = Vec::new();
        for f in faults {
            for ex in answers(self.seen, &[f]) {
                let Some(v) = self
                    .seen
                    .checker
                    .violations(self.seen.api, ex)
                    .into_iter()
                    .find(|v| {
                        f.signature
                            .ends_with(&format!(":{} {}", v.location, v.keyword))
                    })
                else {
                    continue;
                };
                let Some(schema) = v.schema.clone() else {
                    self.note("the schema is written in another file than the description's root");
                    continue;
                };
                let member = (v.keyword == "required").then(|| {
                    let last = v.pointer.rsplit('/').next().unwrap_or("");
                    last.replace("~1", "/").replace("~0", "~")
                });
                let value = ex.json().and_then(|b| b.pointer(&v.pointer)).cloned();
                let key = (schema, v.keyword.clone(), member);
                match places.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, values)) => values.push(value),
                    None => places.push((key, vec![value])),
                }
            }
        }
        if places.is_empty() && self.notes.is_empty() {
            self.note("the answers that showed it were not kept");
        }
        for ((schema, keyword, member), values) in places {
            let at = source::tokens(&schema);
            if self.editor.get(&at).is_none() {
                self.note(format!("{schema} was changed by an earlier action"));
                continue;
            }
            let values: Vec<Value> = values.into_iter().flatten().collect();
            match keyword.as_str() {
                "required" => self.not_required(&at, member.as_deref().unwrap_or_default()),
                "type" => self.types(&at, &values),
                "enum" => self.enum_values(&at, &values),
                "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                    self.bound(&at, &keyword, &values)
                }
                "minLength" | "maxLength" | "minItems" | "maxItems" => {
                    self.size(&at, &keyword, &values)
                }
                "pattern" | "multipleOf" | "uniqueItems" => {
                    self.doing(format_args!(
                        "drop `{keyword}`, which the server's values break"
                    ));
                    self.editor.remove_keys(&at, &[keyword.as_str()], &self.why);
                }
                "anyOf" => self.alternative(&at, &values),
                other => self.note(format!("no change is written for `{other}`")),
            }
        }
    }

    fn not_required(&mut self, at: &[String], member: &str) {
        let mut list = at.to_vec();
        list.push("required".into());
        let names = self
            .editor
            .get(&list)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        self.doing(format_args!("{member:?} is not required"));
        if names.iter().all(|n| n.as_str() == Some(member)) {
            // OpenAPI 3.0 and Swagger 2 forbid an empty list.
            self.editor.remove_keys(at, &["required"], &self.why);
        } else {
            self.editor.remove_item(&list, member, &self.why);
        }
    }

    fn types(&mut self, at: &[String], values: &[Value]) {
        let seen: Vec<&str> = {
            let mut seen: Vec<&str> = values
                .iter()
                .filter(|v| !v.is_null())
                .map(|v| match v {
                    Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
                    v => json_type(v),
                })
                .collect();
            seen.sort_unstable();
            seen.dedup();
            // An integer among numbers is a number.
            if seen.contains(&"number") {
                seen.retain(|t| *t != "integer");
            }
            seen
        };
        if values.iter().any(Value::is_null) {
            self.nullable(at);
        }
        if !seen.is_empty() {
            self.widen(at, &seen);
        }
    }

    fn enum_values(&mut self, at: &[String], values: &[Value]) {
        if values.iter().any(Value::is_null) {
            self.nullable(at);
        }
        let node = self.editor.get(at).cloned().unwrap_or_default();
        let mut add: Vec<Value> = Vec::new();
        let listed = node.get("enum").and_then(Value::as_array).cloned();
        for v in values.iter().filter(|v| !v.is_null()) {
            let known =
                listed.as_ref().is_some_and(|l| l.contains(v)) || node.get("const") == Some(v);
            if !known && !add.contains(v) {
                add.push(v.clone());
            }
        }
        if add.is_empty() {
            return;
        }
        let listed: Vec<String> = add.iter().map(Value::to_string).collect();
        self.doing(format_args!("allow {}", listed.join(", ")));
        if let Some(c) = node.get("const").cloned() {
            self.editor.remove_keys(at, &["const"], &self.why);
            add.insert(0, c);
        }
        self.update(at, json!({ "enum": add }));
    }

    /// Null allowed at `at`, in the description's dialect.
    fn nullable(&mut self, at: &[String]) {
        let Some(node) = self.editor.get(at).cloned() else {
            return;
        };
        let format = self.format();
        self.doing("allow null");
        if let Some(r) = node.get("$ref").cloned() {
            // A `$ref`'s siblings are ignored: wrap it.
            self.editor.remove_keys(at, &["$ref"], &self.why);
            let wrapped = match format {
                SpecFormat::OpenApi31 => json!({ "anyOf": [{ "$ref": r }, { "type": "null" }] }),
                SpecFormat::Swagger2 => json!({ "allOf": [{ "$ref": r }], "x-nullable": true }),
                _ => json!({ "allOf": [{ "$ref": r }], "nullable": true }),
            };
            self.update(at, wrapped);
            return;
        }
        match format {
            SpecFormat::Swagger2 => {
                self.update(at, json!({ "x-nullable": true }));
            }
            SpecFormat::OpenApi31 => self.nullable_31(at, &node),
            _ => {
                self.update(at, json!({ "nullable": true }));
            }
        }
    }

    fn nullable_31(&mut self, at: &[String], node: &Value) {
        match node.get("type") {
            Some(Value::String(t)) => {
                let t = t.clone();
                self.editor.remove_keys(at, &["type"], &self.why);
                self.update(at, json!({ "type": [t, "null"] }));
            }
            Some(Value::Array(ts)) => {
                if !ts.iter().any(|t| t == "null") {
                    self.update(at, json!({ "type": ["null"] }));
                }
            }
            _ => {
                let choice = ["anyOf", "oneOf"]
                    .into_iter()
                    .find(|k| node.get(*k).is_some());
                if let Some(key) = choice {
                    self.update(at, json!({ key: [{ "type": "null" }] }));
                } else if node.get("allOf").is_some() {
                    // A type beside `allOf` meets the members' types: wrap.
                    let parts = node.get("allOf").cloned().unwrap_or_default();
                    self.editor.remove_keys(at, &["allOf"], &self.why);
                    self.update(
                        at,
                        json!({ "anyOf": [{ "allOf": parts }, { "type": "null" }] }),
                    );
                } else if node.get("properties").is_some()
                    || node.get("additionalProperties").is_some()
                {
                    self.update(at, json!({ "type": ["object", "null"] }));
                } else if node.get("items").is_some() {
                    self.update(at, json!({ "type": ["array", "null"] }));
                }
            }
        }
    }

    /// The types `seen` allowed at `at` besides the documented ones.
    fn widen(&mut self, at: &[String], seen: &[&str]) {
        let Some(node) = self.editor.get(at).cloned() else {
            return;
        };
        let declared: Vec<String> = match node.get("type") {
            Some(Value::String(t)) => vec![t.clone()],
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        };
        let allows = |t: &str| {
            declared
                .iter()
                .any(|d| d == t || (d == "number" && t == "integer"))
        };
        let new: Vec<&str> = seen.iter().copied().filter(|t| !allows(t)).collect();
        if new.is_empty() {
            return;
        }
        let format = self.format();
        self.doing(format_args!("allow {}", new.join(", ")));
        // An integer documented, a fraction seen: a number.
        if declared == ["integer"] && new == ["number"] && node.get("$ref").is_none() {
            match node.get("type") {
                Some(Value::String(_)) => {
                    self.update(at, json!({ "type": "number" }));
                }
                _ => {
                    self.editor.remove_keys(at, &["type"], &self.why);
                    self.update(at, json!({ "type": ["number"] }));
                }
            }
            return;
        }
        let composite = [
            "$ref",
            "properties",
            "items",
            "additionalProperties",
            "allOf",
        ]
        .iter()
        .any(|k| node.get(*k).is_some());
        match format {
            SpecFormat::OpenApi31 if node.get("$ref").is_none() && !declared.is_empty() => {
                let mut all: Vec<String> = declared.clone();
                all.extend(new.iter().map(|t| t.to_string()));
                if matches!(node.get("type"), Some(Value::Array(_))) {
                    let add: Vec<&str> = new.clone();
                    self.update(at, json!({ "type": add }));
                } else {
                    self.editor.remove_keys(at, &["type"], &self.why);
                    self.update(at, json!({ "type": all }));
                }
            }
            SpecFormat::Swagger2 if composite => self.note(format!(
                "Swagger 2 cannot say \"{} or {}\" of an object or array schema",
                declared.join("/"),
                new.join("/")
            )),
            SpecFormat::Swagger2 => {
                // No alternatives in Swagger 2: the type is left open.
                self.editor.remove_keys(at, &["type"], &self.why);
            }
            _ => self.either(at, &node, &new),
        }
    }

    /// OpenAPI 3: the schema at `at` becomes "the schema as it was, or one
    /// of `new`" (`anyOf`), its annotations kept outside.
    fn either(&mut self, at: &[String], node: &Value, new: &[&str]) {
        if node.get("anyOf").is_some() || node.get("oneOf").is_some() {
            self.note("the schema is already a choice of alternatives: which one should take the value is a judgment");
            return;
        }
        const KEEP: [&str; 11] = [
            "description",
            "title",
            "nullable",
            "example",
            "examples",
            "default",
            "readOnly",
            "writeOnly",
            "deprecated",
            "externalDocs",
            "xml",
        ];
        let Some(map) = node.as_object() else { return };
        let moved: Map<String, Value> = map
            .iter()
            .filter(|(k, _)| !KEEP.contains(&k.as_str()) && !k.starts_with("x-"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let keys: Vec<&str> = moved.keys().map(String::as_str).collect();
        self.editor.remove_keys(at, &keys, &self.why);
        let mut members = vec![Value::Object(moved)];
        members.extend(new.iter().map(|t| json!({ "type": t })));
        self.update(at, json!({ "anyOf": members }));
    }

    fn bound(&mut self, at: &[String], keyword: &str, values: &[Value]) {
        let numbers: Vec<f64> = values.iter().filter_map(Value::as_f64).collect();
        let lower = keyword.ends_with("inimum");
        let Some(seen) = numbers
            .iter()
            .copied()
            .reduce(if lower { f64::min } else { f64::max })
        else {
            return;
        };
        let node = self.editor.get(at).cloned().unwrap_or_default();
        let inclusive = if lower { "minimum" } else { "maximum" };
        self.doing(format_args!("move the {inclusive} to {}", number(seen)));
        let exclusive = if lower {
            "exclusiveMinimum"
        } else {
            "exclusiveMaximum"
        };
        let beyond = |a: f64, b: f64| if lower { a.min(b) } else { a.max(b) };
        match node.get(exclusive) {
            Some(Value::Bool(true)) => {
                let bound = node
                    .get(inclusive)
                    .and_then(Value::as_f64)
                    .map_or(seen, |b| beyond(b, seen));
                self.update(at, json!({ exclusive: false, inclusive: number(bound) }));
            }
            Some(Value::Number(b)) => {
                let bound = b.as_f64().map_or(seen, |b| beyond(b, seen));
                self.editor.remove_keys(at, &[exclusive], &self.why);
                self.update(at, json!({ inclusive: number(bound) }));
            }
            _ => {
                let bound = node
                    .get(inclusive)
                    .and_then(Value::as_f64)
                    .map_or(seen, |b| beyond(b, seen));
                self.update(at, json!({ inclusive: number(bound) }));
            }
        }
    }

    fn size(&mut self, at: &[String], keyword: &str, values: &[Value]) {
        let sizes = values.iter().filter_map(|v| match v {
            Value::String(s) => Some(s.chars().count() as u64),
            Value::Array(items) => Some(items.len() as u64),
            _ => None,
        });
        let seen = if keyword.starts_with("min") {
            sizes.min()
        } else {
            sizes.max()
        };
        if let Some(n) = seen {
            self.doing(format_args!("set {keyword} to {n}"));
            self.update(at, json!({ keyword: n }));
        }
    }

    /// A member of the type seen, when no member of the choice has it.
    fn alternative(&mut self, at: &[String], values: &[Value]) {
        let node = self.editor.get(at).cloned().unwrap_or_default();
        let Some(key) = ["anyOf", "oneOf"]
            .into_iter()
            .find(|k| node.get(*k).is_some())
        else {
            return;
        };
        let members = node
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut types: Vec<String> = Vec::new();
        for (i, _) in members.iter().enumerate() {
            let member = at
                .iter()
                .cloned()
                .chain([key.to_string(), i.to_string()])
                .collect::<Vec<_>>();
            let resolved = source::follow(&self.editor.doc, &member)
                .and_then(|m| self.editor.get(&m).cloned())
                .unwrap_or_default();
            match resolved.get("type") {
                Some(Value::String(t)) => types.push(t.clone()),
                Some(Value::Array(ts)) => {
                    types.extend(ts.iter().filter_map(Value::as_str).map(str::to_string))
                }
                _ => {
                    self.note("a member of the choice takes any type: the value breaks something deeper, which member it should match is a judgment");
                    return;
                }
            }
        }
        let mut add: Vec<Value> = Vec::new();
        for v in values {
            let t = match v {
                Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
                Value::Null if self.format() != SpecFormat::OpenApi31 => continue,
                v => json_type(v),
            };
            let allowed = types
                .iter()
                .any(|d| d == t || (d == "number" && t == "integer"));
            let member = json!({ "type": t });
            if !allowed && !add.contains(&member) {
                add.push(member);
            }
        }
        if add.is_empty() {
            self.note(
                "the value has a type a member allows: which member it should match is a judgment",
            );
            return;
        }
        self.doing(format_args!("add a member to `{key}`"));
        self.update(at, json!({ key: add }));
    }
}

/// The response key that documents `status` on `op`: the code, its range
/// (`4XX`), or `default`.
fn documented_key(op: &crate::model::Operation, status: u16) -> Option<String> {
    let code = status.to_string();
    let range = format!("{}XX", &code[..1]);
    op.responses
        .keys()
        .find(|k| **k == code)
        .or_else(|| op.responses.keys().find(|k| k.eq_ignore_ascii_case(&range)))
        .or_else(|| {
            op.responses
                .keys()
                .find(|k| k.eq_ignore_ascii_case("default"))
        })
        .cloned()
}

/// A bound as JSON, an integer when it is one.
fn number(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        json!(f as i64)
    } else {
        json!(f)
    }
}
