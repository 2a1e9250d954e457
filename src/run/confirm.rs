//! The confirm phase, after the search, as the run drives it (the report
//! updated, the time left of `--budget` handed down): each fault's witness
//! is replayed to confirm it, shrunk, and written as a reproducer; then the
//! archive's tests are recorded again as the Hurl regression suite (how,
//! step by step, is `reproduce::phase`). Half of the phase's
//! allowance is kept for the suite, so that shrinking many faults cannot
//! leave it nothing; `--budget` bounds the phase with the rest of the run.

use std::sync::Arc;
use std::time::Duration;

use super::link::Link;
use super::options::RunOptions;
use crate::execution::{OutDir, TestRun, secrets::Secrets};
use crate::model::Api;
use crate::oracles::{Checker, Confirmation, echoes::Echoes, witness::Ledger};
use crate::reports::Report;
use crate::reproduce::phase::{Channel, Fate, SuiteLeftOut, SuiteScript};
use crate::reproduce::{self, Script};

/// What the phase replays, and what judges the replays.
pub struct Replays {
    /// The API tested.
    pub api: Arc<Api>,
    /// The run's oracles.
    pub checker: Checker,
    /// What the run made and changed on the server, as the suite's scripts
    /// name it.
    pub ledger: Ledger,
    /// What the run's accepted wrong inputs planted, and when requests
    /// worked and crashed: a suite test that crashes only after them is
    /// left out.
    pub echoes: Echoes,
    /// Per fault, the scripts to try, best first.
    pub faults: Vec<Vec<Script>>,
    /// The operations the search found slow.
    pub slow: Vec<String>,
}

/// Where the regression suite's tests come from.
pub enum Suite {
    /// The archive's tests, ready to run again and be recorded, with their
    /// titles (those calling a slow operation last).
    Rerun(Vec<(Box<dyn TestRun>, String)>),
    /// Tests recorded already, written as they are (a log's requests, each
    /// sent once in the search).
    Recorded(Vec<SuiteScript>),
}

/// What became of the archive's tests.
#[derive(Debug, Clone, Default)]
pub struct SuiteOutcome {
    /// Hurl files written.
    pub files: usize,
    /// Per archived test, in the archive's order: its file, or why it was
    /// left out.
    pub fates: Vec<Fate>,
}

/// Where the replays' files go, and what they must not show.
#[derive(Clone, Copy)]
pub struct Files<'a> {
    /// The output folder.
    pub out: &'a OutDir,
    /// Secrets to redact from every file.
    pub secrets: &'a Secrets,
}

/// Confirms, shrinks and writes the faults' reproducers (recorded on
/// `report`'s faults), then writes the regression suite: `suite`'s tests
/// recorded again, or as they were.
pub async fn replay(
    mut replays: Replays,
    suite: Suite,
    report: &mut Report,
    link: &Link,
    left: Option<Duration>,
    Files { out, secrets }: Files<'_>,
    options: &RunOptions,
) -> anyhow::Result<SuiteOutcome> {
    let mut channel = link.channel(options, out, secrets, left)?;
    let allowance = channel.requests;
    if !replays.faults.is_empty() {
        eprintln!(
            "cartograph: replaying {} fault(s) to confirm and shrink them, then the final suite (at most {:.0}s and {} requests; --no-replay skips this)",
            replays.faults.len(),
            channel.time.as_secs_f64(),
            channel.requests
        );
    }
    let (scripts, mut left_out) = match suite {
        Suite::Recorded(scripts) => {
            confirm_faults(&mut replays, report, &mut channel, out, options, secrets).await?;
            (scripts, SuiteLeftOut::default())
        }
        Suite::Rerun(runs) => {
            // Half of the allowance is kept for the suite, so that shrinking
            // many faults cannot leave it nothing.
            let (suite_time, suite_requests) = (channel.time / 2, channel.requests / 2);
            channel.time -= suite_time;
            channel.requests -= suite_requests;
            confirm_faults(&mut replays, report, &mut channel, out, options, secrets).await?;
            channel.grant(suite_time, suite_requests);
            rerun(replays, runs, &mut channel, link).await?
        }
    };
    if let Some(search) = report.search.as_mut() {
        let sent = allowance.saturating_sub(channel.requests);
        search.phases.insert("replay".into(), sent);
    }
    let written = reproduce::phase::write_suite(out, scripts, &link.suite_credentials(), secrets)?;
    close(channel)?;
    let mut fates = vec![Fate::LeftOut(String::new()); left_out.archived];
    for (k, why) in std::mem::take(&mut left_out.reasons) {
        if let Some(f) = fates.get_mut(k) {
            *f = Fate::LeftOut(why);
        }
    }
    for (k, file) in written.tests {
        if let Some(f) = fates.get_mut(k) {
            *f = Fate::Written(file);
        }
    }
    let outcome = SuiteOutcome {
        files: written.files,
        fates,
    };
    say_confirmed(report, &outcome, &left_out, link, options);
    Ok(outcome)
}

