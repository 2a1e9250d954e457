//! `cartograph run`: test an API described by a spec against a target server.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;

use super::args::RunFlags;
use crate::load::SpecSource;
use crate::run::{execute, introspect};

/// Arguments of `cartograph run`.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 no faults, 1 faults found, 2 usage or configuration error (a bad flag or --config file, an unreadable description or one with no operation to test), 3 target unreachable or nothing ever answered, 4 the run could not do its work for another reason (the auth command failed or hung, nothing was sent, no answer could be read, the server asked to wait past the budget's end with Retry-After, the outputs could not be written, or the search failed inside Cartograph), 130 or 143 interrupted by SIGINT or SIGTERM (a second one stops at once); when several apply, 130 and 143 come first, then 3, then 4, then 1.\n\nExamples:\n  cartograph run openapi.yaml --target http://127.0.0.1:8080 --budget 2m\n  cartograph run openapi.yaml --target https://staging.example.com --rate 2/s --read-only -H 'Authorization: Bearer $TOKEN'\n  cartograph run http://127.0.0.1:8080/openapi.json --exclude 'POST /admin/*'\n  cartograph run --config cartograph.toml --seed 9"
)]
pub(super) struct RunArgs {
    /// The API description: OpenAPI 3.0/3.1 or Swagger 2.0 (JSON or YAML), or
    /// a GraphQL schema (SDL or introspection JSON); a file or an http(s)://
    /// URL (fetched with the run's headers and TLS settings; its relative
    /// $refs and server URLs are resolved against it, on its origin only,
    /// and its origin is the default target). At most 64 MiB, and as much
    /// again for the files its $refs name. Leave it out with --graphql to
    /// ask the endpoint for its schema.
    pub spec: Option<PathBuf>,
    /// Base URL to test (default: the description's first server); for
    /// GraphQL, the endpoint (`http://127.0.0.1:8080/graphql`). A user and
    /// password in it (`http://user:pw@host`, or in the description's server)
    /// are sent as Basic auth and are secrets like -H: no file or message
    /// names them.
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,
    /// Test a GraphQL endpoint; without a schema file, its schema comes from
    /// the standard introspection query.
    #[arg(long)]
    pub graphql: bool,
    /// Read settings from this TOML file: each key a flag's long name
    /// (`target = "http://…"`, `budget = "90s"`, `exclude = ["DELETE *"]`,
    /// `rate_for = { "POST /search" = "1/s" }`) or `spec`; flags given on
    /// the command line win, and list flags add to the file's.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The run's settings.
    #[command(flatten)]
    pub flags: RunFlags,
}

/// Runs the command.
/// Leaves out of `api` the operations that end the session (`logout`):
/// after one, the run's credentials would be refused for the rest of it.
/// One an `--include` pattern names is kept: the user asked for it.
fn leave_out_session_enders(api: &mut crate::model::Api, include: &[String]) -> anyhow::Result<()> {
    let asked = crate::model::select::Selection::parse(include, &[]).map_err(anyhow::Error::msg)?;
    let n = asked.leave_out_session_enders(api);
    if n == 0 {
        return Ok(());
    }
    let ends = &api.left_out[api.left_out.len() - n..];
    if api.operations.is_empty() {
        anyhow::bail!(
            "every operation left ends the session (logout): add --call-logout to call them"
        );
    }
    let shown: Vec<String> = ends
        .iter()
        .take(6)
        .map(|op| match op.operation_id.as_deref() {
            Some(id) => format!("{id} ({} {})", op.method.as_str(), op.path),
            None => format!("{} {}", op.method.as_str(), op.path),
        })
        .collect();
    eprintln!(
        "cartograph: {} operation(s) that end the session left out, as every request after one would be refused: {}{}; --call-logout calls them",
        ends.len(),
        crate::model::text::one_line(&shown.join(", ")),
        if ends.len() > shown.len() {
            ", …"
        } else {
            ""
        }
    );
    Ok(())
}

pub(super) fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let options = args.flags.options();
    if options.tls.insecure {
        eprintln!(
            "warning: --insecure: server certificates are not checked; anyone on the path can read and change this run's traffic, credentials included"
        );
    }
    let runtime = crate::execution::runtime()?;
    let (api, source) = match &args.spec {
        Some(spec) => {
            let headers = crate::run::session::parse_headers(&options.headers)?;
            let (loaded, source) = super::load_any(spec, || options.client(), &headers)?;
            if let Some(why) = loaded.no_operations() {
                // Testing nothing is no success: say why there is nothing.
                anyhow::bail!("{}: {why}", spec.display());
            }
            if args.graphql && !loaded.api.format.is_graphql() {
                anyhow::bail!(
                    "--graphql: {} is not a GraphQL schema (SDL or introspection JSON)",
                    spec.display()
                );
            }
            (loaded.api, source)
        }
        None => {
            let Some(target) = &args.target else {
                anyhow::bail!(
                    "give a SPEC (a file or an http(s):// URL), or --graphql --target URL to ask a GraphQL endpoint for its schema"
                );
            };
            if !args.graphql {
                let target = crate::execution::without_userinfo(target);
                let lower = target.to_ascii_lowercase();
                let hint = if lower.contains("graphql") || lower.ends_with("/gql") {
                    format!(
                        "; {target} looks like a GraphQL endpoint: add --graphql to ask it for its schema"
                    )
                } else {
                    "; pass the API description (a file, or its URL such as http://…/openapi.json)"
                        .to_string()
                };
                anyhow::bail!("no SPEC to test {target} from{hint}");
            }
            let api = runtime.block_on(introspect(target, &options))?;
            if api.operations.is_empty() {
                anyhow::bail!(
                    "{target}: no operation to test: the schema's root types have no fields to call"
                );
            }
            (api, SpecSource::url(target))
        }
    };
    let mut api = api;
    super::select(&mut [&mut api], &args.flags.target.select)?;
    if options.sends_credentials() && !options.call_logout {
        leave_out_session_enders(&mut api, &options.include)?;
    }
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
    let summary = runtime.block_on(execute(Arc::new(api), &source, &target, &options))?;
    Ok(summary.exit_code())
}
