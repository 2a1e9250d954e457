//! `cartograph replay-queries`: production GraphQL requests (AutoGraphQL)
//! sent once each to a target, every answer checked by the GraphQL oracles,
//! schema coverage measured, and each request kept as a regression test.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::{Args, Parser};

use super::run::{RunFlags, RunSummary, Session};
use crate::execution::{self, Exchange, RequestSpec, TestRun, TraceWriter, Transport};
use crate::generation::coverage::CoverageTally;
use crate::generation::query_log::{self, LoggedQuery, OpKind};
use crate::oracles::{witness::Ledger, Checker, Faults};
use crate::reports;
use crate::reproduce::{self, phase::Recorder, Script, Step};

/// Arguments of `cartograph replay-queries`.
#[derive(Debug, Args)]
#[command(
    after_help = "The log holds one GraphQL request per line as JSON, {\"query\": \"…\", \"variables\": {…}, \"operationName\": \"…\"} (a batch array on a line is read too), or is a HAR file saved from a browser's network panel or a proxy. Requests that repeat the same query text (layout aside), variables and operation name are sent once.\n\nOutput folder: report.json (faults, schema coverage and a `query_log` summary), report.html, junit.xml, trace.ndjson, reproducers/ for confirmed faults, and tests/ (one Hurl file per request: hurl --test --variable base=URL tests/*.hurl).\n\nExit status: 0 no faults, 1 faults found, 2 usage error (unreadable log or schema), 3 target unreachable.\n\nExamples:\n  cartograph replay-queries queries.ndjson --target http://127.0.0.1:4000/graphql\n  cartograph replay-queries session.har --target https://staging.example.com/graphql --schema schema.graphql --read-only --rate 2/s"
)]
pub struct ReplayQueriesArgs {
    /// The log of GraphQL requests: NDJSON or HAR.
    pub log: PathBuf,
    /// The GraphQL endpoint to send them to (`http://127.0.0.1:4000/graphql`).
    #[arg(long, value_name = "URL")]
    pub target: String,
    /// The schema (SDL or introspection JSON); without it the endpoint is asked
    /// with the standard introspection query.
    #[arg(long, value_name = "FILE")]
    pub schema: Option<PathBuf>,
    /// Send only queries: mutations in the log are skipped and counted.
    #[arg(long)]
    pub read_only: bool,
    /// Global rate limit: `10/s`, `120/m`, `1000/h`.
    #[arg(long, value_parser = execution::parse_rate, value_name = "RATE")]
    pub rate: Option<execution::Rate>,
    /// A header sent with every request, `Name: value` (repeatable; a secret,
    /// never written to any output file).
    #[arg(long = "header", short = 'H', value_name = "'NAME: VALUE'")]
    pub headers: Vec<String>,
    /// A shell command whose output lines are headers; re-run after a 401.
    #[arg(long, value_name = "CMD")]
    pub auth_command: Option<String>,
    /// Give up on a request after this long.
    #[arg(long, value_parser = |t: &str| humantime::parse_duration(t).map_err(|e| e.to_string()), default_value = "10s", value_name = "DURATION")]
    pub timeout: Duration,
    /// Turn an oracle off by its code (repeatable).
    #[arg(long = "skip-check", value_name = "CODE")]
    pub skip_checks: Vec<String>,
    /// Only faults of these oracle codes make the exit status 1.
    #[arg(long, value_delimiter = ',', value_name = "CODE,...")]
    pub fail_on: Vec<String>,
    /// Do not send faulting requests again to confirm them.
    #[arg(long)]
    pub no_replay: bool,
    /// Output folder.
    #[arg(long, default_value = "cartograph-out", value_name = "DIR")]
    pub out: PathBuf,
}

/// The run flags' defaults, with what this command sets.
fn run_flags(args: &ReplayQueriesArgs) -> RunFlags {
    #[derive(Parser)]
    struct Defaults {
        #[command(flatten)]
        flags: RunFlags,
    }
    let mut flags = Defaults::parse_from(["cartograph"]).flags;
    flags.read_only = args.read_only;
    flags.rate = args.rate;
    flags.headers = args.headers.clone();
    flags.auth_command = args.auth_command.clone();
    flags.timeout = args.timeout;
    flags.skip_checks = args.skip_checks.clone();
    flags.fail_on = args.fail_on.clone();
    flags.no_replay = args.no_replay;
    flags.out = args.out.clone();
    // Recorded as 0: replaying a log draws nothing at random.
    flags.seed = Some(0);
    flags
}

