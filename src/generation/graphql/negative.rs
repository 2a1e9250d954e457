//! GraphQL negative and boundary tests: each argument of a root field (and
//! each field of an input object argument) gets, one at a time, values
//! resolvers often mishandle: an explicit `null` (nullable or not: servers
//! that read "absent" and "null" alike crash on filters set to null, and
//! non-null fields must refuse it), malformed ids and custom scalars (uuids,
//! dates), format specifiers and metacharacters, unicode, very long
//! strings, Int outside 32 and 64 bits, Float past the double range, an
//! enum value that does not exist, and optional arguments and input fields
//! left out.

use std::collections::VecDeque;

use serde_json::{Value, json};

use super::genes::{GqlBreach, GqlCall};
use crate::execution::{Breach, BreachKind};
use crate::model::graphql::{TypeKind, TypeRef, TypeSystem};

/// Strings that resolvers parse (ids, dates, uuids) and often mishandle.
const STRINGS: [&str; 10] = [
    "abc",
    "-1",
    "",
    "%s%d%x%n{0}{}",
    "'\"\\",
    "00000000-0000-0000-0000-00000000000g",
    "2024-13-45T25:61:00Z",
    "é😀\u{202e}ǅ",
    "\"x\"",
    "}",
];

/// Every negative breach of `call` (a call of `root.field`), one input at a
/// time: every argument gets its first value before any gets a second.
pub fn breaches(ts: &TypeSystem, call: &GqlCall) -> VecDeque<GqlBreach> {
    let Some(f) = ts.get(&call.root).and_then(|t| t.field(&call.field)) else {
        return VecDeque::new();
    };
    let mut per_input: Vec<Vec<GqlBreach>> = Vec::new();
    for arg in &f.args {
        let input = format!("argument {}", arg.name);
        let mut list = Vec::new();
        if !arg.ty.is_non_null() || arg.default_value.is_some() {
            list.push(breach(&arg.name, None, None, &input, BreachKind::Unusual));
        }
        list.push(breach(
            &arg.name,
            None,
            Some(Value::Null),
            &input,
            null_kind(&arg.ty),
        ));
        for (v, kind) in values(ts, &arg.ty) {
            list.push(breach(&arg.name, None, Some(v), &input, kind));
        }
        per_input.push(list);
        // One level into an input object the call sends.
        let sent = call
            .args
            .iter()
            .any(|(n, v)| *n == arg.name && matches!(v, Some(Value::Object(_))));
        let Some(t) = ts
            .get(arg.ty.base())
            .filter(|t| t.kind == TypeKind::InputObject)
        else {
            continue;
        };
        if !sent {
            continue;
        }
        for field in &t.input_fields {
            let input = format!("argument {}.{}", arg.name, field.name);
            let mut list = Vec::new();
            if !field.ty.is_non_null() || field.default_value.is_some() {
                list.push(breach(
                    &arg.name,
                    Some(&field.name),
                    None,
                    &input,
                    BreachKind::Unusual,
                ));
            }
            list.push(breach(
                &arg.name,
                Some(&field.name),
                Some(Value::Null),
                &input,
                null_kind(&field.ty),
            ));
            for (v, kind) in values(ts, &field.ty) {
                list.push(breach(&arg.name, Some(&field.name), Some(v), &input, kind));
            }
            per_input.push(list);
        }
    }
    let mut out = VecDeque::new();
    for rank in 0.. {
        let before = out.len();
        for list in &per_input {
            if let Some(b) = list.get(rank) {
                out.push_back(b.clone());
            }
        }
        if out.len() == before {
            break;
        }
    }
    out
}

/// What an explicit `null` breaks for an input of type `ty`.
fn null_kind(ty: &TypeRef) -> BreachKind {
    if ty.is_non_null() {
        BreachKind::Null
    } else {
        BreachKind::Unusual
    }
}

fn breach(
    arg: &str,
    field: Option<&str>,
    value: Option<Value>,
    input: &str,
    kind: BreachKind,
) -> GqlBreach {
    GqlBreach {
        arg: arg.to_string(),
        field: field.map(str::to_string),
        note: Breach {
            input: if value.is_none() {
                format!("{input} (left out)")
            } else {
                input.to_string()
            },
            kind,
            class: None,
        },
        value,
    }
}

/// A number kept digit for digit on the wire.
fn exact(text: &str) -> Value {
    crate::execution::wire::exact_number(text).unwrap_or(Value::Null)
}

