//! Confirming the faults: each fault's witness replayed on the run's
//! state (and shrunk there without a reset), then, with a reset, run on a
//! fresh server and shrunk against resets.

use std::sync::{Arc, Mutex};

use super::Script;
use super::channel::Channel;
use super::script_run::ScriptRun;
use super::shrink::{Job, Outcome, ShrinkDriver};
use crate::execution::Driver;
use crate::execution::reset::ResetError;
use crate::faults::{Confirmation, Fresh};
use crate::model::Api;
use crate::oracles::Checker;

/// The faults as the run's state confirmed them, in the order given (each
/// cause's first fault first), with the jobs a proof after resets shrinks
/// again ([`prove`]).
pub struct Confirmed {
    /// What became of each fault.
    pub outcomes: Vec<Outcome>,
    /// The unshrunk jobs, when the run has a reset (shrinking is then done
    /// against resets).
    pub originals: Vec<Job>,
}

/// Confirms and shrinks each fault (skipping, in read-only mode, those whose
/// scripts would change state), within [`REPLAY_BUDGET`](super::channel::REPLAY_BUDGET). Faults whose
/// scripts call one of the `slow` operations come last and are confirmed
/// but not shrunk, so that waiting on them cannot leave the others
/// unreplayed. With a reset, they are confirmed unshrunk on the run's
/// state: [`prove`] then proves them on a fresh server.
pub async fn confirm(
    api: Arc<Api>,
    checker: Checker,
    scripts: Vec<Vec<Script>>,
    read_only: bool,
    slow: &[String],
    channel: &mut Channel,
) -> Confirmed {
    let reads = |s: &Script| {
        s.steps
            .iter()
            .all(|st| matches!(st.method.as_str(), "GET" | "HEAD" | "OPTIONS") || st.graphql_query)
    };
    let mut jobs = Vec::new();
    let mut skipped = Vec::new();
    for candidates in scripts.into_iter().filter(|c| !c.is_empty()) {
        // Read-only mode replays only scripts that read.
        let (mut usable, refused): (Vec<Script>, Vec<Script>) =
            candidates.into_iter().partition(|s| !read_only || reads(s));
        if usable.is_empty() {
            skipped.extend(refused.into_iter().take(1));
            continue;
        }
        let script = usable.remove(0);
        let calls_slow = |s: &Script| s.steps.iter().any(|st| slow.contains(&st.operation));
        let shrink = !calls_slow(&script) && !usable.iter().any(calls_slow);
        jobs.push(Job {
            shrink,
            signature: script
                .fault
                .as_ref()
                .map(|f| f.signature.clone())
                .unwrap_or_default(),
            script,
            alternates: usable,
        });
    }
    jobs.sort_by_key(|j| !j.shrink);
    let originals = if channel.reset.is_some() {
        // Confirmed first on the run's state, unshrunk: shrinking is done
        // once, against resets ([`prove`]).
        let originals = jobs.clone();
        for j in &mut jobs {
            j.shrink = false;
        }
        originals
    } else {
        Vec::new()
    };
    let driver = Arc::new(Mutex::new(ShrinkDriver::new(
        api.clone(),
        checker.clone(),
        jobs,
    )));
    channel.run(driver.clone()).await;
    let mut outcomes = driver.lock().unwrap_or_else(|e| e.into_inner()).outcomes();
    for script in skipped {
        outcomes.push(Outcome {
            signature: script
                .fault
                .as_ref()
                .map(|f| f.signature.clone())
                .unwrap_or_default(),
            confirmation: Confirmation::NotReplayed,
            script,
            requests: 0,
            fresh: None,
        });
    }
    Confirmed {
        outcomes,
        originals,
    }
}

/// Runs `script` once after a reset and says what it did: whether it ran
/// to its end and its last answer showed `signature` for the reason the
/// oracle gave, with the check this run's answer gives.
async fn fresh_run(
    api: &Api,
    checker: &Checker,
    signature: &str,
    script: &Script,
    channel: &mut Channel,
) -> Result<Option<(Fresh, Option<crate::oracles::FaultCheck>)>, ResetError> {
    if !channel.affords(script.steps.len()) {
        return Ok(None);
    }
    channel.fresh().await?;
    let location = checker.clone();
    let run = Box::new(ScriptRun::new(
        script.clone(),
        Box::new(move |l: &str| location.location_path(l)),
    ));
    let Some((test, exchanges)) = channel.run_one(run).await else {
        return Ok(None);
    };
    let any: Box<dyn std::any::Any> = test;
    let complete = any
        .downcast::<ScriptRun>()
        .is_ok_and(|r| r.missing.is_empty() && exchanges.len() == script.steps.len());
    let answered = exchanges
        .last()
        .is_some_and(|e| e.status.is_some() || e.failure.is_some());
    let down = script
        .steps
        .iter()
        .zip(&exchanges)
        .any(|(s, e)| super::script_run::unavailable(s.status, e.status));
    if !complete || !answered || down {
        return Ok(Some((Fresh::CannotRun, None)));
    }
    Ok(Some(
        match super::shrink::judge(api, checker, signature, &exchanges) {
            Some((_, check)) => (Fresh::Shows, Some(check)),
            None => (Fresh::DoesNotShow, None),
        },
    ))
}

