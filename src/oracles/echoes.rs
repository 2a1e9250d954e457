//! Values the run itself planted: a negative test's body member that the
//! description forbids and the server accepted (2xx). A server that
//! validates nothing stores `{"title": 123}` and serves it back on every
//! later read; each of those answers breaks the response schema, yet the
//! fault is the one `invalid_input_accepted` already reports. Counting the
//! echoes as `schema_violation` too would file one missing check as many
//! conformance causes, and the spec fixes would loosen the description to
//! fit the run's own garbage ([`Echoes`]).

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use serde_json::Value;

use super::schema::Violation;
use crate::execution::Exchange;

/// Planted values kept at most: a run's accepted wrong inputs repeat, and
/// a bound keeps a hostile server from growing the set without end.
const MAX_PLANTED: usize = 20_000;

/// Planting requests kept at most, for [`Echoes::before`] (the latest:
/// what a later crash needs was planted last).
const MAX_PLANTERS: usize = 4_096;

/// Times one request shape is remembered to have worked, at most (the
/// latest).
const MAX_WORKED: usize = 10_000;

/// Planting requests put before a fault's witness, at most.
pub const MAX_PLANTERS_BEFORE: usize = 8;

/// Writes put before a fault's witness, at most.
pub const MAX_WRITES_BEFORE: usize = 16;

/// The run's latest writes kept, for [`Echoes::writes_before`]: enough to
/// hold the writes before a crash early in a test, once the test's later
/// requests are noted too.
const RECENT_WRITES: usize = 4 * MAX_WRITES_BEFORE;

/// Writes kept for good because a fault was first seen after them, at
/// most: a run with thousands of faults spread over its history would
/// otherwise keep most of its writes.
const MAX_KEPT_WRITES: usize = 4_096;

/// The body members the run's accepted wrong inputs set (or left out), by
/// pointer, with the value sent; the requests that planted them; and when
/// each body-less request shape worked and first crashed, to tell when a
/// crash began.
#[derive(Debug, Default, Clone)]
pub struct Echoes {
    planted: HashSet<(String, Option<String>)>,
    planters: VecDeque<Exchange>,
    worked: HashMap<String, VecDeque<u64>>,
    /// When each body-less request shape first answered 5xx.
    crashed: HashMap<String, u64>,
    /// The latest requests that may change the server's state, whatever
    /// they were answered (a write answered 500 may have kept its record).
    writes: VecDeque<Arc<Exchange>>,
    /// The writes just before each fault's first sighting, by sequence
    /// number, kept for good ([`Echoes::keep_writes_before`]). Only those
    /// are ever asked for, so the run does not hold every write it sent.
    kept_writes: BTreeMap<u64, Arc<Exchange>>,
}

impl Echoes {
    /// None planted yet.
    pub fn new() -> Echoes {
        Echoes::default()
    }

    /// Keeps what `ex` planted, if it is a wrong body member the server
    /// accepted; and, for a body-less request, that it worked or crashed.
    pub fn note(&mut self, ex: &Exchange) {
        if ex.request.is_mutation() && ex.status.is_some() {
            if self.writes.len() == RECENT_WRITES {
                self.writes.pop_front();
            }
            self.writes.push_back(Arc::new(Exchange {
                seq: ex.seq,
                request: ex.request.clone(),
                status: ex.status,
                headers: ex.headers.clone(),
                ..Exchange::default()
            }));
        }
        if let (Some(status), Some(shape)) = (ex.status, shape(ex)) {
            for key in [shape, any_shape(ex)] {
                if (200..300).contains(&status) {
                    let seqs = self.worked.entry(key).or_default();
                    if seqs.len() == MAX_WORKED {
                        seqs.pop_front();
                    }
                    seqs.push_back(ex.seq);
                } else if status >= 500 {
                    let first = self.crashed.entry(key).or_insert(ex.seq);
                    *first = (*first).min(ex.seq);
                }
            }
        }
        // A write answered 5xx may have kept its record (stored, then
        // failed): what it wrote counts as planted state, though no value
        // of it is known to be served back.
        let failed_write = ex.request.is_mutation() && ex.status.is_some_and(|s| s >= 500);
        match planted(ex) {
            Some(planted) => {
                if self.planted.len() < MAX_PLANTED {
                    self.planted.insert(planted);
                }
            }
            None if failed_write => {}
            None => return,
        }
        if self.planters.len() == MAX_PLANTERS {
            self.planters.pop_front();
        }
        // Replayed for its request alone: its answer (up to `--max-body`
        // each, thousands kept) is not worth holding on to.
        self.planters.push_back(Exchange {
            seq: ex.seq,
            request: ex.request.clone(),
            status: ex.status,
            headers: ex.headers.clone(),
            ..Exchange::default()
        });
    }

