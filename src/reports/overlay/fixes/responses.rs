//! The fixes of responses: a response for a status the description does
//! not document, a media type it does not list.

use crate::oracles::registry::Code;
use serde_json::{Value, json};

use super::super::infer;
use super::{Fix, answers};
use crate::execution::Exchange;
use crate::faults::Fault;
use crate::model::{SpecFormat, source};

impl Fix<'_, '_> {
    pub(super) fn statuses(&mut self, faults: &[&Fault]) {
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

    pub(super) fn media(&mut self, faults: &[&Fault]) {
        for f in faults {
            let Some(status) = f.status else { continue };
            let answers = answers(self.seen, &[f]);
            let media = if f.code == Code::HtmlInsteadOfJson {
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

/// The media type of an answer, without parameters, lower-case.
fn media_of(ex: &Exchange) -> Option<String> {
    ex.header("content-type")
        .map(crate::oracles::conformance::essence)
        .filter(|m| !m.is_empty())
}

fn is_json(media: &str) -> bool {
    media.ends_with("/json") || media.ends_with("+json")
}
