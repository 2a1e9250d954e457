//! Text from a server with the values in it hidden, so that one message
//! with different values is one message: a fault's signature, a cause's
//! key, a search target. Hidden are the values the request sent (wherever
//! they appear: servers echo them unquoted, `Contact abc wasn't found!`),
//! quoted text (escapes and quotes inside included), uuids, long hex runs
//! and digits.

/// `text` with its values hidden: each of `sent` (strings of 3 characters
/// or more, numbers of 2 digits or more) and quoted text become `…`,
/// uuids `<uuid>`, hex runs of 8 or more `<hex>`, other digits `#`; white
/// space is collapsed and the result cut at `max` characters.
pub fn mask(text: &str, sent: &[&str], max: usize) -> String {
    let mut text = text.to_string();
    let mut sent: Vec<&str> = sent.iter().copied().filter(|v| worth_hiding(v)).collect();
    // The longest first, so that a value holding another is hidden whole.
    sent.sort_by_key(|v| std::cmp::Reverse(v.len()));
    sent.dedup();
    for v in sent {
        if text.contains(v) {
            text = text.replace(v, "\u{1}");
        }
    }
    let mut out = String::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() && out.chars().count() < max {
        let c = chars[i];
        if c == '\u{1}' {
            out.push('…');
            i += 1;
        } else if let Some(end) = quoted(&chars, i) {
            out.push(c);
            out.push('…');
            out.push(c);
            i = end + 1;
        } else if let Some(end) = uuid_at(&chars, i) {
            out.push_str("<uuid>");
            i = end;
        } else if let Some(end) = hex_at(&chars, i) {
            out.push_str("<hex>");
            i = end;
        } else if c.is_ascii_digit() {
            out.push('#');
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
        } else if c.is_whitespace() {
            if !out.ends_with(' ') && !out.is_empty() {
                out.push(' ');
            }
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out.trim_end().to_string()
}

/// Whether a sent value is distinctive enough to hide wherever it appears
/// (a one-letter value or a single digit would hide ordinary text).
fn worth_hiding(v: &str) -> bool {
    let v = v.trim();
    if v.parse::<f64>().is_ok() {
        v.chars().filter(|c| c.is_ascii_digit()).count() >= 2
    } else {
        v.chars().count() >= 3
    }
}

/// The index of the quote closing the one opening at `i`, when `chars[i]`
/// opens a quote: `"` anywhere, `'` only at the start of a word (so
/// `wasn't` is no quote); backticks quote code (`Result::unwrap()`), not
/// values. Backslash escapes inside are skipped; an unclosed quote runs to
/// the end.
fn quoted(chars: &[char], i: usize) -> Option<usize> {
    let q = chars[i];
    let opens = match q {
        '"' | '“' => true,
        '\'' => i == 0 || !chars[i - 1].is_alphanumeric(),
        _ => false,
    };
    if !opens {
        return None;
    }
    let close = if q == '“' { '”' } else { q };
    let mut k = i + 1;
    while k < chars.len() {
        match chars[k] {
            '\\' => k += 2,
            c if c == close => {
                // A single quote closes only at the end of a word (`'O'Brien'`).
                let ends_word =
                    close != '\'' || chars.get(k + 1).is_none_or(|n| !n.is_alphanumeric());
                if ends_word {
                    return Some(k);
                }
                k += 1;
            }
            _ => k += 1,
        }
    }
    Some(chars.len().saturating_sub(1))
}

/// The end of a uuid starting at `i` (8-4-4-4-12 hex digits).
fn uuid_at(chars: &[char], i: usize) -> Option<usize> {
    if i > 0 && chars[i - 1].is_ascii_alphanumeric() {
        return None;
    }
    let mut k = i;
    for (n, len) in [8, 4, 4, 4, 12].into_iter().enumerate() {
        if n > 0 {
            if chars.get(k) != Some(&'-') {
                return None;
            }
            k += 1;
        }
        for _ in 0..len {
            if !chars.get(k)?.is_ascii_hexdigit() {
                return None;
            }
            k += 1;
        }
    }
    Some(k)
}

/// The end of a run of 8 or more hex digits (with at least one digit and
/// one letter: a word such as `deadbeef` alone is kept) starting at `i`.
fn hex_at(chars: &[char], i: usize) -> Option<usize> {
    if i > 0 && chars[i - 1].is_ascii_alphanumeric() {
        return None;
    }
    let end = chars[i..]
        .iter()
        .position(|c| !c.is_ascii_hexdigit())
        .map_or(chars.len(), |p| i + p);
    let run = &chars[i..end];
    let mixed = run.iter().any(char::is_ascii_digit) && run.iter().any(char::is_ascii_alphabetic);
    let whole = chars.get(end).is_none_or(|c| !c.is_ascii_alphanumeric());
    (run.len() >= 8 && mixed && whole).then_some(end)
}

/// The string and number leaves of a JSON value (the values a request sent),
/// at most `limit` of them.
pub fn leaves(value: &serde_json::Value, limit: usize, out: &mut Vec<String>) {
    if out.len() >= limit {
        return;
    }
    match value {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Number(n) => out.push(n.to_string()),
        serde_json::Value::Array(items) => items.iter().for_each(|i| leaves(i, limit, out)),
        serde_json::Value::Object(map) => map.values().for_each(|i| leaves(i, limit, out)),
        _ => {}
    }
}

/// The values a request sent: its query parameters' and path's segments
/// (decoded) and its JSON body's leaves.
pub fn sent_values(request: &crate::execution::RequestSpec) -> Vec<String> {
    let mut out = Vec::new();
    let (path, query) = request
        .path
        .split_once('?')
        .unwrap_or((request.path.as_str(), ""));
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(&s.replace('+', " "))
            .decode_utf8_lossy()
            .into_owned()
    };
    for segment in path.split('/').filter(|s| !s.is_empty()) {
        out.push(decode(segment));
    }
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        if let Some((_, v)) = pair.split_once('=') {
            out.push(decode(v));
        }
    }
    for (_, v) in &request.headers {
        out.push(v.clone());
    }
    if let Some(body) = &request.body {
        match serde_json::from_str::<serde_json::Value>(body) {
            Ok(v) => leaves(&v, 64, &mut out),
            Err(_) => out.push(body.clone()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_message_with_other_values_is_one_message() {
        let m = |t: &str| mask(t, &[], 80);
        assert_eq!(m("invalid id \"9yzWPJ1y\""), m("invalid id \"abc\""));
        assert_eq!(m("no book 42"), "no book #");
        // Quotes inside a value, escaped or not, do not leak the rest.
        assert_eq!(m(r#"name "a \"b\" c" is taken"#), m(r#"name "x" is taken"#));
        assert_eq!(m("user 'O'Brien' exists"), m("user 'Smith' exists"));
        assert_eq!(
            m("run 0b5c2c1e-3f5a-4b7e-9c1d-2e4f6a8b0c1d failed"),
            "run <uuid> failed"
        );
        assert_eq!(m("hash 3f5a4b7e9c1d2e4f is stale"), "hash <hex> is stale");
        assert_eq!(m("wasn't found"), "wasn't found");
    }

    #[test]
    fn values_the_request_sent_are_hidden_even_unquoted() {
        let a = mask("Contact dtE wasn't found!", &["dtE"], 80);
        let b = mask("Contact zz9Q wasn't found!", &["zz9Q"], 80);
        assert_eq!(a, b);
        assert_eq!(a, "Contact … wasn't found!");
        // Short values would hide ordinary words.
        assert_eq!(mask("a b", &["a"], 80), "a b");
    }

    #[test]
    fn sent_values_come_from_path_query_headers_and_body() {
        let request = crate::execution::RequestSpec {
            path: "/zones/ex%20ample.?limit=10".into(),
            headers: vec![("X-Version".into(), "v9".into())],
            body: Some(r#"{"name":"dtE","n":[12]}"#.into()),
            ..Default::default()
        };
        let v = sent_values(&request);
        for want in ["zones", "ex ample.", "10", "v9", "dtE", "12"] {
            assert!(v.iter().any(|s| s == want), "{want} in {v:?}");
        }
    }
}
