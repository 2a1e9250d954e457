//! REST through the one search: a call's genes are its parameters (each sent
//! or not, with a value) and its body; calls are sampled with Morest's
//! parameter rules from the graph's sequences, resource templates or at
//! random, mutated by EvoMaster's operators, sent with the values earlier
//! answers give ([`run`]), and read by status and body (`learn`).
//!
//! Its files pair with [`crate::generation::graphql`]'s by job: `request`,
//! `sample`, `mutate`, `negative`, `run` and `learn`; what only REST has
//! (`edge_values`, `paths`, `learnt`, `verdicts`) is named for what it holds.

pub mod edge_values;
mod learn;
pub mod learnt;
mod mutate;
pub mod negative;
mod paths;
pub mod request;
pub mod run;
mod sample;
pub mod verdicts;

use std::sync::Arc;

use serde_json::Value;

use super::plan::Plan;
use super::pool::{POOL_DEPTH, ValuePool};
use super::search::{Cx, Protocol, Search, SearchConfig};
use super::test::{Call, TestCase};
use crate::execution::Exchange;
use crate::graph::PropertyGraph;
use crate::graph::feedback::Feedback;
use crate::model::{Api, Method};
use crate::oracles::Finding;

pub use run::FlowRun;

/// One input gene: whether the input is sent and with which value.
#[derive(Debug, Clone, PartialEq)]
pub struct Slot {
    /// Sent at all (always true for required inputs).
    pub present: bool,
    /// The value, used when no earlier call of the test provides one.
    pub value: Value,
}

/// A REST call's genes.
#[derive(Debug, Clone, PartialEq)]
pub struct Genes {
    /// One slot per parameter of the operation, in its order.
    pub params: Vec<Slot>,
    /// The body: media type and value.
    pub body: Option<(String, Value)>,
    /// For a negative test's last call: the one input it gets wrong,
    /// applied after earlier calls' values are bound.
    pub breach: Option<negative::NegativeInput>,
}

/// A REST call.
pub type RestCall = Call<Genes>;

/// A REST test.
pub type RestTest = TestCase<Genes>;

/// The REST protocol's memory across tests: the graph's advice, the values
/// answers gave, and each operation's last successful call.
pub struct Rest {
    plan: Arc<Plan>,
    pool: ValuePool,
    last_success: Vec<Option<RestCall>>,
    negatives: negative::Negatives,
    /// Constraints read from prose and refusals, which values keep.
    constraints: Arc<learnt::Constraints>,
    /// Which values work, per input, as the answers showed.
    verdicts: verdicts::Verdicts,
}

impl Rest {
    /// The REST protocol for `api`, advised by `graph` (not at all for
    /// `--no-graph`: values then flow only by name and through `Location`).
    pub fn new(api: &Api, graph: &PropertyGraph, config: &SearchConfig) -> Rest {
        let plan = if config.use_graph {
            Plan::from_graph(api, graph)
        } else {
            Plan::empty(api)
        };
        Rest {
            plan: Arc::new(plan),
            pool: ValuePool::new(POOL_DEPTH),
            last_success: vec![None; api.operations.len()],
            negatives: negative::Negatives::new(api.operations.len()),
            constraints: Arc::new(learnt::Constraints::from_descriptions(api)),
            verdicts: verdicts::Verdicts::new(api),
        }
    }
}

impl Search<Rest> {
    /// The search over a REST `api` with its `graph`; with `feedback`, the
    /// graph is refined from the answers.
    pub fn rest(
        api: Arc<Api>,
        graph: PropertyGraph,
        feedback: Option<Feedback>,
        config: SearchConfig,
    ) -> Search<Rest> {
        let protocol = Rest::new(&api, &graph, &config);
        // Which property each path parameter takes, for the identity
        // planner (only when it plans: with a second identity).
        let properties = (!config.identities.is_empty()).then(|| {
            (0..api.operations.len())
                .map(|op| {
                    api.operations[op]
                        .parameters
                        .iter()
                        .filter(|p| p.location == crate::model::Location::Path)
                        .filter_map(|p| {
                            paths::path_property(&protocol.plan, &api, op, &p.name)
                                .map(|v| (p.name.clone(), v))
                        })
                        .collect()
                })
                .collect()
        });
        let mut search = Search::new(protocol, api, graph, feedback, config);
        if let Some(properties) = properties {
            search.advise_identities(properties);
        }
        search
    }
}

