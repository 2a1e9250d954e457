//! `cartograph demo`: the built-in bookshop API, tested in one command.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use crate::model::text::{shell_arg, shell_command};

use super::args::RunFlags;
use crate::demo::{DemoServer, FAULTS_MD, GRAPHQL_SDL, OPENAPI_YAML};
use crate::execution::OutDir;
use crate::load::SpecSource;
use crate::model::Api;
use crate::run::{EXIT_FAULTS, RunOptions, RunSummary, RuntimeFailure, execute};

/// The embedded descriptions, named by their place in the repository (the
/// reports' `settings.spec`, and the file a code-scanning upload points at).
const REST_SPEC: &str = "models/demo/openapi.yaml";
const GRAPHQL_SPEC: &str = "models/demo/schema.graphql";

/// Arguments of `cartograph demo`.
#[derive(Debug, Args)]
#[command(
    after_help = "Without --serve: starts the demo API on a free 127.0.0.1 port, tests its REST API and then its GraphQL endpoint (four fifths and one fifth of the budget, 1m unless --budget or --max-requests), prints a summary scored against the planted faults, and writes one report for both (the GraphQL part's own files are in OUT/graphql/).\n\nExit status: 0 when every planted fault was found, 1 when one was missed, 2 usage error, 3 the demo API could not be reached, 4 the outputs could not be written.\n\nExamples:\n  cartograph demo\n  cartograph demo --budget 20s --seed 7\n  cartograph demo --serve --port 8080    # then try any tool on http://127.0.0.1:8080"
)]
pub(super) struct DemoArgs {
    /// Only serve the demo API (until Ctrl-C), so other tools can be tried on it.
    #[arg(long)]
    pub serve: bool,
    /// Port for --serve (default: a free one).
    #[arg(long, requires = "serve", value_name = "N")]
    pub port: Option<u16>,
    /// The run's settings.
    #[command(flatten)]
    pub flags: RunFlags,
}

/// Runs the command.
pub(super) fn run(args: &DemoArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let server = DemoServer::start(args.port.unwrap_or(0))
            .await
            .map_err(|e| anyhow::anyhow!("cannot start the demo API: {e}"))?;
        if args.serve {
            return Ok(serve(server).await);
        }
        // The folder is held for the whole demo: its REST part writes in it
        // (sharing this hold), the GraphQL part in its own `graphql/`, and
        // the joined report goes in last.
        let prepared = Plan::new(&args.flags).and_then(|plan| {
            let out = OutDir::open(&plan.flags.out)?;
            if plan.graphql.is_some() {
                out.folder("graphql").map_err(|e| {
                    anyhow::anyhow!("--out: cannot use {}: {e}", out.path("graphql").display())
                })?;
            }
            Ok((plan, out))
        });
        let (plan, out) = match prepared {
            Ok(prepared) => prepared,
            Err(e) => {
                server.shutdown().await;
                return Err(e);
            }
        };
        // One stream of events for both parts, ended by the merged run.
        let events = match crate::reports::events::Events::open(
            plan.flags.events.as_deref(),
            &out,
            crate::execution::secrets::Secrets::new(),
        ) {
            Ok(events) => events,
            Err(e) => {
                server.shutdown().await;
                return Err(e.into());
            }
        };
        let runs = plan.run(&server, &events).await;
        server.shutdown().await;
        let runs = match runs? {
            Ok(runs) => runs,
            // The demo API stopped answering: that run's status says so.
            Err(unreachable) => return Ok(unreachable),
        };
        let left_out = plan.left_out;
        let merged = Merged::of(runs, &left_out, &out)?;
        merged.print();
        // Scored only now, after the run: the search never sees the answers.
        let score = crate::reports::planted::Score::of(FAULTS_MD, &merged.summary.report, &left_out);
        if score.excluded > 0 {
            println!(
                "  planted faults on excluded operations only, not scored: {}",
                score.excluded
            );
        }
        println!("  {}", score.line());
        println!("  output: {}", plan.flags.out.display());
        print!(
            "{}",
            afterwards(&plan.flags.out, merged.suites, &merged.summary.report)
        );
        // The demo's faults are planted: finding them is the demo working. It
        // fails only when one was missed (or the run itself could not work).
        let missed = score.missed();
        let status = if let Some(signal) = crate::execution::interrupt::received() {
            // Stopped by the user: no score to stand by.
            signal.exit_status()
        } else if missed.is_empty() {
            0
        } else {
            eprintln!(
                "cartograph: the demo missed planted fault(s) {} (see models/demo/FAULTS.md); a longer --budget may find them",
                missed.join(", ")
            );
            EXIT_FAULTS
        };
        events.finish(&merged.summary.report, status, &plan.flags.out);
        Ok(ExitCode::from(status))
    })
}

