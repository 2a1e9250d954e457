//! `--events FILE` (or `-` for stdout): newline-delimited JSON events as the
//! run goes, for a CI system to show (run started, phases, operations first
//! reached, faults, confirmed causes, warnings, progress, run finished). Each
//! line is one JSON object with `event` (its kind) and `elapsed` (seconds
//! since the run started); `models/events.schema.json` publishes the shape.
//! Secrets are redacted from every line, as in every other file.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;

use super::{Report, Settings};
use crate::execution::OutDir;
use crate::execution::secrets::Secrets;
use crate::faults::causes::Cause;
use crate::faults::{Confirmation, Fault};

/// Where events go: nowhere (the default), a file, or stdout. Cheap to
/// clone; every clone writes to the same place.
#[derive(Clone, Default)]
pub struct Events(Option<Arc<Sink>>);

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.enabled() {
            "Events(on)"
        } else {
            "Events(off)"
        })
    }
}

struct Sink {
    out: Mutex<Box<dyn Write + Send>>,
    started: Instant,
    secrets: Secrets,
    /// Warnings already sent, so that the ones gathered in the report are
    /// not sent twice.
    warned: Mutex<std::collections::HashSet<String>>,
}

/// A phase of a run.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The search: generated tests against the target.
    Search,
    /// Confirming and shrinking faults, writing reproducers and the suite.
    Replay,
}

/// One event.
#[derive(Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event<'a> {
    /// The run begins: its settings (target, description, seed, limits).
    RunStarted {
        /// Cartograph's version.
        version: &'static str,
        /// The settings, as report.json writes them.
        settings: &'a Settings,
        /// Operations the run may call.
        operations: usize,
    },
    /// A phase begins.
    PhaseStarted {
        /// Which.
        phase: Phase,
    },
    /// A phase ends.
    PhaseFinished {
        /// Which.
        phase: Phase,
        /// How long it took, in seconds.
        seconds: f64,
    },
    /// The search's state, at most once a second (what the progress line shows).
    Progress {
        /// Requests sent so far.
        requests: u64,
        /// Requests a second so far.
        rate: f64,
        /// Operations answered 2xx at least once.
        operations_reached: usize,
        /// Operations the run may call.
        operations: usize,
        /// Distinct faults so far.
        faults: usize,
        /// Seconds of the budget left, when there is a budget.
        #[serde(skip_serializing_if = "Option::is_none")]
        seconds_left: Option<u64>,
    },
    /// An operation answered 2xx for the first time.
    OperationReached {
        /// The operation.
        operation: &'a str,
        /// The status.
        status: u16,
        /// The request's sequence number (in trace.ndjson).
        seq: u64,
    },
    /// A fault was seen for the first time.
    FaultFound {
        /// The fault, as report.json writes it (before replays confirm it).
        fault: &'a Fault,
    },
    /// Replaying a cause's representative fault showed it again.
    CauseConfirmed {
        /// The cause, as report.json writes it.
        cause: &'a Cause,
        /// Its reproducer script, relative to the output folder.
        #[serde(skip_serializing_if = "Option::is_none")]
        reproducer: Option<&'a str>,
    },
    /// A warning (also on stderr and in report.json).
    Warning {
        /// What it says.
        message: &'a str,
    },
    /// The run is over: what report.json sums up, and the exit status.
    RunFinished {
        /// Requests sent by the search.
        requests: u64,
        /// Why the search stopped.
        stop: &'a str,
        /// Operations the run may call.
        operations: usize,
        /// Operations answered 2xx at least once.
        operations_reached: usize,
        /// Faults.
        faults: usize,
        /// Causes.
        causes: usize,
        /// Causes that are defects.
        defects: usize,
        /// Causes confirmed by a replay.
        confirmed: usize,
        /// The process's exit status.
        exit_code: u8,
        /// The output folder.
        out: String,
    },
}

#[derive(Serialize)]
struct Line<'a> {
    elapsed: f64,
    #[serde(flatten)]
    event: &'a Event<'a>,
}

