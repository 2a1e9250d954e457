//! How values travel on the wire: a JSON value as text in a path, query or
//! header, as JSON text (numbers past 64 bits and past the double range kept
//! exactly), percent-encoded path segments, and reading the id and the
//! target-relative path a `Location` header gives.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::Value;

/// Characters left as they are in a path segment (RFC 3986 unreserved).
pub const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A value as it travels in a path, query or header: strings bare, the rest as JSON.
pub fn text_of(v: &Value) -> std::borrow::Cow<'_, str> {
    match v {
        Value::String(s) => std::borrow::Cow::Borrowed(s.strip_prefix(NUMBER_MARK).unwrap_or(s)),
        other => std::borrow::Cow::Owned(json_text(other)),
    }
}

/// [`text_of`], owned.
pub fn as_text(v: &Value) -> String {
    text_of(v).into_owned()
}

/// What a string starts with when it stands for a JSON number that
/// `serde_json::Value` cannot hold as written (2^64, 10^20, 1e400): without
/// serde_json's `arbitrary_precision` (which async-graphql, in this very
/// binary, cannot read variables under) such numbers would be rounded
/// through `f64`. Only [`exact_number`] makes these strings, and every way a
/// value leaves the tool ([`as_text`], [`json_text`]) writes the number.
const NUMBER_MARK: &str = "\u{0}json-number:";

/// The mark as `serde_json` writes it inside a JSON string, quote included.
const NUMBER_MARK_JSON: &str = "\"\\u0000json-number:";

/// A number kept exactly as `text` (JSON number syntax) on the wire; `None`
/// when `text` is not a JSON number.
pub fn exact_number(text: &str) -> Option<Value> {
    is_json_number(text).then(|| Value::String(format!("{NUMBER_MARK}{text}")))
}

/// The text of a number made by [`exact_number`].
pub fn number_text(v: &Value) -> Option<&str> {
    v.as_str()?.strip_prefix(NUMBER_MARK)
}

/// A value as JSON text, with the numbers [`exact_number`] made written as
/// numbers, digit for digit.
pub fn json_text(v: &Value) -> String {
    exact_numbers_written(v.to_string())
}

