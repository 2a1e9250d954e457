//! Values outside what a schema allows, or at its edges: the inputs of the
//! negative and boundary tests (Schemathesis's coverage phase, EvoMaster's
//! robustness testing). For one schema: a value of each other type, `null`,
//! each bound overstepped, a value outside the enum, a near miss of the
//! pattern, malformed formats, and valid but unusual values (empty, format
//! specifiers and metacharacters, unicode, control characters, very long,
//! extreme numbers: past 64 bits and past the double range, written as JSON
//! number text digit for digit). Each value is classified against the
//! schema, so a request says exactly what it breaks.

use serde_json::{Value, json};

use crate::execution::BreachKind;
use crate::generation::pattern::{pattern_matches, unanchored, whole_match};
use crate::generation::values::Rng64;
use crate::model::{Api, Schema, SchemaType};
use crate::model::{MAX_GENERATED_ITEMS, MAX_GENERATED_LENGTH};

/// Where a value goes: into text (a path segment, a query parameter, a
/// header, a form field: every value is a string there) or into JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A path segment.
    Path,
    /// A query parameter, cookie or form field.
    Text,
    /// A header value: no control characters can travel.
    Header,
    /// A JSON body field or GraphQL variable.
    Json,
}

/// One value to try, and what it breaks.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    /// The value.
    pub value: Value,
    /// What it does to the schema.
    pub kind: BreachKind,
    /// The class of value it is.
    pub class: EdgeClass,
}

pub use crate::execution::EdgeClass;

// How the edge pass orders and learns the classes: generation's business,
// beside the probes that send them.
impl EdgeClass {
    /// Every class, in the order of their prior yield.
    pub const ALL: [EdgeClass; 16] = [
        EdgeClass::Huge,
        EdgeClass::WrongShape,
        EdgeClass::StructureInScalar,
        EdgeClass::Null,
        EdgeClass::WrongType,
        EdgeClass::Missing,
        EdgeClass::Malformed,
        EdgeClass::Empty,
        EdgeClass::Long,
        EdgeClass::Bounds,
        EdgeClass::NotInEnum,
        EdgeClass::Pattern,
        EdgeClass::Metacharacters,
        EdgeClass::Credentials,
        EdgeClass::Examples,
        EdgeClass::Dangling,
    ];

    /// The share of operations a value of this class breaks, before the
    /// run has seen any: the order in which Schemathesis's coverage phase
    /// and the field's benchmarks found server errors (overflowing
    /// integers and bodies of the wrong shape first).
    pub fn prior_yield(self) -> f64 {
        match self {
            EdgeClass::Huge => 0.12,
            EdgeClass::WrongShape => 0.10,
            EdgeClass::StructureInScalar => 0.08,
            EdgeClass::Null => 0.06,
            EdgeClass::WrongType => 0.05,
            EdgeClass::Missing => 0.04,
            EdgeClass::Malformed => 0.04,
            EdgeClass::Empty => 0.03,
            EdgeClass::Long => 0.03,
            EdgeClass::Bounds => 0.025,
            EdgeClass::NotInEnum => 0.02,
            EdgeClass::Pattern => 0.02,
            EdgeClass::Metacharacters => 0.02,
            EdgeClass::Credentials => 0.01,
            EdgeClass::Examples => 0.05,
            EdgeClass::Dangling => 0.05,
        }
    }

    /// Whether the edge pass gives it to every input before the search:
    /// the classes that break servers most often (Schemathesis's coverage
    /// phase sends them first). The others come after, among the negative
    /// tests of the search, still ordered by their yield.
    pub fn in_pass(self) -> bool {
        matches!(
            self,
            EdgeClass::Huge
                | EdgeClass::WrongShape
                | EdgeClass::StructureInScalar
                | EdgeClass::Null
                | EdgeClass::WrongType
                | EdgeClass::Empty
                | EdgeClass::Long
                | EdgeClass::Examples
                | EdgeClass::Dangling
        )
    }

