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
/// recorded again, or as they were. With a reset, everything that needs
/// the run's state comes first (each cause's first fault confirmed, the
/// suite's tests recorded), then the proofs after resets, by value: the
/// suite (one reset proves every file), each fault once, then shrinking
/// against resets; the other faults are confirmed and proven last, with
/// the time left.
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
    let granted = channel.time;
    if !replays.faults.is_empty() {
        eprintln!(
            "cartograph: replaying {} fault(s) to confirm and shrink them, then the final suite (at most {:.0}s and {} requests; --no-replay skips this)",
            replays.faults.len(),
            channel.time.as_secs_f64(),
            channel.requests
        );
    }
    let fresh = channel.reset.is_some();
    // With a reset, each cause's representative is confirmed, and the
    // suite and those reproducers proven after resets, before any other
    // fault is confirmed: on Prefect, confirming 468 faults first took the
    // whole replay time and proved nothing. The time planned for the
    // proofs' resets is kept from the part on the run's state.
    let later = if fresh {
        let first = replays.first.min(replays.faults.len());
        replays.faults.split_off(first)
    } else {
        Vec::new()
    };
    let reserve = if fresh {
        link.proofs.min(channel.time)
    } else {
        Duration::ZERO
    };
    channel.time -= reserve;
    // The faults are confirmed on the run's state; the archive's tests are
    // recorded on it too, before any reset takes it away.
    let (mut confirmed, scripts, mut left_out, recorded_now) = match suite {
        Suite::Recorded(scripts) => {
            let confirmed = confirm_faults(&mut replays, &mut channel, options).await;
            (confirmed, scripts, SuiteLeftOut::default(), false)
        }
        Suite::Rerun(runs) => {
            // Half of the allowance is kept for the suite, so that shrinking
            // the faults cannot leave it nothing.
            let (suite_time, suite_requests) = (channel.time / 2, channel.requests / 2);
            channel.time -= suite_time;
            channel.requests -= suite_requests;
            let confirmed = confirm_faults(&mut replays, &mut channel, options).await;
            channel.grant(suite_time, suite_requests);
            let (scripts, left_out) = suite_scripts(&mut replays, runs, &mut channel, link).await;
            (confirmed, scripts, left_out, true)
        }
    };
    channel.grant(reserve, 0);
    // With a reset, the proofs by value: the suite (one reset proves every
    // file), then each fault once and shrinking against resets. Without,
    // the tests just recorded keep what they met there.
    let mut proof = None;
    let scripts = if fresh {
        let mut proven =
            reproduce::phase::prove_suite(scripts, &replays.checker, &mut channel, &mut left_out)
                .await?;
        let scripts = std::mem::take(&mut proven.proven);
        proof = Some(proven);
        scripts
    } else if recorded_now {
        let Replays {
            api,
            checker,
            echoes,
            ..
        } = &replays;
        reproduce::phase::settle(scripts, api, checker, echoes, &mut channel, &mut left_out).await
    } else {
        scripts
    };
    prove_faults(&replays, &mut confirmed, &mut channel).await?;
    let later = confirm_later(&mut replays, later, &mut confirmed, &mut channel, options).await?;
    reproduce::phase::attach_reproducers(&mut report.faults, out, &confirmed.outcomes, secrets)?;
    if let Some(search) = report.search.as_mut() {
        let sent = allowance.saturating_sub(channel.requests);
        search.phases.insert("replay".into(), sent);
    }
    let credentials = link.suite_credentials();
    let written = reproduce::phase::write_suite(out, scripts, &credentials, secrets)?;
    let unproven_scripts = proof
        .as_mut()
        .map(|p| std::mem::take(&mut p.unproven))
        .unwrap_or_default();
    let whys: std::collections::HashMap<usize, String> = unproven_scripts
        .iter()
        .map(|(s, why)| (s.archived, why.clone()))
        .collect();
    let unproven = reproduce::phase::write_unproven(out, unproven_scripts, &credentials, secrets)?;
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
        budget: needed_budget(report, &channel, granted, unproven.files, link, options),
    });
    close(channel)?;
    let outcome = SuiteOutcome {
        files: written.files,
        unproven: unproven.files,
        fates,
        resets,
    };
    say_confirmed(report, &outcome, &left_out, link, options, later);
    if let Some(w) = later.and_then(|l| l.warning()) {
        eprintln!("warning: {w}");
        report.warnings.push(w);
    }
    Ok(outcome)
}