/// Runs the command.
pub fn run(args: &ReplayQueriesArgs) -> anyhow::Result<ExitCode> {
    let flags = run_flags(args);
    let log = query_log::read(&args.log)?;
    for w in &log.warnings {
        eprintln!("warning: {w}");
    }
    if log.queries.is_empty() {
        anyhow::bail!(
            "{}: no GraphQL request to replay (each NDJSON line must be a {{\"query\": …}} object; HAR entries need a POST body or GET parameter `query`)",
            args.log.display()
        );
    }
    let runtime = tokio::runtime::Runtime::new()?;
    let api = match &args.schema {
        Some(path) => {
            let loaded = super::load_spec(path)?;
            if !loaded.api.format.is_graphql() {
                anyhow::bail!(
                    "--schema {}: not a GraphQL schema (SDL or introspection JSON)",
                    path.display()
                );
            }
            loaded.api
        }
        None => runtime.block_on(super::run::introspect(&args.target, &flags))?,
    };
    let name = args.log.display().to_string();
    let summary = runtime.block_on(execute(Arc::new(api), log, &name, &args.target, &flags))?;
    Ok(summary.exit_code())
}

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
    }
}

/// Sends the log's requests and writes the output folder.
async fn execute(
    api: Arc<crate::model::Api>,
    log: query_log::QueryLog,
    log_name: &str,
    target: &str,
    flags: &RunFlags,
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
        ..
    } = match super::run::open_session(&api, target, flags).await? {
        Ok(session) => session,
        Err(unreachable) => return Ok(unreachable),
    };
    let (mut sent, mut skipped_mutations, mut subscriptions) = (Vec::new(), 0usize, 0usize);
    for q in &log.queries {
        match q.kind {
            OpKind::Subscription => subscriptions += 1,
            OpKind::Mutation if flags.read_only => skipped_mutations += q.count,
            _ => sent.push(q.clone()),
        }
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

    let mut config = flags.run_config(&target, 0);
    config.budget = None;
    config.max_requests = None;
    let transport =
        Transport::new(target.clone(), flags.max_body, 1).map_err(|e| anyhow::anyhow!(e))?;
    let (replay_config, replay_credentials) = (config.clone(), credentials.clone());
    let mut trace = TraceWriter::create(&flags.out.join("trace.ndjson"), secrets.clone())?;
    let mut trace_error = None;
    let tests: Vec<Box<dyn TestRun>> = sent
        .iter()
        .map(|q| Box::new(Once(Some(request(q)))) as Box<dyn TestRun>)
        .collect();
    let driver = Arc::new(Mutex::new(Recorder::new(tests)));
    // In log order, one at a time: a production session's mutations come
    // before the queries that read what they made.
    config.concurrency = 1;
    let outcome = execution::run(config, transport, credentials, driver.clone(), |ex| {
        if let Err(e) = trace.write(ex) {
            trace_error.get_or_insert(e);
        }
        tally.add(ex);
    })
    .await;
    trace.finish()?;
    if let Some(e) = trace_error {
        eprintln!("warning: trace.ndjson is incomplete: {e}");
    }
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
        scripts.push((
            Script {
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
                    captures: Vec::new(),
                    status: ex.status,
                    graphql_clean: ex.status.is_some() && !errors,
                }],
                standalone: true,
            },
            format!("{}: logged at {}{seen}", q.root_fields.join(", "), q.source),
        ));
    }

    let mut report = tally.report(settings, &outcome, faults.faults());
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
            let mut scripts = reproduce::phase::fault_script(&api, &checker, target.as_str(), k);
            for s in &mut scripts {
                s.standalone &= !mutated;
            }
            scripts
        })
        .collect();
    if !flags.no_replay && !kept.is_empty() && outcome.auth_error.is_none() {
        let (time, requests) = reproduce::phase::allowance(None, None);
        let mut channel = reproduce::phase::Channel::open(
            replay_config,
            replay_credentials,
            &flags.out,
            &secrets,
            (time, requests),
        )?;
        let outcomes =
            reproduce::phase::confirm(api.clone(), checker, kept, flags.read_only, &mut channel)
                .await?;
        reproduce::phase::attach_reproducers(&mut report.faults, &flags.out, &outcomes, &secrets)?;
        channel.trace.finish()?;
    }
    let n = reproduce::phase::write_suite(&flags.out, scripts, &secrets)?;
    reports::write_report(&flags.out, &report, &secrets)?;
    let graph_doc = crate::graph::export::to_document(&crate::graph::build(&api));
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
        eprintln!("  {:<28} {:<22} {}", f.code, f.operation, f.message);
    }
    Ok(RunSummary {
        report,
        unreachable: false,
        fail_on: flags.fail_on.clone(),
        graph: Some(graph_doc),
    })
}
