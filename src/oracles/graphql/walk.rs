//! The walk of `data` along the operation's selection set: fragments,
//! inline fragments, aliases and `@skip`/`@include` resolved, each selected
//! field looked for (missing, null where non-null) unless an `errors`
//! entry's path explains it; each value checked by [`super::kinds`].

use std::collections::HashMap;

use apollo_compiler::ast;
use serde_json::{Map, Value};

use super::Kind;
use super::findings::{Out, Seg, render};
use super::messages::ErrorEntry;
use super::operation::Operation;
use crate::model::graphql::{NamedType, TypeKind, TypeRef, TypeSystem};

/// Whether a selection is in the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Incl {
    /// Skipped for certain: must be absent, and is not checked.
    No,
    /// Depends on a variable we cannot read: checked only when present.
    Maybe,
    /// Included for certain.
    Yes,
}

/// Whether a fragment's type condition holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Applies {
    Yes,
    No,
    /// The concrete type is unknown and narrower than the condition's.
    Unknown,
}

/// The selections under one response key, merged (CollectFields of the spec).
pub(super) struct Collected<'q> {
    pub(super) key: &'q str,
    pub(super) name: &'q str,
    /// The type the field was selected on (the innermost type condition).
    pub(super) owner: &'q str,
    pub(super) include: Incl,
    pub(super) fields: Vec<&'q ast::Field>,
}

/// The selected field whose value is checked, as the checks of its
/// value and of every item in it see it.
pub(super) struct Field<'a, 'q> {
    /// The field's type as the schema declares it (`[Book!]!`).
    pub(super) ty: &'a TypeRef,
    /// The field as findings name it (`Author.books`).
    pub(super) label: &'a str,
    /// The selection sets under the field, merged.
    pub(super) sets: &'a [&'q [ast::Selection]],
}

/// The fields collected so far from a selection, with the fragment spreads
/// being followed (a fragment that spreads itself is not followed again).
pub(super) struct Collection<'q> {
    /// The fields by response key, in order.
    pub(super) collected: Vec<Collected<'q>>,
    /// The names of the fragments being spread, innermost last.
    pub(super) spreads: Vec<&'q str>,
}

/// Walks one operation's selection against a response.
pub(super) struct Walker<'q> {
    pub(super) ts: &'q TypeSystem,
    pub(super) op: &'q Operation<'q>,
    pub(super) fragments: HashMap<&'q str, &'q ast::FragmentDefinition>,
    pub(super) variables: &'q Value,
    /// Response key → field name of the root selection (skipped ones left out).
    pub(super) root_keys: Vec<(String, String)>,
    /// The `path` of every `errors` entry that has one.
    pub(super) error_paths: Vec<Vec<Seg>>,
}

