//! The identity tests, planned from what the search saw when a second
//! identity is given: a resource the run's own identity created is read,
//! changed and deleted by each other identity and changed without any
//! credentials, and each other identity calls the listings after one it is
//! let into. Each creating operation is planned once it has been seen
//! creating and the operations on its resources have been called (or the
//! search has gone on a while since), so the extra requests are a few per
//! creating operation, whatever the budget. Without a second identity no
//! planner exists and the search sends exactly what it did.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use crate::execution::identities::ANONYMOUS;
use crate::execution::{Exchange, RequestSpec, TestRun};
use crate::model::{Api, Location, Operation};
use crate::oracles::identity::given_ids;

/// Stands in a planned path for the id the test's creation gives.
const ID: &str = "\u{1}id\u{1}";

/// Tests after a creating operation was first seen before it is planned
/// even if some operations on its resources were never called.
const PATIENCE: u64 = 100;

/// Times a creating operation is planned again when its replayed creation
/// gave no id.
const ATTEMPTS: u32 = 3;

/// One identity test: its first request (a creation replayed as the run's
/// own identity, when it has one) gives the id the later ones use.
#[derive(Debug, Clone)]
pub struct IdentityRun {
    steps: Vec<RequestSpec>,
    next: usize,
    creates: bool,
    /// The creating operation it was planned for.
    creation: Option<usize>,
    /// The name the replayed creation chose for its resource, and one no
    /// one made, when the item paths take the client's name (a pool's
    /// `name`) rather than an id the answer gives.
    named: Option<(String, String)>,
}

impl IdentityRun {
    /// The creating operation it was planned for, when it replays one.
    pub fn creation(&self) -> Option<usize> {
        self.creation
    }
}

impl TestRun for IdentityRun {
    fn next_request(&mut self, done: &[Exchange]) -> Option<RequestSpec> {
        let mut step = self.steps.get(self.next)?.clone();
        self.next += 1;
        if self.creates && self.next > 1 {
            let made = done.first().filter(|e| e.is_success())?;
            let (id, missing) = match &self.named {
                Some((name, missing)) => (name.clone(), missing.clone()),
                None => {
                    let id = given_ids(made).into_iter().next()?;
                    let missing = missing_id(&id);
                    (id, missing)
                }
            };
            let id = &id;
            let seg = |v: &str| {
                percent_encoding::utf8_percent_encode(v, percent_encoding::NON_ALPHANUMERIC)
                    .to_string()
            };
            step.path = step
                .path
                .replace(&format!("{ID}missing"), &seg(&missing))
                .replace(ID, &seg(id));
        }
        Some(step)
    }
}

/// An id of the same kind as `id` that no one created.
fn missing_id(id: &str) -> String {
    if id.bytes().all(|b| b.is_ascii_digit()) {
        "987654321".to_string()
    } else if id.len() == 36 && id.chars().filter(|c| *c == '-').count() == 4 {
        "00000000-0000-4000-8000-00000000a0a0".to_string()
    } else {
        format!("{id}-missing")
    }
}

/// A name of the same shape as `name` (its length, and digits or letters
/// when it is all of one kind) that no earlier test made: its tail is the
/// `n`th value of a counter, and a `missing` one never comes from the
/// counter a creation uses, so no test creates it.
fn fresh_name(name: &str, n: u64, missing: bool) -> String {
    let k = n * 2 + u64::from(missing);
    let suffix = if !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()) {
        // A leading 9 keeps the digits from starting with 0 and from
        // meeting the small numbers servers count from.
        format!("9{k}")
    } else {
        let upper = !name.chars().any(|c| c.is_ascii_lowercase())
            && name.chars().any(|c| c.is_ascii_uppercase());
        let alphabetic = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphabetic());
        let mut letters = String::new();
        let mut rest = k;
        for _ in 0..3 {
            letters.insert(0, char::from(b'a' + (rest % 26) as u8));
            rest /= 26;
        }
        while rest > 0 {
            letters.insert(0, char::from(b'a' + (rest % 26) as u8));
            rest /= 26;
        }
        // Letters alone where the name has only letters; else a digit
        // too, so the tail is unlike any word.
        if !alphabetic {
            letters.push_str(&(k % 10).to_string());
        }
        if upper {
            letters.to_ascii_uppercase()
        } else {
            letters
        }
    };
    let len = name.chars().count();
    let suffix_len = suffix.chars().count();
    if len > suffix_len {
        let head: String = name.chars().take(len - suffix_len).collect();
        format!("{head}{suffix}")
    } else {
        format!("{name}{suffix}")
    }
}

