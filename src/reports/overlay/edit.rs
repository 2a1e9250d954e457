//! The overlay's actions, written against a working copy of the description
//! that each action changes as the overlay tools will: so an action is
//! computed from what the actions before it left (two fixes to one `type`
//! compose), an action that would change nothing is not written, and a test
//! can apply the whole overlay without a tool.
//!
//! What the tools do, and so what the actions keep to (checked against
//! `oas-patch` 0.6 and `openapi-overlays-js` 0.2):
//! - `update` merges an object into the object selected: objects merge,
//!   arrays are appended to, anything else is replaced. Both tools append
//!   arrays this way, so a value is added to `enum` by merging
//!   `{enum: [value]}` into the schema (an update selecting the array
//!   itself fails in `openapi-overlays-js`).
//! - An `update` never selects an array item (`…['allOf'][1]`):
//!   `oas-patch` fails on it. The array is removed and written again,
//!   changed, into the object that holds it.
//! - `remove` selects object members (several at once with
//!   `['type','items']`), or array items equal to a string with a filter.

use serde_json::{Map, Value};

use super::jsonpath;
use crate::model::source;

/// One action of the overlay.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Action {
    /// RFC 9535 JSONPath of what it changes.
    pub target: String,
    /// The cause it settles and its evidence, and what it does.
    pub description: String,
    /// The cause's id.
    pub cause: String,
    /// What it does.
    pub change: Change,
}

/// What an action does to the nodes it selects.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Change {
    /// Merges this object in.
    Update(Map<String, Value>),
    /// Removes them.
    Remove,
}

impl Action {
    /// The action as the overlay writes it.
    pub(super) fn to_value(&self) -> Value {
        let mut out = Map::new();
        out.insert("target".into(), Value::String(self.target.clone()));
        out.insert(
            "description".into(),
            Value::String(self.description.clone()),
        );
        match &self.change {
            Change::Update(patch) => out.insert("update".into(), Value::Object(patch.clone())),
            Change::Remove => out.insert("remove".into(), Value::Bool(true)),
        };
        out.insert(
            "x-cartograph-cause".into(),
            Value::String(self.cause.clone()),
        );
        Value::Object(out)
    }
}

/// Why the next actions are written: the cause and the sentence that says so.
#[derive(Debug, Clone)]
pub(super) struct Why {
    /// The cause's id.
    pub cause: String,
    /// The cause, its evidence and what the actions do.
    pub description: String,
}

/// The working copy and the actions written so far.
pub(super) struct Editor {
    /// The description as the actions so far leave it.
    pub doc: Value,
    /// The actions, in order.
    pub actions: Vec<Action>,
}

impl Editor {
    /// Starts from the description `doc`.
    pub(super) fn new(doc: Value) -> Editor {
        Editor {
            doc,
            actions: Vec::new(),
        }
    }

    /// The node at `at`, as the actions so far leave it.
    pub(super) fn get(&self, at: &[String]) -> Option<&Value> {
        source::get(&self.doc, at)
    }

    /// Merges `patch` into the object at `at`; false when that changes
    /// nothing (or there is no object there).
    pub(super) fn update(&mut self, at: &[String], patch: Map<String, Value>, why: &Why) -> bool {
        let Some(node) = self.get(at) else {
            return false;
        };
        if !node.is_object() || !changes(node, &patch) {
            return false;
        }
        if let Some((index, owner)) = array_item(&self.doc, at) {
            // Written again, changed, into the object that holds the array.
            let mut items = self.get(owner).cloned().unwrap_or_default();
            if let Some(item) = items.get_mut(index) {
                merge(item, &Value::Object(patch));
            }
            let (key, holder) = owner.split_last().expect("an array has an owner");
            let mut wrap = Map::new();
            wrap.insert(key.clone(), items);
            let (owner, holder) = (owner.to_vec(), holder.to_vec());
            self.remove(&owner, why);
            return self.update(&holder, wrap, why);
        }
        self.actions.push(Action {
            target: jsonpath::path(&self.doc, at),
            description: why.description.clone(),
            cause: why.cause.clone(),
            change: Change::Update(patch.clone()),
        });
        if let Some(node) = source_get_mut(&mut self.doc, at) {
            merge(node, &Value::Object(patch));
        }
        true
    }

    /// Removes the node at `at`; false when there is none.
    pub(super) fn remove(&mut self, at: &[String], why: &Why) -> bool {
        let Some((last, parent)) = at.split_last() else {
            return false;
        };
        if self.get(at).is_none() {
            return false;
        }
        self.actions.push(Action {
            target: jsonpath::path(&self.doc, at),
            description: why.description.clone(),
            cause: why.cause.clone(),
            change: Change::Remove,
        });
        match source_get_mut(&mut self.doc, parent) {
            Some(Value::Object(map)) => {
                map.shift_remove(last);
            }
            Some(Value::Array(items)) => {
                if let Ok(i) = last.parse::<usize>()
                    && i < items.len()
                {
                    items.remove(i);
                }
            }
            _ => {}
        }
        true
    }

