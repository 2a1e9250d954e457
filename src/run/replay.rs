//! The replay phase, after the search: each fault's witness is replayed to
//! confirm it, shrunk, and written as a reproducer; then the archive's tests
//! are recorded again as the Hurl regression suite. Half of the phase's
//! allowance is kept for the suite, so that shrinking many faults cannot
//! leave it nothing.

use std::sync::Arc;

use super::options::RunOptions;
use crate::execution::{secrets::Secrets, Credentials, RunConfig, TestRun};
use crate::model::Api;
use crate::oracles::{witness::Ledger, Checker, Confirmation};
use crate::reports::Report;
use crate::reproduce::{self, Script};

/// What the phase replays.
pub struct Replays {
    /// Per fault, the scripts to try, best first.
    pub faults: Vec<Vec<Script>>,
    /// The archive's tests, ready to run again, with their titles.
    pub suite: Vec<(Box<dyn TestRun>, String)>,
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
    (config, credentials): (RunConfig, Credentials),
    options: &RunOptions,
    secrets: &Secrets,
) -> anyhow::Result<()> {
    let target = config.target.clone();
    let (time, requests) = reproduce::phase::allowance(options.budget, options.max_requests);
    let mut channel = reproduce::phase::Channel::open(
        config,
        credentials,
        &options.out,
        secrets,
        (time, requests),
    )?;
    if !replays.faults.is_empty() {
        eprintln!(
            "cartograph: replaying {} fault(s) to confirm and shrink them, then the final suite (at most {:.0}s and {requests} requests; --no-replay skips this)",
            replays.faults.len(),
            time.as_secs_f64()
        );
    }
    let (suite_time, suite_requests) = (time / 2, requests / 2);
    channel.time -= suite_time;
    channel.requests -= suite_requests;
    let outcomes = reproduce::phase::confirm(
        api.clone(),
        checker.clone(),
        replays.faults,
        options.read_only,
        &mut channel,
    )
    .await?;
    reproduce::phase::attach_reproducers(&mut report.faults, &options.out, &outcomes, secrets)?;
    channel.time += suite_time;
    channel.requests += suite_requests;
    // What the replays created and changed, after the search's own history.
    for (i, mut e) in std::mem::take(&mut channel.seen).into_iter().enumerate() {
        e.seq = u64::MAX / 4 + i as u64;
        ledger.note(&e);
    }
    let (runs, titles): (Vec<_>, Vec<_>) = replays.suite.into_iter().unzip();
    let recorded = reproduce::phase::record(runs, &mut channel).await?;
    let location = |l: &str| checker.location_path(l);
    let scripts =
        reproduce::suite::scripts(&api, target.as_str(), recorded, titles, ledger, &location);
    let scripts = reproduce::phase::settle(scripts, &checker, &mut channel).await?;
    let n = reproduce::phase::write_suite(&options.out, scripts, secrets)?;
    channel.trace.finish()?;
    let confirmed = report
        .faults
        .iter()
        .filter(|f| f.confirmation == Confirmation::Confirmed)
        .count();
    eprintln!(
        "cartograph: {confirmed} of {} fault(s) confirmed, reproducers in {}; regression suite: {n} Hurl file(s) in {} (hurl --test --jobs 1 --variable base={} {}/*.hurl)",
        report.faults.len(),
        options.out.join("reproducers").display(),
        options.out.join("tests").display(),
        target.as_str().trim_end_matches('/'),
        options.out.join("tests").display()
    );
    Ok(())
}
