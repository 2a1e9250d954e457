//! Completing a witness: a test may use an id that an earlier test created
//! (the search reuses values across tests), and the fault may need what
//! earlier tests did to that resource (a PATCH, a cancel). A reproducer must
//! do it all itself, so the run remembers which successful request created
//! or changed which id, and a witness is completed with those requests,
//! transitively.

use std::collections::HashMap;
use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::Value;

use super::identity::{chosen_ids, given_ids, identity_sent, is_id_name, sent_ids, text};
use crate::execution::Exchange;
use crate::model::names;

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
}

/// A path with its percent-escapes decoded: a request sends `/tenants/a%20b`
/// for what a body named `a b`.
fn decoded(path: &str) -> String {
    percent_encoding::percent_decode_str(path.trim_end_matches('/'))
        .decode_utf8_lossy()
        .into_owned()
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

/// Appends `e` to `out`, after what was added for it (oldest first, each
/// after its own additions), once.
fn place(
    e: &Exchange,
    deps: &HashMap<u64, Vec<Arc<Exchange>>>,
    placed: &mut std::collections::HashSet<u64>,
    out: &mut Vec<Exchange>,
) {
    if !placed.insert(e.seq) {
        return;
    }
    let mut before: Vec<&Arc<Exchange>> = deps.get(&e.seq).into_iter().flatten().collect();
    before.sort_by_key(|d| d.seq);
    for d in before {
        place(d, deps, placed, out);
    }
    out.push(e.clone());
}

/// Whether `ex` made the resource at path `at`: a successful creation whose
/// `Location`, or whose collection and id, is `at`.
fn made(ex: &Exchange, at: &str) -> bool {
    if !ex.is_success() || !(ex.request.method == "POST" || ex.status == Some(201)) {
        return false;
    }
    let path = ex
        .request
        .path
        .split('?')
        .next()
        .unwrap_or("")
        .trim_end_matches('/');
    given_ids(ex).iter().any(|id| {
        let by_location = ex
            .header("location")
            .is_some_and(|l| location_path(l) == at.trim_end_matches('/'));
        by_location || format!("{path}/{id}") == at
    })
}

/// Records that `consumer` needs `c` before it, and adds `c` (to be
/// completed in turn) unless it is given or added already. The need is
/// recorded either way: ordering follows every need, not only the first.
fn need(
    c: &Arc<Exchange>,
    consumer: u64,
    given: &[Exchange],
    added: &mut Vec<Arc<Exchange>>,
    deps: &mut HashMap<u64, Vec<Arc<Exchange>>>,
    todo: &mut Vec<Exchange>,
) {
    if c.seq == consumer {
        return;
    }
    let known = added.iter().any(|a| a.seq == c.seq) || given.iter().any(|e| e.seq == c.seq);
    if !known && added.len() >= MAX_ADDED {
        return;
    }
    deps.entry(consumer).or_default().push(c.clone());
    if !known {
        added.push(c.clone());
        todo.push((**c).clone());
    }
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
        .filter(|b| b.trim_start().starts_with('{'))
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

/// `ex` with each top-level field of its JSON body that names a forgotten
/// resource (field, old id, stand-in's id) naming the stand-in instead; a
/// number stays a number.
fn stand_in_fields(ex: &mut Exchange, fields: &[(String, String, String)]) {
    let Some(Ok(Value::Object(mut body))) = ex
        .request
        .body
        .as_deref()
        .map(serde_json::from_str::<Value>)
    else {
        return;
    };
    let mut changed = false;
    for (field, old, new) in fields {
        let Some(slot) = body.get_mut(field) else {
            continue;
        };
        if text(slot).as_deref() != Some(old.as_str()) {
            continue;
        }
        *slot = match (&*slot, new.parse::<u64>()) {
            (Value::Number(_), Ok(n)) => Value::from(n),
            _ => Value::String(new.clone()),
        };
        changed = true;
    }
    if changed {
        ex.request.body = Some(Value::Object(body).to_string());
    }
}

/// `path` with the resource path `old` (a whole prefix of it) replaced by `new`.
fn replace_prefix(path: &str, old: &str, new: &str) -> String {
    match path.strip_prefix(old) {
        Some(rest) if rest.is_empty() || rest.starts_with(['/', '?']) => format!("{new}{rest}"),
        _ => path.to_string(),
    }
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

    /// The resources created directly into `collection` (`/authors/37/books`
    /// → `/authors/37/books/4`) before `seq`, oldest first, at most
    /// [`MAX_ADDED`].
    fn children(&self, collection: &str, seq: u64) -> Vec<&Resource> {
        if collection.is_empty() {
            return Vec::new();
        }
        let prefix = format!("{collection}/");
        let mut found: Vec<&Resource> = self
            .by_id
            .values()
            .flat_map(|resources| resources.iter())
            .filter(|(path, r)| {
                path.strip_prefix(&prefix)
                    .is_some_and(|rest| !rest.is_empty() && !rest.contains('/'))
                    && r.creator.as_ref().is_some_and(|c| c.seq < seq)
            })
            .map(|(_, r)| r)
            .collect();
        found.sort_by_key(|r| r.creator.as_ref().map(|c| c.seq));
        found.truncate(MAX_ADDED);
        found
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
        let shared = Arc::new(ex.clone());
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
                    self.made.shift_remove_index(0);
                }
                self.made.insert(place.clone());
                self.count(&place);
            }
            self.resource(id, at).creator = Some(shared.clone());
        }
        for (value, hint) in acted_on(ex, !created.is_empty()) {
            let made = if hint.starts_with('/') {
                self.run_made_at(&format!("{hint}/{value}"))
            } else {
                self.run_made_named(&value, &hint)
            };
            if !made {
                if self.touched.len() >= IDS {
                    self.touched.shift_remove_index(0);
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

    /// `exchanges`, preceded by the earlier requests that created the
    /// resources they name and changed them since (transitively, in run
    /// order), unless an earlier exchange of theirs gave the id.
    pub fn complete(&self, exchanges: &[Exchange]) -> Vec<Exchange> {
        self.completed(exchanges, false, false)
    }

    /// [`Ledger::complete`] for a regression test, which must create what
    /// it uses: a resource the run made whose requests the ledger has
    /// forgotten (it keeps those of the latest `IDS` ids) is stood in for
    /// by one of the same kind it remembers, made first (in a path, or in
    /// a top-level id field of a JSON body).
    pub fn complete_standing_in(&self, exchanges: &[Exchange]) -> Vec<Exchange> {
        self.completed(exchanges, false, true)
    }

    /// [`Ledger::complete`] for a fault in the items of the collection the
    /// last exchange reads (`/1/price` of `GET /authors/37/books`): what was
    /// created into that collection, and changed since, goes first too.
    pub fn complete_listing(&self, exchanges: &[Exchange]) -> Vec<Exchange> {
        self.completed(exchanges, true, false)
    }

    fn completed(&self, exchanges: &[Exchange], listing: bool, forgotten: bool) -> Vec<Exchange> {
        let mut added: Vec<Arc<Exchange>> = Vec::new();
        // Consumer's seq → the requests added for it; each goes right
        // before the request that needed it.
        let mut deps: HashMap<u64, Vec<Arc<Exchange>>> = HashMap::new();
        let mut todo: Vec<Exchange> = exchanges.to_vec();
        // Paths the witness names that the run deleted (seed data among
        // them), each with a resource of the same kind the run made instead.
        let mut rewrites: Vec<(String, String)> = Vec::new();
        // Body fields naming a forgotten resource: (field, old id, stand-in's).
        let mut fields: Vec<(String, String, String)> = Vec::new();
        let mut guard = 0;
        while let Some(consumer) = todo.pop() {
            guard += 1;
            // A full `added` still lets later consumers link to what is in.
            if guard > 64 {
                break;
            }
            let position = exchanges
                .iter()
                .position(|e| e.seq == consumer.seq)
                .unwrap_or(0);
            let earlier = &exchanges[..position];
            // The read that shows the fault, of a collection
            // (`GET /authors/37/books`), shows what was created into it and
            // how it was changed since: those go first.
            let shows_fault = exchanges.last().is_some_and(|l| l.seq == consumer.seq);
            if listing && consumer.request.method == "GET" && shows_fault {
                let collection = consumer
                    .request
                    .path
                    .split('?')
                    .next()
                    .unwrap_or("")
                    .trim_end_matches('/')
                    .to_string();
                for r in self.children(&collection, consumer.seq) {
                    let creator = r.creator.iter().filter(|c| c.seq < consumer.seq);
                    let changes = r.changes.iter().filter(|c| c.seq < consumer.seq);
                    for c in creator.chain(changes) {
                        need(c, consumer.seq, exchanges, &mut added, &mut deps, &mut todo);
                    }
                }
            }
            for (value, hint) in sent_ids(&consumer) {
                let at = format!(
                    "{hint}/{}",
                    crate::execution::wire::encode_segment(&Value::String(value.clone()))
                );
                // Given already by the sequence: for a path, by the request
                // that made that very resource (author 11 is not book 11);
                // what was done to it since, elsewhere in the run, still goes
                // in (a price PATCH another test made).
                let given = if hint.starts_with('/') {
                    let maker = earlier
                        .iter()
                        .map(|e| (e.seq, made(e, &at)))
                        .chain(
                            added
                                .iter()
                                .map(|a| (a.seq, a.seq < consumer.seq && made(a, &at))),
                        )
                        .filter(|(_, m)| *m)
                        .map(|(seq, _)| seq)
                        .max();
                    if let (Some(since), Some(r)) =
                        (maker, self.by_id.get(&value).and_then(|r| r.get(&at)))
                    {
                        for c in r
                            .changes
                            .iter()
                            .filter(|c| c.seq > since && c.seq < consumer.seq)
                        {
                            need(c, consumer.seq, exchanges, &mut added, &mut deps, &mut todo);
                        }
                    }
                    // An added maker still goes before this consumer.
                    if let Some(a) = added.iter().find(|a| Some(a.seq) == maker).cloned() {
                        need(
                            &a,
                            consumer.seq,
                            exchanges,
                            &mut added,
                            &mut deps,
                            &mut todo,
                        );
                    }
                    maker.is_some()
                } else {
                    let by_added = added
                        .iter()
                        .find(|a| a.seq < consumer.seq && given_ids(a).contains(&value))
                        .cloned();
                    if let Some(a) = &by_added {
                        need(a, consumer.seq, exchanges, &mut added, &mut deps, &mut todo);
                    }
                    answered(earlier, &value) || by_added.is_some()
                };
                if given {
                    continue;
                }
                let resources = self.by_id.get(&value);
                let known = resources.and_then(|r| r.get(&at));
                let unknown = known.is_none_or(|r| r.creator.is_none());
                if hint.starts_with('/')
                    && unknown
                    && (self.deleted.contains(&at)
                        || (forgotten && self.made.contains(&decoded(&at))))
                {
                    // The run deleted what the witness names (seed data
                    // included): on its server, and in a reproducer, a
                    // resource of the same kind that the run made stands in.
                    if let Some((path, r)) = self.stand_in(&at) {
                        if !rewrites.iter().any(|(old, _)| *old == at) {
                            rewrites.push((at.clone(), path));
                        }
                        let creator = r.creator.iter();
                        let changes = r.changes.iter().filter(|c| c.seq < consumer.seq);
                        for c in creator.chain(changes) {
                            need(c, consumer.seq, exchanges, &mut added, &mut deps, &mut todo);
                        }
                    }
                    continue;
                }
                let no_creator = resources.is_none_or(|r| r.values().all(|r| r.creator.is_none()));
                if forgotten
                    && !hint.starts_with('/')
                    && no_creator
                    && self.made_named(&value, &hint)
                {
                    if let Some((path, r)) = self.stand_in_for(&hint) {
                        let id = path.rsplit('/').next().unwrap_or_default().to_string();
                        if !fields.iter().any(|(f, old, _)| *f == hint && *old == value) {
                            fields.push((hint.clone(), value.clone(), id));
                        }
                        let creator = r.creator.iter();
                        let changes = r.changes.iter().filter(|c| c.seq < consumer.seq);
                        for c in creator.chain(changes) {
                            need(c, consumer.seq, exchanges, &mut added, &mut deps, &mut todo);
                        }
                    }
                    continue;
                }
                let Some(resources) = resources else {
                    continue;
                };
                let resource = if hint.starts_with('/') {
                    known
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
                    need(c, consumer.seq, exchanges, &mut added, &mut deps, &mut todo);
                }
            }
        }
        // The most specific path first: a book's stand-in carries its own
        // parent.
        rewrites.sort_by_key(|(old, _)| std::cmp::Reverse(old.len()));
        let mut out = Vec::with_capacity(added.len() + exchanges.len());
        let mut placed = std::collections::HashSet::new();
        for e in exchanges {
            place(e, &deps, &mut placed, &mut out);
        }
        out.into_iter()
            .map(|mut e| {
                for (old, new) in &rewrites {
                    e.request.path = replace_prefix(&e.request.path, old, new);
                }
                if !fields.is_empty() {
                    stand_in_fields(&mut e, &fields);
                }
                e
            })
            .collect()
    }

    /// Whether the run made a resource whose id is `value` in a collection
    /// that the field `name` fits (`bookId` → `/authors/3/books/469`), as
    /// far as [`MADE`] paths go back.
    fn made_named(&self, value: &str, name: &str) -> bool {
        self.made.iter().rev().any(|p| {
            p.rsplit_once('/')
                .is_some_and(|(_, last)| last == value && fit(p, name) > 0)
        })
    }

    /// The latest resource the run made, with its requests remembered and
    /// not deleted, in a collection the field `name` fits.
    fn stand_in_for(&self, name: &str) -> Option<(String, &Resource)> {
        self.by_id
            .values()
            .flat_map(|resources| resources.iter())
            .filter(|(path, r)| fit(path, name) > 0 && r.creator.is_some() && !self.deleted(path))
            .max_by_key(|(_, r)| r.creator.as_ref().map(|c| c.seq))
            .map(|(path, r)| (path.clone(), r))
    }

    /// A resource the run made, not deleted, of the same kind as the path
    /// `at` (`/authors/1/books/1` → `/authors/7/books/9`: the literal
    /// segments equal, the ids any): the latest made; its creation goes
    /// before the witness whenever it happened.
    fn stand_in(&self, at: &str) -> Option<(String, &Resource)> {
        let want: Vec<&str> = at.split('/').filter(|s| !s.is_empty()).collect();
        let is_id = |s: &str| {
            (s.chars().any(|c| c.is_ascii_digit()) && !names::is_version(s))
                || self.by_id.contains_key(s)
        };
        self.by_id
            .values()
            .flat_map(|resources| resources.iter())
            .filter(|(path, r)| {
                let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
                segs.len() == want.len()
                    && segs
                        .iter()
                        .zip(&want)
                        .all(|(a, b)| if is_id(b) { is_id(a) } else { a == b })
                    && r.creator.is_some()
                    && !self.deleted.contains(path.as_str())
                    && !self
                        .deleted
                        .iter()
                        .any(|d| path.starts_with(&format!("{d}/")))
            })
            .max_by_key(|(_, r)| r.creator.as_ref().map(|c| c.seq))
            .map(|(path, r)| (path.clone(), r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(
        seq: u64,
        method: &str,
        path: &str,
        body: Option<&str>,
        status: u16,
        answer: &str,
    ) -> Exchange {
        let location = (status == 201)
            .then(|| serde_json::from_str::<Value>(answer).ok())
            .flatten()
            .and_then(|v| v.get("id").and_then(text))
            .map(|id| format!("{}/{id}", path.trim_end_matches('/')));
        Exchange {
            seq,
            request: crate::execution::RequestSpec {
                operation: format!("{method} {path}"),
                method: method.into(),
                path: path.into(),
                headers: vec![],
                body: body.map(str::to_string),
                content_type: body.map(|_| "application/json".to_string()),
                graphql_query: false,
                breach: None,
            },
            status: Some(status),
            headers: location
                .map(|l| vec![("location".to_string(), l)])
                .unwrap_or_default(),
            body: answer.into(),
            ..Default::default()
        }
    }

    fn seqs(v: &[Exchange]) -> Vec<u64> {
        v.iter().map(|e| e.seq).collect()
    }

    /// The run of an order cancelled twice: author 3, their book 4 (whose
    /// stock a PATCH changed), order 3 for it, its first cancel.
    fn order_history() -> (Ledger, Vec<Exchange>) {
        let history = vec![
            ex(
                0,
                "POST",
                "/authors",
                Some(r#"{"name":"a"}"#),
                201,
                r#"{"id":3}"#,
            ),
            ex(
                2,
                "POST",
                "/authors/3/books",
                Some(r#"{"title":"t"}"#),
                201,
                r#"{"id":4}"#,
            ),
            ex(
                12,
                "PATCH",
                "/authors/3/books/4",
                Some(r#"{"stock":0}"#),
                200,
                r#"{"id":4}"#,
            ),
            ex(
                31,
                "POST",
                "/orders",
                Some(r#"{"bookId":4}"#),
                201,
                r#"{"id":3}"#,
            ),
            ex(33, "POST", "/orders/3/cancel", None, 200, r#"{"id":3}"#),
        ];
        let mut ledger = Ledger::new();
        for e in &history {
            ledger.note(e);
        }
        (ledger, history)
    }

    #[test]
    fn an_action_on_a_resource_changes_it_and_a_child_sharing_its_parents_id_is_made() {
        let (ledger, _) = order_history();
        // The cancel answered order 3: a change, not a new order.
        let order = &ledger.by_id["3"]["/orders/3"];
        assert_eq!(order.creator.as_ref().map(|c| c.seq), Some(31));
        assert_eq!(
            seqs(
                &order
                    .changes
                    .iter()
                    .map(|c| (**c).clone())
                    .collect::<Vec<_>>()
            ),
            [33]
        );
        // Book 11 of author 11 is still a creation.
        let mut ledger = Ledger::new();
        ledger.note(&ex(
            0,
            "POST",
            "/authors/11/books",
            Some("{}"),
            201,
            r#"{"id":11}"#,
        ));
        assert!(ledger.by_id["11"]["/authors/11/books/11"].creator.is_some());
    }

    #[test]
    fn a_name_the_client_chose_is_the_identity_of_what_an_empty_answer_made() {
        let mut ledger = Ledger::new();
        let tenant = ex(
            4,
            "POST",
            "/api/v2/tenants",
            Some(r#"{"name":"t-9x"}"#),
            200,
            "{}",
        );
        ledger.note(&tenant);
        assert!(ledger.run_made("t-9x"));
        let read = [ex(9, "GET", "/api/v2/tenants/t-9x", None, 200, "{}")];
        assert_eq!(seqs(&ledger.complete(&read)), [4, 9]);
        // An answer with an id of its own names the resource by it, and a
        // refused creation made nothing.
        let mut ledger = Ledger::new();
        ledger.note(&ex(
            5,
            "POST",
            "/authors",
            Some(r#"{"name":"ann"}"#),
            200,
            r#"{"id":7}"#,
        ));
        ledger.note(&ex(6, "POST", "/tags", Some(r#"{"name":"x1"}"#), 400, "{}"));
        assert!(ledger.run_made("7"));
        assert!(!ledger.run_made("ann"));
        assert!(!ledger.run_made("x1"));
    }

    #[test]
    fn what_the_run_made_is_known_by_its_place_long_after() {
        let mut ledger = Ledger::new();
        let make = |seq, name: &str| {
            let body = format!(r#"{{"name":"{name}"}}"#);
            ex(seq, "POST", "/tenants", Some(&body), 200, "{}")
        };
        ledger.note(&make(1, "t 1"));
        // More creations than the ledger keeps requests for.
        for i in 0..IDS as u64 + 10 {
            ledger.note(&make(10 + i, &format!("n{i}")));
        }
        assert!(!ledger.run_made("t 1"), "its requests are forgotten");
        assert!(ledger.run_made_at("/tenants/t%201"));
        // Making it again was refused because of the run, not the server.
        let again = |name: &str, status| {
            let body = format!(r#"{{"name":"{name}"}}"#);
            ex(80_000, "POST", "/tenants", Some(&body), status, "{}")
        };
        assert!(ledger.refused_for_what_it_made(&again("t 1", 409)));
        assert!(!ledger.refused_for_what_it_made(&again("fresh", 409)));
        assert!(!ledger.refused_for_what_it_made(&again("t 1", 500)));
        // A collection named like a tenant does not make the tenant.
        ledger.note(&ex(
            90_000,
            "POST",
            "/tenants/default/collections",
            Some(r#"{"name":"shared"}"#),
            200,
            "{}",
        ));
        assert!(ledger.run_made("shared"));
        assert!(!ledger.run_made_at("/tenants/shared"));
        assert!(ledger.run_made_at("/tenants/default/collections/shared"));
        // The server's own, deleted and made again, stays the server's.
        ledger.note(&ex(90_001, "DELETE", "/tenants/seed", None, 204, ""));
        ledger.note(&make(90_002, "seed"));
        assert!(!ledger.run_made_at("/tenants/seed"));
        // What the run made, deleted and made again, is the run's.
        ledger.note(&ex(90_003, "DELETE", "/tenants/n3", None, 204, ""));
        ledger.note(&make(90_004, "n3"));
        assert!(ledger.run_made_at("/tenants/n3"));
    }

    #[test]
    fn a_version_segment_is_no_resource() {
        let mut ledger = Ledger::new();
        ledger.note(&ex(1, "PATCH", "/api/v2/tenants/x", Some("{}"), 200, "{}"));
        let other = [ex(9, "POST", "/api/v2/reset", None, 403, "{}")];
        assert_eq!(seqs(&ledger.complete(&other)), [9]);
        assert!(names::is_version("v2") && names::is_version("V1.1"));
        assert!(!names::is_version("v") && !names::is_version("vat") && !names::is_version("v2x"));
    }

    #[test]
    fn the_resource_a_run_keeps_building_on_is_remembered() {
        let mut ledger = Ledger::new();
        let db = Some(r#"{"name":"hot-db"}"#);
        ledger.note(&ex(1, "POST", "/databases", db, 200, "{}"));
        for i in 0..2 * IDS as u64 {
            let name = format!(r#"{{"name":"c{i}"}}"#);
            let at = "/databases/hot-db/collections";
            ledger.note(&ex(10 + i, "POST", at, Some(&name), 200, "{}"));
            // And as many made once and never used again.
            ledger.note(&ex(10 + i, "POST", "/tags", Some(&name), 200, "{}"));
        }
        let read = [ex(99_999, "GET", "/databases/hot-db", None, 200, "{}")];
        assert_eq!(seqs(&ledger.complete(&read)), [1, 99_999]);
        assert!(ledger.by_id.len() <= IDS);
    }

    #[test]
    fn a_completed_witness_puts_every_maker_before_what_needs_it() {
        let (ledger, _) = order_history();
        let witness = [ex(59, "POST", "/orders/3/cancel", None, 500, "{}")];
        assert_eq!(seqs(&ledger.complete(&witness)), [0, 2, 12, 31, 33, 59]);
    }

    #[test]
    fn a_collection_read_brings_what_was_made_and_changed_in_it() {
        let mut ledger = Ledger::new();
        let author = ex(57, "POST", "/authors", Some("{}"), 201, r#"{"id":11}"#);
        let book = ex(
            59,
            "POST",
            "/authors/11/books",
            Some("{}"),
            201,
            r#"{"id":11}"#,
        );
        let patch = ex(
            60,
            "PATCH",
            "/authors/11/books/11",
            Some(r#"{"price":2}"#),
            200,
            r#"{"id":11}"#,
        );
        for e in [&author, &book, &patch] {
            ledger.note(e);
        }
        let read = ex(805, "GET", "/authors/11/books", None, 200, "[]");
        let witness = [author, book, read];
        assert_eq!(seqs(&ledger.complete_listing(&witness)), [57, 59, 60, 805]);
        // A fault in the read itself (a 500 on its query) needs none of it.
        assert_eq!(seqs(&ledger.complete(&witness)), [57, 59, 805]);
    }

    #[test]
    fn a_deleted_seed_resource_is_stood_in_for_by_one_the_run_made() {
        let mut ledger = Ledger::new();
        let made = ex(3, "POST", "/authors", Some("{}"), 201, r#"{"id":7}"#);
        ledger.note(&made);
        ledger.note(&ex(5, "DELETE", "/authors/1", None, 204, ""));
        let read = ex(9, "GET", "/authors/1/books", None, 200, "[]");
        let done = ledger.complete(&[read]);
        assert_eq!(seqs(&done), [3, 9]);
        assert_eq!(done[1].request.path, "/authors/7/books");
    }

    #[test]
    fn a_numbered_id_the_run_made_is_known_after_its_requests_are_forgotten() {
        let mut ledger = Ledger::new();
        // Authors from 3 on, each with a book (one book counter).
        for i in 0..IDS as u64 + 10 {
            let a = i + 3;
            let body = format!(r#"{{"id":{a}}}"#);
            ledger.note(&ex(2 * i, "POST", "/authors", Some("{}"), 201, &body));
            let at = format!("/authors/{a}/books");
            let body = format!(r#"{{"id":{}}}"#, i + 4);
            ledger.note(&ex(2 * i + 1, "POST", &at, Some("{}"), 201, &body));
        }
        assert!(!ledger.run_made("5"), "its requests are forgotten");
        assert!(ledger.run_made_named("5", "bookId"));
        assert!(ledger.run_made_named("5", "parent/id"));
        // The server's own (below the first the run made of the kind).
        assert!(!ledger.run_made_named("3", "bookId"));
        assert!(!ledger.run_made_named("2", "authorId"));
        assert!(!ledger.run_made_named("abc", "bookId"));
        assert!(ledger.run_made_at("/authors/5/books/6"));
        assert!(ledger.run_made_at("/authors/1/books/9"));
        assert!(!ledger.run_made_at("/authors/1/books/2"));
        assert!(!ledger.run_made_at("/authors/2"));
    }

    #[test]
    fn a_regression_test_makes_a_stand_in_for_what_the_ledger_forgot() {
        let mut ledger = Ledger::new();
        let mut seq = 0;
        let mut make = |ledger: &mut Ledger, path: &str, id: u64| {
            seq += 1;
            let body = format!(r#"{{"id":{id}}}"#);
            ledger.note(&ex(seq, "POST", path, Some("{}"), 201, &body));
        };
        // Author 3 and their book 4, then far more than the ledger keeps.
        make(&mut ledger, "/authors", 3);
        make(&mut ledger, "/authors/3/books", 4);
        for i in 0..IDS as u64 {
            make(&mut ledger, "/authors", 10_000 + i);
        }
        make(&mut ledger, "/authors", 90_000);
        make(&mut ledger, "/authors/90000/books", 90_001);
        assert!(!ledger.run_made("4"), "forgotten");
        let read = ex(u64::MAX / 2, "GET", "/authors/3/books/4", None, 200, "{}");
        // A reproducer keeps the witness as it was.
        assert_eq!(ledger.complete(std::slice::from_ref(&read)).len(), 1);
        let done = ledger.complete_standing_in(&[read]);
        let calls: Vec<String> = done
            .iter()
            .map(|e| format!("{} {}", e.request.method, e.request.path))
            .collect();
        assert_eq!(
            calls,
            [
                "POST /authors",
                "POST /authors/90000/books",
                "GET /authors/90000/books/90001"
            ]
        );
        let order = ex(
            u64::MAX / 2,
            "POST",
            "/orders",
            Some(r#"{"bookId":4,"quantity":1}"#),
            201,
            r#"{"id":7}"#,
        );
        let done = ledger.complete_standing_in(&[order]);
        assert_eq!(done.len(), 3, "{done:#?}");
        assert_eq!(
            done[2].request.body.as_deref(),
            Some(r#"{"bookId":90001,"quantity":1}"#)
        );
        // What the run never made is no one's to stand in for.
        let other = ex(u64::MAX / 2, "GET", "/authors/1/books/5", None, 404, "{}");
        assert_eq!(ledger.complete_standing_in(&[other]).len(), 1);
    }

    #[test]
    fn a_change_to_what_the_server_started_with_after_the_run_changed_it_is_history() {
        let mut ledger = Ledger::new();
        ledger.note(&ex(1, "POST", "/authors", Some("{}"), 201, r#"{"id":3}"#));
        ledger.note(&ex(
            2,
            "POST",
            "/authors/3/books",
            Some("{}"),
            201,
            r#"{"id":4}"#,
        ));
        // The run orders seed book 2 and its own book 4, and re-prices seed book 1.
        let order = |seq, book: u64| {
            let body = format!(r#"{{"bookId":{book},"quantity":1}}"#);
            ex(
                seq,
                "POST",
                "/orders",
                Some(&body),
                201,
                &format!(r#"{{"id":{seq}}}"#),
            )
        };
        ledger.note(&order(3, 2));
        ledger.note(&order(4, 4));
        ledger.note(&ex(5, "PATCH", "/authors/1/books/1", Some("{}"), 200, "{}"));
        // A book created under seed author 1 changes no author.
        ledger.note(&ex(
            6,
            "POST",
            "/authors/1/books",
            Some("{}"),
            201,
            r#"{"id":9}"#,
        ));
        let after = u64::MAX / 2;
        let changed = |e: &Exchange| ledger.acts_on_what_the_run_changed(e);
        assert_eq!(changed(&order(after, 2)).as_deref(), Some("bookId = 2"));
        assert_eq!(changed(&order(after, 1)).as_deref(), Some("bookId = 1"));
        assert_eq!(changed(&order(after, 3)), None, "never touched");
        assert_eq!(changed(&order(after, 4)), None, "the run's own");
        let patch = ex(after, "PATCH", "/authors/1/books/2", Some("{}"), 200, "{}");
        assert_eq!(changed(&patch).as_deref(), Some("/authors/1/books/2"));
        let create = ex(
            after,
            "POST",
            "/authors/1/books",
            Some("{}"),
            201,
            r#"{"id":10}"#,
        );
        assert_eq!(changed(&create), None);
        let read = ex(after, "GET", "/authors/1/books/1", None, 200, "{}");
        assert_eq!(changed(&read), None, "a read changes nothing");
    }
}
