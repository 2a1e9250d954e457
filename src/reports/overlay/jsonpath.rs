//! RFC 9535 JSONPath for the overlay's targets: one path per place, every
//! name in a bracketed string literal (so a path key with braces, dots,
//! quotes or a trailing slash is selected exactly as the description writes
//! it), array positions as indexes.
//!
//! A name with a `'` and no `"` or `\` is written in double quotes: then no
//! escape is needed, and `openapi-overlays-js` (whose JSONPath library keeps
//! escapes undecoded) selects it too. Every other name is single-quoted with
//! the RFC's escapes. Filters are written `[?(@ == 'x')]`: the parentheses
//! are optional in RFC 9535 but required by that library.

use serde_json::Value;

/// The JSONPath that selects exactly the node at `tokens` of `root` (a
/// position in an array is an index, anything else a name).
pub(super) fn path(root: &Value, tokens: &[String]) -> String {
    let mut out = String::from("$");
    let mut at = Some(root);
    for t in tokens {
        match at {
            Some(Value::Array(items)) if t.parse::<usize>().is_ok() => {
                out.push_str(&format!("[{t}]"));
                at = t.parse::<usize>().ok().and_then(|i| items.get(i));
            }
            _ => {
                out.push('[');
                out.push_str(&string_literal(t));
                out.push(']');
                at = at.and_then(|v| v.get(t));
            }
        }
    }
    out
}

/// The path of the names `names` under the node at `tokens`, in one
/// segment (`…['type','properties']`).
pub(super) fn names(root: &Value, tokens: &[String], names: &[String]) -> String {
    let literals: Vec<String> = names.iter().map(|n| string_literal(n)).collect();
    format!("{}[{}]", path(root, tokens), literals.join(","))
}

/// The path of the items equal to the string `item` in the array at `tokens`.
pub(super) fn items_equal(root: &Value, tokens: &[String], item: &str) -> String {
    format!("{}[?(@ == {})]", path(root, tokens), string_literal(item))
}

/// An RFC 9535 string literal for `s`: double-quoted when that needs no
/// escape and single quotes would, else single-quoted.
pub(super) fn string_literal(s: &str) -> String {
    let plain = |c: char| c != '\\' && (c as u32) >= 0x20;
    if s.contains('\'') && !s.contains('"') && s.chars().all(plain) {
        return quoted(s, '"');
    }
    quoted(s, '\'')
}

/// `s` between `quote`s, escaped as RFC 9535 section 2.3.1.1 says: the
/// quote itself, the backslash and the control characters; anything else
/// as it is.
fn quoted(s: &str, quote: char) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn t(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn names_are_bracketed_literals_exactly_as_written() {
        let doc = json!({"paths": {"/books/{id}/": {"get": {}}}});
        assert_eq!(
            path(&doc, &t(&["paths", "/books/{id}/", "get"])),
            "$['paths']['/books/{id}/']['get']"
        );
        // Names that are JSONPath syntax elsewhere are plain text in a literal.
        for name in [
            "$", "@", "*", "..", "a.b", "[0]", "?(@)", "keys", "len", "ü 名",
        ] {
            assert_eq!(string_literal(name), format!("'{name}'"));
        }
    }

    #[test]
    fn quotes_backslashes_and_control_characters_are_escaped() {
        assert_eq!(string_literal("o'neil"), r#""o'neil""#);
        assert_eq!(string_literal(r#"say "hi""#), r#"'say "hi"'"#);
        assert_eq!(string_literal(r#"it's "x""#), r#"'it\'s "x"'"#);
        assert_eq!(string_literal(r"a\b'"), r"'a\\b\''");
        assert_eq!(
            string_literal("a\nb\tc\u{1}\u{7f}"),
            "'a\\nb\\tc\\u0001\u{7f}'"
        );
        assert_eq!(string_literal("line\n'"), "'line\\n\\''");
    }

    #[test]
    fn array_positions_are_indexes_and_numeric_names_stay_names() {
        let doc = json!({"responses": {"200": {}}, "allOf": [{}, {"required": ["a"]}]});
        assert_eq!(
            path(&doc, &t(&["responses", "200"])),
            "$['responses']['200']"
        );
        assert_eq!(
            path(&doc, &t(&["allOf", "1", "required"])),
            "$['allOf'][1]['required']"
        );
        assert_eq!(
            items_equal(&doc, &t(&["allOf", "1", "required"]), "o'neil"),
            r#"$['allOf'][1]['required'][?(@ == "o'neil")]"#
        );
        assert_eq!(
            names(&doc, &t(&["allOf", "0"]), &t(&["type", "items"])),
            "$['allOf'][0]['type','items']"
        );
    }
}
