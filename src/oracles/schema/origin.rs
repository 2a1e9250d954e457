//! Where, in the description itself, a violation's schema is written.
//!
//! The validator reports where it was in the converted schema (its
//! evaluation path: `/items/$ref/properties/price/type`). That path is
//! walked again through the description's own document, from the response's
//! schema: `$ref`s are followed where the document has them (the converted
//! schema has others of its own: named inline objects), a property merged
//! from an `allOf` member is found in that member, and an alternative by its
//! place among the `oneOf` and `anyOf` members, as the loader ordered them.
//! So a broken `Book.price` is `#/components/schemas/Book/properties/price`
//! whichever operation answered it.

use serde_json::Value;

use crate::model::source::{self, SourceDocument};
use crate::model::{Api, SpecFormat};

/// How deep `allOf` members are searched for a property or a keyword.
const MAX_DEPTH: usize = 8;

/// The tokens of the response schema that key `(o, r, m)` checks bodies
/// against, as the document writes it (not followed when a `$ref`).
pub(super) fn response_schema(
    doc: &SourceDocument,
    api: &Api,
    (o, r, m): (usize, usize, usize),
) -> Option<Vec<String>> {
    let op = api.operations.get(o)?;
    let (status, response) = op.responses.get_index(r)?;
    let (mime, _) = response.content.get_index(m)?;
    let mut at = source::tokens(&op.pointer);
    at.extend(["responses".to_string(), status.clone()]);
    let mut at = doc.walk(&at)?;
    at = doc.follow(&at)?;
    if api.format == SpecFormat::Swagger2 {
        at.push("schema".into());
    } else {
        at.extend(["content".to_string(), mime.clone(), "schema".to_string()]);
    }
    doc.get(&at)?;
    Some(at)
}

/// The description's pointer of the schema that says what a body broke:
/// the schema at `start`, walked along the converted schema's `evaluation`
/// path, then to the schema (itself or an `allOf` member) that writes
/// `keyword` (for `required`, the one whose list names `property`). A
/// `type` broken where a `$ref` stands is the referring place's: that is
/// where a null or another type is allowed without changing every use of
/// the named schema.
pub(super) fn locate(
    doc: &SourceDocument,
    start: &[String],
    evaluation: &str,
    keyword: &str,
    property: Option<&str>,
) -> Option<String> {
    let root = doc.root();
    let steps: Vec<String> = source::tokens(evaluation);
    let mut site = start.to_vec();
    let mut i = 0;
    while i + 1 < steps.len() {
        let step = steps[i].as_str();
        let next = steps.get(i + 1).map(String::as_str);
        match (step, next) {
            ("$ref", _) => i += 1,
            ("properties", Some(name)) => {
                site = member(root, &site, &["properties", name], 0)?;
                i += 2;
            }
            ("items" | "additionalProperties", _) => {
                site = member(root, &site, &[step], 0)?;
                i += 1;
            }
            ("anyOf", Some(n)) => {
                let n: usize = n.parse().ok()?;
                site = alternatives(root, &site, 0)?.into_iter().nth(n)?;
                i += 2;
            }
            _ => return None,
        }
    }
    if steps.last().map(String::as_str) != Some(keyword) {
        return None;
    }
    let resolved = source::follow(root, &site)?;
    if keyword == "type" && resolved != site {
        return Some(source::pointer(&site));
    }
    let holder = holder(root, &resolved, keyword, property, 0).unwrap_or(resolved);
    Some(source::pointer(&holder))
}

/// Where `path` (`["properties", "price"]`, `["items"]`) leads from the
/// schema at `at`: in it, or in one of its `allOf` members.
fn member(root: &Value, at: &[String], path: &[&str], depth: usize) -> Option<Vec<String>> {
    let at = source::follow(root, at)?;
    let mut inside = at.clone();
    inside.extend(path.iter().map(|s| s.to_string()));
    if source::get(root, &inside).is_some() {
        return Some(inside);
    }
    if depth >= MAX_DEPTH {
        return None;
    }
    let count = source::get(root, &at)?
        .get("allOf")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    (0..count).find_map(|k| {
        let mut part = at.clone();
        part.extend(["allOf".to_string(), k.to_string()]);
        member(root, &part, path, depth + 1)
    })
}

/// The schema's alternatives in the order the loader keeps them: its own
/// `oneOf` members, its `anyOf` members, then those of its `allOf` members.
fn alternatives(root: &Value, at: &[String], depth: usize) -> Option<Vec<Vec<String>>> {
    let at = source::follow(root, at)?;
    let node = source::get(root, &at)?;
    let mut out = Vec::new();
    for key in ["oneOf", "anyOf"] {
        let count = node.get(key).and_then(Value::as_array).map_or(0, Vec::len);
        for k in 0..count {
            let mut alt = at.clone();
            alt.extend([key.to_string(), k.to_string()]);
            out.push(alt);
        }
    }
    if depth < MAX_DEPTH {
        let count = node
            .get("allOf")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        for k in 0..count {
            let mut part = at.clone();
            part.extend(["allOf".to_string(), k.to_string()]);
            out.extend(alternatives(root, &part, depth + 1).unwrap_or_default());
        }
    }
    Some(out)
}

/// The schema, `at` itself or one of its `allOf` members, that writes
/// `keyword`.
fn holder(
    root: &Value,
    at: &[String],
    keyword: &str,
    property: Option<&str>,
    depth: usize,
) -> Option<Vec<String>> {
    let at = source::follow(root, at)?;
    let node = source::get(root, &at)?;
    if writes(node, keyword, property) {
        return Some(at);
    }
    if depth >= MAX_DEPTH {
        return None;
    }
    let count = node
        .get("allOf")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    (0..count).find_map(|k| {
        let mut part = at.clone();
        part.extend(["allOf".to_string(), k.to_string()]);
        holder(root, &part, keyword, property, depth + 1)
    })
}

/// Whether a schema object writes the constraint `keyword` checks.
fn writes(node: &Value, keyword: &str, property: Option<&str>) -> bool {
    match keyword {
        "required" => node
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|names| {
                property.is_some_and(|p| names.iter().any(|n| n.as_str() == Some(p)))
            }),
        "enum" => node.get("enum").is_some() || node.get("const").is_some(),
        // OpenAPI 3.0 writes `minimum` and an `exclusiveMinimum: true` flag.
        "exclusiveMinimum" => node.get("exclusiveMinimum").is_some(),
        "exclusiveMaximum" => node.get("exclusiveMaximum").is_some(),
        "anyOf" => node.get("anyOf").is_some() || node.get("oneOf").is_some(),
        other => node.get(other).is_some(),
    }
}
