//! The search phase: the engine runs a driver against the target, and every
//! exchange goes to `trace.ndjson`, the tally and the progress line.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::options::RunOptions;
use crate::execution::{
    self, secrets::Secrets, Credentials, Politeness, RunConfig, TraceWriter, Transport,
};
use crate::model::text::one_line;
use crate::reports::Tally;

/// The run's transport: one for every phase, sending the requests of
/// operations that document a redirect without following it.
pub fn transport(api: &crate::model::Api, config: &RunConfig) -> anyhow::Result<Transport> {
    let transport = Transport::new(
        config.target.clone(),
        config.max_body,
        config.concurrency,
        &config.tls,
    )
    .map_err(|e| anyhow::anyhow!(e))?;
    Ok(transport.without_redirects_for(
        api.operations
            .iter()
            .filter(|op| op.documents_redirect())
            .map(|op| op.name.clone()),
    ))
}

/// Runs `driver` against the target: every exchange to `trace.ndjson` and
/// the tally, with the progress line; warns when the trace or the
/// credentials failed.
#[allow(clippy::too_many_arguments)]
pub async fn search(
    driver: Arc<Mutex<dyn execution::Driver>>,
    fault_count: Arc<std::sync::atomic::AtomicUsize>,
    config: RunConfig,
    transport: Transport,
    credentials: Credentials,
    politeness: Arc<Politeness>,
    secrets: &Secrets,
    tally: &mut Tally,
    flags: &RunOptions,
) -> anyhow::Result<execution::RunOutcome> {
    let mut trace = TraceWriter::create(&flags.out.join("trace.ndjson"), secrets.clone())?;
    let progress = Progress::new(tally.operation_count(), config.budget);
    let mut trace_error = None;
    let base = config.target.path().to_string();
    let outcome = execution::run(config, transport, credentials, politeness, driver, |ex| {
        if let Err(e) = trace.write(ex) {
            trace_error.get_or_insert(e);
        }
        tally.add(ex);
        if let Some(w) = tally.early_warning(&base) {
            progress.println(&format!("warning: {}", one_line(&secrets.redact(&w))));
        }
        progress.update(
            ex.seq + 1,
            tally.reached(),
            fault_count.load(std::sync::atomic::Ordering::Relaxed),
        );
    })
    .await;
    progress.finish();
    trace.finish()?;
    if let Some(e) = trace_error {
        eprintln!("warning: trace.ndjson is incomplete: {e}");
    }
    if let Some(e) = &outcome.auth_error {
        eprintln!("error: {}; the run stopped", one_line(&secrets.redact(e)));
    }
    if let Some(e) = &outcome.unreachable {
        eprintln!("error: nothing answered: {}", one_line(&secrets.redact(e)));
    }
    Ok(outcome)
}

/// The progress line on stderr, when stderr is a terminal.
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    operations: usize,
    started: std::time::Instant,
    budget: Option<Duration>,
}

impl Progress {
    pub fn new(operations: usize, budget: Option<Duration>) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        Progress {
            bar,
            operations,
            started: std::time::Instant::now(),
            budget,
        }
    }

    pub fn update(&self, requests: u64, reached: usize, faults: usize) {
        let Some(bar) = &self.bar else { return };
        let elapsed = self.started.elapsed();
        let rate = requests as f64 / elapsed.as_secs_f64().max(1e-3);
        let left = self
            .budget
            .map(|b| format!(", {}s left", b.saturating_sub(elapsed).as_secs()))
            .unwrap_or_default();
        bar.set_message(format!(
            "{requests} requests ({rate:.0}/s), {reached}/{} operations reached, {faults} faults{left}",
            self.operations
        ));
    }

    /// A line above the progress line (or plain on stderr).
    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