    /// Its position in [`EdgeClass::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Longest string tried when the schema sets no `maxLength`.
const LONG: usize = MAX_GENERATED_LENGTH as usize;

/// One less than `min`, cut to `cap`.
fn short_of(min: u64, cap: u64) -> usize {
    usize::try_from(min.saturating_sub(1).min(cap)).unwrap_or(0)
}

/// Values tried per input and class of value, at most: every class an
/// input can take keeps its first value (a cap over all classes cut the
/// integers past 64 bits, listed late, from inputs with many rules).
pub const PER_CLASS: usize = 6;

/// Integers no 64-bit type holds: 2^64, 10^20 and −2^63−1 (a server's
/// conversion to a database or machine integer overflows).
const PAST_64_BITS: [&str; 3] = [
    "18446744073709551616",
    "100000000000000000000",
    "-9223372036854775809",
];

/// Numbers past the double range (a parser through `f64` reads infinity).
const PAST_DOUBLE: [&str; 2] = ["1e400", "-1e400"];

/// Format specifiers and metacharacters that break servers which splice
/// input into format strings, regular expressions, queries or markup.
const SPLICED: [&str; 7] = [
    "%s%d%x%n{0}{}",
    "'\"\\",
    "([*+?",
    "}",
    "\"x\"",
    "<script>a</script>;--",
    "${7*7}",
];

/// The values to try for an input of `schema` at `place`, most telling
/// first: type violations, `null`, bounds, enum, pattern, format, then
/// valid but unusual values.
pub fn probes(api: &Api, schema: &Schema, place: Place, rng: &mut Rng64) -> Vec<Probe> {
    let s = api.resolve(schema);
    let types = value_types(api, s);
    let mut candidates: Vec<(Value, EdgeClass)> = Vec::new();
    let json = place == Place::Json;
    let numeric = types.contains(&SchemaType::Integer) || types.contains(&SchemaType::Number);
    let integer = types.contains(&SchemaType::Integer) && !types.contains(&SchemaType::Number);
    let stringy = types.contains(&SchemaType::String) || types.is_empty();
    let structured = types.contains(&SchemaType::Array) || types.contains(&SchemaType::Object);
    // Past the machine's sizes, as exact number text (never rounded through
    // f64): integers past 64 bits for both, and for integers also one past
    // the double range written as digits. First: the class that breaks the
    // most servers.
    if numeric {
        let exact = |t: &str| crate::execution::wire::exact_number(t);
        let mut huge: Vec<Value> = PAST_64_BITS.iter().filter_map(|t| exact(t)).collect();
        if types.contains(&SchemaType::Number) {
            huge.extend(PAST_DOUBLE.iter().filter_map(|t| exact(t)));
        } else {
            huge.extend(exact(&format!("1{}", "0".repeat(309))));
        }
        candidates.extend(huge.into_iter().map(|v| (v, EdgeClass::Huge)));
    }
    // The description's own examples, each once: the search draws them
    // only now and then, and a server's authors list the inputs they
    // thought of, not the ones their code handles.
    candidates.extend(s.examples.iter().map(|v| (v.clone(), EdgeClass::Examples)));
    // Type violations.
    if numeric {
        candidates.push((json!("abc"), EdgeClass::WrongType));
        if integer {
            let half = if json { json!(1.5) } else { json!("1.5") };
            candidates.push((half, EdgeClass::WrongType));
        }
    }
    if types.contains(&SchemaType::Boolean) {
        candidates.push((json!("maybe"), EdgeClass::WrongType));
    }
    if json {
        // A value of another shape where an object or array is due:
        // `[null, null]` first (a handler that indexes it reads `null`).
        if types.contains(&SchemaType::Object) {
            candidates.push((json!([null, null]), EdgeClass::WrongShape));
            candidates.push((json!([]), EdgeClass::WrongShape));
        }
        if types.contains(&SchemaType::Array) {
            candidates.push((json!([null]), EdgeClass::WrongShape));
            candidates.push((json!({}), EdgeClass::WrongShape));
        }
        if structured {
            candidates.push((json!("abc"), EdgeClass::WrongShape));
            candidates.push((json!(0), EdgeClass::WrongShape));
        }
        // An object or an array where a scalar is due (`.strip()` on a dict).
        let scalar = !structured && !types.is_empty() || !s.enum_values.is_empty();
        if scalar {
            candidates.push((json!({"a": "b"}), EdgeClass::StructureInScalar));
            candidates.push((json!(["a"]), EdgeClass::StructureInScalar));
        }
        // A number in a string or string-enum field.
        if types.contains(&SchemaType::String)
            || s.enum_values.iter().any(Value::is_string) && !numeric
        {
            candidates.push((json!(123), EdgeClass::WrongType));
        }
        if types.contains(&SchemaType::Boolean) {
            candidates.push((json!(1), EdgeClass::WrongType));
        }
        candidates.push((Value::Null, EdgeClass::Null));
    }
    // Outside the enum.
    if !s.enum_values.is_empty() {
        let outside = if s.enum_values.iter().all(Value::is_number) {
            json!(999_999)
        } else {
            json!(crate::generation::mutation::INVALID_ENUM)
        };
        candidates.push((outside, EdgeClass::NotInEnum));
    }
    // Bounds, just outside.
    if let Some(m) = s.minimum {
        let below = if s.exclusive_minimum { m } else { m - 1.0 };
        candidates.push((number(below, integer), EdgeClass::Bounds));
    }
    if let Some(m) = s.maximum {
        let above = if s.exclusive_maximum { m } else { m + 1.0 };
        candidates.push((number(above, integer), EdgeClass::Bounds));
    }
    // A value one short of a bound breaks it as well as any shorter one:
    // past what generation makes, the shortest is cut there. One past an
    // upper bound is only tried below it.
    if stringy {
        if let Some(min) = s.min_length.filter(|m| *m > 0) {
            let short = "a".repeat(short_of(min, MAX_GENERATED_LENGTH));
            candidates.push((json!(short), EdgeClass::Empty));
        }
        if let Some(max) = s.max_length.filter(|m| *m < LONG as u64) {
            candidates.push((json!("a".repeat(max as usize + 1)), EdgeClass::Long));
        }
    }
    if types.contains(&SchemaType::Array) && json {
        let item = s.items.as_deref().cloned().unwrap_or_default();
        if let Some(min) = s.min_items.filter(|m| *m > 0) {
            let items: Vec<Value> = (0..short_of(min, MAX_GENERATED_ITEMS))
                .map(|_| crate::generation::values::value_for(api, &item, rng))
                .collect();
            candidates.push((Value::Array(items), EdgeClass::Bounds));
        }
        if let Some(max) = s.max_items.filter(|m| *m < MAX_GENERATED_ITEMS) {
            let items: Vec<Value> = (0..=max)
                .map(|_| crate::generation::values::value_for(api, &item, rng))
                .collect();
            candidates.push((Value::Array(items), EdgeClass::Bounds));
        }
    }
    // A near miss of the pattern: a matching string with its characters
    // changed class (digits to letters, letters to digits). Then what the
    // pattern accepts only because it is not anchored (`*abc` for
    // `^"[0-9]+"$|\*`): a validator lets it through, a parser behind it
    // may not.
    if let Some(pattern) = &s.pattern {
        if let Some(valid) = whole_match(pattern, rng) {
            candidates.push((json!(near_miss(&valid)), EdgeClass::Pattern));
        }
        candidates.extend(
            unanchored(pattern, rng)
                .into_iter()
                .map(|t| (Value::String(t), EdgeClass::Pattern)),
        );
    }
    // Malformed formats.
    if let Some(bad) = s.format.as_deref().and_then(malformed_format) {
        candidates.push((json!(bad), EdgeClass::Pattern));
    }
    if types.contains(&SchemaType::Integer) {
        let edge = match s.format.as_deref() {
            Some("int32") => 2_147_483_648i64,
            _ => i64::MAX,
        };
        candidates.extend(
            [json!(0), json!(-1), json!(edge), json!(-2_147_483_649i64)]
                .map(|v| (v, EdgeClass::Bounds)),
        );
    }
    if types.contains(&SchemaType::Number) {
        candidates.extend(
            [json!(0), json!(-1), json!(1e308), json!(-1e308)].map(|v| (v, EdgeClass::Bounds)),
        );
    }
    // Valid but unusual strings.
    if stringy && s.enum_values.is_empty() {
        candidates.push((json!(""), EdgeClass::Empty));
        // Servers refuse very long headers whole (431), before any handler.
        let cap = if place == Place::Header { 1_000 } else { LONG };
        let long = s.max_length.map_or(cap, |m| (m as usize).min(cap));
        candidates.push((json!("a".repeat(long)), EdgeClass::Long));
        candidates.extend(
            SPLICED
                .iter()
                .map(|t| (json!(t), EdgeClass::Metacharacters)),
        );
        candidates.push((json!("é😀\u{202e}ǅ"), EdgeClass::Metacharacters));
        if place != Place::Header {
            candidates.push((json!("a\u{0}\u{1b}b"), EdgeClass::Metacharacters));
        }
    }
    // A free-form object in a query (each key a parameter): unusual keys'
    // values, since the server reads them one by one.
    if !json && types.contains(&SchemaType::Object) && s.additional_properties.is_some() {
        candidates.push((json!({"a": "é😀\u{202e}ǅ"}), EdgeClass::Metacharacters));
        candidates.extend(
            SPLICED
                .iter()
                .map(|t| (json!({ "a": t }), EdgeClass::Metacharacters)),
        );
        candidates.push((json!({"é😀": "x"}), EdgeClass::Metacharacters));
    }
    // At most PER_CLASS values of a class: every class keeps its first.
    let mut out: Vec<Probe> = Vec::new();
    let mut per_class = [0usize; EdgeClass::ALL.len()];
    for (value, class) in candidates {
        if per_class[class.index()] >= PER_CLASS {
            continue;
        }
        if out.iter().any(|p| p.value == value) || !travels(&value, place) {
            continue;
        }
        let kind = breaks(api, schema, &value, place).unwrap_or(BreachKind::Unusual);
        per_class[class.index()] += 1;
        out.push(Probe { value, kind, class });
    }
    out
}

/// Whether `value` can be sent at `place` and still be that value: a path
/// segment cannot be empty, `.` or `..`; text places take no `null`.
fn travels(value: &Value, place: Place) -> bool {
    match place {
        Place::Json => true,
        _ if value.is_null() => false,
        Place::Path => !matches!(
            crate::execution::wire::as_text(value).as_str(),
            "" | "." | ".."
        ),
        _ => true,
    }
}

fn number(x: f64, integer: bool) -> Value {
    if integer && x.fract() == 0.0 && x.abs() < 9.0e15 {
        json!(x as i64)
    } else {
        serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
    }
}

/// The types a schema's values may take, `null` left out; empty for any.
fn value_types(api: &Api, s: &Schema) -> Vec<SchemaType> {
    let mut left = ALTERNATIVES_FOLLOWED;
    value_types_within(api, s, &mut left)
}

/// Alternatives followed at most, in all, for one question about a schema:
/// an `anyOf` that names its own schema would otherwise be followed for
/// ever, and one with many members that name it, exponentially long.
const ALTERNATIVES_FOLLOWED: usize = 256;

fn value_types_within(api: &Api, s: &Schema, left: &mut usize) -> Vec<SchemaType> {
    let mut types: Vec<SchemaType> = s
        .types
        .iter()
        .copied()
        .filter(|t| *t != SchemaType::Null)
        .collect();
    if types.is_empty() && (s.reference.is_some() || !s.properties.is_empty()) {
        types.push(SchemaType::Object);
    }
    if types.is_empty() && !s.alternatives.is_empty() {
        for alt in &s.alternatives {
            if *left == 0 {
                break;
            }
            *left -= 1;
            for t in value_types_within(api, api.resolve(alt), left) {
                if !types.contains(&t) {
                    types.push(t);
                }
            }
        }
    }
    types
}

/// Whether `schema` allows `null`.
fn allows_null(api: &Api, s: &Schema) -> bool {
    let mut left = ALTERNATIVES_FOLLOWED;
    allows_null_within(api, s, &mut left)
}

fn allows_null_within(api: &Api, s: &Schema, left: &mut usize) -> bool {
    s.types.contains(&SchemaType::Null)
        || (s.types.is_empty()
            && s.properties.is_empty()
            && s.reference.is_none()
            && s.alternatives.is_empty())
        || s.alternatives.iter().any(|a| {
            if *left == 0 {
                return false;
            }
            *left -= 1;
            allows_null_within(api, api.resolve(a), left)
        })
        || s.enum_values.iter().any(Value::is_null)
}

/// What `value` breaks in `schema` when sent at `place`, or `None` when the
/// schema allows it (as far as these rules can tell).
pub fn breaks(api: &Api, schema: &Schema, value: &Value, place: Place) -> Option<BreachKind> {
    let mut left = ALTERNATIVES_FOLLOWED;
    breaks_within(api, schema, value, place, &mut left)
}

fn breaks_within(
    api: &Api,
    schema: &Schema,
    value: &Value,
    place: Place,
    left: &mut usize,
) -> Option<BreachKind> {
    let s = api.resolve(schema);
    if !s.alternatives.is_empty() && s.types.is_empty() && *left > 0 {
        // Broken only if every alternative refuses it.
        let mut first = None;
        for alt in &s.alternatives {
            if *left == 0 {
                break;
            }
            *left -= 1;
            match breaks_within(api, alt, value, place, left) {
                None => return None,
                Some(k) => first = first.or(Some(k)),
            }
        }
        return first;
    }
    if value.is_null() {
        return (!allows_null(api, s)).then_some(BreachKind::Null);
    }
    if s.types == [SchemaType::Null] {
        return Some(BreachKind::WrongType);
    }
    let types = value_types(api, s);
    // Text places carry strings: read them as the schema's type would. A
    // number past what a double holds is read as the largest one.
    let read: Value = match (place, value) {
        _ if crate::execution::wire::number_text(value).is_some() => {
            let text = crate::execution::wire::number_text(value).unwrap_or("0");
            let x = text
                .parse::<f64>()
                .unwrap_or(0.0)
                .clamp(-f64::MAX, f64::MAX);
            number(x, false)
        }
        (Place::Json, v) => v.clone(),
        (_, Value::String(text)) => as_typed(text, &types),
        (_, v) => v.clone(),
    };
    if !types.is_empty() && !types.iter().any(|t| has_type(&read, *t)) {
        return Some(BreachKind::WrongType);
    }
    if !s.enum_values.is_empty() && !s.enum_values.iter().any(|e| same(e, &read)) {
        return Some(BreachKind::NotInEnum);
    }
    if let Some(x) = read.as_f64() {
        if let Some(m) = s.minimum
            && (x < m || (s.exclusive_minimum && x == m))
        {
            return Some(BreachKind::BelowMinimum);
        }
        if let Some(m) = s.maximum
            && (x > m || (s.exclusive_maximum && x == m))
        {
            return Some(BreachKind::AboveMaximum);
        }
    }
    if let Value::String(text) = &read {
        let n = text.chars().count() as u64;
        if s.min_length.is_some_and(|m| n < m) {
            return Some(BreachKind::TooShort);
        }
        if s.max_length.is_some_and(|m| n > m) {
            return Some(BreachKind::TooLong);
        }
        if let Some(matches) = s.pattern.as_deref().and_then(|p| pattern_matches(p, text))
            && !matches
        {
            return Some(BreachKind::PatternMismatch);
        }
        if s.format.as_deref().is_some_and(|f| !format_fits(f, text)) {
            return Some(BreachKind::MalformedFormat);
        }
    }
    if let Value::Array(items) = &read {
        let n = items.len() as u64;
        if s.min_items.is_some_and(|m| n < m) {
            return Some(BreachKind::TooFewItems);
        }
        if s.max_items.is_some_and(|m| n > m) {
            return Some(BreachKind::TooManyItems);
        }
    }
    if types.first() == Some(&SchemaType::Integer) && read.is_number() {
        let fits = match s.format.as_deref() {
            Some("int32") => read.as_i64().is_some_and(|x| i32::try_from(x).is_ok()),
            Some("int64") => read.as_i64().is_some(),
            _ => true,
        };
        if !fits {
            return Some(BreachKind::MalformedFormat);
        }
    }
    None
}

/// Text read as the first of `types` it parses as; as a string otherwise.
fn as_typed(text: &str, types: &[SchemaType]) -> Value {
    for t in types {
        match t {
            SchemaType::Integer => {
                let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
                if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                    if let Ok(n) = text.parse::<i64>() {
                        return json!(n);
                    }
                    // Too large for i64: still an integer, as a float.
                    if let Ok(x) = text.parse::<f64>() {
                        return number(x.clamp(-f64::MAX, f64::MAX), false);
                    }
                }
            }
            SchemaType::Number => {
                if let Ok(x) = text.parse::<f64>()
                    && x.is_finite()
                    && !text.trim().is_empty()
                    && text.trim() == text
                {
                    return number(x, false);
                }
            }
            SchemaType::Boolean if text == "true" || text == "false" => {
                return json!(text == "true");
            }
            _ => {}
        }
    }
    json!(text)
}

