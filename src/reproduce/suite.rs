//! The regression suite: the archive's tests, recorded again after the
//! search, become scripts whose values travel from answer to request as
//! captures. Each file must create what it uses, so that it passes on a
//! fresh server: a test is left out, with its reason, when it asserts the
//! run's history rather than the server's behaviour: when it names a
//! resource the run deleted or an id the run made that the test does not
//! make itself (REST), takes a value from an item of a listing it did not
//! fill, or sends an id another test made and expects data for it (GraphQL).

use super::build;
use super::candidates::listing_crash_after_plants;
use super::channel::{Channel, record, script_run};
use super::{Script, Source, Step};
use crate::execution::Exchange;
use crate::execution::reset::ResetError;
use crate::faults::witness::Ledger;
use crate::model::Api;
use crate::oracles::Checker;
use crate::oracles::echoes::Echoes;
use crate::oracles::identity::identity_sent;

/// The suite's scripts from the archive's recorded tests (each with its
/// title), completed with what the run's ledger says created what they use;
/// the ledger learns what the recordings created, in order. Tests left out
/// are counted, each with its reason, in `left_out`.
pub fn scripts(
    api: &Api,
    target: &str,
    recorded: Vec<Vec<Exchange>>,
    titles: Vec<String>,
    ledger: &mut Ledger,
    checker: &crate::oracles::Checker,
    left_out: &mut SuiteLeftOut,
) -> Vec<SuiteScript> {
    let location = |l: &str| checker.location_path(l);
    let graphql = api.graphql.is_some();
    let mut scripts = Vec::new();
    let mut recorded = recorded.into_iter();
    for (k, title) in titles.into_iter().enumerate() {
        let ex = recorded.next().unwrap_or_default();
        if ex.is_empty() {
            left_out.leave(
                k,
                Why::Unfinished,
                "not replayed: the replay allowance ran out first".into(),
            );
            continue;
        }
        // Replayed after the run, in this order: after everything the
        // ledger saw, and each test after the ones replayed before it
        // (whose changes it may have met).
        let mut ex = ex;
        for (i, e) in ex.iter_mut().enumerate() {
            e.seq = u64::MAX / 2 + (k as u64) * 1_000 + i as u64;
        }
        let completed = ledger.complete_standing_in(&ex);
        let script = build::script(api, checker.positions(), target, &completed, &location);
        let why = history(&script, &completed, ledger, graphql);
        for e in &ex {
            ledger.note(e);
        }
        if let Some(reason) = why {
            left_out.leave(k, Why::History, reason);
            continue;
        }
        let mut script = script;
        if graphql {
            let mut another_tests_id = None;
            for (step, e) in script.steps.iter_mut().zip(&completed) {
                step.graphql_clean = e.status.is_some() && !graphql_errors(e);
                // An id the test did not get from an earlier answer was
                // made by another test of the run: on a fresh server it
                // names nothing, so data it answered is no promise. (One
                // that answered an error asserts only the status.)
                if step.graphql_clean && names_literal_id(step) {
                    another_tests_id.get_or_insert(step.operation.clone());
                }
            }
            if let Some(op) = another_tests_id {
                left_out.leave(
                    k,
                    Why::History,
                    format!("{op} sends an id that no earlier call of the test returned (another test made it; on a fresh server it names nothing)"),
                );
                continue;
            }
        }
        scripts.push(SuiteScript {
            archived: k,
            script,
            title,
        });
    }
    scripts
}

