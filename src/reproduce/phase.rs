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
use crate::execution::{
    self, Credentials, Driver, Exchange, OutDir, Politeness, RunConfig, TestRun, TraceWriter,
    Transport, secrets::Secrets,
};
use crate::model::Api;
use crate::oracles::echoes::Echoes;
use crate::oracles::{Checker, Confirmation, Reproducer, WitnessStep};

/// What the phase may spend, at most: a fifth of the run's time budget,
/// and no more than this.
pub const REPLAY_BUDGET: Duration = Duration::from_secs(30);

/// Requests the phase may spend, at most: a third of the run's request cap,
/// and no more than this.
pub const REPLAY_REQUESTS: u64 = 4_000;

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
            config,
            transport,
            credentials,
            politeness,
            trace: TraceWriter::create(out, "replay.ndjson", secrets.clone())
                .map_err(|e| WriteError::new("create", &out.path("replay.ndjson"), e))?,
            time,
            requests,
            seen: Vec::new(),
            trace_error: None,
        })
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
        outcome
    }
}

/// Confirms and shrinks each fault (skipping, in read-only mode, those whose
/// scripts would change state), within [`REPLAY_BUDGET`]. Faults whose
/// scripts call one of the `slow` operations come last and are confirmed
/// but not shrunk, so that waiting on them cannot leave the others
/// unreplayed.
pub async fn confirm(
    api: Arc<Api>,
    checker: Checker,
    scripts: Vec<Vec<Script>>,
    read_only: bool,
    slow: &[String],
    channel: &mut Channel,
) -> Vec<Outcome> {
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
    let driver = Arc::new(Mutex::new(ShrinkDriver::new(api, checker, jobs)));
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
        });
    }
    outcomes
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

/// Runs each script once and keeps those that ran to their end, with the
/// statuses this run saw: a suite file asserts what its own requests get,
/// not what the test met amid the search's state.
pub async fn settle(
    scripts: Vec<SuiteScript>,
    api: &Api,
    checker: &Checker,
    echoes: &Echoes,
    channel: &mut Channel,
    left_out: &mut SuiteLeftOut,
) -> Vec<SuiteScript> {
    let runs: Vec<Box<dyn TestRun>> = scripts
        .iter()
        .map(|s| {
            let checker = checker.clone();
            Box::new(ScriptRun::new(
                s.script.clone(),
                Box::new(move |l: &str| checker.location_path(l)),
            )) as Box<dyn TestRun>
        })
        .collect();
    let recorded = record(runs, channel).await;
    let mut recorded = recorded.into_iter();
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
        if let Some(why) = crash_after_plants(&ran, echoes)
            .or_else(|| crash_reading_all(api, checker, &ran, echoes))
        {
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
                    f.code.clone(),
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
            &format!("{:02}-{}-{}", i + 1, slug(&code), slug(&op)),
            &["sh", "json"],
        );
        let sh = format!("reproducers/{stem}.sh");
        let json = format!("reproducers/{stem}.json");
        // Shrinking may have cut the steps that named what the run made.
        let mut script = o.script.clone();
        script.settle_standalone();
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
            }),
        ));
    }
    Ok(out)
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
/// one of the same name).
pub fn write_suite(
    dir: &OutDir,
    scripts: Vec<SuiteScript>,
    secrets: &Secrets,
) -> Result<Written, WriteError> {
    // The folder, even for an empty suite: `hurl --test tests/*.hurl` finds it.
    dir.folder("tests")
        .map_err(|e| WriteError::new("create", &dir.path("tests"), e))?;
    let mut seen: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    let mut written = Written::default();
    for s in scripts {
        let text = hurl::render_redacted(&s.script, &s.title, secrets);
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
            "tests",
            &format!("{:03}-{}", seen.len() + 1, slug(&op)),
            &["hurl"],
        );
        let file = format!("tests/{stem}.hurl");
        dir.write(&file, secrets.redact(&text).as_bytes())
            .map_err(|e| WriteError::new("write", &dir.path(&file), e))?;
        seen.insert(body, file.clone());
        written.files += 1;
        written.tests.push((s.archived, file));
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::slug;

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
