//! REST negative and boundary tests: for each operation, every input (path,
//! query, header and cookie parameters, each body field, nested ones too,
//! the body itself, the credentials of each declared security scheme) gets
//! the values [`crate::generation::rest::edge_values`] finds for its schema, one
//! input at a time, on top of a test that last reached the operation with a
//! 2xx, so that only that one input is wrong. The tests enter the MIO
//! archive like any other.

use std::collections::VecDeque;

use rand::Rng;
use serde_json::Value;

use super::request::{MultipartFlaw, break_multipart, is_multipart};
use super::{Genes, Rest, RestTest};
use crate::execution::{Breach, BreachKind, RequestSpec};
use crate::generation::rest::edge_values::{EdgeClass, PER_CLASS, Place, breaks, probes};
use crate::generation::search::Cx;
use crate::generation::search::edges::ClassTally;
use crate::generation::test::Sampler;
use crate::generation::values::Rng64;
use crate::model::security::requires_credentials;
use crate::model::{Api, Location, Operation, SchemeKind, is_json_mime};

/// How deep into a body's objects fields are tried one by one: model
/// settings sit four or five levels down (`version.invocation_parameters.
/// perplexity.seed` took an integer past 64 bits on Arize Phoenix).
const FIELD_DEPTH: usize = 5;

/// What a negative test changes in its last call's request.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Parameter `.0` (its position) takes this value.
    SetParam(usize, Value),
    /// Parameter `.0` is left out.
    OmitParam(usize),
    /// The body field at this path takes this value (an empty path: the body).
    SetField(Vec<String>, Value),
    /// The body field at this path is left out.
    OmitField(Vec<String>),
    /// Parameter `.0` (its position) takes a well-formed id that names
    /// nothing: the value the request was to send ([`dangling`]), or `.1`
    /// when it sends none.
    DangleParam(usize, Value),
    /// The body field at this path takes a well-formed id that names
    /// nothing, made like [`Change::DangleParam`]'s.
    DangleField(Vec<String>, Value),
    /// The body is sent as this text.
    RawBody(String),
    /// The body goes with this media type.
    ContentType(String),
    /// The multipart body is broken this way.
    Multipart(MultipartFlaw),
    /// These credentials instead of the run's: (where, name, value); none
    /// at all when empty.
    Credentials(Vec<(Location, String, String)>),
}

/// A negative test's change, with what it breaks.
#[derive(Debug, Clone, PartialEq)]
pub struct NegativeInput {
    /// The change to the request.
    pub change: Change,
    /// What the request notes it breaks.
    pub note: Breach,
    /// The class of value it sends.
    pub class: EdgeClass,
}

/// How good a base a test is for an operation's negative tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Quality {
    /// A lone call that has not reached the operation.
    Untried,
    /// It reached the operation with a 2xx, with values that may not last
    /// (ids of resources the test did not make).
    Reached,
    /// It reached the operation with a 2xx, making what it named.
    SelfContained,
}

/// One operation's negative tests still to run.
pub(super) struct Queue {
    /// The test they are built on: its last call is the operation's.
    base: RestTest,
    /// How good a base it is: a better one replaces it, and the
    /// operation's inputs are all tried again on top of it.
    quality: Quality,
    inputs: VecDeque<NegativeInput>,
    /// Per class ([`EdgeClass::index`]), the inputs tried on this base: a
    /// pair's first value belongs to the edge pass, its others come after
    /// every pair's first.
    tried: Vec<std::collections::BTreeSet<String>>,
    /// The edge pass's (input, class) pairs not tried yet: kept as they are
    /// tried, since the search asks after every test while the pass lasts.
    untried_pass: usize,
    /// Inputs put back because the base no longer reached the operation.
    retried: usize,
}

impl Queue {
    /// A queue of `inputs` on `base`, none tried yet.
    fn new(base: RestTest, quality: Quality, inputs: Vec<NegativeInput>) -> Queue {
        let pass: std::collections::BTreeSet<(&str, EdgeClass)> = inputs
            .iter()
            .filter(|i| i.class.in_pass())
            .map(|i| (i.note.input.as_str(), i.class))
            .collect();
        Queue {
            base,
            quality,
            untried_pass: pass.len(),
            inputs: inputs.into(),
            tried: vec![Default::default(); EdgeClass::ALL.len()],
            retried: 0,
        }
    }

    /// Whether an (input, class) pair of the edge pass has not had a value
    /// yet on this base.
    fn has_untried_pair(&self) -> bool {
        self.untried_pass > 0
    }

    /// Whether `input` would be the first value of its (input, class) pair.
    fn first(&self, input: &NegativeInput) -> bool {
        !self.tried[input.class.index()].contains(input.note.input.as_str())
    }

    /// Notes that `input` is being sent.
    fn mark_tried(&mut self, input: &NegativeInput) {
        if self.first(input) && input.class.in_pass() {
            self.untried_pass -= 1;
        }
        self.tried[input.class.index()].insert(input.note.input.clone());
    }

    /// The position of the input to try next: the operation's first
    /// example (a request its description's authors wrote, as
    /// Schemathesis's examples phase sends before anything else: one per
    /// operation, so a slow server's pass cannot end before it), then the
    /// first value of an edge pass pair, then the first of any other pair,
    /// then second values; within each, the class that has broken the most
    /// operations so far.
    fn next(&self, yields: &[f64]) -> Option<usize> {
        let no_example_yet = self.tried[EdgeClass::Examples.index()].is_empty();
        let mut best: Option<(usize, (u8, f64))> = None;
        for (k, input) in self.inputs.iter().enumerate() {
            let rank = match (self.first(input), input.class.in_pass()) {
                (true, true) if no_example_yet && input.class == EdgeClass::Examples => 3,
                (true, true) => 2,
                (true, false) => 1,
                _ => 0,
            };
            let score = (rank, yields[input.class.index()]);
            // Strictly better only: the earliest of equals keeps its turn.
            if best.is_none_or(|(_, b)| score.0 > b.0 || (score.0 == b.0 && score.1 > b.1)) {
                best = Some((k, score));
            }
        }
        best.map(|(k, _)| k)
    }
}

/// Inputs put back per operation, at most: a base that keeps missing its
/// resource is not waited for forever.
const MAX_RETRIED: usize = 64;

/// Weight of a class's prior yield, in operations: a class that breaks
/// one operation goes first on the next, one tried on a few operations
/// without breaking any falls behind the classes not tried yet.
const PRIOR_WEIGHT: f64 = 2.0;

/// Every operation's queue, whose turn it is, and what each class of
/// value has broken so far.
#[derive(Default)]
pub(super) struct Negatives {
    pub(super) queues: Vec<Option<Queue>>,
    cursor: usize,
    /// Per class of value: what it was sent to and what it broke.
    classes: Vec<ClassTally>,
}

impl Negatives {
    pub(super) fn new(operations: usize) -> Negatives {
        Negatives {
            queues: (0..operations).map(|_| None).collect(),
            cursor: 0,
            classes: vec![ClassTally::default(); EdgeClass::ALL.len()],
        }
    }

    /// Per class, the share of operations a value of it breaks: what the
    /// run saw, starting from the class's prior.
    fn yields(&self) -> Vec<f64> {
        EdgeClass::ALL
            .iter()
            .map(|c| {
                let t = &self.classes[c.index()];
                (t.operations_broken.len() as f64 + PRIOR_WEIGHT * c.prior_yield())
                    / (t.operations.len() as f64 + PRIOR_WEIGHT)
            })
            .collect()
    }