/// Why a REST or GraphQL test asserts the run's history rather than the
/// server's behaviour, if it does: what a fresh server would answer it
/// differently.
fn history(
    script: &Script,
    completed: &[Exchange],
    ledger: &Ledger,
    graphql: bool,
) -> Option<String> {
    let call = |e: &Exchange| format!("{} {}", e.request.method, e.request.path);
    // A test that names a resource the run deleted before (seed data
    // included) asserts what only this server's history explains.
    for (e, s) in completed.iter().zip(&script.steps) {
        let carried = s.path.contains("{{") || s.body.as_deref().is_some_and(|b| b.contains("{{"));
        if !carried && ledger.names_deleted(e) {
            return Some(format!("{} names a resource the run deleted", call(e)));
        }
    }
    // A change to what the server started with, after the run changed it
    // (an order for a seed book whose stock the run's orders took): its
    // answer tells the run's history.
    for e in completed {
        if let Some(what) = ledger.acts_on_what_the_run_changed(e) {
            return Some(format!(
                "{} acts on {what}, which the server started with and the run changed",
                call(e)
            ));
        }
    }
    // A creation refused because the run had made that very thing (a name
    // taken) succeeds on a fresh server, unless the script makes it first
    // itself.
    for (i, e) in completed.iter().enumerate() {
        let made_first = completed[..i].iter().any(|p| {
            p.is_success()
                && p.request.path == e.request.path
                && identity_sent(p) == identity_sent(e)
        });
        if ledger.refused_for_what_it_made(e) && !made_first {
            return Some(format!(
                "{} was refused because the run had made the same resource",
                call(e)
            ));
        }
    }
    // An id the run made, sent literally because what made it could not be
    // put before it: on a fresh server it names nothing, or something
    // another test made.
    if !graphql {
        let made = script.unmade.iter().find(|u| match &u.at {
            Some(at) => ledger.run_made_at(at),
            None => ledger.run_made_named(&u.value, &u.name),
        });
        if let Some(u) = made {
            return Some(format!(
                "{} sends {} = {}, which the run made (on a fresh server it names nothing, or what another test made)",
                u.operation, u.name, u.value
            ));
        }
        // A JSON body sent under another media type (a negative test's)
        // carries no captures: its ids stay as the run had them.
        for (e, s) in completed.iter().zip(&script.steps) {
            if s.content_type
                .as_deref()
                .is_some_and(crate::model::is_json_mime)
            {
                continue;
            }
            let body = s.body.as_deref().and_then(|b| serde_json::from_str(b).ok());
            let Some(serde_json::Value::Object(fields)) = body else {
                continue;
            };
            for (k, v) in fields {
                let value = crate::oracles::identity::text(&v).unwrap_or_default();
                if crate::oracles::identity::is_id_name(&k) && ledger.run_made_named(&value, &k) {
                    return Some(format!(
                        "{} sends {k} = {value}, which the run made, in a body no value can be carried into",
                        call(e)
                    ));
                }
            }
        }
    }
    // A value taken from an item of a listing: the test did not make that
    // item, and on a fresh server the place holds another item, or none.
    for (step, e) in script.steps.iter().zip(completed) {
        for c in &step.captures {
            let Source::Json { pointer } = &c.from else {
                continue;
            };
            if pointer
                .split('/')
                .skip(1)
                .any(|t| t.parse::<usize>().is_ok())
            {
                return Some(format!(
                    "takes {} from {pointer} of the answer to {}: an item of a listing it did not make",
                    c.var,
                    call(e)
                ));
            }
        }
    }
    None
}

