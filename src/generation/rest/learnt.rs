//! The constraints a REST run learnt ([`crate::generation::constraints`]):
//! per input, the schema with the rule written in, which every request's
//! values are made to keep (a negative test then breaks one on purpose).

use std::collections::HashMap;

use indexmap::IndexMap;

use serde_json::Value;

use crate::execution::Exchange;
use crate::generation::constraints::{Affix, Input, Learnt, Rule, from_answer, rules_in};
use crate::generation::rest::edge_values::{Place, breaks};
use crate::generation::values::{Rng64, value_for};
use crate::model::{Api, Location, Schema};

/// Rules learnt per input, at most: a server whose messages contradict
/// each other is not followed forever.
const MAX_RULES: usize = 4;

/// What a run learnt.
#[derive(Debug, Clone, Default)]
pub struct Constraints {
    /// Per operation, per input: the input's schema with the rules written
    /// in, in the order learnt (values are remade in that order, so a seed's
    /// requests repeat). By operation, because every request looks its own up.
    schemas: HashMap<usize, IndexMap<Input, Schema>>,
    /// Per operation, per input: the rules kept by changing a value (a
    /// text it must end with, a fresh tail), in the order learnt.
    affixes: HashMap<usize, IndexMap<Input, Affix>>,
    /// Rules per input so far.
    counts: IndexMap<(usize, Input), usize>,
    /// What was learnt, in order, for the report.
    pub learnt: Vec<Learnt>,
}

impl Constraints {
    /// The rules the description states in prose (parameter and top-level
    /// body field descriptions).
    pub fn from_descriptions(api: &Api) -> Constraints {
        let mut c = Constraints::default();
        for (i, op) in api.operations.iter().enumerate() {
            for (j, p) in op.parameters.iter().enumerate() {
                if let Some(text) = &p.description {
                    for rule in rules_in(text) {
                        c.learn(api, i, Input::Param(j), &rule, "description", text);
                    }
                }
            }
            let Some((_, body)) = op.request_body.as_ref().and_then(|b| b.primary_schema()) else {
                continue;
            };
            for (name, prop) in &api.resolve(body).properties {
                if let Some(text) = &api.resolve(prop).description {
                    for rule in rules_in(text) {
                        c.learn(
                            api,
                            i,
                            Input::Field(vec![name.clone()]),
                            &rule,
                            "description",
                            text,
                        );
                    }
                }
            }
        }
        c
    }

    /// The constraints with what a refusal of `op` states, when it teaches
    /// anything new.
    pub fn from_refusal(&self, api: &Api, op: usize, ex: &Exchange) -> Option<Constraints> {
        let mut rules = from_answer(api, &api.operations[op], ex.json(), &ex.body);
        if rules.is_empty() && ex.status == Some(409) {
            rules = taken_names(api, op, ex);
        }
        if rules.is_empty() {
            return None;
        }
        let mut next = self.clone();
        let source = format!("answer {} (seq {})", ex.status.unwrap_or(0), ex.seq);
        let mut changed = false;
        for (input, rule, message) in rules {
            changed |= next.learn(api, op, input, &rule, &source, &message);
        }
        changed.then_some(next)
    }

    fn learn(
        &mut self,
        api: &Api,
        op: usize,
        input: Input,
        rule: &crate::generation::constraints::Rule,
        source: &str,
        message: &str,
    ) -> bool {
        let key = (op, input.clone());
        if self.counts.get(&key).copied().unwrap_or(0) >= MAX_RULES {
            return false;
        }
        let Some(original) = input.schema(api, &api.operations[op]) else {
            return false;
        };
        if rule.is_affix() {
            let affixes = self.affixes.entry(op).or_default();
            if !affixes.entry(input.clone()).or_default().add(rule) {
                return false;
            }
        } else {
            let mut schema = self
                .schemas
                .get(&op)
                .and_then(|s| s.get(&input))
                .cloned()
                .unwrap_or_else(|| api.resolve(original).clone());
            if !rule.apply(&mut schema) {
                return false;
            }
            self.schemas
                .entry(op)
                .or_default()
                .insert(input.clone(), schema);
        }
        *self.counts.entry(key).or_insert(0) += 1;
        let operation = &api.operations[op];
        let message = message.trim();
        self.learnt.push(Learnt {
            operation: operation.name.clone(),
            input: input.describe(operation),
            rule: rule.describe(),
            source: source.to_string(),
            message: match message.char_indices().nth(200) {
                Some((at, _)) => format!("{}…", &message[..at]),
                None => message.to_string(),
            },
        });
        true
    }

