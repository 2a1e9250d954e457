//! What the search shares with its protocol: the API and its graph (refined
//! by feedback), the random source, the budget spent, the operations the run
//! may call, the graph's call sequences, the resource templates, and what
//! each sampler has earned.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::Rng;
use rand::seq::SliceRandom;

use super::mio::MioConfig;
use crate::generation::mutation::Heat;
use crate::generation::sequences::call_sequences;
use crate::generation::templates::Resources;
use crate::generation::test::Sampler;
use crate::generation::values::Rng64;
use crate::graph::feedback::{Change, Feedback};
use crate::graph::{EdgeState, PropertyGraph};
use crate::model::Api;

/// Most call sequences kept from the graph.
const MAX_SEQUENCES: usize = 2_000;

/// Tests between two rebuilds of the call sequences after the graph changed
/// (a rebuild costs milliseconds; edges flap between suspended and active).
pub const RESEQUENCE_EVERY: u64 = 500;

/// What the search is told about the run.
#[derive(Debug, Clone)]
pub struct SearchConfig {
    /// MIO's parameters.
    pub mio: MioConfig,
    /// Seed of every choice.
    pub seed: u64,
    /// Only operations that cannot change state.
    pub read_only: bool,
    /// Use the property graph (false: the `--no-graph` ablation).
    pub use_graph: bool,
    /// The run's request cap, which measures the budget spent when set.
    pub max_requests: Option<u64>,
    /// The run's time budget, which measures it otherwise.
    pub budget: Option<Duration>,
    /// Oracles turned off (their faults are not targets either).
    pub skip_checks: Vec<crate::oracles::registry::Code>,
    /// The run's target, to follow `Location` headers under it.
    pub target: Option<url::Url>,
    /// The identities besides the run's own (none: no identity tests).
    pub identities: Vec<String>,
    /// The run's own identity's name, as findings name it (`None`: `main`).
    pub main_identity: Option<String>,
}

/// The search's shared state, lent to the protocol while it samples,
/// mutates, starts and learns from tests.
pub struct Cx {
    /// The API.
    pub api: Arc<Api>,
    /// The property graph, as the answers so far refined it.
    pub graph: PropertyGraph,
    /// The feedback loop (none for `--no-graph` and `--no-feedback`).
    pub feedback: Option<Feedback>,
    /// What feedback changed in the graph, in order.
    pub changes: Vec<Change>,
    /// The run's settings.
    pub config: SearchConfig,
    /// Every random choice of the search draws from this.
    pub rng: Rng64,
    /// The operations tests may call, in the order random picks index into.
    pub ops: Vec<usize>,
    /// The graph's call sequences (Morest), rebuilt when the graph changes.
    pub sequences: Vec<Vec<usize>>,
    /// Next sequence to sample.
    cursor: usize,
    /// When the graph changed since the sequences were built (tests run then).
    stale_since: Option<u64>,
    /// Which edges existed and were active when the sequences were built.
    sequenced_shape: Vec<(usize, bool)>,
    /// The resource templates that apply to each operation.
    pub resources: Resources,
    /// When the search started.
    pub started: Instant,
    /// Requests finished tests sent.
    pub requests: u64,
    /// Tests finished.
    pub tests: u64,
    /// Tests sampled per sampler ([`Sampler::index`]).
    pub sampled: [u64; 5],
    /// Archive improvements per sampler of origin.
    pub improvements: [u64; 5],
    /// Per consumes link (schema, operation): values passed along it, the
    /// consumer's successes after them, and its other answers.
    pub link_flows: std::collections::BTreeMap<(String, String), LinkFlow>,
    /// Whether the edge pass is on: negative tests then give each
    /// operation the first value of its (input, class) pairs only.
    pub edge_pass: bool,
}

/// What became of the values passed along one consumes link.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LinkFlow {
    /// Values passed along it.
    pub flows: u64,
    /// Of those, how many the consumer then answered with success.
    pub successes: u64,
    /// The consumer's other answers to them, by what it said (a status,
    /// or for GraphQL `errors`, `no data`).
    pub refusals: std::collections::BTreeMap<String, u64>,
}

impl Cx {
    /// The shared state of a search over `api` calling `ops`.
    pub fn new(
        api: Arc<Api>,
        graph: PropertyGraph,
        feedback: Option<Feedback>,
        config: SearchConfig,
        ops: Vec<usize>,
    ) -> Cx {
        let allowed: Vec<bool> = (0..api.operations.len())
            .map(|i| ops.contains(&i))
            .collect();
        let resources = Resources::new(&api, &|i| allowed[i]);
        let mut cx = Cx {
            rng: <Rng64 as rand::SeedableRng>::seed_from_u64(config.seed),
            feedback: if config.use_graph { feedback } else { None },
            changes: Vec::new(),
            ops,
            sequences: Vec::new(),
            cursor: 0,
            stale_since: None,
            sequenced_shape: Vec::new(),
            resources,
            started: Instant::now(),
            requests: 0,
            tests: 0,
            sampled: [0; 5],
            improvements: [0; 5],
            link_flows: Default::default(),
            edge_pass: false,
            api,
            graph,
            config,
        };
        cx.resequence();
        cx
    }

