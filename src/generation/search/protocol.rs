//! The seam between the search and a protocol: what a REST or GraphQL API
//! brings to the one search. The search owns MIO (initial tests, sampling or
//! mutating, chains, the archive), the oracles' verdicts, the budget and the
//! graph's feedback state; a protocol owns its genes: how a call of an
//! operation is sampled and mutated, how a test's calls become requests (with
//! the values earlier answers give), and how an answer is read (targets
//! reached, what it teaches the graph).

use serde_json::Value;

use super::context::{Cx, SearchConfig};
use crate::execution::{Exchange, TestRun};
use crate::generation::test::{Call, TestCase};
use crate::model::Api;
use crate::oracles::Finding;

/// A protocol the search can drive.
pub trait Protocol: Send + 'static {
    /// The genes of one call.
    type Genes: Clone + PartialEq + std::fmt::Debug + Send + Sync + 'static;
    /// A test being run: it builds each request from the genes and the
    /// answers so far.
    type Run: TestRun;

    /// Whether an archived test is mutated several times in a row (a chain
    /// whose length anneals from `start_mutations` to `end_mutations`), or
    /// once per pick.
    const CHAINS: bool;

    /// The operations of `api` tests may call under `config` (read-only
    /// mode, say), in the order random picks index into.
    fn operations(&self, api: &Api, config: &SearchConfig) -> Vec<usize>;

    /// The operations of the first tests, one each, in order, among `ops`.
    fn initial_order(&self, api: &Api, ops: &[usize]) -> Vec<usize>;

    /// The first test of an operation: one call.
    fn initial(&mut self, cx: &mut Cx, op: usize) -> TestCase<Self::Genes>;

    /// A new test.
    fn sample(&mut self, cx: &mut Cx) -> TestCase<Self::Genes>;

    /// The next negative or boundary test (one input of a call made invalid
    /// or unusual), while there are any left to try.
    fn negative(&mut self, _cx: &mut Cx) -> Option<TestCase<Self::Genes>> {
        None
    }

    /// Whether the edge pass has (input, class of value) pairs left that
    /// have not had a value: then negative tests come first.
    fn edges_left(&self, _cx: &Cx) -> bool {
        false
    }

    /// Per class of value the negative tests sent, what it reached and broke.
    fn edge_classes(
        &self,
    ) -> std::collections::BTreeMap<String, crate::generation::search::edges::ClassTally> {
        Default::default()
    }

    /// The constraints learnt so far from descriptions and refusals.
    fn learnt(&self) -> Vec<crate::generation::constraints::Learnt> {
        Vec::new()
    }

    /// The values answers gave, as (field name, text), that the generator
    /// still holds: what a reproducer sends without making is told from
    /// them.
    fn given(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// A mutant of an archived test.
    fn mutate(&mut self, cx: &mut Cx, base: &TestCase<Self::Genes>) -> TestCase<Self::Genes>;

    /// Starts running a test; `follow_ups` adds the requests the stateful
    /// oracles need (none when the final suite is recorded).
    fn start(&mut self, cx: &mut Cx, test: TestCase<Self::Genes>, follow_ups: bool) -> Self::Run;

    /// What a finished test teaches: the graph's feedback, the protocol's
    /// own memory, and the testing targets its answers reached (in order:
    /// the archive prefers targets it met first).
    fn learn(
        &mut self,
        cx: &mut Cx,
        run: &Self::Run,
        exchanges: &[Exchange],
        findings: &[Vec<Finding>],
    ) -> Vec<(String, f64)>;

    /// The test as it ran, for the archive: only the calls that were sent.
    fn ran(run: Self::Run, exchanges: &[Exchange]) -> TestCase<Self::Genes>;

    /// A call's inputs as `suite.json` lists them (an object whose fields
    /// follow the operation's name, method and path).
    fn describe(&self, cx: &Cx, call: &Call<Self::Genes>) -> Value;
}
