//! After the search: faults are confirmed and shrunk against the target, the
//! archive's tests are replayed to record the regression suite, and both are
//! written as files (`reproducers/*.sh|json`, `tests/*.hurl`).

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::candidates::listing_crash_after_plants;
use super::script_run::ScriptRun;
use super::shrink::{Job, Outcome, ShrinkDriver};
use super::{Script, hurl, shell};
use crate::execution::reset::{Reset, ResetError};
use crate::execution::{
    self, Credentials, Driver, Exchange, OutDir, Politeness, RunConfig, TestRun, TraceWriter,
    Transport, secrets::Secrets,
};
use crate::model::Api;
use crate::oracles::echoes::Echoes;
use crate::oracles::{Checker, Confirmation, Fresh, Reproducer, WitnessStep};

/// What the phase may spend, at most: a fifth of the run's time budget,
/// and no more than this.
pub const REPLAY_BUDGET: Duration = Duration::from_secs(30);

/// Requests the phase may spend, at most: a third of the run's request cap,
/// and no more than this.
pub const REPLAY_REQUESTS: u64 = 4_000;

/// Resets as long as the first the search leaves time for, beyond the
/// phase's share, in a run with `--reset-command`: every reproducer and
/// the suite are proven after a reset, a reset of a real service takes
/// seconds, and the later ones take longer than the first (Jupyter: 3.6 s
/// before the search, 22 s after it, stopping the kernels the run
/// started).
pub const PROOF_RESETS: u32 = 40;

/// The time the search leaves the phase for proofs on a fresh server when
/// the first reset took `took`: [`PROOF_RESETS`] of them, at most a third
/// of the budget (the search keeps the rest). A reset of milliseconds (the
/// demo's) takes next to nothing from the search.
pub fn proof_reserve(budget: Duration, took: Duration) -> Duration {
    (took * PROOF_RESETS).min(budget / 3)
}

/// The smallest `--budget` (in whole tens of seconds, up to a day) whose
/// replay phase would have `needed`, when the first reset takes `took`;
/// `None` when no budget gives that much (the proofs' share is capped).
pub fn budget_for(needed: Duration, took: Duration) -> Option<Duration> {
    (1..=8_640u64)
        .map(|n| Duration::from_secs(n * 10))
        .find(|&b| allowance(Some(b), None).0 + proof_reserve(b, took) >= needed)
}

/// The phase's allowance for a run with this budget and request cap.
pub fn allowance(budget: Option<Duration>, max_requests: Option<u64>) -> (Duration, u64) {
    (
        budget.map_or(REPLAY_BUDGET, |b| (b / 5).min(REPLAY_BUDGET)),
        max_requests.map_or(REPLAY_REQUESTS, |n| (n / 3).clamp(20, REPLAY_REQUESTS)),
    )
}

/// A file of the phase (a reproducer, a suite file, `replay.ndjson`) could
/// not be written; the message names it.
#[derive(Debug, thiserror::Error)]
#[error("cannot {verb} {}: {error}", path.display())]
pub struct WriteError {
    verb: &'static str,
    path: std::path::PathBuf,
    error: std::io::Error,
}

impl WriteError {
    fn new(verb: &'static str, path: &Path, error: std::io::Error) -> WriteError {
        WriteError {
            verb,
            path: path.to_path_buf(),
            error,
        }
    }
}

/// How the phase talks to the target: the run's settings.
pub struct Channel {
    /// The run's configuration (budget and caps are replaced).
    pub config: RunConfig,
    /// The run's transport.
    pub transport: Transport,
    /// Credentials, as in the run.
    pub credentials: Credentials,
    /// The run's politeness, shared with its other phases.
    pub politeness: Arc<Politeness>,
    /// Where the phase's exchanges are recorded (`replay.ndjson`).
    pub trace: TraceWriter,
    /// Time left for the phase.
    pub time: Duration,
    /// Requests left for the phase.
    pub requests: u64,
    /// Every exchange of the phase so far, in order (the run's ledger learns
    /// from them what the replays created).
    pub seen: Vec<Exchange>,
    /// Why `replay.ndjson` is incomplete, when a write to it failed (the
    /// run warns: the replays themselves went on).
    pub trace_error: Option<String>,
    /// What puts the target back in its start state, when the run has one:
    /// each reproducer and suite file is then proven on a fresh server.
    pub reset: Option<Reset>,
    /// Resets done by the phase.
    pub resets: usize,
    /// How long each reset of the run took, in order (the one before the
    /// search first): proofs are planned with the slowest.
    pub reset_times: Vec<Duration>,
    /// Time the phase's engine runs took, and the requests they sent:
    /// what a request costs, for planning.
    busy: (Duration, u64),
    /// Whether nothing was sent since the last reset: the next proof needs
    /// none of its own (a reset that took longer than planned leaves its
    /// fresh server to a proof that still fits).
    pristine: bool,
    /// Why the last engine run stopped.
    stopped: Option<execution::StopReason>,
}

