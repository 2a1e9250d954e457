//! Sampling and mutating GraphQL calls (their genes are in [`super::genes`];
//! [`super::render`] writes them as documents).
//!
//! Validity is the point (a syntactically or statically invalid query only ever
//! earns an `errors` answer): a depth limit and a cycle guard bound the
//! selection, a composite field that cannot get a field within them selects
//! `__typename`, and a response name appears at most once among a selection set
//! and its inline fragments, so no two selections ever need merging (fields of
//! the same name but different types or arguments on two fragments are a
//! validation error).

use indexmap::IndexMap;
use rand::Rng;
use serde_json::{Map, Value};

use super::genes::{FieldSelection, GqlCall, Selection};
use crate::generation::mutation::{Heat, mutate_value};
use crate::generation::values::{Rng64, value_for};
use crate::model::graphql::{Field, InputValue, NamedType, TypeKind, TypeRef, TypeSystem};
use crate::model::{Api, Schema, SchemaType, SpecFormat};

/// Default depth limit: levels of selection sets below the root field.
pub const DEFAULT_MAX_DEPTH: usize = 4;

/// Most fields sampled per selection set (schemas have types with hundreds of
/// fields; a query that selects them all, four levels deep, is enormous).
const MAX_FIELDS: usize = 4;

/// Most inline fragments sampled per interface or union (GitHub's `Node` has
/// over two hundred implementers).
const MAX_FRAGMENTS: usize = 3;

/// Nesting of input objects past which optional input fields are left out and
/// lists are empty (input types may be recursive through nullable fields).
const MAX_INPUT_DEPTH: usize = 4;

/// Longest list value sampled.
const MAX_LIST: usize = 3;

/// Characters that often break servers that splice input into queries or
/// markup; the newline and quote also exercise literal escaping.
const AWKWARD: [char; 9] = ['\'', '"', '<', '%', ' ', 'é', '\\', ';', '\n'];

/// Samples, mutates and renders GraphQL calls of one schema.
#[derive(Debug)]
pub struct GqlGenerator {
    pub(super) ts: TypeSystem,
    max_depth: usize,
    /// Interface → the object types declaring it, in schema order (what an SDL
    /// printed from the same type system declares).
    implementers: IndexMap<String, Vec<String>>,
    /// The empty API that [`mutate_value`] resolves (never used) references in.
    no_api: Api,
    heat: Heat,
}

/// Where a mutation of a selection goes next.
enum Child {
    Field(usize),
    Fragment(usize),
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

