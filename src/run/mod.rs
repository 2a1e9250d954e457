//! A run, from a loaded description to the output folder, the same for REST
//! and GraphQL: the session is opened ([`session`]), the graph built, the
//! search driven against the target through the API's protocol
//! ([`search`]), the faults replayed and the suite recorded ([`confirm`]),
//! and everything written ([`outputs`], `reports`). The `run`, `demo` and
//! `replay-queries` commands prepare a run and hand it here.

pub mod confirm;
pub mod options;
pub mod outputs;
pub mod phase;
pub mod progress;
pub mod queries;
pub mod search;
pub mod session;

use std::process::ExitCode;
use std::sync::{Arc, Mutex};

pub use options::{RunOptions, parse_duration};
pub use session::{Session, introspect, open_session, with_base_path};

use crate::execution::StopReason;
use crate::generation::Search;
use crate::generation::graphql::Graphql;
use crate::generation::rest::Rest;
use crate::generation::search::Protocol;
use crate::graph::{self, export::GraphDocument, feedback::Feedback};
use crate::load::SpecSource;
use crate::model::Api;
use crate::model::text::one_line;
use crate::reports::{self, Report, events::Phase};
use crate::reproduce;

/// Exit status when faults were found.
pub const EXIT_FAULTS: u8 = 1;
/// Exit status when the target cannot be reached.
pub const EXIT_UNREACHABLE: u8 = 3;
/// Exit status when the run could not do its work for another reason than
/// an unreachable target: the server asked to wait past the budget's end,
/// or the outputs could not be written (a full disk).
pub const EXIT_INCOMPLETE: u8 = 4;

/// A failure while the run works or writes its outputs (not a usage
/// error): the command exits [`EXIT_INCOMPLETE`].
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RuntimeFailure(pub String);

impl RuntimeFailure {
    /// `what` could not be done because of `e`.
    pub fn error(what: impl std::fmt::Display, e: impl std::fmt::Display) -> anyhow::Error {
        anyhow::Error::new(RuntimeFailure(format!("{what}: {e}")))
    }
}

/// What a run produced, for the commands' summaries.
pub struct RunSummary {
    /// The report as written.
    pub report: Report,
    /// Whether the target could not be reached.
    pub unreachable: bool,
    /// Whether the run could not do all its work although the target
    /// answered (the server asked to wait past the budget's end).
    pub incomplete: bool,
    /// Oracle codes whose faults fail the run (all when empty).
    pub fail_on: Vec<String>,
    /// The final graph, as report.html draws it (none when the run never
    /// started).
    pub graph: Option<GraphDocument>,
    /// Hurl files of the regression suite written (none without replays).
    pub suite_files: Option<usize>,
    /// The line saying what `spec-fixes.overlay.yaml` holds (OpenAPI runs).
    pub spec_fixes: Option<String>,
}

impl RunSummary {
    /// 0 no faults, 1 faults, 3 unreachable, 4 incomplete (the first that
    /// applies of 3, 4, 1).
    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(self.exit_status())
    }

    /// [`RunSummary::exit_code`] as a number (for `--events`).
    pub fn exit_status(&self) -> u8 {
        if self.unreachable {
            EXIT_UNREACHABLE
        } else if self.incomplete {
            EXIT_INCOMPLETE
        } else if !self.report.faults.iter().any(|f| {
            self.fail_on.is_empty()
                || crate::oracles::registry::expand(&self.fail_on).contains(&f.code.as_str())
        }) {
            0
        } else {
            EXIT_FAULTS
        }
    }
}

