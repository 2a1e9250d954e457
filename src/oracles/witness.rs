//! Completing a witness: a test may use an id that an earlier test created
//! (the search reuses values across tests), and the fault may need what
//! earlier tests did to that resource (a PATCH, a cancel). A reproducer must
//! do it all itself, so the run remembers which successful request created
//! or changed which id, and a witness is completed with those requests,
//! transitively.

use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::Value;

use crate::execution::Exchange;

/// Ids remembered.
const IDS: usize = 4096;

/// Resources remembered per id (ids of different resources collide: book 4,
/// author 4, and every author's book 4).
const PER_ID: usize = 16;

/// Changes remembered per resource (the latest).
const CHANGES: usize = 8;

/// Requests added to complete one witness, at most.
const MAX_ADDED: usize = 12;

/// What the run did to one resource.
#[derive(Default)]
struct Resource {
    creator: Option<Arc<Exchange>>,
    changes: Vec<Arc<Exchange>>,
}

/// Which successful request created or changed which resource, by id.
#[derive(Default)]
pub struct Ledger {
    by_id: IndexMap<String, IndexMap<String, Resource>>,
    /// Paths a DELETE removed during the run.
    deleted: std::collections::HashSet<String>,
}

/// The text of a scalar as it travels in a path: `4` and `"4"` are the same id.
pub(crate) fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The ids an answer gives: its `Location`'s last segment and its body's `id`.
pub fn given_ids(ex: &Exchange) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(loc) = ex.header("location") {
        if let Some(id) = crate::execution::wire::location_id(loc)
            .as_ref()
            .and_then(text)
        {
            out.push(id);
        }
    }
    if let Some(id) = ex.json().and_then(|b| b.get("id")).and_then(text) {
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

/// Whether a field or parameter name names an identifier (`id`, `bookId`).
pub(crate) fn is_id_name(name: &str) -> bool {
    crate::model::names::words(name)
        .last()
        .is_some_and(|w| crate::model::names::is_id_like(w))
}

/// Whether path parameter `name` of the path template `path` names one
/// resource (`/books/{bookId}`, `/users/{username}`, `/pets/{pet}`, a uuid)
/// rather than an argument of a computation (`/calc/{n}/{x}`,
/// `/delay/{seconds}`, an echo's `/anything/{anything}`).
pub fn identifies(path: &str, name: &str, schema: &crate::model::Schema) -> bool {
    use crate::model::names;
    if names::words(name)
        .last()
        .is_some_and(|w| names::is_identifying(w))
        || schema.format.as_deref() == Some("uuid")
    {
        return true;
    }
    // `/pets/{pet}`: the singular of the collection above it.
    let marker = format!("{{{name}}}");
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let Some(at) = segments.iter().position(|s| *s == marker) else {
        return false;
    };
    let Some(collection) = at.checked_sub(1).map(|i| segments[i].to_ascii_lowercase()) else {
        return false;
    };
    let single = names::singular(&collection);
    single != collection && names::words(name).first() == Some(&single)
}

/// Whether `op`'s path ends in a parameter that names one resource
/// (`/books/{bookId}`): a collection (`/books`) or a computation
/// (`/calc/{n}`) is no single resource.
pub fn names_one_resource(op: &crate::model::Operation) -> bool {
    let Some(last) = op.path.trim_end_matches('/').rsplit('/').next() else {
        return false;
    };
    let Some(name) = last.strip_prefix('{').and_then(|s| s.strip_suffix('}')) else {
        return false;
    };
    let schema = op
        .parameters
        .iter()
        .find(|p| p.location == crate::model::Location::Path && p.name == name)
        .map(|p| p.schema.clone())
        .unwrap_or_default();
    identifies(&op.path, name, &schema)
}

/// Id-like values a request sends, each with a hint of what it names (the
/// collection path above a path segment, or the field name).
pub fn sent_ids(ex: &Exchange) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let (path, query) = ex
        .request
        .path
        .split_once('?')
        .unwrap_or((&ex.request.path, ""));
    let mut prefix = String::new();
    for seg in path.split('/').filter(|s| !s.is_empty()) {
        let value = percent_encoding::percent_decode_str(seg)
            .decode_utf8_lossy()
            .into_owned();
        out.push((value, prefix.clone()));
        prefix.push('/');
        prefix.push_str(seg);
    }
    for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
        if is_id_name(&k) && !v.is_empty() {
            out.push((v.into_owned(), k.into_owned()));
        }
    }
    if let Some(body) = ex.request.body.as_deref() {
        if let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(body) {
            for (k, v) in fields {
                if is_id_name(&k) {
                    if let Some(t) = text(&v) {
                        out.push((t, k));
                    }
                }
            }
        }
    }
    out
}

