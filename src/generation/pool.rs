//! Values seen in responses, keyed by `Schema.property`, by bare field name and
//! by the collection a `Location` header pointed into; and the harvesting that
//! fills such a pool from one exchange.

use std::collections::HashMap;

use rand::Rng;
use serde_json::Value;

use super::plan::Wanted;
use super::values::Rng64;
use crate::execution::Exchange;
use crate::execution::wire::location_id;

/// Values a run's pool keeps per key.
pub const POOL_DEPTH: usize = 16;

/// Objects of a list response harvested: enough to vary ids, and bounded as
/// collections grow during a run.
const HARVEST_ITEMS: usize = 8;

/// Collections remembered for `Location` ids: one key per concrete
/// collection path (each author's books) and per identifying property its
/// members have ([`member_key`]), so their number grows with the run.
const LOCATIONS: usize = 512;

/// A bounded store of recently seen values per key.
#[derive(Debug, Clone)]
pub struct ValuePool {
    depth: usize,
    values: HashMap<String, Vec<Value>>,
    /// `location:` keys, oldest first, at most [`LOCATIONS`].
    locations: indexmap::IndexMap<String, Vec<Value>>,
    /// The values the lists pushed out (16 per key), by field name, at
    /// most [`GIVEN`] in all: a reproducer may still send one. Noted as
    /// they go, not as they come, so that the answers that repeat what a
    /// list holds (nearly all) cost nothing.
    forgotten: Given,
}

/// Values by field name, at most [`GIVEN`] in all.
#[derive(Debug, Clone, Default)]
struct Given {
    values: HashMap<String, std::collections::HashSet<String>>,
    count: usize,
}

impl Given {
    /// Notes `value`, kept under pool key `key`, when it is a field's:
    /// fields of schemas (`Dag.file_token`), fields by their bare name,
    /// identifying properties of collections' members; bare ids of
    /// `Location`s are left out (what names a resource is the ledger's
    /// business).
    fn note(&mut self, key: &str, value: &Value) {
        if self.count >= GIVEN || !matches!(value, Value::String(_) | Value::Number(_)) {
            return;
        }
        let field = match key.strip_prefix(LOCATION) {
            Some(member) => match member.rsplit_once('#') {
                Some((_, p)) => p,
                None => return,
            },
            None => key.rsplit_once('.').map_or(key, |(_, f)| f),
        };
        let text = crate::execution::wire::text_of(value);
        if let Some(values) = self.values.get_mut(field) {
            if values.contains(text.as_ref()) {
                return;
            }
            values.insert(text.into_owned());
        } else {
            self.values.insert(
                field.to_string(),
                std::iter::once(text.into_owned()).collect(),
            );
        }
        self.count += 1;
    }
}

/// Values [`ValuePool::given`] remembers in all.
const GIVEN: usize = 20_000;

impl ValuePool {
    /// A pool keeping the last `depth` distinct values per key.
    pub fn new(depth: usize) -> ValuePool {
        ValuePool {
            depth: depth.max(1),
            values: HashMap::new(),
            locations: indexmap::IndexMap::new(),
            forgotten: Given::default(),
        }
    }

    fn list(&self, key: &str) -> Option<&Vec<Value>> {
        if key.starts_with(LOCATION) {
            self.locations.get(key)
        } else {
            self.values.get(key)
        }
    }

    /// [`ValuePool::add`] without copying the key or the value when the
    /// value is the key's latest already: every answer repeats most of
    /// what the last one said.
    fn add_ref(&mut self, key: &str, value: &Value) {
        let list = if key.starts_with(LOCATION) {
            self.locations.get(key)
        } else {
            self.values.get(key)
        };
        if list.and_then(|l| l.last()) != Some(value) {
            self.add(key.to_string(), value.clone());
        }
    }

