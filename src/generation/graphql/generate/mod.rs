//! Sampling and mutating GraphQL calls (their genes are in [`super::genes`];
//! [`super::request`] writes them as documents).
//!
//! Validity is the point (a syntactically or statically invalid query only ever
//! earns an `errors` answer): a depth limit and a cycle guard bound the
//! selection, a composite field that cannot get a field within them selects
//! `__typename`, and a response name appears at most once among a selection set
//! and its inline fragments, so no two selections ever need merging (fields of
//! the same name but different types or arguments on two fragments are a
//! validation error).
//!
//! The generator and what sampling and mutating share are here; sampling a
//! call is in `sample`, values of input types in `values`, mutants in
//! `mutate`.

mod mutate;
mod sample;
#[cfg(test)]
mod tests;
mod values;

use indexmap::IndexMap;

use super::genes::{FieldSelection, Selection};
use crate::generation::mutation::Heat;
use crate::generation::values::Rng64;
use crate::model::graphql::{Field, InputValue, NamedType, TypeKind, TypeSystem};
use crate::model::{Api, SpecFormat};

/// Default depth limit: levels of selection sets below the root field.
pub const DEFAULT_MAX_DEPTH: usize = 4;

/// Nesting of input objects past which optional input fields are left out and
/// lists are empty (input types may be recursive through nullable fields).
const MAX_INPUT_DEPTH: usize = 4;

/// Longest list value sampled.
const MAX_LIST: usize = 3;

/// Samples, mutates and renders GraphQL calls of one schema.
#[derive(Debug)]
pub struct GqlGenerator {
    pub(super) ts: TypeSystem,
    max_depth: usize,
    /// Interface → the object types declaring it, in schema order (what an SDL
    /// printed from the same type system declares).
    implementers: IndexMap<String, Vec<String>>,
    /// The empty API that [`mutate_value`](crate::generation::mutation::mutate_value) resolves (never used) references in.
    no_api: Api,
    heat: Heat,
}

impl GqlGenerator {
    /// A generator for `ts`, selections at most `max_depth` levels deep (at least 1).
    pub fn new(ts: &TypeSystem, max_depth: usize) -> Self {
        let mut implementers: IndexMap<String, Vec<String>> = IndexMap::new();
        for t in ts.types.values() {
            if t.kind == TypeKind::Object {
                for i in &t.interfaces {
                    if kind(ts, i) == Some(TypeKind::Interface) {
                        implementers
                            .entry(i.clone())
                            .or_default()
                            .push(t.name.clone());
                    }
                }
            }
        }
        let no_api = crate::model::graphql::api_from_type_system(
            TypeSystem::default(),
            String::new(),
            SpecFormat::GraphqlSdl,
        );
        GqlGenerator {
            ts: ts.clone(),
            max_depth: max_depth.max(1),
            implementers,
            no_api,
            heat: Heat { progress: 0.5 },
        }
    }

    /// Sets the annealing of value mutation (share of the budget spent).
    pub fn set_heat(&mut self, heat: Heat) {
        self.heat = heat;
    }

    /// The type system generated from.
    pub fn type_system(&self) -> &TypeSystem {
        &self.ts
    }

    /// The root type a call names: a type's own name, or a root word.
    pub(super) fn root_type<'a>(&'a self, root: &'a str) -> &'a str {
        if self.ts.types.contains_key(root) {
            return root;
        }
        let named = match root {
            "Query" | "query" => self.ts.query_type.as_deref(),
            "Mutation" | "mutation" => self.ts.mutation_type.as_deref(),
            "Subscription" | "subscription" => self.ts.subscription_type.as_deref(),
            _ => None,
        };
        named.unwrap_or(root)
    }

    /// The object types inline fragments of `t` may be on.
    fn fragment_types<'a>(&'a self, t: &'a NamedType) -> Vec<&'a str> {
        match t.kind {
            TypeKind::Interface => self
                .implementers
                .get(&t.name)
                .map(|v| v.iter().map(String::as_str).collect())
                .unwrap_or_default(),
            TypeKind::Union => t
                .possible_types
                .iter()
                .filter(|p| kind(&self.ts, p) == Some(TypeKind::Object))
                .map(String::as_str)
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Whether `f` may be selected in a set at `depth` below the types on `path`:
    /// leaves always, composite fields within the depth limit and off the path.
    fn selectable(&self, f: &Field, depth: usize, path: &[String]) -> bool {
        if f.name.starts_with("__") {
            return false;
        }
        let base = f.ty.base();
        match kind(&self.ts, base) {
            Some(TypeKind::Scalar | TypeKind::Enum) => true,
            Some(TypeKind::Object | TypeKind::Interface | TypeKind::Union) => {
                depth < self.max_depth && !path.iter().any(|p| p == base)
            }
            _ => false,
        }
    }

    /// Inserts `fs` among the fields of `sel` in schema order.
    fn insert_field(&self, t: &NamedType, sel: &mut Selection, fs: FieldSelection) {
        let rank = |name: &str| t.fields.iter().position(|f| f.name == name);
        let at = sel
            .fields
            .iter()
            .take_while(|s| rank(&s.name) < rank(&fs.name))
            .count();
        sel.fields.insert(at, fs);
    }
}

/// The kind of the type named `name`, if it exists.
pub(super) fn kind(ts: &TypeSystem, name: &str) -> Option<TypeKind> {
    ts.get(name).map(|t| t.kind)
}

/// Whether an argument or input field must be given.
pub(super) fn required(v: &InputValue) -> bool {
    v.ty.is_non_null() && v.default_value.is_none()
}

/// `k` distinct indices below `n`, ascending (so output keeps schema order).
fn sorted_sample(rng: &mut Rng64, n: usize, k: usize) -> Vec<usize> {
    let mut picks = rand::seq::index::sample(rng, n, k.min(n)).into_vec();
    picks.sort_unstable();
    picks
}
