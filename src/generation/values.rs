//! Values built from a schema: inside its constraints (enums, bounds, formats,
//! examples, defaults), with boundary values and a few awkward characters mixed
//! in, all drawn from the run's seeded random generator.

use rand::Rng;
use serde_json::{Map, Value, json};

use crate::model::{Api, Schema, SchemaType};

/// The random generator every choice of a run draws from.
pub type Rng64 = rand_chacha::ChaCha8Rng;

/// Depth past which nested objects are left empty (recursive schemas).
const MAX_DEPTH: usize = 6;

/// Probability that a nullable value is generated as `null`.
const NULL_SHARE: f64 = 0.15;

/// Characters that often break servers that splice input into queries or markup.
const AWKWARD: [&str; 8] = ["'", "\"", "<", "%", " ", "é", "\\", ";"];

/// Nesting past which nothing more is generated: arrays of arrays or
/// alternatives that recur through `$ref`s would otherwise go on for ever.
const MAX_NESTING: usize = 24;

/// What one generated value may hold, in all: nodes and characters of its
/// strings. Each length and count a schema asks for is cut to what is left,
/// so no `minItems` or `minLength`, however nested, fills the memory.
pub const VALUE_BUDGET: usize = 200_000;

/// A value for `schema`.
pub fn value_for(api: &Api, schema: &Schema, rng: &mut Rng64) -> Value {
    let mut left = VALUE_BUDGET;
    generate(api, schema, rng, 0, &mut left)
}

/// `want`, cut to what generation makes (`cap`) and to what the value has
/// left.
fn bounded(want: usize, cap: u64, left: usize) -> usize {
    want.min(usize::try_from(cap).unwrap_or(usize::MAX))
        .min(left)
}

fn generate(api: &Api, schema: &Schema, rng: &mut Rng64, depth: usize, left: &mut usize) -> Value {
    *left = left.saturating_sub(1);
    let schema = api.resolve(schema);
    if depth > MAX_NESTING {
        return Value::Null;
    }
    if !schema.enum_values.is_empty() {
        return schema.enum_values[rng.random_range(0..schema.enum_values.len())].clone();
    }
    if !schema.examples.is_empty() && rng.random_bool(0.3) {
        return schema.examples[rng.random_range(0..schema.examples.len())].clone();
    }
    if let Some(d) = &schema.default
        && rng.random_bool(0.2)
    {
        return d.clone();
    }
    if !schema.alternatives.is_empty() {
        let alt = &schema.alternatives[rng.random_range(0..schema.alternatives.len())];
        return generate(api, alt, rng, depth + 1, left);
    }
    let types: Vec<SchemaType> = schema
        .types
        .iter()
        .copied()
        .filter(|t| *t != SchemaType::Null)
        .collect();
    let nullable = schema.types.contains(&SchemaType::Null);
    // OpenAPI 3.1 `type: "null"` (a null branch of `anyOf`), and now and
    // then a nullable value: some servers need the explicit null.
    if nullable && (types.is_empty() || rng.random_bool(NULL_SHARE)) {
        return Value::Null;
    }
    let ty = if types.is_empty() {
        if schema.reference.is_some() || !schema.properties.is_empty() {
            SchemaType::Object
        } else {
            SchemaType::String
        }
    } else {
        types[rng.random_range(0..types.len())]
    };
    match ty {
        SchemaType::String => {
            let s = string(schema, rng, *left);
            *left = left.saturating_sub(s.len());
            Value::String(s)
        }
        SchemaType::Integer => json!(integer(schema, rng)),
        SchemaType::Number => number(schema, rng),
        SchemaType::Boolean => Value::Bool(rng.random_bool(0.5)),
        SchemaType::Null => Value::Null,
        SchemaType::Array => {
            let min = bounded(
                usize::try_from(schema.min_items.unwrap_or(0)).unwrap_or(usize::MAX),
                crate::model::MAX_GENERATED_ITEMS,
                *left,
            );
            let max = schema
                .max_items
                .map_or(min.max(3), |m| usize::try_from(m).unwrap_or(usize::MAX))
                .max(min);
            let len = rng.random_range(min..=max.min(min + 3));
            let items = schema.items.as_deref().cloned().unwrap_or_default();
            let mut out = Vec::with_capacity(len);
            for _ in 0..len {
                if *left == 0 {
                    break;
                }
                out.push(generate(api, &items, rng, depth + 1, left));
            }
            Value::Array(out)
        }
        SchemaType::Object => {
            let mut out = Map::new();
            if depth >= MAX_DEPTH {
                return Value::Object(out);
            }
            for (name, prop) in &schema.properties {
                if api.resolve(prop).read_only {
                    continue;
                }
                if schema.required.contains(name) || rng.random_bool(0.5) {
                    out.insert(name.clone(), generate(api, prop, rng, depth + 1, left));
                }
            }
            // A free-form object (a map, query parameters by name) gets a
            // key or two of its own.
            if let Some(extra) = &schema.additional_properties
                && (schema.properties.is_empty() || rng.random_bool(0.3))
            {
                for _ in 0..rng.random_range(1..=2) {
                    let key: String = (0..rng.random_range(1..=8))
                        .map(|_| (b'a' + rng.random_range(0..26u8)) as char)
                        .collect();
                    let value = generate(api, extra, rng, depth + 1, left);
                    out.entry(key).or_insert(value);
                }
            }
            Value::Object(out)
        }
    }
}

