//! Response conformance beyond the body's shape: is the status documented for
//! the operation, and is the body of a documented media type (and not an HTML
//! page where JSON was promised)?

use crate::execution::Exchange;
use crate::model::{Operation, Response};

/// The response entry documenting `status`: the exact code, else its range
/// (`4XX`), else `default`.
pub fn documented(op: &Operation, status: u16) -> Option<&Response> {
    // Every answer asks: the status's digits are compared, not formatted.
    let mut first = status;
    while first >= 10 {
        first /= 10;
    }
    let range = |k: &str| {
        k.len() == 3 && k.as_bytes()[0] == b'0' + first as u8 && k[1..].eq_ignore_ascii_case("XX")
    };
    op.responses
        .iter()
        .find(|(k, _)| is_code(k, status))
        .or_else(|| op.responses.iter().find(|(k, _)| range(k)))
        .map(|(_, r)| r)
        .or_else(|| {
            op.responses
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("default"))
                .map(|(_, r)| r)
        })
}

/// Whether a response key is `status` written out in decimal (`"200"`).
pub fn is_code(key: &str, status: u16) -> bool {
    !key.is_empty()
        && key.len() <= 5
        && key.bytes().all(|b| b.is_ascii_digit())
        && !(key.len() > 1 && key.starts_with('0'))
        && key.parse::<u16>() == Ok(status)
}

/// A media type without parameters, lower-cased (`application/json`).
pub fn essence(media: &str) -> String {
    essence_of(media).into_owned()
}

/// [`essence`] without a copy when the media type is lower-case already
/// (nearly always): every answer's is read.
pub fn essence_of(media: &str) -> std::borrow::Cow<'_, str> {
    let e = media.split(';').next().unwrap_or("").trim();
    if e.bytes().any(|b| b.is_ascii_uppercase()) {
        e.to_ascii_lowercase().into()
    } else {
        e.into()
    }
}

/// Whether a media type's essence is JSON (`application/json`, `…+json`).
pub fn is_json(essence: &str) -> bool {
    essence.ends_with("/json") || essence.ends_with("+json")
}

/// Whether a whole body parses as JSON, a leading byte order mark allowed
/// (RFC 8259 lets parsers ignore it) and nesting as deep as it goes.
pub fn parses_as_json(body: &str) -> bool {
    let text = body.trim_start_matches('\u{feff}');
    let mut de = serde_json::Deserializer::from_str(text);
    match <serde::de::IgnoredAny as serde::Deserialize>::deserialize(&mut de).and_then(|_| de.end())
    {
        Ok(()) => true,
        // Nesting past serde_json's limit is no proof the text is not JSON:
        // judged by its brackets alone.
        Err(e) if e.classify() == serde_json::error::Category::Syntax && deep(text) => true,
        Err(_) => false,
    }
}

/// Whether `text` nests brackets deeper than serde_json follows (128).
fn deep(text: &str) -> bool {
    let (mut depth, mut max, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for c in text.chars() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '[' | '{' => {
                depth += 1;
                max = max.max(depth);
            }
            ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max > 127
}

/// Whether a response of media type `actual` is one the description's
/// `documented` key allows: equal, a wildcard that covers it, or both JSON
/// (`application/json` for `application/problem+json` and the reverse,
/// because servers and descriptions disagree on that in good faith).
pub fn media_matches(documented: &str, actual: &str) -> bool {
    let (d, a) = (essence_of(documented), essence_of(actual));
    if d == a || d == "*/*" || d.is_empty() {
        return true;
    }
    if let Some(prefix) = d.strip_suffix("/*")
        && a.split('/').next() == Some(prefix)
    {
        return true;
    }
    is_json(&d) && is_json(&a)
}

/// Whether a body looks like an HTML page.
fn looks_like_html(body: &str) -> bool {
    let start: String = body
        .trim_start()
        .chars()
        .take(15)
        .collect::<String>()
        .to_ascii_lowercase();
    start.starts_with("<!doctype html") || start.starts_with("<html")
}

/// How the media type of an answer misses the documented ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MediaGap {
    /// JSON was documented and an HTML page came (what it says).
    Html(String),
    /// The body's type is not among the documented ones (what it says, and
    /// the type that came).
    Other(String, String),
}

