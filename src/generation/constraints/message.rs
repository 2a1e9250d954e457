//! The text of a server's answer as rules are read from it: its strings
//! gathered, split into sentences, quoted at a bounded length, and the
//! inputs its words name.

use serde_json::Value;

use crate::model::{Api, Location, Operation};

/// The sentences of a message: split at line ends, semicolons and full
/// stops that end a word (not the dot of "end with '.'" or of `1.5`).
pub(super) fn sentences(text: &str) -> impl Iterator<Item = &str> {
    text.split(['\n', ';'])
        .flat_map(|line| line.split(". "))
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// A message as reports quote it: at most 200 characters.
pub(super) fn cut(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// The text of an answer's message: every string of a JSON body (and the
/// keys of its top two levels, where Django REST framework names the
/// fields), else the body itself.
pub fn message_text(body: Option<&Value>, text: &str) -> String {
    fn walk(v: &Value, out: &mut String, depth: usize) {
        if depth > 6 {
            return;
        }
        match v {
            Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Value::Array(items) => items.iter().for_each(|i| walk(i, out, depth + 1)),
            Value::Object(map) => {
                for (k, v) in map {
                    if depth < 2 {
                        out.push_str(k);
                        out.push('\n');
                    }
                    walk(v, out, depth + 1);
                }
            }
            _ => {}
        }
    }
    match body {
        Some(b) => {
            let mut out = String::new();
            walk(b, &mut out, 0);
            out
        }
        None => text.to_string(),
    }
}

/// Whether a message's `words` ([`names::words`](crate::model::names::words)
/// of its text) name the input `name`: its words appear in a row
/// (`server_id` in "unknown server id", `X-API-Version` in "bad API
/// version": a leading `x` dropped).
pub fn names_input(words: &[String], name: &str) -> bool {
    let mut own = crate::model::names::words(name);
    if own.len() > 1 && own[0] == "x" {
        own.remove(0);
    }
    !own.is_empty() && words.windows(own.len()).any(|w| w == own.as_slice())
}

/// The parameters and top-level body fields of `op` an answer's message
/// names.
pub fn named_inputs(
    api: &Api,
    op: &Operation,
    body: Option<&Value>,
    text: &str,
) -> Vec<(Location, String)> {
    let words = crate::model::names::words(&message_text(body, text));
    let mut out: Vec<(Location, String)> = op
        .parameters
        .iter()
        .filter(|p| names_input(&words, &p.name))
        .map(|p| (p.location, p.name.clone()))
        .collect();
    if let Some((_, schema)) = op.request_body.as_ref().and_then(|b| b.primary_schema()) {
        for name in api.resolve(schema).properties.keys() {
            if names_input(&words, name) {
                out.push((Location::Body, name.clone()));
            }
        }
    }
    out
}
