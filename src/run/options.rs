//! Everything a run is told: its limits (budget, requests, rate), how it
//! talks to the server (credentials, timeouts), which checks apply, the
//! search's parameters, and where it writes. The commands build these from
//! their flags (`cli::args`); a library user sets them directly.

use std::path::PathBuf;
use std::time::Duration;

use crate::execution::fence::{Fence, Route};
use crate::execution::{self, RunConfig};
use crate::generation::MioConfig;
use crate::model::{Api, Method};

/// What a run is told. [`Default`] is what a run does untold, as the
/// command line's flags default to it.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Time budget; the run stops cleanly when it is spent.
    pub budget: Option<Duration>,
    /// Stop after sending this many requests.
    pub max_requests: Option<u64>,
    /// Seed of every random choice (a random one when none).
    pub seed: Option<u64>,
    /// Global rate limit across all operations.
    pub rate: Option<execution::Rate>,
    /// Rate limits for the operations a pattern names, besides `rate`.
    pub rate_for: Vec<(String, execution::Rate)>,
    /// Requests that may go at once above the rate.
    pub burst: u32,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Send nothing that could change the server's state.
    pub read_only: bool,
    /// Headers sent with every request, `Name: value`; their values are secrets.
    pub headers: Vec<String>,
    /// API keys sent in every request's query, `NAME=VALUE`: secrets like
    /// `headers`.
    pub query_keys: Vec<String>,
    /// A shell command whose output lines are headers; re-run after a 401.
    pub auth_command: Option<String>,
    /// Re-run `auth_command` this often.
    pub auth_refresh: Option<Duration>,
    /// Other identities, `NAME=Header: value` (a name repeated for more
    /// headers); their values are secrets.
    pub identities: Vec<String>,
    /// A Web Fuzzing Commons auth file of identities.
    pub auth_file: Option<PathBuf>,
    /// Call the operations that end a session (left out when credentials
    /// are sent).
    pub call_logout: bool,
    /// How servers' certificates are checked, and the client's own.
    pub tls: execution::tls::Tls,
    /// Give up on a request after this long.
    pub timeout: Duration,
    /// Read at most this many bytes of a response body.
    pub max_body: usize,
    /// Retries of a request answered 429 or 503.
    pub retries: u32,
    /// Oracle codes turned off.
    pub skip_checks: Vec<crate::oracles::registry::Code>,
    /// Only faults of these oracle codes fail the run (all when empty).
    pub fail_on: Vec<crate::oracles::registry::Code>,
    /// Do not replay faults after the search.
    pub no_replay: bool,
    /// What puts the target back in its start state (`--reset-command`):
    /// run once before the search, and before each proof of a reproducer
    /// or suite file after it.
    pub reset: Option<execution::reset::Reset>,
    /// Never refine the graph from responses.
    pub no_feedback: bool,
    /// Generate without the property graph.
    pub no_graph: bool,
    /// Consecutive failures along a consumes edge before it is suspended (λ).
    pub suspend_after: u32,
    /// MIO's parameters (clamped to their ranges when used).
    pub mio: MioConfig,
    /// Output folder.
    pub out: PathBuf,
    /// Most bytes written to each exchange log, 0 for no limit.
    pub trace_limit: usize,
    /// Say more on the terminal (the search's own bookkeeping).
    pub verbose: bool,
    /// Where newline-delimited JSON events go as the run goes (`-`: stdout).
    pub events: Option<PathBuf>,
    /// The larger run this run is a part of (the demo's two parts), which
    /// says the seed once, lists both parts' causes and ends the events.
    pub part: Option<Part>,
    /// The `--include` patterns the operations were selected by (recorded).
    pub include: Vec<String>,
    /// The `--exclude` patterns (recorded).
    pub exclude: Vec<String>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            budget: None,
            max_requests: None,
            seed: None,
            rate: None,
            rate_for: Vec::new(),
            burst: 1,
            concurrency: 1,
            read_only: false,
            headers: Vec::new(),
            query_keys: Vec::new(),
            auth_command: None,
            auth_refresh: None,
            identities: Vec::new(),
            auth_file: None,
            call_logout: false,
            tls: execution::tls::Tls::default(),
            timeout: Duration::from_secs(10),
            max_body: 4 * 1024 * 1024,
            retries: 3,
            skip_checks: Vec::new(),
            fail_on: Vec::new(),
            no_replay: false,
            reset: None,
            no_feedback: false,
            no_graph: false,
            suspend_after: crate::graph::feedback::DEFAULT_LAMBDA,
            mio: MioConfig::default(),
            out: PathBuf::from("cartograph-out"),
            trace_limit: execution::TRACE_LIMIT,
            verbose: false,
            events: None,
            part: None,
            include: Vec::new(),
            exclude: Vec::new(),
        }
    }
}