/// What the search saw, and the identity tests it makes.
pub struct Planner {
    api: Arc<Api>,
    others: Vec<String>,
    read_only: bool,
    /// Per operation: the last request the run's own identity sent, and
    /// whether it was answered 2xx (a 2xx one is kept over a refused one).
    seen: Vec<Option<(RequestSpec, bool)>>,
    /// Per creating operation: a creation that gave an id, and the test
    /// count it was first seen at.
    creations: BTreeMap<usize, (RequestSpec, u64)>,
    /// Creating operations planned, with their attempts.
    planned: BTreeMap<usize, u32>,
    /// Creating operations whose replayed creation gave no id: planned
    /// again from the next creation seen.
    retry: BTreeSet<usize>,
    listings_planned: bool,
    queue: VecDeque<IdentityRun>,
    tests: u64,
    /// Requests the identity tests sent.
    pub requests: u64,
    /// Per operation, the operations on one resource under its path.
    items: Vec<Vec<(usize, usize)>>,
    /// Per operation, the property each path parameter takes (a pool's
    /// `name`), as the graph advises the protocol, when it does.
    path_properties: Option<Vec<BTreeMap<String, String>>>,
    /// Names the replayed creations chose so far (each test a fresh one).
    named: u64,
    /// Identity tests on a created resource whose creation gave what the
    /// item paths take: the ones that tested something.
    ran_on_resources: u64,
    /// Creating operations answered 2xx by the run's own identity, under
    /// item paths, whose answer gave no id and whose body no name those
    /// paths take: named in the warning when nothing was planned.
    unnamed: BTreeSet<usize>,
    /// Replayed creations that failed, by creating operation: the last
    /// status.
    failed: BTreeMap<usize, Option<u16>>,
}

impl Planner {
    /// A planner for `others` (the identities besides the run's own);
    /// none when there are none.
    pub fn new(api: Arc<Api>, others: &[String], read_only: bool) -> Option<Planner> {
        if others.is_empty() || api.graphql.is_some() {
            return None;
        }
        let n = api.operations.len();
        Some(Planner {
            others: others.to_vec(),
            read_only,
            seen: vec![None; n],
            creations: BTreeMap::new(),
            planned: BTreeMap::new(),
            retry: BTreeSet::new(),
            listings_planned: false,
            queue: VecDeque::new(),
            tests: 0,
            requests: 0,
            path_properties: None,
            named: 0,
            ran_on_resources: 0,
            unnamed: BTreeSet::new(),
            failed: BTreeMap::new(),
            items: items_under(&api),
            api,
        })
    }

    /// Tells the planner which property each path parameter takes, per
    /// operation (as the REST sampler reads the graph).
    pub fn set_path_properties(&mut self, properties: Vec<BTreeMap<String, String>>) {
        self.path_properties = Some(properties);
    }

    /// The body field of creating operation `creating` whose value names
    /// the new resource in the item paths, when they take the client's
    /// choice rather than an id the answer gives: the property the path
    /// parameter takes (`/pools/{pool_name}` → `name`, `{variable_key}` →
    /// `key`, as the graph binds it), or a field named as the parameter
    /// (`connection_id`).
    fn named_by(&self, creating: usize, body: &serde_json::Value) -> Option<(String, String)> {
        for (t, at) in self.on_resources(creating) {
            let op = &self.api.operations[t];
            let Some(param) = op
                .path
                .split('/')
                .nth(at)
                .and_then(|s| s.strip_prefix('{'))
                .and_then(|s| s.strip_suffix('}'))
            else {
                continue;
            };
            let property = match &self.path_properties {
                Some(table) => table.get(t).and_then(|m| m.get(param)).cloned(),
                None => crate::model::names::words(param)
                    .pop()
                    .filter(|w| w != "id" && crate::model::names::is_identifying(w)),
            };
            for field in property
                .into_iter()
                .chain(std::iter::once(param.to_string()))
            {
                if let Some(serde_json::Value::String(v)) = body.get(&field)
                    && !v.is_empty()
                {
                    return Some((field, v.clone()));
                }
            }
        }
        None
    }

