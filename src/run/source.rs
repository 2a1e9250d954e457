//! Where a run's tests come from. The pipeline ([`super::drive`](mod@super::drive)) is the
//! same for every source: the engine drives the source's tests against the
//! target, then the source says what it found, and the pipeline replays,
//! confirms and writes. Two sources exist: the search (MIO over the graph,
//! [`super::searched`]) and a log of production GraphQL requests, each sent
//! once ([`super::queries`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::options::RunOptions;
use super::search::Found;
use crate::execution::{Driver, Exchange, RunConfig, RunOutcome, secrets::Secrets};
use crate::graph::export::GraphDocument;
use crate::model::Api;
use crate::reports::{Report, Settings, Tally};
use crate::reproduce::phase::{Replays, Suite};

/// A source of tests for the pipeline.
pub(crate) trait Source {
    /// The engine's settings for this source, from the run's (a log is sent
    /// whole, in order, one request at a time).
    fn configure(&self, _config: &mut RunConfig) {}

    /// What the engine drives in the search phase.
    fn driver(&self) -> Arc<Mutex<dyn Driver>>;

    /// What the progress line and `--events` read of the faults found while
    /// the engine runs (`listening`: someone reads `--events`).
    fn found(&self, _listening: bool) -> Found {
        Found::default()
    }

    /// After the search: the report, what the replays need, and what the
    /// source alone writes (the final graph, suite.json).
    fn collect(self, ended: Ended<'_>) -> anyhow::Result<Collected>;
}

/// What the source is told once the engine has stopped.
pub(crate) struct Ended<'a> {
    /// The API tested.
    pub api: &'a Arc<Api>,
    /// The target, parsed, with the description's base path.
    pub target: &'a url::Url,
    /// How the engine ended.
    pub outcome: &'a RunOutcome,
    /// The run's settings.
    pub options: &'a RunOptions,
    /// The output folder.
    pub out: &'a crate::execution::OutDir,
    /// Secrets to redact from every file.
    pub secrets: &'a Secrets,
    /// What every exchange added up to.
    pub tally: Tally,
    /// Settings as the report records them.
    pub settings: Settings,
    /// When the run's budget ends: the replays' scripts are made only
    /// while some of it is left.
    pub until: Option<std::time::Instant>,
}

/// Whether the replays' scripts are still worth making: the budget ending
/// at `until` is not spent, and no interrupt came (neither leaves the
/// replays any time).
pub(crate) fn replays_ahead(until: Option<std::time::Instant>) -> bool {
    crate::execution::interrupt::received().is_none()
        && until.is_none_or(|u| std::time::Instant::now() < u)
}

/// What a source found, handed to the replays and the reports.
pub(crate) struct Collected {
    /// The report so far (its faults unconfirmed).
    pub report: Report,
    /// The graph report.html draws.
    pub graph: GraphDocument,
    /// What the replays confirm and shrink.
    pub replays: Replays,
    /// The regression suite's tests.
    pub suite: Suite,
    /// `suite.json` as written, to record each test's fate on after the
    /// replays (none when the source writes no such file).
    pub suite_doc: Option<serde_json::Value>,
    /// Per conformance fault, the answers that showed it (what the spec
    /// fixes read).
    pub answers: HashMap<String, Vec<Exchange>>,
}