    /// Whether some operation's (input, class) pairs have not all had a
    /// value: the edge pass is not over. An operation not reached yet
    /// counts as having them all left.
    pub(super) fn edges_left(&self, ops: &[usize]) -> bool {
        ops.iter().any(|&op| match &self.queues[op] {
            None => true,
            Some(q) => q.has_untried_pair(),
        })
    }

    /// Per class of value, what it was sent to and what it broke.
    pub(super) fn tallies(&self) -> std::collections::BTreeMap<String, ClassTally> {
        EdgeClass::ALL
            .iter()
            .map(|c| (c.as_str().to_string(), self.classes[c.index()].clone()))
            .filter(|(_, t)| t.requests > 0)
            .collect()
    }
}

impl Rest {
    /// The next negative test, one operation after another in turn; `None`
    /// once every operation's inputs have all been tried.
    pub(super) fn negative_test(&mut self, cx: &mut Cx) -> Option<RestTest> {
        let ops = cx.ops.clone();
        for _ in 0..ops.len() {
            let op = ops[self.negatives.cursor % ops.len()];
            self.negatives.cursor += 1;
            if self.negatives.queues[op].is_none() {
                let base = self.initial_test(cx, op);
                let queue = self.queue(cx, base, Quality::Untried);
                self.negatives.queues[op] = Some(queue);
            }
            let yields = self.negatives.yields();
            let Some(queue) = self.negatives.queues[op].as_mut() else {
                continue;
            };
            // In the edge pass an operation whose pairs have all had a
            // value waits: every operation has its pass before any has a
            // second round.
            if cx.edge_pass && !queue.has_untried_pair() {
                continue;
            }
            let Some(input) = queue.next(&yields).and_then(|k| queue.inputs.remove(k)) else {
                continue;
            };
            queue.mark_tried(&input);
            // A base that never reached the operation is drawn again each
            // time: the ids the run has listed or created since (a parent's
            // children, listed under it) take the place of invented ones.
            let untried = queue.quality == Quality::Untried;
            let mut test = if untried {
                self.initial_test(cx, op)
            } else {
                queue.base.clone()
            };
            test.sampler = Sampler::Negative;
            test.seed = cx.rng.random();
            if let Some(last) = test.calls.last_mut() {
                last.genes.breach = Some(input);
                // What a negative call makes is not for later calls.
                last.creates = false;
            }
            return Some(test);
        }
        None
    }

    /// Notes that `base` (its last call the operation's) reached the
    /// operation with a 2xx: the operation's negative tests are built on
    /// it from now on, if it is a better base than theirs.
    pub(super) fn negative_base(&mut self, cx: &mut Cx, base: RestTest, quality: Quality) {
        let Some(op) = base.calls.last().map(|c| c.op) else {
            return;
        };
        if self.negatives.queues[op]
            .as_ref()
            .is_some_and(|q| q.quality >= quality)
        {
            return;
        }
        let queue = self.queue(cx, base, quality);
        self.negatives.queues[op] = Some(queue);
    }

    fn queue(&self, cx: &mut Cx, base: RestTest, quality: Quality) -> Queue {
        let inputs = match base.calls.last() {
            Some(last) => negative_inputs(
                &cx.api,
                &cx.api.operations[last.op],
                &last.genes,
                &mut cx.rng,
            ),
            None => Vec::new(),
        };
        Queue::new(base, quality, inputs)
    }

    /// Reads a negative call's answer: a 404 or 410 to an input that is
    /// not one of the path's says the base no longer reaches the operation
    /// (what it names was deleted since), so the input is tried again on
    /// the next base that does.
    pub(super) fn negative_answer(
        &mut self,
        op: usize,
        input: &NegativeInput,
        status: Option<u16>,
    ) {
        let tally = &mut self.negatives.classes[input.class.index()];
        tally.requests += 1;
        tally.inputs.insert((op, input.note.input.clone()));
        tally.operations.insert(op);
        if status.is_some_and(|s| s >= 500) {
            tally.operations_broken.insert(op);
        }
        let on_path = input.note.input.starts_with("path ");
        // A 404 is the right answer to an id that names nothing.
        let dangling = input.class == EdgeClass::Dangling;
        if on_path || dangling || !matches!(status, Some(404 | 410)) {
            return;
        }
        let Some(queue) = self.negatives.queues[op].as_mut() else {
            return;
        };
        queue.quality = Quality::Untried;
        if queue.retried < MAX_RETRIED && !queue.inputs.contains(input) {
            queue.retried += 1;
            queue.inputs.push_front(input.clone());
        }
    }
}

/// Every negative input of `op`, its call's genes `genes`: per input its
/// probes, most telling first; then one probe of each input in turn, so
/// that every input gets its most telling probe before any gets a second.
pub fn negative_inputs(
    api: &Api,
    op: &Operation,
    genes: &Genes,
    rng: &mut Rng64,
) -> Vec<NegativeInput> {
    let mut per_input: Vec<Vec<NegativeInput>> = Vec::new();
    for (j, p) in op.parameters.iter().enumerate() {
        let place = match p.location {
            Location::Path => Place::Path,
            Location::Header => Place::Header,
            Location::Query | Location::Cookie => Place::Text,
            Location::Body | Location::Argument => continue,
        };
        let input = format!("{} {}", p.location.as_str(), p.name);
        let mut list = Vec::new();
        if p.required && p.location != Location::Path {
            list.push(NegativeInput {
                change: Change::OmitParam(j),
                note: note(&input, missing(api, &p.schema)),
                class: EdgeClass::Missing,
            });
        }
        for probe in probes(api, &p.schema, place, rng) {
            list.push(NegativeInput {
                change: Change::SetParam(j, probe.value),
                note: note(&input, probe.kind),
                class: probe.class,
            });
        }
        if let Some(fallback) = dangle_fallback(api, &p.name, &p.schema, None, rng) {
            list.push(NegativeInput {
                change: Change::DangleParam(j, fallback),
                note: note(&input, BreachKind::Unusual),
                class: EdgeClass::Dangling,
            });
        }
        // The parameter's own examples (its schema's are among the probes).
        for example in p.examples.iter().take(PER_CLASS) {
            let change = Change::SetParam(j, example.clone());
            if list.iter().any(|i| i.change == change) {
                continue;
            }
            let kind = breaks(api, &p.schema, example, place).unwrap_or(BreachKind::Unusual);
            list.push(NegativeInput {
                change,
                note: note(&input, kind),
                class: EdgeClass::Examples,
            });
        }
        per_input.push(list);
    }
    if let (Some(body), Some((mime, value))) = (&op.request_body, &genes.body) {
        let schema = body.content.get(mime.as_str()).cloned().unwrap_or_default();
        let json = is_json_mime(mime) || mime.is_empty();
        let mut whole = Vec::new();
        if json {
            whole.push(NegativeInput {
                change: Change::RawBody(malformed_json(value)),
                note: note("body", BreachKind::MalformedBody),
                class: EdgeClass::Malformed,
            });
            whole.push(NegativeInput {
                change: Change::ContentType("text/plain".into()),
                note: note("body", BreachKind::WrongContentType),
                class: EdgeClass::Malformed,
            });
            // The whole body of another shape (`[null, null]` where an
            // object is due, `null`, a scalar): a handler that reads its
            // fields without looking crashes.
            for probe in probes(api, &schema, Place::Json, rng) {
                if matches!(probe.class, EdgeClass::WrongShape | EdgeClass::Null) {
                    whole.push(NegativeInput {
                        change: Change::SetField(Vec::new(), probe.value),
                        note: note("body", probe.kind),
                        class: probe.class,
                    });
                }
            }
        }
        if is_multipart(mime) {
            whole.extend(
                [
                    MultipartFlaw::NoBoundary,
                    MultipartFlaw::MalformedPart,
                    MultipartFlaw::LyingLength,
                ]
                .map(|flaw| NegativeInput {
                    change: Change::Multipart(flaw),
                    note: note("body", BreachKind::MalformedMultipart),
                    class: EdgeClass::Malformed,
                }),
            );
        }
        per_input.push(whole);
        if json {
            per_input.extend(example_bodies(api, body, &schema, value, rng));
        }
        let place = if json { Place::Json } else { Place::Text };
        // A bulk body sent empty (a bare first call: `[]` was accepted) has
        // no item whose fields could be tried: one item is made, and each
        // change to it sends the whole body (Prefect's `POST /logs/`
        // crashed on an integer past 64 bits in an item's `level`, and its
        // only base was `[]`).
        let filled = match (value, api.resolve(&schema).items.as_deref()) {
            (Value::Array(items), Some(item)) if items.is_empty() && json => Some(Value::Array(
                vec![crate::generation::values::value_for(api, item, rng)],
            )),
            _ => None,
        };
        let from = per_input.len();
        fields(
            api,
            &schema,
            filled.as_ref().unwrap_or(value),
            (place, false),
            &mut Vec::new(),
            &mut per_input,
            rng,
        );
        if let Some(filled) = &filled {
            for input in per_input[from..].iter_mut().flatten() {
                let (path, new) = match &input.change {
                    Change::SetField(path, v) | Change::DangleField(path, v) => {
                        (path, Some(v.clone()))
                    }
                    Change::OmitField(path) => (path, None),
                    _ => continue,
                };
                let mut whole = filled.clone();
                set_at(&mut whole, path, new);
                input.change = Change::SetField(Vec::new(), whole);
            }
        }
    }
    for list in credentials(api, op) {
        per_input.push(list);
    }
    // One of each input in turn.
    let mut out = Vec::new();
    let mut rank = 0;
    loop {
        let before = out.len();
        for list in &per_input {
            if let Some(i) = list.get(rank) {
                out.push(i.clone());
            }
        }
        if out.len() == before {
            return out;
        }
        rank += 1;
    }
}

