//! Strings for a schema's `pattern`: generated from the regex's syntax tree
//! (ASCII only), and matched with JSON Schema's search semantics.

use std::cell::RefCell;
use std::collections::HashMap;

use rand::Rng;

thread_local! {
    /// Compiled patterns: a description repeats a few patterns on many
    /// inputs, and generation asks for them on every value.
    static PATTERNS: RefCell<HashMap<String, Option<(rand_regex::Regex, regex::Regex)>>> =
        RefCell::new(HashMap::new());
}

/// Runs `f` on `pattern` compiled for generating and for matching, when
/// both regex engines read it (ECMA-only syntax is left alone).
fn with_pattern<T>(
    pattern: &str,
    f: impl FnOnce(&rand_regex::Regex, &regex::Regex) -> T,
) -> Option<T> {
    PATTERNS.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.len() > 4096 {
            cache.clear();
        }
        let entry = cache.entry(pattern.to_string()).or_insert_with(|| {
            // Generated strings must match whole, so the pattern is anchored
            // for generation; matching keeps JSON Schema's search semantics.
            let anchored = pattern.trim_start_matches('^').trim_end_matches('$');
            let hir = regex_syntax::ParserBuilder::new()
                .unicode(false)
                .utf8(true)
                .build()
                .parse(anchored)
                .ok()?;
            let generate = rand_regex::Regex::with_hir(hir, 8).ok()?;
            let matcher = regex::Regex::new(pattern).ok()?;
            Some((generate, matcher))
        });
        entry.as_ref().map(|(g, m)| f(g, m))
    })
}

/// A string matching `pattern`, when it can be generated.
pub fn matching<R: Rng + ?Sized>(pattern: &str, rng: &mut R) -> Option<String> {
    with_pattern(pattern, |g, m| {
        (0..4)
            .map(|_| rng.sample::<String, _>(g))
            .find(|s| m.is_match(s))
    })
    .flatten()
}

/// Whether `text` matches `pattern`; `None` when the pattern cannot be read.
pub fn pattern_matches(pattern: &str, text: &str) -> Option<bool> {
    with_pattern(pattern, |_, m| m.is_match(text))
}