/// Creations first, deletions last: the first calls leave ids for the later ones.
fn rank(m: Method) -> u8 {
    match m {
        Method::Post | Method::GraphqlMutation => 0,
        Method::Put => 1,
        Method::Get | Method::GraphqlQuery | Method::Head | Method::Options => 2,
        Method::Patch => 3,
        Method::Delete => 5,
        _ => 4,
    }
}

impl Protocol for Rest {
    type Genes = Genes;
    type Run = FlowRun;
    const CHAINS: bool = true;

    fn operations(&self, api: &Api, config: &SearchConfig) -> Vec<usize> {
        (0..api.operations.len())
            .filter(|&i| {
                let m = api.operations[i].method;
                !matches!(m, Method::GraphqlSubscription | Method::Trace)
                    && (!config.read_only || m.is_safe())
            })
            .collect()
    }

    fn initial_order(&self, api: &Api, ops: &[usize]) -> Vec<usize> {
        let mut initial = ops.to_vec();
        // Parents before children: an operation whose path names more
        // ids comes after those that list or create them, so that its
        // first call can take real ones.
        initial.sort_by_key(|&i| {
            let op = &api.operations[i];
            let ids = op.path.matches('{').count();
            (ids, rank(op.method), op.path.matches('/').count(), i)
        });
        initial
    }

    fn initial(&mut self, cx: &mut Cx, op: usize) -> RestTest {
        self.initial_test(cx, op)
    }

    fn sample(&mut self, cx: &mut Cx) -> RestTest {
        self.sample_test(cx)
    }

    fn negative(&mut self, cx: &mut Cx) -> Option<RestTest> {
        self.negative_test(cx)
    }

    fn mutate(&mut self, cx: &mut Cx, base: &RestTest) -> RestTest {
        self.mutate_test(cx, base)
    }

    fn start(&mut self, cx: &mut Cx, mut test: RestTest, follow_ups: bool) -> FlowRun {
        self.apply_verdicts(cx, &mut test);
        let probes = if follow_ups { run::PROBE } else { 0.0 };
        FlowRun::new(cx.api.clone(), self.plan.clone(), test)
            .with_probes(probes, cx.config.target.clone())
            .with_constraints(self.constraints.clone())
    }

    fn learn(
        &mut self,
        cx: &mut Cx,
        run: &FlowRun,
        exchanges: &[Exchange],
        findings: &[Vec<Finding>],
    ) -> Vec<(String, f64)> {
        self.learn_from(cx, run, exchanges);
        self.targets(cx, run, exchanges, findings)
    }

    fn ran(run: FlowRun, _exchanges: &[Exchange]) -> RestTest {
        // The archive keeps only the calls that ran (a test stopped early is
        // as long as what it did).
        let ran: std::collections::HashSet<usize> = run.sent.iter().copied().collect();
        let mut test = run.test;
        if ran.len() < test.calls.len() {
            let mut k = 0;
            test.calls.retain(|_| {
                k += 1;
                ran.contains(&(k - 1))
            });
            test.prune_groups();
        }
        test
    }

    fn edges_left(&self, cx: &Cx) -> bool {
        self.negatives.edges_left(&cx.ops)
    }

    fn edge_classes(
        &self,
    ) -> std::collections::BTreeMap<String, crate::generation::search::edges::ClassTally> {
        self.negatives.tallies()
    }

    fn learnt(&self) -> Vec<crate::generation::constraints::Learnt> {
        self.constraints.learnt.clone()
    }

    fn given(&self) -> Vec<(String, String)> {
        self.pool.given()
    }

    fn describe(&self, cx: &Cx, call: &RestCall) -> Value {
        let op = &cx.api.operations[call.op];
        let inputs: Vec<Value> = op
            .parameters
            .iter()
            .zip(&call.genes.params)
            .filter(|(_, s)| s.present)
            .map(|(p, s)| {
                serde_json::json!({
                    "in": p.location.as_str(),
                    "name": p.name,
                    "value": s.value,
                })
            })
            .collect();
        let mut out = serde_json::json!({
            "parameters": inputs,
            "takes_earlier_values": call.bind,
        });
        if let Some((mime, body)) = &call.genes.body {
            out["content_type"] = mime.clone().into();
            out["body"] = body.clone();
        }
        if let Some(b) = &call.genes.breach {
            out["breach"] = serde_json::to_value(&b.note).unwrap_or_default();
        }
        out
    }
}
