//! Value mutation as EvoMaster does it, on JSON values guided by their schema:
//! integers by ±2^i (i's ceiling shrinking over the run), numbers by Gaussian
//! steps, strings by character edits, booleans flipped, enums to another value
//! or one invalid one, arrays and objects recursively, dates with occasional
//! invalid parts, and bounds overstepped now and then (black-box tests learn
//! most from the edges of what the spec allows).

use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use serde_json::{Value, json};

use super::values::{Rng64, value_for};
use crate::model::{Api, Schema, SchemaType};

/// The value an enum gene may take that is not in the enum.
pub const INVALID_ENUM: &str = "CARTOGRAPH_INVALID";

/// Probability that an integer jumps to a bound (or zero): the values where
/// arithmetic and checks most often go wrong.
const BOUNDARY: f64 = 0.1;

/// Probability that a bounded integer steps just outside its bounds.
const OVERSTEP: f64 = 0.05;

/// Annealed settings: `progress` is the share of the budget spent, up to the
/// start of the focused search (then 1).
#[derive(Debug, Clone, Copy)]
pub struct Heat {
    /// 0 at the start, 1 from the focused search on.
    pub progress: f64,
}

impl Heat {
    fn anneal(self, start: f64, end: f64) -> f64 {
        start + (end - start) * self.progress.clamp(0.0, 1.0)
    }

    /// Ceiling of the exponent of integer deltas (31 → 10).
    fn int_exponent(self) -> u32 {
        self.anneal(31.0, 10.0).round() as u32
    }

    /// Ceiling of the exponent of character deltas (6 → 3).
    fn char_exponent(self) -> u32 {
        self.anneal(6.0, 3.0).round() as u32
    }
}

/// A mutant of `value`, a value of `schema`.
pub fn mutate_value(
    api: &Api,
    schema: &Schema,
    value: &Value,
    heat: Heat,
    rng: &mut Rng64,
) -> Value {
    mutate(api, schema, value, heat, rng, 0)
}

fn mutate(
    api: &Api,
    schema: &Schema,
    value: &Value,
    heat: Heat,
    rng: &mut Rng64,
    depth: usize,
) -> Value {
    let s = api.resolve(schema);
    if !s.enum_values.is_empty() {
        let n = s.enum_values.len();
        if rng.random_range(0..=n) == n {
            return Value::String(INVALID_ENUM.into());
        }
        let others: Vec<&Value> = s.enum_values.iter().filter(|v| *v != value).collect();
        return others
            .get(rng.random_range(0..others.len().max(1)))
            .map_or_else(|| s.enum_values[0].clone(), |v| (*v).clone());
    }
    if depth > 6 {
        return value.clone();
    }
    let out = match value {
        Value::Bool(b) => Value::Bool(!b),
        Value::Number(n) if n.is_i64() || n.is_u64() => {
            json!(integer(s, n.as_i64().unwrap_or(i64::MAX), heat, rng))
        }
        Value::Number(n) => number(s, n.as_f64().unwrap_or(0.0), heat, rng),
        // A number past 64 bits or the double range (a boundary test's)
        // steps back from the largest the types hold.
        Value::String(_) if crate::execution::wire::number_text(value).is_some() => {
            if s.types.contains(&SchemaType::Integer) {
                json!(integer(s, i64::MAX, heat, rng))
            } else {
                number(s, f64::MAX, heat, rng)
            }
        }
        Value::String(text) => match s.format.as_deref() {
            Some("date") | Some("date-time") => Value::String(date(text, rng)),
            _ => Value::String(string(s, text, heat, rng)),
        },
        Value::Array(items) => {
            let item_schema = s.items.as_deref().cloned().unwrap_or_default();
            let mut items = items.clone();
            let p: f64 = rng.random();
            if items.is_empty() || (p < 0.33 && items.len() < 5) {
                items.push(value_for(api, &item_schema, rng));
            } else if p < 0.5 {
                items.remove(rng.random_range(0..items.len()));
            } else {
                let k = rng.random_range(0..items.len());
                items[k] = mutate(api, &item_schema, &items[k], heat, rng, depth + 1);
            }
            Value::Array(items)
        }
        Value::Object(fields) => {
            let names: Vec<&String> = s
                .properties
                .iter()
                .filter(|(_, p)| !api.resolve(p).read_only)
                .map(|(n, _)| n)
                .collect();
            if names.is_empty() {
                return value.clone();
            }
            let mut fields = fields.clone();
            let name = names[rng.random_range(0..names.len())].clone();
            let prop = &s.properties[&name];
            match fields.get(&name) {
                None => {
                    fields.insert(name, value_for(api, prop, rng));
                }
                Some(_) if !s.required.contains(&name) && rng.random_bool(0.1) => {
                    fields.remove(&name);
                }
                Some(v) => {
                    let m = mutate(api, prop, v, heat, rng, depth + 1);
                    fields.insert(name, m);
                }
            }
            Value::Object(fields)
        }
        Value::Null => value_for(api, schema, rng),
    };
    // A value of the wrong type for its schema (a string where an integer is
    // wanted, after an example) is replaced rather than edited.
    if s.types.contains(&SchemaType::Integer) && out.is_string() && rng.random_bool(0.5) {
        value_for(api, schema, rng)
    } else {
        out
    }
}

