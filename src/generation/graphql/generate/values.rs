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
    /// their name (else their description) says ([`Shape`]), else short text.
    pub(super) fn scalar(&self, name: &str, rng: &mut Rng64) -> Value {
        if let Some(v) = builtin_scalar(name, rng) {
            return v;
        }
        match self.shape(name) {
            Some(shape) => shape.value(&self.no_api, rng),
            None => Value::String(string(rng)),
        }
    }

    /// What values of custom scalar `name` look like, from its name, else
    /// its description.
    pub(super) fn shape(&self, name: &str) -> Option<Shape> {
        let description = self.ts.get(name).and_then(|t| t.description.as_deref());
        shape_of(name, description)
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

/// What values of a custom scalar look like, by the common practice of the
/// scalar libraries (graphql-scalars, graphql-java's extended scalars,
/// Hasura, PostGraphile, Hot Chocolate): a server parses its custom scalars
/// strictly, and refuses text that is not of their shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Shape {
    /// A string of a REST format (`date-time`, `date`, `uuid`, `email`,
    /// `uri`, `ipv4`), made as REST's generator makes it.
    Format(&'static str),
    /// A date and time without an offset (`2024-01-02T10:20:00`).
    LocalDateTime,
    /// A time of day at UTC (`10:20:00Z`).
    Time,
    /// A time of day without an offset (`10:20:00`).
    LocalTime,
    /// An ISO 8601 duration (`PT2H30M`).
    Duration,
    /// An integer written as a string of digits: `BigInt`s exceed what
    /// JavaScript's numbers hold, so their servers take text (and numbers).
    DigitString,
    /// A JSON integer within a range, mostly small.
    Integer(i64, i64),
    /// A JSON number within a range.
    Number(f64, f64),
    /// A decimal number written as a string (`12.34`), as arbitrary
    /// precision numbers travel.
    Decimal,
    /// Any JSON value; an object is what JSON and JSONObject scalars both take.
    Json,
    /// A hex colour code (`#1a2b3c`).
    HexColor,
    /// An E.164 phone number (`+14155550123`).
    Phone,
    /// An IPv6 address.
    Ipv6,
    /// One of a few well-known codes (currencies, countries, locales, time zones).
    OneOf(&'static [&'static str]),
}

impl Shape {
    /// A value of this shape.
    fn value(self, no_api: &crate::model::Api, rng: &mut Rng64) -> Value {
        let n: u32 = rng.random_range(0..10_000);
        let text = match self {
            Shape::Format(format) => {
                let schema = Schema {
                    format: Some(format.to_string()),
                    ..Schema::of_type(SchemaType::String)
                };
                return value_for(no_api, &schema, rng);
            }
            Shape::LocalDateTime => {
                format!("2024-0{}-1{}T10:2{}:00", 1 + n % 9, n % 10, n % 10)
            }
            Shape::Time => format!("1{}:2{}:00Z", n % 10, n % 10),
            Shape::LocalTime => format!("1{}:2{}:00", n % 10, n % 10),
            Shape::Duration => format!("PT{}H{}M", 1 + n % 23, n % 60),
            Shape::DigitString => match rng.random_range(0..10) {
                // Past 2^53: the values a JavaScript number would round.
                0 => "9007199254740993".to_string(),
                _ => small_integer(1, i64::MAX, rng).to_string(),
            },
            Shape::Integer(lo, hi) => return Value::from(small_integer(lo, hi, rng)),
            Shape::Number(lo, hi) => {
                let x: f64 = rng.random_range(lo..=hi);
                return serde_json::Number::from_f64((x * 100.0).round() / 100.0)
                    .map_or(Value::from(0), Value::Number);
            }
            Shape::Decimal => format!("{}.{:02}", small_integer(0, 1000, rng), n % 100),
            Shape::Json => {
                return if rng.random_bool(0.5) {
                    Value::Object(Map::new())
                } else {
                    serde_json::json!({ "key": alnum(rng, 6) })
                };
            }
            Shape::HexColor => format!("#{:06x}", rng.random::<u32>() & 0xff_ffff),
            Shape::Phone => format!("+1415555{n:04}"),
            Shape::Ipv6 => format!("2001:db8::{:x}", 1 + n),
            Shape::OneOf(values) => values[rng.random_range(0..values.len())].to_string(),
        };
        Value::String(text)
    }
}

/// An integer within `lo..=hi`: mostly small and positive (counts, amounts
/// and ids are), now and then an end of the range.
fn small_integer(lo: i64, hi: i64, rng: &mut Rng64) -> i64 {
    match rng.random_range(0..10) {
        0 => lo,
        1 if hi <= 1_000_000 => hi,
        _ => {
            let (a, b) = (lo.max(-1000), hi.min(1000));
            match (a <= b, b >= 1) {
                (true, true) => rng.random_range(a.max(1)..=b),
                (true, false) => rng.random_range(a..=b),
                (false, _) => lo,
            }
        }
    }
}

/// What a custom scalar's name says its values look like (`DateTime`,
/// `UUID`, `BigInt`, `JSONObject`, Hasura's `timestamptz` and `jsonb`),
/// else what its description says; `None` when neither says.
pub(super) fn shape_of(name: &str, description: Option<&str>) -> Option<Shape> {
    by_name(name).or_else(|| description.and_then(by_description))
}

