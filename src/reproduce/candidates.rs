//! The scripts to try for a fault, best first: its completed witnesses;
//! for a crash that began after the run planted wrong inputs, the witness
//! after them; the witness after growing prefixes of what was planted
//! before the fault was first seen; and, last, its test alone.

use super::{Script, ScriptFault, build};
use crate::execution::Exchange;
use crate::faults::{Kept, witness::Ledger};
use crate::model::{Api, Operation};
use crate::oracles::Checker;
use crate::oracles::echoes::Echoes;

/// What the run knows that completes a witness: who made which id, and
/// which accepted wrong inputs the server may still hold.
#[derive(Clone, Copy)]
pub struct Known<'a> {
    /// Which request made which id.
    pub ledger: &'a Ledger,
    /// The requests that planted values the description forbids.
    pub echoes: &'a Echoes,
}

/// Planting requests put before a witness: tried as growing prefixes (the
/// latest one, two, four, eight), each a replay.
const PLANTERS: [usize; 4] = [1, 2, 4, crate::oracles::echoes::MAX_PLANTERS_BEFORE];

/// The run's last writes put before a witness, when nothing planted
/// explains the fault: growing prefixes, each a replay (on a fresh server,
/// after a reset, shrinking then cuts those the fault does not need).
const WRITES: [usize; 3] = [1, 4, crate::oracles::echoes::MAX_WRITES_BEFORE];

/// The scripts of a kept fault, best first: its completed smallest and
/// first witnesses; the smallest after what the run's accepted wrong inputs
/// planted before it was first seen (a fault that needs a record the run
/// corrupted); and, last, its test alone.
pub fn fault_script(
    api: &Api,
    checker: &Checker,
    known: Known<'_>,
    target: &str,
    kept: &Kept,
) -> Vec<Script> {
    let ledger = known.ledger;
    let location = |l: &str| checker.location_path(l);
    // Completed again with what the whole run knows: a resource the witness
    // names may have been deleted since the fault was found (seed data
    // included); one the run made stands in for it.
    use crate::oracles::FaultCheck;
    let in_items = match &kept.check {
        FaultCheck::JsonType { pointer, .. }
        | FaultCheck::JsonValue { pointer, .. }
        | FaultCheck::JsonMissing { pointer, .. } => pointer
            .split('/')
            .nth(1)
            .is_some_and(|s| s == "*" || s.parse::<usize>().is_ok()),
        _ => false,
    };
    let complete = |w: &[Exchange]| {
        if w.is_empty() {
            Vec::new()
        } else if in_items {
            ledger.complete_listing(w)
        } else {
            ledger.complete(w)
        }
    };
    let witness = complete(&kept.witness);
    let first = complete(&kept.first);
    // Last resort: the test alone, without the requests that made what it
    // used (they may fail now that the run has changed the server's state).
    let own: Vec<Exchange> = kept
        .witness
        .iter()
        .filter(|e| kept.fault.witness.iter().any(|w| w.seq == e.seq))
        .cloned()
        .collect();
    let own = if own.len() < kept.witness.len() {
        own
    } else {
        Vec::new()
    };
    let (began, unplanted) = began_after_plants(api, checker, known, kept, &witness);
    let planted = PLANTERS
        .into_iter()
        .map(|n| known.echoes.before(kept.fault.first_seq, n))
        .scan(0, |longest, planters| {
            let longer = planters.len() > *longest;
            *longest = planters.len();
            Some(longer.then_some(planters))
        })
        .flatten()
        .filter_map(|planters| prefixed(known.ledger, &planters, &witness));
    let wrote = WRITES
        .into_iter()
        .map(|n| known.echoes.writes_before(kept.fault.first_seq, n))
        .scan(0, |longest, writes| {
            let longer = writes.len() > *longest;
            *longest = writes.len();
            Some(longer.then_some(writes))
        })
        .flatten()
        .filter_map(|writes| prefixed(known.ledger, &writes, &witness));
    let candidates = began
        .into_iter()
        .map(|(w, n)| (w, Kind::Began(n)))
        .chain([(witness.clone(), Kind::Witness), (first, Kind::Witness)])
        .chain(planted.map(|(w, n)| (w, Kind::Planted(n))))
        .chain(wrote.map(|(w, n)| (w, Kind::Wrote(n))))
        .chain([(own, Kind::Alone)]);
    candidates
        .filter(|(w, _)| !w.is_empty())
        .map(|(w, kind)| {
            let mut script = build::script(api, checker.positions(), target, &w, &location);
            mark_run_made(api, checker, ledger, &mut script, &w);
            match kind {
                Kind::Witness => {
                    if let Some(why) = &unplanted {
                        script.standalone = false;
                        script.not_standalone.push(why.clone());
                    }
                }
                Kind::Planted(n) => script.planted = n,
                Kind::Began(n) => {
                    script.planted = n;
                    // Replayed first on a server that may still hold every
                    // plant: showing the crash does not tell that these
                    // plants are what it needs (json-server's listing also
                    // broke on a post the run deleted, which is no plant).
                    script.standalone = false;
                    script.not_standalone.push(
                        "it plants what the run had planted when the crash began; whether the crash needs those, or other state the run left, cannot be told on a server that already held them".into(),
                    );
                }
                Kind::Wrote(n) => {
                    // Cut like any step: which of them the fault needs
                    // only a fresh server tells.
                    script.standalone = false;
                    script.not_standalone.push(format!(
                        "its first {n} step(s) replay the run's last requests that may change the server's state before the fault first showed (answered 2xx or not), with the requests that made what they name: whether the fault needs them, or other state the run left, cannot be told on a server that already held them"
                    ));
                }
                Kind::Alone => {
                    script.standalone = false;
                    script.not_standalone.push(
                        "it is the test alone, without the requests that made what it uses".into(),
                    );
                }
            }
            let w = &w;
            script.fault = Some(ScriptFault {
                code: kept.fault.code,
                signature: kept.fault.signature.clone(),
                message: kept.fault.message.clone(),
                check: check_of(api, checker, w, &kept.fault.signature)
                    .unwrap_or_else(|| kept.check.clone()),
            });
            if kept.fault.status == Some(409) && script.planted == 0 {
                makes_its_conflict(&mut script);
            }
            script
        })
        .collect()
}

