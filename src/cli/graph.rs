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
pub struct GraphArgs {
    /// The API description: OpenAPI 3.0/3.1 or Swagger 2.0 (JSON or YAML), GraphQL SDL
    /// (.graphql) or a GraphQL introspection result (JSON).
    pub spec: PathBuf,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value = "json")]
    pub format: export::Format,
    /// Write to this file instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Runs the command.
pub fn run(args: &GraphArgs) -> anyhow::Result<ExitCode> {
    let loaded = super::load_spec(&args.spec)?;
    let g = graph::build(&loaded.api);
    let text = export::render(&g, args.format);
    super::write_output(&text, args.output.as_ref())?;
    Ok(ExitCode::SUCCESS)
}
