//! Values of input types: built-in scalars by their type, custom scalars by
//! the format their name says, enums, input objects and lists within the
//! input depth limit.

use rand::Rng;
use serde_json::{Map, Value};

use super::{GqlGenerator, MAX_INPUT_DEPTH, MAX_LIST, required};
use crate::generation::values::{Rng64, value_for};
use crate::model::graphql::{TypeKind, TypeRef};
use crate::model::{Schema, SchemaType};

/// Characters that often break servers that splice input into queries or
/// markup; the newline and quote also exercise literal escaping.
const AWKWARD: [char; 9] = ['\'', '"', '<', '%', ' ', 'é', '\\', ';', '\n'];

impl GqlGenerator {
    /// A random non-null value of `ty`.
    pub(super) fn value(&self, ty: &TypeRef, depth: usize, rng: &mut Rng64) -> Value {
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

    pub(super) fn named_value(&self, name: &str, depth: usize, rng: &mut Rng64) -> Value {
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

    /// A value of scalar `name`: built-ins by their type, custom scalars as
    /// strings of the format their name says (REST's generator for that
    /// format), else short text.
    pub(super) fn scalar(&self, name: &str, rng: &mut Rng64) -> Value {
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
pub(super) fn format_of(name: &str) -> Option<&'static str> {
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
