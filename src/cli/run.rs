//! `cartograph run`: test an API described by a spec against a target server.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Args;

use crate::execution::{self, secrets::Secrets, Credentials, RunConfig, TraceWriter, Transport};
use crate::generation::{MioConfig, SearchConfig, SearchDriver};
use crate::graph::{self, export::GraphDocument, feedback::Feedback};
use crate::model::Api;
use crate::reports::{self, Report, Settings, Tally};
use crate::reproduce;

/// Exit status when faults were found.
pub const EXIT_FAULTS: u8 = 1;
/// Exit status when the target cannot be reached.
pub const EXIT_UNREACHABLE: u8 = 3;

/// Flags shared by `run` and `demo`: how to talk to the server.
#[derive(Debug, Args, Clone)]
pub struct RunFlags {
    /// Time budget (`90s`, `5m`, `1h`); the run stops cleanly when it is spent.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub budget: Option<Duration>,
    /// Stop after sending this many requests.
    #[arg(long, value_name = "N")]
    pub max_requests: Option<u64>,
    /// Seed of every random choice; the seed used is printed and recorded, so
    /// the same seed against the same server state sends the same requests
    /// (exactly so with --concurrency 1 and --max-requests: the search paces
    /// itself by the share of the budget spent, and a time budget is spent
    /// differently from run to run).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Global rate limit across all operations: `10/s`, `120/m`, `1000/h`.
    #[arg(long, value_parser = execution::parse_rate, value_name = "RATE")]
    pub rate: Option<execution::Rate>,
    /// Requests that may go at once above the rate (with --rate).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub burst: u32,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub concurrency: usize,
    /// Send only GET, HEAD and OPTIONS requests (and GraphQL queries): nothing
    /// that could change the server's state, ever.
    #[arg(long)]
    pub read_only: bool,
    /// A header sent with every request, `Name: value` (repeatable). Values are
    /// treated as secrets: never written to any output file.
    #[arg(long = "header", short = 'H', value_name = "'NAME: VALUE'")]
    pub headers: Vec<String>,
    /// A shell command whose output lines are headers (`Authorization: Bearer …`);
    /// re-run after a 401 and every --auth-refresh. Its output is secret.
    #[arg(long, value_name = "CMD")]
    pub auth_command: Option<String>,
    /// Re-run --auth-command this often (`15m`).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub auth_refresh: Option<Duration>,
    /// Give up on a request after this long.
    #[arg(long, value_parser = parse_duration, default_value = "10s", value_name = "DURATION")]
    pub timeout: Duration,
    /// Read at most this many bytes of a response body.
    #[arg(long, default_value_t = 4 * 1024 * 1024, value_name = "BYTES")]
    pub max_body: usize,
    /// Retries of a request answered 429 or 503, after the wait the server asks for.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub retries: u32,
    /// Turn an oracle off by its code (repeatable); the codes and exactly when
    /// each fires are listed in the README ("Oracles").
    #[arg(long = "skip-check", value_name = "CODE")]
    pub skip_checks: Vec<String>,
    /// Only faults of these oracle codes make the exit status 1 (comma-separated);
    /// the others are still reported.
    #[arg(long, value_delimiter = ',', value_name = "CODE,...")]
    pub fail_on: Vec<String>,
    /// Do not replay faults after the search (no confirmation, no minimised
    /// reproducers, no regression suite): for a strict request budget.
    #[arg(long)]
    pub no_replay: bool,
    /// Never refine the graph from responses (to measure what refinement is worth).
    #[arg(long)]
    pub no_feedback: bool,
    /// Generate without the property graph: no graph call sequences and no
    /// values passed along its edges, only resource templates, random tests
    /// and Location headers (to measure what the graph is worth).
    #[arg(long)]
    pub no_graph: bool,
    /// Consecutive failures of values passed along a consumes edge before the
    /// edge is suspended (λ); a suspended edge is still tried now and then.
    #[arg(long, default_value_t = crate::graph::feedback::DEFAULT_LAMBDA, value_name = "N")]
    pub suspend_after: u32,
    /// MIO: tests kept per uncovered target at the start (n; 1 from the focus point on).
    #[arg(long, default_value_t = MioConfig::default().population, value_name = "N", help_heading = "Search (MIO)")]
    pub population: usize,
    /// MIO: probability of sampling a new test instead of mutating an archived
    /// one, at the start (P_r; 0 from the focus point on).
    #[arg(long, default_value_t = MioConfig::default().random_sampling, value_name = "P", help_heading = "Search (MIO)")]
    pub random_sampling: f64,
    /// MIO: share of the budget after which the search only refines what it
    /// has (F).
    #[arg(long, default_value_t = MioConfig::default().focus, value_name = "F", help_heading = "Search (MIO)")]
    pub focus: f64,
    /// MIO: mutations per sampled test at the start.
    #[arg(long, default_value_t = MioConfig::default().start_mutations, value_name = "N", help_heading = "Search (MIO)")]
    pub start_mutations: usize,
    /// MIO: mutations per sampled test from the focus point on.
    #[arg(long, default_value_t = MioConfig::default().end_mutations, value_name = "N", help_heading = "Search (MIO)")]
    pub end_mutations: usize,
    /// Most calls in one test.
    #[arg(long, default_value_t = MioConfig::default().max_length, value_name = "N", help_heading = "Search (MIO)")]
    pub max_length: usize,
    /// Output folder: report.json, report.html, junit.xml, reproducers/ (a
    /// shell script per confirmed fault), tests/ (the regression suite as Hurl
    /// files), trace.ndjson and replay.ndjson (every exchange), suite.json (the
    /// final test suite), graph-initial.json and graph-final.json.
    #[arg(long, default_value = "cartograph-out", value_name = "DIR")]
    pub out: PathBuf,
}

