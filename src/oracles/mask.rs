//! Text from a server with the values in it hidden, so that one message
//! with different values is one message: a fault's signature, a cause's
//! key, a search target. Hidden are the values the request sent (wherever
//! they appear: servers echo them unquoted, `Contact abc wasn't found!`,
//! escaped for JSON, Python or HTML, or cut at a quote they hold, as an SQL
//! error quotes what follows it), quoted text (escapes and quotes inside
//! included), uuids, long hex runs and digits. A quoted name of the
//! server's code that the request did not send is kept: `reading 'owner'`
//! and `reading 'tags'` are two places in the server's code.

/// `text` with each occurrence of `value` that stands as a word of its own
/// replaced by the mask mark: a value sent is hidden where the message
/// quotes it, not inside a longer word (`restart` sent in a path leaves
/// "Exception restarting kernel" whole).
fn replace_whole(text: &str, value: &str) -> String {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let starts_word = word(value.chars().next());
    let ends_word = word(value.chars().next_back());
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(value) {
        let before = rest[..at]
            .chars()
            .next_back()
            .or_else(|| out.chars().next_back());
        let after = rest[at + value.len()..].chars().next();
        out.push_str(&rest[..at]);
        if (starts_word && word(before)) || (ends_word && word(after)) {
            out.push_str(value);
        } else {
            out.push('\u{1}');
        }
        rest = &rest[at + value.len()..];
    }
    out.push_str(rest);
    out
}

/// `text` with its values hidden: each of `sent` (strings of 3 characters
/// or more, numbers of 2 digits or more, in the forms servers echo them)
/// and quoted text become `…`, unless the quoted text names something in
/// the server's code (a property read, a key, a column) and the request
/// did not send it (`'owner'`); uuids become `<uuid>`, hex runs of 8 or more
/// `<hex>`, other digits `#`; white space is collapsed and the result cut
/// at `max` characters.
pub fn mask(text: &str, sent: &[&str], max: usize) -> String {
    let mut text = text.to_string();
    // A form longer than the text cannot be in it.
    let mut forms: Vec<String> = sent
        .iter()
        .flat_map(|v| echoed_forms(v))
        .filter(|v| v.len() <= text.len() && worth_hiding(v))
        .collect();
    // The longest first, so that a value holding another is hidden whole.
    forms.sort_by_key(|v| std::cmp::Reverse(v.len()));
    forms.dedup();
    for v in &forms {
        if text.contains(v.as_str()) {
            text = replace_whole(&text, v);
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
            let inside: String = chars[i + 1..end].iter().collect();
            let closed = end > i && chars[end] == closing(c);
            out.push(c);
            if closed && is_name(&inside) && names_code(&chars, i, end) && !was_sent(&inside, sent)
            {
                // A name the server's code holds (a property, a key, a
                // column): it tells one failure from another.
                out.push_str(&inside);
            } else {
                out.push('…');
            }
            out.push(closing(c));
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
    let mut out = out.trim_end().to_string();
    if chars[i.min(chars.len())..]
        .iter()
        .any(|c| !c.is_whitespace())
    {
        // Cut at `max`: back to the last word's end, so that no value is
        // cut in half (`ParseIntError { kind: InvalidDigit`), and say so.
        if chars.get(i).is_some_and(|c| !c.is_whitespace())
            && let Some(space) = out.rfind(' ')
        {
            out.truncate(space);
        }
        out.push_str(" …");
    }
    out
}

/// The forms a server may echo a sent value in: as sent, escaped inside a
/// JSON or a Python string, escaped for HTML, percent-encoded, and each
/// piece between the quotes it holds (an SQL error quotes the text after
/// the quote that broke the statement: `near "b": syntax error`).
fn echoed_forms(v: &str) -> Vec<String> {
    let mut out = vec![v.to_string()];
    // Only a value with characters an encoding changes has other forms.
    if v.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
    {
        return out;
    }
    if v.contains(['"', '\\']) || v.chars().any(char::is_control) {
        let json = serde_json::to_string(v).unwrap_or_default();
        out.extend(
            json.get(1..json.len().saturating_sub(1))
                .map(str::to_string),
        );
    }
    if v.contains(['\'', '\\']) {
        out.push(v.replace('\\', "\\\\").replace('\'', "\\'"));
    }
    if v.contains(['&', '<', '>', '"', '\'']) {
        for apostrophe in ["&#39;", "&#x27;", "&apos;"] {
            out.push(
                v.replace('&', "&amp;")
                    .replace('<', "&lt;")
                    .replace('>', "&gt;")
                    .replace('"', "&quot;")
                    .replace('\'', apostrophe),
            );
        }
    }
    out.push(
        percent_encoding::utf8_percent_encode(v, percent_encoding::NON_ALPHANUMERIC).to_string(),
    );
    if v.contains(['\'', '"']) {
        out.extend(
            v.split(['\'', '"'])
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_string),
        );
    }
    out.retain(|f| !f.is_empty());
    out.sort_unstable();
    out.dedup();
    out
}

/// The quote that closes one opening with `q`.
fn closing(q: char) -> char {
    if q == '“' { '”' } else { q }
}

/// Whether quoted text is a name as code writes it (`owner`, `user_id`,
/// `Book.author`, `NoneType`): a letter or `_` first, then letters,
/// digits, `_` and single dots, at most 64 characters.
fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.len() <= 64
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        && !s.contains("..")
        && !s.ends_with('.')
}

