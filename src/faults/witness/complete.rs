//! Completing a witness with the ledger: a test may use an id that an
//! earlier test created (the search reuses values across tests), and the
//! fault may need what earlier tests did to that resource (a PATCH, a
//! cancel). A reproducer must do it all itself, so the requests that made
//! and changed what a witness names go before it, transitively; what the
//! run deleted, or the ledger forgot, is stood in for by a resource of the
//! same kind that the run made.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::{Ledger, MAX_ADDED, Resource, decoded, fit, location_path};
use crate::execution::Exchange;
use crate::model::names;
use crate::oracles::identity::{given_ids, sent_ids, text};

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

impl Ledger {
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
        let mut completion = Completion {
            ledger: self,
            exchanges,
            listing,
            forgotten,
            added: Vec::new(),
            deps: HashMap::new(),
            todo: exchanges.to_vec(),
            rewrites: Vec::new(),
            fields: Vec::new(),
        };
        let mut guard = 0;
        while let Some(consumer) = completion.todo.pop() {
            guard += 1;
            // A full `added` still lets later consumers link to what is in.
            if guard > 64 {
                break;
            }
            completion.needs_of(&consumer);
        }
        completion.ordered()
    }

    /// Whether the run made a resource whose id is `value` in a collection
    /// that the field `name` fits (`bookId` → `/authors/3/books/469`), as
    /// far as [`MADE`](super::MADE) paths go back.
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
        let is_id = |s: &str| {
            (s.chars().any(|c| c.is_ascii_digit()) && !names::is_version(s))
                || self.by_id.contains_key(s)
        };
        // Each segment of `at`, and whether it is an id: worked out once,
        // not once per remembered resource (tens of thousands after a long
        // run, which made completing a witness take a tenth of a second).
        let want: Vec<(&str, bool)> = at
            .split('/')
            .filter(|s| !s.is_empty())
            .map(|s| (s, is_id(s)))
            .collect();
        let same_kind = |path: &str| {
            let mut segs = path.split('/').filter(|s| !s.is_empty());
            want.iter().all(|&(b, id)| {
                segs.next()
                    .is_some_and(|a| if id { is_id(a) } else { a == b })
            }) && segs.next().is_none()
        };
        self.by_id
            .values()
            .flat_map(|resources| resources.iter())
            .filter(|(path, r)| r.creator.is_some() && same_kind(path) && !self.deleted(path))
            .max_by_key(|(_, r)| r.creator.as_ref().map(|c| c.seq))
            .map(|(path, r)| (path.clone(), r))
    }
}

/// One witness being completed: the requests added to it so far and which
/// request each goes before, with the rewrites that put stand-ins in place
/// of what the run deleted or forgot.
struct Completion<'a> {
    ledger: &'a Ledger,
    /// The witness as given.
    exchanges: &'a [Exchange],
    /// Whether the collection the last exchange reads brings what was made
    /// into it ([`Ledger::complete_listing`]).
    listing: bool,
    /// Whether what the ledger forgot is stood in for
    /// ([`Ledger::complete_standing_in`]).
    forgotten: bool,
    added: Vec<Arc<Exchange>>,
    /// Consumer's seq → the requests added for it; each goes right before
    /// the request that needed it.
    deps: HashMap<u64, Vec<Arc<Exchange>>>,
    /// Requests whose own needs are still to be added.
    todo: Vec<Exchange>,
    /// Paths the witness names that the run deleted (seed data among them),
    /// each with a resource of the same kind the run made instead.
    rewrites: Vec<(String, String)>,
    /// Body fields naming a forgotten resource: (field, old id, stand-in's).
    fields: Vec<(String, String, String)>,
}

impl<'a> Completion<'a> {
    /// Records that `consumer` needs `c` before it, and adds `c` (to be
    /// completed in turn) unless it is given or added already. The need is
    /// recorded either way: ordering follows every need, not only the first.
    fn need(&mut self, c: &Arc<Exchange>, consumer: u64) {
        if c.seq == consumer {
            return;
        }
        let known = self.added.iter().any(|a| a.seq == c.seq)
            || self.exchanges.iter().any(|e| e.seq == c.seq);
        if !known && self.added.len() >= MAX_ADDED {
            return;
        }
        self.deps.entry(consumer).or_default().push(c.clone());
        if !known {
            self.added.push(c.clone());
            self.todo.push((**c).clone());
        }
    }