fn integer(s: &Schema, x: i64, heat: Heat, rng: &mut Rng64) -> i64 {
    let lo = s
        .minimum
        .map(|m| (m.ceil() as i64).saturating_add(i64::from(s.exclusive_minimum)));
    let hi = s
        .maximum
        .map(|m| (m.floor() as i64).saturating_sub(i64::from(s.exclusive_maximum)));
    if (lo.is_some() || hi.is_some()) && rng.random_bool(OVERSTEP) {
        // Just outside the documented range: where validation is often missing.
        return match (lo, hi) {
            (Some(l), Some(h)) => {
                if rng.random_bool(0.5) {
                    l.saturating_sub(1)
                } else {
                    h.saturating_add(1)
                }
            }
            (Some(l), None) => l.saturating_sub(1),
            (None, Some(h)) => h.saturating_add(1),
            (None, None) => x,
        };
    }
    if rng.random_bool(BOUNDARY)
        && let Some(b) = [lo, hi, Some(0)]
            .into_iter()
            .flatten()
            .filter(|b| *b != x && lo.is_none_or(|l| *b >= l) && hi.is_none_or(|h| *b <= h))
            .nth(rng.random_range(0..2))
    {
        return b;
    }
    let range = match (lo, hi) {
        (Some(l), Some(h)) => (h as i128 - l as i128).max(1) as u128,
        _ => u128::MAX,
    };
    let mut ceiling = heat.int_exponent().max(1);
    while ceiling > 1 && (1u128 << ceiling) > range {
        ceiling -= 1;
    }
    let delta = 1i64 << rng.random_range(0..ceiling).min(62);
    let up = match (lo, hi) {
        (Some(l), _) if x <= l => true,
        (_, Some(h)) if x >= h => false,
        _ => rng.random_bool(0.5),
    };
    let y = if up {
        x.saturating_add(delta)
    } else {
        x.saturating_sub(delta)
    };
    let (lo, hi) = (lo.unwrap_or(i64::MIN), hi.unwrap_or(i64::MAX));
    // Bounds no integer fits (`minimum: 10, maximum: 5`, or 1.5 and 1.7)
    // hold nothing to stay inside.
    if lo <= hi { y.clamp(lo, hi) } else { y }
}

fn number(s: &Schema, x: f64, heat: Heat, rng: &mut Rng64) -> Value {
    let g: f64 = StandardNormal.sample(rng);
    let y = match rng.random_range(0..3) {
        0 => x + g,
        1 => {
            let i = if rng.random_bool(0.33) {
                0
            } else {
                rng.random_range(0..heat.int_exponent().clamp(1, 30))
            };
            x + f64::from(1u32 << i.min(30)) * g
        }
        _ => {
            let places = rng.random_range(0..15);
            let f = 10f64.powi(places);
            (x * f).round() / f
        }
    };
    let (lo, hi) = (s.minimum.unwrap_or(f64::MIN), s.maximum.unwrap_or(f64::MAX));
    let y = if lo <= hi { y.clamp(lo, hi) } else { y };
    serde_json::Number::from_f64(y).map_or(Value::Null, Value::Number)
}

/// Characters a string gene draws from, as EvoMaster does, plus a few awkward ones.
const CHARS: &[u8] = b"_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const AWKWARD: [char; 6] = ['\'', '"', '<', '%', ';', '\\'];

fn string(s: &Schema, text: &str, heat: Heat, rng: &mut Rng64) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    let max = s.max_length.map_or(64, |m| m as usize);
    let min = s.min_length.unwrap_or(0) as usize;
    let p: f64 = rng.random();
    if p < 0.05 {
        let at = rng.random_range(0..=chars.len());
        chars.insert(at, AWKWARD[rng.random_range(0..AWKWARD.len())]);
    } else if p < 0.8 && !chars.is_empty() {
        let k = rng.random_range(0..chars.len());
        let delta = 1i32 << rng.random_range(0..heat.char_exponent().max(1));
        let c = chars[k] as i32 + if rng.random_bool(0.5) { delta } else { -delta };
        chars[k] = char::from_u32(c.clamp(32, 126) as u32).unwrap_or('a');
    } else if p < 0.9 && chars.len() > min {
        chars.pop();
    } else if chars.len() < max {
        let c = CHARS[rng.random_range(0..CHARS.len())] as char;
        if !chars.is_empty() && rng.random_bool(0.2) {
            let at = rng.random_range(0..chars.len());
            chars.insert(at, c);
        } else {
            chars.push(c);
        }
    }
    chars.into_iter().collect()
}