    /// Counts one value passed from `schema` into `operation`, which then
    /// answered with success, or refused it with `answer` (a status, or
    /// what a GraphQL answer held).
    pub fn link_flowed(&mut self, schema: &str, operation: &str, success: bool, answer: &str) {
        let key = (schema.to_string(), operation.to_string());
        let entry = match self.link_flows.get_mut(&key) {
            Some(e) => e,
            None => self.link_flows.entry(key).or_default(),
        };
        entry.flows += 1;
        if success {
            entry.successes += 1;
        } else {
            match entry.refusals.get_mut(answer) {
                Some(n) => *n += 1,
                None => {
                    entry.refusals.insert(answer.to_string(), 1);
                }
            }
        }
    }

    /// The share of the budget spent: by requests when they are capped (so a
    /// seeded run repeats exactly), else by the clock.
    pub fn spent(&self) -> f64 {
        if let Some(max) = self.config.max_requests {
            return self.requests as f64 / max.max(1) as f64;
        }
        if let Some(b) = self.config.budget {
            return self.started.elapsed().as_secs_f64() / b.as_secs_f64().max(1e-9);
        }
        self.requests as f64 / 100_000.0
    }

    /// How far mutation has cooled: the budget spent over the focus point.
    pub fn heat(&self) -> Heat {
        let focus = self.config.mio.focus;
        Heat {
            progress: if focus <= 0.0 {
                1.0
            } else {
                (self.spent() / focus).min(1.0)
            },
        }
    }

    /// A random operation among those tests may call.
    pub fn random_op(&mut self) -> usize {
        self.ops[self.rng.random_range(0..self.ops.len())]
    }

    /// Notes that feedback changed the graph: the call sequences are rebuilt
    /// within [`RESEQUENCE_EVERY`] tests.
    pub fn graph_changed(&mut self) {
        self.stale_since.get_or_insert(self.tests);
    }

    /// Rebuilds the call sequences when the graph changed long enough ago.
    pub(super) fn resequence_if_stale(&mut self) {
        if self
            .stale_since
            .is_some_and(|since| self.tests >= since + RESEQUENCE_EVERY)
        {
            self.resequence();
        }
    }

    /// Rebuilds the graph's call sequences (after the graph changed).
    fn resequence(&mut self) {
        self.stale_since = None;
        if !self.config.use_graph {
            self.sequences.clear();
            return;
        }
        // Sequences depend only on which edges exist and are active.
        let shape: Vec<(usize, bool)> = self
            .graph
            .graph
            .edge_indices()
            .map(|e| (e.index(), self.graph.graph[e].state == EdgeState::Active))
            .collect();
        if shape == self.sequenced_shape && !self.sequences.is_empty() {
            return;
        }
        self.sequenced_shape = shape;
        let allowed: Vec<bool> = (0..self.api.operations.len())
            .map(|i| self.ops.contains(&i))
            .collect();
        self.sequences = call_sequences(
            &self.api,
            &self.graph,
            self.config.mio.max_length,
            MAX_SEQUENCES,
            &|i| allowed[i],
        );
        self.cursor = 0;
    }

    /// The next call sequence of the graph: every one once, in a seeded
    /// order, before any repeats. None when the graph gives none.
    pub fn next_sequence(&mut self) -> Option<Vec<usize>> {
        if self.sequences.is_empty() {
            return None;
        }
        if self.cursor.is_multiple_of(self.sequences.len()) {
            self.sequences.shuffle(&mut self.rng);
        }
        let seq = self.sequences[self.cursor % self.sequences.len()].clone();
        self.cursor += 1;
        Some(seq)
    }

    /// A sampler among `choices`, each weighted by 1 + the archive
    /// improvements its tests made so far (the resource paper's
    /// archive-based strategy); counted as sampled.
    pub fn choose_sampler(&mut self, choices: &[Sampler]) -> Sampler {
        let weighted: Vec<(Sampler, f64)> = choices
            .iter()
            .map(|s| (*s, 1.0 + self.improvements[s.index()] as f64))
            .collect();
        let total: f64 = weighted.iter().map(|(_, w)| w).sum();
        let mut x = self.rng.random_range(0.0..total);
        let mut sampler = weighted[weighted.len() - 1].0;
        for (s, w) in &weighted {
            if x < *w {
                sampler = *s;
                break;
            }
            x -= w;
        }
        self.sampled[sampler.index()] += 1;
        sampler
    }
}