    /// Learns from a search test's exchanges (`op_of` gives an exchange's
    /// operation position).
    pub fn observe(&mut self, exchanges: &[Exchange], op_of: impl Fn(&Exchange) -> Option<usize>) {
        self.tests += 1;
        for ex in exchanges {
            let Some(op) = op_of(ex) else { continue };
            if ex.request.breach.is_some() || ex.request.identity.is_some() {
                continue;
            }
            let ok = ex.is_success();
            let keep = match &self.seen[op] {
                Some((_, true)) => ok,
                _ => true,
            };
            if keep {
                self.seen[op] = Some((ex.request.clone(), ok));
            }
            let method = ex.request.method.as_str();
            if !ok || !matches!(method, "POST" | "PUT") {
                continue;
            }
            // No operation reads, changes or deletes one resource under its path.
            if self.items[op].is_empty() {
                continue;
            }
            if given_ids(ex).is_empty() && self.named_in(op, &ex.request).is_none() {
                self.unnamed.insert(op);
            } else {
                self.unnamed.remove(&op);
                let tests = self.tests;
                self.creations
                    .entry(op)
                    .and_modify(|(r, _)| *r = ex.request.clone())
                    .or_insert((ex.request.clone(), tests));
            }
        }
    }

    /// The name `request` (a creation by operation `op`) gives its
    /// resource, when the item paths take it (see [`Planner::named_by`]).
    fn named_in(&self, op: usize, request: &RequestSpec) -> Option<(String, String)> {
        let body: serde_json::Value = serde_json::from_str(request.body.as_deref()?).ok()?;
        self.named_by(op, &body)
    }

    /// An identity test finished: a creation that gave no id is planned
    /// again (a few times).
    pub fn finished(&mut self, run: &IdentityRun, exchanges: &[Exchange]) {
        self.requests += exchanges.len() as u64;
        let Some(c) = run.creation else { return };
        let made = exchanges
            .first()
            .is_some_and(|e| e.is_success() && (run.named.is_some() || !given_ids(e).is_empty()));
        if made {
            if exchanges.len() > 1 {
                self.ran_on_resources += 1;
            }
            return;
        }
        self.failed
            .insert(c, exchanges.first().and_then(|e| e.status));
        if self.planned.get(&c).is_some_and(|n| *n < ATTEMPTS) {
            self.creations.remove(&c);
            self.retry.insert(c);
        }
    }

    /// Why no identity test on a created resource ran, for the user, with
    /// what to do; `None` when one did. `pending` tests were planned but
    /// the run ended first.
    pub fn silence(&self) -> Option<String> {
        if self.ran_on_resources > 0 {
            return None;
        }
        let name = |op: usize| self.api.operations[op].name.clone();
        let listings = if self.listings_planned {
            "only the listings were called as the other identities"
        } else {
            "not even the listings were called as the other identities (the run ended first)"
        };
        let why = if self.read_only {
            "--read-only leaves them out (each creates a resource as the run's own identity): run without it, against a server that may be written to".to_string()
        } else if !self.queue.is_empty()
            || self.creations.keys().any(|c| !self.planned.contains_key(c))
        {
            "the run ended before they ran (each waits until the operations on its resource were called): give a larger --budget or --max-requests".to_string()
        } else if !self.failed.is_empty() {
            let shown: Vec<String> = self
                .failed
                .iter()
                .take(4)
                .map(|(op, status)| match status {
                    Some(s) => format!("{} (answered {s})", name(*op)),
                    None => format!("{} (no answer)", name(*op)),
                })
                .collect();
            format!(
                "the creations they replay as the run's own identity failed: {}; check that the run's own identity may create them",
                shown.join(", ")
            )
        } else {
            let named: Vec<String> = self.unnamed.iter().take(4).map(|&op| name(op)).collect();
            if named.is_empty() {
                "no creation (POST, PUT) by the run's own identity was answered 2xx under a path whose item operations (`/things/{thingId}`) the description lists: check that the first identity may create, and that the creating operations are not excluded".to_string()
            } else {
                format!(
                    "the creations answered 2xx ({}) give no id (no Location, no body `id`) and send no name the item paths take: describe the id in the answer, or name the path parameter after the field (`{{name}}`, `{{thing_name}}`)",
                    named.join(", ")
                )
            }
        };
        Some(format!(
            "identities were given ({}), but no identity test on a created resource ran: {why}; {listings}, so the write, read and existence checks between identities did not run",
            self.others.join(", ")
        ))
    }

