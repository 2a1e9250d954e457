//! How the phase after the search talks to the target: a [`Channel`] with
//! the run's settings, its allowance of time and requests, the resets that
//! put the target back in its start state, and `replay.ndjson`; and what
//! the allowance is, for a run's budget.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::Script;
use super::WriteError;
use super::script_run::ScriptRun;
use crate::execution::reset::{Reset, ResetError};
use crate::execution::{
    self, Credentials, Driver, Exchange, OutDir, Politeness, RunConfig, TestRun, TraceWriter,
    Transport, secrets::Secrets,
};
use crate::oracles::Checker;

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
    pub(super) async fn run_one(
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

    /// Runs `driver`'s tests one at a time within what is left, recording
    /// each exchange; the time and requests they took are spent.
    pub(super) async fn run(&mut self, driver: Arc<Mutex<dyn Driver>>) -> execution::RunOutcome {
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
pub(super) fn script_run(script: &Script, checker: &Checker) -> Box<dyn TestRun> {
    let checker = checker.clone();
    Box::new(ScriptRun::new(
        script.clone(),
        Box::new(move |l: &str| checker.location_path(l)),
    ))
}
