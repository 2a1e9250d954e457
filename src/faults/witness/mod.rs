//! The witness ledger: which successful request of the run created or
//! changed which resource (by id, and by place), what the run deleted, and
//! what the server started with that the run acted on. Whether a request
//! depends on the run's history is asked of it; completing a witness with
//! the requests it depends on is in `witness/complete.rs`
//! ([`Ledger::complete`]).

use std::collections::HashMap;
use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::Value;

use crate::execution::Exchange;
use crate::model::names;
use crate::oracles::identity::{chosen_ids, given_ids, identity_sent, is_id_name, sent_ids, text};

mod complete;

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

/// Resource paths remembered as made by the run: far more than [`IDS`], as
/// they are only text, so that a suite test naming an early creation is still
/// known to depend on the run's history.
const MADE: usize = 1 << 16;

/// Kinds of resource whose first numeric id is remembered, at most.
const KINDS: usize = 4096;

/// Which successful request created or changed which resource, by id.
#[derive(Default)]
pub struct Ledger {
    by_id: IndexMap<String, IndexMap<String, Resource>>,
    /// Paths a DELETE removed during the run.
    deleted: std::collections::HashSet<String>,
    /// Resource paths (decoded) the run created, oldest first.
    made: indexmap::IndexSet<String>,
    /// Resource paths the run deleted before making them: the server's own,
    /// which a later creation at the same place only restores
    /// (`default_database` deleted and made again).
    seed: std::collections::HashSet<String>,
    /// Per kind of resource the run made (its collection, numbered segments
    /// as `*`: `/authors/*/books`), the smallest numeric id it made there. A
    /// counter hands out every id above it to the run (or to nobody yet), so
    /// such an id is the run's long after `by_id` and `made` forgot it.
    first_numbered: HashMap<String, u64>,
    /// Resources the server started with that the run's successful
    /// requests acted on (see [`acted_on`]), as (id, collection path or
    /// field name), oldest first.
    touched: indexmap::IndexSet<(String, String)>,
    /// When each id of `by_id` was last made, changed or created under: the
    /// ids a run keeps building on (its one database, which every collection
    /// goes into) outlive the thousands made once and left.
    used: HashMap<String, u64>,
    tick: u64,
    /// Values the server's answers gave for inputs, by the input's name
    /// folded ([`fold`]): what a script sends without making it, when no
    /// step of it made it either, is the server's (a signed file token
    /// that a fresh start signs with another key).
    given: HashMap<String, std::collections::HashSet<String>>,
}