    /// The scalar values answers gave (or the client chose, in bodies the
    /// server accepted), as (field name, text): those the lists hold and
    /// those they pushed out: fields of schemas (`Dag.file_token`), fields
    /// by their bare name, identifying properties of collections' members.
    pub fn given(&self) -> Vec<(String, String)> {
        let mut all = self.forgotten.clone();
        all.count = 0;
        for (key, list) in self.values.iter().chain(self.locations.iter()) {
            for v in list {
                all.note(key, v);
            }
        }
        let mut out: Vec<(String, String)> = all
            .values
            .into_iter()
            .flat_map(|(field, values)| values.into_iter().map(move |v| (field.clone(), v)))
            .collect();
        out.sort();
        out
    }

    /// Remembers `value` under `key`.
    pub fn add(&mut self, key: String, value: Value) {
        let in_locations = key.starts_with(LOCATION);
        let held = if in_locations {
            self.locations.get_mut(&key)
        } else {
            self.values.get_mut(&key)
        };
        if let Some(list) = held {
            if list.last() != Some(&value) {
                list.retain(|v| v != &value);
                list.push(value);
                if list.len() > self.depth {
                    let gone = list.remove(0);
                    self.forgotten.note(&key, &gone);
                }
            }
            return;
        }
        if in_locations && self.locations.len() >= LOCATIONS {
            // The oldest eighth at once: one at a time shifted the other
            // 511 keys on every new collection (each `PUT /items/{id}`
            // names one).
            for (k, list) in self.locations.drain(..LOCATIONS / 8) {
                for v in &list {
                    self.forgotten.note(&k, v);
                }
            }
        }
        if in_locations {
            self.locations.insert(key, vec![value]);
        } else {
            self.values.insert(key, vec![value]);
        }
    }