impl Channel {
    /// A channel with the run's settings and `allowance` (time, requests),
    /// recording to `replay.ndjson` in the output folder.
    pub fn open(
        config: RunConfig,
        transport: Transport,
        credentials: Credentials,
        politeness: Arc<Politeness>,
        out: &OutDir,
        secrets: &Secrets,
        (time, requests): (Duration, u64),
    ) -> Result<Channel, WriteError> {
        Ok(Channel {
            transport,
            credentials,
            politeness,
            trace: TraceWriter::create(out, "replay.ndjson", secrets.clone())
                .map_err(|e| WriteError::new("create", &out.path("replay.ndjson"), e))?
                .limited(config.trace_limit),
            config,
            time,
            requests,
            seen: Vec::new(),
            trace_error: None,
            reset: None,
            resets: 0,
            reset_times: Vec::new(),
            busy: (Duration::ZERO, 0),
            pristine: false,
            stopped: None,
        })
    }

    /// Gives the phase `time` and `requests` more (what was held back
    /// for a later part of it).
    pub fn grant(&mut self, time: Duration, requests: u64) {
        self.time += time;
        self.requests += requests;
        self.stopped = None;
    }

    /// Whether the phase's time or requests are spent.
    pub fn spent(&self) -> bool {
        self.time.is_zero()
            || self.requests == 0
            || self
                .stopped
                .is_some_and(|s| s != execution::StopReason::Exhausted)
    }

    /// Puts the target back in its start state (nothing without a reset),
    /// its time counted against the phase's.
    pub async fn reset(&mut self) -> Result<(), ResetError> {
        let Some(reset) = &self.reset else {
            return Ok(());
        };
        let took = reset.run().await?;
        self.time = self.time.saturating_sub(took);
        self.resets += 1;
        self.reset_times.push(took);
        self.pristine = true;
        Ok(())
    }

    /// Puts the target in its start state for a proof: a reset, unless
    /// nothing was sent since the last one.
    pub async fn fresh(&mut self) -> Result<(), ResetError> {
        if self.pristine {
            return Ok(());
        }
        self.reset().await
    }

    /// The slowest reset of the run so far.
    pub fn slowest_reset(&self) -> Duration {
        self.reset_times.iter().max().copied().unwrap_or_default()
    }

    /// The median reset of the run so far.
    pub fn typical_reset(&self) -> Duration {
        let mut times = self.reset_times.clone();
        times.sort();
        times.get(times.len() / 2).copied().unwrap_or_default()
    }

    /// What `requests` requests take, as the phase's have so far (a
    /// twentieth of a second each before any).
    pub fn cost_of(&self, requests: usize) -> Duration {
        let (time, sent) = self.busy;
        let each = if sent == 0 {
            Duration::from_millis(50)
        } else {
            time / u32::try_from(sent).unwrap_or(u32::MAX)
        };
        each * u32::try_from(requests).unwrap_or(u32::MAX)
    }

    /// Whether a reset (as slow as the slowest so far, and a quarter more:
    /// Jupyter's took 28.4 s, then 29.2 s) and then `requests` requests fit
    /// in what is left: a proof begun without the time to end it is a
    /// reset spent for nothing.
    pub fn affords(&self, requests: usize) -> bool {
        let reset = if self.pristine {
            Duration::ZERO
        } else {
            self.slowest_reset() * 5 / 4
        };
        !self.spent()
            && self.requests >= requests as u64
            && self.time >= reset + self.cost_of(requests)
    }

    /// Runs `test` alone; the test back with its exchanges, or `None` when
    /// the allowance left it unrun.
    async fn run_one(
        &mut self,
        test: Box<dyn TestRun>,
    ) -> Option<(Box<dyn TestRun>, Vec<Exchange>)> {
        let driver = Arc::new(Mutex::new(Single {
            test: Some(test),
            done: None,
        }));
        self.run(driver.clone()).await;
        driver.lock().unwrap_or_else(|e| e.into_inner()).done.take()
    }