    /// Removes the members `keys` of the object at `at` (those it has), in
    /// one action; false when it has none of them.
    pub(super) fn remove_keys(&mut self, at: &[String], keys: &[&str], why: &Why) -> bool {
        let Some(Value::Object(map)) = self.get(at) else {
            return false;
        };
        let present: Vec<String> = keys
            .iter()
            .filter(|k| map.contains_key(**k))
            .map(|k| k.to_string())
            .collect();
        match present.as_slice() {
            [] => false,
            [one] => {
                let mut path = at.to_vec();
                path.push(one.clone());
                self.remove(&path, why)
            }
            many => {
                self.actions.push(Action {
                    target: jsonpath::names(&self.doc, at, many),
                    description: why.description.clone(),
                    cause: why.cause.clone(),
                    change: Change::Remove,
                });
                if let Some(Value::Object(map)) = source_get_mut(&mut self.doc, at) {
                    for k in many {
                        map.shift_remove(k);
                    }
                }
                true
            }
        }
    }

    /// Removes the items equal to the string `item` from the array at `at`;
    /// false when it holds none.
    pub(super) fn remove_item(&mut self, at: &[String], item: &str, why: &Why) -> bool {
        let Some(Value::Array(items)) = self.get(at) else {
            return false;
        };
        if !items.iter().any(|v| v.as_str() == Some(item)) {
            return false;
        }
        self.actions.push(Action {
            target: jsonpath::items_equal(&self.doc, at, item),
            description: why.description.clone(),
            cause: why.cause.clone(),
            change: Change::Remove,
        });
        if let Some(Value::Array(items)) = source_get_mut(&mut self.doc, at) {
            items.retain(|v| v.as_str() != Some(item));
        }
        true
    }
}

/// When `at` is an item of an array: its index and the array's place.
fn array_item<'a>(doc: &Value, at: &'a [String]) -> Option<(usize, &'a [String])> {
    let (last, parent) = at.split_last()?;
    match source::get(doc, parent)? {
        Value::Array(_) => Some((last.parse().ok()?, parent)),
        _ => None,
    }
}

