//! Strings for a schema's `pattern`, with JSON Schema's semantics: a pattern
//! matches anywhere in a string unless it is anchored, so `^"([0-9]+?)"$|\*`
//! accepts `*abc` (its second branch is anchored at neither end). Each
//! top-level branch is generated on its own from the regex's syntax tree
//! (ASCII only); its `^` and `$` say whether text may go before and after
//! what it matches.

use std::cell::RefCell;
use std::collections::HashMap;

use rand::Rng;
use regex_syntax::hir::{Hir, HirKind};

/// Probability that a value of a branch not anchored at one end gets text
/// at that end: values a validator accepts and a parser behind it may not.
const EXTEND: f64 = 0.2;

/// Text the negative phase puts where a pattern is not anchored.
const EXTRA: &str = "abc";

/// One top-level branch of a pattern.
struct Branch {
    /// Generates what the branch matches, without its anchors.
    generate: rand_regex::Regex,
    /// Whether it is anchored at the start (`^`, `\A`, or another assertion
    /// a string's own start satisfies best).
    start: bool,
    /// Whether it is anchored at the end.
    end: bool,
}

/// A pattern read for generating and for matching.
struct Compiled {
    branches: Vec<Branch>,
    matcher: regex::Regex,
}

thread_local! {
    /// Compiled patterns: a description repeats a few patterns on many
    /// inputs, and generation asks for them on every value.
    static PATTERNS: RefCell<HashMap<String, Option<Compiled>>> = RefCell::new(HashMap::new());
}

/// Runs `f` on `pattern` compiled, when both regex engines read it
/// (ECMA-only syntax is left alone) and a branch can be generated.
fn with_pattern<T>(pattern: &str, f: impl FnOnce(&Compiled) -> T) -> Option<T> {
    PATTERNS.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.len() > 4096 {
            cache.clear();
        }
        let entry = cache
            .entry(pattern.to_string())
            .or_insert_with(|| compile(pattern));
        entry.as_ref().map(f)
    })
}

fn compile(pattern: &str) -> Option<Compiled> {
    let matcher = regex::Regex::new(pattern).ok()?;
    let hir = regex_syntax::ParserBuilder::new()
        .unicode(false)
        .utf8(true)
        .build()
        .parse(pattern)
        .ok()?;
    let alternatives = match hir.kind() {
        HirKind::Alternation(branches) => branches.clone(),
        _ => vec![hir],
    };
    let branches: Vec<Branch> = alternatives.into_iter().filter_map(branch).collect();
    (!branches.is_empty()).then_some(Compiled { branches, matcher })
}

/// A branch with the assertions at its ends taken off (the generator takes
/// none); `None` when it holds others inside.
fn branch(hir: Hir) -> Option<Branch> {
    let mut items: Vec<Hir> = match hir.kind() {
        HirKind::Concat(items) => items.clone(),
        _ => vec![hir],
    };
    let is_look = |h: &Hir| matches!(h.kind(), HirKind::Look(_));
    let mut start = false;
    while items.first().is_some_and(is_look) {
        items.remove(0);
        start = true;
    }
    let mut end = false;
    while items.last().is_some_and(is_look) {
        items.pop();
        end = true;
    }
    // `$` alone as a branch anchors it at both ends in effect.
    if items.is_empty() && (start || end) {
        start = true;
        end = true;
    }
    let generate = rand_regex::Regex::with_hir(Hir::concat(items), 8).ok()?;
    Some(Branch {
        generate,
        start,
        end,
    })
}

/// A string matching `pattern`, when it can be generated: what one of its
/// branches matches, now and then with text before or after it where the
/// branch is not anchored (JSON Schema's search semantics).
pub fn matching<R: Rng + ?Sized>(pattern: &str, rng: &mut R) -> Option<String> {
    generated(pattern, rng, EXTEND)
}

/// A string one branch of `pattern` matches whole, with nothing around it.
pub fn whole_match<R: Rng + ?Sized>(pattern: &str, rng: &mut R) -> Option<String> {
    generated(pattern, rng, 0.0)
}

