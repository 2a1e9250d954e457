//! Running one REST test: each call's request is built when its turn comes, from
//! its genes and from what the earlier calls of the same test returned (values
//! flow along the graph's consumes edges, through `Location` headers into the
//! paths below the collection they point into, and by field name).

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use serde_json::Value;

use super::RestTest;
use super::request::{Inputs, build_request};
use crate::execution::wire::encode_segment;
use crate::execution::{Exchange, RequestSpec, TestRun};
use crate::generation::plan::{Plan, RETRY_SUSPENDED, Source};
use crate::generation::pool::{ValuePool, location_key, member_key};
use crate::generation::values::Rng64;
use crate::model::{Api, Location};

/// Probability of taking an input with no graph source from an earlier
/// response field of the same name.
const BY_NAME: f64 = 0.5;

/// Probability of following a successful call with the requests the stateful
/// oracles need (GET after DELETE, GET of a created item or `Location`, the
/// same PUT or DELETE again). Each costs a request; a fault of this kind
/// shows on its first follow-up, so a quarter finds it within a few tests.
pub const PROBE: f64 = 0.25;

/// A test being run.
pub struct FlowRun {
    api: Arc<Api>,
    plan: Arc<Plan>,
    /// The test.
    pub test: RestTest,
    /// Per call run so far: (call index, values its response gave).
    flows: Vec<(usize, ValuePool)>,
    rng: Rng64,
    next: usize,
    harvested: usize,
    /// Per request sent: the call it came from.
    pub sent: Vec<usize>,
    /// Per request sent: the schemas whose values (from earlier calls of this
    /// test) fed it through consumes edges, with the call that gave each.
    pub used: Vec<Vec<(String, usize)>>,
    /// Per request sent: the graph's links whose value (from the call
    /// given) a chain of path ids sent instead (`FlowRun::credit`); they
    /// count as carried in the links' tally, not as targets of the search.
    pub carried: Vec<Vec<(String, usize)>>,
    /// Per request sent: whether it is a follow-up for the stateful oracles
    /// rather than one of the test's calls (then `sent` names the call it follows).
    pub probes: Vec<bool>,
    /// Per request sent: its inputs as sent (empty for follow-ups).
    pub inputs: Vec<super::verdicts::Sent>,
    pending: std::collections::VecDeque<RequestSpec>,
    probe_rate: f64,
    target: Option<url::Url>,
    constraints: Arc<super::learnt::Constraints>,
}

impl FlowRun {
    /// A run of `test` with the graph's advice `plan`.
    pub fn new(api: Arc<Api>, plan: Arc<Plan>, test: RestTest) -> FlowRun {
        FlowRun {
            rng: Rng64::seed_from_u64(test.seed),
            api,
            plan,
            test,
            flows: Vec::new(),
            next: 0,
            harvested: 0,
            sent: Vec::new(),
            used: Vec::new(),
            carried: Vec::new(),
            probes: Vec::new(),
            inputs: Vec::new(),
            pending: Default::default(),
            probe_rate: PROBE,
            target: None,
            constraints: Default::default(),
        }
    }

    /// Keeps the constraints learnt so far in the values it sends.
    pub fn with_constraints(mut self, constraints: Arc<super::learnt::Constraints>) -> FlowRun {
        self.constraints = constraints;
        self
    }

    /// Follows successful calls with stateful follow-ups with probability
    /// `rate`; `target` resolves `Location` headers.
    pub fn with_probes(mut self, rate: f64, target: Option<url::Url>) -> FlowRun {
        self.probe_rate = rate;
        self.target = target;
        self
    }

