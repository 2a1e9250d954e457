//! Command-line interface: argument definitions and one module per command.

// The command line talks to the terminal: printing is its job.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod args;
mod config;
#[cfg(feature = "demo")]
mod demo;
mod graph;
mod inspect;
mod replay;
mod replay_queries;
mod run;
mod shell;
mod values;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::load::{self, Loaded};
use crate::model::select::Selection;
use crate::model::text::one_line;
use crate::run::RuntimeFailure;
use args::SelectArgs;

/// Exit status for usage and configuration errors (a bad flag, an unreadable spec).
pub(crate) const EXIT_USAGE: u8 = 2;

/// Cartograph tests web APIs from the outside, guided by a property graph of the
/// API built from its OpenAPI or GraphQL description.
#[derive(Debug, Parser)]
#[command(name = "cartograph", version, about, long_about = None)]
#[command(
    after_help = "Examples:\n  cartograph graph openapi.yaml --format dot -o graph.dot\n  cartograph inspect openapi.yaml --chain getOrderById\n  cartograph run openapi.yaml --target http://127.0.0.1:8080 --budget 2m\n  cartograph replay cartograph-out/reproducers/01-server_error-placeOrder.sh\n  cartograph replay-queries queries.ndjson --target http://127.0.0.1:4000/graphql"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Start the built-in demo API and test it (or only serve it, with --serve).
    #[cfg(feature = "demo")]
    Demo(Box<demo::DemoArgs>),
    /// Test an API against a running server, from its description.
    Run(Box<run::RunArgs>),
    /// Export the property graph of an API description (JSON, DOT, Mermaid, GraphML).
    Graph(graph::GraphArgs),
    /// Summarise an API's graph, or explain where one operation's inputs come from.
    Inspect(inspect::InspectArgs),
    /// Re-run a fault's reproducer (from a run's reproducers/ folder) against a target.
    Replay(replay::ReplayArgs),
    /// Send a log of production GraphQL requests (NDJSON or HAR) to an endpoint
    /// and check every answer against the schema.
    ReplayQueries(Box<replay_queries::ReplayQueriesArgs>),
    /// Print shell completions (bash, zsh, fish, powershell, elvish).
    Completions(shell::CompletionsArgs),
    /// Print the man page, or write one per command with --out.
    Man(shell::ManArgs),
}