/// Arguments of `cartograph run`.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 no faults, 1 faults found, 2 usage or configuration error, 3 target unreachable.\n\nExamples:\n  cartograph run openapi.yaml --target http://127.0.0.1:8080 --budget 2m\n  cartograph run openapi.yaml --target https://staging.example.com --rate 2/s --read-only -H 'Authorization: Bearer $TOKEN'"
)]
pub struct RunArgs {
    /// The API description: OpenAPI 3.0/3.1 or Swagger 2.0 (JSON or YAML), or
    /// a GraphQL schema (SDL or introspection JSON). Leave it out with
    /// --graphql to ask the endpoint for its schema.
    #[arg(required_unless_present = "graphql")]
    pub spec: Option<PathBuf>,
    /// Base URL to test (default: the description's first server); for
    /// GraphQL, the endpoint (`http://127.0.0.1:8080/graphql`).
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,
    /// Test a GraphQL endpoint; without a schema file, its schema comes from
    /// the standard introspection query.
    #[arg(long)]
    pub graphql: bool,
    #[command(flatten)]
    pub flags: RunFlags,
}

impl RunFlags {
    /// How the engine talks to `target` under these flags.
    pub fn run_config(&self, target: &url::Url, seed: u64) -> RunConfig {
        RunConfig {
            target: target.clone(),
            budget: self.budget,
            max_requests: self.max_requests,
            seed,
            rate: self.rate,
            burst: self.burst,
            concurrency: self.concurrency.max(1),
            read_only: self.read_only,
            timeout: self.timeout,
            max_body: self.max_body,
            max_retries: self.retries,
        }
    }

    /// The MIO parameters these flags set.
    pub fn mio(&self) -> MioConfig {
        MioConfig {
            population: self.population.max(1),
            random_sampling: self.random_sampling.clamp(0.0, 1.0),
            focus: self.focus.clamp(0.0, 1.0),
            start_mutations: self.start_mutations.max(1),
            end_mutations: self.end_mutations.max(1),
            max_length: self.max_length.max(1),
        }
    }
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text).map_err(|e| format!("{text:?}: {e} (write e.g. 90s, 5m, 1h)"))
}

