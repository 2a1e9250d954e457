//! The fault kinds a value can show against its type: a built-in scalar of
//! the wrong JSON type, a value outside its enum, a list where none was
//! promised (or none where one was), a `__typename` naming another type.

use serde_json::Value;

use super::Kind;
use super::findings::{Out, Seg, json_kind, render, show};
use super::walk::{Field, Walker};
use crate::model::graphql::{NamedType, TypeKind, TypeRef};

impl<'q> Walker<'q> {
    pub(super) fn check_typename(&self, stat: &NamedType, v: &Value, path: &[Seg], out: &mut Out) {
        let ok = v.as_str().is_some_and(|t| self.is_possible(stat, t));
        if ok {
            return;
        }
        let expected = if stat.kind == TypeKind::Object {
            format!("`{}`", stat.name)
        } else {
            format!("one of the possible types of {}", stat.name)
        };
        let what = match v.as_str() {
            Some(t) if self.ts.get(t).is_none() => {
                format!("{t:?}, a type the schema does not have")
            }
            Some(t) => format!("{t:?}"),
            None => json_kind(v).to_string(),
        };
        self.finding_seen(
            out,
            Kind::TypenameViolation,
            path,
            format!("{}.__typename", stat.name),
            format!("__typename is {what}, expected {expected}"),
            v,
        );
    }

    /// Checks `v` against `ty` (a part of the type of `field`).
    pub(super) fn check_value(
        &self,
        field: &Field<'_, 'q>,
        ty: &TypeRef,
        v: &Value,
        path: &mut Vec<Seg>,
        out: &mut Out,
    ) {
        let Field {
            ty: full,
            label,
            sets,
        } = *field;
        match ty {
            TypeRef::NonNull(inner) => {
                if v.is_null() {
                    if !self.explained(path) {
                        self.finding(
                            out,
                            Kind::NullViolation,
                            path,
                            label.to_string(),
                            format!(
                                "{label} is {full}, but {} is null and no error explains it",
                                render(path)
                            ),
                        );
                    }
                } else {
                    self.check_value(field, inner, v, path, out);
                }
            }
            _ if v.is_null() => {}
            TypeRef::List(inner) => match v {
                Value::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        path.push(Seg::Index(i));
                        self.check_value(field, inner, item, path, out);
                        path.pop();
                    }
                }
                other => self.finding_seen(
                    out,
                    Kind::ListMismatch,
                    path,
                    format!("{label} not a list"),
                    format!(
                        "{label} is {full}, but the value is {}, not a list",
                        json_kind(other)
                    ),
                    other,
                ),
            },
            TypeRef::Named(name) => {
                let Some(t) = self.ts.get(name) else { return };
                let custom_scalar = t.kind == TypeKind::Scalar && !is_builtin(name);
                if custom_scalar {
                    return;
                }
                if v.is_array() {
                    self.finding_seen(
                        out,
                        Kind::ListMismatch,
                        path,
                        format!("{label} a list"),
                        format!("{label} is {full}, but the value is a list"),
                        v,
                    );
                    return;
                }
                match t.kind {
                    TypeKind::Scalar => {
                        if !scalar_fits(name, v) {
                            self.finding_seen(
                                out,
                                Kind::WrongType,
                                path,
                                format!("{label} {}", json_kind(v)),
                                format!(
                                    "{label} is {full}, but the value is {} ({})",
                                    json_kind(v),
                                    show(v)
                                ),
                                v,
                            );
                        }
                    }
                    TypeKind::Enum => {
                        let ok = v
                            .as_str()
                            .is_some_and(|s| t.enum_values.iter().any(|e| e == s));
                        if !ok {
                            self.finding_seen(
                                out,
                                Kind::EnumViolation,
                                path,
                                label.to_string(),
                                format!(
                                    "{label} is {full}, but {} is not one of its values",
                                    show(v)
                                ),
                                v,
                            );
                        }
                    }
                    TypeKind::Object | TypeKind::Interface | TypeKind::Union => match v {
                        Value::Object(obj) => self.check_object(t, obj, sets, path, out),
                        other => self.finding_seen(
                            out,
                            Kind::WrongType,
                            path,
                            format!("{label} {}", json_kind(other)),
                            format!(
                                "{label} is {full}, but the value is {} ({})",
                                json_kind(other),
                                show(other)
                            ),
                            other,
                        ),
                    },
                    TypeKind::InputObject => {}
                }
            }
        }
    }
}

pub(super) fn is_builtin(name: &str) -> bool {
    crate::model::graphql::BUILTIN_SCALARS.contains(&name)
}

/// Whether a non-null, non-list JSON value is a valid serialisation of a
/// built-in scalar.
pub(super) fn scalar_fits(name: &str, v: &Value) -> bool {
    let in_i32 = |v: &Value| match v {
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i32::try_from(i).is_ok()
            } else if n.is_u64() {
                false
            } else {
                // `3.0` is an integer written loosely; accept it.
                n.as_f64().is_some_and(|f| {
                    f.fract() == 0.0 && f >= f64::from(i32::MIN) && f <= f64::from(i32::MAX)
                })
            }
        }
        _ => false,
    };
    match name {
        "Int" => in_i32(v),
        "Float" => v.is_number(),
        "String" => v.is_string(),
        "Boolean" => v.is_boolean(),
        "ID" => v.is_string() || v.is_i64() || v.is_u64(),
        _ => true,
    }
}
