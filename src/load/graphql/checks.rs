//! Checks of a type system: fields whose types are undefined or of the wrong
//! kind (an input type as output, or the reverse) are left out with a
//! warning; root types must be objects.

use indexmap::IndexMap;

use super::Sink;
use crate::model::graphql::BUILTIN_SCALARS;
use crate::model::graphql::{Field, InputValue, NamedType, TypeKind, TypeSystem};

/// What a name refers to, built-in scalars included (they may be left implicit).
pub(super) fn kind_of(types: &IndexMap<String, NamedType>, name: &str) -> Option<TypeKind> {
    types
        .get(name)
        .map(|t| t.kind)
        .or_else(|| BUILTIN_SCALARS.contains(&name).then_some(TypeKind::Scalar))
}

/// Why `name` cannot be a field's type, if it cannot.
pub(super) fn output_problem(types: &IndexMap<String, NamedType>, name: &str) -> Option<String> {
    match kind_of(types, name) {
        None => Some(format!("its type `{name}` is not defined")),
        Some(TypeKind::InputObject) => Some(format!(
            "its type `{name}` is an input object, which cannot be returned"
        )),
        Some(_) => None,
    }
}

/// Why `name` cannot be an argument's or input field's type, if it cannot.
pub(super) fn input_problem(types: &IndexMap<String, NamedType>, name: &str) -> Option<String> {
    match kind_of(types, name) {
        None => Some(format!("type `{name}` is not defined")),
        Some(TypeKind::Scalar | TypeKind::Enum | TypeKind::InputObject) => None,
        Some(k) => Some(format!(
            "type `{name}` is {}, which cannot be an input",
            kind_label(k)
        )),
    }
}

/// Leaves out every field, argument, member and interface that refers to a type
/// that is missing or of the wrong kind, with one warning each, so that later
/// stages can look every name up.
pub(super) fn validate(ts: &mut TypeSystem, sink: &mut Sink) {
    for i in 0..ts.types.len() {
        let Some((_, t)) = ts.types.get_index_mut(i) else {
            continue;
        };
        let name = t.name.clone();
        let fields = std::mem::take(&mut t.fields);
        let input_fields = std::mem::take(&mut t.input_fields);
        let interfaces = std::mem::take(&mut t.interfaces);
        let possible_types = std::mem::take(&mut t.possible_types);
        let types = &ts.types;

        let fields: Vec<Field> = fields
            .into_iter()
            .filter_map(|f| check_field(types, &name, f, sink))
            .collect();
        let input_fields: Vec<InputValue> = input_fields
            .into_iter()
            .filter(|f| match input_problem(types, f.ty.base()) {
                None => true,
                Some(p) => {
                    sink.warn(
                        format!("{name}.{}", f.name),
                        format!("{p}; input field skipped"),
                    );
                    false
                }
            })
            .collect();
        let interfaces: Vec<String> = interfaces
            .into_iter()
            .filter(|n| match kind_of(types, n) {
                Some(TypeKind::Interface) => true,
                other => {
                    sink.warn(
                        name.as_str(),
                        format!(
                            "implements `{n}`, which {}; left out of its interfaces",
                            not_what(other, "an interface")
                        ),
                    );
                    false
                }
            })
            .collect();
        let possible_types: Vec<String> = possible_types
            .into_iter()
            .filter(|n| match kind_of(types, n) {
                Some(TypeKind::Object) => true,
                other => {
                    sink.warn(
                        name.as_str(),
                        format!(
                            "possible type `{n}` {}; left out",
                            not_what(other, "an object type")
                        ),
                    );
                    false
                }
            })
            .collect();

        if let Some((_, t)) = ts.types.get_index_mut(i) {
            t.fields = fields;
            t.input_fields = input_fields;
            t.interfaces = interfaces;
            t.possible_types = possible_types;
        }
    }
}

pub(super) fn not_what(kind: Option<TypeKind>, wanted: &str) -> String {
    match kind {
        None => "is not defined".to_string(),
        Some(k) => format!("is {}, not {wanted}", kind_label(k)),
    }
}

pub(super) fn check_field(
    types: &IndexMap<String, NamedType>,
    type_name: &str,
    mut field: Field,
    sink: &mut Sink,
) -> Option<Field> {
    let at = format!("{type_name}.{}", field.name);
    if let Some(p) = output_problem(types, field.ty.base()) {
        sink.warn(at, format!("{p}; field skipped"));
        return None;
    }
    let mut args = Vec::with_capacity(field.args.len());
    for a in std::mem::take(&mut field.args) {
        let Some(p) = input_problem(types, a.ty.base()) else {
            args.push(a);
            continue;
        };
        // An optional argument can simply not be sent; without a required one the
        // field cannot be called at all.
        if a.ty.is_non_null() && a.default_value.is_none() {
            sink.warn(
                at,
                format!("required argument `{}`: {p}; field skipped", a.name),
            );
            return None;
        }
        sink.warn(
            at.as_str(),
            format!("argument `{}`: {p}; argument left out", a.name),
        );
    }
    field.args = args;
    Some(field)
}

/// Checks the root types after [`TypeSystem::finish`] has filled in the default
/// names; a missing query root is fatal, a bad mutation or subscription root is not.
pub(super) fn check_roots(ts: &mut TypeSystem, sink: &mut Sink) -> Result<(), String> {
    match ts.query_type.as_deref() {
        None => return Err("not a GraphQL schema: no query root type".into()),
        Some(q) => match ts.get(q).map(|t| t.kind) {
            Some(TypeKind::Object) => {}
            other => {
                return Err(format!(
                    "not a GraphQL schema: the query root type `{q}` {}",
                    not_what(other, "an object type")
                ));
            }
        },
    }
    for (slot, op) in [
        (&mut ts.mutation_type, "mutation"),
        (&mut ts.subscription_type, "subscription"),
    ] {
        let Some(name) = slot.as_deref() else {
            continue;
        };
        let kind = ts.types.get(name).map(|t| t.kind);
        if kind != Some(TypeKind::Object) {
            sink.warn(
                name,
                format!(
                    "the {op} root type `{name}` {}; its operations are left out",
                    not_what(kind, "an object type")
                ),
            );
            *slot = None;
        }
    }
    Ok(())
}

pub(super) fn kind_label(kind: TypeKind) -> &'static str {
    match kind {
        TypeKind::Scalar => "a scalar",
        TypeKind::Object => "an object type",
        TypeKind::Interface => "an interface",
        TypeKind::Union => "a union",
        TypeKind::Enum => "an enum",
        TypeKind::InputObject => "an input object",
    }
}