    /// The last `n` planting requests sent before request `seq`, one per
    /// operation and wrong input (the latest), oldest first: what a fault
    /// first seen at `seq` may need the server to hold (a record with a
    /// null foreign key that breaks every later delete).
    pub fn before(&self, seq: u64, n: usize) -> Vec<&Exchange> {
        self.between(None, seq, n)
    }

    /// When the fault `last` shows began, if the run's history says: the
    /// same body-less request (operation and query names, no wrong input;
    /// else any body-less request of the operation, when that one never
    /// worked) was answered 2xx at a request before `first_seq`, the
    /// fault's first sighting, and the run planted wrong inputs in between.
    /// Those (at most [`MAX_PLANTERS_BEFORE`], the latest) are what changed:
    /// a witness without them may show the fault only while the server
    /// still holds them. The request that worked, and the planters, oldest
    /// first.
    pub fn since_it_worked(
        &self,
        last: &Exchange,
        first_seq: u64,
    ) -> Option<(u64, Vec<&Exchange>)> {
        let worked = self
            .last_worked(&shape(last)?, first_seq)
            .or_else(|| self.last_worked(&any_shape(last), first_seq))?;
        let planters = self.between(Some(worked), first_seq, MAX_PLANTERS_BEFORE);
        (!planters.is_empty()).then_some((worked, planters))
    }

    /// Whether `ex`'s operation both worked (a body-less request answered
    /// 2xx, at any time) and crashed, its first crash after the run had
    /// planted wrong inputs: its answers depend on the data, and the run
    /// corrupted the data.
    pub fn works_unless_planted(&self, ex: &Exchange) -> bool {
        let key = any_shape(ex);
        let first = shape(ex)
            .and_then(|s| self.crashed.get(&s))
            .or_else(|| self.crashed.get(&key));
        self.worked.get(&key).is_some_and(|w| !w.is_empty())
            && first.is_some_and(|&first| !self.before(first, 1).is_empty())
    }

    /// The last request of shape `key` answered 2xx before `before`.
    fn last_worked(&self, key: &str, before: u64) -> Option<u64> {
        self.worked
            .get(key)?
            .iter()
            .copied()
            .filter(|&s| s < before)
            .max()
    }

    /// Whether `ex`, a request answered 5xx, may show a crash that began
    /// only after the run planted wrong inputs: its shape's (or, for a
    /// request with a body or a wrong input, its operation's body-less
    /// requests') first crash in the search came after plants since the
    /// shape last worked. The planters. Looser than
    /// [`Echoes::since_it_worked`], for leaving a test out, not for
    /// adding steps to one.
    pub fn crash_after_plants(&self, ex: &Exchange) -> Option<Vec<&Exchange>> {
        if ex.status.is_none_or(|s| s < 500) {
            return None;
        }
        let keys: Vec<String> = shape(ex).into_iter().chain([any_shape(ex)]).collect();
        keys.iter().find_map(|key| {
            let first = *self.crashed.get(key)?;
            let worked = self.last_worked(key, first)?;
            let planters = self.between(Some(worked), first, MAX_PLANTERS_BEFORE);
            (!planters.is_empty()).then_some(planters)
        })
    }