    /// The next identity test, when one is due.
    pub fn next_test(&mut self) -> Option<IdentityRun> {
        if self.queue.is_empty() {
            self.plan();
        }
        self.queue.pop_front()
    }

    /// Operations whose path continues the creating operation's with a
    /// parameter naming its resource (`POST /notes` → `/notes/{noteId}`,
    /// `/notes/{noteId}/history`), and the position of that parameter's
    /// segment.
    fn on_resources(&self, creating: usize) -> Vec<(usize, usize)> {
        self.items[creating].clone()
    }
}

/// Per operation, the operations on one resource under its path (see
/// [`Planner::on_resources`]).
fn items_under(api: &Api) -> Vec<Vec<(usize, usize)>> {
    (0..api.operations.len())
        .map(|c| items_of(api, c))
        .collect()
}

fn items_of(api: &Api, creating: usize) -> Vec<(usize, usize)> {
    let base = api.operations[creating].path.trim_end_matches('/');
    let depth = base.split('/').count();
    api.operations
        .iter()
        .enumerate()
        .filter_map(|(i, op)| {
            let rest = op.path.strip_prefix(base)?.strip_prefix("/{")?;
            let name = rest.split('}').next()?;
            let schema = op
                .parameters
                .iter()
                .find(|p| p.location == Location::Path && p.name == name)
                .map(|p| p.schema.clone())
                .unwrap_or_default();
            crate::oracles::identity::identifies(&op.path, name, &schema).then_some((i, depth))
        })
        .collect()
}

impl Planner {
    fn plan(&mut self) {
        let due: Vec<usize> = self
            .creations
            .iter()
            .filter(|(op, (_, since))| {
                let attempts = self.planned.get(op).copied().unwrap_or(0);
                let open = attempts == 0 || self.retry.contains(op);
                let all_seen = self
                    .on_resources(**op)
                    .iter()
                    .all(|(t, _)| self.seen[*t].is_some());
                open && attempts < ATTEMPTS && (all_seen || self.tests >= since + PATIENCE)
            })
            .map(|(op, _)| *op)
            .collect();
        if !self.read_only {
            for c in due {
                *self.planned.entry(c).or_insert(0) += 1;
                self.retry.remove(&c);
                self.plan_creation(c);
            }
        }
        if !self.listings_planned && self.tests >= self.api.operations.len() as u64 {
            self.listings_planned = true;
            self.plan_listings();
        }
    }