    async fn run(&mut self, driver: Arc<Mutex<dyn Driver>>) -> execution::RunOutcome {
        let mut config = self.config.clone();
        config.budget = Some(self.time);
        config.max_requests = Some(self.requests);
        // One at a time: a shrink step depends on the verdict of the one before.
        config.concurrency = 1;
        let transport = self.transport.clone();
        let trace = &mut self.trace;
        let seen = &mut self.seen;
        let mut error = None;
        let outcome = execution::run(
            config,
            transport,
            self.credentials.clone(),
            self.politeness.clone(),
            driver,
            |ex| {
                if let Err(e) = trace.write(ex) {
                    error.get_or_insert(e);
                }
                seen.push(ex.clone());
            },
        )
        .await;
        if let Some(e) = error {
            self.trace_error.get_or_insert(e.to_string());
        }
        self.time = self.time.saturating_sub(outcome.elapsed);
        self.requests = self.requests.saturating_sub(outcome.requests);
        self.busy.0 += outcome.elapsed;
        self.busy.1 += outcome.requests;
        // A run the time ended before it sent anything left the server fresh.
        self.pristine &= outcome.requests == 0;
        self.stopped = Some(outcome.stop);
        outcome
    }
}

/// A driver of one test, which it hands back with its exchanges.
struct Single {
    test: Option<Box<dyn TestRun>>,
    done: Option<(Box<dyn TestRun>, Vec<Exchange>)>,
}

impl Driver for Single {
    fn next_test(&mut self) -> Option<Box<dyn TestRun>> {
        self.test.take()
    }

