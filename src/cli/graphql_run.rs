//! `cartograph run` on a GraphQL API: the GraphQL search against the
//! endpoint, then the same confirmation, reproducers and reports as REST.

use std::sync::{Arc, Mutex};

use super::run::{Progress, RunFlags, RunSummary};
use crate::execution::{self, secrets::Secrets, Credentials, TraceWriter, Transport};
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
    let transport = Transport::new(target.clone(), flags.max_body, config.concurrency)
        .map_err(|e| anyhow::anyhow!(e))?;
    let (replay_config, replay_credentials) = (config.clone(), credentials.clone());
    let mut trace = TraceWriter::create(&flags.out.join("trace.ndjson"), secrets.clone())?;
    let progress = Progress::new(api.operations.len(), flags.budget);
    let mut trace_error = None;
    let outcome = execution::run(config, transport, credentials, driver.clone(), |ex| {
        if let Err(e) = trace.write(ex) {
            trace_error.get_or_insert(e);
        }
        tally.add(ex);
        progress.update(
            ex.seq + 1,
            tally.reached(),
            fault_count.load(std::sync::atomic::Ordering::Relaxed),
        );
    })
    .await;
    progress.finish();
    trace.finish()?;
    if let Some(e) = trace_error {
        eprintln!("warning: trace.ndjson is incomplete: {e}");
    }
    if let Some(e) = &outcome.auth_error {
        eprintln!("error: {e}; the run stopped");
    }
    let (mut report, checker, fault_scripts, dot) = {
        let d = driver.lock().unwrap_or_else(|e| e.into_inner());
        let mut report = tally.report(settings, &outcome, d.faults().faults());
        report.schema_coverage = Some(d.coverage());
        super::run::write_graph(&flags.out.join("graph-final.json"), d.graph())?;
        super::run::print_changes(d.changes());
        let dot = crate::graph::export::render(d.graph(), crate::graph::export::Format::Dot);
        let checker = d.checker().clone();
        let scripts: Vec<_> = d
            .faults()
            .kept()
            .map(|k| reproduce::phase::fault_script(&api, &checker, target.as_str(), k))
            .collect();
        (report, checker, scripts, dot)
    };
    let replay = !flags.no_replay
        && outcome.auth_error.is_none()
        && outcome.stop != execution::StopReason::Interrupted;
    if replay && !fault_scripts.is_empty() {
        let (time, requests) = reproduce::phase::allowance(flags.budget, flags.max_requests);
        let mut channel = reproduce::phase::Channel {
            config: replay_config,
            credentials: replay_credentials,
            trace: TraceWriter::create(&flags.out.join("replay.ndjson"), secrets.clone())?,
            time,
            requests,
            seen: Vec::new(),
        };
        let outcomes = reproduce::phase::confirm(
            api.clone(),
            checker,
            fault_scripts,
            flags.read_only,
            &mut channel,
        )
        .await?;
        for (signature, confirmation, reproducer) in
            reproduce::phase::write_reproducers(&flags.out, &outcomes, &secrets)?
        {
            if let Some(f) = report.faults.iter_mut().find(|f| f.signature == signature) {
                f.confirmation = confirmation;
                f.reproducer = reproducer;
            }
        }
        channel.trace.finish()?;
    }
    reports::write_report(&flags.out, &report, &secrets)?;
    for w in reports::write_extras(&flags.out, &report, &dot, &secrets)
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
        graph_dot: dot,
    })
}