/// The description's example bodies, then bodies built from the examples it
/// gives for fields (optional ones too, with the objects that hold them):
/// the `k`-th of each built with each field's `k`-th example. Each is an
/// input of its own, so that the edge pass sends every one, not only the
/// first: a full-text filter broke on the fourth example of its query.
fn example_bodies(
    api: &Api,
    body: &crate::model::RequestBody,
    schema: &crate::model::Schema,
    base: &Value,
    rng: &mut Rng64,
) -> Vec<Vec<NegativeInput>> {
    let mut bodies: Vec<Value> = Vec::new();
    let listed = body
        .examples
        .iter()
        .chain(&api.resolve(schema).examples)
        .cloned();
    // A schema with no field example below its top builds nothing for any
    // `k`: found once, not walked six times.
    let built = (0..PER_CLASS).map_while(|k| with_examples(api, schema, base, k, 0, rng));
    for v in listed.chain(built) {
        if bodies.len() < PER_CLASS && v != *base && !bodies.contains(&v) {
            bodies.push(v);
        }
    }
    bodies
        .into_iter()
        .enumerate()
        .map(|(k, v)| {
            let kind = breaks(api, schema, &v, Place::Json).unwrap_or(BreachKind::Unusual);
            vec![NegativeInput {
                change: Change::SetField(Vec::new(), v),
                note: note(&format!("body (examples {})", k + 1), kind),
                class: EdgeClass::Examples,
            }]
        })
        .collect()
}

/// `base` (a value of `schema`) with every field below the top that the
/// description gives examples for set to its `k`-th (cycling through shorter
/// lists), and the objects that hold them made, with their other required
/// fields generated; none when no field below has an example.
fn with_examples(
    api: &Api,
    schema: &crate::model::Schema,
    base: &Value,
    k: usize,
    depth: usize,
    rng: &mut Rng64,
) -> Option<Value> {
    let s = api.resolve(schema);
    if depth > FIELD_DEPTH {
        return None;
    }
    if depth > 0 && !s.examples.is_empty() {
        return Some(s.examples[k % s.examples.len()].clone());
    }
    if !s.properties.is_empty() {
        let mut fields = match base {
            Value::Object(fields) => fields.clone(),
            _ => serde_json::Map::new(),
        };
        let mut any = false;
        for (name, prop) in &s.properties {
            if api.resolve(prop).read_only {
                continue;
            }
            let inner = fields.get(name).cloned().unwrap_or(Value::Null);
            if let Some(v) = with_examples(api, prop, &inner, k, depth + 1, rng) {
                fields.insert(name.clone(), v);
                any = true;
            }
        }
        if !any {
            return None;
        }
        for name in &s.required {
            if let (false, Some(prop)) = (fields.contains_key(name), s.properties.get(name)) {
                fields.insert(
                    name.clone(),
                    crate::generation::values::value_for(api, prop, rng),
                );
            }
        }
        return Some(Value::Object(fields));
    }
    if let Some(item) = s.items.as_deref() {
        let first = match base {
            Value::Array(items) => items.first().cloned().unwrap_or(Value::Null),
            _ => Value::Null,
        };
        return with_examples(api, item, &first, k, depth + 1, rng).map(|v| Value::Array(vec![v]));
    }
    // `anyOf: [{$ref: Filter}, {type: null}]`: the first alternative that
    // has examples below it.
    s.alternatives
        .iter()
        .find_map(|alt| with_examples(api, alt, base, k, depth + 1, rng))
}

/// What leaving out a required input of `schema` breaks: with a `default`
/// the server may fill it in, and is not to be judged for that.
fn missing(api: &Api, schema: &crate::model::Schema) -> BreachKind {
    if api.resolve(schema).default.is_some() {
        BreachKind::MissingWithDefault
    } else {
        BreachKind::Missing
    }
}

fn note(input: &str, kind: BreachKind) -> Breach {
    Breach {
        input: input.to_string(),
        kind,
        class: None,
    }
}

/// `value` as JSON cut in the middle: a body no parser takes.
fn malformed_json(value: &Value) -> String {
    let text = crate::execution::wire::json_text(value);
    let cut = text
        .char_indices()
        .nth(text.chars().count() / 2)
        .map_or(0, |(i, _)| i);
    let mut out = text[..cut].to_string();
    if out.is_empty() || out == text {
        out = "{\"".into();
    }
    out
}