fn has_type(v: &Value, t: SchemaType) -> bool {
    match t {
        SchemaType::String => v.is_string(),
        SchemaType::Integer => {
            v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|x| x.fract() == 0.0)
        }
        SchemaType::Number => v.is_number(),
        SchemaType::Boolean => v.is_boolean(),
        SchemaType::Array => v.is_array(),
        SchemaType::Object => v.is_object(),
        SchemaType::Null => v.is_null(),
    }
}

/// Enum membership, with `1` and `1.0` the same number.
fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// A string of a malformed `format`, when the format is one servers parse.
fn malformed_format(format: &str) -> Option<&'static str> {
    Some(match format {
        "uuid" => "00000000-0000-0000-0000-00000000000g",
        "date" => "2024-13-45",
        "date-time" => "2024-13-45T25:61:00Z",
        "time" => "25:61:00",
        "email" => "not-an-email",
        "uri" | "url" => "not a uri",
        "ipv4" => "999.1.1.1",
        "ipv6" => "::g",
        "hostname" => "-bad-.host_name",
        "byte" => "!!!not base64",
        _ => return None,
    })
}

/// Whether `text` is of `format`, for the formats [`malformed_format`]
/// breaks; any other format fits.
fn format_fits(format: &str, text: &str) -> bool {
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    let date = |s: &str| {
        let p: Vec<&str> = s.split('-').collect();
        p.len() == 3
            && digits(p[0], 4)
            && digits(p[1], 2)
            && digits(p[2], 2)
            && (1..=12).contains(&p[1].parse::<u32>().unwrap_or(0))
            && (1..=31).contains(&p[2].parse::<u32>().unwrap_or(0))
    };
    let time = |s: &str| {
        let p: Vec<&str> = s.get(..8).unwrap_or("").split(':').collect();
        p.len() == 3
            && p.iter().all(|x| digits(x, 2))
            && p[0].parse::<u32>().unwrap_or(99) < 24
            && p[1].parse::<u32>().unwrap_or(99) < 60
            && p[2].parse::<u32>().unwrap_or(99) < 61
    };
    match format {
        "uuid" => {
            text.len() == 36
                && text.char_indices().all(|(i, c)| {
                    if [8, 13, 18, 23].contains(&i) {
                        c == '-'
                    } else {
                        c.is_ascii_hexdigit()
                    }
                })
        }
        "date" => date(text),
        "date-time" => text
            .split_once(['T', 't', ' '])
            .is_some_and(|(d, t)| date(d) && time(t)),
        "time" => time(text),
        "email" => text
            .split_once('@')
            .is_some_and(|(a, b)| !a.is_empty() && b.contains('.') && !b.contains(' ')),
        "uri" | "url" => text.split_once(':').is_some_and(|(scheme, _)| {
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
                && !text.contains(' ')
        }),
        "ipv4" => {
            let p: Vec<&str> = text.split('.').collect();
            p.len() == 4
                && p.iter()
                    .all(|x| !x.is_empty() && x.len() <= 3 && x.parse::<u8>().is_ok())
        }
        "ipv6" => text.parse::<std::net::Ipv6Addr>().is_ok(),
        "hostname" => {
            !text.is_empty()
                && text.split('.').all(|l| {
                    !l.is_empty()
                        && !l.starts_with('-')
                        && !l.ends_with('-')
                        && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                })
        }
        "byte" => text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b)),
        _ => true,
    }
}

