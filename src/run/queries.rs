//! A run of production GraphQL requests (AutoGraphQL): each logged request
//! sent once, in log order, through the same engine, checks and reports as a
//! search; every answer checked by the GraphQL oracles, schema coverage
//! measured, faults confirmed, and each request kept as a regression test.

use std::sync::{Arc, Mutex};

use super::confirm::{Link, confirm_faults};
use super::options::RunOptions;
use super::{RunSummary, Session};
use crate::execution::{Exchange, RequestSpec, TestRun};
use crate::generation::graphql::coverage::CoverageTally;
use crate::load::SpecSource;
use crate::load::query_log::{self, LoggedQuery, OpKind};
use crate::model::text::one_line;
use crate::oracles::{Checker, Faults, witness::Ledger};
use crate::reports;
use crate::reproduce::{self, Script, Step, phase::Recorder};

/// One logged request, sent once.
struct Once(Option<RequestSpec>);

impl TestRun for Once {
    fn next_request(&mut self, _done: &[Exchange]) -> Option<RequestSpec> {
        self.0.take()
    }
}

fn request(q: &LoggedQuery) -> RequestSpec {
    RequestSpec {
        operation: q.root_fields.first().cloned().unwrap_or_default(),
        method: "POST".into(),
        // The target is the endpoint itself.
        path: String::new(),
        headers: Vec::new(),
        body: Some(q.body().to_string()),
        content_type: Some("application/json".into()),
        graphql_query: q.kind == OpKind::Query,
        breach: None,
    }
}