fn source_get_mut<'a>(root: &'a mut Value, tokens: &[String]) -> Option<&'a mut Value> {
    let mut at = root;
    for t in tokens {
        at = match at {
            Value::Object(map) => map.get_mut(t)?,
            Value::Array(items) => items.get_mut(t.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(at)
}

/// Merges `patch` into `into` as the overlay tools do: objects member by
/// member, arrays appended to, anything else replaced.
pub(super) fn merge(into: &mut Value, patch: &Value) {
    match (into, patch) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                match a.get_mut(k) {
                    Some(existing)
                        if (existing.is_object() && v.is_object())
                            || (existing.is_array() && v.is_array()) =>
                    {
                        merge(existing, v)
                    }
                    _ => {
                        a.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => a.extend(b.iter().cloned()),
        (into, patch) => *into = patch.clone(),
    }
}

/// Whether merging `patch` into `node` changes it.
fn changes(node: &Value, patch: &Map<String, Value>) -> bool {
    patch.iter().any(|(k, v)| match (node.get(k), v) {
        (None, _) => true,
        (Some(existing @ Value::Object(_)), Value::Object(p)) => changes(existing, p),
        (Some(Value::Array(_)), Value::Array(p)) => !p.is_empty(),
        (Some(existing), v) => existing != v,
    })
}

/// Applies the overlay actions `actions` (as the document writes them) to
/// `doc`, as the tools do: the test of a whole overlay without a tool. Only
/// the targets [`jsonpath`] writes are read.
#[cfg(test)]
pub(super) fn apply(doc: &mut Value, actions: &[Value]) {
    for a in actions {
        let target = a["target"].as_str().expect("a target");
        let (tokens, tail) = parse_target(target);
        let remove = a.get("remove") == Some(&Value::Bool(true));
        match (a.get("update"), remove, tail) {
            (Some(patch), false, Tail::None) => {
                let node = source_get_mut(doc, &tokens).expect("an update's target exists");
                assert!(node.is_object(), "{target}");
                merge(node, patch);
            }
            (_, true, Tail::None) => {
                let (last, parent) = tokens.split_last().unwrap();
                match source_get_mut(doc, parent).unwrap() {
                    Value::Object(m) => {
                        m.shift_remove(last);
                    }
                    Value::Array(items) => {
                        items.remove(last.parse::<usize>().unwrap());
                    }
                    _ => panic!("{target}"),
                }
            }
            (_, true, Tail::Names(names)) => {
                if let Some(Value::Object(m)) = source_get_mut(doc, &tokens) {
                    for n in names {
                        m.shift_remove(&n);
                    }
                }
            }
            (_, true, Tail::Equal(item)) => {
                if let Some(Value::Array(items)) = source_get_mut(doc, &tokens) {
                    items.retain(|v| v.as_str() != Some(item.as_str()));
                }
            }
            _ => panic!("an update selects one node: {target}"),
        }
    }
}

#[cfg(test)]
enum Tail {
    None,
    Names(Vec<String>),
    Equal(String),
}

/// The tokens of a target [`jsonpath`] wrote, and its last segment when
/// that selects several names or filters items.
#[cfg(test)]
fn parse_target(target: &str) -> (Vec<String>, Tail) {
    let mut rest = target.strip_prefix('$').unwrap();
    let mut tokens = Vec::new();
    let mut tail = Tail::None;
    while let Some(r) = rest.strip_prefix('[') {
        if let Some(r) = r.strip_prefix("?(@ == ") {
            let (s, r) = literal(r);
            tail = Tail::Equal(s);
            rest = r.strip_prefix(")]").unwrap();
            continue;
        }
        if r.starts_with(|c: char| c.is_ascii_digit()) {
            let end = r.find(']').unwrap();
            tokens.push(r[..end].to_string());
            rest = &r[end + 1..];
            continue;
        }
        let mut names = Vec::new();
        let mut r = r;
        loop {
            let (s, after) = literal(r);
            names.push(s);
            match after.strip_prefix(',') {
                Some(a) => r = a,
                None => {
                    rest = after.strip_prefix(']').unwrap();
                    break;
                }
            }
        }
        if names.len() == 1 {
            tokens.push(names.pop().unwrap());
        } else {
            tail = Tail::Names(names);
        }
    }
    assert!(rest.is_empty(), "unread: {rest}");
    (tokens, tail)
}

/// An RFC 9535 string literal at the start of `s`, and what follows it.
#[cfg(test)]
fn literal(s: &str) -> (String, &str) {
    let quote = s.chars().next().unwrap();
    let mut out = String::new();
    let mut chars = s[1..].char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                let (_, e) = chars.next().unwrap();
                match e {
                    'b' => out.push('\u{8}'),
                    'f' => out.push('\u{c}'),
                    'n' => out.push('\n'),
                    'r' => out.push('\r'),
                    't' => out.push('\t'),
                    'u' => {
                        let hex: String = (0..4).map(|_| chars.next().unwrap().1).collect();
                        out.push(char::from_u32(u32::from_str_radix(&hex, 16).unwrap()).unwrap());
                    }
                    other => out.push(other),
                }
            }
            c if c == quote => return (out, &s[1 + i + 1..]),
            c => out.push(c),
        }
    }
    panic!("unterminated literal in {s}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn why() -> Why {
        Why {
            cause: "C00000001".into(),
            description: "test".into(),
        }
    }

    fn t(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn an_item_of_an_array_is_updated_through_the_object_that_holds_it() {
        let doc = json!({"s": {"allOf": [{"$ref": "#/x"}, {"type": "object"}]}});
        let mut e = Editor::new(doc.clone());
        assert!(e.update(
            &t(&["s", "allOf", "1"]),
            obj(json!({"nullable": true})),
            &why()
        ));
        assert_eq!(
            e.doc,
            json!({"s": {"allOf": [{"$ref": "#/x"}, {"type": "object", "nullable": true}]}})
        );
        let targets: Vec<(&str, bool)> = e
            .actions
            .iter()
            .map(|a| (a.target.as_str(), a.change == Change::Remove))
            .collect();
        assert_eq!(targets, [("$['s']['allOf']", true), ("$['s']", false)]);
        let mut applied = doc;
        let written: Vec<Value> = e.actions.iter().map(Action::to_value).collect();
        apply(&mut applied, &written);
        assert_eq!(applied, e.doc);
    }

    #[test]
    fn an_update_that_changes_nothing_is_not_written() {
        let mut e = Editor::new(json!({"s": {"type": "string", "enum": ["a"]}}));
        assert!(!e.update(&t(&["s"]), obj(json!({"type": "string"})), &why()));
        assert!(!e.update(&t(&["s"]), obj(json!({"enum": []})), &why()));
        assert!(!e.update(&t(&["nowhere"]), obj(json!({"a": 1})), &why()));
        assert!(e.update(&t(&["s"]), obj(json!({"enum": ["b"]})), &why()));
        assert_eq!(e.doc["s"]["enum"], json!(["a", "b"]));
        assert_eq!(e.actions.len(), 1);
    }

    #[test]
    fn removals_select_members_or_equal_items() {
        let doc = json!({"s": {"type": "integer", "minimum": 1, "required": ["a", "o'b", "a"]}});
        let mut e = Editor::new(doc.clone());
        assert!(e.remove_item(&t(&["s", "required"]), "a", &why()));
        assert!(!e.remove_item(&t(&["s", "required"]), "zz", &why()));
        assert!(e.remove_keys(&t(&["s"]), &["type", "minimum", "pattern"], &why()));
        assert_eq!(e.doc, json!({"s": {"required": ["o'b"]}}));
        assert_eq!(e.actions[0].target, "$['s']['required'][?(@ == 'a')]");
        assert_eq!(e.actions[1].target, "$['s']['type','minimum']");
        let mut applied = doc;
        let written: Vec<Value> = e.actions.iter().map(Action::to_value).collect();
        apply(&mut applied, &written);
        assert_eq!(applied, e.doc);
    }
}