    /// Adds what `consumer` needs: what the collection it reads holds, when
    /// that read shows the fault, and what made and changed each resource
    /// it names.
    fn needs_of(&mut self, consumer: &Exchange) {
        let exchanges = self.exchanges;
        let position = exchanges
            .iter()
            .position(|e| e.seq == consumer.seq)
            .unwrap_or(0);
        let earlier = &exchanges[..position];
        // The read that shows the fault, of a collection
        // (`GET /authors/37/books`), shows what was created into it and
        // how it was changed since: those go first.
        let shows_fault = exchanges.last().is_some_and(|l| l.seq == consumer.seq);
        if self.listing && consumer.request.method == "GET" && shows_fault {
            self.listed(consumer);
        }
        for (value, hint) in sent_ids(consumer) {
            self.needs_for_id(consumer, earlier, value, hint);
        }
    }

    /// Adds what was created into the collection `consumer` reads, and
    /// changed since, before it.
    fn listed(&mut self, consumer: &Exchange) {
        let collection = consumer
            .request
            .path
            .split('?')
            .next()
            .unwrap_or("")
            .trim_end_matches('/')
            .to_string();
        for r in self.ledger.children(&collection, consumer.seq) {
            let creator = r.creator.iter().filter(|c| c.seq < consumer.seq);
            let changes = r.changes.iter().filter(|c| c.seq < consumer.seq);
            for c in creator.chain(changes) {
                self.need(c, consumer.seq);
            }
        }
    }

    /// Adds what made and changed the resource whose id `value` `consumer`
    /// sends (in the collection path, or the field, `hint`), unless the
    /// sequence gave it already; what the run deleted or the ledger forgot
    /// is stood in for.
    fn needs_for_id(
        &mut self,
        consumer: &Exchange,
        earlier: &[Exchange],
        value: String,
        hint: String,
    ) {
        let ledger = self.ledger;
        let at = format!(
            "{hint}/{}",
            crate::execution::wire::encode_segment(&Value::String(value.clone()))
        );
        let given = if hint.starts_with('/') {
            self.given_at(consumer, earlier, &value, &at)
        } else {
            self.given_named(consumer, earlier, &value)
        };
        if given {
            return;
        }
        let resources = ledger.by_id.get(&value);
        let known = resources.and_then(|r| r.get(&at));
        let unknown = known.is_none_or(|r| r.creator.is_none());
        if hint.starts_with('/')
            && unknown
            && (ledger.deleted.contains(&at)
                || (self.forgotten && ledger.made.contains(&decoded(&at))))
        {
            // The run deleted what the witness names (seed data
            // included): on its server, and in a reproducer, a
            // resource of the same kind that the run made stands in.
            self.stand_in_at(consumer, at);
            return;
        }
        let no_creator = resources.is_none_or(|r| r.values().all(|r| r.creator.is_none()));
        if self.forgotten
            && !hint.starts_with('/')
            && no_creator
            && ledger.made_named(&value, &hint)
        {
            self.stand_in_named(consumer, hint, value);
            return;
        }
        let Some(resources) = resources else {
            return;
        };
        let resource = if hint.starts_with('/') {
            known
        } else {
            resources
                .iter()
                .filter(|(_, r)| r.creator.as_ref().is_some_and(|c| c.seq < consumer.seq))
                .max_by_key(|(path, r)| (fit(path, &hint), r.creator.as_ref().map(|c| c.seq)))
                .map(|(_, r)| r)
        };
        let Some(resource) = resource else { return };
        let creator = resource.creator.as_ref().filter(|c| c.seq < consumer.seq);
        let changes = resource
            .changes
            .iter()
            .filter(|c| c.seq < consumer.seq && creator.is_none_or(|k| c.seq > k.seq));
        for c in creator.into_iter().chain(changes) {
            self.need(c, consumer.seq);
        }
    }

