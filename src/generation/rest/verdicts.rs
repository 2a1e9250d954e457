//! What the answers say about each input's values, and what positive tests
//! then send: an input whose made-up values keep being refused (404 for a
//! path parameter, a 400 or 422 whose message names it) while values
//! earlier answers gave succeed takes only such values from then on; an
//! optional input the server refuses whenever it is sent is left out, or
//! set to the one value it accepted. Negative tests still send the rest (a
//! negative test's wrong input is applied after these choices).
//!
//! Inputs are tallied where they mean the same thing: a path parameter by
//! the path up to it (`/servers/{server_id}` for every operation below it),
//! a header or cookie by its name across operations, anything else per
//! operation.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use crate::execution::Exchange;
use crate::graph::{Evidence, InputLearnt, PropertyGraph};
use crate::model::{Api, Location};

/// Refusals of made-up (or, for optional inputs, of any sent) values before
/// a verdict: one or two may be bad luck (a deleted resource, another input
/// at fault).
const REFUSALS: u32 = 3;

/// An optional input refused this many times for each time it was
/// accepted is refused for its presence, not for a value: it is then set to
/// the value accepted.
const MOSTLY: u32 = 4;

/// Exchanges kept as evidence per input.
const EVIDENCE: usize = 6;

/// Where an input's tally is kept.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    /// A path parameter, by the path template up to it.
    Path(String),
    /// A header or cookie, by its location and lower-case name.
    Global(Location, String),
    /// Another input of one operation: query parameters and top-level body
    /// fields.
    Op(usize, Location, String),
}

/// What positive tests do with an input.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Only values earlier answers gave (the pool), never made-up ones.
    Pooled,
    /// Not sent at all.
    LeftOut,
    /// Sent with this value, the one the server accepted.
    Accepted(Value),
}

/// One request's inputs as sent, for learning from its answer.
#[derive(Debug, Clone, Default)]
pub struct Sent {
    /// Parameters sent: position in the operation's parameters, value, and
    /// whether an earlier call of the test gave it.
    pub params: Vec<(usize, Value, bool)>,
}

/// A positive request and its answer, as verdicts learn from them.
#[derive(Debug, Clone, Copy)]
pub struct Answered<'a> {
    /// The operation requested (its position).
    pub op: usize,
    /// The inputs sent.
    pub sent: &'a Sent,
    /// The request and its answer.
    pub ex: &'a Exchange,
    /// The inputs the answer's message names.
    pub named: &'a [(Location, String)],
}

#[derive(Debug, Clone, Default)]
struct Tally {
    /// Made-up values refused, and answered 2xx.
    made_refused: u32,
    made_ok: u32,
    /// Known values (pooled, listed, flowed) answered 2xx.
    known_ok: u32,
    /// Optional inputs: refusals naming the input while sent, 2xx while
    /// sent (with the last value accepted), 2xx while not sent.
    sent_refused: u32,
    sent_ok: u32,
    accepted: Option<Value>,
    absent_ok: u32,
    /// Operations that refused it while sent.
    refused_by: Vec<usize>,
    /// Exchanges that refused a value, and one that accepted a known one.
    refusals: Vec<u64>,
    success: Option<u64>,
    statuses: BTreeMap<u16, u32>,
}

impl Tally {
    /// Whether any value of the input was refused yet.
    fn refused(&self) -> bool {
        !self.refusals.is_empty()
    }
}

/// The run's memory of which values work, per input.
#[derive(Debug, Clone, Default)]
pub struct Verdicts {
    /// Per operation, per parameter: its key.
    params: Vec<Vec<Key>>,
    /// Operations that declare each key.
    declared: HashMap<Key, usize>,
    tallies: HashMap<Key, Tally>,
    /// Verdicts reached, in a stable order.
    pub verdicts: BTreeMap<Key, Verdict>,
}

/// A value as the text a path, query or header carries.
fn text(v: &Value) -> String {
    crate::execution::wire::as_text(v)
}

impl Verdicts {
    /// Keys for every input of `api`.
    pub fn new(api: &Api) -> Verdicts {
        let params: Vec<Vec<Key>> = api
            .operations
            .iter()
            .enumerate()
            .map(|(i, op)| {
                op.parameters
                    .iter()
                    .map(|p| key_of(i, &op.path, p.location, &p.name))
                    .collect()
            })
            .collect();
        let mut declared: HashMap<Key, usize> = HashMap::new();
        for key in params.iter().flatten() {
            *declared.entry(key.clone()).or_default() += 1;
        }
        Verdicts {
            params,
            declared,
            ..Default::default()
        }
    }

    /// The verdict on parameter `j` of operation `op`, if any.
    pub fn param(&self, op: usize, j: usize) -> Option<&Verdict> {
        if self.verdicts.is_empty() {
            return None;
        }
        self.verdicts.get(self.params.get(op)?.get(j)?)
    }