/// Puts before the last step of a 409 conflict's script the same request,
/// sent once more: a creation refused because an earlier one of the run
/// made the same name conflicts on a fresh server only after a creation of
/// its own (Prefect's `POST /work_pools/ {"name": "FE5xmh2"}`). On the run's
/// state both answer 409; on a fresh server the first makes what the last
/// conflicts with. Shrinking keeps it ([`Script::makes_its_conflict`]).
fn makes_its_conflict(script: &mut Script) {
    let Some(last) = script
        .steps
        .last()
        .filter(|s| matches!(s.method.as_str(), "POST" | "PUT"))
    else {
        return;
    };
    let mut first = last.clone();
    // The run never sent this one: it saw no status for it.
    first.status = None;
    first.captures.clear();
    let at = script.steps.len() - 1;
    script.steps.insert(at, first);
}

/// Tells, of what `script` (built from `exchanges`) names in its paths
/// without a capture, what the run made (a fresh server lacks it) from
/// what the server had, and which earlier step made it without handing it
/// on (its answer did not give the value where a capture finds it): once
/// shrinking cuts that step, the script names a value it no longer
/// creates, and its note must name that value, not the server's own data.
fn mark_run_made(
    api: &Api,
    checker: &Checker,
    ledger: &Ledger,
    script: &mut Script,
    exchanges: &[Exchange],
) {
    let mut pending = Vec::new();
    for (i, (step, ex)) in script.steps.iter().zip(exchanges).enumerate() {
        let template: Option<Vec<&str>> =
            operation_of(api, checker, ex).map(|op| op.path.split('/').collect());
        let written: Vec<&str> = step
            .path
            .split('?')
            .next()
            .unwrap_or("")
            .split('/')
            .collect();
        let sent: Vec<&str> = ex
            .request
            .path
            .split('?')
            .next()
            .unwrap_or("")
            .split('/')
            .collect();
        if written.len() != sent.len() {
            continue;
        }
        let mut chain = String::new();
        for (k, (w, seg)) in written.iter().zip(&sent).enumerate() {
            // As the script's builder names resource paths.
            if seg.is_empty() {
                continue;
            }
            chain.push('/');
            chain.push_str(seg);
            // Only a parameter's segment names a resource (a follow-up of
            // a Location, whose operation has no template, any segment).
            let name = match &template {
                Some(t) if t.len() == sent.len() => {
                    match t[k].strip_prefix('{').and_then(|n| n.strip_suffix('}')) {
                        Some(n) => n.to_string(),
                        None => continue,
                    }
                }
                Some(_) => continue,
                None => "id".to_string(),
            };
            if w.contains("{{") {
                continue;
            }
            let made = ledger.run_made_at(&chain);
            let value = percent_encoding::percent_decode_str(seg)
                .decode_utf8_lossy()
                .into_owned();
            let maker = ledger
                .maker_at(&chain)
                .and_then(|m| exchanges[..i].iter().position(|e| e.seq == m.seq))
                .map(|j| {
                    let s = &script.steps[j];
                    super::Maker {
                        operation: s.operation.clone(),
                        method: s.method.clone(),
                        path: s.path.split('?').next().unwrap_or("").to_string(),
                        chose: s.body.as_deref().is_some_and(|b| b.contains(&value)),
                    }
                });
            let known = script.unmade.iter_mut().find(|u| {
                u.operation == step.operation
                    && u.value == value
                    && u.at.as_deref() == Some(chain.as_str())
            });
            match known {
                Some(u) => {
                    u.from_run = Some(made);
                    u.maker = u.maker.take().or(maker);
                }
                // What the run made, named literally, that no capture
                // carries: made by an earlier step (kept while that step
                // is), or missing already.
                None if made => {
                    let mut u = super::Unmade::new(ex, &name, &value);
                    u.at = Some(chain.clone());
                    u.from_run = Some(true);
                    u.maker = maker;
                    pending.push(u);
                }
                // A value an answer of the run gave, that no step of the
                // script captures (which makes it a value of the server's
                // own, whatever the input's name: Airflow's signed file
                // token, which a fresh start signs with another key).
                None if ledger.server_gave(&name, &value)
                    && !ledger.run_made_named(&value, &name)
                    && !described(operation_of(api, checker, ex), &name, &value) =>
                {
                    let mut u = super::Unmade::new(ex, &name, &value);
                    u.at = Some(chain.clone());
                    u.from_run = Some(false);
                    pending.push(u);
                }
                None => {}
            }
        }
    }
    script.unmade.extend(pending);
    // A value sent in a query or a body: the run made it, or not.
    for u in script.unmade.iter_mut().filter(|u| u.from_run.is_none()) {
        u.from_run = Some(ledger.run_made_named(&u.value, &u.name));
    }
    script.standalone = script.unmade.iter().all(|u| u.maker.is_some());
}

