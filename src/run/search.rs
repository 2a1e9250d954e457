//! The search phase: the engine runs a driver against the target, and every
//! exchange goes to `trace.ndjson`, the tally and the progress line.

use std::sync::{Arc, Mutex};

use super::link::Link;
use super::progress::Progress;
use crate::execution::{self, TraceWriter, secrets::Secrets};
use crate::model::text::one_line;
use crate::reports::Tally;
use crate::reports::events::{Events, Phase};

/// What the search finds, as the progress line and the events read it while
/// the search runs.
#[derive(Default)]
pub(crate) struct Found {
    /// Distinct faults so far.
    pub count: Arc<std::sync::atomic::AtomicUsize>,
    /// Faults first seen since the last look, when someone listens
    /// (`--events`): kept only then.
    pub news: Option<Arc<crate::faults::News>>,
}

/// Runs `driver` against the target: every exchange to `trace.ndjson` and
/// the tally, with the progress line; warns when the trace or the
/// credentials failed. Returns how the engine ended, and each operation's
/// first 2xx (what the security probes are made from).
pub(crate) async fn search(
    driver: Arc<Mutex<dyn execution::Driver>>,
    faults: Found,
    link: &Link,
    secrets: &Secrets,
    tally: &mut Tally,
    out: &execution::OutDir,
    events: &Events,
) -> anyhow::Result<(execution::RunOutcome, super::security::Bases)> {
    let mut trace = TraceWriter::create(out, "trace.ndjson", secrets.clone())
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", out.path("trace.ndjson").display()))?
        .limited(link.config.trace_limit);
    let progress = Progress::new(tally.operation_count(), link.config.budget, events.clone());
    let phase = events.phase_started(Phase::Search);
    let mut trace_error = None;
    let mut bases = super::security::Bases::default();
    let base = link.config.target.path().to_string();
    let Link {
        config,
        transport,
        credentials,
        politeness,
        ..
    } = link.clone();
    let outcome = execution::run(config, transport, credentials, politeness, driver, |ex| {
        if let Err(e) = trace.write(ex) {
            trace_error.get_or_insert(e);
        }
        let reached = tally.reached();
        tally.add(ex);
        bases.note(ex);
        if tally.reached() > reached {
            progress.reached(ex);
        }
        if let Some(w) = tally.early_warning(&base) {
            progress.warn(&one_line(&secrets.redact(&w)));
        }
        if let Some(news) = &faults.news {
            progress.faults(&news.take());
        }
        progress.update(
            ex.seq + 1,
            tally.reached(),
            faults.count.load(std::sync::atomic::Ordering::Relaxed),
        );
    })
    .await;
    if let Some(news) = &faults.news {
        progress.faults(&news.take());
    }
    progress.finish();
    events.phase_finished(Phase::Search, phase);
    let counts = trace.finish()?;
    if let Some(note) = super::outputs::trace_note("trace.ndjson", counts, link.config.trace_limit)
    {
        eprintln!("cartograph: {note}");
    }
    if let Some(e) = trace_error {
        eprintln!("warning: trace.ndjson is incomplete: {e}");
    }
    if let Some(e) = &outcome.auth_error {
        eprintln!("error: {}; the run stopped", one_line(&secrets.redact(e)));
    }
    if let Some(e) = &outcome.unreachable {
        eprintln!("error: nothing answered: {}", one_line(&secrets.redact(e)));
    }
    if let Some(e) = &outcome.crash {
        eprintln!(
            "error: {}; the search stopped before its end (please report this with the description)",
            one_line(&secrets.redact(e))
        );
    }
    Ok((outcome, bases))
}