    /// Learns from the answer to a positive request; `known` says whether a
    /// value of parameter `j` is one earlier answers gave. New verdicts are
    /// written into `graph` as evidence.
    pub fn learn(
        &mut self,
        api: &Api,
        answered: &Answered<'_>,
        known: &mut dyn FnMut(usize, &Value) -> bool,
        mut graph: Option<&mut PropertyGraph>,
    ) -> bool {
        let Answered {
            op,
            sent,
            ex,
            named,
        } = *answered;
        let Some(status) = ex.status else {
            return false;
        };
        let ok = (200..300).contains(&status);
        let operation = &api.operations[op];
        let mut touched: Vec<Key> = Vec::new();
        let is_named = |l: Location, n: &str| {
            named
                .iter()
                .any(|(nl, nn)| *nl == l && nn.eq_ignore_ascii_case(n))
        };
        for (j, p) in operation.parameters.iter().enumerate() {
            let key = &self.params[op][j];
            if self.verdicts.contains_key(key) {
                continue;
            }
            let entry = sent.params.iter().find(|(k, _, _)| *k == j);
            let Some((_, value, flowed)) = entry else {
                // Headers and cookies: whether the server does without them.
                if ok && !p.required && matches!(key, Key::Global(..)) {
                    match self.tallies.get_mut(key) {
                        Some(t) => t.absent_ok += 1,
                        None => {
                            let t = Tally {
                                absent_ok: 1,
                                ..Default::default()
                            };
                            self.tallies.insert(key.clone(), t);
                        }
                    }
                }
                continue;
            };
            let refused = match status {
                404 | 410 => p.location == Location::Path,
                400 | 422 => is_named(p.location, &p.name),
                _ => false,
            };
            // Answers count for an input from its first refusal on: most
            // inputs are never refused, and a request's cost stays small.
            let counted = refused || (ok && self.tallies.get(key).is_some_and(Tally::refused));
            if !counted {
                continue;
            }
            let is_known = *flowed || known(j, value);
            let t = self.tallies.entry(key.clone()).or_default();
            if ok {
                if is_known {
                    t.known_ok += 1;
                    t.success.get_or_insert(ex.seq);
                } else {
                    t.made_ok += 1;
                }
                if !p.required {
                    t.sent_ok += 1;
                    t.accepted = Some(value.clone());
                }
            } else {
                if !is_known {
                    t.made_refused += 1;
                }
                if !p.required {
                    t.sent_refused += 1;
                    if !t.refused_by.contains(&op) {
                        t.refused_by.push(op);
                    }
                }
                if t.refusals.len() < EVIDENCE {
                    t.refusals.push(ex.seq);
                }
                *t.statuses.entry(status).or_default() += 1;
            }
            touched.push(key.clone());
        }
        let mut changed = false;
        for key in touched {
            let t = &self.tallies[&key];
            // Presence refused across operations: a header or cookie that
            // every operation declaring it (two at least) refused, and that
            // was (almost) never accepted. A query parameter's refusals are
            // about its values, which negative tests and learnt rules
            // handle; leaving it out would hide what it reaches.
            let across = matches!(key, Key::Global(..))
                && t.refused_by.len() >= self.declared.get(&key).copied().unwrap_or(1).min(2);
            let verdict = if t.made_refused >= REFUSALS && t.made_ok == 0 && t.known_ok > 0 {
                Some(Verdict::Pooled)
            } else if across && t.sent_refused >= REFUSALS {
                match &t.accepted {
                    Some(v) if t.sent_ok > 0 && t.sent_refused >= MOSTLY * t.sent_ok => {
                        Some(Verdict::Accepted(v.clone()))
                    }
                    _ if t.sent_ok == 0 && t.absent_ok > 0 => Some(Verdict::LeftOut),
                    _ => None,
                }
            } else {
                None
            };
            let Some(verdict) = verdict else { continue };
            if let Some(g) = graph.as_deref_mut() {
                self.note(api, g, &key, &verdict);
            }
            self.verdicts.insert(key, verdict);
            changed = true;
        }
        changed
    }

    /// Writes a verdict into the graph, on every input it covers.
    fn note(&self, api: &Api, graph: &mut PropertyGraph, key: &Key, verdict: &Verdict) {
        let t = &self.tallies[key];
        let statuses: Vec<String> = t
            .statuses
            .iter()
            .map(|(s, n)| format!("{n}× {s}"))
            .collect();
        let (values, value, note) = match verdict {
            Verdict::Pooled => (
                "pooled",
                None,
                format!(
                    "{} made-up values refused ({}), none accepted; values earlier answers gave answered 2xx {} time(s)",
                    t.made_refused,
                    statuses.join(", "),
                    t.known_ok
                ),
            ),
            Verdict::LeftOut => (
                "left_out",
                None,
                format!(
                    "refused {} time(s) when sent ({}), never accepted; answered 2xx {} time(s) when left out",
                    t.sent_refused,
                    statuses.join(", "),
                    t.absent_ok
                ),
            ),
            Verdict::Accepted(v) => (
                "accepted_value",
                Some(v.clone()),
                format!(
                    "refused {} time(s) when sent ({}); accepted {}",
                    t.sent_refused,
                    statuses.join(", "),
                    text(v)
                ),
            ),
        };
        let mut exchanges = t.refusals.clone();
        exchanges.extend(t.success);
        let learnt = InputLearnt {
            values: values.into(),
            value,
            evidence: Evidence { exchanges, note },
        };
        for (i, op) in api.operations.iter().enumerate() {
            for p in &op.parameters {
                if &key_of(i, &op.path, p.location, &p.name) == key {
                    graph.note_input(&op.name, p.location, &p.name, learnt.clone());
                }
            }
        }
    }
}