    fn finished(&mut self, test: Box<dyn TestRun>, exchanges: &[Exchange]) {
        self.done = Some((test, exchanges.to_vec()));
    }
}

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
/// scripts would change state), within [`REPLAY_BUDGET`]. Faults whose
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
    if !complete || !answered {
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

/// A driver that runs given tests once each and keeps their exchanges.
pub struct Recorder {
    tests: std::collections::VecDeque<Box<dyn TestRun>>,
    /// Exchanges per test, in the order run.
    pub recorded: Vec<Vec<Exchange>>,
}

impl Recorder {
    /// A recorder of `tests`.
    pub fn new(tests: Vec<Box<dyn TestRun>>) -> Recorder {
        Recorder {
            tests: tests.into(),
            recorded: Vec::new(),
        }
    }
}

impl Driver for Recorder {
    fn next_test(&mut self) -> Option<Box<dyn TestRun>> {
        self.tests.pop_front()
    }

    fn finished(&mut self, _test: Box<dyn TestRun>, exchanges: &[Exchange]) {
        self.recorded.push(exchanges.to_vec());
    }
}

/// Replays the archive's tests once each and returns their exchanges.
pub async fn record(tests: Vec<Box<dyn TestRun>>, channel: &mut Channel) -> Vec<Vec<Exchange>> {
    let driver = Arc::new(Mutex::new(Recorder::new(tests)));
    channel.run(driver.clone()).await;
    std::mem::take(&mut driver.lock().unwrap_or_else(|e| e.into_inner()).recorded)
}

/// `script` as a test of the engine.
fn script_run(script: &Script, checker: &Checker) -> Box<dyn TestRun> {
    let checker = checker.clone();
    Box::new(ScriptRun::new(
        script.clone(),
        Box::new(move |l: &str| checker.location_path(l)),
    ))
}

/// Runs each script once on the run's state and keeps those that ran to
/// their end, with the statuses this run saw: a suite file asserts what
/// its own requests get, not what the test met amid the search's state.
/// (With a reset, [`prove_suite`] runs them on a fresh server instead.)
pub async fn settle(
    scripts: Vec<SuiteScript>,
    api: &Api,
    checker: &Checker,
    echoes: &Echoes,
    channel: &mut Channel,
    left_out: &mut SuiteLeftOut,
) -> Vec<SuiteScript> {
    let runs = scripts
        .iter()
        .map(|s| script_run(&s.script, checker))
        .collect();
    let mut recorded = record(runs, channel).await.into_iter();
    let mut kept = Vec::new();
    for mut s in scripts {
        let ran = recorded.next().unwrap_or_default();
        if ran.len() != s.script.steps.len() {
            let why = if ran.is_empty() {
                "not replayed: the replay allowance ran out first".to_string()
            } else {
                format!(
                    "stopped after {} of {} calls when replayed (an answer lacked a value a later call needs, or the replay allowance ran out)",
                    ran.len(),
                    s.script.steps.len()
                )
            };
            left_out.leave(s.archived, Why::Unfinished, why);
            continue;
        }
        // A step with only literal values whose answer changed since the
        // test was recorded depends on what else happened on the server
        // (an id that another test created meanwhile): not a regression test.
        let unstable = s
            .script
            .steps
            .iter()
            .zip(&ran)
            .enumerate()
            .find_map(|(i, (step, ex))| {
                let literal = !step.path.contains("{{")
                    && !step.body.as_deref().is_some_and(|b| b.contains("{{"));
                let status = |s: Option<u16>| s.map_or("no answer".into(), |s| s.to_string());
                let call = format!("call {} ({})", i + 1, step.operation);
                if literal && step.status != ex.status {
                    Some(format!(
                        "{call} answered {} when recorded, {} when replayed",
                        status(step.status),
                        status(ex.status)
                    ))
                } else if literal && ex.status == Some(409) {
                    // A conflict is an answer about the server's state.
                    Some(format!(
                        "{call} answered 409, a conflict with the server's state"
                    ))
                } else if step.graphql_clean && graphql_errors(ex) {
                    // A GraphQL step asserts "no errors" only if it still holds.
                    Some(format!(
                        "{call} answered errors when replayed, none when recorded"
                    ))
                } else {
                    None
                }
            });
        if let Some(why) = unstable {
            left_out.leave(s.archived, Why::Unstable, why);
            continue;
        }
        let history = crash_after_plants(&ran, echoes)
            .or_else(|| crash_reading_all(api, checker, &ran, echoes));
        if let Some(why) = history {
            left_out.leave(s.archived, Why::History, why);
            continue;
        }
        for (step, ex) in s.script.steps.iter_mut().zip(&ran) {
            step.status = ex.status;
        }
        kept.push(s);
    }
    kept
}

/// Rounds of [`prove_suite`], at most: each after one reset, the files
/// that could not run to their end set aside, until one round runs whole.
const SEQUENCE_ROUNDS: usize = 3;

/// The regression suite as proven on a fresh server.
#[derive(Debug, Default)]
pub struct SuiteProof {
    /// Files that ran, in order, after one reset, each to its end: they
    /// assert what that fresh server answered (`tests/`).
    pub proven: Vec<SuiteScript>,
    /// Files written without that proof, each with why (`tests/unproven/`).
    pub unproven: Vec<(SuiteScript, String)>,
    /// Rounds run (a reset each).
    pub rounds: usize,
}

/// Proves the suite on a fresh server as hurl runs it (`hurl --test --jobs
/// 1 tests/*.hurl`, one file after another): one reset, then every file in
/// order; each file asserts what that fresh server answered it. A file
/// that cannot run to its end there (an answer lacked a value it needs) is
/// set aside with its reason, and the files after it, which met what it
/// left, are proven again in another round without it. What the time left
/// does not prove (a reset as slow as the slowest so far must fit, and the
/// run's own files are run only while time is left) is written unproven,
/// with why, rather than not at all.
pub async fn prove_suite(
    scripts: Vec<SuiteScript>,
    checker: &Checker,
    channel: &mut Channel,
    left_out: &mut SuiteLeftOut,
) -> Result<SuiteProof, ResetError> {
    let mut proof = SuiteProof::default();
    let mut pending = scripts;
    // Files of `pending` from this one on are not proven in its order.
    let mut unproven_from = 0;
    let mut why = String::new();
    while !pending.is_empty() {
        let first = pending[0].script.steps.len();
        if proof.rounds == SEQUENCE_ROUNDS {
            why = format!(
                "the files before it were set aside in {SEQUENCE_ROUNDS} rounds, each run after one reset: whether it passes after the files kept is unproven"
            );
            break;
        }
        if !channel.affords(first) {
            why = format!(
                "not run on a fresh server: the replay time left ({:.0}s) held no reset ({:.1}s the slowest) and the files before it",
                channel.time.as_secs_f64(),
                channel.slowest_reset().as_secs_f64()
            );
            break;
        }
        channel.fresh().await?;
        if channel.time < channel.cost_of(first) {
            // The reset took longer than the slowest before it: its fresh
            // server goes to a proof that still fits (a reproducer).
            why = format!(
                "not run on a fresh server: the reset before it took {:.1}s, and left no time for the suite",
                channel
                    .reset_times
                    .last()
                    .copied()
                    .unwrap_or_default()
                    .as_secs_f64()
            );
            break;
        }
        proof.rounds += 1;
        // A test that made the same requests as an earlier one shares its
        // file ([`write_suite`]): it runs once, as hurl will run it.
        let twin: Vec<Option<usize>> = (0..pending.len())
            .map(|i| (0..i).find(|&j| pending[j].script.steps == pending[i].script.steps))
            .collect();
        let runs = pending
            .iter()
            .zip(&twin)
            .filter(|(_, t)| t.is_none())
            .map(|(s, _)| script_run(&s.script, checker))
            .collect();
        let mut recorded = record(runs, channel).await.into_iter();
        let mut ran_by: Vec<Vec<Exchange>> = Vec::with_capacity(pending.len());
        for t in &twin {
            let ran = match t {
                Some(j) => ran_by[*j].clone(),
                None => recorded.next().unwrap_or_default(),
            };
            ran_by.push(ran);
        }
        let out_of_time = channel.spent();
        let mut kept = Vec::with_capacity(pending.len());
        let mut set_aside = None;
        let mut unrun = None;
        for (mut s, ran) in pending.into_iter().zip(ran_by) {
            let whole = ran.len() == s.script.steps.len();
            if !whole && out_of_time {
                // Cut off by the time, not by the server: unproven.
                unrun.get_or_insert(kept.len());
                why = format!(
                    "not run to its end on a fresh server: the replay time ran out during the suite's run after a reset ({:.1}s the slowest reset)",
                    channel.slowest_reset().as_secs_f64()
                );
                kept.push(s);
                continue;
            }
            if !whole {
                left_out.leave(
                    s.archived,
                    Why::Unfinished,
                    format!(
                        "run after one reset with the suite's files before it, it stopped after {} of {} calls (an answer lacked a value a later call needs)",
                        ran.len(),
                        s.script.steps.len()
                    ),
                );
                set_aside.get_or_insert(kept.len());
                continue;
            }
            if unrun.is_none() {
                for (step, ex) in s.script.steps.iter_mut().zip(&ran) {
                    step.status = ex.status;
                    // A fresh server's errors: the file asserts the status alone.
                    if step.graphql_clean && graphql_errors(ex) {
                        step.graphql_clean = false;
                    }
                }
            }
            kept.push(s);
        }
        pending = kept;
        match (set_aside, unrun) {
            (None, None) => {
                unproven_from = pending.len();
                break;
            }
            (Some(at), Some(cut)) => {
                // Those after a file set aside met what it left; those the
                // time cut off never ran: another round is not affordable.
                unproven_from = at.min(cut);
                if at < cut {
                    why = "run after one reset, but after a file that was then set aside: the suite without it was not run again (the replay time ran out)".to_string();
                }
                break;
            }
            (None, Some(cut)) => {
                unproven_from = cut;
                break;
            }
            (Some(at), None) => {
                unproven_from = at;
                why = "run after one reset, but after a file that was then set aside: the suite without it was not run again".to_string();
            }
        }
    }
    let unproven = pending.split_off(unproven_from.min(pending.len()));
    proof.proven = pending;
    proof.unproven = unproven.into_iter().map(|s| (s, why.clone())).collect();
    Ok(proof)
}

/// Why a recorded suite test asserts the run's history: a call crashed
/// that crashed only after the run planted wrong inputs (on a fresh server
/// it may not crash).
fn crash_after_plants(ran: &[Exchange], echoes: &Echoes) -> Option<String> {
    ran.iter().enumerate().find_map(|(i, ex)| {
        let planters = echoes.crash_after_plants(ex)?;
        let planted = crate::oracles::echoes::named(&planters);
        Some(format!(
            "call {} ({}) answered {}, a crash that began only after the run sent inputs the description forbids and the server accepted ({}): on a fresh server it may not crash",
            i + 1,
            ex.request.operation,
            ex.status.unwrap_or(0),
            planted
        ))
    })
}

/// Why a recorded suite test asserts the whole server's data: a call's
/// crash is a listing's that began after plants
/// ([`listing_crash_after_plants`]); a listing that always crashed is kept.
fn crash_reading_all(
    api: &Api,
    checker: &Checker,
    ran: &[Exchange],
    echoes: &Echoes,
) -> Option<String> {
    ran.iter().enumerate().find_map(|(i, ex)| {
        listing_crash_after_plants(api, checker, echoes, ex).then(|| {
            format!(
                "call {} ({}) answered {}, reading no single resource, which also worked in the run until it had planted inputs the description forbids: whether it crashes depends on all the server holds, not only on what this test made",
                i + 1,
                ex.request.operation,
                ex.status.unwrap_or(0)
            )
        })
    })
}

/// One archived test on its way into the suite.
#[derive(Debug, Clone)]
pub struct SuiteScript {
    /// Its place in the archive (and in `suite.json`'s `tests`).
    pub archived: usize,
    /// Its requests.
    pub script: Script,
    /// What it covers, heading its file.
    pub title: String,
}

/// Why an archived test was left out of the suite, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// It asserts the run's history, not the server's behaviour.
    History,
    /// Its literal requests answered differently when replayed.
    Unstable,
    /// It did not run to its end.
    Unfinished,
}