    /// The last `n` writes (answered, whatever their status) sent before
    /// request `seq`, oldest first: what a fault first seen at `seq` may
    /// need the server to hold when no accepted wrong input explains it (a
    /// record closed by a valid request, a write answered 500 that kept
    /// its record).
    /// Exact for a fault whose first sighting was marked with
    /// [`Echoes::keep_writes_before`], and for one seen among the latest
    /// writes; otherwise the writes still known.
    pub fn writes_before(&self, seq: u64, n: usize) -> Vec<&Exchange> {
        let mut chosen: BTreeMap<u64, &Exchange> = self
            .kept_writes
            .range(..seq)
            .rev()
            .take(n)
            .map(|(&s, e)| (s, e.as_ref()))
            .collect();
        chosen.extend(
            self.writes
                .iter()
                .rev()
                .filter(|e| e.seq < seq)
                .take(n)
                .map(|e| (e.seq, e.as_ref())),
        );
        let skip = chosen.len().saturating_sub(n);
        chosen.into_values().skip(skip).collect()
    }

    /// Keeps for good the writes a fault first seen at request `seq` may
    /// need ([`Echoes::writes_before`]), once the requests of its test are
    /// noted: the latest writes are otherwise dropped as the run goes on.
    pub fn keep_writes_before(&mut self, seq: u64) {
        let wanted: Vec<Arc<Exchange>> = self
            .writes
            .iter()
            .rev()
            .filter(|e| e.seq < seq)
            .take(MAX_WRITES_BEFORE)
            .cloned()
            .collect();
        for write in wanted {
            if self.kept_writes.len() >= MAX_KEPT_WRITES {
                break;
            }
            self.kept_writes.entry(write.seq).or_insert(write);
        }
    }

    /// Up to `n` planters sent after request `after` (if any) and before
    /// `before`, the latest of each operation and wrong input, oldest first.
    fn between(&self, after: Option<u64>, before: u64, n: usize) -> Vec<&Exchange> {
        let mut chosen: Vec<&Exchange> = Vec::new();
        let mut earlier: Vec<&Exchange> = self
            .planters
            .iter()
            .filter(|e| after.is_none_or(|a| e.seq > a) && e.seq < before)
            .collect();
        earlier.sort_by_key(|e| std::cmp::Reverse(e.seq));
        for e in earlier {
            if chosen.len() == n {
                break;
            }
            let same = |c: &&Exchange| {
                c.request.operation == e.request.operation && c.request.breach == e.request.breach
            };
            if !chosen.iter().any(same) {
                chosen.push(e);
            }
        }
        chosen.reverse();
        chosen
    }

    /// Whether `v`, a violation of the answer `body`, shows back what the
    /// run planted: now, in an earlier exchange of the same test
    /// (`test`, the answer's own last), or in an earlier test.
    pub fn explain(&self, test: &[&Exchange], v: &Violation, body: &Value) -> bool {
        // A left-out member shows as `required` naming it; any other
        // keyword shows the value itself.
        let seen = if v.keyword == "required" {
            None
        } else {
            match body.pointer(&v.pointer) {
                Some(value) => Some(value.to_string()),
                None => return false,
            }
        };
        // The answer wraps members its own way (`/0/title`, `/data/title`
        // for `/title`): every tail of the pointer may be the member.
        let tails: Vec<(String, Option<String>)> = v
            .pointer
            .match_indices('/')
            .map(|(i, _)| (v.pointer[i..].to_string(), seen.clone()))
            .collect();
        tails.iter().any(|t| self.planted.contains(t))
            || test
                .iter()
                .filter_map(|ex| planted(ex))
                .any(|p| tails.contains(&p))
    }
}

/// Planting requests as people read them: `createComment body /postId:
/// null, …`.
pub fn named(planters: &[&Exchange]) -> String {
    let named: Vec<String> = planters
        .iter()
        .filter_map(|p| {
            Some(format!(
                "{} {}",
                p.request.operation,
                p.request.breach.as_ref()?
            ))
        })
        .collect();
    named.join(", ")
}

/// The shape of a request without a body or a wrong input, for telling
/// when it worked: its operation and query parameter names.
fn shape(ex: &Exchange) -> Option<String> {
    if ex.request.breach.is_some() || ex.request.body.is_some() {
        return None;
    }
    let query = ex.request.path.split_once('?').map_or("", |(_, q)| q);
    let mut names: Vec<String> = url::form_urlencoded::parse(query.as_bytes())
        .map(|(k, _)| k.into_owned())
        .collect();
    names.sort();
    names.dedup();
    Some(format!("{} {}", ex.request.operation, names.join("&")))
}

