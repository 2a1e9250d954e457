//! Secrets the user gave (header values, the auth command's output, the
//! user and password of the target URL) and their removal from everything
//! written: every writer passes its text through [`Secrets::redact`], and
//! writers that record headers replace the values of credential headers by
//! [`PLACEHOLDER`] themselves.
//!
//! A secret of [`MIN_SECRET`] characters or more (or a whole header value
//! with a space in it) is replaced wherever it appears. A shorter one is
//! also an ordinary word (`token test`'s `test`), so it is replaced only
//! where it stands whole: a whole JSON string value, a whole header value,
//! a whole query parameter or form value, a whole quoted word or line; the
//! word inside other text stays. Each secret is also looked for as URLs and
//! JSON write it (percent-encoded, form-encoded, JSON-escaped), and as
//! base64, alone or inside a longer text a server encoded.

use std::borrow::Cow;
use std::sync::{Arc, RwLock};

/// What a secret is replaced by.
pub const PLACEHOLDER: &str = "[REDACTED]";

/// The shortest credential that is replaced wherever it appears: a shorter
/// one (`token test`'s `test`) is also an ordinary word, and replacing it
/// everywhere would rewrite `<testsuites>` and `jq 'test(…)'` instead of
/// hiding anything; it is replaced where it stands whole.
pub const MIN_SECRET: usize = 8;

/// The set of secret strings of a run, and the names of the headers that
/// carry them; cheap to clone and shared.
#[derive(Debug, Clone, Default)]
pub struct Secrets {
    /// Replaced wherever they appear, longest first.
    values: Arc<RwLock<Vec<String>>>,
    /// Replaced where they stand whole, longest first.
    whole: Arc<RwLock<Vec<String>>>,
    headers: Arc<RwLock<Vec<String>>>,
}

/// The ways a written file may spell `secret`: as it is, percent-encoded
/// (a path or query), form-encoded (a query or form body), JSON-escaped.
fn spellings(secret: &str) -> Vec<String> {
    let mut out = vec![secret.to_string()];
    let encoded = [
        percent_encoding::utf8_percent_encode(secret, super::wire::SEGMENT).to_string(),
        url::form_urlencoded::byte_serialize(secret.as_bytes()).collect(),
        serde_json::to_string(secret)
            .map(|q| q[1..q.len() - 1].to_string())
            .unwrap_or_default(),
    ];
    for e in encoded {
        if !e.is_empty() && !out.contains(&e) {
            out.push(e);
        }
    }
    out
}

/// The ways base64 may spell `secret` (the standard and the URL-safe
/// alphabets): the secret encoded alone, with and without padding, and, for
/// a secret inside a longer text that a server encoded whole (an echo of
/// the body as a `data:` URL), the run of characters its bytes always
/// become there, whichever of the three byte alignments it stands at. A run
/// shorter than [`MIN_SECRET`] is left out: it could be any text's.
fn base64_spellings(secret: &str) -> Vec<String> {
    use base64::Engine;
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    let bytes = secret.as_bytes();
    let mut out = Vec::new();
    for engine in [&STANDARD, &URL_SAFE] {
        out.push(engine.encode(bytes));
    }
    for engine in [&STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
        out.push(engine.encode(bytes));
        for skip in 0..3.min(bytes.len()) {
            let whole_groups = (bytes.len() - skip) / 3 * 3;
            let run = engine.encode(&bytes[skip..skip + whole_groups]);
            if run.len() >= MIN_SECRET {
                out.push(run);
            }
        }
    }
    out.dedup();
    out
}

/// Inserts `s` into `list` once, keeping the longest first (so a secret
/// that contains another is replaced whole).
fn insert(list: &RwLock<Vec<String>>, s: String) {
    let mut list = list.write().unwrap_or_else(|e| e.into_inner());
    if !list.contains(&s) {
        list.push(s);
        list.sort_by_key(|v| std::cmp::Reverse(v.len()));
    }
}

/// Whether the `len` bytes at `at` of `text` stand whole: after a quote,
/// `=`, `: `, `>`, a line break or the start, and before a quote, `&`, `;`,
/// `#`, `<`, a backslash (an escaped quote or line break), a line break or
/// the end; and not as a JSON object's key.
fn stands_whole(text: &str, at: usize, len: usize) -> bool {
    let mut before = text[..at].chars().rev();
    let mut after = text[at + len..].chars();
    let (b1, b2) = (before.next(), before.next());
    let (a1, a2) = (after.next(), after.next());
    let opens = match b1 {
        None | Some('"' | '\'' | '=' | '>' | '\n') => true,
        Some(' ') => b2 == Some(':'),
        _ => false,
    };
    let closes = matches!(
        a1,
        None | Some('"' | '\'' | '&' | ';' | '#' | '<' | '\\' | '\n' | '\r')
    );
    let key = b1 == Some('"') && a1 == Some('"') && a2 == Some(':');
    opens && closes && !key
}