/// What became of one archived test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fate {
    /// It is in this Hurl file (relative to the output folder), alone or
    /// with tests that made the same requests.
    Written(String),
    /// It is in this Hurl file, under `tests/unproven/`: no run on a fresh
    /// server proved it, for this reason.
    Unproven(String, String),
    /// It was left out, for this reason.
    LeftOut(String),
}

/// Why tests of the archive did not become regression tests, by reason.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SuiteLeftOut {
    /// Tests in the archive.
    pub archived: usize,
    /// Tests that asserted the run's history: they named what the run
    /// deleted, or ids other tests made.
    pub history: usize,
    /// Tests whose literal requests answered differently when replayed.
    pub unstable: usize,
    /// Tests that did not run to their end (the phase's time or requests ran
    /// out, or an answer lacked a value a later request needed).
    pub unfinished: usize,
    /// Per test left out, its place in the archive and the reason.
    pub reasons: Vec<(usize, String)>,
}

impl SuiteLeftOut {
    /// Leaves out the archive's test `archived`, for `reason`.
    pub fn leave(&mut self, archived: usize, why: Why, reason: String) {
        match why {
            Why::History => self.history += 1,
            Why::Unstable => self.unstable += 1,
            Why::Unfinished => self.unfinished += 1,
        }
        self.reasons.push((archived, reason));
    }