/// Runs the command line and returns the process exit status.
pub fn main() -> ExitCode {
    let argv = match config::expand(std::env::args_os().collect()) {
        Ok(argv) => argv,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let cli = Cli::parse_from(argv);
    let result = match cli.command {
        #[cfg(feature = "demo")]
        Command::Demo(args) => demo::run(&args),
        Command::Run(args) => run::run(&args),
        Command::Graph(args) => graph::run(&args),
        Command::Inspect(args) => inspect::run(&args),
        Command::Replay(args) => replay::run(&args),
        Command::ReplayQueries(args) => replay_queries::run(&args),
        Command::Completions(args) => shell::completions(&args),
        Command::Man(args) => shell::man(&args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            // A closed pipe (`cartograph graph x | head`) is not an error.
            if let Some(io) = err.downcast_ref::<std::io::Error>()
                && io.kind() == std::io::ErrorKind::BrokenPipe
            {
                return ExitCode::SUCCESS;
            }
            // Errors quote descriptions and answers: shown, never acted on.
            eprintln!(
                "error: {}",
                crate::model::text::printable(&format!("{err:#}"))
            );
            // A run that could not write its outputs is no usage error.
            if err.downcast_ref::<RuntimeFailure>().is_some() {
                return ExitCode::from(crate::run::EXIT_INCOMPLETE);
            }
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// Loads a description, printing one line per skipped part on stderr.
fn load_spec(path: &Path) -> anyhow::Result<Loaded> {
    let loaded =
        crate::run::phase::timed(&format!("reading {}", path.display()), || load::load(path))?;
    let mut stderr = std::io::stderr().lock();
    for w in &loaded.warnings {
        let _ = writeln!(stderr, "warning: {}", one_line(&w.to_string()));
    }
    if !loaded.warnings.is_empty() {
        let _ = writeln!(
            stderr,
            "warning: {} part(s) of {} were skipped; the rest loaded ({} operations)",
            loaded.warnings.len(),
            path.display(),
            loaded.api.operations.len()
        );
    }
    Ok(loaded)
}

/// Loads SPEC, a file or an `http(s)://` URL (fetched with the client
/// `client` makes, sending `headers`), with how the reports name it. The
/// client is made for a URL only: making one reads the machine's
/// certificates.
fn load_any(
    spec: &Path,
    client: impl FnOnce() -> anyhow::Result<reqwest::Client>,
    headers: &[(String, String)],
) -> anyhow::Result<(Loaded, load::SpecSource)> {
    let text = spec.to_string_lossy();
    if !load::remote::is_url(&text) {
        let loaded = load_spec(spec)?;
        let source = load::SpecSource::file(spec, &loaded.api);
        return Ok((loaded, source));
    }
    let url = url::Url::parse(&text).map_err(|e| anyhow::anyhow!("{text}: not a URL: {e}"))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let remote = runtime.block_on(load::remote::fetch(&client()?, &url, headers))?;
    for w in &remote.loaded.warnings {
        eprintln!("warning: {}", one_line(&w.to_string()));
    }
    eprintln!(
        "cartograph: description from {}: {} operations",
        one_line(&crate::execution::without_userinfo(remote.url.as_str())),
        remote.loaded.api.operations.len()
    );
    let source = load::SpecSource::text(remote.url.as_str(), &remote.text, &remote.loaded.api);
    Ok((remote.loaded, source))
}

/// Leaves out of `apis` the operations `select` excludes, saying on stderr
/// what was left out and which patterns named nothing (in any of them).
/// Excluding every operation is an error.
fn select(apis: &mut [&mut crate::model::Api], select: &SelectArgs) -> anyhow::Result<()> {
    let selection =
        Selection::parse(&select.include, &select.exclude).map_err(anyhow::Error::msg)?;
    if selection.is_empty() {
        return Ok(());
    }
    // A pattern may name operations of any of the APIs (the demo has two).
    let unmatched = selection.unmatched(apis.iter().flat_map(|api| api.operations.iter()));
    for p in unmatched {
        eprintln!(
            "warning: the pattern {p:?} names no operation (patterns: an operationId glob, `METHOD /path`, `tag:NAME`, `Query.field`); see `cartograph inspect SPEC` for the names"
        );
    }
    for api in apis.iter_mut() {
        selection.apply(api);
    }
    let kept: usize = apis.iter().map(|api| api.operations.len()).sum();
    let excluded: Vec<&str> = apis
        .iter()
        .flat_map(|api| api.left_out.iter().map(|op| op.name.as_str()))
        .collect();
    if kept == 0 {
        anyhow::bail!(
            "--include/--exclude leave no operation to work on ({} excluded): loosen the patterns",
            excluded.len()
        );
    }
    if !excluded.is_empty() {
        let shown: Vec<&str> = excluded.iter().take(10).copied().collect();
        eprintln!(
            "cartograph: {} operation(s) excluded, never called: {}{}",
            excluded.len(),
            one_line(&shown.join(", ")),
            if excluded.len() > shown.len() {
                ", …"
            } else {
                ""
            }
        );
    }
    Ok(())
}

/// Writes text to a file, or to stdout when no file is given.
fn write_output(text: &str, out: Option<&PathBuf>) -> anyhow::Result<()> {
    match out {
        Some(path) => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| {
                    RuntimeFailure::error(format!("cannot create the folder {}", dir.display()), e)
                })?;
            }
            std::fs::write(path, text)
                .map_err(|e| RuntimeFailure::error(format!("cannot write {}", path.display()), e))
        }
        None => {
            let mut stdout = std::io::stdout().lock();
            // On a terminal, a description's control characters show as
            // escapes; piped, the text stays exact.
            let text = if std::io::IsTerminal::is_terminal(&stdout) {
                crate::model::text::printable(text)
            } else {
                std::borrow::Cow::Borrowed(text)
            };
            stdout.write_all(text.as_bytes())?;
            stdout.flush()?;
            Ok(())
        }
    }
}