/// The body fields of `value` (a value of `schema`) one by one, down to
/// [`FIELD_DEPTH`]: each required one left out, each given its probes;
/// `loose` once inside a union member another member could stand for.
fn fields(
    api: &Api,
    schema: &crate::model::Schema,
    value: &Value,
    (place, loose): (Place, bool),
    path: &mut Vec<String>,
    out: &mut Vec<Vec<NegativeInput>>,
    rng: &mut Rng64,
) {
    let (s, other) = alternative_taken(api, api.resolve(schema), value);
    // A field changed inside one member of a union may leave a value another
    // member takes (an assignee by id and by e-mail, minus its id, is one by
    // e-mail): what the change breaks is then not known, and not judged.
    let loose = loose || other;
    let kind = |k: BreachKind| {
        if loose && k.forbidden() {
            BreachKind::Unusual
        } else {
            k
        }
    };
    if path.len() >= FIELD_DEPTH {
        return;
    }
    // An array of objects (a bulk creation): its first item's fields, as
    // `/0/status`.
    if let (Value::Array(items), Some(item)) = (value, s.items.as_deref())
        && let Some(first) = items.first()
    {
        path.push("0".into());
        fields(api, item, first, (place, loose), path, out, rng);
        path.pop();
        return;
    }
    let Value::Object(present) = value else {
        return;
    };
    for (name, prop) in &s.properties {
        if api.resolve(prop).read_only {
            continue;
        }
        path.push(name.clone());
        let input = format!("body /{}", path.join("/"));
        let mut list = Vec::new();
        if s.required.contains(name) {
            list.push(NegativeInput {
                change: Change::OmitField(path.clone()),
                note: note(&input, kind(missing(api, prop))),
                class: EdgeClass::Missing,
            });
        }
        for probe in probes(api, prop, place, rng) {
            list.push(NegativeInput {
                change: Change::SetField(path.clone(), probe.value),
                note: note(&input, kind(probe.kind)),
                class: probe.class,
            });
        }
        if let Some(fallback) = dangle_fallback(api, name, prop, present.get(name), rng) {
            list.push(NegativeInput {
                change: Change::DangleField(path.clone(), fallback),
                note: note(&input, BreachKind::Unusual),
                class: EdgeClass::Dangling,
            });
        }
        out.push(list);
        if let Some(inner) = present.get(name) {
            fields(api, prop, inner, (place, loose), path, out, rng);
        }
        path.pop();
    }
}

/// The alternative of a `oneOf`/`anyOf` schema `s` that `value` takes, when
/// `s` has no fields of its own: the object alternative whose constant
/// fields (a discriminator's `type`) `value` matches and which holds most of
/// its keys, or the array alternative for an array. A nullable filter
/// (`anyOf [Filter, null]`) and a tagged union (`invocation_parameters`:
/// one object per model provider) have their fields tried like any other
/// (an integer past 64 bits four levels down crashed Arize Phoenix).
/// Otherwise `s` itself. With it, whether another member could take the
/// value too (no constant field of its own rules it out).
fn alternative_taken<'a>(
    api: &'a Api,
    s: &'a crate::model::Schema,
    value: &Value,
) -> (&'a crate::model::Schema, bool) {
    if !s.properties.is_empty() || s.items.is_some() || s.alternatives.is_empty() {
        return (s, false);
    }
    let mut best: Option<(&crate::model::Schema, usize)> = None;
    let mut takers = 0;
    for alt in &s.alternatives {
        let a = api.resolve(alt);
        let score = match value {
            Value::Array(_) if a.items.is_some() => Some(0),
            Value::Object(fields) if !a.properties.is_empty() => {
                // A constant field (`type: {enum: [xai]}`) the value gives
                // otherwise rules the alternative out.
                let contradicts = a.properties.iter().any(|(name, prop)| {
                    let p = api.resolve(prop);
                    p.enum_values.len() == 1
                        && fields.get(name).is_some_and(|v| *v != p.enum_values[0])
                });
                let known = fields
                    .keys()
                    .filter(|k| a.properties.contains_key(*k))
                    .count();
                (!contradicts).then_some(known)
            }
            _ => None,
        };
        if let Some(score) = score {
            takers += 1;
            if best.is_none_or(|(_, b)| score > b) {
                best = Some((a, score));
            }
        }
    }
    best.map_or((s, false), |(a, _)| (a, takers > 1))
}

/// Per security scheme the operation declares: no credentials (when it
/// requires some), then malformed ones of that scheme.
fn credentials(api: &Api, op: &Operation) -> Vec<Vec<NegativeInput>> {
    let mut names: Vec<&String> = op.security.iter().flatten().collect();
    names.sort();
    names.dedup();
    let mut out = Vec::new();
    if requires_credentials(&op.security) {
        out.push(vec![NegativeInput {
            change: Change::Credentials(Vec::new()),
            note: note("credentials", BreachKind::NoCredentials),
            class: EdgeClass::Credentials,
        }]);
    }
    for name in names {
        let Some(scheme) = api.security_schemes.get(name) else {
            continue;
        };
        let input = format!("credentials {name}");
        let values: Vec<(Location, String, String)> = match &scheme.kind {
            SchemeKind::Http { scheme } => {
                let word = if scheme.is_empty() {
                    "bearer"
                } else {
                    scheme.as_str()
                };
                let proper = capitalised(word);
                let other = if word == "basic" { "Bearer" } else { "Basic" };
                [
                    format!("{proper} "),
                    format!("Token {}", "abc"),
                    "abc".to_string(),
                    format!("{proper}  a b"),
                    format!("{other} dXNlcjpwYXNz"),
                    String::new(),
                ]
                .into_iter()
                .map(|v| (Location::Header, "Authorization".to_string(), v))
                .collect()
            }
            SchemeKind::ApiKey { location, name } => ["", "'\"%s{}", "a b", &"k".repeat(2048)]
                .into_iter()
                .map(|v| (*location, name.clone(), v.to_string()))
                .collect(),
            SchemeKind::Other => continue,
        };
        out.push(
            values
                .into_iter()
                .map(|v| NegativeInput {
                    change: Change::Credentials(vec![v]),
                    note: note(&input, BreachKind::MalformedCredentials),
                    class: EdgeClass::Credentials,
                })
                .collect(),
        );
    }
    out
}

