//! The regression suite: the archive's tests, recorded again after the
//! search, become scripts whose values travel from answer to request as
//! captures. Each file must create what it uses, so that it passes on a
//! fresh server: a test is left out, with its reason, when it asserts the
//! run's history rather than the server's behaviour: when it names a
//! resource the run deleted or an id the run made that the test does not
//! make itself (REST), takes a value from an item of a listing it did not
//! fill, or sends an id another test made and expects data for it (GraphQL).

use super::build;
use super::phase::{SuiteLeftOut, SuiteScript, Why, graphql_errors};
use super::{Script, Source, Step};
use crate::execution::Exchange;
use crate::model::Api;
use crate::oracles::identity::identity_sent;
use crate::oracles::witness::Ledger;

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
