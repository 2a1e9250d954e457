//! `cartograph replay-queries`: production GraphQL requests (AutoGraphQL)
//! sent once each to a target, every answer checked by the GraphQL oracles,
//! schema coverage measured, and each request kept as a regression test.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Parser};

use crate::execution;
use crate::load::SpecSource;
use crate::load::query_log;
use crate::run::{RunOptions, queries};

/// Arguments of `cartograph replay-queries`.
#[derive(Debug, Args)]
#[command(
    after_help = "The log holds one GraphQL request per line as JSON, {\"query\": \"…\", \"variables\": {…}, \"operationName\": \"…\"} (a batch array on a line is read too), or is a HAR file saved from a browser's network panel or a proxy. Requests that repeat the same query text (layout aside), variables and operation name are sent once.\n\nOutput folder: report.json (faults, schema coverage and a `query_log` summary), report.html, junit.xml, report.sarif, trace.ndjson, reproducers/ for confirmed faults, and tests/ (one Hurl file per request: hurl --test --variable base=URL tests/*.hurl).\n\nExit status: 0 no faults, 1 faults found, 2 usage error (unreadable log or schema), 3 target unreachable, 4 the run could not do its work for another reason (the server asked to wait past the budget's end with Retry-After, or the outputs could not be written).\n\nExamples:\n  cartograph replay-queries queries.ndjson --target http://127.0.0.1:4000/graphql\n  cartograph replay-queries session.har --target https://staging.example.com/graphql --schema schema.graphql --read-only --rate 2/s"
)]
pub struct ReplayQueriesArgs {
    /// The log of GraphQL requests: NDJSON or HAR.
    pub log: PathBuf,
    /// The GraphQL endpoint to send them to (`http://127.0.0.1:4000/graphql`);
    /// a user and password in it are sent as Basic auth, and never written.
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
    #[command(flatten)]
    pub select: crate::run::options::SelectArgs,
}

/// The run flags' defaults, with what this command sets.
fn run_flags(args: &ReplayQueriesArgs) -> RunOptions {
    #[derive(Parser)]
    struct Defaults {
        #[command(flatten)]
        flags: RunOptions,
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
    flags.select = args.select.clone();
    // Recorded as 0: replaying a log draws nothing at random.
    flags.seed = Some(0);
    flags
}

/// Runs the command.
pub fn run(args: &ReplayQueriesArgs) -> anyhow::Result<ExitCode> {
    let flags = run_flags(args);
    let log = query_log::read(&args.log)?;
    for w in &log.warnings {
        eprintln!("warning: {}", crate::model::text::one_line(w));
    }
    if log.queries.is_empty() {
        anyhow::bail!(
            "{}: no GraphQL request to replay (each NDJSON line must be a {{\"query\": …}} object; HAR entries need a POST body or GET parameter `query`)",
            args.log.display()
        );
    }
    let runtime = tokio::runtime::Runtime::new()?;
    let (api, source) = match &args.schema {
        Some(path) => {
            let loaded = super::load_spec(path)?;
            if !loaded.api.format.is_graphql() {
                anyhow::bail!(
                    "--schema {}: not a GraphQL schema (SDL or introspection JSON)",
                    path.display()
                );
            }
            let source = SpecSource::file(path, &loaded.api);
            (loaded.api, source)
        }
        None => (
            runtime.block_on(crate::run::introspect(&args.target, &flags))?,
            SpecSource::url(&args.target),
        ),
    };
    let mut api = api;
    super::select(&mut [&mut api], &args.select)?;
    let name = args.log.display().to_string();
    let summary = runtime.block_on(queries::execute(
        Arc::new(api),
        &source,
        log,
        &name,
        &args.target,
        &flags,
    ))?;
    Ok(summary.exit_code())
}