    /// The follow-ups a successful call earns, if the dice say so.
    fn schedule_probes(&mut self, call: usize, ex: &Exchange) {
        if !ex.is_success() || self.probe_rate <= 0.0 {
            return;
        }
        let api = self.api.clone();
        let op = &api.operations[self.test.calls[call].op];
        let path = ex.request.path.split('?').next().unwrap_or("");
        let get_at = |template: &str| {
            api.operations
                .iter()
                .find(|o| o.method == crate::model::Method::Get && o.path == template)
        };
        let get = |op_name: &str, path: &str| RequestSpec {
            operation: op_name.to_string(),
            method: "GET".into(),
            path: path.to_string(),
            headers: ex.request.headers.clone(),
            body: None,
            content_type: None,
            graphql_query: false,
            breach: None,
            identity: None,
        };
        let mut follow = Vec::new();
        match ex.request.method.as_str() {
            "DELETE" => {
                if let Some(g) = get_at(&op.path) {
                    follow.push(get(&g.name, path));
                }
                follow.push(ex.request.clone());
            }
            "PUT" => follow.push(ex.request.clone()),
            "POST" => {
                let located = ex.header("location").and_then(|l| match &self.target {
                    Some(t) => crate::execution::target_relative(t, l),
                    None => l.starts_with('/').then(|| l.to_string()),
                });
                if let Some(at) = located {
                    let name = api
                        .operations
                        .iter()
                        .find(|o| {
                            o.method == crate::model::Method::Get
                                && crate::execution::wire::template_fit(&o.path, &at).is_some()
                        })
                        .map_or_else(|| format!("{} (Location)", op.name), |o| o.name.clone());
                    follow.push(get(&name, &at));
                } else if let Some(body) = ex.json() {
                    let item = api.operations.iter().enumerate().find_map(|(k, o)| {
                        let rest = o.path.strip_prefix(op.path.trim_end_matches('/'))?;
                        let name = rest.strip_prefix("/{")?.strip_suffix('}')?;
                        (o.method == crate::model::Method::Get && !name.contains('/'))
                            .then_some((k, name))
                    });
                    // The created item at its path: by the property the
                    // path takes (a pool's name), else by its id.
                    let id = item.and_then(|(k, name)| {
                        match super::paths::path_property(&self.plan, &api, k, name) {
                            Some(p) => crate::generation::pool::made_object(body)?
                                .get(&p)
                                .filter(|v| v.is_string() || v.is_number()),
                            None => crate::execution::wire::body_id(body),
                        }
                    });
                    if let (Some((k, _)), Some(id)) = (item, id)
                        && fits_a_segment(id)
                    {
                        let at = format!("{}/{}", path.trim_end_matches('/'), encode_segment(id));
                        follow.push(get(&api.operations[k].name, &at));
                    }
                }
            }
            _ => {}
        }
        if !follow.is_empty() && self.rng.random_bool(self.probe_rate.min(1.0)) {
            self.pending.extend(follow);
        }
    }

    /// The latest value under `key` from the calls run so far, and the call.
    fn latest(&self, key: &str) -> Option<(Value, usize)> {
        self.flows
            .iter()
            .rev()
            .find_map(|(call, pool)| pool.latest(key).map(|v| (v.clone(), *call)))
    }

    /// The value an earlier call of the test gives input `(location, name)` of
    /// operation `op`, noting the schema it came through and the call.
    fn flowed(
        &mut self,
        op: usize,
        location: Location,
        name: &str,
        used: &mut Vec<(String, usize)>,
    ) -> Option<Value> {
        let plan = self.plan.clone();
        if let Some(sources) = plan.sources[op].get(&(location, name.to_string())) {
            // The value from the latest call that gave one wins (the book just
            // patched, not an order's book from earlier); among sources fed by
            // the same call, the plan's order (spec, inferred, observed).
            let mut best: Option<(Value, usize, &Source)> = None;
            for s in sources {
                if !s.active && !self.rng.random_bool(RETRY_SUSPENDED) {
                    continue;
                }
                if let Some((v, call)) = self.latest(&s.key)
                    && best.as_ref().is_none_or(|(_, c, _)| call > *c)
                {
                    best = Some((v, call, s));
                }
            }
            let (v, call, s) = best?;
            if !used.iter().any(|(u, _)| u == &s.schema) {
                used.push((s.schema.clone(), call));
            }
            return Some(v);
        }
        if name != "id" && self.rng.random_bool(BY_NAME) {
            return self.latest(name).map(|(v, _)| v);
        }
        None
    }