    /// Why a suite is empty (or smaller than the archive), for people.
    pub fn explain(&self) -> String {
        if self.archived == 0 {
            return "the search archived no test (nothing was covered)".to_string();
        }
        let mut parts = Vec::new();
        if self.history > 0 {
            parts.push(format!(
                "{} asserted the run's history (named what it deleted or ids other tests made)",
                self.history
            ));
        }
        if self.unstable > 0 {
            parts.push(format!(
                "{} answered differently when replayed",
                self.unstable
            ));
        }
        if self.unfinished > 0 {
            parts.push(format!(
                "{} did not run to their end (the replay allowance ran out, or the server stopped answering)",
                self.unfinished
            ));
        }
        format!(
            "of {} archived test(s), {}",
            self.archived,
            if parts.is_empty() {
                "none was left out".to_string()
            } else {
                parts.join("; ")
            }
        )
    }
}

/// Whether a GraphQL answer has an `errors` entry (or is not JSON).
pub fn graphql_errors(ex: &Exchange) -> bool {
    match ex.json() {
        Some(body) => body
            .get("errors")
            .is_some_and(|e| e.as_array().is_none_or(|a| !a.is_empty())),
        None => true,
    }
}

/// A file name part: letters, digits, `-` and `_`.
fn slug(s: &str) -> String {
    let s: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    s.chars().take(60).collect()
}