    /// Forgets `value` under every key that holds identifiers (a deleted
    /// resource's id): `location:` keys and keys whose last word is `id`-like
    /// (`Book.id`, `bookId`). A quantity that happens to equal the id stays.
    pub fn forget(&mut self, value: &Value) {
        // Ids travel as numbers in bodies and as text in paths: "7" is 7.
        let number = match value {
            Value::String(s) => s.parse::<i64>().ok(),
            Value::Number(n) => n.as_i64(),
            _ => None,
        };
        let text = match value {
            Value::String(s) => Some(s.as_str()),
            _ => None,
        };
        let same = |v: &Value| match v {
            Value::Number(n) => number.is_some() && n.as_i64() == number,
            Value::String(s) => {
                text == Some(s.as_str()) || (number.is_some() && s.parse::<i64>().ok() == number)
            }
            other => other == value,
        };
        let identifies =
            |key: &str| crate::model::names::is_id_name(key.rsplit('.').next().unwrap_or(key));
        // Whether a key identifies takes splitting its name into words:
        // asked only of the few lists that hold the value.
        #[expect(
            clippy::iter_over_hash_type,
            reason = "each list is filtered on its own: the order cannot show"
        )]
        for (key, list) in self.values.iter_mut() {
            if list.iter().any(same) && identifies(key) {
                list.retain(|v| !same(v));
            }
        }
        for list in self.locations.values_mut() {
            list.retain(|v| !same(v));
        }
    }

    /// Whether `value` is held under `key` (ids travel as numbers in bodies
    /// and as text in paths: "7" is 7).
    pub fn holds(&self, key: &str, value: &Value) -> bool {
        let Some(list) = self.list(key) else {
            return false;
        };
        list.iter().any(|v| {
            v == value
                || (matches!(value, Value::String(_)) != matches!(v, Value::String(_))
                    && crate::execution::wire::as_text(v) == crate::execution::wire::as_text(value))
        })
    }

    /// Whether `value` names a member of the collection at path
    /// `collection`: its id, or one of its identifying properties
    /// ([`member_key`]).
    pub fn holds_member(&self, collection: &str, value: &Value) -> bool {
        self.holds(&location_key(collection), value)
            || crate::model::names::IDENTIFYING
                .iter()
                .any(|p| self.holds(&member_key(collection, p), value))
    }

    /// The most recent value under `key`.
    pub fn latest(&self, key: &str) -> Option<&Value> {
        self.list(key).and_then(|l| l.last())
    }

    /// A value under `key`: the most recent with probability `recent`, else any.
    pub fn pick(&self, key: &str, recent: f64, rng: &mut Rng64) -> Option<Value> {
        let list = self.list(key).filter(|l| !l.is_empty())?;
        if rng.random_bool(recent) {
            list.last().cloned()
        } else {
            Some(list[rng.random_range(0..list.len())].clone())
        }
    }

    /// A member of the collection at path `collection` whose own
    /// collection below (the collection's path, the member, then `below`:
    /// `/projects` → `/projects/7/boards`) holds members, when one does: a
    /// child id then comes from under the same parent. The member is named
    /// by `property` (its `name` where the path takes names, see
    /// [`member_key`]), or by its id when `property` is `None`. Otherwise
    /// any member so named, as [`ValuePool::pick`] gives it.
    pub fn pick_parent(
        &self,
        collection: &str,
        below: &str,
        property: Option<&str>,
        recent: f64,
        rng: &mut Rng64,
    ) -> Option<Value> {
        let key = match property {
            Some(p) => member_key(collection, p),
            None => location_key(collection),
        };
        let list = self.list(&key).filter(|l| !l.is_empty())?;
        let with_children: Vec<&Value> = list
            .iter()
            .filter(|v| {
                let child = format!(
                    "{collection}/{}{below}",
                    crate::execution::wire::encode_segment(v)
                );
                self.list(&location_key(&child))
                    .is_some_and(|l| !l.is_empty())
            })
            .collect();
        if with_children.is_empty() {
            return self.pick(&key, recent, rng);
        }
        Some(with_children[rng.random_range(0..with_children.len())].clone())
    }

    /// The members of the collection at path `collection` under which a
    /// collection `below` holds members here (`/pools`, `/queues` give `P`
    /// for `/pools/P/queues`), as their path segments read.
    pub fn parents_with_children(&self, collection: &str, below: &str) -> Vec<Value> {
        let above = format!("{}/", location_key(collection));
        let mut parents: Vec<Value> = Vec::new();
        for (key, list) in &self.locations {
            let Some(rest) = key.strip_prefix(&above) else {
                continue;
            };
            let rest = rest.split_once('#').map_or(rest, |(r, _)| r);
            let Some(segment) = rest.strip_suffix(below) else {
                continue;
            };
            if list.is_empty() || segment.is_empty() || segment.contains('/') {
                continue;
            }
            let v = Value::String(
                percent_encoding::percent_decode_str(segment)
                    .decode_utf8_lossy()
                    .into_owned(),
            );
            if !parents.contains(&v) {
                parents.push(v);
            }
        }
        parents
    }

    /// Learns from a successful exchange: the produced schemas' properties at
    /// their documented places (`produced`: schema, JSON path), every scalar
    /// field by name, and the id a `Location` header (or, failing that, the
    /// body's `id`) gives to the collection a POST created into.
    pub fn harvest(&mut self, produced: &[(String, String)], wanted: &Wanted, ex: &Exchange) {
        if !ex.is_success() {
            return;
        }
        let body = ex.json();
        if let Some(body) = body {
            // One key buffer for every field: most answers add nothing new.
            let mut key = String::new();
            for (schema, path) in produced {
                for obj in crate::graph::select(body, path)
                    .into_iter()
                    .take(HARVEST_ITEMS)
                {
                    if let Value::Object(fields) = obj {
                        for (k, v) in fields {
                            if wanted.property(schema, k) {
                                key.clear();
                                key.push_str(schema);
                                key.push('.');
                                key.push_str(k);
                                for v in scalars(v) {
                                    self.add_ref(&key, v);
                                }
                            }
                        }
                    }
                }
            }
            self.map_keys(produced, wanted, body);
            self.collect_by_name(body, wanted, 0);
            if ex.request.method == "GET" {
                self.listed_names(&ex.request.path, wanted, body);
            }
            if let Some(collection) = listed_collection(&ex.request.method, &ex.request.path) {
                self.listed_members(collection, body);
            }
        }
        if ex.request.method != "POST" && ex.request.method != "PUT" {
            return;
        }
        let collection = ex.request.path.split('?').next().unwrap_or("");
        if let Some(made) = body.and_then(made_object) {
            self.add_member(collection, made);
        }
        let id = match ex.header("location").and_then(location_id) {
            Some(id) => Some(id),
            None => body.and_then(crate::execution::wire::body_id).cloned(),
        };
        if let Some(id) = id {
            self.add(location_key(collection), id.clone());
            for (schema, path) in produced {
                if path == "$" && wanted.property(schema, "id") {
                    self.add(format!("{schema}.id"), id.clone());
                }
            }
        }
    }

    /// Values the client chose for a creation whose answer names no id
    /// ([`chosen_ids`](crate::oracles::identity::chosen_ids)) are values of the request body's schema
    /// `body_schema` (`CreateTenantPayload.name`), where a binding reads
    /// them, unless `fed` says a binding gave the field its value (then it
    /// names something else, made before).
    pub fn harvest_request(
        &mut self,
        body_schema: &str,
        wanted: &Wanted,
        fed: &dyn Fn(&str) -> bool,
        ex: &Exchange,
    ) {
        for (field, v) in crate::oracles::identity::chosen_ids(ex) {
            if wanted.property(body_schema, field) && !fed(field) {
                self.add(format!("{body_schema}.{field}"), v);
            }
        }
    }

    /// The keys of maps whose values are a produced schema (`$.kernelspecs.*`)
    /// are values of its identifying property (a kernel spec's name) when the
    /// objects do not repeat them.
    fn map_keys(&mut self, produced: &[(String, String)], wanted: &Wanted, body: &Value) {
        for (schema, path) in produced {
            let Some(map_path) = path.strip_suffix(".*") else {
                continue;
            };
            let Some(property) = crate::model::names::IDENTIFYING
                .iter()
                .find(|p| wanted.property(schema, p))
            else {
                continue;
            };
            for map in crate::graph::select(body, map_path) {
                let Value::Object(entries) = map else {
                    continue;
                };
                for (key, value) in entries.iter().take(HARVEST_ITEMS) {
                    if value.get(*property).is_none() {
                        self.add(format!("{schema}.{property}"), Value::String(key.clone()));
                    }
                }
            }
        }
    }

    fn collect_by_name(&mut self, v: &Value, wanted: &Wanted, depth: usize) {
        if depth > 4 {
            return;
        }
        match v {
            Value::Object(fields) => {
                for (k, v) in fields {
                    let values = scalars(v);
                    if values.is_empty() {
                        self.collect_by_name(v, wanted, depth + 1);
                    } else if wanted.name(k) {
                        for v in values {
                            self.add_ref(k, v);
                        }
                    }
                }
            }
            Value::Array(items) => {
                for item in items.iter().take(HARVEST_ITEMS) {
                    self.collect_by_name(item, wanted, depth + 1);
                }
            }
            _ => {}
        }
    }

    /// The members a listing names (`GET /servers` → `[{"id": "localhost"}]`,
    /// an envelope's `data[]` or `items[]`) are the ids of that collection:
    /// the path parameters below it take them as they take the ids
    /// created into it, whatever the description says (or leaves out)
    /// about the items; each identifying property of an item is also kept
    /// under its [`member_key`], for the paths that take names.
    fn listed_members(&mut self, collection: &str, body: &Value) {
        let items = match body {
            Value::Array(items) => items,
            Value::Object(fields) => match ENVELOPES
                .iter()
                .find_map(|k| fields.get(*k).and_then(Value::as_array))
            {
                Some(items) => items,
                None => return,
            },
            _ => return,
        };
        let key = location_key(collection);
        for item in items.iter().take(HARVEST_ITEMS) {
            let Value::Object(fields) = item else { return };
            let id = crate::model::names::IDENTIFYING
                .iter()
                .find_map(|p| fields.get(*p).filter(|v| is_scalar(v)));
            if let Some(id) = id {
                self.add_ref(&key, id);
            }
            self.add_member(collection, fields);
        }
    }

    /// Keeps each identifying property of `member`, an object of the
    /// collection at path `collection`, under its [`member_key`].
    fn add_member(&mut self, collection: &str, member: &serde_json::Map<String, Value>) {
        // One key buffer for every property: listings ask this per item.
        let mut key = String::new();
        for p in crate::model::names::IDENTIFYING {
            if let Some(v) = member.get(p).filter(|v| is_scalar(v)) {
                if key.is_empty() {
                    key = member_key(collection, "");
                }
                let base = key.rfind('#').map_or(key.len(), |i| i + 1);
                key.truncate(base);
                key.push_str(p);
                self.add_ref(&key, v);
            }
        }
    }

    /// A listing of bare values (`GET /tags` → `["red", "blue"]`) has no
    /// schema to hold them: they are values of the inputs named after what
    /// the path lists (`tag`, `tagName`, `tag_id`), which take pooled values
    /// by name.
    fn listed_names(&mut self, path: &str, wanted: &Wanted, body: &Value) {
        let Value::Array(items) = body else { return };
        if items.is_empty() || !items.iter().all(is_scalar) {
            return;
        }
        let path = path.split('?').next().unwrap_or("");
        let resource = crate::model::names::join(&crate::model::names::path_resource(path));
        if resource.is_empty() {
            return;
        }
        let mut names: Vec<&String> = wanted
            .names
            .iter()
            .filter(|n| {
                let key = crate::model::names::key(n);
                key.strip_prefix(resource.as_str()).is_some_and(|rest| {
                    rest.is_empty() || crate::model::names::is_identifying(rest)
                })
            })
            .collect();
        names.sort();
        for name in names {
            for v in items.iter().take(HARVEST_ITEMS) {
                self.add(name.clone(), v.clone());
            }
        }
    }
}

