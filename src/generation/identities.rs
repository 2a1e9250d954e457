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
            let id = done.first().filter(|e| e.is_success()).map(given_ids)?;
            let id = id.first()?;
            let missing = missing_id(id);
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
            api,
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
        })
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
            if ok
                && matches!(method, "POST" | "PUT")
                && !given_ids(ex).is_empty()
                && !self.on_resources(op).is_empty()
            {
                let tests = self.tests;
                self.creations
                    .entry(op)
                    .and_modify(|(r, _)| *r = ex.request.clone())
                    .or_insert((ex.request.clone(), tests));
            }
        }
    }

    /// An identity test finished: a creation that gave no id is planned
    /// again (a few times).
    pub fn finished(&mut self, run: &IdentityRun, exchanges: &[Exchange]) {
        self.requests += exchanges.len() as u64;
        if let Some(c) = run.creation
            && !exchanges
                .first()
                .is_some_and(|e| e.is_success() && !given_ids(e).is_empty())
            && self.planned.get(&c).is_some_and(|n| *n < ATTEMPTS)
        {
            self.creations.remove(&c);
            self.retry.insert(c);
        }
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
        let base = self.api.operations[creating].path.trim_end_matches('/');
        let depth = base.split('/').count();
        self.api
            .operations
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
    fn on_resource(&self, t: usize, at: usize, missing: bool) -> Option<RequestSpec> {
        let (seen, _) = self.seen[t].as_ref()?;
        let op: &Operation = &self.api.operations[t];
        let (seen_path, query) = seen.path.split_once('?').unwrap_or((&seen.path, ""));
        let template: Vec<&str> = op.path.split('/').collect();
        let concrete: Vec<&str> = seen_path.split('/').collect();
        if template.len() != concrete.len() {
            return None;
        }
        let mut path: Vec<String> = Vec::new();
        for (k, (tpl, val)) in template.iter().zip(&concrete).enumerate() {
            path.push(if k == at {
                if missing {
                    format!("{ID}missing")
                } else {
                    ID.to_string()
                }
            } else {
                (*val).to_string()
            });
            let _ = tpl;
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
        for who in self.others.clone() {
            let mut steps = vec![create.clone()];
            for &(t, at) in &order {
                let m = method_of(t);
                if let Some(r) = self.on_resource(t, at, false) {
                    steps.push(RequestSpec {
                        identity: Some(who.clone()),
                        ..r
                    });
                }
                if rank(&m) == 0
                    && let Some(r) = self.on_resource(t, at, true)
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
                if let Some(req) = self.on_resource(r, at, false) {
                    steps.push(RequestSpec {
                        identity: Some(who.clone()),
                        ..req
                    });
                }
            }
            self.push(steps, true, Some(c));
        }
        // Without any credentials: changes to what the description guards.
        let mut steps = vec![create];
        for &(t, at) in &order {
            let op = &self.api.operations[t];
            if rank(&method_of(t)) == 0
                || !crate::model::security::requires_credentials(&op.security)
            {
                continue;
            }
            if let Some(r) = self.on_resource(t, at, false) {
                steps.push(RequestSpec {
                    identity: Some(ANONYMOUS.to_string()),
                    ..r
                });
            }
        }
        self.push(steps, true, Some(c));
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
            self.push(steps, false, None);
        }
    }

    fn push(&mut self, steps: Vec<RequestSpec>, creates: bool, creation: Option<usize>) {
        if steps.len() < 2 {
            return;
        }
        self.queue.push_back(IdentityRun {
            steps,
            next: 0,
            creates,
            creation,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_ids_are_of_the_ids_kind() {
        assert_eq!(missing_id("17"), "987654321");
        assert_eq!(missing_id("3f2c1a7e-1b2c-4d3e-8f90-123456789abc").len(), 36);
        assert_eq!(missing_id("my-note"), "my-note-missing");
    }
}