/// A body with every `{{var}}` as a JSON string: captured values stand bare
/// (numbers) or quoted (strings).
fn quote_captures(body: &str) -> String {
    let mut out = String::with_capacity(body.len() + 8);
    let mut rest = body;
    while let Some(at) = rest.find("{{") {
        let after = &rest[at + 2..];
        let name_len = after.find("}}").filter(|&n| {
            n > 0
                && after[..n]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        let Some(n) = name_len else {
            out.push_str(&rest[..at + 2]);
            rest = after;
            continue;
        };
        let quoted = rest[..at].ends_with('"') && after[n + 2..].starts_with('"');
        if quoted {
            out.push_str(&rest[..at]);
        } else {
            out.push_str(&rest[..at]);
            out.push('"');
        }
        out.push_str("{{");
        out.push_str(&after[..n]);
        out.push_str("}}");
        if !quoted {
            out.push('"');
        }
        rest = &after[n + 2..];
    }
    out.push_str(rest);
    out
}

/// Whether a GraphQL step sends an id-like variable literally (not carried
/// from an earlier answer of its test).
fn names_literal_id(step: &Step) -> bool {
    fn walk(v: &serde_json::Value, name: &str, depth: usize) -> bool {
        match v {
            serde_json::Value::Object(m) if depth < 4 => {
                m.iter().any(|(k, v)| walk(v, k, depth + 1))
            }
            serde_json::Value::Array(items) if depth < 4 => {
                items.iter().any(|v| walk(v, name, depth + 1))
            }
            serde_json::Value::String(s) => {
                crate::oracles::identity::is_id_name(name) && !s.contains("{{")
            }
            serde_json::Value::Number(_) => crate::oracles::identity::is_id_name(name),
            _ => false,
        }
    }
    let body: serde_json::Value = step
        .body
        .as_deref()
        .map(quote_captures)
        .and_then(|b| serde_json::from_str(&b).ok())
        .unwrap_or_default();
    body.get("variables").is_some_and(|v| walk(v, "", 0))
}

/// Runs each script once on the run's state and keeps those that ran to
/// their end, with the statuses this run saw: a suite file asserts what
/// its own requests get, not what the test met amid the search's state.
/// (With a reset, [`prove_suite`] runs them on a fresh server instead.)
pub async fn settle(
    scripts: Vec<SuiteScript>,
    api: &Api,
    checker: &Checker,
    echoes: &Echoes,
    channel: &mut Channel,
    left_out: &mut SuiteLeftOut,
) -> Vec<SuiteScript> {
    let runs = scripts
        .iter()
        .map(|s| script_run(&s.script, checker))
        .collect();
    let mut recorded = record(runs, channel).await.into_iter();
    let mut kept = Vec::new();
    for mut s in scripts {
        let ran = recorded.next().unwrap_or_default();
        if ran.len() != s.script.steps.len() {
            let why = if ran.is_empty() {
                "not replayed: the replay allowance ran out first".to_string()
            } else {
                format!(
                    "stopped after {} of {} calls when replayed (an answer lacked a value a later call needs, or the replay allowance ran out)",
                    ran.len(),
                    s.script.steps.len()
                )
            };
            left_out.leave(s.archived, Why::Unfinished, why);
            continue;
        }
        // A step with only literal values whose answer changed since the
        // test was recorded depends on what else happened on the server
        // (an id that another test created meanwhile): not a regression test.
        let unstable = s
            .script
            .steps
            .iter()
            .zip(&ran)
            .enumerate()
            .find_map(|(i, (step, ex))| {
                let literal = !step.path.contains("{{")
                    && !step.body.as_deref().is_some_and(|b| b.contains("{{"));
                let status = |s: Option<u16>| s.map_or("no answer".into(), |s| s.to_string());
                let call = format!("call {} ({})", i + 1, step.operation);
                if literal && step.status != ex.status {
                    Some(format!(
                        "{call} answered {} when recorded, {} when replayed",
                        status(step.status),
                        status(ex.status)
                    ))
                } else if literal && ex.status == Some(409) {
                    // A conflict is an answer about the server's state.
                    Some(format!(
                        "{call} answered 409, a conflict with the server's state"
                    ))
                } else if step.graphql_clean && graphql_errors(ex) {
                    // A GraphQL step asserts "no errors" only if it still holds.
                    Some(format!(
                        "{call} answered errors when replayed, none when recorded"
                    ))
                } else {
                    None
                }
            });
        if let Some(why) = unstable {
            left_out.leave(s.archived, Why::Unstable, why);
            continue;
        }
        let history = crash_after_plants(&ran, echoes)
            .or_else(|| crash_reading_all(api, checker, &ran, echoes));
        if let Some(why) = history {
            left_out.leave(s.archived, Why::History, why);
            continue;
        }
        for (step, ex) in s.script.steps.iter_mut().zip(&ran) {
            step.status = ex.status;
        }
        kept.push(s);
    }
    kept
}

/// Rounds of [`prove_suite`], at most: each after one reset, the files
/// that could not run to their end set aside, until one round runs whole.
const SEQUENCE_ROUNDS: usize = 3;

/// The regression suite as proven on a fresh server.
#[derive(Debug, Default)]
pub struct SuiteProof {
    /// Files that ran, in order, after one reset, each to its end: they
    /// assert what that fresh server answered (`tests/`).
    pub proven: Vec<SuiteScript>,
    /// Files written without that proof, each with why (`tests/unproven/`).
    pub unproven: Vec<(SuiteScript, String)>,
    /// Rounds run (a reset each).
    pub rounds: usize,
}

/// Proves the suite on a fresh server as hurl runs it (`hurl --test --jobs
/// 1 tests/*.hurl`, one file after another): one reset, then every file in
/// order; each file asserts what that fresh server answered it. A file
/// that cannot run to its end there (an answer lacked a value it needs) is
/// set aside with its reason, and the files after it, which met what it
/// left, are proven again in another round without it. What the time left
/// does not prove (a reset as slow as the slowest so far must fit, and the
/// run's own files are run only while time is left) is written unproven,
/// with why, rather than not at all.
pub async fn prove_suite(
    scripts: Vec<SuiteScript>,
    checker: &Checker,
    channel: &mut Channel,
    left_out: &mut SuiteLeftOut,
) -> Result<SuiteProof, ResetError> {
    let mut proof = SuiteProof::default();
    let mut pending = scripts;
    // Files of `pending` from this one on are not proven in its order.
    let mut unproven_from = 0;
    let mut why = String::new();
    while !pending.is_empty() {
        let first = pending[0].script.steps.len();
        if proof.rounds == SEQUENCE_ROUNDS {
            why = format!(
                "the files before it were set aside in {SEQUENCE_ROUNDS} rounds, each run after one reset: whether it passes after the files kept is unproven"
            );
            break;
        }
        if !channel.affords(first) {
            why = format!(
                "not run on a fresh server: the replay time left ({:.0}s) held no reset ({:.1}s the slowest) and the files before it",
                channel.time.as_secs_f64(),
                channel.slowest_reset().as_secs_f64()
            );
            break;
        }
        channel.fresh().await?;
        if channel.time < channel.cost_of(first) {
            // The reset took longer than the slowest before it: its fresh
            // server goes to a proof that still fits (a reproducer).
            why = format!(
                "not run on a fresh server: the reset before it took {:.1}s, and left no time for the suite",
                channel
                    .reset_times
                    .last()
                    .copied()
                    .unwrap_or_default()
                    .as_secs_f64()
            );
            break;
        }
        proof.rounds += 1;
        // A test that made the same requests as an earlier one shares its
        // file ([`write_suite`]): it runs once, as hurl will run it.
        let twin: Vec<Option<usize>> = (0..pending.len())
            .map(|i| (0..i).find(|&j| pending[j].script.steps == pending[i].script.steps))
            .collect();
        let runs = pending
            .iter()
            .zip(&twin)
            .filter(|(_, t)| t.is_none())
            .map(|(s, _)| script_run(&s.script, checker))
            .collect();
        let mut recorded = record(runs, channel).await.into_iter();
        let mut ran_by: Vec<Vec<Exchange>> = Vec::with_capacity(pending.len());
        for t in &twin {
            let ran = match t {
                Some(j) => ran_by[*j].clone(),
                None => recorded.next().unwrap_or_default(),
            };
            ran_by.push(ran);
        }
        let out_of_time = channel.spent();
        let mut kept = Vec::with_capacity(pending.len());
        let mut set_aside = None;
        let mut unrun = None;
        for (mut s, ran) in pending.into_iter().zip(ran_by) {
            let whole = ran.len() == s.script.steps.len();
            if !whole && out_of_time {
                // Cut off by the time, not by the server: unproven.
                unrun.get_or_insert(kept.len());
                why = format!(
                    "not run to its end on a fresh server: the replay time ran out during the suite's run after a reset ({:.1}s the slowest reset)",
                    channel.slowest_reset().as_secs_f64()
                );
                kept.push(s);
                continue;
            }
            if !whole {
                left_out.leave(
                    s.archived,
                    Why::Unfinished,
                    format!(
                        "run after one reset with the suite's files before it, it stopped after {} of {} calls (an answer lacked a value a later call needs)",
                        ran.len(),
                        s.script.steps.len()
                    ),
                );
                set_aside.get_or_insert(kept.len());
                continue;
            }
            if unrun.is_none() {
                for (step, ex) in s.script.steps.iter_mut().zip(&ran) {
                    step.status = ex.status;
                    // A fresh server's errors: the file asserts the status alone.
                    if step.graphql_clean && graphql_errors(ex) {
                        step.graphql_clean = false;
                    }
                }
            }
            kept.push(s);
        }
        pending = kept;
        match (set_aside, unrun) {
            (None, None) => {
                unproven_from = pending.len();
                break;
            }
            (Some(at), Some(cut)) => {
                // Those after a file set aside met what it left; those the
                // time cut off never ran: another round is not affordable.
                unproven_from = at.min(cut);
                if at < cut {
                    why = "run after one reset, but after a file that was then set aside: the suite without it was not run again (the replay time ran out)".to_string();
                }
                break;
            }
            (None, Some(cut)) => {
                unproven_from = cut;
                break;
            }
            (Some(at), None) => {
                unproven_from = at;
                why = "run after one reset, but after a file that was then set aside: the suite without it was not run again".to_string();
            }
        }
    }
    let unproven = pending.split_off(unproven_from.min(pending.len()));
    proof.proven = pending;
    proof.unproven = unproven.into_iter().map(|s| (s, why.clone())).collect();
    Ok(proof)
}

/// Why a recorded suite test asserts the run's history: a call crashed
/// that crashed only after the run planted wrong inputs (on a fresh server
/// it may not crash).
fn crash_after_plants(ran: &[Exchange], echoes: &Echoes) -> Option<String> {
    ran.iter().enumerate().find_map(|(i, ex)| {
        let planters = echoes.crash_after_plants(ex)?;
        let planted = crate::oracles::echoes::named(&planters);
        Some(format!(
            "call {} ({}) answered {}, a crash that began only after the run sent inputs the description forbids and the server accepted ({}): on a fresh server it may not crash",
            i + 1,
            ex.request.operation,
            ex.status.unwrap_or(0),
            planted
        ))
    })
}

/// Why a recorded suite test asserts the whole server's data: a call's
/// crash is a listing's that began after plants
/// ([`listing_crash_after_plants`]); a listing that always crashed is kept.
fn crash_reading_all(
    api: &Api,
    checker: &Checker,
    ran: &[Exchange],
    echoes: &Echoes,
) -> Option<String> {
    ran.iter().enumerate().find_map(|(i, ex)| {
        listing_crash_after_plants(api, checker, echoes, ex).then(|| {
            format!(
                "call {} ({}) answered {}, reading no single resource, which also worked in the run until it had planted inputs the description forbids: whether it crashes depends on all the server holds, not only on what this test made",
                i + 1,
                ex.request.operation,
                ex.status.unwrap_or(0)
            )
        })
    })
}

/// One archived test on its way into the suite.
#[derive(Debug, Clone)]
pub struct SuiteScript {
    /// Its place in the archive (and in `suite.json`'s `tests`).
    pub archived: usize,
    /// Its requests.
    pub script: Script,
    /// What it covers, heading its file.
    pub title: String,
}

/// Why an archived test was left out of the suite, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// It asserts the run's history, not the server's behaviour.
    History,
    /// Its literal requests answered differently when replayed.
    Unstable,
    /// It did not run to its end.
    Unfinished,
}

/// What became of one archived test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fate {
    /// It is in this Hurl file (relative to the output folder), alone or
    /// with tests that made the same requests.
    Written(String),
    /// It is in this Hurl file, under `tests/unproven/`: no run on a fresh
    /// server proved it, for this reason.
    Unproven(String, String),
    /// It was left out, for this reason.
    LeftOut(String),
}

