//! The overlay as YAML that YAML 1.1 parsers (PyYAML, which `oas-patch`
//! uses) and YAML 1.2 parsers read alike: block style for people, every
//! string double-quoted with escapes for every character a parser could
//! take for something else or reject (so `yes`, `2024-01-01`, `1e3` and
//! `~` stay strings, and a server's control characters cannot end a line),
//! and floats written with a dot and a signed exponent, as YAML 1.1 needs.
//! yaml-rust2's emitter leaves dates and non-printable characters bare.

use serde_json::Value;

/// `v` as a block-style YAML document (no `---`), ending with a newline.
pub(super) fn document(v: &Value) -> String {
    let mut out = String::new();
    block(v, 0, &mut out);
    out
}

/// A `#` comment line holding `text`, which may come from a server: every
/// character a parser would reject, or take for a line break, becomes a
/// space.
pub(super) fn comment(text: &str) -> String {
    let clean: String = text
        .chars()
        .map(|c| if printable(c) && c != '\t' { c } else { ' ' })
        .collect();
    format!("# {}\n", clean.trim_end())
}

/// Writes `v` at `indent` (a mapping or sequence as lines; a scalar never
/// comes here but through its parent).
fn block(v: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(map) => {
            for (k, val) in map {
                out.push_str(&pad);
                out.push_str(&key(k));
                out.push(':');
                child(val, indent, out);
            }
        }
        Value::Array(items) => {
            for item in items {
                out.push_str(&pad);
                out.push('-');
                match item {
                    Value::Object(m) if !m.is_empty() => {
                        // The first member goes on the dash's line.
                        let mut inner = String::new();
                        block(item, indent + 2, &mut inner);
                        out.push(' ');
                        out.push_str(&inner[indent + 2..]);
                    }
                    Value::Array(a) if !a.is_empty() => {
                        let mut inner = String::new();
                        block(item, indent + 2, &mut inner);
                        out.push(' ');
                        out.push_str(&inner[indent + 2..]);
                    }
                    other => {
                        out.push(' ');
                        out.push_str(&scalar(other));
                        out.push('\n');
                    }
                }
            }
        }
        other => {
            out.push_str(&pad);
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
}

/// A mapping value after its `key:`.
fn child(v: &Value, indent: usize, out: &mut String) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            block(v, indent + 2, out);
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            block(v, indent + 2, out);
        }
        other => {
            out.push(' ');
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
}

/// A key: bare when it is a word no parser reads as anything but a string,
/// else quoted.
fn key(k: &str) -> String {
    const SPECIAL: [&str; 22] = [
        "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false",
        "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF",
    ];
    let bare = k
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !SPECIAL.contains(&k)
        && !k.eq_ignore_ascii_case("null");
    if bare { k.to_string() } else { quote(k) }
}

/// A scalar in flow form (`{}` and `[]` for empty collections).
fn scalar(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number(n),
        Value::String(s) => quote(s),
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
    }
}

/// A number YAML 1.1 reads as a number: `1e308` is a string there, so a
/// float gets a dot and a signed exponent (`1.0e+308`).
fn number(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    let text = n.to_string();
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m.to_string(), Some(e.to_string())),
        None => (text, None),
    };
    let mantissa = if mantissa.contains('.') {
        mantissa
    } else {
        format!("{mantissa}.0")
    };
    match exponent {
        Some(e) if e.starts_with(['+', '-']) => format!("{mantissa}e{e}"),
        Some(e) => format!("{mantissa}e+{e}"),
        None => mantissa,
    }
}

/// Whether YAML lets `c` stand unescaped in a double-quoted scalar, for
/// YAML 1.1 and 1.2 parsers alike (the printable set, without the line
/// breaks YAML 1.1 adds: NEL, LS, PS, and without the byte-order mark).
fn printable(c: char) -> bool {
    matches!(c, '\t' | ' '..='~' | '\u{a0}'..='\u{2027}' | '\u{202a}'..='\u{d7ff}' | '\u{e000}'..='\u{fefe}' | '\u{ff00}'..='\u{fffd}' | '\u{10000}'..)
}

/// `s` double-quoted, with every character a parser could misread escaped.
pub(super) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if printable(c) => out.push(c),
            c if (c as u32) <= 0xff => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{:04x}", c as u32)),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(text: &str) -> Value {
        crate::load::parse_text(text, std::path::Path::new("o.yaml")).unwrap()
    }

    #[test]
    fn every_string_reads_back_as_the_same_string() {
        let tricky: Vec<String> = [
            "yes",
            "No",
            "on",
            "~",
            "null",
            "NULL",
            "true",
            "2024-01-01",
            "12:30:00",
            "1e3",
            "0x1f",
            "0o7",
            "1_000",
            ".5",
            "-",
            "- x",
            "? x",
            ": x",
            "#x",
            "a #b",
            "x: y",
            "{a}",
            "[1]",
            "&a",
            "*a",
            "!t",
            "%x",
            "@x",
            "`x",
            "|",
            ">",
            "'",
            "\"",
            "\\",
            " lead",
            "trail ",
            "",
            "a\nb",
            "a\r\nb",
            "\t",
            "\u{0}",
            "\u{1b}[31m",
            "\u{7f}",
            "\u{85}",
            "\u{a0}",
            "\u{2028}",
            "\u{2029}",
            "\u{feff}",
            "\u{fffe}",
            "\u{ffff}",
            "ü名😀",
            "---",
            "...",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut map = serde_json::Map::new();
        for (i, s) in tricky.iter().enumerate() {
            map.insert(s.clone(), json!(s));
            map.insert(format!("k{i}"), json!([s, {"v": s}]));
        }
        let v = Value::Object(map);
        let text = document(&v);
        assert_eq!(parse(&text), v, "{text}");
        // Nothing outside the printable set is written raw.
        assert!(text.chars().all(|c| c == '\n' || printable(c)), "{text}");
    }

    #[test]
    fn collections_and_numbers_keep_their_shape_and_type() {
        let v = json!({
            "overlay": "1.0.0",
            "actions": [
                {"target": "$['a']", "update": {"200": {"description": "x", "content": {}}}},
                {"target": "$['b']", "remove": true},
                {"nested": [[1, 2], [], {}], "n": [1.5, -0.25, 1e308, 12, -3, 2.5e-7]}
            ],
            "empty": {}, "none": null
        });
        let text = document(&v);
        assert_eq!(parse(&text), v, "{text}");
        assert!(
            text.contains("1.0e+308") && text.contains("2.5e-7"),
            "{text}"
        );
        assert!(
            text.starts_with("overlay: \"1.0.0\"\nactions:\n  - target: "),
            "{text}"
        );
    }

    #[test]
    fn comments_cannot_end_early() {
        assert_eq!(comment("a\nb\u{2028}c\u{85}d\re"), "# a b c d e\n");
    }
}