/// Whether a state-changing answer among `earlier` carries `value` (as a
/// given id or any scalar of its body). A read that lists the value does not
/// count: what it lists may exist only because of the run.
fn answered(earlier: &[Exchange], value: &str) -> bool {
    fn holds(v: &Value, value: &str, depth: usize) -> bool {
        match v {
            Value::Object(m) => depth > 0 && m.values().any(|x| holds(x, value, depth - 1)),
            Value::Array(a) => depth > 0 && a.iter().any(|x| holds(x, value, depth - 1)),
            other => text(other).as_deref() == Some(value),
        }
    }
    earlier.iter().filter(|e| e.request.is_mutation()).any(|e| {
        given_ids(e).iter().any(|id| id == value) || e.json().is_some_and(|b| holds(b, value, 4))
    })
}

/// The path of a `Location` (absolute or relative), without query.
fn location_path(location: &str) -> String {
    let path = if location.starts_with("http://") || location.starts_with("https://") {
        url::Url::parse(location)
            .map(|u| u.path().to_string())
            .unwrap_or_default()
    } else {
        location.to_string()
    };
    path.split(['?', '#'])
        .next()
        .unwrap_or("")
        .trim_end_matches('/')
        .to_string()
}

/// How well a resource path fits a field name (`/orders/26` for `orderId`).
fn fit(resource: &str, hint: &str) -> u8 {
    let collection = resource
        .rsplit('/')
        .nth(1)
        .unwrap_or("")
        .to_ascii_lowercase();
    let word = collection.trim_end_matches('s');
    u8::from(!word.is_empty() && hint.to_ascii_lowercase().contains(word))
}

impl Ledger {
    /// An empty ledger.
    pub fn new() -> Ledger {
        Ledger::default()
    }

    fn resource(&mut self, id: String, path: String) -> &mut Resource {
        if !self.by_id.contains_key(&id) && self.by_id.len() >= IDS {
            self.by_id.shift_remove_index(0);
        }
        let resources = self.by_id.entry(id).or_default();
        if !resources.contains_key(&path) && resources.len() >= PER_ID {
            resources.shift_remove_index(0);
        }
        resources.entry(path).or_default()
    }

    /// Remembers a successful state-changing request: as the creator of the
    /// resources its answer names (`Location`, body `id`), and as a change of
    /// the resources its path names (`/orders/26/cancel` changes `/orders/26`).
    pub fn note(&mut self, ex: &Exchange) {
        if !ex.is_success() || !ex.request.is_mutation() {
            return;
        }
        let path = ex.request.path.split('?').next().unwrap_or("");
        if ex.request.method == "DELETE" && self.deleted.len() < IDS * 4 {
            self.deleted.insert(path.trim_end_matches('/').to_string());
        }
        let shared = Arc::new(ex.clone());
        let mut created = Vec::new();
        // Only a POST, or an answer 201, creates: an update echoes its resource's id.
        let creates = ex.request.method == "POST" || ex.status == Some(201);
        for id in given_ids(ex).into_iter().filter(|_| creates) {
            let at = match ex.header("location") {
                Some(l) if location_path(l).ends_with(&format!("/{id}")) => location_path(l),
                _ => format!("{}/{id}", path.trim_end_matches('/')),
            };
            created.push(at.clone());
            self.resource(id, at).creator = Some(shared.clone());
        }
        if !created.is_empty() || ex.request.method == "DELETE" {
            // A creation under a parent (`POST /authors/1/books`) does not
            // change the parent; and a deletion is not replayed before a later
            // use (a reproducer or a suite file must not delete what others,
            // or the seed data, rely on).
            return;
        }
        // A change acts on the deepest resource its path names:
        // `/orders/26/cancel` changes `/orders/26`, `/authors/1/books/2` the book.
        let mut prefix = String::new();
        let mut deepest = None;
        for seg in path.split('/').filter(|s| !s.is_empty()) {
            prefix.push('/');
            prefix.push_str(seg);
            let id = percent_encoding::percent_decode_str(seg)
                .decode_utf8_lossy()
                .into_owned();
            // Literal segments (`orders`, `cancel`) name no resource; ids have
            // digits, or were created during the run.
            if id.chars().any(|c| c.is_ascii_digit()) || self.by_id.contains_key(&id) {
                deepest = Some((id, prefix.clone()));
            }
        }
        if let Some((id, at)) = deepest {
            let r = self.resource(id, at);
            r.changes.push(shared);
            if r.changes.len() > CHANGES {
                r.changes.remove(0);
            }
        }
    }