/// `--events FILE` could not be created (the message names the path and why).
#[derive(Debug, thiserror::Error)]
#[error("--events: cannot create {}: {error}", path.display())]
pub struct EventsError {
    /// The file, or the folder it goes in.
    pub path: std::path::PathBuf,
    /// Why not (in the message, not a separate cause: errors are shown
    /// with their causes, which would say it twice).
    pub error: std::io::Error,
}

impl Events {
    /// Events to `dest` (`-` for stdout), or none; secrets redacted. A
    /// file inside the output folder `folder` is written as the run's own
    /// files are (no link followed, no other file replaced).
    pub fn open(
        dest: Option<&Path>,
        folder: &OutDir,
        secrets: Secrets,
    ) -> Result<Events, EventsError> {
        let Some(dest) = dest else {
            return Ok(Events(None));
        };
        let out: Box<dyn Write + Send> = if dest == Path::new("-") {
            Box::new(std::io::stdout())
        } else if let Some(rel) = folder.inside(dest) {
            let file = folder.create(&rel).map_err(|error| EventsError {
                path: dest.to_path_buf(),
                error,
            })?;
            Box::new(std::io::LineWriter::new(file))
        } else {
            if let Some(parent) = dest.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(|error| EventsError {
                    path: parent.to_path_buf(),
                    error,
                })?;
            }
            let file = std::fs::File::create(dest).map_err(|error| EventsError {
                path: dest.to_path_buf(),
                error,
            })?;
            Box::new(std::io::LineWriter::new(file))
        };
        Ok(Events(Some(Arc::new(Sink {
            out: Mutex::new(out),
            started: Instant::now(),
            secrets,
            warned: Mutex::default(),
        }))))
    }

    /// Says that `phase` begins; the instant, for [`Events::phase_finished`].
    pub fn phase_started(&self, phase: Phase) -> Instant {
        self.emit(&Event::PhaseStarted { phase });
        Instant::now()
    }

    /// Says that `phase`, begun at `started`, ends.
    pub fn phase_finished(&self, phase: Phase, started: Instant) {
        self.emit(&Event::PhaseFinished {
            phase,
            seconds: (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
        });
    }

    /// Whether events are written at all.
    pub fn enabled(&self) -> bool {
        self.0.is_some()
    }

    /// Writes `event` as one line. A write that fails is not worth stopping
    /// the run for: the report still comes.
    pub fn emit(&self, event: &Event<'_>) {
        let Some(sink) = &self.0 else { return };
        if let Event::Warning { message } = event {
            let mut warned = sink.warned.lock().unwrap_or_else(|e| e.into_inner());
            if !warned.insert((*message).to_string()) {
                return;
            }
        }
        let line = Line {
            elapsed: (sink.started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
            event,
        };
        let Ok(text) = serde_json::to_string(&line) else {
            return;
        };
        let text = sink.secrets.redact(&text);
        let mut out = sink.out.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
    }

    /// The run's end: the confirmed causes, the warnings not yet sent, then
    /// `run_finished` agreeing with `report`.
    pub fn finish(&self, report: &Report, exit_code: u8, out: &Path) {
        if !self.enabled() {
            return;
        }
        for cause in &report.causes {
            if cause.confirmation != Confirmation::Confirmed {
                continue;
            }
            let reproducer = report
                .faults
                .iter()
                .find(|f| f.signature == cause.representative)
                .and_then(|f| f.reproducer.as_ref())
                .map(|r| r.shell.as_str());
            self.emit(&Event::CauseConfirmed { cause, reproducer });
        }
        for w in &report.warnings {
            self.emit(&Event::Warning { message: w });
        }
        self.emit(&Event::RunFinished {
            requests: report.requests,
            stop: &report.stop,
            operations: report.operations.len(),
            operations_reached: report.operations_reached,
            faults: report.faults.len(),
            causes: report.causes.len(),
            defects: report
                .causes
                .iter()
                .filter(|c| c.class == crate::oracles::registry::Class::Defect)
                .count(),
            confirmed: report
                .causes
                .iter()
                .filter(|c| c.confirmation == Confirmation::Confirmed)
                .count(),
            exit_code,
            out: out.display().to_string(),
        });
    }
}
