//! A test as the search sees it: a sequence of calls, each an operation with a
//! gene per input (present or not, and its value), grouped into resource
//! handlings that structure mutation adds, removes, swaps and replaces whole.

use std::sync::Arc;

use serde_json::Value;

use super::templates::Template;

/// How a test (or the test it was mutated from) was first sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Sampler {
    /// One call per operation, at the start of a run.
    Initial,
    /// A call sequence from the property graph.
    Graph,
    /// Resource templates.
    Template,
    /// Random calls.
    Random,
}

impl Sampler {
    /// The samplers chosen among after the start, in a fixed order.
    pub const CHOSEN: [Sampler; 3] = [Sampler::Graph, Sampler::Template, Sampler::Random];

    /// Its name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Sampler::Initial => "initial",
            Sampler::Graph => "graph",
            Sampler::Template => "template",
            Sampler::Random => "random",
        }
    }
}

/// One input gene: whether the input is sent and with which value.
#[derive(Debug, Clone, PartialEq)]
pub struct Slot {
    /// Sent at all (always true for required inputs).
    pub present: bool,
    /// The value, used when no earlier call of the test provides one.
    pub value: Value,
}

/// One call of a test.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// Operation position in the API.
    pub op: usize,
    /// One slot per parameter of the operation, in its order.
    pub params: Vec<Slot>,
    /// The body: media type and value.
    pub body: Option<(String, Value)>,
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
pub struct TestCase {
    /// The calls.
    pub calls: Vec<Call>,
    /// The resource handlings.
    pub groups: Vec<Group>,
    /// The sampler of its first ancestor.
    pub sampler: Sampler,
    /// Seed for the choices made while it runs (suspended edges retried).
    pub seed: u64,
}

impl TestCase {
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
pub type SharedTest = Arc<TestCase>;
