//! The one pipeline every run goes through, whatever its tests come from:
//! the engine drives the source's tests against the target (the search
//! phase), the source says what it found, the faults are replayed,
//! confirmed and shrunk and the suite recorded (the replay phase), and the
//! report and its companions are written.

use std::sync::Arc;

use crate::oracles::registry::Code;
use std::time::Instant;

use super::confirm;
use super::link::Link;
use super::options::RunOptions;
use super::source::{Collected, Ended, Source};
use super::{RunSummary, RuntimeFailure, Session, search, write_suite_document};
use crate::execution::{OutDir, StopReason, secrets::Secrets};
use crate::model::Api;
use crate::model::text::one_line;
use crate::reports::{self, Report, events::Phase};
use crate::reproduce::phase::Suite;

/// Drives `source`'s tests against the session's target, then replays
/// their faults and records the suite, and writes the output folder.
pub(crate) async fn drive<S: Source>(
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
        out,
    } = session;
    let started = Instant::now();
    // From here on a signal ends the phase under way, and what was gathered
    // is written.
    crate::execution::interrupt::watch();
    let mut config = options.run_config(&api, &target, seed);
    source.configure(&mut config);
    let mut link = Link::new(&api, config, credentials)?;
    if let Some(reset) = &options.reset {
        // The search starts from the start state too (a seed then repeats
        // the run), and a reset that fails says so before the search, not
        // after it.
        eprintln!(
            "cartograph: resetting the target ({})",
            one_line(&secrets.redact(&reset.describe()))
        );
        let began = Instant::now();
        reset.run().await.map_err(|e| {
            RuntimeFailure::error(
                "the target could not be reset before the search",
                one_line(&secrets.redact(&e.to_string())),
            )
        })?;
        // The budget pays for this reset, and for the proofs after it:
        // each reproducer and the suite are proven after a reset of their
        // own, which the replays' share alone could not pay for on a real
        // service (a 90 s run against one resetting in 3-10 s proved none).
        let took = began.elapsed();
        link.first_reset = Some(took);
        if let (Some(budget), false) = (options.budget, options.no_replay) {
            link.proofs = crate::reproduce::channel::proof_reserve(budget, took);
            link.config.budget = link
                .config
                .budget
                .map(|b| b.saturating_sub(took + link.proofs));
            // A reset too quick to cost the search a second says nothing
            // worth a line (the demo's own); a slow one tells why the search
            // is shorter than --budget.
            if link.proofs >= std::time::Duration::from_secs(1) {
                eprintln!(
                    "cartograph: the reset took {:.1}s; the search keeps {:.0}s of the budget for running reproducers and the suite after resets",
                    took.as_secs_f64(),
                    link.proofs.as_secs_f64()
                );
            }
        }
    }
    let found = source.found(events.enabled());
    let (mut outcome, bases) = search::search(
        source.driver(),
        found,
        &link,
        &secrets,
        &mut tally,
        &out,
        &events,
    )
    .await
    .map_err(|e| RuntimeFailure::error("the search could not go on", format!("{e:#}")))?;
    // The engine stopped for a server-wide limit: replays would only be
    // refused the same way.
    let server_wide_limit = outcome.stop == StopReason::RateLimited;
    let rate_warning = outcome.rate_limit_warning();
    // An operation the server asked to wait on past the budget, and that
    // answered nothing else, was never tested: the run did not do all its
    // work, whatever else ended it. One that was tested before is only
    // warned of (Prefect: one operation of 188, set aside in the run's
    // last second, made the whole run exit 4).
    if rate_warning.is_some()
        && matches!(
            outcome.stop,
            StopReason::Budget | StopReason::MaxRequests | StopReason::Exhausted
        )
        && outcome
            .rate_limited
            .iter()
            .any(|(op, _)| !tally.answered_beyond_waits(op))
    {
        outcome.stop = StopReason::RateLimited;
    }
    for w in tally.diagnose() {
        eprintln!("warning: {}", one_line(&secrets.redact(&w)));
    }
    // A run that sent nothing, or read none of its answers, tested nothing:
    // no pass (a failed auth command, no connection and an interrupt say
    // so themselves).
    let untested = if outcome.auth_error.is_some()
        || outcome.unreachable.is_some()
        || outcome.stop == StopReason::Interrupted
    {
        None
    } else if outcome.requests == 0 {
        Some(nothing_sent(&outcome, options))
    } else {
        tally.unreadable()
    };
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
        out: &out,
        secrets: &secrets,
        tally,
        settings,
        until: options.budget.map(|b| started + b),
    })?;
    if let Some(why) = &untested {
        eprintln!("error: {}", one_line(&secrets.redact(why)));
        report.warnings.push(why.clone());
    }
    if untested.is_some() {
        // Nothing was tested: the 404s say where the requests went (a wrong
        // base URL), not what the API does: no cause, and nothing for the
        // overlay to document.
        report.faults.retain(|f| {
            !(f.code == Code::UndocumentedStatus && matches!(f.status, Some(404 | 405)))
        });
        report.group_causes();
    }
    if let Some(w) = rate_warning {
        eprintln!("warning: {w}");
        report.warnings.push(w);
    }
    let replays_allowed = !options.no_replay
        && outcome.auth_error.is_none()
        && outcome.unreachable.is_none()
        && !server_wide_limit
        && untested.is_none()
        && crate::execution::interrupt::received().is_none();
    // The security probes come after the replays and the suite: they change
    // the server's state (a marked record, a DELETE no one documented),
    // which must not change what the replays of the search's faults meet.
    let probes_allowed = !api.format.is_graphql()
        && outcome.auth_error.is_none()
        && outcome.unreachable.is_none()
        && !server_wide_limit
        && untested.is_none()
        && crate::execution::interrupt::received().is_none();
    let checker = replays.checker.clone();
    let suite_files = if replays_allowed {
        // What is left of --budget, which bounds the whole run, but for the
        // probes' share: the suite would otherwise take it all.
        let left = options.budget.map(|b| {
            let left = b.saturating_sub(started.elapsed());
            if probes_allowed {
                left - probe_reserve(left)
            } else {
                left
            }
        });
        let phase = events.phase_started(Phase::Replay);
        let done = confirm::replay(
            replays,
            suite,
            &mut report,
            &link,
            left,
            confirm::Files {
                out: &out,
                secrets: &secrets,
            },
            options,
        )
        .await
        .map_err(|e| RuntimeFailure::error("the replays could not go on", format!("{e:#}")))?;
        events.phase_finished(Phase::Replay, phase);
        if let Some(doc) = &mut suite_doc {
            annotate_suite(doc, &done);
            how_to_run(doc, &link);
            let names: Vec<String> = link
                .suite_credentials()
                .variables()
                .into_iter()
                .map(|(v, _)| v)
                .collect();
            write_suite_document(&out, doc, &secrets, &names)?;
        }
        Some(done.files)
    } else if let Suite::Recorded(scripts) = suite {
        // Recorded already: the suite needs no replay to be written.
        let credentials = link.suite_credentials();
        Some(crate::reproduce::files::write_suite(&out, scripts, &credentials, &secrets)?.files)
    } else {
        None
    };
    if probes_allowed && crate::execution::interrupt::received().is_none() {
        probe_security(
            &api,
            &bases,
            &link,
            &mut report,
            options,
            started,
            (&out, &secrets),
        )
        .await?;
    }
    report.group_causes();
    let interrupted = crate::execution::interrupt::received();
    if replays_allowed && interrupted.is_none() {
        warn_unreplayed(&mut report, options);
    }
    if let Some(signal) = interrupted {
        let w = format!(
            "the run was interrupted ({}) {}: the report holds what was tested before; faults not replayed are unconfirmed",
            signal.name(),
            if outcome.stop == StopReason::Interrupted {
                "during the search"
            } else {
                "after the search"
            }
        );
        eprintln!("warning: {w}");
        report.warnings.push(w);
        report.stop = "interrupted".to_string();
    }
    reports::write_report(&out, &report, &secrets).map_err(|e| {
        RuntimeFailure::error(
            format!("cannot write {}", out.path("report.json").display()),
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
        .then(|| write_spec_fixes(&seen, &report, &out, &secrets))
        .transpose()?;
    write_companions(&report, &graph, &out, &secrets)?;
    if let Some(line) = report.search.as_ref().and_then(speed_line) {
        eprintln!("{line}");
    }
    eprintln!("{}", summary_line(&report, options));
    if let Some(line) = &spec_fixes {
        eprintln!("{line}");
    }
    if options.part.is_none() {
        for line in cause_lines(&report, CAUSES_SHOWN) {
            eprintln!("{}", secrets.redact(&line));
        }
    }
    let summary = RunSummary {
        unreachable: outcome.unreachable.is_some(),
        // The server asked to wait past the budget's end, the search failed
        // inside, the auth command failed, or nothing was tested.
        incomplete: matches!(outcome.stop, StopReason::RateLimited | StopReason::Crashed)
            || outcome.auth_error.is_some()
            || untested.is_some(),
        interrupted,
        report,
        fail_on: options.fail_on.clone(),
        graph: Some(graph),
        suite_files,
        spec_fixes,
    };
    if options.part.is_none() {
        events.finish(&summary.report, summary.exit_status(), &options.out);
    }
    Ok(summary)
}

/// The share of what is left of `--budget` after the search that the
/// replays leave to the security probes: a fifth, at least a second (or
/// half, when less than two are left), at most 5 s (on a local server they
/// need well under a second).
fn probe_reserve(left: std::time::Duration) -> std::time::Duration {
    let second = std::time::Duration::from_secs(1);
    (left / 5).clamp((left / 2).min(second), 5 * second)
}

/// Sends the security probes (within what is left of `--budget`, and a
/// fifth of `--max-requests`) and adds their faults to `report`.
async fn probe_security(
    api: &Api,
    bases: &super::security::Bases,
    link: &Link,
    report: &mut Report,
    options: &RunOptions,
    started: Instant,
    (out, secrets): (&OutDir, &Secrets),
) -> anyhow::Result<()> {
    use super::security::{MAX_REQUESTS, MAX_TIME, probe};
    // What is left of --budget, which bounds the whole run.
    let time = options.budget.map_or(MAX_TIME, |b| {
        b.saturating_sub(started.elapsed()).min(MAX_TIME)
    });
    if time.is_zero() {
        let w = "the security probes were not sent: the budget was spent (a longer --budget leaves them time)".to_string();
        eprintln!("warning: {w}");
        report.warnings.push(w);
        return Ok(());
    }
    let requests = options
        .max_requests
        .map_or(MAX_REQUESTS, |n| (n / 5).clamp(20, MAX_REQUESTS));
    let probed = probe(
        api,
        bases,
        link,
        out,
        secrets,
        &options.skip_checks,
        (time, requests),
    )
    .await
    .map_err(|e| RuntimeFailure::error("the security probes could not go on", format!("{e:#}")))?;
    for w in probed.warnings {
        eprintln!("warning: {}", one_line(&secrets.redact(&w)));
        report.warnings.push(w);
    }
    if probed.requests > 0 {
        eprintln!(
            "cartograph: security probes: {} request(s), {} finding(s) (security.ndjson)",
            probed.requests,
            probed.faults.len()
        );
    }
    if let Some(search) = report.search.as_mut() {
        search.phases.insert("security".into(), probed.requests);
    }
    report.faults.extend(probed.faults);
    Ok(())
}

/// Why a run sent no request, in words that name the setting to change.
fn nothing_sent(outcome: &crate::execution::RunOutcome, options: &RunOptions) -> String {
    let why = match outcome.stop {
        StopReason::Budget => format!(
            "the budget ended before the first request (--budget {})",
            options
                .budget
                .map_or_else(String::new, |b| humantime::format_duration(b).to_string())
        ),
        StopReason::MaxRequests => "--max-requests 0 lets no request out".to_string(),
        _ if outcome.refused > 0 && outcome.fenced == 0 => format!(
            "--read-only refused all {} request(s) the tests asked for (each changes state)",
            outcome.refused
        ),
        _ if outcome.fenced > 0 => format!(
            "--include/--exclude left out all {} request(s) the tests asked for",
            outcome.refused + outcome.fenced
        ),
        _ => "the tests asked for no request".to_string(),
    };
    format!("nothing was sent, so nothing was tested: {why}")
}

/// Warns, on stderr and in the report, of the causes no replay reached.
fn warn_unreplayed(report: &mut Report, options: &RunOptions) {
    let unreplayed: Vec<&str> = report
        .causes
        .iter()
        .filter(|c| c.confirmation == crate::faults::Confirmation::NotReplayed)
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
    out: &OutDir,
    secrets: &Secrets,
) -> anyhow::Result<()> {
    let graphs = std::slice::from_ref(graph);
    for w in reports::write_extras(out, report, graphs, secrets).map_err(|e| {
        RuntimeFailure::error(
            format!(
                "cannot write report.html, junit.xml or report.sarif in {}",
                out.root().display()
            ),
            e,
        )
    })? {
        eprintln!("warning: {}", one_line(&secrets.redact(&w)));
    }
    Ok(())
}

/// Records in `suite.json` how to run the regression suite (`run`): the
/// command, and each credential a file takes as a variable with what to
/// give it (never its value).
fn how_to_run(doc: &mut serde_json::Value, link: &Link) {
    let Some(doc) = doc.as_object_mut() else {
        return;
    };
    let variables: serde_json::Map<String, serde_json::Value> = link
        .suite_credentials()
        .variables()
        .into_iter()
        .map(|(var, what)| (var, what.into()))
        .collect();
    doc.insert(
        "run".into(),
        serde_json::json!({
            "command": format!("{} tests/*.hurl", link.suite_command()),
            "credentials": variables,
        }),
    );
}

/// Records on each test of `suite.json` its Hurl file (`hurl`) or why it
/// was left out of the regression suite (`left_out`).
fn annotate_suite(doc: &mut serde_json::Value, done: &crate::reproduce::phase::SuiteOutcome) {
    if let (Some(r), Some(doc)) = (&done.resets, doc.as_object_mut()) {
        doc.insert(
            "fresh".into(),
            serde_json::json!({
                "proven_files": done.files,
                "unproven_files": done.unproven,
                "resets_s": r.times.iter().map(|t| (t.as_secs_f64() * 10.0).round() / 10.0).collect::<Vec<_>>(),
                "summary": confirm::resets_line(r),
            }),
        );
    }
    let fresh = done.resets.is_some();
    let fates = &done.fates;
    let Some(tests) = doc.get_mut("tests").and_then(|t| t.as_array_mut()) else {
        return;
    };
    for (test, fate) in tests.iter_mut().zip(fates) {
        let Some(test) = test.as_object_mut() else {
            continue;
        };
        match fate {
            crate::reproduce::suite::Fate::Written(file) => {
                if fresh {
                    test.insert("proven".into(), true.into());
                }
                test.insert("hurl".into(), file.clone().into())
            }
            crate::reproduce::suite::Fate::Unproven(file, why) => {
                test.insert("proven".into(), false.into());
                test.insert("unproven".into(), why.clone().into());
                test.insert("hurl".into(), file.clone().into())
            }
            crate::reproduce::suite::Fate::LeftOut(why) => {
                test.insert("left_out".into(), why.clone().into())
            }
        };
    }
}

/// Writes `spec-fixes.overlay.yaml` (when it has anything to hold) and
/// returns the line that says what it holds.
fn write_spec_fixes(
    seen: &reports::overlay::Seen<'_>,
    report: &Report,
    out: &OutDir,
    secrets: &Secrets,
) -> anyhow::Result<String> {
    let extends = report
        .settings
        .spec
        .as_deref()
        .map(|s| reports::overlay::extends(s, out.root()));
    let fixes = reports::overlay::spec_fixes(seen, &report.causes, extends.as_deref(), secrets);
    let written = reports::overlay::write(out, &fixes, secrets).map_err(|e| {
        RuntimeFailure::error(
            format!(
                "cannot write {}",
                out.path(reports::overlay::FILE).display()
            ),
            e,
        )
    })?;
    Ok(fixes.summary(written.as_deref()))
}

/// How fast the server answered, and how far the edge pass got: on a slow
/// server the budget holds only so many requests, and a person should know
/// whether every input had its edge values.
fn speed_line(search: &crate::generation::SearchSummary) -> Option<String> {
    let edge = search.phases.get("edge_pass").copied().unwrap_or(0);
    if search.edge_classes.is_empty() {
        return None;
    }
    let how_far = if search.edge_pass_complete {
        "every input had one value of each class".to_string()
    } else {
        let mut classes: Vec<_> = search.edge_classes.iter().collect();
        classes.sort_by_key(|(_, t)| std::cmp::Reverse((t.operations_broken.len(), t.requests)));
        format!(
            "it ended at its share of the budget; classes tried, most productive first: {}",
            classes
                .iter()
                .map(|(class, t)| {
                    format!(
                        "{class} on {} input(s), {} operation(s) broken",
                        t.inputs.len(),
                        t.operations_broken.len()
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Some(format!(
        "cartograph: the server answered {:.0} requests a second; the edge pass (integers past 64 bits, bodies of the wrong shape, …) sent {edge} request(s): {how_far}",
        search.answer_rate.search
    ))
}

/// Causes listed on the terminal at the end of a run; the rest are in the
/// report.
const CAUSES_SHOWN: usize = 20;

/// The run's causes for the terminal, defects first as the report orders
/// them, at most `shown` of them and a line on the rest: a person reads
/// what was found without opening a file.
fn cause_lines(report: &Report, shown: usize) -> Vec<String> {
    let mut lines: Vec<String> = report
        .causes
        .iter()
        .take(shown)
        .map(|c| {
            format!(
                "  {}",
                crate::model::text::one_line(&crate::faults::causes::line(c))
            )
        })
        .collect();
    if report.causes.len() > shown {
        lines.push(format!(
            "  … and {} more cause(s) in report.html and report.json",
            report.causes.len() - shown
        ));
    }
    lines
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
        crate::faults::causes::summary(&report.causes, report.faults.len()),
        options.out.display()
    )
}
