//! The findings of one answer: kept once per (kind, root field, path) and
//! capped, and how paths and values are written in messages.

use std::collections::HashSet;

use serde_json::Value;

use super::Kind;
use super::{Answer, GraphqlFinding, MAX_FINDINGS};

/// The findings of one response, deduplicated and capped.
#[derive(Default)]
pub(super) struct Out {
    pub(super) items: Vec<GraphqlFinding>,
    /// (kind, location) pairs already found in this answer.
    pub(super) seen: HashSet<(Kind, String)>,
    pub(super) covered: indexmap::IndexSet<(String, String)>,
    pub(super) data_roots: Vec<String>,
}

impl Out {
    pub(super) fn answer(self) -> Answer {
        Answer {
            findings: self.items,
            covered: self.covered.into_iter().collect(),
            data_roots: self.data_roots,
        }
    }

    /// Records a finding, once per (kind, location) in one answer.
    pub(super) fn push(
        &mut self,
        kind: Kind,
        root_field: String,
        path: String,
        location: String,
        message: String,
    ) {
        if self.items.len() >= MAX_FINDINGS {
            return;
        }
        if self.seen.insert((kind, location.clone())) {
            self.items.push(GraphqlFinding {
                kind,
                root_field,
                path,
                location,
                message,
                seen: None,
            });
        }
    }
}

/// One step of a response path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Seg {
    Key(String),
    Index(usize),
}

/// `data.a[*].b`: the signature form of a path.
pub(super) fn render(path: &[Seg]) -> String {
    let mut s = String::from("data");
    for seg in path {
        match seg {
            Seg::Key(k) => {
                s.push('.');
                s.push_str(k);
            }
            Seg::Index(_) => s.push_str("[*]"),
        }
    }
    s
}

pub(super) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a fractional number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A short, bounded rendering of a value for messages.
pub(super) fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s
    }
}
