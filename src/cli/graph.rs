//! `cartograph graph`: export the property graph.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::graph::{self, export};

/// Arguments of `cartograph graph`.
#[derive(Debug, Args)]
#[command(
    after_help = "The JSON shape is published as models/graph.schema.json.\n\nExamples:\n  cartograph graph petstore.yaml\n  cartograph graph petstore.yaml --format dot | dot -Tsvg > graph.svg\n  cartograph graph schema.graphql --format mermaid -o graph.mmd"
)]
pub(super) struct GraphArgs {
    /// The API description: OpenAPI 3.0/3.1 or Swagger 2.0 (JSON or YAML), GraphQL SDL
    /// (.graphql) or a GraphQL introspection result (JSON); a file or an
    /// http(s):// URL.
    #[arg(required_unless_present = "diff")]
    pub spec: Option<PathBuf>,
    /// Compare two JSON exports (such as a run's graph-initial.json and
    /// graph-final.json): edges added, suspended, re-activated or changed, with
    /// their evidence.
    #[arg(long, num_args = 2, value_names = ["BEFORE", "AFTER"], conflicts_with = "spec")]
    pub diff: Option<Vec<PathBuf>>,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value = "json")]
    pub format: export::Format,
    /// Write to this file instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub select: super::args::SelectArgs,
    #[command(flatten)]
    pub fetch: super::args::FetchArgs,
}

/// Runs the command.
pub(super) fn run(args: &GraphArgs) -> anyhow::Result<ExitCode> {
    if let Some(files) = &args.diff {
        let read = |p: &PathBuf| -> anyhow::Result<export::GraphDocument> {
            let text = std::fs::read_to_string(p)
                .map_err(|e| anyhow::anyhow!("{}: cannot read: {e}", p.display()))?;
            export::from_json(&text).map_err(|e| {
                anyhow::anyhow!(
                    "{}:{}:{}: not a graph export ({e}); pass files written by `cartograph graph --format json`",
                    p.display(),
                    e.line(),
                    e.column()
                )
            })
        };
        let (before, after) = (read(&files[0])?, read(&files[1])?);
        super::write_output(&export::diff(&before, &after).text(), args.output.as_ref())?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(spec) = &args.spec else {
        anyhow::bail!("give a SPEC to export, or --diff BEFORE AFTER");
    };
    let (mut loaded, _) = super::load_any(spec, || args.fetch.client(), &args.fetch.headers()?)?;
    super::select(&mut [&mut loaded.api], &args.select)?;
    let g = crate::run::phase::timed("building the graph", || graph::build(&loaded.api));
    let text = crate::run::phase::timed("writing the graph", || export::render(&g, args.format));
    super::write_output(&text, args.output.as_ref())?;
    Ok(ExitCode::SUCCESS)
}