/// For a crash that began after the run planted wrong inputs (the same
/// request worked before them): the witness after them, replayed first
/// (the server may still hold them, and a witness that shows the crash
/// only thanks to that would not show it on a fresh server); and why the
/// witness alone may not show it on a fresh server. Other faults (a
/// resource read after its delete) name what they need.
fn began_after_plants(
    api: &Api,
    checker: &Checker,
    known: Known<'_>,
    kept: &Kept,
    witness: &[Exchange],
) -> (Option<(Vec<Exchange>, usize)>, Option<String>) {
    let crash = kept.fault.status.is_some_and(|s| s >= 500)
        || matches!(
            kept.fault.code,
            crate::oracles::registry::Code::NoAnswer | crate::oracles::registry::Code::InvalidHttp
        );
    let Some(last) = kept.witness.last().filter(|_| crash) else {
        return (None, None);
    };
    let Some((worked, planters)) = known.echoes.since_it_worked(last, kept.fault.first_seq) else {
        let why = listing_crash_after_plants(api, checker, known.echoes, last)
            .then(|| {
                "it reads no single resource, and the operation also worked in the run until it had planted inputs the description forbids: whether it crashes depends on all the server holds".to_string()
            })
            .or_else(|| reads_all_after_writes(api, checker, known.echoes, last, kept.fault.first_seq));
        return (None, why);
    };
    let planted = crate::oracles::echoes::named(&planters);
    // Should the witness alone show the crash, the server may still hold
    // what the run planted (or what replaying the first script planted
    // again).
    let why = format!(
        "the crash began only after the run sent inputs the description forbids and the server accepted ({}); the same request had worked at request {worked}",
        planted
    );
    (prefixed(known.ledger, &planters, witness), Some(why))
}