/// The scalar values `v` holds: itself, or the first elements of a list of
/// scalars (a pet's `tags` are each a value of `Pet.tags`).
/// A slice of what `v` already holds: asked for every field of every
/// answer, it allocates nothing.
pub(crate) fn scalars(v: &Value) -> &[Value] {
    match v {
        Value::Array(items) if !items.is_empty() && items.iter().all(is_scalar) => {
            &items[..items.len().min(HARVEST_ITEMS)]
        }
        v if is_scalar(v) => std::slice::from_ref(v),
        _ => &[],
    }
}

/// The fields of an envelope that hold a listing's items.
const ENVELOPES: [&str; 8] = [
    "data",
    "items",
    "results",
    "records",
    "entries",
    "content",
    "objects",
    "resources",
];

/// The pool key of ids created into the collection at this concrete path.
pub fn location_key(collection_path: &str) -> String {
    format!("{LOCATION}{}", collection_path.trim_end_matches('/'))
}

/// The pool key of the values of identifying `property` (`name`, `slug`)
/// of the members created into or listed in the collection at this
/// concrete path: a path that takes a pool's name gets a name, not the id
/// its creation answered with (`#` never stands in a request's path).
pub fn member_key(collection_path: &str, property: &str) -> String {
    format!("{}#{property}", location_key(collection_path))
}