/// Writes each confirmed fault's reproducer (`.sh` and `.json`) under
/// `reproducers/` in the output folder (an earlier run's were deleted when
/// it was opened, so none passes for this one's; a person's files there
/// stay, and a reproducer goes beside one of the same name) and returns, per
/// signature, what the report records.
pub fn write_reproducers(
    dir: &OutDir,
    outcomes: &[Outcome],
    secrets: &Secrets,
) -> Result<Vec<(String, Confirmation, Option<Reproducer>)>, WriteError> {
    let mut out = Vec::new();
    for (i, o) in outcomes.iter().enumerate() {
        if o.confirmation != Confirmation::Confirmed {
            out.push((o.signature.clone(), o.confirmation, None));
            continue;
        }
        let (code, op) = o
            .script
            .fault
            .as_ref()
            .map(|f| {
                (
                    f.code.as_str(),
                    o.script
                        .steps
                        .last()
                        .map(|s| s.operation.clone())
                        .unwrap_or_default(),
                )
            })
            .unwrap_or_default();
        let stem = dir.free_stem(
            "reproducers",
            &format!("{:02}-{}-{}", i + 1, slug(code), slug(&op)),
            &["sh", "json"],
        );
        let sh = format!("reproducers/{stem}.sh");
        let json = format!("reproducers/{stem}.json");
        // Shrinking may have cut the steps that named what the run made.
        let mut script = o.script.clone();
        script.settle_standalone();
        prove_standalone(&mut script, o.fresh);
        dir.write_executable(&sh, secrets.redact(&shell::render(&script)).as_bytes())
            .map_err(|e| WriteError::new("write", &dir.path(&sh), e))?;
        let text = serde_json::to_string_pretty(&script)
            .map_err(|e| WriteError::new("write", &dir.path(&json), e.into()))?;
        dir.write(&json, format!("{}\n", secrets.redact(&text)).as_bytes())
            .map_err(|e| WriteError::new("write", &dir.path(&json), e))?;
        let steps = o
            .script
            .steps
            .iter()
            .map(|s| WitnessStep {
                seq: 0,
                operation: s.operation.clone(),
                method: s.method.clone(),
                path: s.path.clone(),
                status: s.status,
            })
            .collect();
        out.push((
            o.signature.clone(),
            o.confirmation,
            Some(Reproducer {
                steps,
                shell: sh,
                json,
                requests: o.requests,
                standalone: script.standalone,
                unmade: script
                    .unmade
                    .iter()
                    .map(|u| secrets.redact(&u.to_string()).into_owned())
                    .collect(),
                not_standalone: script
                    .not_standalone
                    .iter()
                    .map(|r| secrets.redact(r).into_owned())
                    .collect(),
                planted: script.planted,
                fresh: o.fresh,
            }),
        ));
    }
    Ok(out)
}

/// Settles `script`'s label with what it did on a fresh server: a script
/// that showed its fault after a reset stands alone, whatever the run could
/// tell from its names; one that did not is not standalone, and says so.
fn prove_standalone(script: &mut Script, fresh: Option<Fresh>) {
    script.fresh = fresh;
    match fresh {
        None => {}
        Some(Fresh::Shows) => {
            script.standalone = true;
            script.not_standalone.clear();
        }
        Some(Fresh::DoesNotShow) => {
            script.standalone = false;
            script.not_standalone.insert(
                0,
                "run after the reset (--reset-command) before it was written, it did not show its fault: it needs something the run left on the server that it does not make".to_string(),
            );
        }
        Some(Fresh::CannotRun) => {
            script.standalone = false;
            script.not_standalone.insert(
                0,
                "run after the reset (--reset-command) before it was written, it could not run to its end: an answer lacked a value a later request needs, or none came".to_string(),
            );
        }
    }
}

/// Writes the reproducers of `outcomes` in the output folder and records on
/// each of `faults` what replaying it showed and where its reproducer is.
pub fn attach_reproducers(
    faults: &mut [crate::oracles::Fault],
    dir: &OutDir,
    outcomes: &[Outcome],
    secrets: &Secrets,
) -> Result<(), WriteError> {
    for (signature, confirmation, reproducer) in write_reproducers(dir, outcomes, secrets)? {
        if let Some(f) = faults.iter_mut().find(|f| f.signature == signature) {
            f.confirmation = confirmation;
            f.reproducer = reproducer;
        }
    }
    Ok(())
}

/// The regression suite as written.
#[derive(Debug, Clone, Default)]
pub struct Written {
    /// Hurl files written.
    pub files: usize,
    /// Per test written, its place in the archive and its file (relative to
    /// the output folder; tests that made the same requests share one).
    pub tests: Vec<(usize, String)>,
}

/// Writes the regression suite: one Hurl file per distinct recorded test,
/// under `tests/` in the output folder (an earlier run's were deleted when
/// it was opened; a person's own files there stay, and a test goes beside
/// one of the same name). Each file takes `credentials` as variables.
pub fn write_suite(
    dir: &OutDir,
    scripts: Vec<SuiteScript>,
    credentials: &hurl::Credentials,
    secrets: &Secrets,
) -> Result<Written, WriteError> {
    let scripts = scripts.into_iter().map(|s| (s, None)).collect();
    write_suite_in(dir, "tests", scripts, credentials, secrets)
}

/// Writes files that no run on a fresh server proved under
/// `tests/unproven/`, apart from the suite `hurl --test tests/*.hurl`
/// runs: each says in its header why it is unproven.
pub fn write_unproven(
    dir: &OutDir,
    scripts: Vec<(SuiteScript, String)>,
    credentials: &hurl::Credentials,
    secrets: &Secrets,
) -> Result<Written, WriteError> {
    if scripts.is_empty() {
        return Ok(Written::default());
    }
    let scripts = scripts.into_iter().map(|(s, why)| (s, Some(why))).collect();
    write_suite_in(dir, UNPROVEN, scripts, credentials, secrets)
}

