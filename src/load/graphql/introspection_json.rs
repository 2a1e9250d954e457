//! Reading an introspection result (`__schema`) into a type system, with a
//! warning for each entry that is malformed. Every name is checked against
//! GraphQL's Name grammar: names are written into the queries a run sends,
//! and a "name" holding `{`, `(` or a space could splice a mutation into a
//! read-only run's query.

use std::collections::HashSet;

use serde_json::Value;

use super::{MAX_TYPE_REF_DEPTH, Sink};
use crate::model::graphql::{Field, InputValue, NamedType, TypeKind, TypeRef, TypeSystem};

/// Whether `s` is a GraphQL Name: `/[_A-Za-z][_0-9A-Za-z]*/`.
pub(super) fn is_name(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes
        .next()
        .is_some_and(|b| b == b'_' || b.is_ascii_alphabetic())
        && bytes.all(|b| b == b'_' || b.is_ascii_alphanumeric())
}

/// The message for a name that is not one, the name escaped.
fn not_a_name(what: &str, name: &str) -> String {
    format!(
        "{what} {} is not a GraphQL name (letters, digits and _, not starting with a digit)",
        crate::model::text::one_line(&format!("{name:?}"))
    )
}

/// Reads `__schema`; an `Err` holds a location and message for a [`SpecError`].
pub(super) fn build_introspection(
    root: &Value,
    base: &str,
    sink: &mut Sink,
) -> Result<TypeSystem, (String, String)> {
    let mut ts = TypeSystem {
        query_type: root_type_name(root, "queryType"),
        mutation_type: root_type_name(root, "mutationType"),
        subscription_type: root_type_name(root, "subscriptionType"),
        ..TypeSystem::default()
    };
    let types = root.get("types").and_then(Value::as_array).ok_or_else(|| {
        (
            format!("{base}/types"),
            "the introspection result has no `types` list".to_string(),
        )
    })?;
    for (i, entry) in types.iter().enumerate() {
        let at = format!("{base}/types/{i}");
        let Some(name) = entry.get("name").and_then(Value::as_str) else {
            sink.warn(at, "a type without a `name`; skipped");
            continue;
        };
        if name.starts_with("__") {
            continue;
        }
        if !is_name(name) {
            sink.warn(
                at,
                format!("{}; skipped", not_a_name("the type name", name)),
            );
            continue;
        }
        let kind = match entry.get("kind").and_then(Value::as_str) {
            Some("SCALAR") => TypeKind::Scalar,
            Some("OBJECT") => TypeKind::Object,
            Some("INTERFACE") => TypeKind::Interface,
            Some("UNION") => TypeKind::Union,
            Some("ENUM") => TypeKind::Enum,
            Some("INPUT_OBJECT") => TypeKind::InputObject,
            other => {
                sink.warn(
                    name,
                    format!(
                        "the type has kind {}, which a named type cannot have; skipped",
                        other.map_or("(none)".to_string(), |k| format!("`{k}`"))
                    ),
                );
                continue;
            }
        };
        if ts.types.contains_key(name) {
            sink.warn(
                name,
                "the type is listed more than once; the later entry is ignored",
            );
            continue;
        }
        let mut t = NamedType::new(name, kind);
        t.description = str_field(entry, "description");
        match kind {
            TypeKind::Object | TypeKind::Interface => {
                t.fields = introspection_fields(entry, name, sink);
                t.interfaces = type_names(entry, "interfaces");
                t.possible_types = type_names(entry, "possibleTypes");
            }
            TypeKind::Union => t.possible_types = type_names(entry, "possibleTypes"),
            TypeKind::Enum => {
                for v in list(entry, "enumValues") {
                    match v.get("name").and_then(Value::as_str) {
                        Some(n) if is_name(n) => t.enum_values.push(n.to_string()),
                        Some(n) => sink.warn(
                            name,
                            format!("{}; value skipped", not_a_name("an enum value", n)),
                        ),
                        None => {}
                    }
                }
            }
            TypeKind::InputObject => {
                let mut seen = HashSet::new();
                for (j, f) in list(entry, "inputFields").enumerate() {
                    match introspection_input_value(f) {
                        Ok(v) if !seen.insert(v.name.clone()) => sink.warn(
                            format!("{name}.{}", v.name),
                            "the input field is listed more than once; the later entry is ignored",
                        ),
                        Ok(v) => t.input_fields.push(v),
                        Err(msg) => sink.warn(
                            entry_location(name, f, j),
                            format!("{msg}; input field skipped"),
                        ),
                    }
                }
            }
            TypeKind::Scalar => {}
        }
        ts.types.insert(name.to_string(), t);
    }
    Ok(ts)
}