/// Words before a quoted name that say it names something in the server's
/// code, not its data: `reading 'owner'`, `KeyError: 'tags'`, `column
/// "email"`, `attribute 'get'`.
const CODE_WORDS: &[&str] = &[
    "reading",
    "property",
    "properties",
    "prop",
    "attribute",
    "field",
    "column",
    "key",
    "keyerror",
    "member",
    "method",
    "function",
    "variable",
    "relation",
    "table",
    "constraint",
    "module",
    "type",
    "index",
    "parameter",
    "argument",
];

/// Words after a quoted name that say the same (`'NoneType' object`,
/// `'fetch' is not defined`).
const CODE_AFTER: &[&str] = &[
    " object",
    " is not defined",
    " is not a function",
    " has no attribute",
    " of undefined",
    " of null",
];

/// Whether the quote from `open` to `close` in `chars` names something in
/// the server's code, by the word before it or the words after it: a name
/// in a server's data (`book 'Dune' has loans`) is a value like any other.
fn names_code(chars: &[char], open: usize, close: usize) -> bool {
    let before: String = chars[..open].iter().collect();
    let before = before.trim_end().trim_end_matches(':').trim_end();
    let word: String = before
        .chars()
        .rev()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect::<Vec<char>>()
        .into_iter()
        .rev()
        .collect();
    if CODE_WORDS.contains(&word.to_lowercase().as_str()) {
        return true;
    }
    let after: String = chars[close + 1..].iter().take(24).collect();
    CODE_AFTER.iter().any(|w| after.starts_with(w))
}