    /// The request for `t` on the resource of the test's creation: the
    /// last one seen, its path rebuilt from the template with the id (or a
    /// missing one) at `at`.
    fn on_resource(
        &self,
        t: usize,
        at: usize,
        missing: bool,
        create: &RequestSpec,
    ) -> Option<RequestSpec> {
        let (seen, _) = self.seen[t].as_ref()?;
        let op: &Operation = &self.api.operations[t];
        let (seen_path, query) = seen.path.split_once('?').unwrap_or((&seen.path, ""));
        let template: Vec<&str> = op.path.split('/').collect();
        let concrete: Vec<&str> = seen_path.split('/').collect();
        // The resource lives under the collection the creation made it in
        // (`/dags/d1/dagRuns`): a parent from another call would name
        // another resource (a run of another DAG).
        let made_in: Vec<&str> = create
            .path
            .split('?')
            .next()
            .unwrap_or("")
            .trim_end_matches('/')
            .split('/')
            .collect();
        if template.len() != concrete.len() || made_in.len() != at {
            return None;
        }
        let mut path: Vec<String> = Vec::new();
        for (k, val) in concrete.iter().enumerate() {
            path.push(if k == at {
                if missing {
                    format!("{ID}missing")
                } else {
                    ID.to_string()
                }
            } else if k < at {
                made_in[k].to_string()
            } else {
                (*val).to_string()
            });
        }
        let mut path = path.join("/");
        if !query.is_empty() {
            path.push('?');
            path.push_str(query);
        }
        Some(RequestSpec {
            path,
            ..seen.clone()
        })
    }

    fn plan_creation(&mut self, c: usize) {
        let Some((create, _)) = self.creations.get(&c).cloned() else {
            return;
        };
        let targets = self.on_resources(c);
        let api = self.api.clone();
        let method_of = |t: usize| api.operations[t].method.as_str().to_string();
        let mut order: Vec<(usize, usize)> = targets.clone();
        // Reads first, then changes, deletions last: each identity's
        // earlier refusals make a later success the stronger finding.
        let rank = |m: &str| match m {
            "GET" | "HEAD" => 0,
            "DELETE" => 2,
            _ => 1,
        };
        order.sort_by_key(|(t, _)| (rank(&method_of(*t)), *t));
        let listing = self.listing_of(c, &create);
        for who in self.others.clone() {
            let (first, named) = self.fresh_creation(c, &create);
            let mut steps = vec![first];
            // The collection listed as this identity first: whether it sees
            // what another made tells a shared workspace from private
            // resources, which the identity checks say.
            if let Some(l) = &listing {
                steps.push(RequestSpec {
                    identity: Some(who.clone()),
                    ..l.clone()
                });
            }
            for &(t, at) in &order {
                let m = method_of(t);
                if let Some(r) = self.on_resource(t, at, false, &create) {
                    steps.push(RequestSpec {
                        identity: Some(who.clone()),
                        ..r
                    });
                }
                if rank(&m) == 0
                    && let Some(r) = self.on_resource(t, at, true, &create)
                {
                    steps.push(RequestSpec {
                        identity: Some(who.clone()),
                        ..r
                    });
                }
            }
            // The reads again, last: after a refused change they show whether
            // the server guards the resource against this identity.
            for &(r, at) in order.iter().filter(|(r, _)| rank(&method_of(*r)) == 0) {
                if let Some(req) = self.on_resource(r, at, false, &create) {
                    steps.push(RequestSpec {
                        identity: Some(who.clone()),
                        ..req
                    });
                }
            }
            self.push(steps, true, Some(c), named);
        }
        // Without any credentials: changes to what the description guards.
        let (first, named) = self.fresh_creation(c, &create);
        let mut steps = vec![first];
        for &(t, at) in &order {
            let op = &self.api.operations[t];
            if rank(&method_of(t)) == 0
                || !crate::model::security::requires_credentials(&op.security)
            {
                continue;
            }
            if let Some(r) = self.on_resource(t, at, false, &create) {
                steps.push(RequestSpec {
                    identity: Some(ANONYMOUS.to_string()),
                    ..r
                });
            }
        }
        self.push(steps, true, Some(c), named);
    }

    /// The listing of the collection creation `create` (of operation `c`)
    /// made its resource in (`GET /pools` after `POST /pools`), as the
    /// run's own identity last sent it, at the creation's own path.
    fn listing_of(&self, c: usize, create: &RequestSpec) -> Option<RequestSpec> {
        let path = self.api.operations[c].path.trim_end_matches('/');
        let l = self.api.operations.iter().position(|op| {
            op.method == crate::model::Method::Get && op.path.trim_end_matches('/') == path
        })?;
        let (seen, _) = self.seen[l].as_ref()?;
        let made_at = create.path.split('?').next().unwrap_or("");
        let query = seen.path.split_once('?').map(|(_, q)| q);
        Some(RequestSpec {
            path: match query {
                Some(q) => format!("{made_at}?{q}"),
                None => made_at.to_string(),
            },
            ..seen.clone()
        })
    }