/// Tests `api` (read from `source`) against `target` under `options` and
/// writes the output folder: the search through the API's protocol, then
/// the replays.
pub async fn execute(
    api: Arc<Api>,
    source: &SpecSource,
    target: &str,
    options: &RunOptions,
) -> anyhow::Result<RunSummary> {
    let session = match open_session(&api, source, target, options).await? {
        Ok(session) => session,
        Err(unreachable) => return Ok(unreachable),
    };
    eprintln!(
        "cartograph: seed {} (repeat this run with --seed {})",
        session.seed, session.seed
    );
    let graph = phase::timed("building the graph", || graph::build(&api));
    outputs::write_graph(&options.out.join("graph-initial.json"), &graph)
        .map_err(|e| RuntimeFailure::error("cannot write graph-initial.json", format!("{e:#}")))?;
    let feedback = options
        .feedback()
        .then(|| Feedback::new(options.suspend_after));
    let config = options.search_config(session.seed, &session.target);
    match api.graphql.clone() {
        Some(ts) => {
            let search = phase::timed("preparing the search", || {
                Search::graphql(api.clone(), &ts, graph, feedback, config)
            });
            drive(api, search, session, options, |p: &Graphql, report| {
                report.schema_coverage = Some(p.coverage());
            })
            .await
        }
        None => {
            let search = phase::timed("preparing the search", || {
                Search::rest(api.clone(), graph, feedback, config)
            });
            drive(api, search, session, options, |_: &Rest, _| {}).await
        }
    }
}