/// Why tests of the archive did not become regression tests, by reason.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SuiteLeftOut {
    /// Tests in the archive.
    pub archived: usize,
    /// Tests that asserted the run's history: they named what the run
    /// deleted, or ids other tests made.
    pub history: usize,
    /// Tests whose literal requests answered differently when replayed.
    pub unstable: usize,
    /// Tests that did not run to their end (the phase's time or requests ran
    /// out, or an answer lacked a value a later request needed).
    pub unfinished: usize,
    /// Per test left out, its place in the archive and the reason.
    pub reasons: Vec<(usize, String)>,
}

impl SuiteLeftOut {
    /// Leaves out the archive's test `archived`, for `reason`.
    pub fn leave(&mut self, archived: usize, why: Why, reason: String) {
        match why {
            Why::History => self.history += 1,
            Why::Unstable => self.unstable += 1,
            Why::Unfinished => self.unfinished += 1,
        }
        self.reasons.push((archived, reason));
    }

    /// Why a suite is empty (or smaller than the archive), for people.
    pub fn explain(&self) -> String {
        if self.archived == 0 {
            return "the search archived no test (nothing was covered)".to_string();
        }
        let mut parts = Vec::new();
        if self.history > 0 {
            parts.push(format!(
                "{} asserted the run's history (named what it deleted or ids other tests made)",
                self.history
            ));
        }
        if self.unstable > 0 {
            parts.push(format!(
                "{} answered differently when replayed",
                self.unstable
            ));
        }
        if self.unfinished > 0 {
            parts.push(format!(
                "{} did not run to their end (the replay allowance ran out, or the server stopped answering)",
                self.unfinished
            ));
        }
        format!(
            "of {} archived test(s), {}",
            self.archived,
            if parts.is_empty() {
                "none was left out".to_string()
            } else {
                parts.join("; ")
            }
        )
    }
}