    /// The creation `create` of operation `c` as one test replays it: when
    /// the item paths take the name its body chooses, with a name of its
    /// own (the one the search sent exists already, and a second creation
    /// of it would be refused as a conflict), and a name no one made.
    fn fresh_creation(
        &mut self,
        c: usize,
        create: &RequestSpec,
    ) -> (RequestSpec, Option<(String, String)>) {
        let Some((field, name)) = self.named_in(c, create) else {
            return (create.clone(), None);
        };
        let Some(Ok(serde_json::Value::Object(mut body))) = create
            .body
            .as_deref()
            .map(serde_json::from_str::<serde_json::Value>)
        else {
            return (create.clone(), None);
        };
        let n = self.named;
        self.named += 1;
        let made = fresh_name(&name, n, false);
        let missing = fresh_name(&name, n, true);
        body.insert(field, serde_json::Value::String(made.clone()));
        let body = serde_json::Value::Object(body).to_string();
        (
            RequestSpec {
                body: Some(body),
                ..create.clone()
            },
            Some((made, missing)),
        )
    }

    /// Each other identity calls the reads without path parameters, after
    /// one the run's own identity was let into: a 401 after it was let in
    /// is a valid caller told it is not authenticated.
    fn plan_listings(&mut self) {
        let reads: Vec<usize> = (0..self.api.operations.len())
            .filter(|&i| {
                let op = &self.api.operations[i];
                op.method == crate::model::Method::Get
                    && !op.path.contains('{')
                    && self.seen[i].is_some()
            })
            .collect();
        let Some(&probe) = reads
            .iter()
            .find(|&&i| self.seen[i].as_ref().is_some_and(|(_, ok)| *ok))
        else {
            return;
        };
        for who in self.others.clone() {
            let steps: Vec<RequestSpec> = std::iter::once(probe)
                .chain(reads.iter().copied().filter(|&i| i != probe))
                .filter_map(|i| self.seen[i].as_ref().map(|(r, _)| r.clone()))
                .map(|r| RequestSpec {
                    identity: Some(who.clone()),
                    ..r
                })
                .collect();
            self.push(steps, false, None, None);
        }
    }