/// Drives `search` against the session's target, then replays its faults
/// and records its suite; `extras` adds what only the protocol knows to the
/// report.
async fn drive<P: Protocol>(
    api: Arc<Api>,
    search: Search<P>,
    session: Session,
    options: &RunOptions,
    extras: impl Fn(&P, &mut Report),
) -> anyhow::Result<RunSummary> {
    let Session {
        target,
        secrets,
        credentials,
        seed,
        settings,
        mut tally,
        events,
    } = session;
    let driver = Arc::new(Mutex::new(search));
    let found = {
        let search = driver.lock().unwrap_or_else(|e| e.into_inner());
        search::Found {
            count: search.faults().counter(),
            news: events.enabled().then(|| search.faults().news()),
        }
    };
    let started = std::time::Instant::now();
    let config = options.run_config(&api, &target, seed);
    // One politeness for every phase: the rate holds from the server's view.
    let politeness = Arc::new(config.politeness());
    let transport = search::transport(&api, &config)?;
    let mut outcome = search::search(
        driver.clone(),
        found,
        config.clone(),
        transport.clone(),
        credentials.clone(),
        politeness.clone(),
        &secrets,
        &mut tally,
        options,
        &events,
    )
    .await
    .map_err(|e| RuntimeFailure::error("the search could not go on", format!("{e:#}")))?;
    // The engine stopped for a server-wide limit: replays would only be
    // refused the same way.
    let server_wide_limit = outcome.stop == StopReason::RateLimited;
    let rate_warning = outcome.rate_limit_warning();
    if rate_warning.is_some()
        && matches!(
            outcome.stop,
            StopReason::Budget | StopReason::MaxRequests | StopReason::Exhausted
        )
    {
        // Some operations were never called after the server's answer: the
        // run did not do all its work, whatever else ended it.
        outcome.stop = StopReason::RateLimited;
    }
    // The lock is held only here: the replays below await the engine.
    let (mut report, graph_doc, checker, mut ledger, replays, mut suite_doc, answers) = {
        let mut search = driver.lock().unwrap_or_else(|e| e.into_inner());
        for w in tally.diagnose() {
            eprintln!("warning: {}", one_line(&secrets.redact(&w)));
        }
        let mut report = tally.report(settings, &outcome, search.faults().faults());
        if let Some(w) = &rate_warning {
            eprintln!("warning: {w}");
            report.warnings.push(w.clone());
        }
        report.search = Some(search.summary());
        // Said once each, after the search: what it cost, and that it was
        // held to its share.
        let slow = search.slow_operations();
        for s in &slow {
            eprintln!("warning: {s}");
            report.warnings.push(s.to_string());
        }
        report.graph_coverage = Some(reports::GraphCoverage::of(
            search.graph(),
            search.link_flows(),
            &report.operations,
        ));
        extras(search.protocol(), &mut report);
        outputs::write_graph(&options.out.join("graph-final.json"), search.graph()).map_err(
            |e| RuntimeFailure::error("cannot write graph-final.json", format!("{e:#}")),
        )?;
        let graph_doc = graph::export::to_document(search.graph());
        // Written now, and again once the replays tell what became of each test.
        let suite_doc = search.suite_document();
        write_suite_document(&options.out, &suite_doc, &secrets)?;
        outputs::print_changes(search.changes());
        let checker = search.checker().clone();
        for w in checker.warnings() {
            eprintln!("warning: {}", one_line(&secrets.redact(&w)));
        }
        // Causes first: each cause's representative, defects first, before
        // any cause's second fault, so a replay time that runs out leaves
        // the least telling faults unreplayed.
        let kept: Vec<_> = search.faults().kept().collect();
        let order = crate::oracles::causes::replay_order(&report.faults);
        let faults: Vec<_> = order
            .into_iter()
            .filter_map(|i| kept.get(i))
            .map(|k| {
                reproduce::phase::fault_script(&api, &checker, search.ledger(), target.as_str(), k)
            })
            .collect();
        let answers = conformance_answers(search.faults());
        let suite = search.suite_runs();
        let ledger = search.take_ledger();
        (
            report,
            graph_doc,
            checker.clone(),
            ledger,
            confirm::Replays {
                faults,
                suite,
                slow: slow.into_iter().map(|s| s.operation).collect(),
            },
            suite_doc,
            answers,
        )
    };
    let replays_allowed = !options.no_replay
        && outcome.auth_error.is_none()
        && outcome.unreachable.is_none()
        && !server_wide_limit
        && outcome.stop != StopReason::Interrupted;
    let mut suite_files = None;
    if replays_allowed {
        // What is left of --budget, which bounds the whole run.
        let left = options.budget.map(|b| b.saturating_sub(started.elapsed()));
        let phase = events.phase_started(Phase::Replay);
        let outcome = confirm::replay(
            api.clone(),
            checker.clone(),
            &mut ledger,
            replays,
            &mut report,
            confirm::Link {
                config,
                transport,
                credentials,
                politeness,
                left,
            },
            options,
            &secrets,
        )
        .await
        .map_err(|e| RuntimeFailure::error("the replays could not go on", format!("{e:#}")))?;
        events.phase_finished(Phase::Replay, phase);
        annotate_suite(&mut suite_doc, &outcome.fates);
        write_suite_document(&options.out, &suite_doc, &secrets)?;
        suite_files = Some(outcome.files);
    }
    report.group_causes();
    if replays_allowed {
        let unreplayed: Vec<&str> = report
            .causes
            .iter()
            .filter(|c| c.confirmation == crate::oracles::Confirmation::NotReplayed)
            .map(|c| c.id.as_str())
            .collect();
        if !unreplayed.is_empty() {
            let why = if options.read_only {
                "--read-only refused their changes, or the replay time ended"
            } else {
                "the replay time ended; a longer --budget replays them"
            };
            let w = format!(
                "{} of {} cause(s) were not replayed (no confirmation, no reproducer): {}: {why}",
                unreplayed.len(),
                report.causes.len(),
                unreplayed.join(", ")
            );
            eprintln!("warning: {w}");
            report.warnings.push(w);
        }
    }
    reports::write_report(&options.out, &report, &secrets).map_err(|e| {
        RuntimeFailure::error(
            format!("cannot write {}", options.out.join("report.json").display()),
            e,
        )
    })?;
    let spec_fixes = (!api.format.is_graphql())
        .then(|| write_spec_fixes(&api, &report, &answers, &checker, options, &secrets))
        .transpose()?;
    let graphs = std::slice::from_ref(&graph_doc);
    for w in reports::write_extras(&options.out, &report, graphs, &secrets).map_err(|e| {
        RuntimeFailure::error(
            format!(
                "cannot write report.html, junit.xml or report.sarif in {}",
                options.out.display()
            ),
            e,
        )
    })? {
        eprintln!("warning: {}", one_line(&secrets.redact(&w)));
    }
    eprintln!("{}", summary_line(&report, options));
    if let Some(line) = &spec_fixes {
        eprintln!("{line}");
    }
    let summary = RunSummary {
        unreachable: outcome.unreachable.is_some(),
        incomplete: outcome.stop == StopReason::RateLimited,
        report,
        fail_on: options.fail_on.clone(),
        graph: Some(graph_doc),
        suite_files,
        spec_fixes,
    };
    events.finish(&summary.report, summary.exit_status(), &options.out);
    Ok(summary)
}