/// Whether `ex` is a crash of a request that reads no single resource (a
/// listing, a count) whose operation also worked in the run and first
/// crashed after the run planted wrong inputs: its answer depends on all
/// the server holds, so a fresh server may answer it well (json-server's
/// `GET /comments?_expand=post` fails on a comment another test left with
/// a null `postId`). A listing that always crashed is not one.
pub(crate) fn listing_crash_after_plants(
    api: &Api,
    checker: &Checker,
    echoes: &Echoes,
    ex: &Exchange,
) -> bool {
    ex.status.is_some_and(|s| s >= 500)
        && operation_of(api, checker, ex).is_some_and(|op| reads_many(op, &ex.request.method))
        && echoes.works_unless_planted(ex)
}

/// Whether `value` is one the description gives path parameter `name`
/// of `op` (its default, an enum value or an example): a value every
/// answer repeats (Airflow's `map_index` -1) is the client's choice too.
fn described(op: Option<&Operation>, name: &str, value: &str) -> bool {
    let Some(p) = op.and_then(|op| {
        op.parameters
            .iter()
            .find(|p| p.location == crate::model::Location::Path && p.name == name)
    }) else {
        return false;
    };
    let s = &p.schema;
    s.default
        .iter()
        .chain(&s.enum_values)
        .chain(&s.examples)
        .any(|v| crate::execution::wire::as_text(v) == value)
}

/// Verbs an operation that reads is named with (`read_flow_runs`,
/// `countTasks`, `searchItems`).
const READ_VERBS: [&str; 10] = [
    "get", "read", "list", "count", "search", "filter", "query", "find", "fetch", "lookup",
];

/// Whether `op`, sent with `method`, reads what the server holds without
/// naming one resource: a listing, a count, a search, by GET or by a POST
/// named as a read (Prefect's `POST /ui/task_runs/dashboard/counts`,
/// `read_dashboard_task_run_counts`, crashed only once task runs existed):
/// what it answers depends on what earlier writes left.
fn reads_many(op: &Operation, method: &str) -> bool {
    let reads = match method {
        "GET" | "HEAD" => true,
        "POST" => crate::model::names::words(&op.name)
            .first()
            .is_some_and(|w| READ_VERBS.contains(&w.as_str())),
        _ => false,
    };
    reads && !crate::oracles::identity::names_one_resource(op)
}