/// `text` with each whole occurrence of `word` replaced.
fn replace_whole(text: &str, word: &str) -> Option<String> {
    let mut out = String::new();
    let mut last = 0;
    for (at, _) in text.match_indices(word) {
        if at >= last && stands_whole(text, at, word.len()) {
            out.push_str(&text[last..at]);
            out.push_str(PLACEHOLDER);
            last = at + word.len();
        }
    }
    if last == 0 {
        return None;
    }
    out.push_str(&text[last..]);
    Some(out)
}

impl Secrets {
    /// An empty set.
    pub fn new() -> Secrets {
        Secrets::default()
    }

    /// Adds a secret: replaced everywhere when it can be told from ordinary
    /// text (at least [`MIN_SECRET`] characters, or a whole header value
    /// with a space in it: `token test`), else only where it stands whole.
    pub fn add(&self, secret: &str) {
        let secret = secret.trim();
        if secret.is_empty() {
            return;
        }
        for s in spellings(secret)
            .into_iter()
            .chain(base64_spellings(secret))
        {
            let distinct = s.chars().count() >= MIN_SECRET
                || (s.contains(char::is_whitespace) && s.len() >= 4);
            insert(if distinct { &self.values } else { &self.whole }, s);
        }
    }

    /// Adds a header value whole and, for `Bearer x`/`Basic x`-style schemes,
    /// the credential after the scheme word.
    pub fn add_header_value(&self, value: &str) {
        self.add(value);
        if let Some((_, credential)) = value.trim().split_once(char::is_whitespace) {
            self.add(credential);
        }
    }

    /// Records that header `name` carries credentials: its value is written
    /// as [`PLACEHOLDER`] wherever headers are recorded.
    pub fn add_header(&self, name: &str, value: &str) {
        self.add_header_value(value);
        let mut headers = self.headers.write().unwrap_or_else(|e| e.into_inner());
        if !headers.iter().any(|h| h.eq_ignore_ascii_case(name)) {
            headers.push(name.to_string());
        }
    }

    /// Whether header `name` carries credentials.
    pub fn is_secret_header(&self, name: &str) -> bool {
        let headers = self.headers.read().unwrap_or_else(|e| e.into_inner());
        headers.iter().any(|h| h.eq_ignore_ascii_case(name))
    }