    /// Chooses the values of `op_i`'s path parameters, left to right, into
    /// `chosen`: what earlier calls of the test gave when `bind`, else the
    /// call's own values; `flowed` says which came from earlier calls.
    /// Returns the links a chain's value was credited to ([`FlowRun::credit`]).
    fn path_values(
        &mut self,
        op_i: usize,
        slots: &[super::Slot],
        bind: bool,
        used: &mut Vec<(String, usize)>,
        chosen: &mut [Option<Value>],
        flowed: &mut [bool],
    ) -> Vec<(String, usize)> {
        let mut carried = Vec::new();
        let api = self.api.clone();
        let op = &api.operations[op_i];
        let segments: Vec<&str> = op.path.split('/').filter(|s| !s.is_empty()).collect();
        let mut prefix = String::new();
        let mut child = false;
        for (k, seg) in segments.iter().enumerate() {
            let name = seg.strip_prefix('{').and_then(|s| s.strip_suffix('}'));
            let Some(name) = name else {
                prefix.push('/');
                prefix.push_str(seg);
                continue;
            };
            let Some(j) = op
                .parameters
                .iter()
                .position(|p| p.location == Location::Path && p.name == name)
            else {
                prefix.push_str("/{");
                prefix.push_str(name);
                prefix.push('}');
                continue;
            };
            let mut v = None;
            if bind {
                // By the property the path takes (a pool's name), as the
                // sampler chose: an earlier call's id would replace a name
                // with an id.
                let key = match super::paths::path_property(&self.plan, &api, op_i, name) {
                    Some(p) => member_key(&prefix, &p),
                    None => location_key(&prefix),
                };
                // A parent under which an earlier call made or listed
                // children, when a child follows; a child made or listed
                // under the parent chosen. Values the graph passes come
                // from any object of their schema, so they come after (and
                // their link is credited when they are the value sent).
                let below = super::paths::below_to_next_id(&segments[k + 1..]);
                let mut chained = None;
                if let Some(below) = &below {
                    chained = self.chain_parent(&prefix, below);
                }
                if chained.is_none() && child {
                    chained = self.latest(&key).map(|(v, _)| v).filter(fits_a_segment);
                }
                if let Some(c) = &chained {
                    self.credit(op_i, name, c, &mut carried);
                    v = chained;
                } else {
                    v = self
                        .flowed(op_i, Location::Path, name, used)
                        .filter(fits_a_segment);
                }
                if v.is_none() && !child {
                    v = self.latest(&key).map(|(v, _)| v).filter(fits_a_segment);
                }
            }
            child = true;
            flowed[j] = v.is_some();
            let v = v.unwrap_or_else(|| {
                let own = slots[j].value.clone();
                if fits_a_segment(&own) {
                    return own;
                }
                // Descriptions do give `example: ""` for path parameters.
                (0..8)
                    .map(|_| {
                        crate::generation::values::value_for(
                            &api,
                            &op.parameters[j].schema,
                            &mut self.rng,
                        )
                    })
                    .find(fits_a_segment)
                    .unwrap_or_else(|| Value::String("1".into()))
            });
            prefix.push('/');
            prefix.push_str(&encode_segment(&v));
            chosen[j] = Some(v);
        }
        carried
    }

    /// Notes in `carried` the graph's links into path parameter `name` of
    /// `op` whose latest value from an earlier call is `value`, the one a
    /// chain gave: they carried it too.
    fn credit(&self, op: usize, name: &str, value: &Value, carried: &mut Vec<(String, usize)>) {
        let Some(sources) = self.plan.sources[op].get(&(Location::Path, name.to_string())) else {
            return;
        };
        let text = crate::execution::wire::as_text(value);
        for s in sources.iter().filter(|s| s.active) {
            if let Some((v, call)) = self.latest(&s.key)
                && crate::execution::wire::as_text(&v) == text
                && !carried.iter().any(|(u, _)| u == &s.schema)
            {
                carried.push((s.schema.clone(), call));
            }
        }
    }