/// What became of the faults beyond their causes' first, which a run with
/// a reset confirms only after the proofs.
#[derive(Debug, Clone, Copy)]
struct Later {
    /// How many there were.
    faults: usize,
    /// Those the time left replayed to an answer.
    replayed: usize,
    /// Those whose replay showed them.
    confirmed: usize,
}

impl Later {
    /// What a reader of the report must know of them: those not replayed,
    /// and those replayed only where the run's state was gone.
    fn warning(self) -> Option<String> {
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

/// With the time the proofs left, confirms `later` (the faults beyond
/// their causes' first), proves them as time allows, and adds them to
/// `confirmed`; what became of them (`None` when there were none).
async fn confirm_later(
    replays: &mut Replays,
    later: Vec<Vec<Script>>,
    confirmed: &mut reproduce::phase::Confirmed,
    channel: &mut Channel,
    options: &RunOptions,
) -> anyhow::Result<Option<Later>> {
    if later.is_empty() {
        return Ok(None);
    }
    replays.faults = later;
    let faults = replays.faults.len();
    let mut more = confirm_faults(replays, channel, options).await;
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

/// The `--budget` under which the replays would have had the time to
/// prove what this run left unproven: every confirmed fault once and the
/// suite in one round, each after a reset as slow as the slowest seen
/// (`None` when nothing was left; `Some(None)` when no budget gives the
/// proofs that much).
fn needed_budget(
    report: &Report,
    channel: &Channel,
    granted: Duration,
    unproven_files: usize,
    link: &Link,
    options: &RunOptions,
) -> Option<Option<Duration>> {
    let unproven: Vec<usize> = report
        .faults
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
    let first = link.first_reset.unwrap_or(slowest);
    let budget = reproduce::phase::budget_for(needed, first);
    // A budget no longer than this run's proves no more.
    Some(budget.map(|b| {
        options
            .budget
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
    link: &Link,
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
    let recorded = reproduce::phase::record(runs, channel).await;
    let scripts = reproduce::suite::scripts(
        api,
        link.config.target.as_str(),
        recorded,
        titles,
        &mut ledger,
        checker,
        &mut left_out,
    );
    (scripts, left_out)
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
                    .join(reproduce::phase::UNPROVEN)
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
            with(crate::oracles::Fresh::Shows),
            with(crate::oracles::Fresh::DoesNotShow),
            with(crate::oracles::Fresh::CannotRun)
        )
    } else {
        String::new()
    };
    // Said only when the order left faults unreplayed.
    let first = later
        .filter(|l| l.replayed < l.faults)
        .map_or(String::new(), |l| {
            format!(
                " (each cause's first fault was confirmed and proven first; {} of the {} other(s) were not replayed in the time left)",
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
pub fn resets_line(r: &Resets) -> String {
    let budget = match r.budget {
        None => "every reproducer and suite file was run on a fresh server".to_string(),
        Some(Some(b)) => format!(
            "--budget {}s would have run every reproducer and the whole suite on a fresh server",
            b.as_secs()
        ),
        Some(None) => format!(
            "no --budget gives the proofs the time to run every reproducer on a fresh server (they get at most {} times the first reset, and a third of the budget): --include fewer operations, or a faster --reset-command",
            reproduce::phase::PROOF_RESETS
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

/// Confirms and shrinks each fault through `channel` (unshrunk on the
/// run's state, with a reset: [`prove_faults`] shrinks them against
/// resets); faults calling a `slow` operation come last, unshrunk.
async fn confirm_faults(
    replays: &mut Replays,
    channel: &mut Channel,
    options: &RunOptions,
) -> reproduce::phase::Confirmed {
    reproduce::phase::confirm(
        replays.api.clone(),
        replays.checker.clone(),
        std::mem::take(&mut replays.faults),
        options.read_only,
        &replays.slow,
        channel,
    )
    .await
}

/// With a reset, runs each confirmed fault on a fresh server and shrinks
/// it against resets, as the time left allows ([`reproduce::phase::prove`]).
async fn prove_faults(
    replays: &Replays,
    confirmed: &mut reproduce::phase::Confirmed,
    channel: &mut Channel,
) -> anyhow::Result<()> {
    if channel.reset.is_some() {
        reproduce::phase::prove(&replays.api, &replays.checker, confirmed, channel).await?;
    }
    Ok(())
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