    /// The names of the headers that carry credentials.
    pub fn secret_headers(&self) -> Vec<String> {
        self.headers
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// `text` with every secret redacted but inside `names` (variable
    /// names a file defines, such as `cartograph_authorization`): a secret
    /// that is a plain word (Jupyter's token `cartograph`) would otherwise
    /// turn them into `[REDACTED]_authorization`, a name nothing defines.
    pub fn redact_keeping(&self, text: &str, names: &[String]) -> String {
        // Longest first, so that no name is replaced inside a longer one.
        let mut order: Vec<usize> = (0..names.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(names[i].len()));
        let mark = |i: usize| format!("\u{1}{}\u{2}", "\u{3}".repeat(i + 1));
        let mut kept = text.to_string();
        for &i in &order {
            kept = kept.replace(&names[i], &mark(i));
        }
        let mut out = self.redact(&kept).into_owned();
        for &i in &order {
            out = out.replace(&mark(i), &names[i]);
        }
        out
    }

    /// The text with every secret replaced by [`PLACEHOLDER`] (the short
    /// ones where they stand whole).
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let values = self.values.read().unwrap_or_else(|e| e.into_inner());
        let whole = self.whole.read().unwrap_or_else(|e| e.into_inner());
        if !values.iter().any(|v| text.contains(v.as_str()))
            && !whole.iter().any(|w| text.contains(w.as_str()))
        {
            return Cow::Borrowed(text);
        }
        let mut out = text.to_string();
        for v in values.iter() {
            if out.contains(v.as_str()) {
                out = out.replace(v.as_str(), PLACEHOLDER);
            }
        }
        for w in whole.iter() {
            if let Some(replaced) = replace_whole(&out, w) {
                out = replaced;
            }
        }
        Cow::Owned(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_values_and_bearer_credentials() {
        let s = Secrets::new();
        s.add_header_value("Bearer abc123xyz");
        assert_eq!(
            s.redact("authorization: Bearer abc123xyz"),
            "authorization: [REDACTED]"
        );
        assert_eq!(s.redact("token=abc123xyz"), "token=[REDACTED]");
        assert_eq!(s.redact("nothing here"), "nothing here");
    }

    #[test]
    fn short_credentials_never_rewrite_other_text() {
        let s = Secrets::new();
        s.add_header_value("token test");
        // The whole value is distinctive; its credential alone is a word.
        assert_eq!(
            s.redact("Authorization: token test"),
            "Authorization: [REDACTED]"
        );
        assert_eq!(
            s.redact("<testsuites><testcase/></testsuites> jq 'test(\"x\")'"),
            "<testsuites><testcase/></testsuites> jq 'test(\"x\")'"
        );
        s.add("ab");
        assert_eq!(s.redact("abab"), "abab");
    }

    #[test]
    fn short_credentials_go_where_they_stand_whole() {
        let s = Secrets::new();
        s.add_header_value("k3y7");
        // A whole JSON string value, escaped inside another JSON string too.
        assert_eq!(
            s.redact(r#"{"key":"k3y7","n":1}"#),
            r#"{"key":"[REDACTED]","n":1}"#
        );
        assert_eq!(
            s.redact(r#"{"body":"{\"key\":\"k3y7\"}"}"#),
            r#"{"body":"{\"key\":\"[REDACTED]\"}"}"#
        );
        // A whole header value, recorded as a pair or as a line.
        assert_eq!(
            s.redact(r#"[["x-echo","k3y7"]]"#),
            r#"[["x-echo","[REDACTED]"]]"#
        );
        assert_eq!(s.redact("X-Echo: k3y7\n"), "X-Echo: [REDACTED]\n");
        // A whole query parameter or form value.
        assert_eq!(
            s.redact(r#""/who?key=k3y7&a=1""#),
            r#""/who?key=[REDACTED]&a=1""#
        );
        assert_eq!(s.redact("a=1&key=k3y7"), "a=1&key=[REDACTED]");
        // A whole text.
        assert_eq!(s.redact("k3y7"), "[REDACTED]");
        // Elsewhere it is a word like any other.
        for text in [
            "k3y7s",
            "ak3y7",
            "\"k3y7x\"",
            "/k3y7/",
            "k3y7(",
            r#"{"k3y7":1}"#,
        ] {
            assert_eq!(s.redact(text), text);
        }
    }

    #[test]
    fn secrets_are_found_as_urls_and_json_write_them() {
        let s = Secrets::new();
        s.add("p@ss word/é\"long");
        for written in [
            "p%40ss%20word%2F%C3%A9%22long",
            "p%40ss+word%2F%C3%A9%22long",
            r#"p@ss word/é\"long"#,
        ] {
            assert_eq!(
                s.redact(&format!("x={written}y")),
                "x=[REDACTED]y",
                "{written}"
            );
        }
        s.add("pw");
        assert_eq!(s.redact("?u=a&p=pw"), "?u=a&p=[REDACTED]");
    }

    #[test]
    fn base64_copies_are_redacted_alone_and_inside_longer_text() {
        use base64::Engine;
        use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
        let s = Secrets::new();
        s.add_header_value("Bearer s3cr3t-t0ken/value?");
        for prefix in ["", "a", "ab", "abc", "{\"token\":\""] {
            let body = format!("{prefix}s3cr3t-t0ken/value?\" and more");
            for encoded in [STANDARD.encode(&body), URL_SAFE_NO_PAD.encode(&body)] {
                let echoed =
                    format!("{{\"data\":\"data:application/octet-stream;base64,{encoded}\"}}");
                let redacted = s.redact(&echoed);
                assert!(redacted.contains(PLACEHOLDER), "{prefix:?}: {redacted}");
            }
        }
        let alone = STANDARD.encode("s3cr3t-t0ken/value?");
        assert_eq!(s.redact(&format!("x={alone}")), "x=[REDACTED]");
        // A short secret's base64 is replaced only where it stands whole.
        s.add("k3y7");
        let short = STANDARD.encode("k3y7");
        assert_eq!(s.redact(&format!("\"{short}\"")), "\"[REDACTED]\"");
    }

    #[test]
    fn secret_headers_are_known_by_name() {
        let s = Secrets::new();
        s.add_header("X-Api-Key", "k");
        assert!(s.is_secret_header("x-api-key"));
        assert!(!s.is_secret_header("accept"));
    }
}