/// A name as inputs and fields are matched: lower case, without `_` and
/// `-` (`file_token`, `fileToken`).
fn fold(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// A path with its percent-escapes decoded: a request sends `/tenants/a%20b`
/// for what a body named `a b`.
fn decoded(path: &str) -> String {
    percent_encoding::percent_decode_str(path.trim_end_matches('/'))
        .decode_utf8_lossy()
        .into_owned()
}

/// Where a successful change that created nothing moved its resource to,
/// as (id, resource path): a rename answered with a `Location` elsewhere
/// than its own path (and not below it), or one whose identifying field
/// (`path`, `name`, `key`…) the answer echoes with a value its path does
/// not name, under the same collection (`PATCH /contents/a {"path": "b"}`
/// answering `{"path": "b"}` moved `a` to `/contents/b`). An update that
/// answers with its own id (`PATCH /users/5 {"name": "Bob"}` answering
/// `{"id": 5, …}`) moved nothing.
fn moved_to(ex: &Exchange, path: &str) -> Option<(String, String)> {
    if !matches!(ex.request.method.as_str(), "PATCH" | "PUT" | "POST") {
        return None;
    }
    let here = decoded(path);
    if let Some(l) = ex.header("location") {
        let to = location_path(l);
        let at = decoded(&to);
        if at == here || at.starts_with(&format!("{here}/")) {
            return None;
        }
        let id = at.rsplit('/').next().filter(|id| !id.is_empty())?;
        return Some((id.to_string(), to));
    }
    let parent = path.trim_end_matches('/').rsplit_once('/')?.0;
    let last = here.rsplit('/').next().unwrap_or("");
    let answer = ex.json().filter(|a| a.is_object())?;
    let sent = ex
        .request
        .body
        .as_deref()
        .filter(|b| b.trim_start().starts_with('{'))
        .and_then(|b| serde_json::from_str::<Value>(b).ok())?;
    // An answer that names its resource by the id its path gave is an update.
    if crate::execution::wire::body_id(answer)
        .and_then(text)
        .is_some_and(|id| id == last)
    {
        return None;
    }
    let fields = sent.as_object()?;
    fields.iter().find_map(|(k, v)| {
        let identifying = k == "path"
            || names::words(k)
                .last()
                .is_some_and(|w| names::is_identifying(w));
        let value = v.as_str().filter(|s| !s.is_empty() && identifying)?;
        let echoed = answer.get(k).and_then(Value::as_str) == Some(value);
        let named = here.split('/').any(|seg| seg == value) || here.ends_with(&format!("/{value}"));
        (echoed && !named).then(|| {
            let segment = crate::execution::wire::encode_segment(&Value::String(value.into()));
            (value.to_string(), format!("{parent}/{segment}"))
        })
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

/// Whether `ex` created something: a POST or a 201 whose answer names an id
/// (a `Location`, a body `id`, else the identity it sent), other than one
/// its path names unless it says it created (an update echoes its id).
fn creation(ex: &Exchange) -> bool {
    if !ex.is_success() || !(ex.request.method == "POST" || ex.status == Some(201)) {
        return false;
    }
    let path = ex.request.path.split('?').next().unwrap_or("");
    let says_created = ex.status == Some(201) || ex.header("location").is_some();
    let mut ids = given_ids(ex);
    if ids.is_empty() {
        ids = chosen_ids(ex).iter().filter_map(|(_, v)| text(v)).collect();
    }
    ids.iter().any(|id| {
        says_created
            || !path
                .split('/')
                .any(|seg| percent_encoding::percent_decode_str(seg).decode_utf8_lossy() == *id)
    })
}

/// What a state-changing request acts on besides what it creates, as
/// (id, collection path or field name): the deepest numbered resource its
/// path names, unless it creates into a collection (`PATCH
/// /authors/1/books/2` acts on book 2, `POST /authors/1/books` on no
/// book), and what the id fields of its JSON body name (`POST /orders
/// {"bookId": 3}` takes book 3's stock).
fn acted_on(ex: &Exchange, creates: bool) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let path = ex.request.path.split('?').next().unwrap_or("");
    if !creates {
        let mut prefix = String::new();
        let mut deepest = None;
        for seg in path.split('/').filter(|s| !s.is_empty()) {
            let id = percent_encoding::percent_decode_str(seg).decode_utf8_lossy();
            if id.chars().any(|c| c.is_ascii_digit()) && !names::is_version(&id) {
                deepest = Some((id.into_owned(), decoded(&prefix)));
            }
            prefix.push('/');
            prefix.push_str(seg);
        }
        out.extend(deepest);
    }
    if let Some(Ok(Value::Object(fields))) = ex
        .request
        .body
        .as_deref()
        .filter(|b| b.trim_start().starts_with('{') && may_name_an_id(b))
        .map(serde_json::from_str::<Value>)
    {
        for (k, v) in fields {
            if let Some(t) = text(&v).filter(|_| is_id_name(&k)) {
                out.push((t, k));
            }
        }
    }
    out
}

/// Whether a JSON body's text may hold a member [`is_id_name`] takes: one
/// whose name has `id`, `key` or `slug` in it (`uuid` has `id`), in any
/// case; or any text that is not plain ASCII or has an escape, which is
/// parsed to tell. Most bodies name no id: they are not parsed at all.
fn may_name_an_id(body: &str) -> bool {
    // One pass for the three words in any case (a negative test's body may
    // be megabytes of one value).
    static WORDS: std::sync::LazyLock<Option<aho_corasick::AhoCorasick>> =
        std::sync::LazyLock::new(|| {
            aho_corasick::AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .build(["id", "key", "slug"])
                .ok()
        });
    !body.is_ascii()
        || body.contains('\\')
        || WORDS.as_ref().is_none_or(|words| words.is_match(body))
}

/// The kind of resource a collection holds: its path with the numbered
/// segments as `*` (`/authors/12/books` → `/authors/*/books`).
fn kind(collection: &str) -> String {
    collection
        .split('/')
        .map(|s| {
            if !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()) {
                "*"
            } else {
                s
            }
        })
        .collect::<Vec<_>>()
        .join("/")
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
            self.evict();
        }
        self.tick += 1;
        self.used.insert(id.clone(), self.tick);
        let resources = self.by_id.entry(id).or_default();
        if !resources.contains_key(&path) && resources.len() >= PER_ID {
            resources.shift_remove_index(0);
        }
        resources.entry(path).or_default()
    }

    /// Forgets the least recently used quarter of the ids, in one pass.
    fn evict(&mut self) {
        let mut ages: Vec<(u64, &String)> = self.used.iter().map(|(id, t)| (*t, id)).collect();
        ages.sort_unstable();
        let old: std::collections::HashSet<String> = ages
            .into_iter()
            .take(IDS / 4)
            .map(|(_, id)| id.clone())
            .collect();
        self.by_id.retain(|id, _| !old.contains(id));
        self.used.retain(|id, _| !old.contains(id));
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
            let at = decoded(path);
            if !self.made.contains(&at) {
                self.seed.insert(at);
            }
        }
        // What a request acts in or under is still in use.
        for seg in path.split('/').filter(|s| !s.is_empty()) {
            let id = percent_encoding::percent_decode_str(seg).decode_utf8_lossy();
            if let Some(t) = self.used.get_mut(id.as_ref()) {
                self.tick += 1;
                *t = self.tick;
            }
        }
        // Copied once, and only when something keeps it (a deletion, or an
        // answer that names nothing, keeps none).
        let mut kept: Option<Arc<Exchange>> = None;
        let mut shared = || kept.get_or_insert_with(|| Arc::new(ex.clone())).clone();
        let mut created = Vec::new();
        // Only a POST, or an answer 201, creates: an update echoes its
        // resource's id, and so does an action on it (`POST /orders/5/cancel`
        // answering 200 with order 5 changes it). A creation may still
        // share its parent's id (`POST /authors/11/books` making book 11):
        // it says so with 201 or a `Location`.
        let creates = ex.request.method == "POST" || ex.status == Some(201);
        let says_created = ex.status == Some(201) || ex.header("location").is_some();
        let named_in_path = |id: &str| {
            path.split('/')
                .any(|seg| percent_encoding::percent_decode_str(seg).decode_utf8_lossy() == id)
        };
        // Without an id in the answer, the identity the client chose is
        // the resource's (`POST /tenants {"name": "t1"}` made `/tenants/t1`).
        let mut ids = given_ids(ex);
        if ids.is_empty() {
            ids = chosen_ids(ex).iter().filter_map(|(_, v)| text(v)).collect();
        }
        for id in ids
            .into_iter()
            .filter(|id| creates && (says_created || !named_in_path(id)))
        {
            let at = match ex.header("location") {
                Some(l) if location_path(l).ends_with(&format!("/{id}")) => location_path(l),
                _ => format!("{}/{id}", path.trim_end_matches('/')),
            };
            created.push(at.clone());
            let place = decoded(&at);
            if !self.seed.contains(&place) {
                if self.made.len() >= MADE {
                    // The oldest eighth at once: shifting 65,536 places
                    // out one at a time cost a creation a megabyte of copying.
                    self.made.drain(..MADE / 8);
                }
                self.made.insert(place.clone());
                self.count(&place);
            }
            self.resource(id, at).creator = Some(shared());
        }
        if created.is_empty()
            && let Some((id, at)) = moved_to(ex, path)
        {
            // A rename made the resource at its new place: a later request
            // that names it there needs this one, and a fresh server has
            // nothing there (Jupyter's `PATCH /api/contents/p {"path":
            // "IhoLE9Ek1"}`, then `GET /api/contents/IhoLE9Ek1`).
            let place = decoded(&at);
            if !self.seed.contains(&place) {
                if self.made.len() >= MADE {
                    // The oldest eighth at once: shifting 65,536 places
                    // out one at a time cost a creation a megabyte of copying.
                    self.made.drain(..MADE / 8);
                }
                self.made.insert(place);
            }
            self.resource(id, at).creator = Some(shared());
            return;
        }
        for (value, hint) in acted_on(ex, !created.is_empty()) {
            let made = if hint.starts_with('/') {
                self.run_made_at(&format!("{hint}/{value}"))
            } else {
                self.run_made_named(&value, &hint)
            };
            if !made {
                if self.touched.len() >= IDS {
                    self.touched.drain(..IDS / 8);
                }
                self.touched.insert((value, hint));
            }
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
            // Literal segments (`orders`, `cancel`, `v2`) name no resource;
            // ids have digits, or were created during the run.
            let numbered = id.chars().any(|c| c.is_ascii_digit()) && !names::is_version(&id);
            if numbered || self.by_id.contains_key(&id) {
                deepest = Some((id, prefix.clone()));
            }
        }
        if let Some((id, at)) = deepest {
            let r = self.resource(id, at);
            r.changes.push(shared());
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

    /// Whether the run created a resource whose id is `value` (so a request
    /// that names it literally depends on the run's history, unlike one that
    /// names data the server started with).
    pub fn run_made(&self, value: &str) -> bool {
        self.by_id
            .get(value)
            .is_some_and(|r| r.values().any(|r| r.creator.is_some()))
    }

    /// [`Ledger::run_made`] for a value sent as the field or parameter
    /// `name` (`bookId`): also a number at or above the first one the run
    /// made of a kind that `name` fits (of any kind, when it fits none).
    pub fn run_made_named(&self, value: &str, name: &str) -> bool {
        if self.run_made(value) {
            return true;
        }
        let Ok(n) = value.parse::<u64>() else {
            return false;
        };
        let fits = |kind: &str| fit(&format!("{kind}/*"), name) > 0;
        let fitting = self.first_numbered.keys().any(|k| fits(k));
        self.first_numbered
            .iter()
            .filter(|(k, _)| !fitting || fits(k))
            .any(|(_, &first)| n >= first)
    }

    /// Records the numeric id of the resource the run made at `place`.
    fn count(&mut self, place: &str) {
        let Some((collection, Ok(n))) = place
            .rsplit_once('/')
            .map(|(c, last)| (c, last.parse::<u64>()))
        else {
            return;
        };
        let kind = kind(collection);
        if let Some(first) = self.first_numbered.get_mut(&kind) {
            *first = (*first).min(n);
        } else if self.first_numbered.len() < KINDS {
            self.first_numbered.insert(kind, n);
        }
    }

    /// Whether `ex` is a creation refused (4xx) with a name the run had
    /// made at that place: `POST /databases {"name": "d1"}` answering 409
    /// because an earlier test made `d1`. On a fresh server it succeeds.
    pub fn refused_for_what_it_made(&self, ex: &Exchange) -> bool {
        let creates = matches!(ex.request.method.as_str(), "POST" | "PUT");
        if !creates || !ex.status.is_some_and(|s| (400..500).contains(&s)) {
            return false;
        }
        let path = ex.request.path.split('?').next().unwrap_or("");
        self.run_made_at(path)
            || identity_sent(ex).iter().any(|(_, v)| {
                text(v).is_some_and(|id| {
                    let at = format!("{}/{id}", decoded(path));
                    self.made.contains(&at)
                })
            })
    }

    /// What a state-changing `ex` acts on that the server started with and
    /// the run acted on before (`POST /orders {"bookId": 3}` after the run's
    /// orders took book 3's stock), as `bookId = 3`: its answer tells the
    /// run's history.
    pub fn acts_on_what_the_run_changed(&self, ex: &Exchange) -> Option<String> {
        if !ex.request.is_mutation() {
            return None;
        }
        acted_on(ex, creation(ex))
            .into_iter()
            .find(|(value, hint)| {
                let (made, name) = if hint.starts_with('/') {
                    (self.run_made_at(&format!("{hint}/{value}")), "")
                } else {
                    (self.run_made_named(value, hint), hint.as_str())
                };
                !made
                    && self.touched.iter().any(|(v, h)| {
                        v == value
                            && match (h.starts_with('/'), hint.starts_with('/')) {
                                (true, true) => h == hint,
                                (false, false) => h.eq_ignore_ascii_case(hint),
                                (true, false) => fit(&format!("{h}/{v}"), name) > 0,
                                (false, true) => fit(&format!("{hint}/{v}"), h) > 0,
                            }
                    })
            })
            .map(|(value, hint)| {
                if hint.starts_with('/') {
                    format!("{hint}/{value}")
                } else {
                    format!("{hint} = {value}")
                }
            })
    }

    /// The request of the run that made the resource at `path` (a
    /// concrete request path, escaped or not, under the target), while the
    /// ledger remembers it.
    pub fn maker_at(&self, path: &str) -> Option<&Exchange> {
        let at = decoded(path.split('?').next().unwrap_or(""));
        let id = at.rsplit('/').next().filter(|id| !id.is_empty())?;
        self.by_id.get(id)?.iter().find_map(|(place, r)| {
            let place = decoded(place);
            // A `Location` may carry the target's own path before it.
            let here = place == at || place.ends_with(&at);
            r.creator.as_deref().filter(|_| here)
        })
    }

    /// Notes that an answer gave `value` for a field named `name` (taken
    /// once, after the search, from what the generator kept of answers).
    pub fn note_given(&mut self, name: &str, value: &str) {
        self.given
            .entry(fold(name))
            .or_default()
            .insert(value.to_string());
    }

    /// Whether an answer of the run gave `value` for a field named like
    /// input `name`.
    pub fn server_gave(&self, name: &str, value: &str) -> bool {
        self.given
            .get(&fold(name))
            .is_some_and(|values| values.contains(value))
    }

    /// Whether the run created the resource at `path` (a concrete path,
    /// escaped or not), and it was not the server's own to begin with.
    pub fn run_made_at(&self, path: &str) -> bool {
        let at = decoded(path);
        self.made.contains(&at)
            || at.rsplit_once('/').is_some_and(|(collection, last)| {
                last.parse::<u64>().is_ok_and(|n| {
                    self.first_numbered
                        .get(&kind(collection))
                        .is_some_and(|&first| n >= first)
                })
            })
    }
}

#[cfg(test)]
mod tests;
