//! A test as the search sees it, whatever the protocol: a sequence of calls,
//! each an operation of the model with its genes (REST parameters and body,
//! or a GraphQL call's arguments and selection), grouped into resource
//! handlings that structure mutation adds, removes, swaps and replaces whole.

use std::sync::Arc;

use super::templates::Template;

/// How a test (or the test it was mutated from) was first sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Sampler {
    /// One call per operation, at the start of a run.
    Initial,
    /// A call sequence from the property graph (for GraphQL, a call and
    /// the mutations the graph says create what it needs).
    Graph,
    /// Resource templates.
    Template,
    /// Random calls.
    Random,
    /// A test that reached an operation, with one input made invalid or
    /// unusual (the negative and boundary tests).
    Negative,
}

impl Sampler {
    /// The samplers chosen among after the start, in a fixed order.
    pub const CHOSEN: [Sampler; 3] = [Sampler::Graph, Sampler::Template, Sampler::Random];

    /// Every sampler, in the order of [`Sampler::index`].
    pub const ALL: [Sampler; 5] = [
        Sampler::Initial,
        Sampler::Graph,
        Sampler::Template,
        Sampler::Random,
        Sampler::Negative,
    ];

    /// Its name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Sampler::Initial => "initial",
            Sampler::Graph => "graph",
            Sampler::Template => "template",
            Sampler::Random => "random",
            Sampler::Negative => "negative",
        }
    }

    /// Its position in per-sampler counters.
    pub fn index(self) -> usize {
        match self {
            Sampler::Initial => 0,
            Sampler::Graph => 1,
            Sampler::Template => 2,
            Sampler::Random => 3,
            Sampler::Negative => 4,
        }
    }
}

/// One call of a test: an operation and its genes.
#[derive(Debug, Clone, PartialEq)]
pub struct Call<G> {
    /// Operation position in the API.
    pub op: usize,
    /// The protocol's genes: what the call sends when no earlier call of the
    /// test gives a value.
    pub genes: G,
    /// Take inputs from earlier calls of the test when the graph (or a
    /// `Location`) says where they come from; mutation turns it off rarely, to
    /// try the call with its own values.
    pub bind: bool,
    /// Whether later calls rely on what this one creates: when it fails, the
    /// rest of the test is skipped.
    pub creates: bool,
    /// The resource handling it belongs to.
    pub group: u32,
}

impl<G> Call<G> {
    /// A call of `op` in group 0 that takes earlier values and creates
    /// nothing the rest relies on.
    pub fn of(op: usize, genes: G) -> Call<G> {
        Call {
            op,
            genes,
            bind: true,
            creates: false,
            group: 0,
        }
    }
}

/// A resource handling's template, by group.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// The group id (as in [`Call::group`]).
    pub id: u32,
    /// The template it was made from, when it was.
    pub template: Option<Template>,
    /// The operation the handling is about (its last call).
    pub target: usize,
}

/// A test: calls in order, and how it came about.
#[derive(Debug, Clone, PartialEq)]
pub struct TestCase<G> {
    /// The calls.
    pub calls: Vec<Call<G>>,
    /// The resource handlings.
    pub groups: Vec<Group>,
    /// The sampler of its first ancestor.
    pub sampler: Sampler,
    /// Seed for the choices made while it runs (suspended edges retried).
    pub seed: u64,
}

impl<G> TestCase<G> {
    /// A test of these calls, from `sampler`, not grouped.
    pub fn of(calls: Vec<Call<G>>, sampler: Sampler, seed: u64) -> TestCase<G> {
        TestCase {
            calls,
            groups: Vec::new(),
            sampler,
            seed,
        }
    }

    /// Number of calls.
    pub fn len(&self) -> usize {
        self.calls.len()
    }

    /// Whether it has no calls.
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// A fresh group id.
    pub fn next_group(&self) -> u32 {
        self.groups.iter().map(|g| g.id + 1).max().unwrap_or(0)
    }

    /// Drops groups that lost all their calls.
    pub fn prune_groups(&mut self) {
        let calls = &self.calls;
        self.groups
            .retain(|g| calls.iter().any(|c| c.group == g.id));
    }
}

/// A test shared between the archive and tests in flight.
pub type SharedTest<G> = Arc<TestCase<G>>;
