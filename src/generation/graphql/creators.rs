//! The calls a test makes before the one it is about: the mutations that
//! create what its arguments are fed from (or, read-only, the queries
//! that list it), as the graph's consumes edges say, nearest first.

use indexmap::IndexMap;
use rand::Rng;

use super::links::{ArgSource, Maker};
use super::run::root_name;
use super::{GqlCall, GqlTestCall, Graphql, generate};
use crate::generation::search::Cx;

/// Probability of listing a schema first (`events`, before `event(id:)`)
/// when earlier tests already saw values of it.
const LIST_AGAIN: f64 = 0.3;

impl Graphql {
    /// The calls that make or list what a call's arguments are fed from,
    /// nearest first (`book(id)` ← `createBook(authorId)` ← `createAuthor`):
    /// for each argument (and field of an input-object argument) bound by an
    /// active consumes edge, the best such source schema some mutation
    /// produces, and a mutation producing it (one returning it, named
    /// `create…`, if there is one), itself preceded by its own creators. A
    /// source no mutation makes (or any, read-only) is listed instead by a
    /// query without required arguments (`events`), unless earlier tests
    /// saw its values already (then now and then). Each selects the property
    /// the link passes on.
    pub(super) fn creators(&self, cx: &mut Cx, call: &GqlCall, depth: usize) -> Vec<GqlTestCall> {
        if depth == 0 || !cx.config.use_graph {
            return Vec::new();
        }
        let ts = self.generator.type_system();
        let links = self.links.clone();
        let op = root_name(ts, call);
        let mut made: Vec<String> = Vec::new();
        let mut out = Vec::new();
        for (name, _) in &call.args {
            for input in links.inputs_of(&op, name) {
                let sources: Vec<&ArgSource> = links.of(&op, &input).filter(|s| s.active).collect();
                let by = |map: &IndexMap<String, Vec<Maker>>, root: &str| {
                    sources.iter().find_map(|s| {
                        let makers: Vec<Maker> = map
                            .get(&s.schema)
                            .into_iter()
                            .flatten()
                            .filter(|m| format!("{root}.{}", m.field) != op)
                            .filter(|m| root == "Mutation" || self.lists_freely(&m.field))
                            .cloned()
                            .collect();
                        (!makers.is_empty()).then_some((*s, makers))
                    })
                };
                let mutation = (!cx.config.read_only)
                    .then(|| by(&links.makers, "Mutation"))
                    .flatten();
                let (root, (source, makers)) = match mutation {
                    Some(found) => ("Mutation", found),
                    None => match by(&links.listers, "Query") {
                        Some(found) => ("Query", found),
                        None => continue,
                    },
                };
                if made.contains(&source.schema) {
                    continue;
                }
                made.push(source.schema.clone());
                let key = format!("{}.{}", source.schema, source.property);
                if root == "Query"
                    && self.pool.latest(&key).is_some()
                    && !cx.rng.random_bool(LIST_AGAIN)
                {
                    continue;
                }
                // Best tier first: returns the schema and is a creation, then
                // returns it, then a creation, then any producer.
                let tier = |m: &Maker| (!m.top, !m.field.starts_with("create"));
                let best = makers.iter().map(tier).min().unwrap_or_default();
                let tied: Vec<&Maker> = makers.iter().filter(|m| tier(m) == best).collect();
                let maker = tied[cx.rng.random_range(0..tied.len())];
                let Some(&maker_op) = self.positions.get(&format!("{root}.{}", maker.field)) else {
                    continue;
                };
                if !self.roots.contains_key(&maker_op) || !cx.ops.contains(&maker_op) {
                    continue;
                }
                let mut made_call = self.call(cx, maker_op);
                self.generator.ensure_selected(
                    &mut made_call.genes,
                    &maker.path,
                    &source.property,
                    &mut cx.rng,
                );
                let mut before = if root == "Mutation" {
                    self.creators(cx, &made_call.genes, depth - 1)
                } else {
                    Vec::new()
                };
                before.push(made_call);
                out.extend(before);
            }
        }
        out
    }

    /// Whether query `field` can be called without any argument (a listing).
    fn lists_freely(&self, field: &str) -> bool {
        let ts = self.generator.type_system();
        ts.query_type
            .as_deref()
            .and_then(|q| ts.get(q))
            .and_then(|t| t.field(field))
            .is_some_and(|f| !f.args.iter().any(generate::required))
    }
}