    /// The parent (a segment of the collection at `collection`) under
    /// which the latest call that did made or listed members of `below`:
    /// `/pools/P/queues` makes `P` the parent of its queues.
    fn chain_parent(&self, collection: &str, below: &str) -> Option<Value> {
        self.flows.iter().rev().find_map(|(_, pool)| {
            pool.parents_with_children(collection, below)
                .into_iter()
                .find(fits_a_segment)
        })
    }

    /// Whether a path parameter an earlier call gave a new value sits above
    /// one no call gave (the call's own value, chosen under another parent).
    fn half_bound(
        &self,
        op: &crate::model::Operation,
        slots: &[super::Slot],
        chosen: &[Option<Value>],
        flowed: &[bool],
    ) -> bool {
        let mut moved = false;
        for seg in op.path.split('/') {
            let Some(name) = seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) else {
                continue;
            };
            let Some(j) = op
                .parameters
                .iter()
                .position(|p| p.location == Location::Path && p.name == name)
            else {
                continue;
            };
            if !flowed[j] {
                if moved {
                    return true;
                }
                continue;
            }
            let same = chosen[j].as_ref().is_some_and(|v| {
                crate::execution::wire::as_text(v)
                    == crate::execution::wire::as_text(&slots[j].value)
            });
            moved |= !same;
        }
        false
    }

    fn request(&mut self, index: usize) -> RequestSpec {
        let api = self.api.clone();
        let call = &self.test.calls[index];
        let (op_i, bind) = (call.op, call.bind);
        let op = &api.operations[op_i];
        let slots = call.genes.params.clone();
        let mut body = call.genes.body.clone();
        let mut used = Vec::new();
        let mut inputs = Inputs::default();
        let mut chosen: Vec<Option<Value>> = vec![None; op.parameters.len()];
        let mut flowed = vec![false; op.parameters.len()];

        // Path parameters left to right, so that each knows the concrete
        // collection above it (where a `Location` may have pointed). A
        // parent an earlier call gave, above a child none gave, would pair
        // the child chosen under another parent with this one (a queue
        // under a pool it is not in): then the whole path keeps the chain
        // the call was made with.
        let mark = used.len();
        let mut carried = self.path_values(op_i, &slots, bind, &mut used, &mut chosen, &mut flowed);
        if bind && self.half_bound(op, &slots, &chosen, &flowed) {
            used.truncate(mark);
            chosen.iter_mut().for_each(|c| *c = None);
            flowed.iter_mut().for_each(|f| *f = false);
            carried = self.path_values(op_i, &slots, false, &mut used, &mut chosen, &mut flowed);
        }
        for (j, p) in op.parameters.iter().enumerate() {
            if chosen[j].is_some() {
                continue;
            }
            let given = if bind {
                self.flowed(op_i, p.location, &p.name, &mut used)
            } else {
                None
            };
            let given = given.map(|v| as_input(&api, &p.schema, v));
            chosen[j] = match given {
                Some(v) if slots[j].present || p.required || self.rng.random_bool(0.5) => {
                    flowed[j] = true;
                    Some(v)
                }
                _ if slots[j].present || p.required => Some(slots[j].value.clone()),
                _ => None,
            };
        }
        let mut sent = super::verdicts::Sent::default();
        for (j, p) in op.parameters.iter().enumerate() {
            if let Some(v) = chosen[j].take() {
                sent.params.push((j, v.clone(), flowed[j]));
                inputs.params.push((p.location, p.name.clone(), v));
            }
        }
        if let Some((_, Value::Object(fields))) = &mut body
            && bind
        {
            let mut names: Vec<String> = self.plan.sources[op_i]
                .keys()
                .filter(|(l, _)| *l == Location::Body)
                .map(|(_, n)| n.clone())
                .collect();
            // Hash-map order differs between processes; requests must not.
            names.sort();
            for name in names {
                if let Some(v) = self.flowed(op_i, Location::Body, &name, &mut used) {
                    let v = as_input_of(&api, op, Location::Body, &name, v);
                    fields.insert(name, v);
                }
            }
        }
        inputs.body = body;
        self.used.push(used);
        self.carried.push(carried);
        self.inputs.push(sent);
        self.constraints.keep(
            &api,
            op_i,
            &mut inputs.params,
            &mut inputs.body,
            &mut self.rng,
        );
        let breach = self.test.calls[index].genes.breach.as_ref();
        if let Some(b) = breach {
            super::negative::apply_to_inputs(op, b, &mut inputs.params, &mut inputs.body);
        }
        let mut request = build_request(&api, op, &inputs);
        if let Some(b) = breach {
            super::negative::apply_to_request(b, &mut request);
        }
        request
    }
}