    /// Makes `call` select the leaf `leaf` at the end of the fields `path`
    /// (`nodes`, then `id`), adding what is missing: a creation whose answer
    /// leaves out the id the next call needs passes nothing on. Nothing
    /// changes where the path does not exist or ends on an abstract type.
    pub(super) fn ensure_selected(
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

    /// A value of scalar `name`: built-ins by their type, custom scalars as
    /// strings of the format their name says (REST's generator for that
    /// format), else short text.
    fn scalar(&self, name: &str, rng: &mut Rng64) -> Value {
        if let Some(v) = builtin_scalar(name, rng) {
            return v;
        }
        match format_of(name) {
            Some(format) => {
                let schema = Schema {
                    format: Some(format.to_string()),
                    ..Schema::of_type(SchemaType::String)
                };
                value_for(&self.no_api, &schema, rng)
            }
            None => Value::String(string(rng)),
        }
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

    /// A random selection on `ty` at `depth`, leaving out fields named in `taken`.
    fn sample_selection(
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
    fn sample_fragment(
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

    fn sample_field(
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
    fn sample_args(&self, defs: &[InputValue], rng: &mut Rng64) -> Vec<(String, Option<Value>)> {
        defs.iter()
            .map(|d| {
                let v = (required(d) || rng.random_bool(0.5)).then(|| self.value(&d.ty, 0, rng));
                (d.name.clone(), v)
            })
            .collect()
    }

    /// A random non-null value of `ty`.
    fn value(&self, ty: &TypeRef, depth: usize, rng: &mut Rng64) -> Value {
        match ty {
            TypeRef::NonNull(inner) => self.value(inner, depth, rng),
            TypeRef::List(inner) => {
                let n = if depth >= MAX_INPUT_DEPTH {
                    0
                } else {
                    rng.random_range(0..=MAX_LIST)
                };
                Value::Array((0..n).map(|_| self.value(inner, depth + 1, rng)).collect())
            }
            TypeRef::Named(name) => self.named_value(name, depth, rng),
        }
    }

    fn named_value(&self, name: &str, depth: usize, rng: &mut Rng64) -> Value {
        let Some(t) = self.ts.get(name) else {
            return Value::String(string(rng));
        };
        match t.kind {
            TypeKind::Enum if !t.enum_values.is_empty() => {
                Value::String(t.enum_values[rng.random_range(0..t.enum_values.len())].clone())
            }
            TypeKind::InputObject => {
                let mut out = Map::new();
                // Required input fields cycling forever make an invalid schema;
                // the bound only keeps such a schema from overflowing the stack.
                if depth > 4 * MAX_INPUT_DEPTH {
                    return Value::Object(out);
                }
                for f in &t.input_fields {
                    if required(f) || (depth < MAX_INPUT_DEPTH && rng.random_bool(0.3)) {
                        out.insert(f.name.clone(), self.value(&f.ty, depth + 1, rng));
                    }
                }
                Value::Object(out)
            }
            TypeKind::Scalar => self.scalar(name, rng),
            _ => Value::String(string(rng)),
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

    /// Scalars through EvoMaster's operators of [`super::mutation`], kept in
    /// the GraphQL type's range (Int is 32-bit).
    fn mutate_scalar(&self, name: &str, value: &Value, rng: &mut Rng64) -> Value {
        let (schema_type, fits) = match name {
            "Int" => (SchemaType::Integer, value.is_i64()),
            "Float" => (SchemaType::Number, value.is_number()),
            "Boolean" => return Value::Bool(!value.as_bool().unwrap_or(false)),
            // A scalar whose name says its shape (UUID, DateTime) rejects
            // most text: mostly another well-formed value, now and then
            // text mutated out of shape.
            _ if format_of(name).is_some() && rng.random_bool(0.8) => {
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

/// A value of a built-in scalar, or `None` for a custom one.
fn builtin_scalar(name: &str, rng: &mut Rng64) -> Option<Value> {
    Some(match name {
        "Int" => Value::from(match rng.random_range(0..20) {
            0 => 0,
            1 => i32::MAX,
            2 => i32::MIN,
            3 => -1,
            // Counts and quantities are mostly small, and servers bound them.
            4..=11 => rng.random_range(1..=10),
            _ => rng.random_range(1..=1000),
        }),
        "Float" => {
            let x: f64 = rng.random_range(-10.0..1000.0);
            serde_json::Number::from_f64((x * 100.0).round() / 100.0)
                .map_or(Value::from(0), Value::Number)
        }
        "Boolean" => Value::Bool(rng.random_bool(0.5)),
        "String" => Value::String(string(rng)),
        "ID" => Value::String(if rng.random_bool(0.6) {
            rng.random_range(1..=50).to_string()
        } else {
            alnum(rng, 8)
        }),
        _ => return None,
    })
}

/// The string format a custom scalar's name says (`DateTime`, `UUID`,
/// `EmailAddress`): nothing else is known of its values.
fn format_of(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    [
        ("datetime", "date-time"),
        ("timestamp", "date-time"),
        ("date", "date"),
        ("url", "uri"),
        ("uri", "uri"),
        ("email", "email"),
        ("uuid", "uuid"),
        ("guid", "uuid"),
    ]
    .iter()
    .find(|(word, _)| lower.contains(word))
    .map(|(_, format)| *format)
}

fn alnum(rng: &mut Rng64, len: usize) -> String {
    const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    (0..len)
        .map(|_| ALNUM[rng.random_range(0..ALNUM.len())] as char)
        .collect()
}

/// A short string, now and then with one awkward character.
fn string(rng: &mut Rng64) -> String {
    let len = rng.random_range(0..=12);
    let mut s = alnum(rng, len);
    if rng.random_bool(0.15) {
        let at = rng.random_range(0..=len);
        s.insert(at, AWKWARD[rng.random_range(0..AWKWARD.len())]);
    }
    s
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::generation::graphql::genes::ArgMode;

    fn demo() -> TypeSystem {
        crate::load::load_text(
            crate::demo::GRAPHQL_SDL,
            std::path::Path::new("demo.graphql"),
        )
        .unwrap()
        .api
        .graphql
        .unwrap()
    }

    #[test]
    fn custom_scalars_named_like_a_format_get_and_mostly_keep_its_shape() {
        let generator = GqlGenerator::new(&demo(), DEFAULT_MAX_DEPTH);
        let mut rng = Rng64::seed_from_u64(5);
        let is_uuid = |v: &Value| {
            let s = v.as_str().unwrap_or_default();
            let groups: Vec<&str> = s.split('-').collect();
            groups.len() == 5
                && groups
                    .iter()
                    .zip([8, 4, 4, 4, 12])
                    .all(|(g, n)| g.len() == n && g.chars().all(|c| c.is_ascii_hexdigit()))
        };
        let mut kept = 0;
        for _ in 0..200 {
            let v = generator.scalar("UUID", &mut rng);
            assert!(is_uuid(&v), "{v}");
            assert!(is_uuid(&generator.scalar("PersonGuid", &mut rng)));
            let day = generator.scalar("DateTime", &mut rng);
            assert!(
                day.as_str()
                    .is_some_and(|d| d.len() == 20 && d.ends_with('Z'))
            );
            kept += usize::from(is_uuid(&generator.mutate_scalar("UUID", &v, &mut rng)));
        }
        // Four mutations in five draw a new uuid; the fifth edits the text.
        assert!(
            (140..200).contains(&kept),
            "{kept} of 200 mutants stayed uuids"
        );
        // A scalar whose name says nothing stays short text.
        assert!(generator.scalar("Cursor", &mut rng).is_string());
    }

    #[test]
    fn same_seed_same_queries_and_mutants_stay_nonempty() {
        let ts = demo();
        let g = GqlGenerator::new(&ts, DEFAULT_MAX_DEPTH);
        let draw = |seed| {
            let mut rng = Rng64::seed_from_u64(seed);
            let mut call = g.sample("Query", "authors", &mut rng);
            let mut docs = Vec::new();
            for _ in 0..30 {
                g.mutate(&mut call, &mut rng);
                docs.push(g.render(&call, ArgMode::Variables).0);
            }
            docs
        };
        let docs = draw(5);
        assert_eq!(docs, draw(5));
        assert!(docs.iter().all(|d| !d.contains("{ }")), "{docs:?}");
    }
}
