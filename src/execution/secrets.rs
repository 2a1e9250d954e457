//! Secrets the user gave (header values, the auth command's output) and their
//! removal from everything written: every writer passes its text through
//! [`Secrets::redact`], and writers that record headers replace the values of
//! credential headers by [`PLACEHOLDER`] themselves.

use std::borrow::Cow;
use std::sync::{Arc, RwLock};

/// What a secret is replaced by.
pub const PLACEHOLDER: &str = "[REDACTED]";

/// The shortest credential that is replaced wherever it appears: a shorter
/// one (`token test`'s `test`) is also an ordinary word, and replacing it
/// everywhere would rewrite `<testsuites>` and `jq 'test(…)'` instead of
/// hiding anything.
pub const MIN_SECRET: usize = 8;

/// The set of secret strings of a run, and the names of the headers that
/// carry them; cheap to clone and shared.
#[derive(Debug, Clone, Default)]
pub struct Secrets {
    values: Arc<RwLock<Vec<String>>>,
    headers: Arc<RwLock<Vec<String>>>,
}

impl Secrets {
    /// An empty set.
    pub fn new() -> Secrets {
        Secrets::default()
    }

    /// Adds a secret when it can be told from ordinary text: at least
    /// [`MIN_SECRET`] characters, or a whole header value with a space in it
    /// (`token test`). A shorter word is never written by Cartograph itself
    /// (header values are recorded as [`PLACEHOLDER`]), and is not hunted for
    /// in other text.
    pub fn add(&self, secret: &str) {
        let secret = secret.trim();
        let distinct = secret.chars().count() >= MIN_SECRET
            || (secret.contains(char::is_whitespace) && secret.len() >= 4);
        if !distinct {
            return;
        }
        let mut values = self.values.write().unwrap_or_else(|e| e.into_inner());
        if !values.iter().any(|v| v == secret) {
            values.push(secret.to_string());
            // Longest first, so a secret containing another is replaced whole.
            values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        }
    }

    /// Adds a header value whole and, for `Bearer x`/`Basic x`-style schemes,
    /// the credential after the scheme word when it is long enough.
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

    /// The text with every secret replaced by [`PLACEHOLDER`].
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let values = self.values.read().unwrap_or_else(|e| e.into_inner());
        if !values.iter().any(|v| text.contains(v.as_str())) {
            return Cow::Borrowed(text);
        }
        let mut out = text.to_string();
        for v in values.iter() {
            out = out.replace(v.as_str(), PLACEHOLDER);
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
    fn secret_headers_are_known_by_name() {
        let s = Secrets::new();
        s.add_header("X-Api-Key", "k");
        assert!(s.is_secret_header("x-api-key"));
        assert!(!s.is_secret_header("accept"));
    }
}