/// The media-type gap of one answer below 500 (`html_instead_of_json`,
/// `content_type_mismatch` judge it). Silent when the response documents no
/// content (a body the spec does not describe is not a violation), when the
/// body is empty, or when there is no `Content-Type`.
pub fn media_finding(op: &Operation, ex: &Exchange) -> Option<MediaGap> {
    let status = ex.status?;
    let response = documented(op, status)?;
    if response.content.is_empty() || ex.body.trim().is_empty() {
        return None;
    }
    let json_documented = response.content.keys().any(|k| is_json(&essence_of(k)));
    // Named beside JSON (`text/html` or `text/*`, not `*/*`): the page is documented.
    let html_documented = response
        .content
        .keys()
        .any(|k| essence_of(k) != "*/*" && media_matches(k, "text/html"));
    let actual = ex.header("content-type").map(essence_of);
    if json_documented
        && !html_documented
        && (actual.as_deref() == Some("text/html")
            || (actual.is_none() && looks_like_html(&ex.body)))
    {
        return Some(MediaGap::Html(format!(
            "status {status} came as an HTML page where JSON is documented"
        )));
    }
    let actual = actual?;
    if response.content.keys().any(|k| media_matches(k, &actual)) {
        return None;
    }
    let listed: Vec<&str> = response.content.keys().map(String::as_str).collect();
    Some(MediaGap::Other(
        format!(
            "status {status} came as {actual} (documented: {})",
            listed.join(", ")
        ),
        actual.into_owned(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_match_with_wildcards_and_json_flavours() {
        assert!(media_matches(
            "application/json",
            "application/json; charset=utf-8"
        ));
        assert!(media_matches("application/*", "application/xml"));
        assert!(media_matches("*/*", "text/plain"));
        assert!(media_matches(
            "application/json",
            "application/problem+json"
        ));
        assert!(!media_matches("application/json", "text/plain"));
        assert!(!media_matches("application/xml", "application/json"));
    }

    #[test]
    fn an_html_page_is_no_fault_where_html_is_documented_beside_json() {
        let response = |keys: &[&str]| Response {
            description: String::new(),
            content: keys
                .iter()
                .map(|k| (k.to_string(), crate::model::Schema::default()))
                .collect(),
            headers: Default::default(),
            links: Vec::new(),
        };
        let op = |keys: &[&str]| Operation {
            name: "getPage".into(),
            operation_id: None,
            method: crate::model::Method::Get,
            path: "/page".into(),
            summary: None,
            tags: Vec::new(),
            deprecated: false,
            parameters: Vec::new(),
            request_body: None,
            responses: [("200".to_string(), response(keys))].into_iter().collect(),
            pointer: String::new(),
            security: Default::default(),
        };
        let page = |ct: Option<&str>| Exchange {
            status: Some(200),
            headers: ct
                .map(|c| vec![("content-type".to_string(), c.to_string())])
                .unwrap_or_default(),
            body: "<!DOCTYPE html><p>hi</p>".into(),
            ..Default::default()
        };
        let code = |keys: &[&str], ct| {
            media_finding(&op(keys), &page(ct)).map(|gap| match gap {
                MediaGap::Html(_) => "html_instead_of_json",
                MediaGap::Other(..) => "content_type_mismatch",
            })
        };
        assert_eq!(
            code(&["application/json"], Some("text/html")),
            Some("html_instead_of_json")
        );
        assert_eq!(
            code(&["application/json"], None),
            Some("html_instead_of_json")
        );
        assert_eq!(
            code(&["application/json", "*/*"], Some("text/html")),
            Some("html_instead_of_json")
        );
        for documented in [
            ["application/json", "text/html"],
            ["application/json", "text/*"],
        ] {
            assert_eq!(code(&documented, Some("text/html; charset=utf-8")), None);
            assert_eq!(code(&documented, None), None);
        }
    }
}
