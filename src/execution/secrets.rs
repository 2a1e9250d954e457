//! Secrets the user gave (header values, the auth command's output) and their
//! removal from everything written: every writer passes its text through
//! [`Secrets::redact`].

use std::borrow::Cow;
use std::sync::{Arc, RwLock};

/// What a secret is replaced by.
pub const PLACEHOLDER: &str = "[REDACTED]";

/// The set of secret strings of a run; cheap to clone and shared.
#[derive(Debug, Clone, Default)]
pub struct Secrets {
    values: Arc<RwLock<Vec<String>>>,
}

impl Secrets {
    /// An empty set.
    pub fn new() -> Secrets {
        Secrets::default()
    }

    /// Adds a secret. Very short values are ignored: replacing every `a` in the
    /// output would hide nothing and destroy the rest.
    pub fn add(&self, secret: &str) {
        let secret = secret.trim();
        if secret.len() < 4 {
            return;
        }
        let mut values = self.values.write().unwrap_or_else(|e| e.into_inner());
        if !values.iter().any(|v| v == secret) {
            values.push(secret.to_string());
            // Longest first, so a secret containing another is replaced whole.
            values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        }
    }

    /// Adds a header value and, for `Bearer x`/`Basic x` schemes, the credential.
    pub fn add_header_value(&self, value: &str) {
        self.add(value);
        if let Some((_, credential)) = value.split_once(' ') {
            self.add(credential);
        }
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
    fn short_values_are_not_secrets() {
        let s = Secrets::new();
        s.add("ab");
        assert_eq!(s.redact("abab"), "abab");
    }
}