/// Any body-less request of `ex`'s operation.
fn any_shape(ex: &Exchange) -> String {
    format!("{} *", ex.request.operation)
}

/// What `ex` planted: the pointer of the wrong body member it sent and was
/// answered 2xx for, with the value sent (none when it was left out).
fn planted(ex: &Exchange) -> Option<(String, Option<String>)> {
    let breach = ex.request.breach.as_ref()?;
    if !breach.kind.forbidden() || !ex.status.is_some_and(|s| (200..300).contains(&s)) {
        return None;
    }
    let at = breach.body_pointer()?;
    let body: Value = serde_json::from_str(ex.request.body.as_deref()?).ok()?;
    let value = body.pointer(&at).map(Value::to_string);
    // A member the body was to leave out but carries planted nothing.
    if (breach.kind == crate::execution::BreachKind::Missing) != value.is_none() {
        return None;
    }
    Some((at, value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execution::{Breach, BreachKind, RequestSpec};

    fn sent(body: &str, input: &str, kind: BreachKind, status: u16) -> Exchange {
        Exchange {
            request: RequestSpec {
                operation: "createPost".into(),
                method: "POST".into(),
                path: "/posts".into(),
                body: Some(body.into()),
                breach: Some(Breach {
                    input: input.into(),
                    kind,
                    class: None,
                }),
                ..Default::default()
            },
            status: Some(status),
            ..Default::default()
        }
    }

    fn violation(pointer: &str, keyword: &str) -> Violation {
        Violation {
            pointer: pointer.into(),
            location: pointer.into(),
            keyword: keyword.into(),
            message: String::new(),
            expected: Vec::new(),
            schema: None,
        }
    }

    #[test]
    fn an_accepted_wrong_value_served_back_is_an_echo() {
        let mut echoes = Echoes::new();
        echoes.note(&sent(
            r#"{"title":123,"views":1}"#,
            "body /title",
            BreachKind::WrongType,
            201,
        ));
        let list = serde_json::json!([{"title": "a"}, {"title": 123}, {"title": 124}]);
        assert!(echoes.explain(&[], &violation("/1/title", "type"), &list));
        // Another value at the member is the server's own.
        assert!(!echoes.explain(&[], &violation("/2/title", "type"), &list));
        // The value at another member is too.
        let other = serde_json::json!({"subtitle": 123});
        assert!(!echoes.explain(&[], &violation("/subtitle", "type"), &other));
    }

    #[test]
    fn only_a_2xx_to_a_forbidden_body_member_plants_anything() {
        let mut echoes = Echoes::new();
        echoes.note(&sent(
            r#"{"title":123}"#,
            "body /title",
            BreachKind::WrongType,
            400,
        ));
        echoes.note(&sent(
            r#"{"title":"%s"}"#,
            "body /title",
            BreachKind::Unusual,
            201,
        ));
        echoes.note(&sent(
            r#"{"id":"x"}"#,
            "path id",
            BreachKind::WrongType,
            200,
        ));
        let body = serde_json::json!({"title": 123});
        assert!(!echoes.explain(&[], &violation("/title", "type"), &body));
        let body = serde_json::json!({"title": "%s"});
        assert!(!echoes.explain(&[], &violation("/title", "pattern"), &body));
    }

    #[test]
    fn a_left_out_member_explains_its_absence_and_the_test_counts_at_once() {
        let missing = sent(r#"{"body":"b"}"#, "body /title", BreachKind::Missing, 201);
        let body = serde_json::json!({"id": 1, "body": "b"});
        let echoes = Echoes::new();
        assert!(echoes.explain(&[&missing], &violation("/title", "required"), &body));
        assert!(!echoes.explain(&[&missing], &violation("/body", "required"), &body));
        assert!(!echoes.explain(&[], &violation("/title", "required"), &body));
        // A body meant to leave the member out that still carries it.
        let carried = sent(r#"{"title":"t"}"#, "body /title", BreachKind::Missing, 201);
        assert!(!echoes.explain(&[&carried], &violation("/title", "required"), &body));
    }

    #[test]
    fn the_checker_reports_no_echo_and_the_first_real_violation_still() {
        let spec = "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /posts:\n    post:\n      operationId: createPost\n      requestBody: {required: true, content: {application/json: {schema: {$ref: '#/components/schemas/Post'}}}}\n      responses: {'201': {description: ok, content: {application/json: {schema: {$ref: '#/components/schemas/Post'}}}}}\n    get:\n      operationId: listPosts\n      responses: {'200': {description: ok, content: {application/json: {schema: {type: array, items: {$ref: '#/components/schemas/Post'}}}}}}\ncomponents:\n  schemas:\n    Post:\n      type: object\n      required: [title]\n      properties: {title: {type: string}, views: {type: integer}}\n";
        let api = crate::load::load_text(spec, std::path::Path::new("t.yaml"))
            .unwrap()
            .api;
        let checker = super::super::Checker::new(&api, Vec::new(), None);
        let answered = |mut ex: Exchange, body: &str| {
            ex.headers = vec![("content-type".into(), "application/json".into())];
            ex.body = body.into();
            ex
        };
        let create = answered(
            sent(
                r#"{"title":123}"#,
                "body /title",
                BreachKind::WrongType,
                201,
            ),
            r#"{"id":1,"title":123}"#,
        );
        let codes = |findings: Vec<Vec<super::super::Finding>>| -> Vec<&str> {
            findings.concat().iter().map(|f| f.code.as_str()).collect()
        };
        assert_eq!(
            codes(checker.test(&api, std::slice::from_ref(&create))),
            ["invalid_input_accepted"]
        );
        let listed = |body: &str| {
            let list = Exchange {
                request: RequestSpec {
                    operation: "listPosts".into(),
                    method: "GET".into(),
                    path: "/posts".into(),
                    ..Default::default()
                },
                status: Some(200),
                ..Default::default()
            };
            answered(list, body)
        };
        let list = listed(r#"[{"title":"a"},{"title":123}]"#);
        let mut echoes = Echoes::new();
        echoes.note(&create);
        assert!(codes(checker.test_after(&api, std::slice::from_ref(&list), &echoes)).is_empty());
        // Without the run's memory the same answer is a violation…
        assert_eq!(
            codes(checker.test(&api, std::slice::from_ref(&list))),
            ["schema_violation"]
        );
        // …and a real violation beside an echo is still reported.
        let list = listed(r#"[{"title":123},{"title":"b","views":"many"}]"#);
        let found = checker.test_after(&api, std::slice::from_ref(&list), &echoes);
        assert_eq!(found.concat().len(), 1);
        assert!(
            found[0][0].found.detail.contains("/*/views type"),
            "{:?}",
            found[0][0]
        );
    }

    #[test]
    fn the_planters_before_a_fault_are_the_latest_of_each_kind() {
        let mut echoes = Echoes::new();
        let mut at = |seq: u64, body: &str, input: &str, kind: BreachKind| {
            let mut ex = sent(body, input, kind, 201);
            ex.seq = seq;
            echoes.note(&ex);
        };
        at(1, r#"{"postId":null}"#, "body /postId", BreachKind::Null);
        at(2, r#"{"title":1}"#, "body /title", BreachKind::WrongType);
        at(3, r#"{"title":2}"#, "body /title", BreachKind::WrongType);
        at(4, r#"{}"#, "body /title", BreachKind::Missing);
        at(9, r#"{"postId":null}"#, "body /postId", BreachKind::Null);
        let seqs = |n| -> Vec<u64> { echoes.before(5, n).iter().map(|e| e.seq).collect() };
        assert_eq!(seqs(1), [4]);
        assert_eq!(seqs(2), [3, 4]);
        assert_eq!(seqs(8), [1, 3, 4]);
    }

    #[test]
    fn a_crash_began_after_what_was_planted_since_the_request_last_worked() {
        let read = |seq: u64, path: &str, status: u16| Exchange {
            seq,
            request: RequestSpec {
                operation: "deletePost".into(),
                method: "DELETE".into(),
                path: path.into(),
                ..Default::default()
            },
            status: Some(status),
            ..Default::default()
        };
        let mut echoes = Echoes::new();
        let plant = |echoes: &mut Echoes, seq: u64, input: &str| {
            let mut ex = sent(r#"{"postId":null}"#, input, BreachKind::Null, 201);
            ex.seq = seq;
            echoes.note(&ex);
        };
        plant(&mut echoes, 1, "body /postId");
        echoes.note(&read(2, "/posts/1", 200));
        plant(&mut echoes, 3, "body /postId");
        echoes.note(&read(4, "/posts/2", 204));
        let crash = read(9, "/posts/3", 500);
        // Nothing planted between the last delete that worked and the crash.
        assert!(echoes.since_it_worked(&crash, 5).is_none());
        plant(&mut echoes, 6, "body /postId");
        let (worked, planters) = echoes.since_it_worked(&crash, 7).unwrap();
        assert_eq!(worked, 4);
        assert_eq!(planters.iter().map(|e| e.seq).collect::<Vec<_>>(), [6]);
        // A query the operation never answered well falls back on any
        // body-less request of it.
        let asked = read(9, "/posts/3?cascade=1", 500);
        assert_eq!(echoes.since_it_worked(&asked, 7).map(|(w, _)| w), Some(4));
        // A request with a body, or one that never worked, says nothing.
        let mut with_body = read(9, "/posts/3", 500);
        with_body.request.body = Some("{}".into());
        assert!(echoes.since_it_worked(&with_body, 7).is_none());
        assert!(echoes.since_it_worked(&crash, 2).is_none());
        // Recorded again later, the crash is told from its first sighting.
        echoes.note(&read(8, "/posts/5", 500));
        let again = read(90, "/posts/7", 500);
        let planters = echoes.crash_after_plants(&again).unwrap();
        assert_eq!(planters.iter().map(|e| e.seq).collect::<Vec<_>>(), [6]);
        assert!(
            echoes
                .crash_after_plants(&read(91, "/posts/7", 200))
                .is_none()
        );
        // A wrong input's crash is judged by the operation's history.
        let mut wrong = read(92, "/posts/abc", 500);
        wrong.request.breach = Some(crate::execution::Breach {
            input: "path id".into(),
            kind: BreachKind::WrongType,
            class: None,
        });
        assert!(echoes.crash_after_plants(&wrong).is_some());
        assert!(echoes.works_unless_planted(&wrong));
        // An operation that never worked crashes whatever was planted.
        let mut never = read(93, "/flow_runs/", 500);
        never.request.operation = "listFlowRuns".into();
        echoes.note(&never);
        assert!(!echoes.works_unless_planted(&never));
    }

    fn write(seq: u64) -> Exchange {
        Exchange {
            seq,
            request: RequestSpec {
                operation: "updatePost".into(),
                method: "PUT".into(),
                path: format!("/posts/{seq}"),
                ..Default::default()
            },
            status: Some(500),
            ..Default::default()
        }
    }

    #[test]
    fn the_writes_before_a_fault_are_kept_for_it_and_no_others_for_good() {
        let mut echoes = Echoes::new();
        let seqs = |w: Vec<&Exchange>| w.iter().map(|e| e.seq).collect::<Vec<_>>();
        for seq in 0..100 {
            echoes.note(&write(seq));
        }
        // A fault first seen at request 90, marked once its test's last
        // request (99) was noted.
        echoes.keep_writes_before(90);
        for seq in 100..20_000 {
            echoes.note(&write(seq));
        }
        assert_eq!(
            seqs(echoes.writes_before(90, MAX_WRITES_BEFORE)),
            (74..90).collect::<Vec<_>>()
        );
        assert_eq!(seqs(echoes.writes_before(90, 1)), vec![89]);
        // The latest writes are known without a mark.
        assert_eq!(
            seqs(echoes.writes_before(19_990, 4)),
            vec![19_986, 19_987, 19_988, 19_989]
        );
        // Twenty thousand writes, and only those a fault needs or the
        // latest are held.
        assert_eq!(echoes.writes.len(), RECENT_WRITES);
        assert_eq!(echoes.kept_writes.len(), MAX_WRITES_BEFORE);
    }
}
