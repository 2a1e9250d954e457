//! `cartograph run`: test an API described by a spec against a target server.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;

use crate::load::SpecSource;
use crate::run::{execute, introspect, RunOptions};

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
    pub flags: RunOptions,
}

/// Runs the command.
pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new()?;
    let (api, source) = match &args.spec {
        Some(spec) => {
            let loaded = super::load_spec(spec)?;
            if args.graphql && !loaded.api.format.is_graphql() {
                anyhow::bail!(
                    "--graphql: {} is not a GraphQL schema (SDL or introspection JSON)",
                    spec.display()
                );
            }
            let source = SpecSource::file(spec, &loaded.api);
            (loaded.api, source)
        }
        None => {
            let Some(target) = &args.target else {
                anyhow::bail!("--graphql without a schema file needs --target URL (the endpoint to introspect)");
            };
            let api = runtime.block_on(introspect(target, &args.flags))?;
            (api, SpecSource::url(target))
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
    let summary = runtime.block_on(execute(Arc::new(api), &source, &target, &args.flags))?;
    Ok(summary.exit_code())
}