/// JSON `text` (compact or pretty) with the numbers [`exact_number`] made
/// written as numbers.
pub fn exact_numbers_written(text: String) -> String {
    if !text.contains(NUMBER_MARK_JSON) {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find(NUMBER_MARK_JSON) {
        let after = &rest[at + NUMBER_MARK_JSON.len()..];
        let number = after
            .find('"')
            .map(|end| (&after[..end], &after[end + 1..]));
        match number {
            // A marked object key stays a string: keys cannot be numbers.
            Some((digits, tail)) if is_json_number(digits) && !tail.starts_with(':') => {
                out.push_str(&rest[..at]);
                out.push_str(digits);
                rest = tail;
            }
            _ => {
                out.push_str(&rest[..at + NUMBER_MARK_JSON.len()]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// JSON text read as a value, keeping exactly (as [`exact_number`] does) the
/// numbers `f64` and 64-bit integers cannot hold: integers past 64 bits,
/// and numbers past the double range (or below its smallest step), so that
/// a body read back and written again sends what was sent.
pub fn parse_json_exact(text: &str) -> serde_json::Result<Value> {
    let bytes = text.as_bytes();
    let mut marked: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        if b == b'"' {
            in_string = true;
            i += 1;
            continue;
        }
        if b == b'-' || b.is_ascii_digit() {
            let start = i;
            while i < bytes.len()
                && matches!(bytes[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
            {
                i += 1;
            }
            let token = &text[start..i];
            if !fits_value(token) && is_json_number(token) {
                let out = marked.get_or_insert_with(|| String::with_capacity(text.len() + 32));
                out.push_str(&text[copied..start]);
                out.push_str(NUMBER_MARK_JSON);
                out.push_str(token);
                out.push('"');
                copied = i;
            }
            continue;
        }
        i += 1;
    }
    match marked {
        None => serde_json::from_str(text),
        Some(mut out) => {
            out.push_str(&text[copied..]);
            serde_json::from_str(&out)
        }
    }
}

/// Whether `serde_json::Value` holds the number `token` without changing it
/// past recognition: a 64-bit integer, or a finite double that is not a
/// rounded-away non-zero.
fn fits_value(token: &str) -> bool {
    if token.parse::<i64>().is_ok() || token.parse::<u64>().is_ok() {
        return true;
    }
    if !token.contains(['.', 'e', 'E']) {
        // An integer past 64 bits.
        return false;
    }
    let Ok(x) = token.parse::<f64>() else {
        return false;
    };
    let mantissa = token.split(['e', 'E']).next().unwrap_or("");
    let non_zero = mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b));
    x.is_finite() && (x != 0.0 || !non_zero)
}

/// Whether `text` is a JSON number: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
fn is_json_number(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if b.first() == Some(&b'-') {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            digits(&mut i);
        }
        _ => return false,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// A value as it travels in one path segment, percent-encoded.
pub fn encode_segment(v: &Value) -> String {
    utf8_percent_encode(&as_text(v), SEGMENT).to_string()
}

/// The id a JSON answer gives the resource it is about: its `id`, or, in an
/// envelope with no `id` of its own (JSON:API, Kinto: `{"data": {"id": …}}`),
/// its `data`'s. Only a scalar is an id.
pub fn body_id(body: &Value) -> Option<&Value> {
    let id = match body.get("id") {
        Some(id) => id,
        None => body.get("data").filter(|d| d.is_object())?.get("id")?,
    };
    matches!(id, Value::String(_) | Value::Number(_)).then_some(id)
}

/// The last segment of a `Location` header (relative or absolute), as a number
/// when it is one.
pub fn location_id(location: &str) -> Option<Value> {
    let id = location
        .split(['?', '#'])
        .next()
        .unwrap_or("")
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or("");
    if id.is_empty() || id.contains(':') {
        return None;
    }
    let id = percent_encoding::percent_decode_str(id)
        .decode_utf8_lossy()
        .into_owned();
    Some(
        id.parse::<i64>()
            .map(Value::from)
            .unwrap_or(Value::String(id)),
    )
}

/// The path (and query) of `location` relative to the run's `target`, as a
/// request path: `Location: /api/v1/books/4` under target `http://h/api/v1`
/// is `/books/4`. None when it points to another origin or outside the
/// target's base path, where the run must not send requests.
pub fn target_relative(target: &url::Url, location: &str) -> Option<String> {
    let resolved = target.join(location.trim()).ok()?;
    if resolved.scheme() != target.scheme()
        || resolved.host_str() != target.host_str()
        || resolved.port_or_known_default() != target.port_or_known_default()
    {
        return None;
    }
    let base = target.path().trim_end_matches('/');
    let rest = resolved.path().strip_prefix(base)?;
    if !(rest.is_empty() || rest.starts_with('/')) {
        return None;
    }
    let mut path = if rest.is_empty() {
        "/".to_string()
    } else {
        rest.to_string()
    };
    if let Some(q) = resolved.query() {
        path.push('?');
        path.push_str(q);
    }
    Some(path)
}

/// How a concrete path (query ignored) fits a path template: the number of
/// literal segments it matched (`/users/me` fits `/users/me` with 2 and
/// `/users/{id}` with 1), or `None` when it does not fit.
pub fn template_fit(template: &str, path: &str) -> Option<usize> {
    let path = path.split(['?', '#']).next().unwrap_or("");
    let t: Vec<&str> = template.split('/').filter(|s| !s.is_empty()).collect();
    let p: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    if t.len() != p.len() {
        return None;
    }
    let mut literal = 0;
    for (want, got) in t.iter().zip(&p) {
        if want.starts_with('{') && want.ends_with('}') {
            continue;
        }
        if want != got {
            return None;
        }
        literal += 1;
    }
    Some(literal)
}

#[cfg(test)]
mod location_tests {
    use super::{body_id, location_id, target_relative};
    use serde_json::json;

    #[test]
    fn a_body_names_its_resource_by_id_or_by_its_envelopes_id() {
        assert_eq!(
            body_id(&json!({"id": 4, "data": {"id": 5}})),
            Some(&json!(4))
        );
        assert_eq!(body_id(&json!({"data": {"id": "b1"}})), Some(&json!("b1")));
        assert_eq!(body_id(&json!({"data": [{"id": 1}]})), None);
        assert_eq!(body_id(&json!({"id": {"nested": 1}})), None);
    }

    #[test]
    fn location_ids_are_the_last_segment() {
        assert_eq!(location_id("/authors/3"), Some(json!(3)));
        assert_eq!(location_id("http://h:1/a/b/x%20y/?q=1"), Some(json!("x y")));
        assert_eq!(location_id("http://h:1"), None);
    }

    #[test]
    fn locations_resolve_under_the_target_only() {
        let t = url::Url::parse("http://127.0.0.1:8080/api/v1").unwrap();
        assert_eq!(
            target_relative(&t, "/api/v1/books/4").as_deref(),
            Some("/books/4")
        );
        assert_eq!(
            target_relative(&t, "http://127.0.0.1:8080/api/v1/books/4?x=1").as_deref(),
            Some("/books/4?x=1")
        );
        assert_eq!(
            target_relative(&t, "http://example.com/api/v1/books/4"),
            None
        );
        assert_eq!(target_relative(&t, "/other/4"), None);
        let root = url::Url::parse("http://127.0.0.1:8080").unwrap();
        assert_eq!(
            target_relative(&root, "/reviews/2").as_deref(),
            Some("/reviews/2")
        );
    }
}

#[cfg(test)]
mod number_tests {
    use super::{as_text, exact_number, json_text, parse_json_exact};
    use serde_json::json;

    #[test]
    fn numbers_past_64_bits_and_the_double_range_travel_digit_for_digit() {
        let two64 = exact_number("18446744073709551616").unwrap();
        let huge = exact_number("-1e400").unwrap();
        assert_eq!(as_text(&two64), "18446744073709551616");
        let body = json!({"n": two64, "list": [huge, 1.5], "s": "x"});
        assert_eq!(
            json_text(&body),
            r#"{"n":18446744073709551616,"list":[-1e400,1.5],"s":"x"}"#
        );
        assert_eq!(exact_number("1e"), None);
        assert_eq!(exact_number("abc"), None);
        assert_eq!(exact_number("01"), None);
    }

    #[test]
    fn a_body_read_back_keeps_its_exact_numbers() {
        let text = r#"{"a":18446744073709551616,"s":"q\" 1e400 \\","b":[1e400,-9223372036854775809,1.5,7,0.0,1e-400],"c":-12}"#;
        let value = parse_json_exact(text).unwrap();
        assert_eq!(value["c"], json!(-12));
        assert_eq!(value["b"][2], json!(1.5));
        assert_eq!(json_text(&value), text);
        assert!(parse_json_exact("{\"a\": 1").is_err());
    }
}