fn capitalised(word: &str) -> String {
    let mut c = word.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

/// Applies the changes a request makes before it is built: parameters and
/// body fields. `params` are the request's (location, name, value).
pub fn apply_to_inputs(
    op: &Operation,
    input: &NegativeInput,
    params: &mut Vec<(Location, String, Value)>,
    body: &mut Option<(String, Value)>,
) {
    if let Change::SetParam(j, _) | Change::OmitParam(j) | Change::DangleParam(j, _) = &input.change
    {
        // Alone with the required parameters: an optional filter the base
        // happened to send can keep the server from ever reading this one
        // (no item left to match a malformed regex against).
        let keep = &op.parameters[*j];
        params.retain(|(l, n, _)| {
            (*l == keep.location && *n == keep.name)
                || op.parameters.iter().any(|p| {
                    p.location == *l && p.name == *n && (p.required || p.location == Location::Path)
                })
        });
    }
    match &input.change {
        Change::SetParam(j, v) => {
            let p = &op.parameters[*j];
            match params
                .iter_mut()
                .find(|(l, n, _)| *l == p.location && *n == p.name)
            {
                Some(slot) => slot.2 = v.clone(),
                None => params.push((p.location, p.name.clone(), v.clone())),
            }
        }
        Change::OmitParam(j) => {
            let p = &op.parameters[*j];
            params.retain(|(l, n, _)| !(*l == p.location && *n == p.name));
        }
        Change::DangleParam(j, fallback) => {
            let p = &op.parameters[*j];
            match params
                .iter_mut()
                .find(|(l, n, _)| *l == p.location && *n == p.name)
            {
                Some(slot) => slot.2 = dangling(&slot.2).unwrap_or_else(|| fallback.clone()),
                None => params.push((p.location, p.name.clone(), fallback.clone())),
            }
        }
        Change::DangleField(path, fallback) => {
            if let Some((_, value)) = body {
                let new = get_at(value, path)
                    .and_then(dangling)
                    .unwrap_or_else(|| fallback.clone());
                set_at(value, path, Some(new));
            }
        }
        Change::SetField(path, v) => {
            if let Some((_, value)) = body {
                set_at(value, path, Some(v.clone()));
            }
        }
        Change::OmitField(path) => {
            if let Some((_, value)) = body {
                set_at(value, path, None);
            }
        }
        _ => {}
    }
}

/// Applies the changes made to the built request: raw body, media type,
/// credentials; and notes the breach on it.
pub fn apply_to_request(input: &NegativeInput, request: &mut RequestSpec) {
    match &input.change {
        Change::RawBody(text) => request.body = Some(text.clone()),
        Change::ContentType(ct) if request.body.is_some() => {
            request.content_type = Some(ct.clone())
        }
        Change::Multipart(flaw) => {
            let (body, ct) = break_multipart(
                *flaw,
                request.body.as_deref().unwrap_or(""),
                request
                    .content_type
                    .as_deref()
                    .unwrap_or("multipart/form-data"),
            );
            request.body = Some(body);
            request.content_type = Some(ct);
        }
        Change::Credentials(values) => {
            for (location, name, value) in values {
                match location {
                    Location::Header => {
                        request
                            .headers
                            .retain(|(n, _)| !n.eq_ignore_ascii_case(name));
                        request.headers.push((name.clone(), value.clone()));
                    }
                    Location::Query => {
                        let sep = if request.path.contains('?') { '&' } else { '?' };
                        let pair: String = url::form_urlencoded::Serializer::new(String::new())
                            .append_pair(name, value)
                            .finish();
                        request.path = format!("{}{sep}{pair}", request.path);
                    }
                    Location::Cookie => {
                        let cookie = format!(
                            "{name}={}",
                            percent_encoding::utf8_percent_encode(
                                value,
                                crate::execution::wire::SEGMENT
                            )
                        );
                        match request
                            .headers
                            .iter_mut()
                            .find(|(n, _)| n.eq_ignore_ascii_case("cookie"))
                        {
                            Some((_, v)) => *v = format!("{v}; {cookie}"),
                            None => request.headers.push(("Cookie".into(), cookie)),
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
    // Noted only when the request carries it: a change to a field whose
    // parent object the body lacks lands nowhere, and a label naming it
    // would describe a request that was never sent.
    request.breach = input.note.carried_by(request).then(|| Breach {
        class: Some(input.class),
        ..input.note.clone()
    });
}

/// Sets (or, with `None`, removes) the field at `path` inside `value`, when
/// its parent object is there; an empty path replaces the whole value.
/// The value at `path` in `value` (array items by their index).
fn get_at<'a>(value: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(value, |at, p| match at {
        Value::Array(items) => p.parse::<usize>().ok().and_then(|k| items.get(k)),
        _ => at.get(p.as_str()),
    })
}

/// Whether an input named `name` of `schema` takes ids: format `uuid`, or
/// a name `id` or ending in `_id`, `Id`, `ID`, `-id` or `_uuid`; a string
/// or an integer.
fn takes_ids(api: &Api, name: &str, schema: &crate::model::Schema) -> bool {
    let s = api.resolve(schema);
    let scalar = |s: &crate::model::Schema| {
        s.types.is_empty()
            || s.types.iter().any(|t| {
                matches!(
                    t,
                    crate::model::SchemaType::String | crate::model::SchemaType::Integer
                )
            })
    };
    let uuid = |s: &crate::model::Schema| s.format.as_deref() == Some("uuid");
    let named = name.eq_ignore_ascii_case("id")
        || ["_id", "Id", "ID", "-id", "_uuid"]
            .iter()
            .any(|end| name.ends_with(end));
    let alternatives = || s.alternatives.iter().map(|a| api.resolve(a));
    (named || uuid(s) || alternatives().any(uuid))
        && s.enum_values.is_empty()
        && (scalar(s) && s.alternatives.is_empty()
            || alternatives().any(|a| scalar(a) && !a.types.is_empty()))
}

/// For an input that takes ids, the dangling id sent when the request has
/// no value there to change: one made from `current` (the base's value) or
/// from a value of the schema.
fn dangle_fallback(
    api: &Api,
    name: &str,
    schema: &crate::model::Schema,
    current: Option<&Value>,
    rng: &mut Rng64,
) -> Option<Value> {
    if !takes_ids(api, name, schema) {
        return None;
    }
    current
        .and_then(dangling)
        .or_else(|| dangling(&crate::generation::values::value_for(api, schema, rng)))
}

/// A well-formed id that names nothing, made from `id`, one the server
/// gave or took: its last run of letters and digits (a UUID's last group,
/// what follows a type prefix such as `brd-` or `cus_`) with each digit and
/// letter changed to another of its kind (hex letters stay hex letters,
/// case is kept), the rest kept; an integer moved by 10^9. `None` for a
/// value with no letter or digit, or of another kind.
pub fn dangling(id: &Value) -> Option<Value> {
    match id {
        Value::String(text) => {
            let chars: Vec<char> = text.chars().collect();
            let end = chars.iter().rposition(char::is_ascii_alphanumeric)? + 1;
            let start = chars[..end]
                .iter()
                .rposition(|c| !c.is_ascii_alphanumeric())
                .map_or(0, |k| k + 1);
            let shift =
                |c: char, from: u8, n: u8, by: u8| char::from(from + (c as u8 - from + by) % n);
            let out: String = chars
                .iter()
                .enumerate()
                .map(|(k, &c)| {
                    if !(start..end).contains(&k) {
                        return c;
                    }
                    match c {
                        '0'..='9' => shift(c, b'0', 10, 5),
                        'a'..='f' => shift(c, b'a', 6, 3),
                        'A'..='F' => shift(c, b'A', 6, 3),
                        'g'..='z' => shift(c, b'g', 20, 7),
                        'G'..='Z' => shift(c, b'G', 20, 7),
                        _ => c,
                    }
                })
                .collect();
            Some(Value::String(out))
        }
        Value::Number(n) => n
            .as_i64()
            .map(|i| Value::from(i.checked_add(1_000_000_000).unwrap_or(i - 1_000_000_000))),
        _ => None,
    }
}

pub(super) fn set_at(value: &mut Value, path: &[String], new: Option<Value>) {
    let Some((last, parents)) = path.split_last() else {
        if let Some(v) = new {
            *value = v;
        }
        return;
    };
    let mut at = value;
    for p in parents {
        let next = match at {
            Value::Array(items) => p.parse::<usize>().ok().and_then(|k| items.get_mut(k)),
            _ => at.get_mut(p.as_str()),
        };
        match next {
            Some(next) => at = next,
            None => return,
        }
    }
    match at {
        Value::Object(fields) => match new {
            Some(v) => {
                fields.insert(last.clone(), v);
            }
            None => {
                fields.shift_remove(last);
            }
        },
        Value::Array(items) => {
            if let Some(k) = last.parse::<usize>().ok().filter(|k| *k < items.len()) {
                match new {
                    Some(v) => items[k] = v,
                    None => {
                        items.remove(k);
                    }
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use serde_json::json;

    use super::*;

    fn api() -> Api {
        crate::load::load_text(
            r#"openapi: 3.1.0
info: {title: t, version: '1'}
paths:
  /a/{id}/books:
    post:
      operationId: createBook
      security: [{}, {bearer: []}]
      parameters:
      - {name: id, in: path, required: true, schema: {type: integer}}
      - {name: offset, in: query, schema: {type: integer, minimum: 0}}
      - {name: If-Match, in: header, schema: {type: string}}
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [title, stock]
              properties:
                title: {type: string}
                stock: {type: integer}
                meta: {type: object, required: [k], properties: {k: {type: string}}}
      responses: {'201': {description: ok}}
components:
  securitySchemes:
    bearer: {type: http, scheme: bearer}
"#,
            std::path::Path::new("t.yaml"),
        )
        .unwrap()
        .api
    }

    #[test]
    fn every_input_gets_its_first_probe_before_any_gets_a_second() {
        let api = api();
        let op = &api.operations[0];
        let genes = Genes {
            params: Vec::new(),
            body: Some((
                "application/json".into(),
                json!({"title": "t", "stock": 1, "meta": {"k": "v"}}),
            )),
            breach: None,
        };
        let mut rng = Rng64::seed_from_u64(1);
        let all = negative_inputs(&api, op, &genes, &mut rng);
        let inputs: Vec<&str> = all.iter().map(|i| i.note.input.as_str()).collect();
        let first_of = |name: &str| inputs.iter().position(|i| *i == name).unwrap();
        let distinct: std::collections::BTreeSet<&str> = inputs.iter().copied().collect();
        // The first round holds each input once.
        assert_eq!(
            inputs[..distinct.len()]
                .iter()
                .collect::<std::collections::BTreeSet<_>>()
                .len(),
            distinct.len()
        );
        for name in [
            "path id",
            "query offset",
            "header If-Match",
            "body /stock",
            "body /meta/k",
            "credentials bearer",
        ] {
            assert!(first_of(name) < distinct.len(), "{name}: {inputs:?}");
        }
        assert!(
            all.iter()
                .any(|i| i.change == Change::OmitField(vec!["stock".into()]))
        );
        assert!(
            all.iter()
                .any(|i| i.change == Change::OmitField(vec!["meta".into(), "k".into()]))
        );
        // Anonymous calls are allowed, so "no credentials" is not a breach.
        assert!(!all.iter().any(|i| i.note.kind == BreachKind::NoCredentials));
        assert!(all.iter().any(|i| i.change
            == Change::Credentials(vec![(
                Location::Header,
                "Authorization".into(),
                "Token abc".into()
            )])));
    }

    #[test]
    fn every_example_the_description_gives_is_sent_once_even_in_an_optional_nested_field() {
        // Prefect's event filter: `filter.text.query` is optional two levels
        // down, behind `anyOf [.., null]`, and its fourth example crashed
        // the server; the base body holds no `text` at all.
        let api = crate::load::load_text(
            r#"openapi: 3.1.0
info: {title: t, version: '1'}
paths:
  /events/filter:
    post:
      operationId: filter
      parameters:
      - {name: mode, in: query, schema: {type: string}, examples: {a: {value: fast}, b: {value: slow}}}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                limit: {type: integer}
                filter:
                  anyOf:
                  - $ref: '#/components/schemas/Filter'
                  - {type: 'null'}
      responses: {'200': {description: ok}}
components:
  schemas:
    Filter:
      type: object
      properties:
        order: {type: string}
        text:
          anyOf:
          - type: object
            required: [query]
            properties:
              query: {type: string, examples: [error, 'error -debug', '"timeout"', '+required -excluded']}
          - {type: 'null'}
"#,
            std::path::Path::new("t.yaml"),
        )
        .unwrap()
        .api;
        let mut rng = Rng64::seed_from_u64(1);
        let genes = Genes {
            params: Vec::new(),
            body: Some((
                "application/json".into(),
                json!({"limit": 5, "filter": {"order": "x"}}),
            )),
            breach: None,
        };
        let inputs = negative_inputs(&api, &api.operations[0], &genes, &mut rng);
        let bodies: Vec<&Value> = inputs
            .iter()
            .filter(|i| i.class == EdgeClass::Examples)
            .filter_map(|i| match &i.change {
                Change::SetField(path, v) if path.is_empty() => Some(v),
                _ => None,
            })
            .collect();
        let queries: Vec<&str> = bodies
            .iter()
            .filter_map(|b| b.pointer("/filter/text/query")?.as_str())
            .collect();
        assert_eq!(
            queries,
            [
                "error",
                "error -debug",
                "\"timeout\"",
                "+required -excluded"
            ],
            "{bodies:?}"
        );
        // What the base body held stays; each body is an input of its own,
        // so the edge pass sends all four.
        assert!(
            bodies
                .iter()
                .all(|b| b["limit"] == 5 && b["filter"]["order"] == "x")
        );
        let names: std::collections::BTreeSet<&str> = inputs
            .iter()
            .filter(|i| i.class == EdgeClass::Examples)
            .map(|i| i.note.input.as_str())
            .collect();
        assert!(names.len() >= 4, "{names:?}");
        // The parameter's examples too.
        assert!(
            inputs.iter().any(|i| i.class == EdgeClass::Examples
                && i.change == Change::SetParam(0, json!("slow")))
        );
    }

    #[test]
    fn a_bulk_body_sent_empty_still_gets_its_items_fields_tried() {
        let api = crate::load::load_text(
            "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /logs:\n    post:\n      operationId: logs\n      requestBody:\n        content:\n          application/json:\n            schema: {type: array, items: {type: object, required: [level], properties: {level: {type: integer}}}}\n      responses: {'201': {description: ok}}\n",
            std::path::Path::new("t.yaml"),
        )
        .unwrap()
        .api;
        let mut rng = Rng64::seed_from_u64(1);
        let genes = Genes {
            params: Vec::new(),
            body: Some(("application/json".into(), json!([]))),
            breach: None,
        };
        let inputs = negative_inputs(&api, &api.operations[0], &genes, &mut rng);
        let huge = inputs
            .iter()
            .find(|i| i.class == EdgeClass::Huge && i.note.input == "body /0/level")
            .expect("the item's level gets an integer past 64 bits");
        let Change::SetField(path, body) = &huge.change else {
            panic!("{huge:?}")
        };
        assert!(path.is_empty(), "the whole body is sent: {path:?}");
        assert_eq!(body.as_array().map(Vec::len), Some(1));
        assert!(body[0]["level"].to_string().len() > 19, "{body}");
    }

    #[test]
    fn a_body_gets_other_shapes_and_a_bulk_body_its_items_fields() {
        let api = crate::load::load_text(
            "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /s:\n    put:\n      operationId: put\n      requestBody:\n        content:\n          application/json:\n            schema: {type: object, properties: {theme: {type: string}}}\n      responses: {'200': {description: ok}}\n  /bulk:\n    post:\n      operationId: bulk\n      requestBody:\n        content:\n          application/json:\n            schema: {type: array, items: {type: object, properties: {status: {type: string, enum: [open, done]}}}}\n      responses: {'200': {description: ok}}\n",
            std::path::Path::new("t.yaml"),
        )
        .unwrap()
        .api;
        let mut rng = Rng64::seed_from_u64(1);
        let genes = |body: Value| Genes {
            params: Vec::new(),
            body: Some(("application/json".into(), body)),
            breach: None,
        };
        let put = negative_inputs(
            &api,
            &api.operations[0],
            &genes(json!({"theme": "x"})),
            &mut rng,
        );
        assert!(put.iter().any(
            |i| i.change == Change::SetField(Vec::new(), json!([null, null]))
                && i.class == EdgeClass::WrongShape
                && i.note.input == "body"
        ));
        let bulk = negative_inputs(
            &api,
            &api.operations[1],
            &genes(json!([{"status": "open"}])),
            &mut rng,
        );
        let status = |v: Value| Change::SetField(vec!["0".into(), "status".into()], v);
        assert!(
            bulk.iter().any(|i| i.change == status(json!(123))),
            "{bulk:?}"
        );
        // And the change lands in the item.
        let mut body = json!([{"status": "open"}]);
        set_at(&mut body, &["0".into(), "status".into()], Some(json!(123)));
        assert_eq!(body, json!([{"status": 123}]));
    }

    #[test]
    fn the_first_value_of_each_pair_goes_first_by_its_class_yield() {
        let input = |name: &str, class: EdgeClass| NegativeInput {
            change: Change::OmitParam(0),
            note: note(name, BreachKind::WrongType),
            class,
        };
        let mut queue = Queue::new(
            RestTest {
                calls: Vec::new(),
                groups: Vec::new(),
                sampler: Sampler::Initial,
                seed: 0,
            },
            Quality::Untried,
            vec![
                input("query a", EdgeClass::Metacharacters),
                input("query a", EdgeClass::Metacharacters),
                input("query b", EdgeClass::Bounds),
                input("query b", EdgeClass::Huge),
                input("query b", EdgeClass::Huge),
            ],
        );
        // One pair of the edge pass: (query b, huge).
        assert!(queue.has_untried_pair());
        let mut negatives = Negatives::new(2);
        let mut order = Vec::new();
        while let Some(k) = queue.next(&negatives.yields()) {
            let i = queue.inputs.remove(k).unwrap();
            queue.mark_tried(&i);
            order.push((i.note.input, i.class));
            // The pass's only pair is tried first.
            assert!(!queue.has_untried_pair());
        }
        // The edge pass's pairs first, then other pairs' first values, the
        // likeliest class first; then second values.
        assert_eq!(
            order,
            [
                ("query b".into(), EdgeClass::Huge),
                ("query b".into(), EdgeClass::Bounds),
                ("query a".into(), EdgeClass::Metacharacters),
                ("query b".into(), EdgeClass::Huge),
                ("query a".into(), EdgeClass::Metacharacters),
            ]
        );
        assert!(EdgeClass::Huge.in_pass() && !EdgeClass::Bounds.in_pass());
        // A class that broke an operation goes before the prior favourite
        // on the next one; one tried on a few without breaking falls back.
        let before = negatives.yields();
        assert!(before[EdgeClass::Huge.index()] > before[EdgeClass::Metacharacters.index()]);
        let tally = &mut negatives.classes[EdgeClass::Metacharacters.index()];
        tally.operations.insert(0);
        tally.operations_broken.insert(0);
        for op in 0..4 {
            negatives.classes[EdgeClass::Huge.index()]
                .operations
                .insert(op);
        }
        let after = negatives.yields();
        assert!(
            after[EdgeClass::Metacharacters.index()] > after[EdgeClass::Huge.index()],
            "{after:?}"
        );
    }

    #[test]
    fn multipart_bodies_are_sent_broken_three_ways() {
        let api = crate::load::load_text(
            "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /up:\n    post:\n      operationId: up\n      requestBody:\n        required: true\n        content:\n          multipart/form-data:\n            schema: {type: object, properties: {file: {type: string, format: binary}}}\n      responses: {'201': {description: ok}}\n",
            std::path::Path::new("t.yaml"),
        )
        .unwrap()
        .api;
        let op = &api.operations[0];
        let genes = Genes {
            params: Vec::new(),
            body: Some(("multipart/form-data".into(), json!({"file": "hello"}))),
            breach: None,
        };
        let mut rng = Rng64::seed_from_u64(1);
        let all = negative_inputs(&api, op, &genes, &mut rng);
        let flaws: Vec<&NegativeInput> = all
            .iter()
            .filter(|i| i.note.kind == BreachKind::MalformedMultipart)
            .collect();
        assert_eq!(flaws.len(), 3, "{all:?}");
        let inputs = super::super::request::Inputs {
            params: Vec::new(),
            body: genes.body.clone(),
        };
        let sent: Vec<RequestSpec> = flaws
            .iter()
            .map(|flaw| {
                let mut r = super::super::request::build_request(&api, op, &inputs);
                apply_to_request(flaw, &mut r);
                r
            })
            .collect();
        assert_eq!(sent[0].content_type.as_deref(), Some("multipart/form-data"));
        assert!(
            sent[1]
                .body
                .as_deref()
                .unwrap()
                .contains("Content-Disposition form-data")
        );
        assert!(
            sent[2]
                .body
                .as_deref()
                .unwrap()
                .contains("Content-Length: 1029\r\n")
        );
        assert!(sent.iter().all(|r| r.breach.is_some()));
    }

    #[test]
    fn changes_reach_the_request() {
        let api = api();
        let op = &api.operations[0];
        let mut params = vec![(Location::Path, "id".to_string(), json!(1))];
        let mut body = Some((
            "application/json".to_string(),
            json!({"title": "t", "stock": 1}),
        ));
        let omit = NegativeInput {
            change: Change::OmitField(vec!["stock".into()]),
            note: note("body /stock", BreachKind::Missing),
            class: EdgeClass::Missing,
        };
        apply_to_inputs(op, &omit, &mut params, &mut body);
        assert_eq!(body.as_ref().unwrap().1, json!({"title": "t"}));
        let set = NegativeInput {
            change: Change::SetParam(1, json!("abc")),
            note: note("query offset", BreachKind::WrongType),
            class: EdgeClass::WrongType,
        };
        apply_to_inputs(op, &set, &mut params, &mut body);
        assert!(params.contains(&(Location::Query, "offset".into(), json!("abc"))));
        let mut request = RequestSpec {
            headers: vec![("authorization".into(), "Bearer good".into())],
            ..Default::default()
        };
        let creds = NegativeInput {
            change: Change::Credentials(vec![(
                Location::Header,
                "Authorization".into(),
                "Token abc".into(),
            )]),
            note: note("credentials bearer", BreachKind::MalformedCredentials),
            class: EdgeClass::Credentials,
        };
        apply_to_request(&creds, &mut request);
        assert_eq!(
            request.headers,
            vec![("Authorization".to_string(), "Token abc".to_string())]
        );
        assert!(request.without_credentials());
    }

    #[test]
    fn the_fields_of_the_alternative_a_body_takes_are_tried_one_by_one() {
        // Arize Phoenix's prompt: `invocation_parameters` is a tagged union
        // (one object per model provider) and crashed on an integer past
        // 64 bits in the provider's `seed`; Prefect's filters sit behind
        // `anyOf [Filter, null]`.
        let api = crate::load::load_text(
            r#"openapi: 3.1.0
info: {title: t, version: '1'}
paths:
  /prompts:
    post:
      operationId: createPrompt
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                version:
                  type: object
                  properties:
                    invocation_parameters:
                      oneOf:
                      - $ref: '#/components/schemas/Openai'
                      - $ref: '#/components/schemas/Xai'
                      discriminator: {propertyName: type}
                filter:
                  anyOf:
                  - {type: object, properties: {limit: {type: integer}}}
                  - {type: 'null'}
      responses: {'200': {description: ok}}
components:
  schemas:
    Openai:
      type: object
      properties:
        type: {const: openai}
        openai: {type: object, properties: {temperature: {type: number}}}
    Xai:
      type: object
      properties:
        type: {const: xai}
        xai: {type: object, properties: {seed: {type: integer}}}
"#,
            std::path::Path::new("t.yaml"),
        )
        .unwrap()
        .api;
        let genes = Genes {
            params: Vec::new(),
            body: Some((
                "application/json".into(),
                json!({"version": {"invocation_parameters": {"type": "xai", "xai": {"seed": 441}}},
                       "filter": {"limit": 3}}),
            )),
            breach: None,
        };
        let mut rng = Rng64::seed_from_u64(1);
        let all = negative_inputs(&api, &api.operations[0], &genes, &mut rng);
        let huge_at = |path: &[&str]| {
            all.iter().any(|i| {
                i.class == EdgeClass::Huge
                    && matches!(&i.change, Change::SetField(p, _) if p.iter().map(String::as_str).eq(path.iter().copied()))
            })
        };
        assert!(huge_at(&[
            "version",
            "invocation_parameters",
            "xai",
            "seed"
        ]));
        assert!(huge_at(&["filter", "limit"]));
        // Only the alternative the body takes: no other provider's fields.
        assert!(!all.iter().any(|i| i.note.input.contains("/openai")));
    }

    #[test]
    fn an_operation_s_first_example_goes_before_every_other_edge_value() {
        // Prefect's event filter broke on its own example text query; at 40
        // requests a second the pass gave it four values, all of classes
        // with a higher yield, and never its example.
        let input = |name: &str, class| NegativeInput {
            change: Change::SetField(vec![name.into()], json!(1)),
            note: note(name, BreachKind::Unusual),
            class,
        };
        let base = RestTest::of(Vec::new(), Sampler::Negative, 0);
        let mut queue = Queue::new(
            base,
            Quality::Untried,
            vec![
                input("body /limit", EdgeClass::Huge),
                input("body /filter", EdgeClass::Null),
                input("body (examples 1)", EdgeClass::Examples),
                input("body (examples 2)", EdgeClass::Examples),
            ],
        );
        let yields: Vec<f64> = EdgeClass::ALL.iter().map(|c| c.prior_yield()).collect();
        let k = queue.next(&yields).unwrap();
        assert_eq!(queue.inputs[k].note.input, "body (examples 1)");
        let first = queue.inputs.remove(k).unwrap();
        queue.mark_tried(&first);
        // One example only: then the classes by their yield.
        let k = queue.next(&yields).unwrap();
        assert_eq!(queue.inputs[k].note.input, "body /limit");
    }

    #[test]
    fn an_input_that_takes_ids_gets_the_id_it_was_to_send_changed_to_name_nothing() {
        // Prefect's `POST /block_documents/` asserts that its
        // `block_type_id` names a block type: a well-formed id that names
        // none crashed it, a malformed one is refused first.
        let api = crate::load::load_text(
            r#"openapi: 3.1.0
info: {title: t, version: '1'}
paths:
  /boards/{board_id}/docs:
    post:
      operationId: createDoc
      parameters:
      - {name: board_id, in: path, required: true, schema: {type: string}}
      - {name: page, in: query, schema: {type: integer}}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                name: {type: string}
                block_type_id: {type: string, format: uuid}
                owner: {type: string, format: uuid}
                kind: {type: string, enum: [a, b]}
      responses: {'201': {description: ok}}
"#,
            std::path::Path::new("t.yaml"),
        )
        .unwrap()
        .api;
        let op = &api.operations[0];
        let genes = Genes {
            params: Vec::new(),
            body: Some((
                "application/json".into(),
                json!({"name": "n", "block_type_id": "e17a3fc3-1def-4672-93bf-54a278e5f252",
                       "owner": "0b5d2a9e-3c1f-4e6a-8b7d-9f0e1a2b3c4d", "kind": "a"}),
            )),
            breach: None,
        };
        let mut rng = Rng64::seed_from_u64(1);
        let all = negative_inputs(&api, op, &genes, &mut rng);
        let dangling_inputs: std::collections::BTreeSet<&str> = all
            .iter()
            .filter(|i| i.class == EdgeClass::Dangling)
            .map(|i| i.note.input.as_str())
            .collect();
        assert_eq!(
            dangling_inputs,
            ["body /block_type_id", "body /owner", "path board_id"]
                .into_iter()
                .collect()
        );
        // The value the request was to send (bound from an earlier answer
        // after the test was made) is the one changed.
        let input = |name: &str| {
            all.iter()
                .find(|i| i.class == EdgeClass::Dangling && i.note.input == name)
                .unwrap()
                .clone()
        };
        let mut params = vec![(Location::Path, "board_id".to_string(), json!("brd-5e0c71"))];
        let mut body = genes.body.clone();
        body.as_mut().unwrap().1["block_type_id"] = json!("0f2b8c55-6a1d-4e0b-a3f9-27c4d8e61b90");
        apply_to_inputs(op, &input("body /block_type_id"), &mut params, &mut body);
        let sent = body.as_ref().unwrap().1["block_type_id"]
            .as_str()
            .unwrap()
            .to_string();
        assert_ne!(sent, "0f2b8c55-6a1d-4e0b-a3f9-27c4d8e61b90");
        assert!(
            crate::generation::rest::edge_values::breaks(
                &api,
                &crate::model::Schema {
                    format: Some("uuid".into()),
                    ..crate::model::Schema::of_type(crate::model::SchemaType::String)
                },
                &json!(sent),
                Place::Json
            )
            .is_none(),
            "{sent}"
        );
        assert_eq!(&sent[14..15], "4");
        assert_eq!(&sent[19..20], "a");
        apply_to_inputs(op, &input("path board_id"), &mut params, &mut body);
        let board = params[0].2.as_str().unwrap();
        // The type prefix stays, the rest keeps its kind of characters.
        assert_eq!(board, "brd-0b5f26");
        // Integers move out of the ids a server hands out.
        assert_eq!(dangling(&json!(73021)), Some(json!(1_000_073_021)));
        assert_eq!(dangling(&json!("")), None);
    }

    #[test]
    fn a_change_inside_an_overlapping_union_member_is_not_judged_forbidden() {
        // An assignee by id or by e-mail: one given with both, its id left
        // out, is still an assignee by e-mail, which the server rightly
        // takes. A tagged union's members rule each other out.
        let api = crate::load::load_text(
            r#"openapi: 3.1.0
info: {title: t, version: '1'}
paths:
  /tasks:
    post:
      operationId: createTask
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                assignee:
                  oneOf:
                  - {type: object, required: [userId], properties: {userId: {type: integer}}}
                  - {type: object, required: [email], properties: {email: {type: string}}}
                trigger:
                  oneOf:
                  - {type: object, required: [type, n], properties: {type: {const: a}, n: {type: integer}}}
                  - {type: object, required: [type, m], properties: {type: {const: b}, m: {type: integer}}}
      responses: {'201': {description: ok}}
"#,
            std::path::Path::new("t.yaml"),
        )
        .unwrap()
        .api;
        let genes = Genes {
            params: Vec::new(),
            body: Some((
                "application/json".into(),
                json!({"assignee": {"userId": 3, "email": "a@b.c"}, "trigger": {"type": "a", "n": 1}}),
            )),
            breach: None,
        };
        let mut rng = Rng64::seed_from_u64(1);
        let all = negative_inputs(&api, &api.operations[0], &genes, &mut rng);
        let kind_of = |input: &str, class| {
            all.iter()
                .find(|i| i.note.input == input && i.class == class)
                .map(|i| i.note.kind)
        };
        assert_eq!(
            kind_of("body /assignee/userId", EdgeClass::Missing),
            Some(BreachKind::Unusual)
        );
        assert_eq!(
            kind_of("body /trigger/n", EdgeClass::Missing),
            Some(BreachKind::Missing)
        );
        assert_eq!(
            kind_of("body /trigger/n", EdgeClass::WrongType),
            Some(BreachKind::WrongType)
        );
    }
}