/// `demo --serve`: the demo API until Ctrl-C.
async fn serve(server: DemoServer) -> ExitCode {
    let base = server.base_url();
    println!("demo API at {base}");
    println!(
        "  OpenAPI: {base}/openapi.json   GraphQL: {base}/graphql   reset: POST {base}/__reset"
    );
    println!("Ctrl-C to stop.");
    let _ = tokio::signal::ctrl_c().await;
    server.shutdown().await;
    ExitCode::SUCCESS
}

/// The demo's two parts, as the selection and the budget leave them.
struct Plan {
    rest: Option<(Arc<Api>, SpecSource, RunOptions)>,
    graphql: Option<(Arc<Api>, SpecSource, RunOptions)>,
    /// The operations the selection left out, of both parts.
    left_out: Vec<String>,
    /// The whole demo's settings (the budget and seed both parts share).
    flags: RunOptions,
}

impl Plan {
    /// Loads both descriptions, applies the selection and shares the budget.
    fn new(args: &RunFlags) -> anyhow::Result<Plan> {
        let mut rest = crate::load::load_text(OPENAPI_YAML, Path::new(REST_SPEC))?;
        let mut graphql = crate::load::load_text(GRAPHQL_SDL, Path::new(GRAPHQL_SPEC))?;
        super::select(&mut [&mut rest.api, &mut graphql.api], &args.target.select)?;
        let left_out: Vec<String> = rest
            .api
            .left_out
            .iter()
            .chain(&graphql.api.left_out)
            .map(|op| op.name.clone())
            .collect();
        let mut flags = args.options();
        if flags.budget.is_none() && flags.max_requests.is_none() {
            flags.budget = Some(Duration::from_secs(60));
        }
        // One seed for both parts, so one number repeats the whole demo.
        flags.seed = Some(flags.seed.unwrap_or_else(rand::random::<u64>));
        let (run_rest, run_graphql) = (
            !rest.api.operations.is_empty(),
            !graphql.api.operations.is_empty(),
        );
        let (mut rest_flags, mut graphql_flags) = split(&flags);
        if !(run_rest && run_graphql) {
            // The selection leaves one part: it gets the whole budget.
            let out = graphql_flags.out.clone();
            rest_flags = flags.clone();
            graphql_flags = flags.clone();
            graphql_flags.out = out;
        }
        let rest_source = SpecSource::text(REST_SPEC, OPENAPI_YAML, &rest.api);
        let graphql_source = SpecSource::text(GRAPHQL_SPEC, GRAPHQL_SDL, &graphql.api);
        Ok(Plan {
            rest: run_rest.then_some((Arc::new(rest.api), rest_source, rest_flags)),
            graphql: run_graphql.then_some((Arc::new(graphql.api), graphql_source, graphql_flags)),
            left_out,
            flags,
        })
    }

