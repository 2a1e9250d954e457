//! Mutating a call while keeping it valid: a root argument changed, omitted
//! or added back, or somewhere in the selection a field toggled, a nested
//! field's arguments changed, an inline fragment added or removed, or
//! `__typename` toggled.

use rand::Rng;
use serde_json::Value;

use super::{GqlGenerator, MAX_INPUT_DEPTH, MAX_LIST, required};
use crate::generation::graphql::genes::{GqlCall, Selection};
use crate::generation::mutation::mutate_value;
use crate::generation::values::Rng64;
use crate::model::graphql::{Field, InputValue, TypeKind, TypeRef};
use crate::model::{Schema, SchemaType};

/// Where a mutation of a selection goes next.
enum Child {
    Field(usize),
    Fragment(usize),
}

impl GqlGenerator {
    /// Changes one gene, keeping the call valid: a root argument (changed,
    /// omitted or added back), or somewhere in the selection a field toggled
    /// (never leaving a set empty), a nested field's arguments, an inline
    /// fragment added or removed, or `__typename` toggled on an object.
    pub fn mutate(&self, call: &mut GqlCall, rng: &mut Rng64) {
        let root = self.root_type(&call.root).to_string();
        let Some(f) = self.ts.get(&root).and_then(|t| t.field(&call.field)) else {
            return;
        };
        let before = call.clone();
        // A few tries: some picks change nothing (toggling the only field).
        for _ in 0..8 {
            let has_args = !f.args.is_empty();
            match &mut call.selection {
                Some(sel) if !has_args || rng.random_bool(0.7) => {
                    let mut path = vec![root.clone(), sel.on.clone()];
                    self.mutate_selection(sel, 1, &mut path, &[], rng);
                }
                _ if has_args => self.mutate_args(&f.args, &mut call.args, rng),
                _ => return,
            }
            if *call != before {
                return;
            }
        }
    }

    /// Walks down the selection at random and changes one gene there.
    fn mutate_selection(
        &self,
        sel: &mut Selection,
        depth: usize,
        path: &mut Vec<String>,
        taken: &[String],
        rng: &mut Rng64,
    ) {
        let children: Vec<Child> = sel
            .fields
            .iter()
            .enumerate()
            .filter(|(_, f)| f.selection.is_some())
            .map(|(i, _)| Child::Field(i))
            .chain((0..sel.fragments.len()).map(Child::Fragment))
            .collect();
        if !children.is_empty() && rng.random_bool(0.5) {
            match children[rng.random_range(0..children.len())] {
                Child::Field(i) => {
                    if let Some(child) = sel.fields[i].selection.as_mut() {
                        path.push(child.on.clone());
                        self.mutate_selection(child, depth + 1, path, &[], rng);
                        path.pop();
                    }
                }
                Child::Fragment(j) => {
                    let used = sel.used_names(Some(j));
                    let frag = &mut sel.fragments[j];
                    path.push(frag.on.clone());
                    self.mutate_selection(frag, depth, path, &used, rng);
                    path.pop();
                    // A fragment left with only __typename says nothing new.
                    if frag.fields.is_empty() {
                        sel.fragments.remove(j);
                    }
                }
            }
            return;
        }
        self.mutate_here(sel, depth, path, taken, rng);
    }