/// Sends the log's requests, checks every answer, confirms the faults and
/// writes the output folder.
pub async fn execute(
    api: Arc<crate::model::Api>,
    source: &SpecSource,
    log: query_log::QueryLog,
    log_name: &str,
    target: &str,
    flags: &RunOptions,
) -> anyhow::Result<RunSummary> {
    let Some(ts) = api.graphql.clone() else {
        anyhow::bail!("the schema is not a GraphQL schema");
    };
    let Session {
        target,
        secrets,
        credentials,
        settings,
        mut tally,
        events,
        ..
    } = match crate::run::open_session(&api, source, target, flags).await? {
        Ok(session) => session,
        Err(unreachable) => return Ok(unreachable),
    };
    let (mut sent, mut skipped_mutations, mut subscriptions) = (Vec::new(), 0usize, 0usize);
    let excluded = |q: &LoggedQuery| {
        q.root_fields
            .iter()
            .any(|f| api.left_out.iter().any(|op| op.name == *f))
    };
    let mut fenced = 0usize;
    for q in &log.queries {
        match q.kind {
            _ if excluded(q) => fenced += q.count,
            OpKind::Subscription => subscriptions += 1,
            OpKind::Mutation if flags.read_only => skipped_mutations += q.count,
            _ => sent.push(q.clone()),
        }
    }
    if fenced > 0 {
        eprintln!(
            "cartograph: {fenced} logged request(s) left out: they call an excluded root field"
        );
    }
    if subscriptions > 0 {
        eprintln!(
            "warning: {subscriptions} subscription(s) left out: they need a streaming transport"
        );
    }
    eprintln!(
        "cartograph: {} GraphQL request(s) in {}: {} distinct, {} duplicate(s); sending {}{}",
        log.requests,
        log_name,
        log.queries.len(),
        log.duplicates(),
        sent.len(),
        if skipped_mutations > 0 {
            format!(" (read-only: {skipped_mutations} mutation request(s) skipped)")
        } else {
            String::new()
        }
    );

    let mut config = flags.run_config(&api, &target, 0);
    config.budget = None;
    config.max_requests = None;
    // In log order, one at a time: a production session's mutations come
    // before the queries that read what they made.
    config.concurrency = 1;
    let politeness = Arc::new(config.politeness());
    let transport = super::search::transport(&api, &config)?;
    let tests: Vec<Box<dyn TestRun>> = sent
        .iter()
        .map(|q| Box::new(Once(Some(request(q)))) as Box<dyn TestRun>)
        .collect();
    let driver = Arc::new(Mutex::new(Recorder::new(tests)));
    let outcome = super::search::search(
        driver.clone(),
        Default::default(),
        config.clone(),
        transport.clone(),
        credentials.clone(),
        politeness.clone(),
        &secrets,
        &mut tally,
        flags,
        &events,
    )
    .await?;
    let recorded = std::mem::take(&mut driver.lock().unwrap_or_else(|e| e.into_inner()).recorded);

    let checker = Checker::new(&api, flags.skip_checks.clone(), Some(target.clone()));
    let mut faults = Faults::new();
    let ledger = Ledger::new();
    let fields_of = |t: &Option<String>| {
        t.as_ref()
            .and_then(|t| ts.get(t))
            .map_or(0, |t| t.fields.len())
    };
    // Read-only replays cannot reach mutations: they do not count.
    let roots = fields_of(&ts.query_type)
        + if flags.read_only {
            0
        } else {
            fields_of(&ts.mutation_type)
        };
    let mut coverage = CoverageTally::new(&ts, roots);
    let mut scripts = Vec::new();
    for (q, exchanges) in sent.iter().zip(&recorded) {
        let Some(ex) = exchanges.last() else { continue };
        let findings = checker.test(&api, exchanges);
        faults.record(exchanges, &findings, &ledger);
        let answer = crate::oracles::graphql::inspect(
            &ts,
            &q.query,
            q.operation_name.as_deref(),
            &q.variables,
            ex.status,
            ex.json(),
            &ex.body,
        );
        coverage.add(&answer);
        let errors = reproduce::phase::graphql_errors(ex);
        let seen = if q.count > 1 {
            format!(", {} times", q.count)
        } else {
            String::new()
        };
        scripts.push(reproduce::phase::SuiteScript {
            archived: scripts.len(),
            script: Script {
                target: target.to_string(),
                fault: None,
                steps: vec![Step {
                    operation: ex.request.operation.clone(),
                    method: "POST".into(),
                    path: String::new(),
                    headers: Vec::new(),
                    content_type: Some("application/json".into()),
                    body: ex.request.body.clone(),
                    graphql_query: q.kind == OpKind::Query,
                    breach: None,
                    captures: Vec::new(),
                    status: ex.status,
                    graphql_clean: ex.status.is_some() && !errors,
                }],
                standalone: true,
                not_standalone: Vec::new(),
                direct: Vec::new(),
                unmade: Vec::new(),
            },
            title: format!("{}: logged at {}{seen}", q.root_fields.join(", "), q.source),
        });
    }

    let mut report = tally.report(settings, &outcome, faults.faults());
    if let Some(w) = outcome.rate_limit_warning() {
        eprintln!("warning: {w}");
        report.warnings.push(w);
        report.stop = "rate_limited".into();
    }
    report.schema_coverage = Some(coverage.summary());
    report.query_log = Some(reports::QueryLogSummary {
        requests: log.requests as u64,
        distinct: log.queries.len() as u64,
        duplicates: log.duplicates() as u64,
        sent: sent.len() as u64,
        skipped_mutations: skipped_mutations as u64,
        unreadable: log.warnings.len() as u64,
    });
    // A logged request names what the log's mutations made on this server.
    let mutated = sent.iter().any(|q| q.kind == OpKind::Mutation);
    let kept: Vec<_> = faults
        .kept()
        .map(|k| {
            let mut scripts =
                reproduce::phase::fault_script(&api, &checker, &ledger, target.as_str(), k);
            for s in scripts.iter_mut().filter(|_| mutated) {
                s.standalone = false;
                s.not_standalone
                    .push("the log's mutations made what it names on this server".into());
            }
            scripts
        })
        .collect();
    if !flags.no_replay
        && !kept.is_empty()
        && outcome.auth_error.is_none()
        && outcome.unreachable.is_none()
    {
        let link = Link {
            config,
            transport,
            credentials,
            politeness,
            left: None,
        };
        let mut channel = link.open(flags, &secrets)?;
        confirm_faults(
            &api,
            &checker,
            kept,
            &[],
            &mut report,
            &mut channel,
            flags,
            &secrets,
        )
        .await?;
        channel.trace.finish()?;
    }
    let n = reproduce::phase::write_suite(&flags.out, scripts, &secrets)?.files;
    report.group_causes();
    reports::write_report(&flags.out, &report, &secrets)?;
    let graph_doc = crate::graph::export::to_document(&crate::graph::build(&api));
    for w in reports::write_extras(
        &flags.out,
        &report,
        std::slice::from_ref(&graph_doc),
        &secrets,
    )
    .map_err(|e| anyhow::anyhow!("cannot write report.html, junit.xml or report.sarif: {e}"))?
    {
        eprintln!("warning: {}", one_line(&secrets.redact(&w)));
    }
    let c = report.schema_coverage.clone().unwrap_or_default();
    eprintln!(
        "cartograph: {} requests, {} of {} root fields answered data, schema coverage {} of {} (type, field) pairs, {} fault(s); regression suite: {n} Hurl file(s) in {}; wrote {}",
        report.requests,
        c.root_fields_reached.len(),
        c.root_fields,
        c.covered,
        c.total,
        report.faults.len(),
        flags.out.join("tests").display(),
        flags.out.display()
    );
    for f in &report.faults {
        eprintln!(
            "  {:<28} {:<22} {}",
            f.code,
            one_line(&f.operation),
            one_line(&secrets.redact(&f.message))
        );
    }
    let summary = RunSummary {
        unreachable: outcome.unreachable.is_some(),
        incomplete: outcome.stop == crate::execution::StopReason::RateLimited
            || !outcome.rate_limited.is_empty(),
        report,
        fail_on: flags.fail_on.clone(),
        graph: Some(graph_doc),
        suite_files: Some(n),
        spec_fixes: None,
    };
    events.finish(&summary.report, summary.exit_status(), &flags.out);
    Ok(summary)
}
