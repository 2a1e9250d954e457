//! `cartograph run` on a GraphQL API: the GraphQL search against the
//! endpoint, then the same confirmation, reproducers and reports as REST.

use std::sync::{Arc, Mutex};

use super::run::{RunFlags, RunSummary};
use crate::execution::{self, secrets::Secrets, Credentials};
use crate::generation::gql_search::GqlDriver;
use crate::generation::SearchConfig;
use crate::model::{graphql::TypeSystem, Api};
use crate::reports::{self, Settings, Tally};
use crate::reproduce;

/// What `run` prepared before choosing the protocol.
pub struct Prepared {
    /// The API (its root fields as operations).
    pub api: Arc<Api>,
    /// The GraphQL type system.
    pub ts: TypeSystem,
    /// The endpoint.
    pub target: url::Url,
    /// Settings as recorded.
    pub settings: Settings,
    /// Per-root-field counts.
    pub tally: Tally,
    /// Secrets to redact.
    pub secrets: Secrets,
    /// Credentials.
    pub credentials: Credentials,
    /// The seed.
    pub seed: u64,
}

/// Runs the GraphQL search and writes the output folder.
pub async fn execute(run: Prepared, flags: &RunFlags) -> anyhow::Result<RunSummary> {
    let Prepared {
        api,
        ts,
        target,
        settings,
        mut tally,
        secrets,
        credentials,
        seed,
    } = run;
    let graph = crate::graph::build(&api);
    super::run::write_graph(&flags.out.join("graph-initial.json"), &graph)?;
    let driver = Arc::new(Mutex::new(GqlDriver::new(
        api.clone(),
        &ts,
        // Requests go to the endpoint itself.
        String::new(),
        graph.clone(),
        (!flags.no_feedback && !flags.no_graph)
            .then(|| crate::graph::feedback::Feedback::new(flags.suspend_after)),
        SearchConfig {
            mio: flags.mio(),
            seed,
            read_only: flags.read_only,
            use_graph: !flags.no_graph,
            max_requests: flags.max_requests,
            budget: flags.budget,
            skip_checks: flags.skip_checks.clone(),
            target: Some(target.clone()),
        },
    )));
    let fault_count = driver
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .faults()
        .counter();
    let config = flags.run_config(&target, seed);
    let outcome = super::run::search(
        driver.clone(),
        fault_count,
        config.clone(),
        credentials.clone(),
        &secrets,
        &mut tally,
        flags,
    )
    .await?;
    let (replay_config, replay_credentials) = (config, credentials);
    let (mut report, checker, fault_scripts, graph_doc, suite_runs) = {
        let mut d = driver.lock().unwrap_or_else(|e| e.into_inner());
        let suite_runs = d.suite_runs();
        let mut report = tally.report(settings, &outcome, d.faults().faults());
        report.schema_coverage = Some(d.coverage());
        super::run::write_graph(&flags.out.join("graph-final.json"), d.graph())?;
        super::run::print_changes(d.changes());
        let graph_doc = crate::graph::export::to_document(d.graph());
        let checker = d.checker().clone();
        let scripts: Vec<_> = d
            .faults()
            .kept()
            .map(|k| reproduce::phase::fault_script(&api, &checker, target.as_str(), k))
            .collect();
        (report, checker, scripts, graph_doc, suite_runs)
    };
    let replay = !flags.no_replay
        && outcome.auth_error.is_none()
        && outcome.stop != execution::StopReason::Interrupted;
    if replay {
        let (time, requests) = reproduce::phase::allowance(flags.budget, flags.max_requests);
        let mut channel = reproduce::phase::Channel::open(
            replay_config,
            replay_credentials,
            &flags.out,
            &secrets,
            (time, requests),
        )?;
        // Half for the faults, so shrinking them cannot leave the suite nothing.
        let (suite_time, suite_requests) = (time / 2, requests / 2);
        channel.time -= suite_time;
        channel.requests -= suite_requests;
        let outcomes = reproduce::phase::confirm(
            api.clone(),
            checker.clone(),
            fault_scripts,
            flags.read_only,
            &mut channel,
        )
        .await?;
        reproduce::phase::attach_reproducers(&mut report.faults, &flags.out, &outcomes, &secrets)?;
        channel.time += suite_time;
        channel.requests += suite_requests;
        // The regression suite: the archive's tests run again, values
        // carried from each answer to the calls after it as Hurl captures.
        let (runs, titles): (Vec<_>, Vec<_>) = suite_runs.into_iter().unzip();
        let recorded = reproduce::phase::record(runs, &mut channel).await?;
        let location = |l: &str| checker.location_path(l);
        let scripts: Vec<_> = recorded
            .iter()
            .zip(titles)
            .filter(|(ex, _)| !ex.is_empty())
            .map(|(ex, title)| {
                let script = reproduce::build::script(&api, target.as_str(), ex, &location);
                (script, ex, title)
            })
            .filter_map(|(mut script, ex, title)| {
                for (step, e) in script.steps.iter_mut().zip(ex) {
                    step.graphql_clean = e.status.is_some() && !reproduce::phase::graphql_errors(e);
                    // An id the test did not get from an earlier answer was
                    // made by another test of the run: on a fresh server it
                    // names nothing, so data it answered is no promise. (One
                    // that answered an error asserts only the status.)
                    if step.graphql_clean && names_literal_id(step) {
                        return None;
                    }
                }
                Some((script, title))
            })
            .collect();
        let scripts = reproduce::phase::settle(scripts, &checker, &mut channel).await?;
        let n = reproduce::phase::write_suite(&flags.out, scripts, &secrets)?;
        channel.trace.finish()?;
        eprintln!(
            "cartograph: regression suite: {n} Hurl file(s) in {} (hurl --test --jobs 1 --variable base={} {}/*.hurl)",
            flags.out.join("tests").display(),
            target.as_str(),
            flags.out.join("tests").display()
        );
    }
    reports::write_report(&flags.out, &report, &secrets)?;
    for w in reports::write_extras(
        &flags.out,
        &report,
        std::slice::from_ref(&graph_doc),
        &secrets,
    )
    .map_err(|e| anyhow::anyhow!("cannot write report.html or junit.xml: {e}"))?
    {
        eprintln!("warning: {w}");
    }
    let coverage = report.schema_coverage.clone().unwrap_or_default();
    eprintln!(
        "cartograph: {} requests in {:.1}s ({}), {} of {} root fields answered data, schema coverage {} of {} (type, field) pairs, {} fault(s); wrote {}",
        report.requests,
        report.elapsed_s,
        report.stop.replace('_', " "),
        coverage.root_fields_reached.len(),
        coverage.root_fields,
        coverage.covered,
        coverage.total,
        report.faults.len(),
        flags.out.display()
    );
    Ok(RunSummary {
        report,
        unreachable: false,
        fail_on: flags.fail_on.clone(),
        graph: Some(graph_doc),
    })
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
fn names_literal_id(step: &reproduce::Step) -> bool {
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

    fn step(body: &str) -> reproduce::Step {
        reproduce::Step {
            operation: "Query.book".into(),
            method: "POST".into(),
            path: String::new(),
            headers: Vec::new(),
            content_type: Some("application/json".into()),
            body: Some(body.into()),
            graphql_query: true,
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