/// Where input `(location, name)` of operation `op` (at `path`) is tallied.
fn key_of(op: usize, path: &str, location: Location, name: &str) -> Key {
    match location {
        Location::Path => {
            let needle = format!("{{{name}}}");
            match path.find(&needle) {
                Some(at) => Key::Path(path[..at + needle.len()].to_string()),
                None => Key::Op(op, location, name.to_string()),
            }
        }
        Location::Header | Location::Cookie => Key::Global(location, name.to_ascii_lowercase()),
        _ => Key::Op(op, location, name.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SPEC: &str = r#"openapi: 3.0.0
info: {title: t, version: '1'}
paths:
  /servers/{server_id}:
    get:
      operationId: getServer
      parameters:
      - {name: server_id, in: path, required: true, schema: {type: string}}
      - {name: X-Version, in: header, schema: {type: string}}
      responses: {'200': {description: ok}, '404': {description: no}}
  /servers/{server_id}/zones:
    get:
      operationId: listZones
      parameters:
      - {name: server_id, in: path, required: true, schema: {type: string}}
      - {name: X-Version, in: header, schema: {type: string}}
      responses: {'200': {description: ok}}
"#;

    fn exchange(seq: u64, status: u16) -> Exchange {
        Exchange {
            seq,
            status: Some(status),
            ..Default::default()
        }
    }

    #[test]
    fn made_up_values_refused_while_known_ones_work_give_pooled_values_below_too() {
        let api = crate::load::load_text(SPEC, std::path::Path::new("t.yaml"))
            .unwrap()
            .api;
        let mut graph = crate::graph::build(&api);
        let mut v = Verdicts::new(&api);
        let sent = |value: &str| Sent {
            params: vec![(0, json!(value), false)],
        };
        let mut known = |_: usize, v: &Value| v == &json!("localhost");
        for seq in 0..3 {
            v.learn(
                &api,
                &Answered {
                    op: 0,
                    sent: &sent("xyz"),
                    ex: &exchange(seq, 404),
                    named: &[],
                },
                &mut known,
                Some(&mut graph),
            );
        }
        assert!(v.param(0, 0).is_none(), "no known value has worked yet");
        assert!(v.learn(
            &api,
            &Answered {
                op: 0,
                sent: &sent("localhost"),
                ex: &exchange(3, 200),
                named: &[],
            },
            &mut known,
            Some(&mut graph),
        ));
        assert_eq!(v.param(0, 0), Some(&Verdict::Pooled));
        // The operation below the same parameter shares the verdict.
        assert_eq!(v.param(1, 0), Some(&Verdict::Pooled));
        let doc = crate::graph::export::to_document(&graph);
        let node = doc.nodes.iter().find(|n| n.name == "listZones").unwrap();
        let learnt = node.operation().unwrap().inputs[0].learnt.as_ref().unwrap();
        assert_eq!(learnt.values, "pooled");
        assert_eq!(learnt.evidence.exchanges, vec![0, 1, 2, 3]);
    }

    #[test]
    fn an_optional_header_refused_whenever_sent_is_left_out_everywhere() {
        let api = crate::load::load_text(SPEC, std::path::Path::new("t.yaml"))
            .unwrap()
            .api;
        let mut graph = crate::graph::build(&api);
        let mut v = Verdicts::new(&api);
        let mut known = |_: usize, _: &Value| true;
        let named = vec![(Location::Header, "x-version".to_string())];
        let with = Sent {
            params: vec![(0, json!("localhost"), false), (1, json!("zz"), false)],
        };
        let without = Sent {
            params: vec![(0, json!("localhost"), false)],
        };
        v.learn(
            &api,
            &Answered {
                op: 1,
                sent: &without,
                ex: &exchange(0, 200),
                named: &[],
            },
            &mut known,
            Some(&mut graph),
        );
        // A 400 that names another input says nothing about this one.
        v.learn(
            &api,
            &Answered {
                op: 0,
                sent: &with,
                ex: &exchange(1, 400),
                named: &[],
            },
            &mut known,
            Some(&mut graph),
        );
        for seq in 2..5 {
            v.learn(
                &api,
                &Answered {
                    op: seq as usize % 2,
                    sent: &with,
                    ex: &exchange(seq, 400),
                    named: &named,
                },
                &mut known,
                Some(&mut graph),
            );
        }
        assert_eq!(v.param(0, 1), Some(&Verdict::LeftOut));
        assert_eq!(v.param(1, 1), Some(&Verdict::LeftOut));
    }
}