fn integer(schema: &Schema, rng: &mut Rng64) -> i64 {
    let mut lo = schema.minimum.map_or(-10, |m| m.ceil() as i64);
    let mut hi = schema.maximum.map_or(1000, |m| m.floor() as i64);
    if schema.exclusive_minimum && schema.minimum.is_some() {
        lo = lo.saturating_add(1);
    }
    if schema.exclusive_maximum && schema.maximum.is_some() {
        hi = hi.saturating_sub(1);
    }
    if schema.minimum.is_some() && schema.maximum.is_none() {
        hi = lo.saturating_add(1000);
    }
    if schema.maximum.is_some() && schema.minimum.is_none() {
        lo = hi.saturating_sub(1000);
    }
    if hi < lo {
        return lo;
    }
    // Boundaries find more faults than the middle of a range.
    match rng.random_range(0..10) {
        0 => lo,
        1 => hi,
        2 if lo <= 0 && 0 <= hi => 0,
        _ => rng.random_range(lo..=hi),
    }
}

fn number(schema: &Schema, rng: &mut Rng64) -> Value {
    let lo = schema.minimum.unwrap_or(-10.0);
    let hi = schema.maximum.unwrap_or(lo.max(0.0) + 1000.0).max(lo);
    let x = match rng.random_range(0..10) {
        0 => lo,
        1 => hi,
        _ => lo + (hi - lo) * rng.random::<f64>(),
    };
    let x = (x * 100.0).round() / 100.0;
    serde_json::Number::from_f64(x.clamp(lo, hi)).map_or(Value::Null, Value::Number)
}

