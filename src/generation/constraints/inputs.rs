//! The inputs of an operation a rule can be about (a parameter, a body
//! field by its path) and how a server's error entries or sentences name
//! them.

use crate::model::{Api, Location, Operation, Schema};

/// An input of an operation a rule is about: a parameter, or a body field
/// by its path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Input {
    /// A parameter, by its position.
    Param(usize),
    /// A body field, by its path from the body's root.
    Field(Vec<String>),
}

impl Input {
    /// Its schema as the description gives it.
    pub fn schema<'a>(&self, api: &'a Api, op: &'a Operation) -> Option<&'a Schema> {
        match self {
            Input::Param(j) => op.parameters.get(*j).map(|p| &p.schema),
            Input::Field(path) => body_field(api, op, path),
        }
    }

    /// The input as reports name it.
    pub fn describe(&self, op: &Operation) -> String {
        match self {
            Input::Param(j) => {
                let p = &op.parameters[*j];
                format!("{} {}", p.location.as_str(), p.name)
            }
            Input::Field(path) => format!("body /{}", path.join("/")),
        }
    }
}

/// The input a location path (`["query", "limit"]`, `["body", "user", "name"]`,
/// `["If-Match"]`) names.
pub(super) fn input_at(api: &Api, op: &Operation, loc: &[String]) -> Option<Input> {
    let (first, rest) = loc.split_first()?;
    let location = match first.to_ascii_lowercase().as_str() {
        "query" | "querystring" => Some(Location::Query),
        "path" => Some(Location::Path),
        "header" | "headers" => Some(Location::Header),
        "cookie" | "cookies" => Some(Location::Cookie),
        "body" => None,
        _ => {
            // No location word: a parameter or a top-level body field by name.
            return param_named(op, None, first)
                .map(Input::Param)
                .or_else(|| field_path(api, op, loc).map(Input::Field));
        }
    };
    match location {
        Some(l) => param_named(op, Some(l), rest.first()?).map(Input::Param),
        None => field_path(api, op, rest).map(Input::Field),
    }
}

fn param_named(op: &Operation, location: Option<Location>, name: &str) -> Option<usize> {
    op.parameters
        .iter()
        .position(|p| location.is_none_or(|l| p.location == l) && p.name.eq_ignore_ascii_case(name))
}

/// `path` when it names a property chain of the body's schema.
fn field_path(api: &Api, op: &Operation, path: &[String]) -> Option<Vec<String>> {
    if path.is_empty() {
        return None;
    }
    body_field(api, op, path).map(|_| path.to_vec())
}

/// The schema of the body field at `path` (the body's own for an empty one).
pub fn body_field<'a>(api: &'a Api, op: &'a Operation, path: &[String]) -> Option<&'a Schema> {
    let (_, mut schema) = op.request_body.as_ref()?.primary_schema()?;
    for name in path {
        schema = api.resolve(schema).properties.get(name)?;
    }
    Some(schema)
}

/// The one input whose name a sentence mentions as a word, if exactly one.
pub(super) fn named_in(api: &Api, op: &Operation, sentence: &str) -> Option<Input> {
    let words: Vec<String> = sentence
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    let mut found: Vec<Input> = Vec::new();
    for (j, p) in op.parameters.iter().enumerate() {
        if words.contains(&p.name.to_ascii_lowercase()) {
            found.push(Input::Param(j));
        }
    }
    if let Some((_, schema)) = op.request_body.as_ref().and_then(|b| b.primary_schema()) {
        for name in api.resolve(schema).properties.keys() {
            if words.contains(&name.to_ascii_lowercase()) {
                found.push(Input::Field(vec![name.clone()]));
            }
        }
    }
    (found.len() == 1).then(|| found.remove(0))
}
