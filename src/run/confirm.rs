//! The confirm phase, after the search, as the run drives it (the report
//! updated, the time left of `--budget` handed down): each fault's witness
//! is replayed to confirm it, shrunk, and written as a reproducer; then the
//! archive's tests are recorded again as the Hurl regression suite (how,
//! step by step, is `reproduce::phase`). Half of the phase's
//! allowance is kept for the suite, so that shrinking many faults cannot
//! leave it nothing; `--budget` bounds the phase with the rest of the run.

use std::sync::Arc;
use std::time::Duration;

use super::options::RunOptions;
use crate::execution::{Credentials, Politeness, RunConfig, TestRun, Transport, secrets::Secrets};
use crate::model::Api;
use crate::oracles::{Checker, Confirmation, witness::Ledger};
use crate::reports::Report;
use crate::reproduce::phase::{Channel, Fate, SuiteLeftOut};
use crate::reproduce::{self, Script};

/// How the phase reaches the target: the run's settings, credentials and
/// politeness (one rate for the whole run), and the time left of `--budget`.
pub struct Link {
    /// The run's engine settings (budget and caps are replaced).
    pub config: RunConfig,
    /// The run's transport.
    pub transport: Transport,
    /// Credentials, as in the search.
    pub credentials: Credentials,
    /// The run's politeness.
    pub politeness: Arc<Politeness>,
    /// Time left of `--budget`, when there is one.
    pub left: Option<Duration>,
}

impl Link {
    /// A channel for the phase, recording to `replay.ndjson`: its allowance
    /// (a fifth of `--budget`, at most 30 s, and a third of
    /// `--max-requests`), within what is left of the budget.
    pub fn open(self, options: &RunOptions, secrets: &Secrets) -> anyhow::Result<Channel> {
        let (time, requests) = reproduce::phase::allowance(options.budget, options.max_requests);
        let time = self.left.map_or(time, |left| time.min(left));
        Channel::open(
            self.config,
            self.transport,
            self.credentials,
            self.politeness,
            &options.out,
            secrets,
            (time, requests),
        )
    }
}

/// What the phase replays.
pub struct Replays {
    /// Per fault, the scripts to try, best first.
    pub faults: Vec<Vec<Script>>,
    /// The archive's tests, ready to run again, with their titles (those
    /// calling a slow operation last).
    pub suite: Vec<(Box<dyn TestRun>, String)>,
    /// The operations the search found slow.
    pub slow: Vec<String>,
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

/// Confirms, shrinks and writes the faults' reproducers (recorded on
/// `report`'s faults), then records and writes the regression suite.
#[allow(clippy::too_many_arguments)]
pub async fn replay(
    api: Arc<Api>,
    checker: Checker,
    ledger: &mut Ledger,
    replays: Replays,
    report: &mut Report,
    link: Link,
    options: &RunOptions,
    secrets: &Secrets,
) -> anyhow::Result<SuiteOutcome> {
    let target = link.config.target.clone();
    let mut channel = link.open(options, secrets)?;
    if !replays.faults.is_empty() {
        eprintln!(
            "cartograph: replaying {} fault(s) to confirm and shrink them, then the final suite (at most {:.0}s and {} requests; --no-replay skips this)",
            replays.faults.len(),
            channel.time.as_secs_f64(),
            channel.requests
        );
    }
    let (suite_time, suite_requests) = (channel.time / 2, channel.requests / 2);
    channel.time -= suite_time;
    channel.requests -= suite_requests;
    confirm_faults(
        &api,
        &checker,
        replays.faults,
        &replays.slow,
        report,
        &mut channel,
        options,
        secrets,
    )
    .await?;
    channel.time += suite_time;
    channel.requests += suite_requests;
    // What the replays created and changed, after the search's own history.
    for (i, mut e) in std::mem::take(&mut channel.seen).into_iter().enumerate() {
        e.seq = u64::MAX / 4 + i as u64;
        ledger.note(&e);
    }
    let mut left_out = SuiteLeftOut {
        archived: replays.suite.len(),
        ..SuiteLeftOut::default()
    };
    let (runs, titles): (Vec<_>, Vec<_>) = replays.suite.into_iter().unzip();
    let recorded = reproduce::phase::record(runs, &mut channel).await?;
    let location = |l: &str| checker.location_path(l);
    let scripts = reproduce::suite::scripts(
        &api,
        target.as_str(),
        recorded,
        titles,
        ledger,
        &location,
        &mut left_out,
    );
    let scripts = reproduce::phase::settle(scripts, &checker, &mut channel, &mut left_out).await?;
    let written = reproduce::phase::write_suite(&options.out, scripts, secrets)?;
    channel.trace.finish()?;
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
    let n = written.files;
    let confirmed = report
        .faults
        .iter()
        .filter(|f| f.confirmation == Confirmation::Confirmed)
        .count();
    let suite = if n == 0 {
        format!("no regression test: {}", left_out.explain())
    } else {
        format!(
            "regression suite: {n} Hurl file(s) in {} (hurl --test --jobs 1 --variable base={} {}/*.hurl)",
            options.out.join("tests").display(),
            target.as_str().trim_end_matches('/'),
            options.out.join("tests").display()
        )
    };
    eprintln!(
        "cartograph: {confirmed} of {} fault(s) confirmed, reproducers in {}; {suite}",
        report.faults.len(),
        options.out.join("reproducers").display(),
    );
    Ok(SuiteOutcome { files: n, fates })
}

/// Confirms and shrinks each fault through `channel` and writes the
/// reproducers, recording on `report`'s faults what each replay showed;
/// faults calling a `slow` operation come last, unshrunk.
#[allow(clippy::too_many_arguments)]
pub async fn confirm_faults(
    api: &Arc<Api>,
    checker: &Checker,
    faults: Vec<Vec<Script>>,
    slow: &[String],
    report: &mut Report,
    channel: &mut Channel,
    options: &RunOptions,
    secrets: &Secrets,
) -> anyhow::Result<()> {
    let outcomes = reproduce::phase::confirm(
        api.clone(),
        checker.clone(),
        faults,
        options.read_only,
        slow,
        channel,
    )
    .await?;
    reproduce::phase::attach_reproducers(&mut report.faults, &options.out, &outcomes, secrets)
}