impl<'q> Walker<'q> {
    pub(super) fn new(
        ts: &'q TypeSystem,
        op: &'q Operation<'q>,
        doc: Option<&'q ast::Document>,
        variables: &'q Value,
    ) -> Walker<'q> {
        let fragments = doc
            .map(|d| {
                d.definitions
                    .iter()
                    .filter_map(|d| match d {
                        ast::Definition::FragmentDefinition(f) => Some((f.name.as_str(), &**f)),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut w = Walker {
            ts,
            op,
            fragments,
            variables,
            root_keys: Vec::new(),
            error_paths: Vec::new(),
        };
        let collected = w.collect(&[op.selection], Some(op.root), op.root);
        w.root_keys = collected
            .iter()
            .map(|c| (c.key.to_string(), c.name.to_string()))
            .collect();
        w
    }

    pub(super) fn root_label(&self, name: &str) -> String {
        format!("{}.{name}", self.op.word)
    }

    /// Every root field of the operation, once each; `-` when all are skipped.
    pub(super) fn root_fields(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (_, name) in &self.root_keys {
            let label = self.root_label(name);
            if !out.contains(&label) {
                out.push(label);
            }
        }
        if out.is_empty() {
            out.push("-".into());
        }
        out
    }

    /// The root field a response path is under.
    pub(super) fn root_of(&self, path: &[Seg]) -> Option<String> {
        let Some(Seg::Key(key)) = path.first() else {
            return None;
        };
        let name = self
            .root_keys
            .iter()
            .find(|(k, _)| k == key)
            .map_or(key.as_str(), |(_, n)| n.as_str());
        Some(self.root_label(name))
    }

    /// The root fields an `errors` entry is about: by its `path`, else by its
    /// first location inside a root field of the operation text, else all.
    pub(super) fn roots_of_error(&self, e: &ErrorEntry) -> Vec<String> {
        if let Some(root) = e.path.as_deref().and_then(|p| self.root_of(p)) {
            return vec![root];
        }
        if let Some((line, column)) = e.location {
            let at = (line, column);
            let found = self
                .op
                .root_starts
                .iter()
                .rfind(|(start, _)| *start <= at)
                .map(|(_, name)| *name);
            let inside = self.op.end.is_some_and(|end| at <= end);
            if let Some(name) = found.filter(|_| inside) {
                return vec![self.root_label(name)];
            }
        }
        self.root_fields()
    }

    /// Whether an `errors` entry's path is at, above or below `path`.
    pub(super) fn explained(&self, path: &[Seg]) -> bool {
        self.error_paths.iter().any(|p| {
            let n = p.len().min(path.len());
            p[..n] == path[..n]
        })
    }

    // --- collecting fields ------------------------------------------------

    /// The value of a boolean directive argument: a literal, a variable, or
    /// the variable's default.
    pub(super) fn bool_arg(&self, v: &ast::Value) -> Option<bool> {
        match v {
            ast::Value::Boolean(b) => Some(*b),
            ast::Value::Variable(name) => match self.variables.get(name.as_str()) {
                Some(v) => v.as_bool(),
                None => self
                    .op
                    .variables
                    .iter()
                    .find(|d| d.name == *name)
                    .and_then(|d| match d.default_value.as_deref() {
                        Some(ast::Value::Boolean(b)) => Some(*b),
                        _ => None,
                    }),
            },
            _ => None,
        }
    }

    /// What `@skip` and `@include` say about a selection.
    pub(super) fn inclusion(&self, directives: &ast::DirectiveList) -> Incl {
        let mut incl = Incl::Yes;
        for d in directives.iter() {
            let skip = match d.name.as_str() {
                "skip" => true,
                "include" => false,
                _ => continue,
            };
            let cond = d
                .arguments
                .iter()
                .find(|a| a.name == "if")
                .and_then(|a| self.bool_arg(&a.value));
            match cond {
                Some(b) if b == skip => return Incl::No,
                Some(_) => {}
                None => incl = Incl::Maybe,
            }
        }
        incl
    }

    /// Whether `obj` (an object type) is one of the possible types of `abs`.
    pub(super) fn is_possible(&self, abs: &NamedType, obj: &str) -> bool {
        let Some(o) = self.ts.get(obj).filter(|o| o.kind == TypeKind::Object) else {
            return false;
        };
        match abs.kind {
            TypeKind::Object => abs.name == obj,
            TypeKind::Interface => {
                abs.possible_types.iter().any(|p| p == obj) || o.interfaces.contains(&abs.name)
            }
            TypeKind::Union => abs.possible_types.iter().any(|p| p == obj),
            _ => false,
        }
    }

    /// Whether a type condition holds for a value of static type `stat` whose
    /// concrete type is `runtime` when known.
    pub(super) fn applies(
        &self,
        cond: &str,
        runtime: Option<&NamedType>,
        stat: &NamedType,
    ) -> Applies {
        let Some(c) = self.ts.get(cond) else {
            return Applies::No;
        };
        if let Some(r) = runtime {
            return if c.name == r.name || self.is_possible(c, &r.name) {
                Applies::Yes
            } else {
                Applies::No
            };
        }
        if c.name == stat.name {
            return Applies::Yes;
        }
        let possible = &stat.possible_types;
        if !possible.is_empty() && possible.iter().all(|p| self.is_possible(c, p)) {
            return Applies::Yes;
        }
        if possible.iter().any(|p| self.is_possible(c, p)) {
            Applies::Unknown
        } else {
            Applies::No
        }
    }

    /// The fields selected by `sets` on a value of static type `stat`, by
    /// response key, in order. Fragments whose condition may or may not hold
    /// (the concrete type unknown) are left out.
    pub(super) fn collect(
        &self,
        sets: &[&'q [ast::Selection]],
        runtime: Option<&'q NamedType>,
        stat: &'q NamedType,
    ) -> Vec<Collected<'q>> {
        let mut collection = Collection {
            collected: Vec::new(),
            spreads: Vec::new(),
        };
        for set in sets {
            self.collect_into(
                set,
                runtime,
                stat,
                stat.name.as_str(),
                Incl::Yes,
                &mut collection,
            );
        }
        collection.collected
    }

    /// Collects the fields of `set` on `owner` (a type condition that holds,
    /// or the static type) into `collection`, each at most as included as
    /// `outer` says.
    pub(super) fn collect_into(
        &self,
        set: &'q [ast::Selection],
        runtime: Option<&'q NamedType>,
        stat: &'q NamedType,
        owner: &'q str,
        outer: Incl,
        collection: &mut Collection<'q>,
    ) {
        for item in set {
            let (directives, cond, inner): (_, Option<&'q str>, _) = match item {
                ast::Selection::Field(f) => {
                    let incl = min_incl(outer, self.inclusion(&f.directives));
                    if incl == Incl::No {
                        continue;
                    }
                    let key = f.alias.as_ref().unwrap_or(&f.name).as_str();
                    match collection.collected.iter_mut().find(|c| c.key == key) {
                        Some(c) => {
                            c.include = c.include.max_incl(incl);
                            c.fields.push(f);
                        }
                        None => collection.collected.push(Collected {
                            key,
                            name: f.name.as_str(),
                            owner,
                            include: incl,
                            fields: vec![f],
                        }),
                    }
                    continue;
                }
                ast::Selection::InlineFragment(fr) => (
                    &fr.directives,
                    fr.type_condition.as_ref().map(|t| t.as_str()),
                    &fr.selection_set,
                ),
                ast::Selection::FragmentSpread(sp) => {
                    let Some(def) = self.fragments.get(sp.fragment_name.as_str()) else {
                        continue;
                    };
                    // A fragment that spreads itself is invalid; do not loop.
                    if collection.spreads.contains(&sp.fragment_name.as_str()) {
                        continue;
                    }
                    (
                        &sp.directives,
                        Some(def.type_condition.as_str()),
                        &def.selection_set,
                    )
                }
            };
            let incl = min_incl(outer, self.inclusion(directives));
            if incl == Incl::No {
                continue;
            }
            let owner = match cond {
                Some(c) => match self.applies(c, runtime, stat) {
                    Applies::Yes => c,
                    Applies::No | Applies::Unknown => continue,
                },
                None => owner,
            };
            let spread = match item {
                ast::Selection::FragmentSpread(sp) => Some(sp.fragment_name.as_str()),
                _ => None,
            };
            if let Some(name) = spread {
                collection.spreads.push(name);
            }
            self.collect_into(inner, runtime, stat, owner, incl, collection);
            if spread.is_some() {
                collection.spreads.pop();
            }
        }
    }

    // --- checking values --------------------------------------------------

    /// `data: null` without any error: every non-null root field is null.
    pub(super) fn null_data(&self, out: &mut Out) {
        let collected = self.collect(&[self.op.selection], Some(self.op.root), self.op.root);
        for c in collected.iter().filter(|c| c.include == Incl::Yes) {
            if let Some(f) = self.op.root.field(c.name).filter(|f| f.ty.is_non_null()) {
                out.push(
                    Kind::NullViolation,
                    self.root_label(c.name),
                    format!("data.{}", c.key),
                    format!("{}.{}", self.op.root.name, f.name),
                    format!(
                        "`data` is null with no error, though {}.{} is {}",
                        self.op.root.name, f.name, f.ty
                    ),
                );
            }
        }
    }

    pub(super) fn walk_root(&self, data: &Map<String, Value>, out: &mut Out) {
        let mut path = Vec::new();
        self.check_object(self.op.root, data, &[self.op.selection], &mut path, out);
    }

    /// A finding at `path` of the answer about the schema's `location`
    /// (`Book.author`), under the root field the path starts at.
    pub(super) fn finding(
        &self,
        out: &mut Out,
        kind: Kind,
        path: &[Seg],
        location: String,
        message: String,
    ) {
        let root = self.root_of(path).unwrap_or_else(|| "-".into());
        out.push(kind, root, render(path), location, message);
    }

    /// [`Walker::finding`] of the value `v` seen at `path`, kept with it so
    /// that a reproducer looks for that very value (an array or object as
    /// an empty one: its kind is what matters).
    pub(super) fn finding_seen(
        &self,
        out: &mut Out,
        kind: Kind,
        path: &[Seg],
        location: String,
        message: String,
        v: &Value,
    ) {
        let before = out.items.len();
        self.finding(out, kind, path, location, message);
        if out.items.len() > before
            && let Some(f) = out.items.last_mut()
        {
            f.seen = Some(match v {
                Value::Array(_) => Value::Array(Vec::new()),
                Value::Object(_) => Value::Object(serde_json::Map::new()),
                scalar => scalar.clone(),
            });
        }
    }

    /// The concrete type of an object value of static type `stat`: itself
    /// for an object type, else the valid `__typename` the value carries, else
    /// the only possible type.
    pub(super) fn runtime_type(
        &self,
        stat: &'q NamedType,
        obj: &Map<String, Value>,
        sets: &[&'q [ast::Selection]],
    ) -> Option<&'q NamedType> {
        if stat.kind == TypeKind::Object {
            return Some(stat);
        }
        let named = self
            .collect(sets, None, stat)
            .iter()
            .filter(|c| c.name == "__typename")
            .find_map(|c| obj.get(c.key).and_then(Value::as_str))
            .filter(|t| self.is_possible(stat, t))
            .and_then(|t| self.ts.get(t));
        named.or_else(|| match stat.possible_types.as_slice() {
            [only] => self.ts.get(only).filter(|t| t.kind == TypeKind::Object),
            _ => None,
        })
    }

    pub(super) fn check_object(
        &self,
        stat: &'q NamedType,
        obj: &Map<String, Value>,
        sets: &[&'q [ast::Selection]],
        path: &mut Vec<Seg>,
        out: &mut Out,
    ) {
        let runtime = self.runtime_type(stat, obj, sets);
        for c in self.collect(sets, runtime, stat) {
            path.push(Seg::Key(c.key.to_string()));
            match obj.get(c.key) {
                None => {
                    if c.include == Incl::Yes && !self.explained(path) {
                        let on = runtime.map_or(stat.name.as_str(), |r| r.name.as_str());
                        self.finding(
                            out,
                            Kind::MissingField,
                            path,
                            format!("{on}.{}", c.name),
                            format!("the selected field {on}.{} is absent", c.name),
                        );
                    }
                }
                Some(v) if c.name == "__typename" => self.check_typename(stat, v, path, out),
                Some(v) => {
                    let def = runtime
                        .and_then(|r| r.field(c.name))
                        .or_else(|| self.ts.get(c.owner).and_then(|o| o.field(c.name)))
                        .or_else(|| stat.field(c.name));
                    if let Some(def) = def {
                        let sub: Vec<&[ast::Selection]> = c
                            .fields
                            .iter()
                            .map(|f| f.selection_set.as_slice())
                            .collect();
                        let on = runtime.map_or(c.owner, |r| r.name.as_str());
                        if !v.is_null() {
                            out.covered.insert((on.to_string(), def.name.clone()));
                        }
                        let label = format!("{on}.{}", def.name);
                        let field = Field {
                            ty: &def.ty,
                            label: &label,
                            sets: &sub,
                        };
                        self.check_value(&field, &def.ty, v, path, out);
                    }
                }
            }
            path.pop();
        }
    }
}

impl Incl {
    pub(super) fn max_incl(self, other: Incl) -> Incl {
        match (self, other) {
            (Incl::Yes, _) | (_, Incl::Yes) => Incl::Yes,
            (Incl::Maybe, _) | (_, Incl::Maybe) => Incl::Maybe,
            _ => Incl::No,
        }
    }
}

/// The weaker of a selection's own inclusion and its enclosing fragment's.
pub(super) fn min_incl(a: Incl, b: Incl) -> Incl {
    match (a, b) {
        (Incl::No, _) | (_, Incl::No) => Incl::No,
        (Incl::Maybe, _) | (_, Incl::Maybe) => Incl::Maybe,
        _ => Incl::Yes,
    }
}
