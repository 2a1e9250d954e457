//! The regression suite: the archive's tests, recorded again after the
//! search, become scripts whose values travel from answer to request as
//! captures. A test is left out when it asserts the run's history rather
//! than the server's behaviour: when it names a resource the run deleted or
//! an id the run made that the test does not make itself (REST), or sends an
//! id another test made and expects data for it (GraphQL).

use super::build;
use super::phase::{graphql_errors, SuiteLeftOut};
use super::{Script, Step};
use crate::execution::Exchange;
use crate::model::Api;
use crate::oracles::witness::{identity_sent, Ledger};

/// The suite's scripts from the archive's recorded tests (each with its
/// title), completed with what the run's ledger says created what they use;
/// the ledger learns what the recordings created, in order.
pub fn scripts(
    api: &Api,
    target: &str,
    recorded: Vec<Vec<Exchange>>,
    titles: Vec<String>,
    ledger: &mut Ledger,
    location: &dyn Fn(&str) -> Option<String>,
    left_out: &mut SuiteLeftOut,
) -> Vec<(Script, String)> {
    let graphql = api.graphql.is_some();
    let mut scripts = Vec::new();
    for (k, (ex, title)) in recorded.into_iter().zip(titles).enumerate() {
        if ex.is_empty() {
            left_out.unfinished += 1;
            continue;
        }
        // Replayed after the run, in this order: after everything the
        // ledger saw, and each test after the ones replayed before it
        // (whose changes it may have met).
        let mut ex = ex;
        for (i, e) in ex.iter_mut().enumerate() {
            e.seq = u64::MAX / 2 + (k as u64) * 1_000 + i as u64;
        }
        let completed = ledger.complete(&ex);
        let mut script = build::script(api, target, &completed, location);
        // A test that names a resource the run deleted before (seed
        // data included) asserts what only this server's history explains.
        let literal_deleted = completed.iter().zip(&script.steps).any(|(e, s)| {
            let carried =
                s.path.contains("{{") || s.body.as_deref().is_some_and(|b| b.contains("{{"));
            !carried && ledger.names_deleted(e)
        });
        // A creation refused because the run had made that very thing (a
        // name taken) succeeds on a fresh server, unless the script makes
        // it first itself.
        let collided = completed.iter().enumerate().any(|(i, e)| {
            ledger.refused_for_what_it_made(e)
                && !completed[..i].iter().any(|p| {
                    p.is_success()
                        && p.request.path == e.request.path
                        && identity_sent(p) == identity_sent(e)
                })
        });
        for e in &ex {
            ledger.note(e);
        }
        // An id the run made, sent literally because what made it could not
        // be put before it: on a fresh server it names nothing, or something
        // another test made.
        let names_run_made = !graphql
            && script.unmade.iter().any(|u| match &u.at {
                Some(at) => ledger.run_made_at(at),
                None => ledger.run_made(&u.value),
            });
        if literal_deleted || names_run_made || collided {
            left_out.history += 1;
            continue;
        }
        if graphql {
            let mut names_another_tests_id = false;
            for (step, e) in script.steps.iter_mut().zip(&completed) {
                step.graphql_clean = e.status.is_some() && !graphql_errors(e);
                // An id the test did not get from an earlier answer was
                // made by another test of the run: on a fresh server it
                // names nothing, so data it answered is no promise. (One
                // that answered an error asserts only the status.)
                names_another_tests_id |= step.graphql_clean && names_literal_id(step);
            }
            if names_another_tests_id {
                left_out.history += 1;
                continue;
            }
        }
        scripts.push((script, title));
    }
    scripts
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
                crate::oracles::witness::is_id_name(name) && !s.contains("{{")
            }
            serde_json::Value::Number(_) => crate::oracles::witness::is_id_name(name),
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