/// Words a listing by `POST` ends in (`POST /work_pools/filter`): what
/// such a call answers are the members of the collection above it.
const LISTING_ACTIONS: [&str; 5] = ["filter", "search", "query", "list", "paginate"];

/// The collection whose members the answer to `method path` lists: a
/// `GET` lists its own path, a `POST` to a listing action (`filter`) the
/// path above it; `None` for any other call.
fn listed_collection<'a>(method: &str, path: &'a str) -> Option<&'a str> {
    let path = path.split('?').next().unwrap_or("");
    match method {
        "GET" => Some(path),
        "POST" => {
            let (above, last) = path.trim_end_matches('/').rsplit_once('/')?;
            LISTING_ACTIONS.contains(&last).then_some(above)
        }
        _ => None,
    }
}

/// Whether `POST path` lists the members of the collection above it
/// (`/work_pools/filter`).
pub(crate) fn lists_by_post(path: &str) -> bool {
    listed_collection("POST", path).is_some()
}

/// The object a creation answered with: the body, or its `data` envelope
/// when the body names no id (as [`body_id`](crate::execution::wire::body_id) reads it).
pub(crate) fn made_object(body: &Value) -> Option<&serde_json::Map<String, Value>> {
    let fields = body.as_object()?;
    match fields.get("data") {
        Some(Value::Object(data)) if !fields.contains_key("id") => Some(data),
        _ => Some(fields),
    }
}