/// A date or date-time with one part changed; now and then to an invalid
/// value (month 0 or 13, day 0 or 32, hour 25), as EvoMaster's date genes allow.
fn date(text: &str, rng: &mut Rng64) -> String {
    let (y, mo, d, rest) = parse_date(text).unwrap_or((2024, 1, 1, String::new()));
    let (mut y, mut mo, mut d) = (y, mo, d);
    match rng.random_range(0..3) {
        0 => y = rng.random_range(1900..=2100),
        1 => {
            mo = if rng.random_bool(0.1) {
                [0, 13][rng.random_range(0..2)]
            } else {
                rng.random_range(1..=12)
            }
        }
        _ => {
            d = if rng.random_bool(0.1) {
                [0, 32][rng.random_range(0..2)]
            } else {
                rng.random_range(1..=28)
            }
        }
    }
    let mut rest = rest;
    if !rest.is_empty() && rng.random_bool(0.1) {
        rest = "T25:61:00Z".into();
    }
    format!("{y:04}-{mo:02}-{d:02}{rest}")
}

fn parse_date(text: &str) -> Option<(i64, i64, i64, String)> {
    let head = text.get(..10)?;
    let mut parts = head.split('-');
    let y = parts.next()?.parse().ok()?;
    let m = parts.next()?.parse().ok()?;
    let d = parts.next()?.parse().ok()?;
    Some((y, m, d, text[10..].to_string()))
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    fn api() -> Api {
        crate::load::load_text(
            "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths: {}\ncomponents:\n  schemas:\n    Q:\n      type: object\n      required: [limit]\n      properties:\n        limit: {type: integer, minimum: 1, maximum: 100}\n        kind: {type: string, enum: [a, b]}\n        when: {type: string, format: date}\n",
            std::path::Path::new("t.yaml"),
        )
        .unwrap()
        .api
    }

    #[test]
    fn bounds_no_value_satisfies_do_not_panic() {
        let api = api();
        let mut rng = Rng64::seed_from_u64(3);
        let heat = Heat { progress: 1.0 };
        for (lo, hi, types) in [
            (10.0, 5.0, vec![SchemaType::Integer]),
            (1.5, 1.7, vec![SchemaType::Integer]),
            (10.0, 5.0, vec![SchemaType::Number]),
            (1e300, 1e301, vec![SchemaType::Integer]),
        ] {
            let s = Schema {
                types,
                minimum: Some(lo),
                maximum: Some(hi),
                exclusive_minimum: true,
                ..Schema::default()
            };
            for start in [json!(7), json!(1.6), json!(-3)] {
                for _ in 0..200 {
                    mutate_value(&api, &s, &start, heat, &mut rng);
                }
            }
            crate::generation::values::value_for(&api, &s, &mut rng);
        }
    }

    #[test]
    fn integers_move_by_powers_of_two_and_sometimes_leave_their_bounds() {
        let api = api();
        let limit = api.schemas["Q"].properties["limit"].clone();
        let mut rng = Rng64::seed_from_u64(1);
        let heat = Heat { progress: 1.0 };
        let mut outside = 0;
        for _ in 0..1000 {
            let v = mutate_value(&api, &limit, &json!(50), heat, &mut rng)
                .as_i64()
                .unwrap();
            assert_ne!(v, 50);
            if !(1..=100).contains(&v) {
                assert!(v == 0 || v == 101, "{v}");
                outside += 1;
            } else {
                let step = (v - 50).unsigned_abs().is_power_of_two();
                assert!(step || v == 1 || v == 100, "{v}");
            }
        }
        assert!((20..100).contains(&outside), "{outside}");
    }

    #[test]
    fn enums_change_and_sometimes_become_invalid() {
        let api = api();
        let kind = api.schemas["Q"].properties["kind"].clone();
        let mut rng = Rng64::seed_from_u64(2);
        let heat = Heat { progress: 0.0 };
        let seen: std::collections::HashSet<String> = (0..200)
            .map(|_| {
                mutate_value(&api, &kind, &json!("a"), heat, &mut rng)
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert!(
            seen.contains("b") && seen.contains(INVALID_ENUM) && !seen.contains("a"),
            "{seen:?}"
        );
    }

    #[test]
    fn dates_keep_their_shape_and_strings_change() {
        let api = api();
        let when = api.schemas["Q"].properties["when"].clone();
        let mut rng = Rng64::seed_from_u64(3);
        let heat = Heat { progress: 0.5 };
        for _ in 0..100 {
            let d = mutate_value(&api, &when, &json!("2024-05-06"), heat, &mut rng);
            assert_eq!(d.as_str().unwrap().len(), 10, "{d}");
        }
        let obj = mutate_value(
            &api,
            &Schema::named("Q"),
            &json!({"limit": 5}),
            heat,
            &mut rng,
        );
        assert_ne!(obj, json!({"limit": 5}));
    }
}