/// Whether `name` is a value the request sent, or a word of one: a server
/// quoting a piece of a value still quotes the request.
fn was_sent(name: &str, sent: &[&str]) -> bool {
    sent.iter().any(|v| {
        *v == name
            || v.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
                .any(|w| w == name)
    })
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
    let close = closing(q);
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
    fn a_value_sent_is_hidden_as_a_word_not_inside_one() {
        // POST /api/kernels/{id}/restart: every segment of the path was sent.
        let sent = ["api", "kernels", "3f2a9c", "restart"];
        assert_eq!(
            mask("Exception restarting kernel", &sent, 60),
            "Exception restarting kernel"
        );
        assert_eq!(
            mask("no kernel restart for 3f2a9c", &sent, 60),
            "no kernel … for …"
        );
    }

    #[test]
    fn one_message_with_other_values_is_one_message() {
        let m = |t: &str| mask(t, &[], 80);
        assert_eq!(
            m("invalid id \"9yzWPJ1y\""),
            mask("invalid id \"abc\"", &["abc"], 80)
        );
        assert_eq!(m("no book 42"), "no book #");
        // Quotes inside a value, escaped or not, do not leak the rest.
        assert_eq!(
            m(r#"name "a \"b\" c" is taken"#),
            m(r#"name "x y" is taken"#)
        );
        assert_eq!(
            m("user 'O'Brien' exists"),
            mask("user 'Smith' exists", &["Smith"], 80)
        );
        assert_eq!(
            m("run 0b5c2c1e-3f5a-4b7e-9c1d-2e4f6a8b0c1d failed"),
            "run <uuid> failed"
        );
        assert_eq!(m("hash 3f5a4b7e9c1d2e4f is stale"), "hash <hex> is stale");
        assert_eq!(m("wasn't found"), "wasn't found");
    }

    #[test]
    fn a_long_message_is_cut_between_words_and_says_so() {
        let text =
            "called `Result::unwrap()` on an `Err` value: ParseIntError { kind: InvalidDigit }";
        let cut = mask(text, &[], 80);
        assert!(cut.ends_with("kind: …"), "{cut}");
        assert!(!cut.contains("InvalidDig"), "{cut}");
        // A message that fits is whole, with no mark.
        assert_eq!(mask("no book 42", &[], 80), "no book #");
        assert_eq!(mask("no book 42   ", &[], 80), "no book #");
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
    fn names_the_request_did_not_send_are_kept() {
        // Node.js: which property was read is where the code broke.
        let node = |p: &str| {
            mask(
                &format!("Cannot read properties of undefined (reading '{p}')"),
                &["books", "dtE", "12"],
                120,
            )
        };
        assert_eq!(
            node("owner"),
            "Cannot read properties of undefined (reading 'owner')"
        );
        assert_ne!(node("owner"), node("tags"));
        // Python: a KeyError names the key, an AttributeError the type.
        assert_ne!(
            mask("KeyError: 'owner'", &[], 80),
            mask("KeyError: 'tags'", &[], 80)
        );
        assert_eq!(
            mask("'NoneType' object has no attribute 'name'", &[], 80),
            "'NoneType' object has no attribute 'name'"
        );
        // The same words quoting what the request sent are one message.
        assert_eq!(
            mask("KeyError: 'zQx'", &["zQx"], 80),
            mask("KeyError: 'abc'", &["abc"], 80)
        );
    }

    #[test]
    fn names_in_a_servers_data_are_values() {
        // A title the request did not send, quoted in an answer, is the
        // server's data: one message whatever the book.
        assert_eq!(
            mask("book 'Dune' has loans", &[], 80),
            mask("book 'Emma' has loans", &[], 80)
        );
        // The column a constraint names is the server's code.
        assert_ne!(
            mask(
                r#"null value in column "email" violates not-null constraint"#,
                &[],
                80
            ),
            mask(
                r#"null value in column "phone" violates not-null constraint"#,
                &[],
                80
            )
        );
    }

    #[test]
    fn values_holding_quotes_are_hidden_in_every_form_servers_echo() {
        let pairs: [(&str, &str, &str, &str); 5] = [
            // graphql-js prints the literal JSON-escaped.
            (
                r#"Expected value of type "Int", found "a\"b"."#,
                "a\"b",
                r#"Expected value of type "Int", found "zz9"."#,
                "zz9",
            ),
            // pydantic quotes with Python's repr: \' inside '…'.
            (
                r#"Input should be a valid integer [type=int_parsing, input_value='it\'s "x"', input_type=str]"#,
                r#"it's "x""#,
                "Input should be a valid integer [type=int_parsing, input_value='abc', input_type=str]",
                "abc",
            ),
            // SQLite quotes the text after the quote that broke the statement.
            (
                r#"near "Brien": syntax error"#,
                "O'Brien",
                r#"near "tag": syntax error"#,
                "x'tag",
            ),
            // An HTML error page escapes it.
            (
                "<p>No user &#39;O&#39;Neil&#39;</p>",
                "O'Neil",
                "<p>No user &#39;Smith&#39;</p>",
                "Smith",
            ),
            // Percent-encoded in a path echoed back.
            (
                "No route for /items/a%27b%20c",
                "a'b c",
                "No route for /items/qwe",
                "qwe",
            ),
        ];
        for (a, va, b, vb) in pairs {
            assert_eq!(mask(a, &[va], 120), mask(b, &[vb], 120), "{a} / {b}");
        }
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