/// Where the suite's files that no run on a fresh server proved go.
pub const UNPROVEN: &str = "tests/unproven";

fn write_suite_in(
    dir: &OutDir,
    folder: &str,
    scripts: Vec<(SuiteScript, Option<String>)>,
    credentials: &hurl::Credentials,
    secrets: &Secrets,
) -> Result<Written, WriteError> {
    // The folder, even for an empty suite: `hurl --test tests/*.hurl` finds it.
    dir.folder(folder)
        .map_err(|e| WriteError::new("create", &dir.path(folder), e))?;
    // Numbered wide enough that `tests/*.hurl` lists them in the order
    // they run (`1000-…` sorts before `101-…`).
    let width = if scripts.len() > 999 { 4 } else { 3 };
    let mut seen: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    let mut written = Written::default();
    for (s, unproven) in scripts {
        let title = match &unproven {
            Some(why) => format!("{}\nUnproven: {why}", s.title),
            None => s.title.clone(),
        };
        let text = hurl::render_redacted(&s.script, &title, credentials, secrets);
        let body: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        if s.script.steps.is_empty() {
            continue;
        }
        let body = body.join("\n");
        if let Some(file) = seen.get(&body) {
            written.tests.push((s.archived, file.clone()));
            continue;
        }
        let op = s
            .script
            .steps
            .last()
            .map(|s| s.operation.clone())
            .unwrap_or_default();
        let stem = dir.free_stem(
            folder,
            &format!("{:0width$}-{}", seen.len() + 1, slug(&op)),
            &["hurl"],
        );
        let file = format!("{folder}/{stem}.hurl");
        dir.write(
            &file,
            redact_keeping(&text, secrets, credentials).as_bytes(),
        )
        .map_err(|e| WriteError::new("write", &dir.path(&file), e))?;
        seen.insert(body, file.clone());
        written.files += 1;
        written.tests.push((s.archived, file));
    }
    Ok(written)
}

/// `text` with every secret redacted but in the names of the variables
/// that carry `credentials`: those are the file's own (`{{cartograph_authorization}}`),
/// and a secret that is a plain word (Jupyter's token `cartograph`) made
/// them `{{[REDACTED]_authorization}}`, which Hurl cannot parse.
fn redact_keeping(text: &str, secrets: &Secrets, credentials: &hurl::Credentials) -> String {
    let names: Vec<String> = credentials
        .variables()
        .into_iter()
        .map(|(v, _)| v)
        .collect();
    // Longest first, so that no name is replaced inside a longer one.
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(names[i].len()));
    let mark = |i: usize| format!("\u{1}{}\u{2}", "\u{3}".repeat(i + 1));
    let mut kept = text.to_string();
    for &i in &order {
        kept = kept.replace(&names[i], &mark(i));
    }
    let mut out = secrets.redact(&kept).into_owned();
    for &i in &order {
        out = out.replace(&mark(i), &names[i]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::slug;

    #[test]
    fn a_secret_that_is_a_word_of_a_variable_name_leaves_the_name_whole() {
        let secrets = crate::execution::secrets::Secrets::default();
        secrets.add_header("Authorization", "token cartograph");
        let credentials = super::hurl::Credentials::new(&["Authorization".to_string()], &[], &[]);
        let (var, _) = credentials.variables().remove(0);
        assert!(var.contains("cartograph"), "{var}");
        let text = format!(
            "# --secret '{var}=…'\nAuthorization: {{{{{var}}}}}\n{{\"note\":\"cartograph\"}}\n"
        );
        let out = super::redact_keeping(&text, &secrets, &credentials);
        assert!(out.contains(&format!("{{{{{var}}}}}")), "{out}");
        assert!(out.contains(&format!("--secret '{var}=…'")), "{out}");
        // The secret itself, elsewhere, is still redacted.
        assert!(!out.contains("\"cartograph\""), "{out}");
    }

    #[test]
    fn file_names_are_bounded_slugs() {
        assert_eq!(slug("getBook"), "getBook");
        let hostile = slug("../../x\n$(touch y)`z`'\"\u{1b}é/\\");
        assert!(
            hostile
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
            "{hostile}"
        );
        assert!(!hostile.contains(".."));
        assert_eq!(slug(&"a".repeat(500)).len(), 60);
    }
}