/// Runs the command.
pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new()?;
    let api = match &args.spec {
        Some(spec) => {
            let loaded = super::load_spec(spec)?;
            if args.graphql && !loaded.api.format.is_graphql() {
                anyhow::bail!(
                    "--graphql: {} is not a GraphQL schema (SDL or introspection JSON)",
                    spec.display()
                );
            }
            loaded.api
        }
        None => {
            let Some(target) = &args.target else {
                anyhow::bail!("--graphql without a schema file needs --target URL (the endpoint to introspect)");
            };
            runtime.block_on(introspect(target, &args.flags))?
        }
    };
    let named = || {
        args.spec
            .as_ref()
            .map_or_else(|| "the schema".to_string(), |p| p.display().to_string())
    };
    let target = match (&args.target, api.servers.first()) {
        (Some(t), _) => t.clone(),
        (None, Some(s)) if s.starts_with("http") => s.clone(),
        _ if api.format.is_graphql() => anyhow::bail!(
            "no target: a GraphQL schema names no endpoint; pass --target URL (e.g. http://127.0.0.1:8080/graphql)"
        ),
        _ => anyhow::bail!(
            "no target: {} names no absolute server URL; pass --target URL",
            named()
        ),
    };
    let summary = runtime.block_on(execute(Arc::new(api), &target, &args.flags))?;
    Ok(summary.exit_code())
}

/// What a run produced, for the commands' summaries.
pub struct RunSummary {
    /// The report as written.
    pub report: Report,
    /// Exit status to return.
    pub unreachable: bool,
    /// Oracle codes whose faults fail the run (all when empty).
    pub fail_on: Vec<String>,
    /// The final graph, as report.html draws it (none when the run never started).
    pub graph: Option<GraphDocument>,
}

impl RunSummary {
    /// 0 no faults, 1 faults, 3 unreachable.
    pub fn exit_code(&self) -> ExitCode {
        if self.unreachable {
            ExitCode::from(EXIT_UNREACHABLE)
        } else if !self
            .report
            .faults
            .iter()
            .any(|f| self.fail_on.is_empty() || self.fail_on.contains(&f.code))
        {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(EXIT_FAULTS)
        }
    }
}

/// The schema of the GraphQL endpoint `target`, from the standard
/// introspection query (sent with the flags' headers).
pub(super) async fn introspect(target: &str, flags: &RunFlags) -> anyhow::Result<Api> {
    let endpoint = url::Url::parse(target)
        .map_err(|e| anyhow::anyhow!("--target {target:?} is not a URL: {e}"))?;
    let mut headers = Vec::new();
    for h in &flags.headers {
        headers.push(execution::parse_header(h).map_err(|e| anyhow::anyhow!("--header: {e}"))?);
    }
    let loaded = crate::spec::introspection::fetch(&endpoint, &headers, flags.timeout).await?;
    eprintln!(
        "cartograph: schema from introspection: {} root fields",
        loaded.api.operations.len()
    );
    Ok(loaded.api)
}

/// What every command that talks to a target sets up first.
pub(super) struct Session {
    /// The target, parsed.
    pub target: url::Url,
    /// Secrets to redact from every file.
    pub secrets: Secrets,
    /// Credentials from the flags.
    pub credentials: Credentials,
    /// The seed (given or drawn).
    pub seed: u64,
    /// Settings as the report records them.
    pub settings: Settings,
    /// Per-operation counts, all zero.
    pub tally: Tally,
}

