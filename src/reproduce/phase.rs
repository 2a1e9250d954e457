//! The phase after the search, from entry to result: each fault's witness
//! is replayed to confirm it ([`confirm`]), the archive's
//! tests are recorded again as the regression suite
//! ([`suite`](super::suite)), both are proven on a fresh server when the run
//! has a reset, and everything is written ([`files`]), all
//! through one [`Channel`]. The run hands it what
//! to replay and gets back what became of it, for its report.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use super::channel::{Channel, budget_for, record};
use super::confirm::{self, Confirmed};
use super::files;
use super::suite::{Fate, SuiteLeftOut, SuiteScript};
use super::{Script, WriteError, hurl};
use crate::execution::reset::ResetError;
use crate::execution::{OutDir, TestRun, secrets::Secrets};
use crate::faults::{Confirmation, Fault, witness::Ledger};
use crate::model::Api;
use crate::oracles::{Checker, echoes::Echoes};

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
    /// How many of `faults`, from the first, are their causes'
    /// representatives: with a reset, only they are confirmed before the
    /// proofs, and the others with the time the proofs leave.
    pub first: usize,
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

/// What the run tells the phase beyond its channel.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// `--read-only`: only scripts that read are replayed.
    pub read_only: bool,
    /// The run's `--budget`.
    pub budget: Option<Duration>,
    /// How long the reset before the search took, with `--reset-command`.
    pub first_reset: Option<Duration>,
    /// Time the search left for proofs after resets, beyond the phase's
    /// share: kept from the work on the run's state.
    pub proofs: Duration,
    /// The operations' base URL, as the suite's scripts name it.
    pub target: String,
}

/// Where the phase's files go, what they must not show, and the
/// credentials the suite's files take as variables.
#[derive(Clone, Copy)]
pub struct Files<'a> {
    /// The output folder.
    pub out: &'a OutDir,
    /// Secrets to redact from every file.
    pub secrets: &'a Secrets,
    /// The credentials, by name (their values stay out of every file).
    pub credentials: &'a hurl::Credentials,
}

/// What became of the archive's tests.
#[derive(Debug, Clone, Default)]
pub struct SuiteOutcome {
    /// Hurl files written in `tests/` (with a reset: proven on a fresh
    /// server, one after another after one reset).
    pub files: usize,
    /// Hurl files written in `tests/unproven/`: no run on a fresh server
    /// proved them.
    pub unproven: usize,
    /// The resets of a run with `--reset-command`.
    pub resets: Option<Resets>,
    /// Per archived test, in the archive's order: its file, or why it was
    /// left out.
    pub fates: Vec<Fate>,
}

/// Resets made in a run with `--reset-command`, for its summary.
#[derive(Debug, Clone, Default)]
pub struct Resets {
    /// Each reset's time, in order (the one before the search first).
    pub times: Vec<Duration>,
    /// Their median.
    pub typical: Duration,
    /// The slowest.
    pub slowest: Duration,
    /// The `--budget` that would have proven every reproducer and suite
    /// file (`Some(None)`: none would; `None`: all were proven).
    pub budget: Option<Option<Duration>>,
}

/// What became of the faults beyond their causes' first, which a run with
/// a reset confirms only after the proofs.
#[derive(Debug, Clone, Copy)]
pub struct Later {
    /// How many there were.
    pub faults: usize,
    /// Those the time left replayed to an answer.
    pub replayed: usize,
    /// Those whose replay showed them.
    pub confirmed: usize,
}

impl Later {
    /// What a reader of the report must know of them: those not replayed,
    /// and those replayed only where the run's state was gone.
    pub fn warning(self) -> Option<String> {
        let unreplayed = self.faults - self.replayed;
        let unshown = self.replayed - self.confirmed;
        let mut parts = Vec::new();
        if unreplayed > 0 {
            parts.push(format!(
                "{unreplayed} were not replayed to an answer (no confirmation, no reproducer): the replay time went first to each cause's first fault and to proving it and the suite on a fresh server; a longer --budget replays them"
            ));
        }
        if unshown > 0 {
            parts.push(format!(
                "{unshown} did not show when replayed after the proofs' resets, where what the run had left on the server was gone"
            ));
        }
        (!parts.is_empty()).then(|| {
            format!(
                "of the {} fault(s) beyond each cause's first, {}",
                self.faults,
                parts.join("; ")
            )
        })
    }
}

/// What the phase did, for the run's report.
pub struct Replayed {
    /// What became of the archive's tests.
    pub suite: SuiteOutcome,
    /// Why tests of the archive were left out.
    pub left_out: SuiteLeftOut,
    /// With a reset, the faults confirmed after the proofs.
    pub later: Option<Later>,
    /// Requests the phase sent.
    pub sent: u64,
    /// The channel, its trace still to finish.
    pub channel: Channel,
}