    /// Tests the parts against `server`, the REST API first; a part that
    /// found the server unreachable ends the demo with its status.
    async fn run(
        &self,
        server: &DemoServer,
        events: &crate::reports::events::Events,
    ) -> anyhow::Result<Result<[Option<RunSummary>; 2], ExitCode>> {
        let base = server.base_url();
        eprintln!("cartograph: demo API started at {base}");
        match (&self.rest, &self.graphql) {
            (Some((_, _, rest)), Some((_, _, graphql))) => eprintln!(
                "cartograph: 1/2 the REST API ({}), then 2/2 the GraphQL endpoint ({}, output in {})",
                share(rest),
                share(graphql),
                graphql.out.display()
            ),
            _ => eprintln!(
                "cartograph: only the {} ({}): the selection leaves nothing of the other",
                if self.rest.is_some() {
                    "REST API"
                } else {
                    "GraphQL endpoint"
                },
                share(&self.flags)
            ),
        }
        // The demo resets itself: every reproducer and suite file is proven
        // on a fresh demo API before it is written.
        let reset = crate::execution::reset::Reset::post(format!("{base}/__reset"));
        // Each part is one of the demo's: it lists both parts' causes in
        // its own summary, and one seed repeats both, said by the first.
        let part = |flags: &RunOptions, first: bool| RunOptions {
            reset: Some(reset.clone()),
            part: Some(crate::run::options::Part {
                events: events.clone(),
                first,
            }),
            ..flags.clone()
        };
        let mut rest_run = None;
        if let Some((api, source, flags)) = &self.rest {
            let run = execute(api.clone(), source, &base, &part(flags, true)).await?;
            if run.unreachable {
                return Ok(Err(run.exit_code()));
            }
            if crate::execution::interrupt::received().is_some() {
                // Interrupted: the GraphQL part is not started.
                return Ok(Ok([Some(run), None]));
            }
            // The REST part leaves thousands of authors behind, and `authors`
            // lists every one with their books unpaginated: megabytes per
            // answer. The GraphQL part starts from the seed data, as a fresh
            // server would: its run resets the demo API before its search.
            rest_run = Some(run);
        }
        let mut graphql_run = None;
        if let Some((api, source, flags)) = &self.graphql {
            let endpoint = format!("{base}/graphql");
            let flags = part(flags, self.rest.is_none());
            graphql_run = Some(execute(api.clone(), source, &endpoint, &flags).await?);
        }
        Ok(Ok([rest_run, graphql_run]))
    }
}

/// Both parts' runs as one report (written), with what the summary names.
struct Merged {
    summary: RunSummary,
    /// The REST part's operations answered 2xx, and its operations.
    rest_reached: Option<(usize, usize)>,
    /// Hurl files each part's suite holds.
    suites: [Option<usize>; 2],
    /// What the spec fixes hold (the REST part's).
    spec_fixes: Option<String>,
}

impl Merged {
    /// Merges the parts' reports and writes the whole demo's report, with
    /// one graph explorer for both APIs.
    fn of(
        [rest_run, graphql_run]: [Option<RunSummary>; 2],
        left_out: &[String],
        out: &OutDir,
    ) -> anyhow::Result<Merged> {
        // The merged report's operations are both parts': the REST line
        // counts the REST part's alone.
        let rest_reached = rest_run
            .as_ref()
            .map(|r| (r.report.operations_reached, r.report.operations.len()));
        let suites = [
            rest_run.as_ref().and_then(|r| r.suite_files),
            graphql_run.as_ref().and_then(|r| r.suite_files),
        ];
        let spec_fixes = rest_run.as_ref().and_then(|r| r.spec_fixes.clone());
        let (mut summary, graphql_graph) = match (rest_run, graphql_run) {
            (Some(mut summary), Some(graphql_run)) => {
                summary.report.absorb(graphql_run.report, "graphql");
                (summary, graphql_run.graph)
            }
            (Some(summary), None) => (summary, None),
            (None, Some(summary)) => (summary, None),
            (None, None) => anyhow::bail!("--include/--exclude leave no operation to test"),
        };
        summary.report.settings.excluded_operations = left_out.to_vec();
        // One explorer for both APIs: the page switches between their graphs.
        let graphs: Vec<_> = summary
            .graph
            .iter()
            .chain(graphql_graph.iter())
            .cloned()
            .collect();
        let secrets = crate::execution::secrets::Secrets::new();
        crate::reports::write_report(out, &summary.report, &secrets).map_err(|e| {
            RuntimeFailure::error(
                format!("cannot write {}", out.path("report.json").display()),
                e,
            )
        })?;
        let extras = crate::reports::write_extras(out, &summary.report, &graphs, &secrets);
        for w in extras.map_err(|e| {
            RuntimeFailure::error("cannot write report.html, junit.xml or report.sarif", e)
        })? {
            eprintln!("warning: {}", crate::model::text::one_line(&w));
        }
        Ok(Merged {
            summary,
            rest_reached,
            suites,
            spec_fixes,
        })
    }