    /// Makes the inputs of a call of `op` keep what was learnt: a value
    /// that breaks its input's learnt schema is replaced by one that keeps
    /// it. Inputs not sent stay unsent.
    pub fn keep(
        &self,
        api: &Api,
        op: usize,
        params: &mut [(Location, String, Value)],
        body: &mut Option<(String, Value)>,
        rng: &mut Rng64,
    ) {
        self.keep_schemas(api, op, params, body, rng);
        let Some(affixes) = self.affixes.get(&op) else {
            return;
        };
        let operation = &api.operations[op];
        for (input, affix) in affixes {
            match input {
                Input::Param(j) => {
                    let p = &operation.parameters[*j];
                    for (l, n, v) in params.iter_mut() {
                        if *l == p.location && *n == p.name {
                            affix.keep(v, rng);
                        }
                    }
                }
                Input::Field(path) => {
                    let Some((_, value)) = body.as_mut() else {
                        continue;
                    };
                    let mut at = Some(&mut *value);
                    for k in path {
                        at = at.and_then(|v| v.get_mut(k.as_str()));
                    }
                    if let Some(v) = at {
                        affix.keep(v, rng);
                    }
                }
            }
        }
    }

    fn keep_schemas(
        &self,
        api: &Api,
        op: usize,
        params: &mut [(Location, String, Value)],
        body: &mut Option<(String, Value)>,
        rng: &mut Rng64,
    ) {
        let Some(learnt) = self.schemas.get(&op) else {
            return;
        };
        let operation = &api.operations[op];
        for (input, schema) in learnt {
            match input {
                Input::Param(j) => {
                    let p = &operation.parameters[*j];
                    let place = match p.location {
                        Location::Path => Place::Path,
                        Location::Header => Place::Header,
                        _ => Place::Text,
                    };
                    for (l, n, v) in params.iter_mut() {
                        if *l == p.location
                            && *n == p.name
                            && breaks(api, schema, v, place).is_some()
                        {
                            *v = value_for(api, schema, rng);
                        }
                    }
                }
                Input::Field(path) => {
                    let Some((mime, value)) = body.as_mut() else {
                        continue;
                    };
                    let place = if crate::model::is_json_mime(mime) {
                        Place::Json
                    } else {
                        Place::Text
                    };
                    let current = path.iter().try_fold(&*value, |v, k| v.get(k.as_str()));
                    if let Some(current) = current
                        && breaks(api, schema, current, place).is_some()
                    {
                        let fresh = value_for(api, schema, rng);
                        super::negative::set_at(value, path, Some(fresh));
                    }
                }
            }
        }
    }
}

/// A creation answered 409 without saying why: the name it gave (a
/// top-level identifying string field of the body it sent, `name`, `slug`)
/// is taken, and later ones must be new.
fn taken_names(api: &Api, op: usize, ex: &Exchange) -> Vec<(Input, Rule, String)> {
    let operation = &api.operations[op];
    if !matches!(
        operation.method,
        crate::model::Method::Post | crate::model::Method::Put
    ) {
        return Vec::new();
    }
    let sent: Option<Value> = ex
        .request
        .body
        .as_deref()
        .and_then(|b| serde_json::from_str(b).ok());
    let Some(Value::Object(fields)) = sent else {
        return Vec::new();
    };
    let message = crate::generation::constraints::message_text(ex.json(), &ex.body);
    fields
        .iter()
        .filter(|(name, v)| {
            v.is_string()
                && crate::model::names::words(name)
                    .last()
                    .is_some_and(|w| crate::model::names::is_identifying(w))
        })
        .filter_map(|(name, _)| {
            let input = Input::Field(vec![name.clone()]);
            input.schema(api, operation)?;
            Some((input, Rule::Unique, format!("409: {}", message.trim())))
        })
        .take(1)
        .collect()
}