/// Why a crash of a request that reads no single resource (a listing)
/// may not show on a fresh server: the run had sent requests that may
/// change what it reads before the crash first showed (a write answered
/// 500 may still have kept its record), and the crash may need what they
/// left. Names the last of them.
fn reads_all_after_writes(
    api: &Api,
    checker: &Checker,
    echoes: &Echoes,
    ex: &Exchange,
    first_seq: u64,
) -> Option<String> {
    // A negative test's crash is its wrong input's (Prefect's filters,
    // counts and searches crashed on an integer past 64 bits on any data).
    let listing = ex.status.is_some_and(|s| s >= 500)
        && ex.request.breach.is_none()
        && operation_of(api, checker, ex).is_some_and(|op| reads_many(op, &ex.request.method));
    let last = echoes
        .writes_before(first_seq, 1)
        .pop()
        .filter(|_| listing)?;
    Some(format!(
        "it reads no single resource, and before the crash first showed the run had sent requests that may change what it reads (the last: {} {}, answered {}): whether it crashes depends on what those left on the server",
        last.request.method,
        last.request.operation,
        last.status.map_or("nothing".into(), |s| s.to_string())
    ))
}

/// What a candidate script of a fault is.
enum Kind {
    /// A completed witness.
    Witness,
    /// A completed witness after this many planting steps.
    Planted(usize),
    /// A completed witness after this many steps of what the run planted
    /// since the request last worked.
    Began(usize),
    /// A completed witness after this many steps of the run's last
    /// writes before the fault first showed.
    Wrote(usize),
    /// The fault's test alone.
    Alone,
}

/// `witness` after `planters`, each with the requests that made what it
/// names, and how many steps come before the witness; none without a
/// witness or a planter.
fn prefixed(
    ledger: &Ledger,
    planters: &[&Exchange],
    witness: &[Exchange],
) -> Option<(Vec<Exchange>, usize)> {
    let mut prefix: Vec<Exchange> = Vec::new();
    for p in planters {
        for e in ledger.complete(std::slice::from_ref(*p)) {
            let same = |x: &Exchange| x.seq == e.seq;
            if !prefix.iter().any(same) && !witness.iter().any(same) {
                prefix.push(e);
            }
        }
    }
    let planted = prefix.len();
    if planted == 0 || witness.is_empty() {
        return None;
    }
    prefix.extend(witness.iter().cloned());
    Some((prefix, planted))
}

/// The check of the fault `signature` as the last exchange of `witness`
/// shows it: the fault's first sighting may have shown it elsewhere in the
/// body (`/1/price` there, `/0/price` here).
fn check_of(
    api: &Api,
    checker: &Checker,
    witness: &[Exchange],
    signature: &str,
) -> Option<crate::oracles::FaultCheck> {
    let last = witness.last()?;
    checker
        .test(api, witness)
        .pop()?
        .into_iter()
        .find(|f| f.signature(last.status) == signature)
        .map(|f| f.script_check(last.status))
}

/// The operation `ex` called, by the checker's positions (a lookup on a
/// path every kept fault takes).
fn operation_of<'a>(api: &'a Api, checker: &Checker, ex: &Exchange) -> Option<&'a Operation> {
    checker
        .positions()
        .get(&ex.request.operation)
        .and_then(|&o| api.operations.get(o))
        .filter(|op| op.name == ex.request.operation)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = r#"openapi: 3.0.0
info: {title: dns, version: '1'}
paths:
  /servers/{serverId}/zones:
    post:
      operationId: createZone
      parameters: [{name: serverId, in: path, required: true, schema: {type: string}}]
      requestBody: {content: {application/json: {schema: {type: object, properties: {name: {type: string}}}}}}
      responses: {'201': {description: made}}
  /servers/{serverId}/zones/{zoneId}/records:
    post:
      operationId: createRecord
      parameters:
      - {name: serverId, in: path, required: true, schema: {type: string}}
      - {name: zoneId, in: path, required: true, schema: {type: string}}
      requestBody: {content: {application/json: {schema: {type: object}}}}
      responses: {'201': {description: made}}