/// The prefix of [`location_key`]s.
const LOCATION: &str = "location:";

fn is_scalar(v: &Value) -> bool {
    matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn exchange(method: &str, sent: Option<&str>, status: u16, body: &str) -> Exchange {
        Exchange {
            request: crate::execution::RequestSpec {
                method: method.into(),
                path: "/things".into(),
                body: sent.map(String::from),
                ..Default::default()
            },
            status: Some(status),
            body: body.into(),
            ..Default::default()
        }
    }

    fn wanting(schema: &str, props: &[&str]) -> Wanted {
        let mut wanted = Wanted::default();
        wanted
            .properties
            .insert(schema.into(), props.iter().map(|p| p.to_string()).collect());
        wanted
    }

    #[test]
    fn the_keys_of_a_map_of_objects_are_their_names() {
        let produced = vec![("KernelSpec".to_string(), "$.kernelspecs.*".to_string())];
        let wanted = wanting("KernelSpec", &["name"]);
        let mut pool = ValuePool::new(4);
        let body = r#"{"default": "python3", "kernelspecs": {"python3": {"spec": {}}}}"#;
        pool.harvest(&produced, &wanted, &exchange("GET", None, 200, body));
        assert_eq!(pool.latest("KernelSpec.name"), Some(&json!("python3")));
        // An object that says its own name is believed instead.
        let mut named = ValuePool::new(4);
        let body = r#"{"kernelspecs": {"py": {"name": "python3"}}}"#;
        named.harvest(&produced, &wanted, &exchange("GET", None, 200, body));
        assert_eq!(named.latest("KernelSpec.name"), Some(&json!("python3")));
    }

    #[test]
    fn a_name_the_client_chose_flows_when_the_answer_names_nothing() {
        let wanted = wanting("CreateTenantPayload", &["name"]);
        let not_fed = |_: &str| false;
        let sent = Some(r#"{"name": "t-1", "note": "x"}"#);
        let mut pool = ValuePool::new(4);
        pool.harvest_request(
            "CreateTenantPayload",
            &wanted,
            &not_fed,
            &exchange("POST", sent, 200, "{}"),
        );
        assert_eq!(pool.latest("CreateTenantPayload.name"), Some(&json!("t-1")));
        assert_eq!(pool.latest("CreateTenantPayload.note"), None);
        // Not when the answer names its own id, the creation failed, the
        // call only read, or a binding fed the name (it names another thing).
        for (method, status, answer) in [
            ("POST", 200, r#"{"id": 5}"#),
            ("POST", 409, "{}"),
            ("GET", 200, "{}"),
        ] {
            let mut pool = ValuePool::new(4);
            let ex = exchange(method, sent, status, answer);
            pool.harvest_request("CreateTenantPayload", &wanted, &not_fed, &ex);
            assert_eq!(
                pool.latest("CreateTenantPayload.name"),
                None,
                "{method} {status}"
            );
        }
        let mut pool = ValuePool::new(4);
        let fed = |f: &str| f == "name";
        let ex = exchange("POST", sent, 200, "{}");
        pool.harvest_request("CreateTenantPayload", &wanted, &fed, &ex);
        assert_eq!(pool.latest("CreateTenantPayload.name"), None);
    }

    #[test]
    fn lists_of_scalars_give_their_elements() {
        let produced = vec![("Pet".to_string(), "$".to_string())];
        let mut wanted = wanting("Pet", &["tags"]);
        wanted.names.insert("label".into());
        let mut pool = ValuePool::new(4);
        let body = r#"{"id": 1, "tags": ["cute", "small"], "label": ["x", "y"]}"#;
        pool.harvest(&produced, &wanted, &exchange("GET", None, 200, body));
        assert_eq!(pool.values["Pet.tags"], vec![json!("cute"), json!("small")]);
        assert_eq!(pool.values["label"], vec![json!("x"), json!("y")]);
        // A listing of bare values gives the inputs named after what the path
        // lists (`/things` → a thing, its name, its id), and no other.
        let mut wanted = Wanted::default();
        for name in ["thing", "thing_name", "thingId", "other", "thingSize"] {
            wanted.names.insert(name.into());
        }
        let mut pool = ValuePool::new(4);
        pool.harvest(&[], &wanted, &exchange("GET", None, 200, r#"["a", "b"]"#));
        for name in ["thing", "thing_name", "thingId"] {
            assert_eq!(pool.values[name], vec![json!("a"), json!("b")], "{name}");
        }
        assert!(!pool.values.contains_key("other"));
        assert!(!pool.values.contains_key("thingSize"));
        // Only from reading: a creation answering a list is something else.
        let mut pool = ValuePool::new(4);
        pool.harvest(&[], &wanted, &exchange("POST", None, 200, r#"["a"]"#));
        assert!(!pool.values.contains_key("thing"));
    }

    #[test]
    fn a_listing_names_the_members_of_its_collection() {
        let mut pool = ValuePool::new(4);
        let wanted = Wanted::default();
        let get = |path: &str, body: &str| Exchange {
            request: crate::execution::RequestSpec {
                method: "GET".into(),
                path: path.into(),
                ..Default::default()
            },
            status: Some(200),
            body: body.into(),
            ..Default::default()
        };
        pool.harvest(
            &[],
            &wanted,
            &get("/servers", r#"[{"id": "localhost", "url": "/x"}]"#),
        );
        assert_eq!(pool.latest("location:/servers"), Some(&json!("localhost")));
        pool.harvest(
            &[],
            &wanted,
            &get(
                "/buckets/b1/collections?_limit=2",
                r#"{"data": [{"id": "c7"}, {"id": "c9"}]}"#,
            ),
        );
        assert!(pool.holds("location:/buckets/b1/collections", &json!("c7")));
        assert!(pool.holds("location:/buckets/b1/collections", &json!("c9")));
        assert!(!pool.holds("location:/servers/localhost/zones", &json!("c9")));
        // Named by `name` when the items have no id.
        pool.harvest(
            &[],
            &wanted,
            &get("/zones", r#"{"items": [{"name": "a.org."}]}"#),
        );
        assert_eq!(pool.latest("location:/zones"), Some(&json!("a.org.")));
    }

    #[test]
    fn members_are_kept_by_each_identifying_property() {
        let wanted = Wanted::default();
        let call = |method: &str, path: &str, status: u16, body: &str| Exchange {
            request: crate::execution::RequestSpec {
                method: method.into(),
                path: path.into(),
                ..Default::default()
            },
            status: Some(status),
            body: body.into(),
            ..Default::default()
        };
        let mut pool = ValuePool::new(4);
        // A creation answering the pool: its id keys the collection, its
        // name is kept for the paths that take names.
        pool.harvest(
            &[],
            &wanted,
            &call(
                "POST",
                "/pools/",
                201,
                r#"{"id": "u-1", "name": "p1", "size": 3}"#,
            ),
        );
        assert_eq!(pool.latest("location:/pools"), Some(&json!("u-1")));
        assert_eq!(
            pool.latest(&member_key("/pools", "name")),
            Some(&json!("p1"))
        );
        assert_eq!(
            pool.latest(&member_key("/pools", "id")),
            Some(&json!("u-1"))
        );
        assert_eq!(pool.latest(&member_key("/pools", "size")), None);
        // A listing by POST names the members of the collection above it.
        pool.harvest(
            &[],
            &wanted,
            &call(
                "POST",
                "/pools/filter",
                200,
                r#"[{"id": "u-2", "name": "p2"}]"#,
            ),
        );
        assert!(pool.holds(&member_key("/pools", "name"), &json!("p2")));
        assert!(pool.holds_member("/pools", &json!("p2")));
        assert!(pool.holds_member("/pools", &json!("u-2")));
        pool.harvest(
            &[],
            &wanted,
            &call(
                "POST",
                "/pools/p2/queues/filter",
                200,
                r#"{"results": [{"id": "u-3", "name": "default"}]}"#,
            ),
        );
        assert!(pool.holds(&member_key("/pools/p2/queues", "name"), &json!("default")));
        assert_eq!(
            pool.parents_with_children("/pools", "/queues"),
            vec![json!("p2")]
        );
        // Another action answering a list lists nothing, nor does a failure.
        pool.harvest(
            &[],
            &wanted,
            &call(
                "POST",
                "/pools/p2/schedule",
                200,
                r#"[{"id": "r-1", "name": "x"}]"#,
            ),
        );
        pool.harvest(
            &[],
            &wanted,
            &call("POST", "/pools/p3/queues/filter", 404, r#"[{"name": "x"}]"#),
        );
        assert!(!pool.holds_member("/pools/p2", &json!("x")));
        assert!(!pool.holds_member("/pools/p3/queues", &json!("x")));
        assert_eq!(
            pool.parents_with_children("/pools", "/queues"),
            vec![json!("p2")]
        );
        // A deleted member is forgotten under every property.
        pool.forget(&json!("p2"));
        assert!(!pool.holds(&member_key("/pools", "name"), &json!("p2")));
    }

    #[test]
    fn the_pool_keeps_the_latest_distinct_values() {
        let mut pool = ValuePool::new(2);
        pool.add("k".into(), json!(1));
        pool.add("k".into(), json!(2));
        pool.add("k".into(), json!(1));
        pool.add("k".into(), json!(3));
        assert_eq!(pool.latest("k"), Some(&json!(3)));
        assert_eq!(pool.values["k"], vec![json!(1), json!(3)]);
    }

    #[test]
    fn what_answers_gave_is_told_by_field_name() {
        let mut pool = ValuePool::new(4);
        pool.add("Dag.file_token".into(), json!("tok"));
        pool.add("Dag.version".into(), json!(3));
        pool.add("Dag.tags".into(), json!(["a"]));
        pool.add(member_key("/dags", "name"), json!("d1"));
        pool.add(location_key("/dags"), json!("17"));
        pool.add("dag_id".into(), json!("example"));
        // Past the 4 a key keeps: the first is still known as given.
        for i in 0..8 {
            pool.add("Dag.file_token".into(), json!(format!("tok{i}")));
        }
        let given = pool.given();
        let mut want = vec![
            ("dag_id".to_string(), "example".to_string()),
            ("file_token".to_string(), "tok".to_string()),
            ("name".to_string(), "d1".to_string()),
            ("version".to_string(), "3".to_string()),
        ];
        want.extend((0..8).map(|i| ("file_token".to_string(), format!("tok{i}"))));
        want.sort();
        assert_eq!(given, want);
    }
}