fn generated<R: Rng + ?Sized>(pattern: &str, rng: &mut R, extend: f64) -> Option<String> {
    with_pattern(pattern, |c| {
        (0..4).find_map(|_| {
            let b = match c.branches.len() {
                1 => &c.branches[0],
                n => &c.branches[rng.random_range(0..n)],
            };
            let mut s: String = rng.sample(&b.generate);
            if extend > 0.0 {
                if !b.start && rng.random_bool(extend) {
                    s = format!("{}{s}", extra(rng));
                }
                if !b.end && rng.random_bool(extend) {
                    s.push_str(&extra(rng));
                }
            }
            c.matcher.is_match(&s).then_some(s)
        })
    })
    .flatten()
}

/// One to three letters or digits.
fn extra<R: Rng + ?Sized>(rng: &mut R) -> String {
    const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    (0..rng.random_range(1..=3))
        .map(|_| ALNUM[rng.random_range(0..ALNUM.len())] as char)
        .collect()
}

/// Strings `pattern` matches only because it is not anchored: a branch's
/// match with text after it (when some branch is not anchored at its end),
/// and with text before it (at its start). Empty for a pattern anchored at
/// both ends of every branch.
pub fn unanchored<R: Rng + ?Sized>(pattern: &str, rng: &mut R) -> Vec<String> {
    with_pattern(pattern, |c| {
        let mut out = Vec::new();
        let open_end = c.branches.iter().find(|b| !b.end);
        let open_start = c.branches.iter().find(|b| !b.start);
        for (b, after) in [(open_end, true), (open_start, false)] {
            let Some(b) = b else { continue };
            let found = (0..4).find_map(|_| {
                let m: String = rng.sample(&b.generate);
                let s = if after {
                    format!("{m}{EXTRA}")
                } else {
                    format!("{EXTRA}{m}")
                };
                c.matcher.is_match(&s).then_some(s)
            });
            out.extend(found);
        }
        out
    })
    .unwrap_or_default()
}

/// Whether `text` matches `pattern`; `None` when the pattern cannot be read.
pub fn pattern_matches(pattern: &str, text: &str) -> Option<bool> {
    thread_local! {
        static MATCHERS: RefCell<HashMap<String, Option<regex::Regex>>> =
            RefCell::new(HashMap::new());
    }
    MATCHERS.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.len() > 4096 {
            cache.clear();
        }
        cache
            .entry(pattern.to_string())
            .or_insert_with(|| regex::Regex::new(pattern).ok())
            .as_ref()
            .map(|m| m.is_match(text))
    })
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::generation::values::Rng64;

    #[test]
    fn each_branch_is_anchored_as_written() {
        let c = compile(r#"^"([0-9]+?)"$|\*"#).expect("both branches generate");
        let ends: Vec<(bool, bool)> = c.branches.iter().map(|b| (b.start, b.end)).collect();
        assert_eq!(ends, [(true, true), (false, false)]);
        let c = compile("^a+|b+$").unwrap();
        let ends: Vec<(bool, bool)> = c.branches.iter().map(|b| (b.start, b.end)).collect();
        assert_eq!(ends, [(true, false), (false, true)]);
        // A word boundary at an end counts as an anchor there.
        let c = compile(r"\bab\b|x").unwrap();
        assert!(c.branches[0].start && c.branches[0].end);
    }

    #[test]
    fn unanchored_ends_get_text_around_the_match() {
        let mut rng = Rng64::seed_from_u64(1);
        let etag = r#"^"([0-9]+?)"$|\*"#;
        assert_eq!(unanchored(etag, &mut rng), ["*abc", "abc*"]);
        assert!(unanchored(r#"^"[0-9]+"$"#, &mut rng).is_empty());
        let code = unanchored("^[A-Z]{3}", &mut rng);
        assert_eq!(code.len(), 1);
        assert!(code[0].ends_with("abc") && code[0].len() == 6, "{code:?}");
        // Positive values: whole matches of either branch, and now and then
        // the unanchored one with text around it; all match.
        let values: Vec<String> = (0..200)
            .map(|_| matching(etag, &mut rng).unwrap())
            .collect();
        assert!(
            values
                .iter()
                .all(|v| pattern_matches(etag, v) == Some(true))
        );
        assert!(values.iter().any(|v| v == "*"));
        assert!(values.iter().any(|v| v.starts_with('"')));
        assert!(values.iter().any(|v| v.contains('*') && v.len() > 1));
        // Anchored patterns never get extra text.
        for _ in 0..50 {
            let v = matching(r#"^"[0-9]+"$"#, &mut rng).unwrap();
            assert!(v.starts_with('"') && v.ends_with('"'), "{v}");
        }
    }
}