/// A flowed value as an input of type `schema` takes it: pools hold single
/// values, so a list input (`tags`) is given a list of one.
pub(super) fn as_input(api: &Api, schema: &crate::model::Schema, v: Value) -> Value {
    let list = api.resolve(schema).primary_type() == Some(crate::model::SchemaType::Array);
    if list && !v.is_array() {
        Value::Array(vec![v])
    } else {
        v
    }
}

/// [`as_input`] for input `(location, name)` of `op` (a top-level body field
/// when `location` is the body); a value for an unknown input is kept.
pub(super) fn as_input_of(
    api: &Api,
    op: &crate::model::Operation,
    location: Location,
    name: &str,
    v: Value,
) -> Value {
    let schema = match location {
        Location::Body => op
            .request_body
            .as_ref()
            .and_then(|b| b.primary_schema())
            .and_then(|(_, s)| api.resolve(s).properties.get(name)),
        _ => op
            .parameters
            .iter()
            .find(|p| p.location == location && p.name == name)
            .map(|p| &p.schema),
    };
    match schema {
        Some(schema) => as_input(api, schema, v),
        None => v,
    }
}

/// Whether a value can stand in a path segment: an empty one would make
/// another URL (`/users/` for `/users/{id}`), and so would `.` and `..`, which
/// URL normalisation removes (even percent-encoded), whatever was meant.
pub fn fits_a_segment(v: &Value) -> bool {
    if matches!(v, Value::Null) {
        return false;
    }
    let text = crate::execution::wire::as_text(v);
    !matches!(text.as_str(), "" | "." | "..")
}