/// `text` with each character moved to another class: digits become
/// letters, letters digits; when nothing changes (only punctuation), an
/// `x` goes in the middle.
fn near_miss(text: &str) -> String {
    let out: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_digit() {
                (b'a' + (c as u8 - b'0')) as char
            } else if c.is_ascii_alphabetic() {
                (b'0' + (c.to_ascii_lowercase() as u8 - b'a') % 10) as char
            } else {
                c
            }
        })
        .collect();
    if out == text {
        let mid = text.chars().count() / 2;
        let mut chars: Vec<char> = text.chars().collect();
        chars.insert(mid, 'x');
        return chars.into_iter().collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    fn api() -> Api {
        crate::load::load_text(
            "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths: {}\ncomponents:\n  schemas:\n    Q:\n      type: object\n      properties:\n        offset: {type: integer, minimum: 0}\n        tag: {type: string, pattern: '^\"[0-9]+\"$'}\n        kind: {type: string, enum: [a, b]}\n        id: {type: string, format: uuid}\n        parent: {anyOf: [{type: integer}, {type: 'null'}]}\n",
            std::path::Path::new("t.yaml"),
        )
        .unwrap()
        .api
    }

    fn prop(api: &Api, name: &str) -> Schema {
        api.schemas["Q"].properties[name].clone()
    }

    #[test]
    fn every_class_an_input_can_take_keeps_a_value() {
        let api = api();
        let mut rng = Rng64::seed_from_u64(1);
        let classes = |name: &str, place: Place, rng: &mut Rng64| {
            probes(&api, &prop(&api, name), place, rng)
                .into_iter()
                .map(|p| (p.class, p.value))
                .collect::<Vec<_>>()
        };
        // An integer in a query: past 64 bits, digit for digit, however
        // many other rules it has.
        let offset = classes("offset", Place::Text, &mut rng);
        assert!(offset.iter().any(|(c, v)| *c == EdgeClass::Huge
            && crate::execution::wire::number_text(v).is_some_and(|t| t.len() >= 20)));
        // A string enum in JSON: a number and an object where a string is due.
        let kind = classes("kind", Place::Json, &mut rng);
        assert!(
            kind.contains(&(EdgeClass::WrongType, json!(123))),
            "{kind:?}"
        );
        assert!(
            kind.iter()
                .any(|(c, v)| *c == EdgeClass::StructureInScalar && v.is_object()),
            "{kind:?}"
        );
        // An object where an object is due: `[null, null]` and other shapes.
        let object = Schema {
            types: vec![SchemaType::Object],
            ..Schema::default()
        };
        let shapes: Vec<(EdgeClass, Value)> = probes(&api, &object, Place::Json, &mut rng)
            .into_iter()
            .map(|p| (p.class, p.value))
            .collect();
        assert!(shapes.contains(&(EdgeClass::WrongShape, json!([null, null]))));
        assert!(shapes.contains(&(EdgeClass::Null, Value::Null)));
        // No class holds more than its share.
        for class in EdgeClass::ALL {
            assert!(offset.iter().filter(|(c, _)| *c == class).count() <= PER_CLASS);
        }
    }

    #[test]
    fn bounds_of_a_billion_give_probes_of_bounded_size_that_still_break_them() {
        let api = api();
        let mut rng = Rng64::seed_from_u64(2);
        let string = Schema {
            types: vec![SchemaType::String],
            min_length: Some(1_000_000_000),
            max_length: Some(2_000_000_000),
            ..Schema::default()
        };
        let array = Schema {
            min_items: Some(1_000_000_000),
            max_items: Some(2_000_000_000),
            ..Schema::array_of(string.clone())
        };
        for schema in [&string, &array] {
            let found = probes(&api, schema, Place::Json, &mut rng);
            let size: usize = found.iter().map(|p| p.value.to_string().len()).sum();
            assert!(size < 50_000_000, "{size} bytes of probes");
            assert!(
                found
                    .iter()
                    .any(|p| matches!(p.kind, BreachKind::TooShort | BreachKind::TooFewItems)),
                "{:?}",
                found.iter().map(|p| p.kind).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn lengths_and_counts_from_a_description_are_capped() {
        let api = api();
        let mut rng = Rng64::seed_from_u64(1);
        let huge = Schema {
            types: vec![SchemaType::Array],
            min_items: Some(1_000_000_000),
            ..Schema::default()
        };
        // Nothing is built from minItems: 1e9 (it would not fit in memory).
        let out = probes(&api, &huge, Place::Json, &mut rng);
        assert!(out.iter().all(|p| {
            p.value
                .as_array()
                .is_none_or(|a| a.len() <= MAX_GENERATED_ITEMS as usize)
        }));
        let long = Schema {
            types: vec![SchemaType::String],
            min_length: Some(1_000_000_000),
            ..Schema::default()
        };
        let out = probes(&api, &long, Place::Json, &mut rng);
        assert!(
            out.iter()
                .all(|p| p.value.as_str().is_none_or(|s| s.len() <= LONG))
        );
    }

    #[test]
    fn an_any_of_that_names_itself_is_judged_without_end() {
        let api = crate::load::load_text(
            "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths: {}\ncomponents:\n  schemas:\n    E:\n      anyOf: [{$ref: '#/components/schemas/E'}, {$ref: '#/components/schemas/E'}]\n",
            std::path::Path::new("t.yaml"),
        )
        .unwrap()
        .api;
        let mut rng = Rng64::seed_from_u64(2);
        let e = Schema::named("E");
        for p in probes(&api, &e, Place::Json, &mut rng) {
            breaks(&api, &e, &p.value, Place::Json);
        }
    }

    #[test]
    fn each_value_says_what_it_breaks() {
        let api = api();
        let mut rng = Rng64::seed_from_u64(1);
        let offset = probes(&api, &prop(&api, "offset"), Place::Text, &mut rng);
        let kind = |v: Value| offset.iter().find(|p| p.value == v).map(|p| p.kind);
        assert_eq!(kind(json!("abc")), Some(BreachKind::WrongType));
        assert_eq!(kind(json!("1.5")), Some(BreachKind::WrongType));
        assert_eq!(kind(json!(-1)), Some(BreachKind::BelowMinimum));
        assert_eq!(kind(json!(0)), Some(BreachKind::Unusual));
        assert!(
            offset.iter().all(|p| !p.value.is_null()),
            "no null in a query"
        );
        let json_offset = probes(&api, &prop(&api, "offset"), Place::Json, &mut rng);
        assert!(
            json_offset
                .iter()
                .any(|p| p.value.is_null() && p.kind == BreachKind::Null)
        );
    }

    #[test]
    fn patterns_get_a_near_miss_and_formats_a_malformed_value() {
        let api = api();
        let mut rng = Rng64::seed_from_u64(2);
        let tag = probes(&api, &prop(&api, "tag"), Place::Header, &mut rng);
        let miss = tag
            .iter()
            .find(|p| p.kind == BreachKind::PatternMismatch)
            .expect("a near miss");
        let text = miss.value.as_str().unwrap();
        assert!(text.starts_with('"') && text.ends_with('"'), "{text}");
        assert!(
            tag.iter()
                .all(|p| !p.value.as_str().unwrap_or("").contains('\u{0}'))
        );
        let id = probes(&api, &prop(&api, "id"), Place::Path, &mut rng);
        assert!(id.iter().any(|p| p.kind == BreachKind::MalformedFormat));
        assert!(id.iter().all(|p| p.value != json!("")), "no empty segment");
        let kind = probes(&api, &prop(&api, "kind"), Place::Text, &mut rng);
        assert!(kind.iter().any(|p| p.kind == BreachKind::NotInEnum));
    }

    #[test]
    fn unanchored_patterns_get_values_with_text_around_their_match() {
        let api = api();
        let etag = Schema {
            types: vec![SchemaType::String],
            pattern: Some(r#"^"([0-9]+?)"$|\*"#.into()),
            ..Schema::default()
        };
        let mut rng = Rng64::seed_from_u64(5);
        let tried = probes(&api, &etag, Place::Header, &mut rng);
        for want in ["*abc", "abc*"] {
            let p = tried
                .iter()
                .find(|p| p.value == json!(want))
                .unwrap_or_else(|| panic!("{want}: {tried:?}"));
            assert_eq!(p.kind, BreachKind::Unusual, "it matches the pattern");
        }
        // Anchored at both ends: no such value.
        let tag = probes(&api, &prop(&api, "tag"), Place::Header, &mut rng);
        assert!(
            !tag.iter()
                .any(|p| p.value.as_str().is_some_and(|v| v.ends_with("abc")))
        );
    }

    #[test]
    fn integers_and_numbers_get_values_past_the_machines_sizes_as_exact_text() {
        use crate::execution::wire::{as_text, json_text, number_text};
        let api = api();
        let mut rng = Rng64::seed_from_u64(4);
        for place in [Place::Text, Place::Path, Place::Json] {
            let offset = probes(&api, &prop(&api, "offset"), place, &mut rng);
            let texts: Vec<String> = offset
                .iter()
                .filter(|p| number_text(&p.value).is_some())
                .map(|p| as_text(&p.value))
                .collect();
            for want in [
                "18446744073709551616",
                "100000000000000000000",
                "-9223372036854775809",
            ] {
                assert!(texts.iter().any(|t| t == want), "{place:?}: {texts:?}");
            }
            assert!(
                texts.iter().any(|t| t.len() == 310),
                "past the double range"
            );
            // Above minimum 0, valid: unusual; below it: a breach.
            let kind = |t: &str| {
                offset
                    .iter()
                    .find(|p| as_text(&p.value) == t)
                    .map(|p| p.kind)
            };
            assert_eq!(kind("18446744073709551616"), Some(BreachKind::Unusual));
            assert_eq!(kind("-9223372036854775809"), Some(BreachKind::BelowMinimum));
        }
        let json = probes(&api, &prop(&api, "offset"), Place::Json, &mut rng);
        let body = json!({"offset": json.iter().find(|p| as_text(&p.value) == "100000000000000000000").unwrap().value});
        assert_eq!(json_text(&body), r#"{"offset":100000000000000000000}"#);
        let ratio = Schema {
            types: vec![SchemaType::Number],
            ..Schema::default()
        };
        let ratio = probes(&api, &ratio, Place::Json, &mut rng);
        let texts: Vec<String> = ratio.iter().map(|p| json_text(&p.value)).collect();
        assert!(texts.contains(&"1e400".to_string()), "{texts:?}");
        assert!(texts.contains(&"-1e400".to_string()), "{texts:?}");
        let long = Schema {
            types: vec![SchemaType::Integer],
            format: Some("int64".into()),
            ..Schema::default()
        };
        assert_eq!(
            breaks(
                &api,
                &long,
                &crate::execution::wire::exact_number("18446744073709551616").unwrap(),
                Place::Json
            ),
            Some(BreachKind::MalformedFormat)
        );
    }

    #[test]
    fn a_null_branch_allows_null_and_matching_strings_match() {
        let api = api();
        let parent = prop(&api, "parent");
        assert_eq!(breaks(&api, &parent, &Value::Null, Place::Json), None);
        assert_eq!(breaks(&api, &parent, &json!(3), Place::Json), None);
        assert_eq!(
            breaks(&api, &parent, &json!("x"), Place::Json),
            Some(BreachKind::WrongType)
        );
        let mut rng = Rng64::seed_from_u64(3);
        for _ in 0..20 {
            let s = whole_match("^\"[0-9]+\"$", &mut rng).unwrap();
            assert_eq!(pattern_matches("^\"[0-9]+\"$", &s), Some(true), "{s}");
        }
    }
}