pub(super) fn introspection_fields(entry: &Value, type_name: &str, sink: &mut Sink) -> Vec<Field> {
    let mut fields = Vec::new();
    let mut seen = HashSet::new();
    for (j, f) in list(entry, "fields").enumerate() {
        let at = entry_location(type_name, f, j);
        let Some(name) = f.get("name").and_then(Value::as_str) else {
            sink.warn(at, "a field without a `name`; skipped");
            continue;
        };
        if !is_name(name) {
            sink.warn(
                format!("{type_name}.#{j}"),
                format!("{}; field skipped", not_a_name("the field name", name)),
            );
            continue;
        }
        // Meta-fields refer to the `__` types, which are not part of the API.
        if name.starts_with("__") {
            continue;
        }
        if !seen.insert(name) {
            sink.warn(
                at,
                "the field is listed more than once; the later entry is ignored",
            );
            continue;
        }
        let ty = match f
            .get("type")
            .ok_or_else(|| "no `type`".to_string())
            .and_then(|t| type_ref(t, 0))
        {
            Ok(ty) => ty,
            Err(msg) => {
                sink.warn(at, format!("{msg}; field skipped"));
                continue;
            }
        };
        let args: Result<Vec<InputValue>, String> =
            list(f, "args").map(introspection_input_value).collect();
        let args = match args {
            Ok(args) => args,
            Err(msg) => {
                sink.warn(
                    at,
                    format!("an argument is malformed ({msg}); field skipped"),
                );
                continue;
            }
        };
        fields.push(Field {
            name: name.to_string(),
            args,
            ty,
            deprecated: f
                .get("isDeprecated")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            description: str_field(f, "description"),
        });
    }
    fields
}

pub(super) fn introspection_input_value(v: &Value) -> Result<InputValue, String> {
    let name = v
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| "no `name`".to_string())?;
    if !is_name(name) {
        return Err(not_a_name("the name", name));
    }
    let ty = v
        .get("type")
        .ok_or_else(|| format!("`{name}` has no `type`"))
        .and_then(|t| type_ref(t, 0).map_err(|m| format!("`{name}`: {m}")))?;
    Ok(InputValue {
        name: name.to_string(),
        ty,
        default_value: str_field(v, "defaultValue"),
        description: str_field(v, "description"),
    })
}

pub(super) fn type_ref(v: &Value, depth: usize) -> Result<TypeRef, String> {
    if depth > MAX_TYPE_REF_DEPTH {
        return Err("the type reference is nested too deeply".into());
    }
    let of_type = || {
        v.get("ofType")
            .filter(|t| !t.is_null())
            .ok_or_else(|| "a wrapping type reference without `ofType`".to_string())
            .and_then(|t| type_ref(t, depth + 1))
    };
    match v.get("kind").and_then(Value::as_str) {
        Some("NON_NULL") => match of_type()? {
            TypeRef::NonNull(_) => Err("a non-null type wraps another non-null type".into()),
            inner => Ok(TypeRef::NonNull(Box::new(inner))),
        },
        Some("LIST") => Ok(TypeRef::List(Box::new(of_type()?))),
        _ => match v.get("name").and_then(Value::as_str) {
            Some(n) if is_name(n) => Ok(TypeRef::Named(n.to_string())),
            Some(n) => Err(not_a_name("the type reference", n)),
            None => Err("a type reference without a `name`".to_string()),
        },
    }
}

pub(super) fn root_type_name(root: &Value, key: &str) -> Option<String> {
    root.get(key)
        .and_then(|t| t.get("name"))
        .and_then(Value::as_str)
        .filter(|n| is_name(n))
        .map(str::to_string)
}

pub(super) fn type_names(entry: &Value, key: &str) -> Vec<String> {
    list(entry, key)
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .filter(|n| is_name(n))
        .map(str::to_string)
        .collect()
}

/// The items of an array member; a missing or null member (introspection reports
/// `fields: null` for non-object types) is an empty list.
pub(super) fn list<'v>(v: &'v Value, key: &str) -> impl Iterator<Item = &'v Value> + use<'v> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter())
        .into_iter()
        .flatten()
}

pub(super) fn str_field(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

/// `Type.field` when the entry has a name, else `Type.#index`.
pub(super) fn entry_location(type_name: &str, entry: &Value, index: usize) -> String {
    match entry.get("name").and_then(Value::as_str) {
        Some(n) if is_name(n) => format!("{type_name}.{n}"),
        _ => format!("{type_name}.#{index}"),
    }
}