    /// The summary's lines: what was reached, linked and found.
    fn print(&self) {
        let report = &self.summary.report;
        println!("\nDemo summary");
        if let Some((reached, operations)) = self.rest_reached {
            println!("  operations answered 2xx: {reached} of {operations}");
        }
        if let Some(c) = &report.schema_coverage {
            println!(
                "  GraphQL root fields answered data: {} of {}; schema coverage {} of {} (type, field) pairs",
                c.root_fields_reached.len(),
                c.root_fields,
                c.covered,
                c.total
            );
        }
        if let Some(c) = &report.graph_coverage {
            println!(
                "  graph links exercised: {} of {} ({:.0}%: a value passed along the link, then a success)",
                c.links_exercised,
                c.links,
                100.0 * c.share()
            );
        }
        println!(
            "  {}:",
            crate::faults::causes::summary(&report.causes, report.faults.len())
        );
        for c in &report.causes {
            println!(
                "    {}",
                crate::model::text::one_line(&crate::faults::causes::line(c))
            );
        }
        if let Some(line) = &self.spec_fixes {
            println!("  {}", line.trim_start_matches("cartograph: "));
        }
    }
}

/// How to run what the demo wrote (the regression suites and the
/// reproducers) once its own server, and port, are gone: against
/// `cartograph demo --serve`, reset to its start state before each part.
fn afterwards(
    out: &Path,
    [rest, graphql]: [Option<usize>; 2],
    report: &crate::reports::Report,
) -> String {
    let reproducers = report.faults.iter().any(|f| f.reproducer.is_some());
    if rest.unwrap_or(0) + graphql.unwrap_or(0) == 0 && !reproducers {
        return String::new();
    }
    let base = "http://127.0.0.1:8080";
    let reset = format!("curl -X POST {base}/__reset");
    let mut text = String::from(
        "  the demo API above has stopped: run what it wrote against a fresh one\n    cartograph demo --serve --port 8080    # in another terminal\n",
    );
    let suites = [
        (rest, out.join("tests"), base.to_string(), "REST"),
        (
            graphql,
            out.join("graphql/tests"),
            format!("{base}/graphql"),
            "GraphQL",
        ),
    ];
    for (files, dir, target, part) in suites {
        if let Some(n) = files.filter(|&n| n > 0) {
            text.push_str(&format!(
                "    {reset}; {} {}/*.hurl    # the {part} regression suite: {n} file(s), each creating what it uses\n",
                shell_command(["hurl", "--test", "--jobs", "1", "--variable", &format!("base={target}")]),
                shell_arg(&dir.display().to_string())
            ));
        }
    }
    if reproducers {
        text.push_str(&format!(
            "    {reset}; bash {}/NN-….sh {base}    # a reproducer (those in {} take {base}/graphql)\n",
            shell_arg(&out.join("reproducers").display().to_string()),
            shell_arg(&out.join("graphql/reproducers").display().to_string())
        ));
    }
    text
}

/// The GraphQL part's share of the budget and of the request cap: a fifth.
/// Its root fields are few, and the REST part keeps the rest (with a request
/// cap, exactly the run `cartograph run` makes with four fifths of it).
const GRAPHQL_SHARE: u32 = 5;

/// The flags of the REST part and of the GraphQL part.
fn split(flags: &RunOptions) -> (RunOptions, RunOptions) {
    let (mut rest, mut graphql) = (flags.clone(), flags.clone());
    if let Some(b) = flags.budget {
        graphql.budget = Some(b / GRAPHQL_SHARE);
        rest.budget = Some(b - b / GRAPHQL_SHARE);
    }
    if let Some(n) = flags.max_requests {
        let part = n / u64::from(GRAPHQL_SHARE);
        graphql.max_requests = Some(part.max(1));
        rest.max_requests = Some((n - part).max(1));
    }
    graphql.out = flags.out.join("graphql");
    (rest, graphql)
}

fn share(flags: &RunOptions) -> String {
    match (flags.budget, flags.max_requests) {
        (_, Some(n)) => format!("{n} requests"),
        (Some(b), None) => format!("{:.0}s", b.as_secs_f64()),
        _ => "no limit".into(),
    }
}
