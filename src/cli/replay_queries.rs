//! `cartograph replay-queries`: production GraphQL requests (AutoGraphQL)
//! sent once each to a target, every answer checked by the GraphQL oracles,
//! schema coverage measured, and each request kept as a regression test.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;

use super::args::TargetFlags;
use crate::load::SpecSource;
use crate::load::query_log;
use crate::run::{RunOptions, queries};

/// Arguments of `cartograph replay-queries`.
#[derive(Debug, Args)]
#[command(
    after_help = "The log holds one GraphQL request per line as JSON, {\"query\": \"…\", \"variables\": {…}, \"operationName\": \"…\"} (a batch array on a line is read too), or is a HAR file saved from a browser's network panel or a proxy. Requests that repeat the same query text (layout aside), variables and operation name are sent once.\n\nOutput folder: report.json (faults, schema coverage and a `query_log` summary), report.html, junit.xml, report.sarif, trace.ndjson, reproducers/ for confirmed faults, and tests/ (one Hurl file per request: hurl --test --variable base=URL tests/*.hurl).\n\nExit status: 0 no faults, 1 faults found, 2 usage error (unreadable log or schema), 3 target unreachable, 4 the run could not do its work for another reason (the server asked to wait past the budget's end with Retry-After, or the outputs could not be written).\n\nExamples:\n  cartograph replay-queries queries.ndjson --target http://127.0.0.1:4000/graphql\n  cartograph replay-queries session.har --target https://staging.example.com/graphql --schema schema.graphql --read-only --rate 2/s"
)]
pub(super) struct ReplayQueriesArgs {
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
    /// Politeness (with --read-only, the log's mutations are skipped and
    /// counted), credentials, connection, checks, output and selection, as
    /// `run` takes them.
    #[command(flatten)]
    pub flags: TargetFlags,
}

/// The settings of this command's run.
fn options(args: &ReplayQueriesArgs) -> RunOptions {
    let mut options = args.flags.options();
    // Recorded as 0: replaying a log draws nothing at random.
    options.seed = Some(0);
    options
}

/// Runs the command.
pub(super) fn run(args: &ReplayQueriesArgs) -> anyhow::Result<ExitCode> {
    let flags = options(args);
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
    super::select(&mut [&mut api], &args.flags.select)?;
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