/// The values tried for an input of type `ty`, with what they break.
fn values(ts: &TypeSystem, ty: &TypeRef) -> Vec<(Value, BreachKind)> {
    let list = matches!(ty, TypeRef::List(_))
        || matches!(ty, TypeRef::NonNull(inner) if matches!(**inner, TypeRef::List(_)));
    let base = ty.base();
    let wrap = |v: Value| if list { json!([v]) } else { v };
    let named = ts.get(base);
    let out: Vec<(Value, BreachKind)> = match (base, named.map(|t| t.kind)) {
        ("Int", _) => vec![
            (json!(2_147_483_648i64), BreachKind::AboveMaximum),
            (json!(-2_147_483_649i64), BreachKind::BelowMinimum),
            (json!(0), BreachKind::Unusual),
            (json!(-1), BreachKind::Unusual),
            (exact("100000000000000000000"), BreachKind::AboveMaximum),
        ],
        ("Float", _) => vec![
            (json!(1e308), BreachKind::Unusual),
            (json!(-1e308), BreachKind::Unusual),
            (json!(0), BreachKind::Unusual),
            (exact("1e400"), BreachKind::Unusual),
        ],
        ("Boolean", _) => Vec::new(),
        (_, Some(TypeKind::Enum)) => vec![(
            json!(crate::generation::mutation::INVALID_ENUM),
            BreachKind::NotInEnum,
        )],
        (_, Some(TypeKind::InputObject)) => Vec::new(),
        // ID, String and custom scalars travel as strings.
        _ => {
            let custom = !matches!(base, "ID" | "String");
            let mut v: Vec<(Value, BreachKind)> = STRINGS
                .iter()
                .map(|s| {
                    let kind = if custom && (s.contains('-') || s.contains(':')) {
                        BreachKind::MalformedFormat
                    } else {
                        BreachKind::Unusual
                    };
                    (json!(s), kind)
                })
                .collect();
            v.push((json!("a".repeat(10_000)), BreachKind::Unusual));
            v
        }
    };
    out.into_iter().map(|(v, k)| (wrap(v), k)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts() -> TypeSystem {
        let api = crate::load::load_text(
            "type Query { book(id: ID!, limit: Int, kind: Kind, filter: F): Int }\nenum Kind { A B }\ninput F { name: String, year: Int! }\n",
            std::path::Path::new("s.graphql"),
        )
        .unwrap()
        .api;
        api.graphql.unwrap()
    }

    #[test]
    fn every_argument_and_input_field_is_tried_and_optional_ones_left_out() {
        let ts = ts();
        let call = GqlCall {
            root: "Query".into(),
            field: "book".into(),
            args: vec![
                ("id".into(), Some(json!("1"))),
                ("limit".into(), Some(json!(5))),
                ("kind".into(), None),
                ("filter".into(), Some(json!({"name": "x", "year": 1}))),
            ],
            selection: None,
            breach: None,
        };
        let all = breaches(&ts, &call);
        let inputs: std::collections::BTreeSet<&str> =
            all.iter().map(|b| b.note.input.as_str()).collect();
        for i in [
            "argument id",
            "argument limit",
            "argument kind",
            "argument filter.name",
            "argument filter.year",
        ] {
            assert!(inputs.contains(i), "{i}: {inputs:?}");
        }
        assert!(all.iter().any(|b| b.arg == "limit"
            && b.value == Some(json!(2_147_483_648i64))
            && b.note.kind == BreachKind::AboveMaximum));
        assert!(
            all.iter()
                .any(|b| b.arg == "kind" && b.note.kind == BreachKind::NotInEnum)
        );
        // An explicit null for every argument and input field: a breach
        // where the type is non-null, unusual where it is not.
        let null = |arg: &str, field: Option<&str>| {
            all.iter()
                .find(|b| {
                    b.arg == arg && b.field.as_deref() == field && b.value == Some(Value::Null)
                })
                .map(|b| b.note.kind)
        };
        assert_eq!(null("id", None), Some(BreachKind::Null));
        assert_eq!(null("limit", None), Some(BreachKind::Unusual));
        assert_eq!(null("filter", None), Some(BreachKind::Unusual));
        assert_eq!(null("filter", Some("year")), Some(BreachKind::Null));
        assert_eq!(null("filter", Some("name")), Some(BreachKind::Unusual));
        let mut c = call.clone();
        all.iter()
            .find(|b| b.arg == "filter" && b.field.is_none() && b.value == Some(Value::Null))
            .unwrap()
            .apply(&mut c);
        assert_eq!(c.args[3].1, Some(Value::Null));
        assert!(all.iter().any(|b| {
            b.arg == "limit"
                && b.value
                    .as_ref()
                    .and_then(crate::execution::wire::number_text)
                    == Some("100000000000000000000")
        }));
        // Required `id` is never left out; optional `limit` is.
        assert!(!all.iter().any(|b| b.arg == "id" && b.value.is_none()));
        assert!(all.iter().any(|b| b.arg == "limit" && b.value.is_none()));
        let mut c = call.clone();
        let omit_name = all
            .iter()
            .find(|b| b.field.as_deref() == Some("name") && b.value.is_none())
            .unwrap();
        omit_name.apply(&mut c);
        assert_eq!(c.args[3].1, Some(json!({"year": 1})));
    }
}