impl RunOptions {
    /// Whether the run sends credentials of its own or of other identities.
    pub fn sends_credentials(&self) -> bool {
        !self.headers.is_empty()
            || !self.query_keys.is_empty()
            || self.auth_command.is_some()
            || !self.identities.is_empty()
            || self.auth_file.is_some()
    }

    /// The share of `--budget` the replays after the search may use (a
    /// fifth, at most 30 s): the search gets the rest, so that the budget
    /// bounds the whole run.
    pub fn replay_reserve(&self) -> Duration {
        match self.budget {
            Some(_) if !self.no_replay => {
                crate::reproduce::phase::allowance(self.budget, self.max_requests).0
            }
            _ => Duration::ZERO,
        }
    }

    /// The search's time budget: `--budget` less the replays' reserve.
    pub fn search_budget(&self) -> Option<Duration> {
        self.budget.map(|b| b.saturating_sub(self.replay_reserve()))
    }

    /// How the engine talks to `target` under these options, in the search.
    pub fn run_config(&self, api: &Api, target: &url::Url, seed: u64) -> RunConfig {
        RunConfig {
            target: target.clone(),
            budget: self.search_budget(),
            max_requests: self.max_requests,
            seed,
            rate: self.rate,
            burst: self.burst,
            concurrency: self.concurrency.max(1),
            read_only: self.read_only,
            timeout: self.timeout,
            max_body: self.max_body,
            trace_limit: self.trace_limit,
            max_retries: self.retries,
            fence: std::sync::Arc::new(fence(api)),
            per_operation: self
                .rate_for
                .iter()
                .map(|(pattern, rate)| (*rate, named(api, pattern)))
                .collect(),
            tls: self.tls.clone(),
        }
    }

    /// An HTTP client for what a run fetches besides its requests (the
    /// description, the introspection query).
    pub fn client(&self) -> anyhow::Result<reqwest::Client> {
        Ok(execution::fetch_client(&self.tls, self.timeout)?)
    }

    /// What the search is told: these options, the seed and the target.
    pub fn search_config(&self, seed: u64, target: &url::Url) -> crate::generation::SearchConfig {
        crate::generation::SearchConfig {
            mio: self.mio(),
            seed,
            read_only: self.read_only,
            use_graph: !self.no_graph,
            max_requests: self.max_requests,
            budget: self.search_budget(),
            skip_checks: self.skip_checks.clone(),
            target: Some(target.clone()),
            identities: Vec::new(),
            main_identity: None,
        }
    }

    /// Whether answers refine the graph (`--no-feedback` and `--no-graph`
    /// turn it off).
    pub fn feedback(&self) -> bool {
        !self.no_feedback && !self.no_graph
    }

    /// The MIO parameters these options set.
    pub fn mio(&self) -> MioConfig {
        MioConfig {
            population: self.mio.population.max(1),
            random_sampling: self.mio.random_sampling.clamp(0.0, 1.0),
            focus: self.mio.focus.clamp(0.0, 1.0),
            start_mutations: self.mio.start_mutations.max(1),
            end_mutations: self.mio.end_mutations.max(1),
            max_length: self.mio.max_length.max(1),
        }
    }
}

/// One part of a larger run (the demo tests its REST API, then its GraphQL
/// endpoint): the whole lists both parts' causes in its own summary and
/// ends the events stream with one `run_finished` that agrees with its
/// merged report.
#[derive(Debug, Clone)]
pub struct Part {
    /// The whole run's events, used instead of `--events`.
    pub events: crate::reports::events::Events,
    /// Whether this is the first part, which says the seed both share.
    pub first: bool,
}

/// The operations of `api` that `pattern` names (none when it is not one).
fn named(api: &Api, pattern: &str) -> Vec<String> {
    let Ok(p) = crate::model::select::Pattern::parse(pattern) else {
        return Vec::new();
    };
    api.operations
        .iter()
        .filter(|op| p.matches(op))
        .map(|op| op.name.clone())
        .collect()
}

/// The fence around what the selection left out of `api`.
fn fence(api: &Api) -> Fence {
    let route = |op: &crate::model::Operation| {
        Method::HTTP
            .contains(&op.method)
            .then(|| Route::new(op.method.as_str(), &op.path))
    };
    Fence::new(
        api.left_out.iter().map(|op| op.name.clone()),
        api.left_out.iter().filter_map(route).collect(),
        api.operations.iter().filter_map(route).collect(),
    )
}
