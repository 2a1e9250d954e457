//! The one pipeline every run goes through, whatever its tests come from:
//! the engine drives the source's tests against the target (the search
//! phase), the source says what it found, the faults are replayed,
//! confirmed and shrunk and the suite recorded (the replay phase), and the
//! report and its companions are written.

use std::sync::Arc;
use std::time::Instant;

use super::confirm::{self, Suite};
use super::link::Link;
use super::options::RunOptions;
use super::source::{Collected, Ended, Source};
use super::{RunSummary, RuntimeFailure, Session, search, write_suite_document};
use crate::execution::{StopReason, secrets::Secrets};
use crate::model::Api;
use crate::model::text::one_line;
use crate::reports::{self, Report, events::Phase};

/// Drives `source`'s tests against the session's target, then replays
/// their faults and records the suite, and writes the output folder.
pub async fn drive<S: Source>(
    api: Arc<Api>,
    source: S,
    session: Session,
    options: &RunOptions,
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
    let started = Instant::now();
    let mut config = options.run_config(&api, &target, seed);
    source.configure(&mut config);
    let link = Link::new(&api, config, credentials)?;
    let found = source.found(events.enabled());
    let mut outcome = search::search(
        source.driver(),
        found,
        &link,
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
    for w in tally.diagnose() {
        eprintln!("warning: {}", one_line(&secrets.redact(&w)));
    }
    let Collected {
        mut report,
        graph,
        replays,
        suite,
        mut suite_doc,
        answers,
    } = source.collect(Ended {
        api: &api,
        target: &target,
        outcome: &outcome,
        options,
        secrets: &secrets,
        tally,
        settings,
    })?;
    if let Some(w) = rate_warning {
        eprintln!("warning: {w}");
        report.warnings.push(w);
    }
    let replays_allowed = !options.no_replay
        && outcome.auth_error.is_none()
        && outcome.unreachable.is_none()
        && !server_wide_limit
        && outcome.stop != StopReason::Interrupted;
    let checker = replays.checker.clone();
    let suite_files = if replays_allowed {
        // What is left of --budget, which bounds the whole run.
        let left = options.budget.map(|b| b.saturating_sub(started.elapsed()));
        let phase = events.phase_started(Phase::Replay);
        let done = confirm::replay(replays, suite, &mut report, &link, left, options, &secrets)
            .await
            .map_err(|e| RuntimeFailure::error("the replays could not go on", format!("{e:#}")))?;
        events.phase_finished(Phase::Replay, phase);
        if let Some(doc) = &mut suite_doc {
            annotate_suite(doc, &done.fates);
            write_suite_document(&options.out, doc, &secrets)?;
        }
        Some(done.files)
    } else if let Suite::Recorded(scripts) = suite {
        // Recorded already: the suite needs no replay to be written.
        Some(crate::reproduce::phase::write_suite(&options.out, scripts, &secrets)?.files)
    } else {
        None
    };
    report.group_causes();
    if replays_allowed {
        warn_unreplayed(&mut report, options);
    }
    reports::write_report(&options.out, &report, &secrets).map_err(|e| {
        RuntimeFailure::error(
            format!("cannot write {}", options.out.join("report.json").display()),
            e,
        )
    })?;
    let seen = reports::overlay::Seen {
        api: &api,
        faults: &report.faults,
        answers: &answers,
        checker: &checker,
    };
    let spec_fixes = (!api.format.is_graphql())
        .then(|| write_spec_fixes(&seen, &report, options, &secrets))
        .transpose()?;
    write_companions(&report, &graph, options, &secrets)?;
    eprintln!("{}", summary_line(&report, options));
    if let Some(line) = &spec_fixes {
        eprintln!("{line}");
    }
    let summary = RunSummary {
        unreachable: outcome.unreachable.is_some(),
        // The server asked to wait past the budget's end, or the search
        // failed inside.
        incomplete: matches!(outcome.stop, StopReason::RateLimited | StopReason::Crashed),
        report,
        fail_on: options.fail_on.clone(),
        graph: Some(graph),
        suite_files,
        spec_fixes,
    };
    events.finish(&summary.report, summary.exit_status(), &options.out);
    Ok(summary)
}

/// Warns, on stderr and in the report, of the causes no replay reached.
fn warn_unreplayed(report: &mut Report, options: &RunOptions) {
    let unreplayed: Vec<&str> = report
        .causes
        .iter()
        .filter(|c| c.confirmation == crate::oracles::Confirmation::NotReplayed)
        .map(|c| c.id.as_str())
        .collect();
    if unreplayed.is_empty() {
        return;
    }
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

/// Writes report.html, junit.xml and report.sarif.
fn write_companions(
    report: &Report,
    graph: &crate::graph::export::GraphDocument,
    options: &RunOptions,
    secrets: &Secrets,
) -> anyhow::Result<()> {
    let graphs = std::slice::from_ref(graph);
    for w in reports::write_extras(&options.out, report, graphs, secrets).map_err(|e| {
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
    Ok(())
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

/// Writes `spec-fixes.overlay.yaml` (or removes a stale one) and returns
/// the line that says what it holds.
fn write_spec_fixes(
    seen: &reports::overlay::Seen<'_>,
    report: &Report,
    options: &RunOptions,
    secrets: &Secrets,
) -> anyhow::Result<String> {
    let extends = report
        .settings
        .spec
        .as_deref()
        .map(|s| reports::overlay::extends(s, &options.out));
    let fixes = reports::overlay::spec_fixes(seen, &report.causes, extends.as_deref(), secrets);
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