/// Whether a GraphQL answer has an `errors` entry (or is not JSON).
pub fn graphql_errors(ex: &Exchange) -> bool {
    match ex.json() {
        Some(body) => body
            .get("errors")
            .is_some_and(|e| e.as_array().is_none_or(|a| !a.is_empty())),
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(body: &str) -> Step {
        Step {
            operation: "Query.book".into(),
            method: "POST".into(),
            path: String::new(),
            headers: Vec::new(),
            content_type: Some("application/json".into()),
            body: Some(body.into()),
            graphql_query: true,
            breach: None,
            identity: None,
            captures: Vec::new(),
            status: Some(200),
            graphql_clean: true,
        }
    }

    #[test]
    fn literal_ids_are_told_from_carried_ones() {
        let q = r#""query":"query Q($id: ID!) { book(id: $id) { id } }""#;
        assert!(names_literal_id(&step(&format!(
            r#"{{{q},"variables":{{"id":"34"}}}}"#
        ))));
        assert!(!names_literal_id(&step(&format!(
            r#"{{{q},"variables":{{"id":"{{{{id}}}}"}}}}"#
        ))));
        assert!(!names_literal_id(&step(&format!(
            r#"{{{q},"variables":{{"id":{{{{n}}}}}}}}"#
        ))));
        assert!(names_literal_id(&step(&format!(
            r#"{{{q},"variables":{{"input":{{"authorId":3}},"title":"x"}}}}"#
        ))));
        assert!(!names_literal_id(&step(&format!(
            r#"{{{q},"variables":{{"name":"Ann"}}}}"#
        ))));
    }
}
