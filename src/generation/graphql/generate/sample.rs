//! Sampling a call: its arguments and a selection set within the depth
//! limit, off the cycle path, with each response name once among a set and
//! its inline fragments; and adding to a selection what the next call needs.

use rand::Rng;
use serde_json::Value;

use super::{GqlGenerator, kind, required, sorted_sample};
use crate::generation::graphql::genes::{FieldSelection, GqlCall, Selection};
use crate::generation::values::Rng64;
use crate::model::graphql::{Field, InputValue, TypeKind};

/// Most fields sampled per selection set (schemas have types with hundreds of
/// fields; a query that selects them all, four levels deep, is enormous).
const MAX_FIELDS: usize = 4;

/// Most inline fragments sampled per interface or union (GitHub's `Node` has
/// over two hundred implementers).
const MAX_FRAGMENTS: usize = 3;

impl GqlGenerator {
    /// Random valid genes for `root.field`; `root` is a root type's name or one
    /// of the words `Query`, `Mutation`, `Subscription`.
    ///
    /// # Panics
    /// When the root type has no such field.
    pub fn sample(&self, root: &str, field: &str, rng: &mut Rng64) -> GqlCall {
        let root = self.root_type(root).to_string();
        let f = self
            .ts
            .get(&root)
            .and_then(|t| t.field(field))
            .unwrap_or_else(|| panic!("GraphQL root type {root} has no field {field}"));
        let args = self.sample_args(&f.args, rng);
        let base = f.ty.base();
        let selection = self.ts.is_composite(base).then(|| {
            let mut path = vec![root.clone(), base.to_string()];
            self.sample_selection(base, 1, &mut path, &[], rng)
        });
        GqlCall {
            root,
            field: field.to_string(),
            args,
            selection,
            breach: None,
        }
    }

    /// Makes `call` select the leaf `leaf` at the end of the fields `path`
    /// (`nodes`, then `id`), adding what is missing: a creation whose answer
    /// leaves out the id the next call needs passes nothing on. Nothing
    /// changes where the path does not exist or ends on an abstract type.
    pub(in crate::generation::graphql) fn ensure_selected(
        &self,
        call: &mut GqlCall,
        path: &[String],
        leaf: &str,
        rng: &mut Rng64,
    ) {
        let Some(mut sel) = call.selection.as_mut() else {
            return;
        };
        for name in path {
            let Some(t) = self.ts.get(&sel.on) else {
                return;
            };
            let Some(f) = t.field(name) else {
                return;
            };
            let base = f.ty.base().to_string();
            if kind(&self.ts, &base) != Some(TypeKind::Object) {
                return;
            }
            if !sel.fields.iter().any(|s| &s.name == name) {
                let fs = FieldSelection {
                    name: name.clone(),
                    args: self.sample_args(&f.args, rng),
                    selection: None,
                };
                self.insert_field(t, sel, fs);
            }
            let Some(at) = sel.fields.iter().position(|s| &s.name == name) else {
                return;
            };
            sel = sel.fields[at].selection.get_or_insert_with(|| Selection {
                on: base,
                typename: false,
                fields: Vec::new(),
                fragments: Vec::new(),
            });
        }
        if sel.fields.iter().any(|s| s.name == leaf) {
            return;
        }
        let Some(t) = self.ts.get(&sel.on) else {
            return;
        };
        let Some(f) = t.field(leaf) else {
            return;
        };
        if matches!(
            kind(&self.ts, f.ty.base()),
            Some(TypeKind::Scalar | TypeKind::Enum)
        ) {
            let fs = FieldSelection {
                name: leaf.to_string(),
                args: self.sample_args(&f.args, rng),
                selection: None,
            };
            self.insert_field(t, sel, fs);
        }
    }

    /// A random selection on `ty` at `depth`, leaving out fields named in `taken`.
    pub(super) fn sample_selection(
        &self,
        ty: &str,
        depth: usize,
        path: &mut Vec<String>,
        taken: &[String],
        rng: &mut Rng64,
    ) -> Selection {
        let mut sel = Selection {
            on: ty.to_string(),
            typename: false,
            fields: Vec::new(),
            fragments: Vec::new(),
        };
        let Some(t) = self.ts.get(ty) else {
            sel.typename = true;
            return sel;
        };
        let is_abstract = matches!(t.kind, TypeKind::Interface | TypeKind::Union);
        let candidates: Vec<&Field> = t
            .fields
            .iter()
            .filter(|f| self.selectable(f, depth, path) && !taken.contains(&f.name))
            .collect();
        if !candidates.is_empty() {
            // Abstract types may select only through fragments (and __typename).
            let min = usize::from(!is_abstract);
            let k = rng.random_range(min..=candidates.len().min(MAX_FIELDS));
            for i in sorted_sample(rng, candidates.len(), k) {
                sel.fields
                    .push(self.sample_field(candidates[i], depth, path, rng));
            }
        }
        if is_abstract {
            sel.typename = true;
            let types = self.fragment_types(t);
            let m = rng.random_range(0..=types.len().min(MAX_FRAGMENTS));
            for i in sorted_sample(rng, types.len(), m) {
                let used = sel.used_names(None);
                if let Some(frag) = self.sample_fragment(types[i], depth, path, &used, rng) {
                    sel.fragments.push(frag);
                }
            }
        } else if sel.fields.is_empty() || rng.random_bool(0.1) {
            sel.typename = true;
        }
        sel
    }

    /// An inline fragment on object type `on`, or `None` when every field it
    /// could select is taken.
    pub(super) fn sample_fragment(
        &self,
        on: &str,
        depth: usize,
        path: &mut Vec<String>,
        taken: &[String],
        rng: &mut Rng64,
    ) -> Option<Selection> {
        path.push(on.to_string());
        let frag = self.sample_selection(on, depth, path, taken, rng);
        path.pop();
        (!frag.fields.is_empty()).then_some(frag)
    }

    pub(super) fn sample_field(
        &self,
        f: &Field,
        depth: usize,
        path: &mut Vec<String>,
        rng: &mut Rng64,
    ) -> FieldSelection {
        let base = f.ty.base();
        let selection = self.ts.is_composite(base).then(|| {
            path.push(base.to_string());
            let s = self.sample_selection(base, depth + 1, path, &[], rng);
            path.pop();
            s
        });
        FieldSelection {
            name: f.name.clone(),
            args: self.sample_args(&f.args, rng),
            selection,
        }
    }

    /// Values for `defs`: required ones always, optional ones half the time.
    pub(super) fn sample_args(
        &self,
        defs: &[InputValue],
        rng: &mut Rng64,
    ) -> Vec<(String, Option<Value>)> {
        defs.iter()
            .map(|d| {
                let v = (required(d) || rng.random_bool(0.5)).then(|| self.value(&d.ty, 0, rng));
                (d.name.clone(), v)
            })
            .collect()
    }
}