impl TestRun for FlowRun {
    fn next_request(&mut self, done: &[Exchange]) -> Option<RequestSpec> {
        while self.harvested < done.len() {
            let k = self.harvested;
            self.harvested += 1;
            if self.probes[k] {
                continue;
            }
            let call = self.sent[k];
            let op = self.test.calls[call].op;
            let ex = &done[k];
            // Only a call still to be built reads what earlier calls gave:
            // after the test's last call (most tests have one) the values
            // would be harvested for nothing, once per answer.
            let mut pool = ValuePool::new(4);
            if self.next < self.test.calls.len() {
                pool.harvest(&self.plan.produced[op], &self.plan.wanted, ex);
            }
            self.flows.push((call, pool));
            if ex.request.method == "DELETE" && ex.is_success() {
                // What was deleted no longer feeds later calls of the test.
                let path = ex.request.path.split('?').next().unwrap_or("");
                if let Some(id) = crate::execution::wire::location_id(path) {
                    for (_, pool) in &mut self.flows {
                        pool.forget(&id);
                    }
                }
            }
            // A creation the rest relies on failed (EvoMaster's premature stop).
            if self.test.calls[call].creates && !ex.is_success() {
                self.next = self.test.calls.len();
            }
            self.schedule_probes(call, ex);
        }
        if let Some(probe) = self.pending.pop_front() {
            self.sent.push(*self.sent.last().unwrap_or(&0));
            self.used.push(Vec::new());
            self.carried.push(Vec::new());
            self.inputs.push(Default::default());
            self.probes.push(true);
            return Some(probe);
        }
        if self.next >= self.test.calls.len() {
            return None;
        }
        let index = self.next;
        self.next += 1;
        self.sent.push(index);
        self.probes.push(false);
        Some(self.request(index))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generation::rest::{Genes, RestCall, Slot};
    use crate::generation::test::{Call, Sampler, TestCase};
    use serde_json::json;

    fn demo() -> (Arc<Api>, crate::graph::PropertyGraph) {
        let api = crate::load::load_text(crate::demo::OPENAPI_YAML, std::path::Path::new("d.yaml"))
            .unwrap()
            .api;
        let graph = crate::graph::build(&api);
        (Arc::new(api), graph)
    }

    fn call(api: &Api, name: &str, values: &[Value], body: Option<Value>) -> RestCall {
        let op = api.operation_positions()[name];
        Call {
            op,
            genes: Genes {
                params: values
                    .iter()
                    .map(|v| Slot {
                        present: true,
                        value: v.clone(),
                    })
                    .collect(),
                body: body.map(|b| ("application/json".to_string(), b)),
                breach: None,
            },
            bind: true,
            creates: false,
            group: 0,
        }
    }

    fn answer(
        seq: u64,
        request: RequestSpec,
        status: u16,
        location: Option<&str>,
        body: Value,
    ) -> Exchange {
        Exchange {
            seq,
            request,
            status: Some(status),
            headers: location
                .map(|l| vec![("location".to_string(), l.to_string())])
                .unwrap_or_default(),
            body: body.to_string(),
            ..Default::default()
        }
    }

    #[test]
    fn ids_flow_from_responses_and_locations_into_later_calls() {
        let (api, graph) = demo();
        let plan = Arc::new(Plan::from_graph(&api, &graph));
        let test = TestCase {
            calls: vec![
                call(&api, "createAuthor", &[], Some(json!({"name": "Ann"}))),
                call(
                    &api,
                    "createBook",
                    &[json!(999)],
                    Some(json!({"title": "T", "price": 1, "stock": 2})),
                ),
                call(
                    &api,
                    "placeOrder",
                    &[],
                    Some(json!({"bookId": 999, "quantity": 1})),
                ),
                call(&api, "deleteBook", &[json!(999), json!(999)], None),
                call(&api, "getBook", &[json!(999), json!(999)], None),
            ],
            groups: vec![],
            sampler: Sampler::Graph,
            seed: 1,
        };
        let mut run = FlowRun::new(api.clone(), plan, test).with_probes(0.0, None);
        let mut done = Vec::new();
        let r = run.next_request(&done).unwrap();
        assert_eq!(r.path, "/authors");
        done.push(answer(
            0,
            r,
            201,
            Some("/authors/17"),
            json!({"id": 17, "name": "Ann"}),
        ));
        let r = run.next_request(&done).unwrap();
        assert_eq!(
            r.path, "/authors/17/books",
            "the author's id flows into the path"
        );
        done.push(answer(
            1,
            r,
            201,
            None,
            json!({"id": 41, "authorId": 17, "title": "T"}),
        ));
        let r = run.next_request(&done).unwrap();
        let body: Value = serde_json::from_str(r.body.as_deref().unwrap()).unwrap();
        assert_eq!(
            body["bookId"], 41,
            "the book's id flows into the body: {body}"
        );
        assert!(
            run.used[2]
                .iter()
                .any(|(s, from)| s == "Book" && *from == 1)
        );
        done.push(answer(2, r, 201, None, json!({"id": 5, "bookId": 41})));
        let r = run.next_request(&done).unwrap();
        assert_eq!(r.path, "/authors/17/books/41");
        done.push(answer(3, r, 204, None, Value::Null));
        // After the delete, the book's id no longer flows, and the call's
        // own book is not sent under an author it was not chosen under:
        // the path keeps the call's own chain.
        let r = run.next_request(&done).unwrap();
        assert_eq!(r.path, "/authors/999/books/999", "{}", r.path);
        assert!(run.next_request(&done).is_none());
    }

    #[test]
    fn a_failed_creation_stops_the_test() {
        let (api, graph) = demo();
        let plan = Arc::new(Plan::from_graph(&api, &graph));
        let mut first = call(&api, "createAuthor", &[], Some(json!({"name": ""})));
        first.creates = true;
        let test = TestCase {
            calls: vec![first, call(&api, "getAuthor", &[json!(1)], None)],
            groups: vec![],
            sampler: Sampler::Template,
            seed: 1,
        };
        let mut run = FlowRun::new(api, plan, test);
        let r = run.next_request(&[]).unwrap();
        let done = vec![answer(0, r, 400, None, json!({"message": "bad"}))];
        assert!(run.next_request(&done).is_none());
    }

    /// Pools named by name, whose creation answers `{id, name}`, with
    /// queues below them (Prefect's work pools).
    const POOLS: &str = r##"
openapi: 3.0.3
info: {title: Pools, version: "1"}
paths:
  /pools/:
    post:
      operationId: createPool
      requestBody:
        content: {application/json: {schema: {type: object, properties: {name: {type: string}}}}}
      responses:
        "201":
          description: made
          content: {application/json: {schema: {$ref: "#/components/schemas/Pool"}}}
  /pools/{name}:
    get:
      operationId: readPool
      parameters: [{name: name, in: path, required: true, schema: {type: string}}]
      responses:
        "200":
          description: a pool
          content: {application/json: {schema: {$ref: "#/components/schemas/Pool"}}}
  /pools/{pool_name}/queues:
    post:
      operationId: createQueue
      parameters: [{name: pool_name, in: path, required: true, schema: {type: string}}]
      requestBody:
        content: {application/json: {schema: {type: object, properties: {name: {type: string}}}}}
      responses:
        "201":
          description: made
          content: {application/json: {schema: {$ref: "#/components/schemas/Queue"}}}
  /pools/{pool_name}/queues/{name}:
    get:
      operationId: readQueue
      parameters:
        - {name: pool_name, in: path, required: true, schema: {type: string}}
        - {name: name, in: path, required: true, schema: {type: string}}
      responses:
        "200":
          description: a queue
          content: {application/json: {schema: {$ref: "#/components/schemas/Queue"}}}
components:
  schemas:
    Pool:
      type: object
      properties: {id: {type: string, format: uuid}, name: {type: string}}
    Queue:
      type: object
      properties: {id: {type: string, format: uuid}, name: {type: string}}
"##;

    fn pools() -> (Arc<Api>, Arc<Plan>) {
        let api = crate::load::load_text(POOLS, std::path::Path::new("p.yaml"))
            .unwrap()
            .api;
        let graph = crate::graph::build(&api);
        let plan = Arc::new(Plan::from_graph(&api, &graph));
        (Arc::new(api), plan)
    }

    #[test]
    fn a_path_that_takes_names_gets_the_name_the_creation_answered_with() {
        let (api, plan) = pools();
        let test = TestCase {
            calls: vec![
                call(&api, "createPool", &[], Some(json!({"name": "p"}))),
                call(&api, "readPool", &[json!("old")], None),
                call(
                    &api,
                    "createQueue",
                    &[json!("old")],
                    Some(json!({"name": "q"})),
                ),
                call(&api, "readQueue", &[json!("old"), json!("stale")], None),
            ],
            groups: vec![],
            sampler: Sampler::Graph,
            seed: 1,
        };
        let mut run = FlowRun::new(api, plan, test).with_probes(1.0, None);
        let mut done = Vec::new();
        let r = run.next_request(&done).unwrap();
        done.push(answer(
            0,
            r,
            201,
            None,
            json!({"id": "u-1", "name": "made"}),
        ));
        // The probe of the created pool reads it by its name.
        let r = run.next_request(&done).unwrap();
        assert_eq!(r.path, "/pools/made", "the probe");
        done.push(answer(
            1,
            r,
            200,
            None,
            json!({"id": "u-1", "name": "made"}),
        ));
        let r = run.next_request(&done).unwrap();
        assert_eq!(r.path, "/pools/made", "never /pools/u-1");
        done.push(answer(
            2,
            r,
            200,
            None,
            json!({"id": "u-1", "name": "made"}),
        ));
        let r = run.next_request(&done).unwrap();
        assert_eq!(r.path, "/pools/made/queues");
        done.push(answer(3, r, 201, None, json!({"id": "u-2", "name": "q-1"})));
        let r = run.next_request(&done).unwrap();
        assert_eq!(r.path, "/pools/made/queues/q-1", "the probe");
        done.push(answer(4, r, 200, None, json!({"id": "u-2", "name": "q-1"})));
        let r = run.next_request(&done).unwrap();
        assert_eq!(r.path, "/pools/made/queues/q-1", "one chain, by name");
    }

    #[test]
    fn a_child_made_under_a_parent_is_read_under_it() {
        let (api, plan) = pools();
        // The queue is made under a pool the test did not make; the read
        // that follows names that pool, not the one it was sampled with.
        let test = TestCase {
            calls: vec![
                call(
                    &api,
                    "createQueue",
                    &[json!("there")],
                    Some(json!({"name": "q"})),
                ),
                call(
                    &api,
                    "readQueue",
                    &[json!("elsewhere"), json!("stale")],
                    None,
                ),
            ],
            groups: vec![],
            sampler: Sampler::Graph,
            seed: 1,
        };
        let mut run = FlowRun::new(api, plan, test).with_probes(0.0, None);
        let mut done = Vec::new();
        let r = run.next_request(&done).unwrap();
        assert_eq!(r.path, "/pools/there/queues");
        done.push(answer(0, r, 201, None, json!({"id": "u-2", "name": "q-1"})));
        let r = run.next_request(&done).unwrap();
        assert_eq!(r.path, "/pools/there/queues/q-1");
    }

    #[test]
    fn a_parent_from_the_test_is_not_paired_with_a_child_chosen_elsewhere() {
        let (api, plan) = pools();
        // A pool made by the test, and a queue chosen under another pool:
        // the read keeps the chain the call was made with.
        let test = TestCase {
            calls: vec![
                call(&api, "createPool", &[], Some(json!({"name": "p"}))),
                call(&api, "readQueue", &[json!("home"), json!("q-7")], None),
            ],
            groups: vec![],
            sampler: Sampler::Graph,
            seed: 1,
        };
        let mut run = FlowRun::new(api, plan, test).with_probes(0.0, None);
        let mut done = Vec::new();
        let r = run.next_request(&done).unwrap();
        done.push(answer(
            0,
            r,
            201,
            None,
            json!({"id": "u-1", "name": "made"}),
        ));
        let r = run.next_request(&done).unwrap();
        assert_eq!(r.path, "/pools/home/queues/q-7");
    }
}
#[cfg(test)]
mod segment_tests {
    use super::*;
    use crate::generation::test::TestCase;

    #[test]
    fn empty_and_dot_path_values_are_replaced() {
        let api = Arc::new(
            crate::load::load_text(crate::demo::OPENAPI_YAML, std::path::Path::new("d.yaml"))
                .unwrap()
                .api,
        );
        let plan = Arc::new(Plan::empty(&api));
        for bad in ["", ".", ".."] {
            let op = api.operation_positions()["getAuthor"];
            let test = TestCase {
                calls: vec![crate::generation::test::Call {
                    op,
                    genes: crate::generation::rest::Genes {
                        params: vec![crate::generation::rest::Slot {
                            present: true,
                            value: Value::String(bad.into()),
                        }],
                        body: None,
                        breach: None,
                    },
                    bind: true,
                    creates: false,
                    group: 0,
                }],
                groups: vec![],
                sampler: crate::generation::test::Sampler::Random,
                seed: 3,
            };
            let mut run = FlowRun::new(api.clone(), plan.clone(), test);
            let r = run.next_request(&[]).unwrap();
            let last = r.path.rsplit('/').next().unwrap();
            assert!(!matches!(last, "" | "." | ".."), "{bad:?} gave {}", r.path);
        }
    }
}