fn by_name(name: &str) -> Option<Shape> {
    let joined: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase();
    let words = words(name);
    let has = |w: &str| joined.contains(w);
    let word = |w: &str| joined == w || words.iter().any(|x| x == w);
    let int_like = joined.ends_with("int") || joined.ends_with("integer");
    let float_like = ["float", "double", "number"]
        .iter()
        .any(|w| joined.ends_with(w));
    let signed = |positive: Shape, non_negative: Shape, negative: Shape, non_positive: Shape| {
        if joined.starts_with("nonnegative") || joined.starts_with("unsigned") {
            Some(non_negative)
        } else if joined.starts_with("nonpositive") {
            Some(non_positive)
        } else if joined.starts_with("positive") || joined.starts_with("natural") {
            Some(positive)
        } else if joined.starts_with("negative") {
            Some(negative)
        } else {
            None
        }
    };
    Some(if has("uuid") || has("guid") {
        Shape::Format("uuid")
    } else if has("localdatetime") || has("naivedatetime") {
        Shape::LocalDateTime
    } else if has("datetime") || has("timestamp") || word("instant") {
        Shape::Format("date-time")
    } else if has("date") {
        Shape::Format("date")
    } else if has("localtime") || has("naivetime") {
        Shape::LocalTime
    } else if word("time") || joined == "timetz" {
        Shape::Time
    } else if has("duration") {
        Shape::Duration
    } else if has("email") {
        Shape::Format("email")
    } else if word("url") || word("uri") || joined.ends_with("url") || joined.ends_with("uri") {
        Shape::Format("uri")
    } else if has("json") {
        Shape::Json
    } else if has("hexcolo") || word("color") || word("colour") {
        Shape::HexColor
    } else if has("phone") {
        Shape::Phone
    } else if word("ipv6") {
        Shape::Ipv6
    } else if word("ipv4") || word("ip") || has("ipaddress") {
        Shape::Format("ipv4")
    } else if has("bigint") || has("biginteger") {
        Shape::DigitString
    } else if word("long") || word("int64") || word("i64") || word("uint64") || word("u64") {
        Shape::Integer(i64::from(i32::MIN), 1 << 53)
    } else if has("decimal") || has("bigfloat") || word("numeric") || word("money") {
        Shape::Decimal
    } else if let Some(shape) = int_like
        .then(|| {
            signed(
                Shape::Integer(1, 1 << 31),
                Shape::Integer(0, 1 << 31),
                Shape::Integer(-(1 << 31), -1),
                Shape::Integer(-(1 << 31), 0),
            )
        })
        .flatten()
    {
        shape
    } else if let Some(shape) = float_like
        .then(|| {
            signed(
                Shape::Number(0.01, 1000.0),
                Shape::Number(0.0, 1000.0),
                Shape::Number(-1000.0, -0.01),
                Shape::Number(-1000.0, 0.0),
            )
        })
        .flatten()
    {
        shape
    } else if word("port") {
        Shape::Integer(1, 65_535)
    } else if word("latitude") || word("lat") {
        Shape::Number(-90.0, 90.0)
    } else if word("longitude") || word("lng") || word("lon") {
        Shape::Number(-180.0, 180.0)
    } else if word("currency") {
        Shape::OneOf(&["USD", "EUR", "JPY"])
    } else if word("country") {
        Shape::OneOf(&["US", "FR", "JP"])
    } else if word("locale") {
        Shape::OneOf(&["en-US", "fr-FR"])
    } else if has("timezone") {
        Shape::OneOf(&["UTC", "Europe/Paris", "America/New_York"])
    } else {
        return None;
    })
}

/// What a description says a custom scalar's values are, by the words the
/// scalar libraries describe them with ("A date-time string at UTC…",
/// "represents non-fractional signed whole numeric values").
fn by_description(description: &str) -> Option<Shape> {
    let d = description.to_lowercase();
    let says = |w: &str| contains_word(&d, w);
    Some(if says("uuid") || says("guid") {
        Shape::Format("uuid")
    } else if says("date-time") || says("datetime") || says("timestamp") || says("date and time") {
        Shape::Format("date-time")
    } else if says("date") && (says("rfc 3339") || says("iso 8601") || says("yyyy-mm-dd")) {
        Shape::Format("date")
    } else if says("email") {
        Shape::Format("email")
    } else if says("url") || says("uri") {
        Shape::Format("uri")
    } else if says("json") {
        Shape::Json
    } else if says("whole numeric") || says("whole number") || says("integer") || says("64-bit") {
        if says("string") {
            Shape::DigitString
        } else {
            Shape::Integer(i64::from(i32::MIN), 1 << 53)
        }
    } else if says("decimal") {
        Shape::Decimal
    } else {
        return None;
    })
}

/// The words of a name, lower-case: `JSONObject` is `json`, `object`;
/// `PersonGuid` is `person`, `guid`; `ip_address` is `ip`, `address`.
fn words(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            continue;
        }
        let prev = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1);
        let boundary = c.is_ascii_uppercase()
            && prev.is_some_and(|p| {
                p.is_ascii_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_ascii_uppercase() && next.is_some_and(char::is_ascii_lowercase))
            });
        if boundary && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        current.push(c.to_ascii_lowercase());
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Whether `word` stands in `text` on its own.
fn contains_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
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