    /// One change to the set itself.
    fn mutate_here(
        &self,
        sel: &mut Selection,
        depth: usize,
        path: &mut Vec<String>,
        taken: &[String],
        rng: &mut Rng64,
    ) {
        let Some(t) = self.ts.get(&sel.on) else {
            return;
        };
        let is_abstract = matches!(t.kind, TypeKind::Interface | TypeKind::Union);
        let mut blocked = taken.to_vec();
        blocked.extend(sel.used_names(None).into_iter().filter(|n| {
            // Names in fragments block base fields; the base's own do not.
            !sel.fields.iter().any(|f| &f.name == n)
        }));
        let candidates: Vec<&Field> = t
            .fields
            .iter()
            .filter(|f| self.selectable(f, depth, path) && !blocked.contains(&f.name))
            .collect();
        let with_args: Vec<usize> = (0..sel.fields.len())
            .filter(|&i| {
                t.field(&sel.fields[i].name)
                    .is_some_and(|f| !f.args.is_empty())
            })
            .collect();
        let frag_types = self.fragment_types(t);
        let mut ops = Vec::new();
        if !candidates.is_empty() {
            ops.push(0);
        }
        if !with_args.is_empty() {
            ops.push(1);
        }
        if !frag_types.is_empty() {
            ops.push(2);
        }
        if !is_abstract {
            ops.push(3);
        }
        if ops.is_empty() {
            return;
        }
        match ops[rng.random_range(0..ops.len())] {
            0 => {
                let f = candidates[rng.random_range(0..candidates.len())];
                if let Some(pos) = sel.fields.iter().position(|s| s.name == f.name) {
                    sel.fields.remove(pos);
                    if sel.is_empty() {
                        // EvoMaster's repair: an emptied set selects another field.
                        let others: Vec<&&Field> =
                            candidates.iter().filter(|c| c.name != f.name).collect();
                        if others.is_empty() {
                            sel.typename = true;
                        } else {
                            let g = others[rng.random_range(0..others.len())];
                            let fs = self.sample_field(g, depth, path, rng);
                            self.insert_field(t, sel, fs);
                        }
                    }
                } else {
                    let fs = self.sample_field(f, depth, path, rng);
                    self.insert_field(t, sel, fs);
                }
            }
            1 => {
                let i = with_args[rng.random_range(0..with_args.len())];
                if let Some(f) = t.field(&sel.fields[i].name) {
                    self.mutate_args(&f.args, &mut sel.fields[i].args, rng);
                }
            }
            2 => {
                let free: Vec<&str> = frag_types
                    .iter()
                    .copied()
                    .filter(|ft| !sel.fragments.iter().any(|s| s.on == *ft))
                    .collect();
                if !sel.fragments.is_empty() && (free.is_empty() || rng.random_bool(0.5)) {
                    sel.fragments
                        .remove(rng.random_range(0..sel.fragments.len()));
                } else if !free.is_empty() {
                    let on = free[rng.random_range(0..free.len())];
                    let used = sel.used_names(None);
                    if let Some(frag) = self.sample_fragment(on, depth, path, &used, rng) {
                        // Fragments stay in the order of the possible types.
                        let rank = |s: &str| frag_types.iter().position(|x| *x == s);
                        let at = sel
                            .fragments
                            .iter()
                            .take_while(|s| rank(&s.on) < rank(on))
                            .count();
                        sel.fragments.insert(at, frag);
                    }
                }
            }
            _ => {
                if !sel.typename || !sel.fields.is_empty() {
                    sel.typename = !sel.typename;
                }
            }
        }
    }

    /// Changes one argument: a new value, the value mutated, or an optional
    /// argument omitted.
    fn mutate_args(
        &self,
        defs: &[InputValue],
        args: &mut Vec<(String, Option<Value>)>,
        rng: &mut Rng64,
    ) {
        if defs.is_empty() {
            return;
        }
        let d = &defs[rng.random_range(0..defs.len())];
        let slot = match args.iter().position(|(n, _)| *n == d.name) {
            Some(i) => i,
            None => {
                args.push((d.name.clone(), None));
                args.len() - 1
            }
        };
        let new = match &args[slot].1 {
            None => Some(self.value(&d.ty, 0, rng)),
            Some(_) if !required(d) && rng.random_bool(0.2) => None,
            Some(v) => Some(self.mutate_typed(&d.ty, v, 0, rng)),
        };
        args[slot].1 = new;
    }