/// Checks the flags, creates the output folder and checks the target answers
/// TCP; when it does not, writes an empty report and returns the summary to
/// end with (exit status 3).
pub(super) async fn open_session(
    api: &Api,
    target: &str,
    flags: &RunFlags,
) -> anyhow::Result<Result<Session, RunSummary>> {
    let target_url = url::Url::parse(target)
        .map_err(|e| anyhow::anyhow!("--target {target:?} is not a URL: {e}"))?;
    if !matches!(target_url.scheme(), "http" | "https") {
        anyhow::bail!("--target must be an http:// or https:// URL");
    }
    for (flag, codes) in [
        ("--skip-check", &flags.skip_checks),
        ("--fail-on", &flags.fail_on),
    ] {
        for code in codes {
            if !crate::oracles::all_codes().any(|c| c == code) {
                anyhow::bail!(
                    "{flag} {code:?}: no such check; the checks are {}",
                    crate::oracles::all_codes().collect::<Vec<_>>().join(", ")
                );
            }
        }
    }
    let secrets = Secrets::new();
    let mut headers = Vec::new();
    for h in &flags.headers {
        headers.push(execution::parse_header(h).map_err(|e| anyhow::anyhow!("--header: {e}"))?);
    }
    let credentials = Credentials::new(
        headers.clone(),
        flags.auth_command.clone(),
        flags.auth_refresh,
        secrets.clone(),
    );
    let seed = flags.seed.unwrap_or_else(rand::random::<u64>);

    std::fs::create_dir_all(&flags.out)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", flags.out.display()))?;
    let settings = Settings {
        target: target_url.to_string(),
        seed,
        budget_s: flags.budget.map(|b| b.as_secs_f64()),
        max_requests: flags.max_requests,
        rate_per_s: flags.rate.map(|r| r.per_second),
        burst: flags.burst,
        concurrency: flags.concurrency,
        read_only: flags.read_only,
        timeout_s: flags.timeout.as_secs_f64(),
        headers: headers.iter().map(|(n, _)| n.clone()).collect(),
        auth_command: flags.auth_command.is_some(),
        skipped_checks: flags.skip_checks.clone(),
        graph: !flags.no_graph,
        feedback: !flags.no_feedback && !flags.no_graph,
    };

    let tally = Tally::new(api);
    if !reachable(&target_url).await {
        eprintln!("error: the target {target_url} cannot be reached (no TCP connection)");
        let outcome = execution::RunOutcome {
            requests: 0,
            refused: 0,
            stop: execution::StopReason::Exhausted,
            elapsed: Duration::ZERO,
            auth_error: None,
        };
        let report = tally.report(settings, &outcome, Vec::new());
        reports::write_report(&flags.out, &report, &secrets)?;
        return Ok(Err(RunSummary {
            report,
            unreachable: true,
            fail_on: flags.fail_on.clone(),
            graph: None,
        }));
    }
    Ok(Ok(Session {
        target: target_url,
        secrets,
        credentials,
        seed,
        settings,
        tally,
    }))
}