/// Proves each confirmed fault on a fresh server: its scripts (the
/// unshrunk ones it was confirmed from) are confirmed again and shrunk
/// with a reset before every try, so that what is kept is every step the
/// fault needs on a fresh server (a write answered 500 that kept its record
/// included) and nothing else. A fault no script of which shows after a
/// reset keeps the script the run's state confirmed, with what it did on a
/// fresh server. Faults go in the order confirmed, which is by value (each
/// cause's first fault, defects first, before any second one), and a
/// proof begins only when a reset as slow as the slowest so far and the
/// script fit in the time left. What each did is its `fresh`.
pub async fn prove(
    api: &Arc<Api>,
    checker: &Checker,
    confirmed: &mut Confirmed,
    channel: &mut Channel,
) -> Result<(), ResetError> {
    let Confirmed {
        outcomes,
        originals,
    } = confirmed;
    let mut order: Vec<usize> = (0..outcomes.len())
        .filter(|&i| outcomes[i].confirmation == Confirmation::Confirmed)
        .collect();
    // Each first run once on a fresh server, then shrunk against resets
    // with the time left: a shrink takes a reset per try, and against a
    // service that resets in seconds the first faults' shrinks left every
    // other fault unproven.
    for &i in &order {
        if !channel.affords(outcomes[i].script.steps.len()) {
            break;
        }
        let o = &mut outcomes[i];
        let before = channel.requests;
        if let Some((fresh, _)) = fresh_run(api, checker, &o.signature, &o.script, channel).await? {
            o.fresh = Some(fresh);
        }
        o.requests += before.saturating_sub(channel.requests);
    }
    // A fault the run's state no longer showed (what its witness names was
    // renamed or deleted since) may still show on a fresh server, where its
    // completed witness makes everything again.
    for (i, o) in outcomes.iter_mut().enumerate() {
        if o.confirmation != Confirmation::Flaky {
            continue;
        }
        let Some(job) = originals.iter().find(|j| j.signature == o.signature) else {
            continue;
        };
        if !channel.affords(job.script.steps.len()) {
            break;
        }
        let before = channel.requests;
        let ran = fresh_run(api, checker, &o.signature, &job.script, channel).await?;
        o.requests += before.saturating_sub(channel.requests);
        if let Some((Fresh::Shows, check)) = ran {
            o.confirmation = Confirmation::Confirmed;
            o.script = job.script.clone();
            if let (Some(f), Some(check)) = (o.script.fault.as_mut(), check) {
                f.check = check;
            }
            o.fresh = Some(Fresh::Shows);
            order.push(i);
        }
    }
    for i in order {
        if !channel.affords(outcomes[i].script.steps.len()) {
            break;
        }
        let o = &mut outcomes[i];
        let Some(job) = originals.iter().find(|j| j.signature == o.signature) else {
            continue;
        };
        let mut driver =
            ShrinkDriver::new(api.clone(), checker.clone(), vec![job.clone()]).by_spans();
        let before = channel.requests;
        let steps = job.script.steps.len();
        while channel.affords(steps) {
            let Some(test) = driver.next_test() else {
                break;
            };
            channel.fresh().await?;
            let Some((test, exchanges)) = channel.run_one(test).await else {
                break;
            };
            driver.finished(test, &exchanges);
        }
        let again = driver
            .outcomes()
            .into_iter()
            .find(|a| a.confirmation == Confirmation::Confirmed);
        if let Some(again) = again {
            o.script = again.script;
            o.fresh = Some(Fresh::Shows);
        } else if !channel.spent() && o.fresh.is_none() {
            // What the script the run's state confirmed does on a fresh server.
            if let Some((fresh, _)) =
                fresh_run(api, checker, &o.signature, &o.script, channel).await?
            {
                o.fresh = Some(fresh);
            }
        }
        o.requests += before.saturating_sub(channel.requests);
    }
    Ok(())
}