    /// Whether `path`, or a resource above it, was deleted during the run.
    pub fn deleted(&self, path: &str) -> bool {
        let path = path.split('?').next().unwrap_or("");
        let mut prefix = String::new();
        for seg in path.split('/').filter(|s| !s.is_empty()) {
            prefix.push('/');
            prefix.push_str(seg);
            if self.deleted.contains(&prefix) {
                return true;
            }
        }
        false
    }

    /// Whether a request of `ex` names, by path or by an id-like field, a
    /// resource the run deleted.
    pub fn names_deleted(&self, ex: &Exchange) -> bool {
        if self.deleted(&ex.request.path) {
            return true;
        }
        sent_ids(ex).iter().any(|(value, hint)| {
            !hint.starts_with('/')
                && self
                    .deleted
                    .iter()
                    .any(|d| d.ends_with(&format!("/{value}")) && fit(d, hint) > 0)
        })
    }

    /// `exchanges`, preceded by the earlier requests that created the
    /// resources they name and changed them since (transitively, in run
    /// order), unless an earlier exchange of theirs gave the id.
    pub fn complete(&self, exchanges: &[Exchange]) -> Vec<Exchange> {
        let mut added: Vec<Arc<Exchange>> = Vec::new();
        let mut todo: Vec<Exchange> = exchanges.to_vec();
        let mut guard = 0;
        while let Some(consumer) = todo.pop() {
            guard += 1;
            if guard > 64 || added.len() >= MAX_ADDED {
                break;
            }
            let position = exchanges
                .iter()
                .position(|e| e.seq == consumer.seq)
                .unwrap_or(0);
            let earlier = &exchanges[..position];
            for (value, hint) in sent_ids(&consumer) {
                if answered(earlier, &value)
                    || added
                        .iter()
                        .any(|a| a.seq < consumer.seq && given_ids(a).contains(&value))
                {
                    continue;
                }
                let Some(resources) = self.by_id.get(&value) else {
                    continue;
                };
                let resource = if hint.starts_with('/') {
                    let at = format!(
                        "{hint}/{}",
                        crate::execution::wire::encode_segment(&Value::String(value.clone()))
                    );
                    resources.get(&at)
                } else {
                    resources
                        .iter()
                        .filter(|(_, r)| r.creator.as_ref().is_some_and(|c| c.seq < consumer.seq))
                        .max_by_key(|(path, r)| {
                            (fit(path, &hint), r.creator.as_ref().map(|c| c.seq))
                        })
                        .map(|(_, r)| r)
                };
                let Some(resource) = resource else { continue };
                let creator = resource.creator.as_ref().filter(|c| c.seq < consumer.seq);
                let changes = resource
                    .changes
                    .iter()
                    .filter(|c| c.seq < consumer.seq && creator.is_none_or(|k| c.seq > k.seq));
                for c in creator.into_iter().chain(changes) {
                    if !added.iter().any(|a| a.seq == c.seq) && added.len() < MAX_ADDED {
                        added.push(c.clone());
                        todo.push((**c).clone());
                    }
                }
            }
        }
        added.sort_by_key(|a| a.seq);
        added
            .into_iter()
            .map(|a| (*a).clone())
            .chain(exchanges.iter().cloned())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Schema, SchemaType};

    #[test]
    fn identifiers_are_told_from_arguments() {
        let int = Schema::of_type(SchemaType::Integer);
        let text = Schema::of_type(SchemaType::String);
        assert!(identifies("/books/{bookId}", "bookId", &int));
        assert!(identifies("/users/{username}", "username", &text));
        assert!(identifies("/tenants/{tenant_name}", "tenant_name", &text));
        assert!(identifies("/pets/{pet}", "pet", &text));
        let uuid = Schema {
            format: Some("uuid".into()),
            ..text.clone()
        };
        assert!(identifies("/runs/{run}", "run", &uuid));
        assert!(!identifies("/calc/{n}/{x}", "n", &int));
        assert!(!identifies("/calc/{n}/{x}", "x", &int));
        assert!(!identifies("/delay/{delay}", "delay", &int));
        assert!(!identifies("/anything/{anything}", "anything", &text));
    }
}
