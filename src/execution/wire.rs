//! How values travel on the wire: a JSON value as text in a path, query or
//! header, percent-encoded path segments, and reading the id and the
//! target-relative path a `Location` header gives.

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde_json::Value;

/// Characters left as they are in a path segment (RFC 3986 unreserved).
pub const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A value as it travels in a path, query or header: strings bare, the rest as JSON.
pub fn as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
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
