//! What a run tells while it goes: the progress line on stderr (when stderr
//! is a terminal) and the `--events` stream, from the same calls, so the two
//! never disagree.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::execution::Exchange;
use crate::faults::Fault;
use crate::reports::events::{Event, Events};

/// How often the events say where the search is.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// The progress line and the events of one phase.
pub(crate) struct Progress {
    bar: Option<indicatif::ProgressBar>,
    operations: usize,
    started: Instant,
    budget: Option<Duration>,
    events: Events,
    /// When the last `progress` event went.
    last_event: Mutex<Option<Instant>>,
}

impl Progress {
    /// A progress line over `operations` operations and the `budget`.
    pub(crate) fn new(operations: usize, budget: Option<Duration>, events: Events) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        Progress {
            bar,
            operations,
            started: Instant::now(),
            budget,
            events,
            last_event: Mutex::new(None),
        }
    }

    /// Where the search is: `requests` sent, operations `reached`, `faults`.
    pub(crate) fn update(&self, requests: u64, reached: usize, faults: usize) {
        if self.bar.is_none() && !self.events.enabled() {
            return;
        }
        let elapsed = self.started.elapsed();
        let rate = requests as f64 / elapsed.as_secs_f64().max(1e-3);
        let left = self.budget.map(|b| b.saturating_sub(elapsed).as_secs());
        if let Some(bar) = &self.bar {
            let left = left.map(|l| format!(", {l}s left")).unwrap_or_default();
            bar.set_message(format!(
                "{requests} requests ({rate:.0}/s), {reached}/{} operations reached, {faults} faults{left}",
                self.operations
            ));
        }
        if !self.events.enabled() {
            return;
        }
        let mut last = self.last_event.lock().unwrap_or_else(|e| e.into_inner());
        if last.is_none_or(|t| t.elapsed() >= PROGRESS_EVERY) {
            *last = Some(Instant::now());
            self.events.emit(&Event::Progress {
                requests,
                rate: (rate * 10.0).round() / 10.0,
                operations_reached: reached,
                operations: self.operations,
                faults,
                seconds_left: left,
            });
        }
    }

    /// `ex` answered its operation 2xx for the first time.
    pub(crate) fn reached(&self, ex: &Exchange) {
        if let Some(status) = ex.status {
            self.events.emit(&Event::OperationReached {
                operation: &ex.request.operation,
                status,
                seq: ex.seq,
            });
        }
    }

    /// Faults seen for the first time.
    pub(crate) fn faults(&self, fresh: &[Fault]) {
        for fault in fresh {
            self.events.emit(&Event::FaultFound { fault });
        }
    }

    /// A warning, above the progress line (or plain on stderr), and as an event.
    pub(crate) fn warn(&self, message: &str) {
        let line = format!("warning: {message}");
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
        self.events.emit(&Event::Warning { message });
    }

    /// Clears the progress line.
    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