    /// Whether the sequence gives the resource at the path `at` (id
    /// `value`) before `consumer`: by the request that made that very
    /// resource (author 11 is not book 11). What was done to it since,
    /// elsewhere in the run, still goes in (a price PATCH another test
    /// made), and an added maker still goes before this consumer.
    fn given_at(
        &mut self,
        consumer: &Exchange,
        earlier: &[Exchange],
        value: &str,
        at: &str,
    ) -> bool {
        let maker = earlier
            .iter()
            .map(|e| (e.seq, made(e, at)))
            .chain(
                self.added
                    .iter()
                    .map(|a| (a.seq, a.seq < consumer.seq && made(a, at))),
            )
            .filter(|(_, m)| *m)
            .map(|(seq, _)| seq)
            .max();
        if let (Some(since), Some(r)) =
            (maker, self.ledger.by_id.get(value).and_then(|r| r.get(at)))
        {
            for c in r
                .changes
                .iter()
                .filter(|c| c.seq > since && c.seq < consumer.seq)
            {
                self.need(c, consumer.seq);
            }
        }
        if let Some(a) = self.added.iter().find(|a| Some(a.seq) == maker).cloned() {
            self.need(&a, consumer.seq);
        }
        maker.is_some()
    }

    /// Whether the sequence gives the id `value`, sent in a field, before
    /// `consumer`: an earlier answer carries it, or a request added before
    /// it gave it (which then goes before this consumer too).
    fn given_named(&mut self, consumer: &Exchange, earlier: &[Exchange], value: &str) -> bool {
        let by_added = self
            .added
            .iter()
            .find(|a| a.seq < consumer.seq && given_ids(a).iter().any(|id| id == value))
            .cloned();
        if let Some(a) = &by_added {
            self.need(a, consumer.seq);
        }
        answered(earlier, value) || by_added.is_some()
    }

    /// Puts a resource of the kind at the path `at` that the run made in
    /// its place, made (and changed) before `consumer`.
    fn stand_in_at(&mut self, consumer: &Exchange, at: String) {
        let Some((path, r)) = self.ledger.stand_in(&at) else {
            return;
        };
        if !self.rewrites.iter().any(|(old, _)| *old == at) {
            self.rewrites.push((at, path));
        }
        self.need_stand_in(r, consumer.seq);
    }

    /// Puts a resource the run made that the field `hint` fits in place of
    /// the forgotten `value`, made (and changed) before `consumer`.
    fn stand_in_named(&mut self, consumer: &Exchange, hint: String, value: String) {
        let Some((path, r)) = self.ledger.stand_in_for(&hint) else {
            return;
        };
        let id = path.rsplit('/').next().unwrap_or_default().to_string();
        if !self
            .fields
            .iter()
            .any(|(f, old, _)| *f == hint && *old == value)
        {
            self.fields.push((hint, value, id));
        }
        self.need_stand_in(r, consumer.seq);
    }

    /// A stand-in's creation goes before `consumer` whenever it happened;
    /// its changes, those before `consumer`.
    fn need_stand_in(&mut self, r: &Resource, consumer: u64) {
        let creator = r.creator.iter();
        let changes = r.changes.iter().filter(|c| c.seq < consumer);
        for c in creator.chain(changes) {
            self.need(c, consumer);
        }
    }

    /// The witness with what was added, each before what needed it, and
    /// the stand-ins in place.
    fn ordered(mut self) -> Vec<Exchange> {
        // The most specific path first: a book's stand-in carries its own
        // parent.
        self.rewrites
            .sort_by_key(|(old, _)| std::cmp::Reverse(old.len()));
        let mut out = Vec::with_capacity(self.added.len() + self.exchanges.len());
        let mut placed = std::collections::HashSet::new();
        for e in self.exchanges {
            place(e, &self.deps, &mut placed, &mut out);
        }
        out.into_iter()
            .map(|mut e| {
                for (old, new) in &self.rewrites {
                    e.request.path = replace_prefix(&e.request.path, old, new);
                }
                if !self.fields.is_empty() {
                    stand_in_fields(&mut e, &self.fields);
                }
                e
            })
            .collect()
    }
}
