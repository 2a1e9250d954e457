//! What counts as a new error message for the search: the wording a server
//! uses, with what the request itself put into it masked out. A message
//! that repeats the input ("Contact Jane wasn't found!") would otherwise be
//! a new target for every value sent, and the archive would pour the budget
//! into the one operation that echoes it.

use serde_json::Value;

use crate::execution::RequestSpec;

/// Sent values shorter than this are masked only where they stand as a
/// whole word: a one- or two-letter value is in every sentence.
const SHORT: usize = 4;

/// The wording of `message` as a search target: each value `request` sent
/// (strings and numbers of its JSON body, GraphQL variables included, path
/// segments, query values) replaced by `…`, then ids (uuids, long hex,
/// words mixing letters and digits), numbers and quoted text masked, cut
/// at 60 characters.
pub fn message_target(message: &str, request: &RequestSpec) -> String {
    let mut sent: Vec<String> = Vec::new();
    if let Some(body) = request
        .body
        .as_deref()
        .and_then(|b| serde_json::from_str::<Value>(b).ok())
    {
        // A GraphQL request's own query text is not a value it sent.
        let values = body.get("variables").unwrap_or(&body);
        crate::oracles::mask::leaves(values, 64, &mut sent);
    }
    let (path, query) = request.path.split_once('?').unwrap_or((&request.path, ""));
    for seg in path.split('/').filter(|s| !s.is_empty()) {
        sent.push(
            percent_encoding::percent_decode_str(&seg.replace('+', " "))
                .decode_utf8_lossy()
                .into_owned(),
        );
    }
    for (_, v) in url::form_urlencoded::parse(query.as_bytes()) {
        sent.push(v.into_owned());
    }
    sent.retain(|v| !v.trim().is_empty());
    // Longest first, so that a value holding another is masked whole.
    sent.sort_by_key(|v| std::cmp::Reverse(v.len()));
    sent.dedup();
    let mut text = message.to_string();
    for v in &sent {
        if v.chars().count() >= SHORT {
            text = text.replace(v.as_str(), "…");
        } else {
            text = replace_word(&text, v);
        }
    }
    let masked: Vec<String> = text
        .split(' ')
        .map(|w| {
            if is_id_like(w) {
                "…".to_string()
            } else {
                w.to_string()
            }
        })
        .collect();
    wording(&masked.join(" "))
}

/// Digits as `#`, quoted text as `"…"` (a quote opens only at the start of
/// a word: the apostrophe of "wasn't" is no quote), the first 60 characters.
fn wording(msg: &str) -> String {
    let mut out = String::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut prev: Option<char> = None;
    for c in msg.chars() {
        match quote {
            Some(_) if escaped => escaped = false,
            Some(_) if c == '\\' => escaped = true,
            Some(q) if c == q => {
                out.push('…');
                out.push(c);
                quote = None;
            }
            Some(_) => {}
            None if matches!(c, '"' | '\'' | '`') && !prev.is_some_and(char::is_alphanumeric) => {
                out.push(c);
                quote = Some(c);
            }
            None if c.is_ascii_digit() => out.push('#'),
            None => out.push(c),
        }
        prev = Some(c);
        if out.chars().count() >= 60 {
            break;
        }
    }
    out
}

/// `text` with `word` masked where it stands alone (not inside a longer word).
fn replace_word(text: &str, word: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + word.len()..].chars().next();
        let alone =
            !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric);
        out.push_str(&rest[..at]);
        out.push_str(if alone { "…" } else { word });
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

/// A word that looks like an id rather than a word of the message: a uuid,
/// long hex, or letters mixed with digits (`9yzWPJ1y`, `b12x7`).
fn is_id_like(word: &str) -> bool {
    let w = word.trim_matches(|c: char| !c.is_alphanumeric());
    let digits = w.chars().filter(char::is_ascii_digit).count();
    let letters = w.chars().filter(|c| c.is_alphabetic()).count();
    w.len() >= 4
        && digits > 0
        && letters > 0
        && w.chars()
            .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graphql(variables: Value) -> RequestSpec {
        RequestSpec {
            method: "POST".into(),
            path: "/graphql".into(),
            body: Some(
                serde_json::json!({"query": "query($name: String!) { contact(name: $name) { id } }", "variables": variables})
                    .to_string(),
            ),
            ..Default::default()
        }
    }

    #[test]
    fn a_message_that_repeats_the_input_is_one_target() {
        let a = message_target(
            "Contact Jane Doe wasn't found!",
            &graphql(serde_json::json!({"name": "Jane Doe"})),
        );
        let b = message_target(
            "Contact xq wasn't found!",
            &graphql(serde_json::json!({"name": "xq"})),
        );
        let c = message_target(
            "Contact 9yzWPJ1y wasn't found!",
            &graphql(serde_json::json!({"name": "other"})),
        );
        assert_eq!(a, b);
        assert_eq!(
            a, c,
            "an id-like word the request did not send is masked too"
        );
        assert_eq!(a, "Contact … wasn't found!");
        // A short value inside a word of the message is left alone.
        let d = message_target(
            "Contact is missing",
            &graphql(serde_json::json!({"name": "is"})),
        );
        assert_eq!(d, "Contact … missing");
        let e = message_target(
            "Contact missing",
            &graphql(serde_json::json!({"name": "is"})),
        );
        assert_eq!(e, "Contact missing");
        // Different wordings stay apart, and so do REST paths' echoes.
        assert_ne!(
            a,
            message_target(
                "Event Jane Doe wasn't found!",
                &graphql(serde_json::json!({"name": "Jane Doe"}))
            )
        );
        let rest = RequestSpec {
            path: "/zones/example.org.?kind=Native".into(),
            ..Default::default()
        };
        assert_eq!(
            message_target("zone example.org. of kind Native not found", &rest),
            "zone … of kind … not found"
        );
    }
}