/// Runs the archive's tests again through `channel` and records them as
/// the suite's scripts, with why the others were left out.
async fn rerun(
    replays: Replays,
    runs: Vec<(Box<dyn TestRun>, String)>,
    channel: &mut Channel,
    link: &Link,
) -> anyhow::Result<(Vec<SuiteScript>, SuiteLeftOut)> {
    let Replays {
        api,
        checker,
        mut ledger,
        echoes,
        ..
    } = replays;
    // What the replays created and changed, after the search's own history.
    for (i, mut e) in std::mem::take(&mut channel.seen).into_iter().enumerate() {
        e.seq = u64::MAX / 4 + i as u64;
        ledger.note(&e);
    }
    let mut left_out = SuiteLeftOut {
        archived: runs.len(),
        ..SuiteLeftOut::default()
    };
    let (runs, titles): (Vec<_>, Vec<_>) = runs.into_iter().unzip();
    // On the run's state, where what they name exists: completed with
    // what made it, each then proves itself after a reset (`settle`).
    let recorded = reproduce::phase::record(runs, channel).await;
    let scripts = reproduce::suite::scripts(
        &api,
        link.config.target.as_str(),
        recorded,
        titles,
        &mut ledger,
        &checker,
        &mut left_out,
    );
    let scripts =
        reproduce::phase::settle(scripts, &api, &checker, &echoes, channel, &mut left_out).await?;
    Ok((scripts, left_out))
}

/// The line on what the replays confirmed and the suite they wrote.
fn say_confirmed(
    report: &Report,
    outcome: &SuiteOutcome,
    left_out: &SuiteLeftOut,
    link: &Link,
    options: &RunOptions,
) {
    let n = outcome.files;
    let confirmed = report
        .faults
        .iter()
        .filter(|f| f.confirmation == Confirmation::Confirmed)
        .count();
    let suite = if n == 0 {
        format!("no regression test: {}", left_out.explain())
    } else {
        let dir = options.out.join("tests").display().to_string();
        // Each credential the files take is a `--secret` (suite.json says
        // what to give each).
        format!(
            "regression suite: {n} Hurl file(s) in {} ({} {}/*.hurl)",
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
        format!(
            " ({} proven on a fresh server after the reset: {} did not show there, {} could not run there)",
            with(crate::oracles::Fresh::Shows),
            with(crate::oracles::Fresh::DoesNotShow),
            with(crate::oracles::Fresh::CannotRun)
        )
    } else {
        String::new()
    };
    eprintln!(
        "cartograph: {confirmed} of {} fault(s) confirmed, reproducers in {}{proven}; {suite}",
        report.faults.len(),
        options.out.join("reproducers").display(),
    );
}

/// Confirms and shrinks each fault through `channel` and writes the
/// reproducers, recording on `report`'s faults what each replay showed;
/// faults calling a `slow` operation come last, unshrunk.
async fn confirm_faults(
    replays: &mut Replays,
    report: &mut Report,
    channel: &mut Channel,
    out: &OutDir,
    options: &RunOptions,
    secrets: &Secrets,
) -> anyhow::Result<()> {
    let outcomes = reproduce::phase::confirm(
        replays.api.clone(),
        replays.checker.clone(),
        std::mem::take(&mut replays.faults),
        options.read_only,
        &replays.slow,
        channel,
    )
    .await?;
    reproduce::phase::attach_reproducers(&mut report.faults, out, &outcomes, secrets)?;
    Ok(())
}

/// Finishes `replay.ndjson`, warning when a write to it failed.
fn close(channel: Channel) -> anyhow::Result<()> {
    let counts = channel.trace.finish()?;
    if let Some(note) = counts.note("replay.ndjson", channel.config.trace_limit) {
        eprintln!("cartograph: {note}");
    }
    if let Some(e) = &channel.trace_error {
        eprintln!("warning: replay.ndjson is incomplete: {e}");
    }
    Ok(())
}