fn string(schema: &Schema, rng: &mut Rng64, left: usize) -> String {
    let n: u32 = rng.random_range(0..100_000);
    match schema.format.as_deref() {
        Some("date-time") => return format!("2024-0{}-1{}T10:2{}:00Z", 1 + n % 9, n % 10, n % 10),
        Some("date") => return format!("2024-0{}-1{}", 1 + n % 9, n % 10),
        Some("uuid") => {
            return format!(
                "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
                rng.random::<u32>(),
                rng.random::<u16>(),
                rng.random::<u16>() & 0xfff,
                rng.random::<u16>() & 0xfff,
                rng.random::<u64>() & 0xffff_ffff_ffff
            );
        }
        Some("email") => return format!("user{n}@example.com"),
        Some("uri") | Some("url") => return format!("https://example.com/r/{n}"),
        Some("ipv4") => return format!("10.{}.{}.{}", n % 256, (n / 256) % 256, n % 7),
        Some("byte") => return "aGVsbG8=".into(),
        _ => {}
    }
    if let Some(pattern) = &schema.pattern {
        let fits = |s: &String| {
            let n = s.chars().count() as u64;
            schema.min_length.is_none_or(|m| n >= m)
                && schema.max_length.is_none_or(|m| n <= m)
                && s.len() <= left
        };
        // A match with text around it may not fit the lengths; a whole one may.
        let found = super::pattern::matching(pattern, rng)
            .filter(fits)
            .or_else(|| super::pattern::whole_match(pattern, rng).filter(fits));
        if let Some(s) = found {
            return s;
        }
    }
    let min = bounded(
        usize::try_from(schema.min_length.unwrap_or(1)).unwrap_or(usize::MAX),
        crate::model::MAX_GENERATED_LENGTH,
        left,
    );
    let max = schema
        .max_length
        .map_or(min.max(12), |m| usize::try_from(m).unwrap_or(usize::MAX))
        .max(min);
    let len = rng.random_range(min..=max.min(min + 16));
    const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut s: String = (0..len)
        .map(|_| ALNUM[rng.random_range(0..ALNUM.len())] as char)
        .collect();
    if len > 0 && schema.pattern.is_none() && rng.random_bool(0.15) {
        // One awkward character, keeping the length within bounds.
        let c = AWKWARD[rng.random_range(0..AWKWARD.len())];
        let at = rng.random_range(0..len);
        let mut chars: Vec<String> = s.chars().map(String::from).collect();
        chars[at] = c.to_string();
        s = chars.concat();
    }
    s
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    fn api() -> Api {
        crate::load::load_text(
            "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths: {}\ncomponents:\n  schemas:\n    Book:\n      type: object\n      required: [title, stock]\n      properties:\n        id: {type: integer, readOnly: true}\n        title: {type: string, minLength: 2, maxLength: 5}\n        stock: {type: integer, minimum: 0, maximum: 3}\n        status: {type: string, enum: [a, b]}\n",
            std::path::Path::new("t.yaml"),
        )
        .unwrap()
        .api
    }

    #[test]
    fn values_respect_constraints_and_required_fields() {
        let api = api();
        let mut rng = Rng64::seed_from_u64(7);
        for _ in 0..200 {
            let v = value_for(&api, &Schema::named("Book"), &mut rng);
            let o = v.as_object().unwrap();
            assert!(!o.contains_key("id"), "read-only fields are not sent");
            let title = o["title"].as_str().unwrap();
            assert!((2..=5).contains(&title.chars().count()), "{title:?}");
            assert!((0..=3).contains(&o["stock"].as_i64().unwrap()));
            if let Some(s) = o.get("status") {
                assert!(s == "a" || s == "b");
            }
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_values() {
        let api = api();
        let draw = |seed| {
            let mut rng = Rng64::seed_from_u64(seed);
            (0..20)
                .map(|_| value_for(&api, &Schema::named("Book"), &mut rng))
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(3), draw(3));
        assert_ne!(draw(3), draw(4));
    }

    #[test]
    fn lengths_and_counts_past_the_caps_are_cut_and_a_value_stays_within_its_budget() {
        let api = api();
        let mut rng = Rng64::seed_from_u64(5);
        let huge_string = Schema {
            types: vec![SchemaType::String],
            min_length: Some(1_000_000_000),
            ..Schema::default()
        };
        let s = value_for(&api, &huge_string, &mut rng);
        assert_eq!(
            s.as_str().unwrap().len() as u64,
            crate::model::MAX_GENERATED_LENGTH
        );
        let huge_array = Schema {
            min_items: Some(1_000_000_000),
            ..Schema::array_of(huge_string.clone())
        };
        // Arrays of arrays of long strings: the value's budget ends them.
        let nested = Schema {
            min_items: Some(1_000_000_000),
            ..Schema::array_of(huge_array)
        };
        let v = value_for(&api, &nested, &mut rng);
        let size = v.to_string().len();
        assert!(size < 2 * VALUE_BUDGET, "{size} bytes");
        assert!(!v.as_array().unwrap().is_empty());
    }

    #[test]
    fn an_array_of_itself_with_min_items_ends() {
        let api = crate::load::load_text(
            "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths: {}\ncomponents:\n  schemas:\n    Tree:\n      type: array\n      minItems: 2\n      items: {$ref: '#/components/schemas/Tree'}\n    Either:\n      anyOf: [{$ref: '#/components/schemas/Either'}, {$ref: '#/components/schemas/Either'}]\n",
            std::path::Path::new("t.yaml"),
        )
        .unwrap()
        .api;
        let mut rng = Rng64::seed_from_u64(1);
        let v = value_for(&api, &Schema::named("Tree"), &mut rng);
        assert!(v.to_string().len() < 8 * VALUE_BUDGET);
        value_for(&api, &Schema::named("Either"), &mut rng);
    }
}
