//! The confirm phase as the run drives it: the report updated, the time
//! left of `--budget` handed down, and what the phase did said on stderr.
//! The phase itself, from entry to result, is `reproduce::phase`.

use std::time::Duration;

use super::link::Link;
use super::options::RunOptions;
use crate::execution::{OutDir, secrets::Secrets};
use crate::faults::Confirmation;
use crate::reports::Report;
use crate::reproduce::phase::{Later, Plan, Replays, Resets, Suite, SuiteOutcome};
use crate::reproduce::suite::SuiteLeftOut;
use crate::reproduce::{self, channel::Channel};

/// Where the replays' files go, and what they must not show.
#[derive(Clone, Copy)]
pub(crate) struct Files<'a> {
    /// The output folder.
    pub out: &'a OutDir,
    /// Secrets to redact from every file.
    pub secrets: &'a Secrets,
}

/// Runs the confirm phase ([`reproduce::phase::replay`]) through the run's
/// link within `left` of the budget: the faults' reproducers recorded on
/// `report`'s faults, the replays' requests on its search, and a line on
/// what was confirmed and proven.
pub(crate) async fn replay(
    replays: Replays,
    suite: Suite,
    report: &mut Report,
    link: &Link,
    left: Option<Duration>,
    Files { out, secrets }: Files<'_>,
    options: &RunOptions,
) -> anyhow::Result<SuiteOutcome> {
    let channel = link.channel(options, out, secrets, left)?;
    if !replays.faults.is_empty() {
        eprintln!(
            "cartograph: replaying {} fault(s) to confirm and shrink them, then the final suite (at most {:.0}s and {} requests; --no-replay skips this)",
            replays.faults.len(),
            channel.time.as_secs_f64(),
            channel.requests
        );
    }
    let plan = Plan {
        read_only: options.read_only,
        budget: options.budget,
        first_reset: link.first_reset,
        proofs: link.proofs,
        target: link.config.target.as_str().to_string(),
    };
    let credentials = link.suite_credentials();
    let files = reproduce::phase::Files {
        out,
        secrets,
        credentials: &credentials,
    };
    let done =
        reproduce::phase::replay(channel, replays, suite, &mut report.faults, &plan, files).await?;
    if let Some(search) = report.search.as_mut() {
        search.phases.insert("replay".into(), done.sent);
    }
    close(done.channel)?;
    say_confirmed(
        report,
        &done.suite,
        &done.left_out,
        link,
        options,
        done.later,
    );
    if let Some(w) = done.later.and_then(|l| l.warning()) {
        eprintln!("warning: {w}");
        report.warnings.push(w);
    }
    Ok(done.suite)
}

/// The line on what the replays confirmed and the suite they wrote; with
/// a reset, a second one on the resets and the budget proofs need.
fn say_confirmed(
    report: &Report,
    outcome: &SuiteOutcome,
    left_out: &SuiteLeftOut,
    link: &Link,
    options: &RunOptions,
    later: Option<Later>,
) {
    let n = outcome.files;
    let confirmed = report
        .faults
        .iter()
        .filter(|f| f.confirmation == Confirmation::Confirmed)
        .count();
    let dir = options.out.join("tests").display().to_string();
    let fresh = outcome.resets.is_some();
    let unproven = if outcome.unproven > 0 {
        format!(
            "; {} unproven on a fresh server, in {} (suite.json says why)",
            outcome.unproven,
            crate::model::text::one_line(
                &options
                    .out
                    .join(reproduce::files::UNPROVEN)
                    .display()
                    .to_string()
            )
        )
    } else {
        String::new()
    };
    let suite = if n == 0 && outcome.unproven == 0 {
        format!("no regression test: {}", left_out.explain())
    } else if n == 0 {
        format!("no regression test proven on a fresh server{unproven}")
    } else {
        // Each credential the files take is a `--secret` (suite.json says
        // what to give each).
        format!(
            "regression suite: {n} Hurl file(s){} in {} ({} {}/*.hurl){unproven}",
            if fresh {
                " proven on a fresh server (one reset, then every file in order)"
            } else {
                ""
            },
            crate::model::text::one_line(&dir),
            link.suite_command(),
            crate::model::text::shell_arg(&dir)
        )
    };
    let proven = if options.reset.is_some() {
        let with = |fresh| {
            report
                .faults
                .iter()
                .filter(|f| f.reproducer.as_ref().and_then(|r| r.fresh) == Some(fresh))
                .count()
        };
        let unrun = report
            .faults
            .iter()
            .filter(|f| f.reproducer.as_ref().is_some_and(|r| r.fresh.is_none()))
            .count();
        format!(
            " ({} proven on a fresh server after a reset: {} did not show there, {} could not run there, {unrun} not run there for lack of time)",
            with(crate::faults::Fresh::Shows),
            with(crate::faults::Fresh::DoesNotShow),
            with(crate::faults::Fresh::CannotRun)
        )
    } else {
        String::new()
    };
    // Said only when the order left faults unreplayed.
    let first = later
        .filter(|l| l.replayed < l.faults)
        .map_or(String::new(), |l| {
            format!(
                " (each cause's first fault went first: confirmed, then proven after a reset while the time for proofs lasted; {} of the {} other(s) were not replayed in the time left)",
                l.faults - l.replayed,
                l.faults
            )
        });
    eprintln!(
        "cartograph: {confirmed} of {} fault(s) confirmed{first}, reproducers in {}{proven}; {suite}",
        report.faults.len(),
        options.out.join("reproducers").display(),
    );
    if let Some(r) = &outcome.resets {
        eprintln!("cartograph: {}", resets_line(r));
    }
}

/// What the resets cost, and what budget would have proven everything.
pub(crate) fn resets_line(r: &Resets) -> String {
    let budget = match r.budget {
        None => "every reproducer and suite file was run on a fresh server".to_string(),
        Some(Some(b)) => format!(
            "--budget {}s would have run every reproducer and the whole suite on a fresh server",
            b.as_secs()
        ),
        Some(None) => format!(
            "no --budget gives the proofs the time to run every reproducer on a fresh server (they get at most {} times the first reset, and a third of the budget): --include fewer operations, or a faster --reset-command",
            reproduce::channel::PROOF_RESETS
        ),
    };
    format!(
        "{} reset(s) of the target ({} during the replays), typical {:.1}s, slowest {:.1}s; {budget}",
        r.times.len(),
        r.times.len().saturating_sub(1),
        r.typical.as_secs_f64(),
        r.slowest.as_secs_f64(),
    )
}

/// Finishes `replay.ndjson`, warning when a write to it failed.
fn close(channel: Channel) -> anyhow::Result<()> {
    let counts = channel.trace.finish()?;
    if let Some(note) =
        super::outputs::trace_note("replay.ndjson", counts, channel.config.trace_limit)
    {
        eprintln!("cartograph: {note}");
    }
    if let Some(e) = &channel.trace_error {
        eprintln!("warning: replay.ndjson is incomplete: {e}");
    }
    Ok(())
}