    fn push(
        &mut self,
        steps: Vec<RequestSpec>,
        creates: bool,
        creation: Option<usize>,
        named: Option<(String, String)>,
    ) {
        if steps.len() < 2 {
            return;
        }
        self.queue.push_back(IdentityRun {
            steps,
            next: 0,
            creates,
            creation,
            named,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_names_keep_the_names_shape_and_never_meet() {
        assert_eq!(fresh_name("vBMiIUL", 0, false), "vBMiaaa");
        assert_eq!(fresh_name("vBMiIUL", 0, true), "vBMiaab");
        assert_eq!(fresh_name("POOL", 1, false), "PAAC");
        assert_eq!(fresh_name("O", 0, false), "OAAA");
        assert_eq!(fresh_name("o", 0, false), "oaaa");
        assert_eq!(fresh_name("my-pool_1", 2, false), "my-poaae4");
        assert_eq!(fresh_name("1234", 3, false), "1296");
        assert_eq!(fresh_name("", 0, false), "aaa0");
        let made: Vec<String> = (0..2000).map(|n| fresh_name("pool", n, false)).collect();
        let missing: Vec<String> = (0..2000).map(|n| fresh_name("pool", n, true)).collect();
        let all: BTreeSet<&String> = made.iter().chain(&missing).collect();
        assert_eq!(all.len(), 4000, "a name twice");
    }

    #[test]
    fn the_item_paths_parameter_finds_the_name_the_body_chose() {
        let spec = r#"
openapi: 3.0.3
info: {title: T, version: "1"}
paths:
  /pools:
    post:
      operationId: post_pool
      responses: {"201": {description: ok}}
  /pools/{pool_name}:
    get:
      operationId: get_pool
      parameters: [{name: pool_name, in: path, required: true, schema: {type: string}}]
      responses: {"200": {description: ok}}
  /connections:
    post:
      operationId: post_connection
      responses: {"201": {description: ok}}
  /connections/{connection_id}:
    delete:
      operationId: delete_connection
      parameters: [{name: connection_id, in: path, required: true, schema: {type: string}}]
      responses: {"204": {description: ok}}
  /notes:
    post:
      operationId: post_note
      responses: {"201": {description: ok}}
  /notes/{noteId}:
    get:
      operationId: get_note
      parameters: [{name: noteId, in: path, required: true, schema: {type: integer}}]
      responses: {"200": {description: ok}}
"#;
        let api = crate::load::load_text(spec, std::path::Path::new("t.yaml"))
            .unwrap()
            .api;
        let at = api.operation_positions();
        let planner = Planner::new(Arc::new(api), &["bob".to_string()], false).unwrap();
        let body = serde_json::json!({"name": "p1", "connection_id": "c1", "title": "t"});
        assert_eq!(
            planner.named_by(at["post_pool"], &body),
            Some(("name".to_string(), "p1".to_string()))
        );
        assert_eq!(
            planner.named_by(at["post_connection"], &body),
            Some(("connection_id".to_string(), "c1".to_string()))
        );
        // `/notes/{noteId}` takes the id the answer gives, not a name.
        assert_eq!(planner.named_by(at["post_note"], &body), None);
    }

    #[test]
    fn a_resource_is_named_under_the_collection_it_was_made_in() {
        let spec = r#"
openapi: 3.0.3
info: {title: T, version: "1"}
paths:
  /dags/{dag_id}/dagRuns:
    post:
      operationId: trigger
      parameters: [{name: dag_id, in: path, required: true, schema: {type: string}}]
      responses: {"200": {description: ok}}
  /dags/{dag_id}/dagRuns/{dag_run_id}:
    get:
      operationId: get_run
      parameters:
        - {name: dag_id, in: path, required: true, schema: {type: string}}
        - {name: dag_run_id, in: path, required: true, schema: {type: string}}
      responses: {"200": {description: ok}}
"#;
        let api = Arc::new(
            crate::load::load_text(spec, std::path::Path::new("t.yaml"))
                .unwrap()
                .api,
        );
        let at = api.operation_positions();
        let mut planner = Planner::new(api.clone(), &["bob".to_string()], false).unwrap();
        let ex = |op: &str, method: &str, path: &str, body: Option<&str>| Exchange {
            request: RequestSpec {
                operation: op.into(),
                method: method.into(),
                path: path.into(),
                body: body.map(str::to_string),
                ..Default::default()
            },
            status: Some(200),
            ..Default::default()
        };
        // The read was last seen on another DAG's run.
        let seen = [
            ex("get_run", "GET", "/dags/other/dagRuns/r9", None),
            ex(
                "trigger",
                "POST",
                "/dags/d1/dagRuns",
                Some(r#"{"dag_run_id":"run1"}"#),
            ),
        ];
        planner.observe(&seen, |e| at.get(&e.request.operation).copied());
        let test = planner.next_test().expect("a test on the created run");
        assert_eq!(test.steps[0].path, "/dags/d1/dagRuns");
        let read = &test.steps[1];
        assert!(read.path.starts_with("/dags/d1/dagRuns/"), "{}", read.path);
        assert_eq!(read.identity.as_deref(), Some("bob"));
    }

    #[test]
    fn missing_ids_are_of_the_ids_kind() {
        assert_eq!(missing_id("17"), "987654321");
        assert_eq!(missing_id("3f2c1a7e-1b2c-4d3e-8f90-123456789abc").len(), 36);
        assert_eq!(missing_id("my-note"), "my-note-missing");
    }
}