/// Runs the search over `api` against `target` with these flags, writing the
/// output folder; shared by `run` and `demo`.
pub async fn execute(api: Arc<Api>, target: &str, flags: &RunFlags) -> anyhow::Result<RunSummary> {
    let Session {
        target: target_url,
        secrets,
        credentials,
        seed,
        settings,
        mut tally,
    } = match open_session(&api, target, flags).await? {
        Ok(session) => session,
        Err(unreachable) => return Ok(unreachable),
    };
    eprintln!("cartograph: seed {seed} (repeat this run with --seed {seed})");
    if let Some(ts) = api.graphql.clone() {
        let run = super::graphql_run::Prepared {
            api,
            ts,
            target: target_url,
            settings,
            tally,
            secrets,
            credentials,
            seed,
        };
        return super::graphql_run::execute(run, flags).await;
    }
    let graph = graph::build(&api);
    write_graph(&flags.out.join("graph-initial.json"), &graph)?;
    let feedback =
        (!flags.no_feedback && !flags.no_graph).then(|| Feedback::new(flags.suspend_after));
    let driver = Arc::new(Mutex::new(SearchDriver::new(
        api.clone(),
        graph,
        feedback,
        SearchConfig {
            mio: flags.mio(),
            seed,
            read_only: flags.read_only,
            use_graph: !flags.no_graph,
            max_requests: flags.max_requests,
            budget: flags.budget,
            skip_checks: flags.skip_checks.clone(),
            target: Some(target_url.clone()),
        },
    )));
    let fault_count = driver
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .faults()
        .counter();
    let config = flags.run_config(&target_url, seed);
    let outcome = search(
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
    // The lock is held only here: the phases below await the engine.
    let (mut report, graph_doc, checker, fault_scripts, suite_runs) = {
        let refined = driver.lock().unwrap_or_else(|e| e.into_inner());
        let mut report = tally.report(settings, &outcome, refined.faults().faults());
        report.search = Some(refined.summary());
        write_graph(&flags.out.join("graph-final.json"), refined.graph())?;
        let graph_doc = graph::export::to_document(refined.graph());
        let suite = serde_json::to_string_pretty(&refined.suite_document())?;
        let suite_path = flags.out.join("suite.json");
        std::fs::write(&suite_path, format!("{}\n", secrets.redact(&suite)))
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", suite_path.display()))?;
        print_changes(refined.changes());
        let checker = refined.checker().clone();
        for w in checker.warnings() {
            eprintln!("warning: {w}");
        }
        let fault_scripts: Vec<_> = refined
            .faults()
            .kept()
            .map(|k| reproduce::phase::fault_script(&api, &checker, target_url.as_str(), k))
            .collect();
        let suite_runs = refined.suite_runs();
        (report, graph_doc, checker, fault_scripts, suite_runs)
    };

    // Confirm and shrink the faults, then record the regression suite.
    let replay = !flags.no_replay
        && outcome.auth_error.is_none()
        && outcome.stop != execution::StopReason::Interrupted;
    if replay {
        let (phase_time, phase_requests) =
            reproduce::phase::allowance(flags.budget, flags.max_requests);
        let mut channel = reproduce::phase::Channel::open(
            replay_config,
            replay_credentials,
            &flags.out,
            &secrets,
            (phase_time, phase_requests),
        )?;
        if !fault_scripts.is_empty() {
            eprintln!(
                "cartograph: replaying {} fault(s) to confirm and shrink them, then the final suite (at most {:.0}s and {phase_requests} requests; --no-replay skips this)",
                fault_scripts.len(),
                phase_time.as_secs_f64()
            );
        }
        let outcomes = reproduce::phase::confirm(
            api.clone(),
            checker.clone(),
            fault_scripts,
            flags.read_only,
            &mut channel,
        )
        .await?;
        reproduce::phase::attach_reproducers(&mut report.faults, &flags.out, &outcomes, &secrets)?;
        {
            // What the replays created and changed, after the search's own history.
            let mut refined = driver.lock().unwrap_or_else(|e| e.into_inner());
            for (i, mut e) in std::mem::take(&mut channel.seen).into_iter().enumerate() {
                e.seq = u64::MAX / 4 + i as u64;
                refined.ledger_mut().note(&e);
            }
        }
        let (runs, titles): (Vec<_>, Vec<_>) = suite_runs.into_iter().unzip();
        let recorded = reproduce::phase::record(runs, &mut channel).await?;
        let scripts: Vec<_> = {
            let mut refined = driver.lock().unwrap_or_else(|e| e.into_inner());
            let location = |l: &str| checker.location_path(l);
            let mut scripts = Vec::new();
            for (k, (ex, title)) in recorded.iter().zip(titles).enumerate() {
                if ex.is_empty() {
                    continue;
                }
                // Replayed after the run, in this order: after everything the
                // ledger saw, and each test after the ones replayed before it
                // (whose changes it may have met).
                let mut ex = ex.clone();
                for (i, e) in ex.iter_mut().enumerate() {
                    e.seq = u64::MAX / 2 + (k as u64) * 1_000 + i as u64;
                }
                let completed = refined.ledger().complete(&ex);
                let script =
                    reproduce::build::script(&api, target_url.as_str(), &completed, &location);
                // A test that names a resource the run deleted before (seed
                // data included) asserts what only this server's history explains.
                let literal_deleted = completed.iter().zip(&script.steps).any(|(e, s)| {
                    let carried = s.path.contains("{{")
                        || s.body.as_deref().is_some_and(|b| b.contains("{{"));
                    !carried && refined.ledger().names_deleted(e)
                });
                for e in &ex {
                    refined.ledger_mut().note(e);
                }
                if !literal_deleted {
                    scripts.push((script, title));
                }
            }
            scripts
        };
        let scripts = reproduce::phase::settle(scripts, &checker, &mut channel).await?;
        let n = reproduce::phase::write_suite(&flags.out, scripts, &secrets)?;
        channel.trace.finish()?;
        let confirmed = report
            .faults
            .iter()
            .filter(|f| f.confirmation == crate::oracles::Confirmation::Confirmed)
            .count();
        eprintln!(
            "cartograph: {confirmed} of {} fault(s) confirmed, reproducers in {}; regression suite: {n} Hurl file(s) in {} (hurl --test --jobs 1 --variable base={} {}/*.hurl)",
            report.faults.len(),
            flags.out.join("reproducers").display(),
            flags.out.join("tests").display(),
            target_url.as_str().trim_end_matches('/'),
            flags.out.join("tests").display()
        );
    }
    reports::write_report(&flags.out, &report, &secrets)?;
    let graphs = std::slice::from_ref(&graph_doc);
    for w in reports::write_extras(&flags.out, &report, graphs, &secrets).map_err(|e| {
        anyhow::anyhow!(
            "cannot write report.html or junit.xml in {}: {e}",
            flags.out.display()
        )
    })? {
        eprintln!("warning: {w}");
    }
    // A run the server turned away wholesale tests nothing: say so, with the fix.
    let (mut answered, mut refused) = (0u64, 0u64);
    for op in &report.operations {
        for (status, n) in &op.status_counts {
            answered += n;
            if status == "401" || status == "403" {
                refused += n;
            }
        }
    }
    let nothing_passed = report.operations_reached == 0 && refused * 2 >= answered;
    if answered >= 20 && (refused * 10 >= answered * 9 || nothing_passed) {
        eprintln!(
            "warning: {refused} of {answered} responses were 401 or 403: the server wants credentials; pass them with -H 'Authorization: …' or --auth-command"
        );
    }
    eprintln!(
        "cartograph: {} requests in {:.1}s ({}), {} of {} operations answered 2xx, {} fault(s); wrote {}",
        report.requests,
        report.elapsed_s,
        report.stop.replace('_', " "),
        report.operations_reached,
        report.operations.len(),
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

/// Runs `driver` against the target: every exchange to `trace.ndjson` and
/// the tally, with the progress line; warns when the trace or the
/// credentials failed.
pub(super) async fn search(
    driver: Arc<Mutex<dyn execution::Driver>>,
    fault_count: Arc<std::sync::atomic::AtomicUsize>,
    config: RunConfig,
    credentials: Credentials,
    secrets: &Secrets,
    tally: &mut Tally,
    flags: &RunFlags,
) -> anyhow::Result<execution::RunOutcome> {
    let transport = Transport::new(config.target.clone(), flags.max_body, config.concurrency)
        .map_err(|e| anyhow::anyhow!(e))?;
    let mut trace = TraceWriter::create(&flags.out.join("trace.ndjson"), secrets.clone())?;
    let progress = Progress::new(tally.operation_count(), flags.budget);
    let mut trace_error = None;
    let outcome = execution::run(config, transport, credentials, driver, |ex| {
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
    Ok(outcome)
}

/// One line on what feedback changed in the graph, when it changed anything.
pub(super) fn print_changes(changes: &[crate::graph::feedback::Change]) {
    use crate::graph::feedback::Change;
    if changes.is_empty() {
        return;
    }
    let mut counts = [0usize; 5];
    for c in changes {
        counts[match c {
            Change::Produces { .. } => 0,
            Change::Equivalent { .. } => 1,
            Change::Binding { .. } => 2,
            Change::Suspended { .. } => 3,
            Change::Reactivated { .. } => 4,
        }] += 1;
    }
    eprintln!(
        "cartograph: the graph learned from the responses: {} produces edge(s), {} equivalence(s), {} new binding(s); {} suspension(s), {} re-activation(s) (graph-final.json; compare with `cartograph graph --diff`)",
        counts[0], counts[1], counts[2], counts[3], counts[4]
    );
}

pub(super) fn write_graph(path: &std::path::Path, g: &graph::PropertyGraph) -> anyhow::Result<()> {
    std::fs::write(path, graph::export::render(g, graph::export::Format::Json))
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
}

/// Whether a TCP connection to the target's host and port can be opened.
async fn reachable(url: &url::Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let port = url.port_or_known_default().unwrap_or(80);
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    matches!(
        tokio::time::timeout(
            Duration::from_secs(5),
            tokio::net::TcpStream::connect((host, port))
        )
        .await,
        Ok(Ok(_))
    )
}

/// The progress line on stderr, when stderr is a terminal.
pub(super) struct Progress {
    bar: Option<indicatif::ProgressBar>,
    operations: usize,
    started: std::time::Instant,
    budget: Option<Duration>,
}

impl Progress {
    pub(super) fn new(operations: usize, budget: Option<Duration>) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        Progress {
            bar,
            operations,
            started: std::time::Instant::now(),
            budget,
        }
    }

    pub(super) fn update(&self, requests: u64, reached: usize, faults: usize) {
        let Some(bar) = &self.bar else { return };
        let elapsed = self.started.elapsed();
        let rate = requests as f64 / elapsed.as_secs_f64().max(1e-3);
        let left = self
            .budget
            .map(|b| format!(", {}s left", b.saturating_sub(elapsed).as_secs()))
            .unwrap_or_default();
        bar.set_message(format!(
            "{requests} requests ({rate:.0}/s), {reached}/{} operations reached, {faults} faults{left}",
            self.operations
        ));
    }

    pub(super) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