"#;

    fn exchange(seq: u64, operation: &str, path: &str, body: &str) -> Exchange {
        Exchange {
            seq,
            request: crate::execution::RequestSpec {
                operation: operation.into(),
                method: "POST".into(),
                path: path.into(),
                headers: vec![],
                body: Some(body.into()),
                content_type: Some("application/json".into()),
                graphql_query: false,
                breach: None,
                identity: None,
            },
            status: Some(201),
            ..Default::default()
        }
    }

    #[test]
    fn reads_by_post_count_as_reads_of_what_the_server_holds() {
        let spec = r#"openapi: 3.0.0
info: {title: t, version: '1'}
paths:
  /ui/task_runs/dashboard/counts:
    post: {operationId: read_dashboard_task_run_counts, responses: {'200': {description: ok}}}
  /flow_runs/count:
    post: {operationId: countFlowRuns, responses: {'200': {description: ok}}}
  /items:
    get: {operationId: listItems, responses: {'200': {description: ok}}}
    post: {operationId: createItem, responses: {'201': {description: made}}}
  /items/{itemId}:
    get:
      operationId: getItem
      parameters: [{name: itemId, in: path, required: true, schema: {type: string}}]
      responses: {'200': {description: ok}}
"#;
        let api = crate::load::load_text(spec, std::path::Path::new("t.yaml"))
            .unwrap()
            .api;
        let op = |name: &str| api.operations.iter().find(|o| o.name == name).unwrap();
        assert!(reads_many(op("read_dashboard_task_run_counts"), "POST"));
        assert!(reads_many(op("countFlowRuns"), "POST"));
        assert!(reads_many(op("listItems"), "GET"));
        assert!(!reads_many(op("createItem"), "POST"));
        assert!(!reads_many(op("getItem"), "GET"));
    }

    #[test]
    fn a_read_that_crashed_after_writes_may_need_them_unless_its_input_crashed_it() {
        let spec = r#"openapi: 3.0.0
info: {title: t, version: '1'}
paths:
  /items/count:
    post: {operationId: countItems, responses: {'200': {description: ok}}}
  /items:
    post: {operationId: createItem, responses: {'201': {description: made}}}
"#;
        let api = crate::load::load_text(spec, std::path::Path::new("t.yaml"))
            .unwrap()
            .api;
        let checker = Checker::new(&api, vec![], None);
        let mut echoes = Echoes::new();
        echoes.note(&exchange(1, "createItem", "/items", "{}"));
        let mut crash = exchange(5, "countItems", "/items/count", "{}");
        crash.status = Some(500);
        let why = reads_all_after_writes(&api, &checker, &echoes, &crash, 5);
        assert!(
            why.as_deref()
                .is_some_and(|w| w.contains("POST createItem")),
            "{why:?}"
        );
        // The same crash on an integer past 64 bits a negative test sent.
        crash.request.breach = Some(crate::execution::Breach {
            input: "body /limit".into(),
            kind: crate::execution::BreachKind::Unusual,
            class: Some(crate::execution::EdgeClass::Huge),
        });
        assert_eq!(
            reads_all_after_writes(&api, &checker, &echoes, &crash, 5),
            None
        );
    }

    #[test]
    fn a_value_an_answer_gave_makes_a_script_that_does_not_fetch_it_not_standalone() {
        let spec = r#"openapi: 3.0.0
info: {title: dags, version: '1'}
paths:
  /parseDagFile/{file_token}:
    put:
      operationId: reparse
      parameters: [{name: file_token, in: path, required: true, schema: {type: string, example: abc}}]
      responses: {'201': {description: queued}}
"#;
        let api = crate::load::load_text(spec, std::path::Path::new("dags.yaml"))
            .unwrap()
            .api;
        let checker = Checker::new(&api, vec![], None);
        let mut put = exchange(1, "reparse", "/parseDagFile/eyJidW5kbGUi.sig", "{}");
        put.request.method = "PUT".into();
        let mut again = put.clone();
        again.seq = 2;
        let w = vec![put, again];
        let location = |l: &str| Some(l.to_string());
        let built = |ledger: &Ledger| {
            let mut script = build::script(
                &api,
                checker.positions(),
                "http://127.0.0.1:1",
                &w,
                &location,
            );
            mark_run_made(&api, &checker, ledger, &mut script, &w);
            script.settle_standalone();
            script
        };
        // `file_token` names no resource by its words: a value the run
        // chose there is the script's own.
        let chosen = built(&Ledger::new());
        assert!(chosen.standalone, "{:?}", chosen.not_standalone);
        // A value the description gives the input (its example) is the
        // client's to choose, even when answers give it too.
        let mut ledger = Ledger::new();
        ledger.note_given("file_token", "abc");
        let mut described_put = w[0].clone();
        described_put.request.path = "/parseDagFile/abc".into();
        let mut described_script = build::script(
            &api,
            checker.positions(),
            "http://127.0.0.1:1",
            std::slice::from_ref(&described_put),
            &location,
        );
        mark_run_made(
            &api,
            &checker,
            &ledger,
            &mut described_script,
            std::slice::from_ref(&described_put),
        );
        described_script.settle_standalone();
        assert!(
            described_script.standalone,
            "{:?}",
            described_script.not_standalone
        );
        // The same value, given by an answer (as `fileToken`, by another
        // spelling): the server's own, which the script does not fetch.
        let mut ledger = Ledger::new();
        ledger.note_given("fileToken", "eyJidW5kbGUi.sig");
        let given = built(&ledger);
        assert!(!given.standalone);
        assert_eq!(
            given
                .not_standalone
                .join("\n")
                .matches("eyJidW5kbGUi.sig")
                .count(),
            1,
            "{:?}",
            given.not_standalone
        );
        assert_eq!(given.unmade.len(), 1, "{:?}", given.unmade);
        let said = given.not_standalone.join("\n");
        assert!(
            said.contains("data the run did not make")
                && said.contains("reparse file_token = eyJidW5kbGUi.sig"),
            "{said}"
        );
    }

    #[test]
    fn the_note_names_the_value_the_run_made_that_the_script_no_longer_creates() {
        let api = crate::load::load_text(SPEC, std::path::Path::new("dns.yaml"))
            .unwrap()
            .api;
        let checker = Checker::new(&api, vec![], None);
        let mut ledger = Ledger::new();
        // The zone's id is the name the client chose: its answer gives
        // nothing a capture could carry.
        let zone = exchange(
            1,
            "createZone",
            "/servers/localhost/zones",
            r#"{"name":"example.org."}"#,
        );
        ledger.note(&zone);
        let record = exchange(
            2,
            "createRecord",
            "/servers/localhost/zones/example.org./records",
            r#"{"type":"A"}"#,
        );
        let w = vec![zone, record];
        let location = |l: &str| Some(l.to_string());
        let mut script = build::script(
            &api,
            checker.positions(),
            "http://127.0.0.1:1",
            &w,
            &location,
        );
        mark_run_made(&api, &checker, &ledger, &mut script, &w);
        // While the script creates the zone, only the server's own data is
        // what it names without creating.
        let mut whole = script.clone();
        whole.settle_standalone();
        let said = whole.not_standalone.join("\n");
        assert!(!said.contains("example.org."), "{said}");
        assert!(
            said.contains("data the run did not make") && said.contains("serverId = localhost"),
            "{said}"
        );
        // The creation without the name it chose no longer makes that zone.
        let mut unnamed = script.clone();
        unnamed.steps[0].body = Some("{}".into());
        unnamed.settle_standalone();
        assert!(
            unnamed.not_standalone[0].contains("zoneId = example.org. from the run"),
            "{:?}",
            unnamed.not_standalone
        );
        // Shrinking cut the zone's creation (no capture tied it to the
        // record's step): the note names the zone first, from the run.
        let mut shrunk = script;
        shrunk.steps.remove(0);
        shrunk.settle_standalone();
        assert!(!shrunk.standalone);
        assert!(
            shrunk.not_standalone[0].starts_with(
                "it uses createRecord zoneId = example.org. from the run, which the script does not create"
            ),
            "{:?}",
            shrunk.not_standalone
        );
    }
}