    /// A mutant of `value`, a value of `ty`, still valid for it.
    fn mutate_typed(&self, ty: &TypeRef, value: &Value, depth: usize, rng: &mut Rng64) -> Value {
        if value.is_null() {
            return self.value(ty, depth, rng);
        }
        match ty {
            TypeRef::NonNull(inner) => self.mutate_typed(inner, value, depth, rng),
            TypeRef::List(inner) => {
                let Value::Array(items) = value else {
                    return self.value(ty, depth, rng);
                };
                let mut items = items.clone();
                let p: f64 = rng.random();
                if items.is_empty() || (p < 0.33 && items.len() < MAX_LIST + 2) {
                    items.push(self.value(inner, depth + 1, rng));
                } else if p < 0.5 {
                    items.remove(rng.random_range(0..items.len()));
                } else {
                    let k = rng.random_range(0..items.len());
                    items[k] = self.mutate_typed(inner, &items[k], depth + 1, rng);
                }
                Value::Array(items)
            }
            TypeRef::Named(name) => self.mutate_named(name, value, depth, rng),
        }
    }

    fn mutate_named(&self, name: &str, value: &Value, depth: usize, rng: &mut Rng64) -> Value {
        let Some(t) = self.ts.get(name) else {
            return self.named_value(name, depth, rng);
        };
        match t.kind {
            TypeKind::Enum => {
                let others: Vec<&String> = t
                    .enum_values
                    .iter()
                    .filter(|v| value.as_str() != Some(v.as_str()))
                    .collect();
                match others.len() {
                    0 => self.named_value(name, depth, rng),
                    n => Value::String(others[rng.random_range(0..n)].clone()),
                }
            }
            TypeKind::InputObject => {
                let Value::Object(fields) = value else {
                    return self.named_value(name, depth, rng);
                };
                if t.input_fields.is_empty() || depth > 4 * MAX_INPUT_DEPTH {
                    return value.clone();
                }
                let mut fields = fields.clone();
                let f = &t.input_fields[rng.random_range(0..t.input_fields.len())];
                match fields.get(&f.name) {
                    None => {
                        fields.insert(f.name.clone(), self.value(&f.ty, depth + 1, rng));
                    }
                    Some(_) if !required(f) && rng.random_bool(0.2) => {
                        fields.shift_remove(&f.name);
                    }
                    Some(v) => {
                        let m = self.mutate_typed(&f.ty, v, depth + 1, rng);
                        fields.insert(f.name.clone(), m);
                    }
                }
                Value::Object(fields)
            }
            TypeKind::Scalar => self.mutate_scalar(name, value, rng),
            _ => value.clone(),
        }
    }

    /// Scalars through EvoMaster's operators of [`crate::generation::mutation`], kept in
    /// the GraphQL type's range (Int is 32-bit).
    pub(super) fn mutate_scalar(&self, name: &str, value: &Value, rng: &mut Rng64) -> Value {
        let (schema_type, fits) = match name {
            "Int" => (SchemaType::Integer, value.is_i64()),
            "Float" => (SchemaType::Number, value.is_number()),
            "Boolean" => return Value::Bool(!value.as_bool().unwrap_or(false)),
            // A scalar whose name says its shape (UUID, DateTime) rejects
            // most text: mostly another well-formed value, now and then
            // text mutated out of shape.
            _ if self.shape(name).is_some() && rng.random_bool(0.8) => {
                return self.scalar(name, rng);
            }
            _ => (SchemaType::String, value.is_string()),
        };
        if !fits {
            return self.scalar(name, rng);
        }
        let out = mutate_value(
            &self.no_api,
            &Schema::of_type(schema_type),
            value,
            self.heat,
            rng,
        );
        match name {
            "Int" => match out.as_i64() {
                Some(x) => Value::from(x.clamp(i64::from(i32::MIN), i64::from(i32::MAX))),
                None => self.scalar(name, rng),
            },
            "Float" if !out.is_number() => self.scalar(name, rng),
            _ if name != "Float" && !out.is_string() => self.scalar(name, rng),
            _ => out,
        }
    }
}
