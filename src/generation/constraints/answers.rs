//! The rules a refusal (400, 422) states, read by the shape of its body:
//! FastAPI/pydantic's `detail` entries, Cornice's and express-validator's
//! `details`/`errors`, Django REST framework's field-keyed lists, and
//! free-text sentences that name one input.

use serde_json::{Value, json};

use super::inputs::{Input, input_at, named_in};
use super::message::{cut, message_text, sentences};
use super::prose::rules_in;
use super::rule::Rule;
use crate::model::{Api, Operation};

/// The rules an answer to a request of `op` states, each with its input.
pub fn from_answer(
    api: &Api,
    op: &Operation,
    body: Option<&Value>,
    text: &str,
) -> Vec<(Input, Rule, String)> {
    let mut out = Vec::new();
    // FastAPI / pydantic: {"detail": [{"loc": ["query", "limit"], "type": …, "msg": …, "ctx": …}]}
    if let Some(entries) = body.and_then(pydantic_entries) {
        for e in entries {
            let loc: Vec<String> = e
                .get("loc")
                .and_then(Value::as_array)
                .map(|l| l.iter().map(crate::execution::wire::as_text).collect())
                .unwrap_or_default();
            let Some(input) = input_at(api, op, &loc) else {
                continue;
            };
            let msg = e.get("msg").and_then(Value::as_str).unwrap_or("");
            for rule in pydantic_rules(e) {
                out.push((input.clone(), rule, cut(msg)));
            }
        }
        return out;
    }
    // Cornice (Kinto), express-validator and alike: {"details": [{"location":
    // "header", "name": "If-Match", "description": …}]}, {"errors": [{"type":
    // "field", "path": "name", "location": "body", "msg": …}]}
    if let Some(Value::Array(entries)) =
        body.and_then(|b| b.get("details").or_else(|| b.get("errors")))
    {
        let mut any = false;
        for e in entries {
            let location = e
                .get("location")
                .or_else(|| e.get("in"))
                .and_then(Value::as_str);
            let name = e
                .get("name")
                .or_else(|| e.get("field"))
                .or_else(|| e.get("param"))
                .or_else(|| e.get("path"))
                .and_then(Value::as_str);
            let description = e
                .get("description")
                .or_else(|| e.get("message"))
                .or_else(|| e.get("msg"))
                .and_then(Value::as_str)
                .unwrap_or("");
            let Some(name) = name else { continue };
            let mut loc: Vec<String> = location.map(|l| vec![l.to_string()]).unwrap_or_default();
            loc.extend(name.split('.').map(str::to_string));
            let input =
                input_at(api, op, &loc).or_else(|| input_at(api, op, &loc[loc.len().min(1)..]));
            if let Some(input) = input {
                for rule in rules_in(description) {
                    any = true;
                    out.push((input.clone(), rule, cut(description)));
                }
            }
        }
        if any {
            return out;
        }
    }
    // Django REST framework: {"name": ["Ensure this field has at least 3
    // characters."]}: the keys name the fields.
    if let Some(Value::Object(fields)) = body {
        for (key, messages) in fields {
            let Some(input) = input_at(api, op, std::slice::from_ref(key)) else {
                continue;
            };
            let texts: Vec<&str> = match messages {
                Value::String(m) => vec![m.as_str()],
                Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            for m in texts {
                for rule in rules_in(m) {
                    out.push((input.clone(), rule, cut(m)));
                }
            }
        }
        if !out.is_empty() {
            return out;
        }
    }
    // Free text: a sentence that names one input and states a rule
    // (`{"error": "DNS Name 'x' is not canonical"}`, "name must end with a dot").
    let message = message_text(body, text);
    for sentence in sentences(&message) {
        let rules = rules_in(sentence);
        if rules.is_empty() {
            continue;
        }
        if let Some(input) = named_in(api, op, sentence) {
            for rule in rules {
                out.push((input.clone(), rule, cut(sentence)));
            }
        }
    }
    out
}

/// FastAPI's `detail` entries, or the same entries (each with a `loc` list
/// and a `msg`) under another key: Prefect answers
/// `{"exception_message": …, "exception_detail": [{"loc": …, "msg": …}]}`.
fn pydantic_entries(body: &Value) -> Option<&Vec<Value>> {
    if let Some(Value::Array(entries)) = body.get("detail") {
        return Some(entries);
    }
    body.as_object()?.values().find_map(|v| match v {
        Value::Array(entries)
            if !entries.is_empty()
                && entries.iter().all(|e| {
                    e.get("loc").is_some_and(Value::is_array) && e.get("msg").is_some()
                }) =>
        {
            Some(entries)
        }
        _ => None,
    })
}

/// The rules of one pydantic error entry.
fn pydantic_rules(e: &Value) -> Vec<Rule> {
    let kind = e.get("type").and_then(Value::as_str).unwrap_or("");
    let ctx = e.get("ctx");
    let n = |key: &str| ctx.and_then(|c| c.get(key)).and_then(Value::as_f64);
    let out = match kind {
        "int_parsing" | "int_type" | "int_from_float" | "type_error.integer" => vec![Rule::Integer],
        "float_parsing" | "float_type" | "type_error.float" => vec![Rule::Number],
        "uuid_parsing" | "uuid_type" | "type_error.uuid" => vec![Rule::Uuid],
        "greater_than_equal" => n("ge").map(Rule::Minimum).into_iter().collect(),
        "greater_than" => n("gt")
            .map(|x| Rule::Minimum(x + 1.0))
            .into_iter()
            .collect(),
        "less_than_equal" => n("le").map(Rule::Maximum).into_iter().collect(),
        "less_than" => n("lt")
            .map(|x| Rule::Maximum(x - 1.0))
            .into_iter()
            .collect(),
        "string_too_short" => n("min_length")
            .map(|x| Rule::MinLength(x as u64))
            .into_iter()
            .collect(),
        "string_too_long" => n("max_length")
            .map(|x| Rule::MaxLength(x as u64))
            .into_iter()
            .collect(),
        "string_pattern_mismatch" => ctx
            .and_then(|c| c.get("pattern"))
            .and_then(Value::as_str)
            .map(|p| Rule::Pattern(p.to_string()))
            .into_iter()
            .collect(),
        "enum" | "literal_error" => ctx
            .and_then(|c| c.get("expected"))
            .and_then(Value::as_str)
            .map(|x| {
                // "'a', 'b' or 'c'"
                let v: Vec<Value> = x
                    .split([',', ' '])
                    .map(|w| w.trim().trim_matches('\''))
                    .filter(|w| !w.is_empty() && *w != "or")
                    .map(|w| json!(w))
                    .collect();
                Rule::OneOf(v)
            })
            .into_iter()
            .collect(),
        _ => Vec::new(),
    };
    if out.is_empty() {
        e.get("msg")
            .and_then(Value::as_str)
            .map(rules_in)
            .unwrap_or_default()
    } else {
        out
    }
}