/// Writes `suite.json`.
fn write_suite_document(
    dir: &std::path::Path,
    doc: &serde_json::Value,
    secrets: &crate::execution::secrets::Secrets,
) -> anyhow::Result<()> {
    // Numbers past 64 bits are written as the digits sent, not rounded.
    let text = crate::execution::wire::exact_numbers_written(serde_json::to_string_pretty(doc)?);
    let path = dir.join("suite.json");
    std::fs::write(&path, format!("{}\n", secrets.redact(&text)))
        .map_err(|e| RuntimeFailure::error(format!("cannot write {}", path.display()), e))
}

/// Records on each test of `suite.json` its Hurl file (`hurl`) or why it
/// was left out of the regression suite (`left_out`).
fn annotate_suite(doc: &mut serde_json::Value, fates: &[crate::reproduce::phase::Fate]) {
    let Some(tests) = doc.get_mut("tests").and_then(|t| t.as_array_mut()) else {
        return;
    };
    for (test, fate) in tests.iter_mut().zip(fates) {
        let Some(test) = test.as_object_mut() else {
            continue;
        };
        match fate {
            crate::reproduce::phase::Fate::Written(file) => {
                test.insert("hurl".into(), file.clone().into())
            }
            crate::reproduce::phase::Fate::LeftOut(why) => {
                test.insert("left_out".into(), why.clone().into())
            }
        };
    }
}

/// Per conformance fault, the answers that showed it (the last exchange of
/// its smallest and of its first witness): what the spec fixes read.
fn conformance_answers(
    faults: &crate::oracles::Faults,
) -> std::collections::HashMap<String, Vec<crate::execution::Exchange>> {
    faults
        .kept()
        .filter(|k| k.fault.class == crate::oracles::registry::Class::Conformance)
        .map(|k| {
            let mut answers: Vec<crate::execution::Exchange> = Vec::new();
            for e in [k.witness.last(), k.first.last()].into_iter().flatten() {
                if !answers.iter().any(|a| a.seq == e.seq) {
                    answers.push(e.clone());
                }
            }
            (k.fault.signature.clone(), answers)
        })
        .collect()
}

/// Writes `spec-fixes.overlay.yaml` (or removes a stale one) and returns
/// the line that says what it holds.
fn write_spec_fixes(
    api: &Api,
    report: &Report,
    answers: &std::collections::HashMap<String, Vec<crate::execution::Exchange>>,
    checker: &crate::oracles::Checker,
    options: &RunOptions,
    secrets: &crate::execution::secrets::Secrets,
) -> anyhow::Result<String> {
    let seen = reports::overlay::Seen {
        api,
        faults: &report.faults,
        answers,
        checker,
    };
    let extends = report
        .settings
        .spec
        .as_deref()
        .map(|s| reports::overlay::extends(s, &options.out));
    let fixes = reports::overlay::spec_fixes(&seen, &report.causes, extends.as_deref(), secrets);
    let written = reports::overlay::write(&options.out, &fixes, secrets).map_err(|e| {
        RuntimeFailure::error(
            format!(
                "cannot write {}",
                options.out.join(reports::overlay::FILE).display()
            ),
            e,
        )
    })?;
    Ok(fixes.summary(written.as_deref()))
}

/// The run's last line: what it sent, reached and found.
fn summary_line(report: &Report, options: &RunOptions) -> String {
    let reached = match &report.schema_coverage {
        Some(c) => format!(
            "{} of {} root fields answered data, schema coverage {} of {} (type, field) pairs",
            c.root_fields_reached.len(),
            c.root_fields,
            c.covered,
            c.total
        ),
        None => format!(
            "{} of {} operations answered 2xx",
            report.operations_reached,
            report.operations.len()
        ),
    };
    let links = match &report.graph_coverage {
        Some(c) if c.links > 0 => format!(
            ", {} of {} graph links exercised",
            c.links_exercised, c.links
        ),
        _ => String::new(),
    };
    format!(
        "cartograph: {} requests in {:.1}s ({}), {reached}{links}, {}; wrote {}",
        report.requests,
        report.elapsed_s,
        report.stop.replace('_', " "),
        crate::oracles::causes::summary(&report.causes, report.faults.len()),
        options.out.display()
    )
}
