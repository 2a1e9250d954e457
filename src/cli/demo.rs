//! `cartograph demo`: the built-in bookshop API, tested in one command.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use super::run::{execute, RunFlags};
use crate::demo::{DemoServer, FAULTS_MD, OPENAPI_YAML};

/// Arguments of `cartograph demo`.
#[derive(Debug, Args)]
#[command(
    after_help = "Without --serve: starts the demo API on a free 127.0.0.1 port, runs `cartograph run` on it (budget 1m unless --budget), prints a summary scored against the planted faults, and writes the output folder.\n\nExamples:\n  cartograph demo\n  cartograph demo --budget 20s --seed 7\n  cartograph demo --serve --port 8080    # then try any tool on http://127.0.0.1:8080"
)]
pub struct DemoArgs {
    /// Only serve the demo API (until Ctrl-C), so other tools can be tried on it.
    #[arg(long)]
    pub serve: bool,
    /// Port for --serve (default: a free one).
    #[arg(long, requires = "serve", value_name = "N")]
    pub port: Option<u16>,
    #[command(flatten)]
    pub flags: RunFlags,
}

/// Runs the command.
pub fn run(args: &DemoArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let server = DemoServer::start(args.port.unwrap_or(0))
            .await
            .map_err(|e| anyhow::anyhow!("cannot start the demo API: {e}"))?;
        let base = server.base_url();
        if args.serve {
            println!("demo API at {base}");
            println!("  OpenAPI: {base}/openapi.json   GraphQL: {base}/graphql   reset: POST {base}/__reset");
            println!("Ctrl-C to stop.");
            let _ = tokio::signal::ctrl_c().await;
            server.shutdown().await;
            return Ok(ExitCode::SUCCESS);
        }
        let loaded = crate::spec::load_text(OPENAPI_YAML, Path::new("models/demo/openapi.yaml"))?;
        let mut flags = args.flags.clone();
        if flags.budget.is_none() && flags.max_requests.is_none() {
            flags.budget = Some(Duration::from_secs(60));
        }
        eprintln!("cartograph: demo API started at {base}");
        let summary = execute(Arc::new(loaded.api), &base, &flags).await?;
        server.shutdown().await;

        let report = &summary.report;
        println!("\nDemo summary");
        println!(
            "  operations answered 2xx: {} of {}",
            report.operations_reached,
            report.operations.len()
        );
        println!("  faults found: {}", report.faults.len());
        for f in &report.faults {
            println!("    {:<22} {:<14} {}", f.code, f.operation, f.message);
        }
        // Scored only now, after the run: the search never sees the answers.
        let planted = planted_faults(FAULTS_MD);
        let found: Vec<&PlantedFault> = planted
            .iter()
            .filter(|p| {
                report
                    .faults
                    .iter()
                    .any(|f| f.code == p.oracle && p.operations.contains(&f.operation))
            })
            .collect();
        println!(
            "  planted faults found: {} of {}{}",
            found.len(),
            planted.len(),
            if found.is_empty() {
                String::new()
            } else {
                format!(
                    " ({})",
                    found.iter().map(|p| p.id.as_str()).collect::<Vec<_>>().join(", ")
                )
            }
        );
        println!("  output: {}", flags.out.display());
        Ok(summary.exit_code())
    })
}

/// A fault listed in `models/demo/FAULTS.md`.
#[derive(Debug, Clone, PartialEq)]
pub struct PlantedFault {
    /// Its id (`F1`).
    pub id: String,
    /// The oracle code that should report it.
    pub oracle: String,
    /// Operations where it may be reported.
    pub operations: Vec<String>,
}

/// Reads the table of `FAULTS.md`: `| id | oracle | operation | … |`, taking the
/// backquoted words of the oracle and operation cells.
pub fn planted_faults(markdown: &str) -> Vec<PlantedFault> {
    let ticked = |cell: &str| -> Vec<String> {
        cell.split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 1)
            .map(|(_, s)| s.to_string())
            .collect()
    };
    markdown
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line
                .trim()
                .trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect();
            let id = cells.first()?;
            if !(id.starts_with('F') && id[1..].chars().all(|c| c.is_ascii_digit()) && id.len() > 1)
            {
                return None;
            }
            let oracle = ticked(cells.get(1)?).into_iter().next()?;
            Some(PlantedFault {
                id: id.to_string(),
                oracle,
                operations: ticked(cells.get(2)?),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_fault_table_parses() {
        let planted = planted_faults(FAULTS_MD);
        assert!(planted.len() >= 8, "{planted:?}");
        let f1 = planted.iter().find(|p| p.id == "F1").unwrap();
        assert_eq!(f1.oracle, "server_error");
        assert_eq!(f1.operations, ["placeOrder"]);
    }
}