/// Why the phase could not go on: a reset failed, or a file could not be
/// written.
#[derive(Debug, thiserror::Error)]
pub enum PhaseError {
    /// A reset failed.
    #[error(transparent)]
    Reset(#[from] ResetError),
    /// A file could not be written.
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// Confirms, shrinks and writes the faults' reproducers (recorded on
/// `faults`), then writes the regression suite: `suite`'s tests recorded
/// again, or as they were. With a reset, everything that needs the run's
/// state comes first (each cause's first fault confirmed, the suite's
/// tests recorded), then the proofs after resets, by value: the suite (one
/// reset proves every file), each fault once, then shrinking against
/// resets; the other faults are confirmed and proven last, with the time
/// left (on Prefect, confirming 468 faults first took the whole replay time
/// and proved nothing). Half of the allowance for the run's state is kept
/// for the suite, so that shrinking many faults cannot leave it nothing.
pub async fn replay(
    mut channel: Channel,
    mut replays: Replays,
    suite: Suite,
    faults: &mut [Fault],
    plan: &Plan,
    files: Files<'_>,
) -> Result<Replayed, PhaseError> {
    let allowance = channel.requests;
    let granted = channel.time;
    let fresh = channel.reset.is_some();
    let later = if fresh {
        let first = replays.first.min(replays.faults.len());
        replays.faults.split_off(first)
    } else {
        Vec::new()
    };
    // The time planned for the proofs' resets is kept from the work on the
    // run's state.
    let reserve = if fresh {
        plan.proofs.min(channel.time)
    } else {
        Duration::ZERO
    };
    channel.time -= reserve;
    // The faults are confirmed on the run's state; the archive's tests are
    // recorded on it too, before any reset takes it away.
    let (mut confirmed, scripts, mut left_out, recorded_now) = match suite {
        Suite::Recorded(scripts) => {
            let confirmed = confirm_faults(&mut replays, &mut channel, plan).await;
            (confirmed, scripts, SuiteLeftOut::default(), false)
        }
        Suite::Rerun(runs) => {
            let (suite_time, suite_requests) = (channel.time / 2, channel.requests / 2);
            channel.time -= suite_time;
            channel.requests -= suite_requests;
            let confirmed = confirm_faults(&mut replays, &mut channel, plan).await;
            channel.grant(suite_time, suite_requests);
            let (scripts, left_out) = suite_scripts(&mut replays, runs, &mut channel, plan).await;
            (confirmed, scripts, left_out, true)
        }
    };
    channel.grant(reserve, 0);
    // With a reset, the proofs by value: the suite (one reset proves every
    // file), then each fault once and shrinking against resets. Without,
    // the tests just recorded keep what they met there.
    let (scripts, unproven_scripts) = if fresh {
        let proof =
            super::suite::prove_suite(scripts, &replays.checker, &mut channel, &mut left_out)
                .await?;
        (proof.proven, proof.unproven)
    } else if recorded_now {
        let Replays {
            api,
            checker,
            echoes,
            ..
        } = &replays;
        let settled =
            super::suite::settle(scripts, api, checker, echoes, &mut channel, &mut left_out).await;
        (settled, Vec::new())
    } else {
        (scripts, Vec::new())
    };
    prove_faults(&replays, &mut confirmed, &mut channel).await?;
    let later = confirm_later(&mut replays, later, &mut confirmed, &mut channel, plan).await?;
    files::attach_reproducers(faults, files.out, &confirmed.outcomes, files.secrets)?;
    let sent = allowance.saturating_sub(channel.requests);
    let written = files::write_suite(files.out, scripts, files.credentials, files.secrets)?;
    let whys: HashMap<usize, String> = unproven_scripts
        .iter()
        .map(|(s, why)| (s.archived, why.clone()))
        .collect();
    let unproven = files::write_unproven(
        files.out,
        unproven_scripts,
        files.credentials,
        files.secrets,
    )?;
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
    for (k, file) in unproven.tests {
        if let Some(f) = fates.get_mut(k) {
            *f = Fate::Unproven(file, whys.get(&k).cloned().unwrap_or_default());
        }
    }
    let resets = fresh.then(|| Resets {
        times: channel.reset_times.clone(),
        typical: channel.typical_reset(),
        slowest: channel.slowest_reset(),
        budget: needed_budget(faults, &channel, granted, unproven.files, plan),
    });
    Ok(Replayed {
        suite: SuiteOutcome {
            files: written.files,
            unproven: unproven.files,
            fates,
            resets,
        },
        left_out,
        later,
        sent,
        channel,
    })
}

/// The `--budget` under which the replays would have had the time to
/// prove what this run left unproven: every confirmed fault once and the
/// suite in one round, each after a reset as slow as the slowest seen
/// (`None` when nothing was left; `Some(None)` when no budget gives the
/// proofs that much).
fn needed_budget(
    faults: &[Fault],
    channel: &Channel,
    granted: Duration,
    unproven_files: usize,
    plan: &Plan,
) -> Option<Option<Duration>> {
    let unproven: Vec<usize> = faults
        .iter()
        .filter_map(|f| f.reproducer.as_ref())
        .filter(|r| r.fresh.is_none())
        .map(|r| r.steps.len())
        .collect();
    if unproven.is_empty() && unproven_files == 0 {
        return None;
    }
    let slowest = channel.slowest_reset();
    let mut owed = unproven
        .iter()
        .map(|&steps| slowest + channel.cost_of(steps))
        .sum::<Duration>();
    if unproven_files > 0 {
        // One more round of the whole suite (about two calls a file).
        owed += slowest + channel.cost_of(unproven_files * 2);
    }
    let needed = granted.saturating_sub(channel.time) + owed;
    let first = plan.first_reset.unwrap_or(slowest);
    let budget = budget_for(needed, first);
    // A budget no longer than this run's proves no more.
    Some(budget.map(|b| {
        plan.budget
            .map_or(b, |given| b.max(given + Duration::from_secs(10)))
    }))
}

/// The suite's scripts: the archive's tests run again through `channel`
/// (on the run's state, where what they name exists) and completed with
/// what made what they use, with why the others were left out.
async fn suite_scripts(
    replays: &mut Replays,
    runs: Vec<(Box<dyn TestRun>, String)>,
    channel: &mut Channel,
    plan: &Plan,
) -> (Vec<SuiteScript>, SuiteLeftOut) {
    let mut ledger = std::mem::take(&mut replays.ledger);
    let Replays { api, checker, .. } = replays;
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
    let recorded = record(runs, channel).await;
    let scripts = super::suite::scripts(
        api,
        &plan.target,
        recorded,
        titles,
        &mut ledger,
        checker,
        &mut left_out,
    );
    (scripts, left_out)
}

/// Confirms and shrinks each fault of `replays` through `channel`
/// (unshrunk on the run's state, with a reset: [`prove_faults`] shrinks
/// them against resets); faults calling a `slow` operation come last,
/// unshrunk.
async fn confirm_faults(replays: &mut Replays, channel: &mut Channel, plan: &Plan) -> Confirmed {
    confirm::confirm(
        replays.api.clone(),
        replays.checker.clone(),
        std::mem::take(&mut replays.faults),
        plan.read_only,
        &replays.slow,
        channel,
    )
    .await
}

/// With a reset, runs each confirmed fault on a fresh server and shrinks
/// it against resets, as the time left allows ([`confirm::prove`]).
async fn prove_faults(
    replays: &Replays,
    confirmed: &mut Confirmed,
    channel: &mut Channel,
) -> Result<(), ResetError> {
    if channel.reset.is_some() {
        confirm::prove(&replays.api, &replays.checker, confirmed, channel).await?;
    }
    Ok(())
}

/// With the time the proofs left, confirms `later` (the faults beyond
/// their causes' first), proves them as time allows, and adds them to
/// `confirmed`; what became of them (`None` when there were none).
async fn confirm_later(
    replays: &mut Replays,
    later: Vec<Vec<Script>>,
    confirmed: &mut Confirmed,
    channel: &mut Channel,
    plan: &Plan,
) -> Result<Option<Later>, ResetError> {
    if later.is_empty() {
        return Ok(None);
    }
    replays.faults = later;
    let faults = replays.faults.len();
    let mut more = confirm_faults(replays, channel, plan).await;
    prove_faults(replays, &mut more, channel).await?;
    // A replay the time cut off before its answer (no answer) tells
    // nothing: not replayed.
    let replayed = more
        .outcomes
        .iter()
        .filter(|o| {
            matches!(
                o.confirmation,
                Confirmation::Confirmed | Confirmation::Flaky
            )
        })
        .count();
    let shown = more
        .outcomes
        .iter()
        .filter(|o| o.confirmation == Confirmation::Confirmed)
        .count();
    confirmed.outcomes.append(&mut more.outcomes);
    confirmed.originals.append(&mut more.originals);
    Ok(Some(Later {
        faults,
        replayed,
        confirmed: shown,
    }))
}
