//! Text from descriptions and servers as people read it, on a terminal or in
//! a comment line of a written file: there a control character would act
//! (end the line, move the cursor, retitle the window, ring) instead of show,
//! so each is written as an escape.

use std::borrow::Cow;

/// `n` bytes, in MiB when whole.
pub fn size_text(n: usize) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else {
        format!("{n} bytes")
    }
}

/// Whether `c` acts instead of showing, or shows as nothing: C0 and C1
/// controls and DEL, the Unicode line and paragraph separators, and every
/// format character (Unicode category Cf: the bidirectional controls that
/// reorder what a reader sees, zero-width spaces and joiners, the soft
/// hyphen, the byte-order mark, tag characters) that would hide text or
/// make two different texts look the same.
fn acts(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}'
                | '\u{2029}'
                // Unicode 15's Cf, whole.
                | '\u{00AD}'
                | '\u{0600}'..='\u{0605}'
                | '\u{061C}'
                | '\u{06DD}'
                | '\u{070F}'
                | '\u{0890}'..='\u{0891}'
                | '\u{08E2}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206F}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{110BD}'
                | '\u{110CD}'
                | '\u{13430}'..='\u{1343F}'
                | '\u{1BCA0}'..='\u{1BCA3}'
                | '\u{1D173}'..='\u{1D17A}'
                | '\u{E0001}'
                | '\u{E0020}'..='\u{E007F}'
        )
}

fn escaped(s: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(|c| acts(c) && !keep(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            c if !acts(c) || keep(c) => out.push(c),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    Cow::Owned(out)
}

/// `s` on one line, every control character shown as an escape (`\n`,
/// `\r`, `\t`, `\u{1b}`): what a comment line, or a line on a terminal, may
/// hold of a text it does not control.
pub fn one_line(s: &str) -> Cow<'_, str> {
    escaped(s, |_| false)
}

/// As [`one_line`], but line breaks and tabs stay: for a message of
/// several lines.
pub fn printable(s: &str) -> Cow<'_, str> {
    escaped(s, |c| c == '\n' || c == '\t')
}

/// `s` as one shell word that means exactly `s`: single-quoted, or, when it
/// holds control characters (which a single-quoted word would keep raw in
/// the file), an ANSI-C `$'…'` word with them escaped. A NUL cannot be in a
/// shell word at all and is dropped.
pub fn shell_word(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return format!("'{}'", s.replace('\'', r"'\''"));
    }
    let mut out = String::from("$'");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => {}
            c if c.is_control() && (c as u32) < 0x80 => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// `s` as one shell word for a command printed for people to paste: as it
/// is when it holds only characters no shell reads specially (a plain path,
/// URL or flag), else [`shell_word`]-quoted. Every command Cartograph prints goes
/// through this (or [`shell_command`]), so a server URL or folder holding `;`,
/// `$(…)` or a quote stays one argument.
pub fn shell_arg(s: &str) -> Cow<'_, str> {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-./:=,@%+".contains(&b));
    if plain {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(shell_word(s))
    }
}

/// A command line for people to paste: each word through [`shell_arg`].
pub fn shell_command<'a>(words: impl IntoIterator<Item = &'a str>) -> String {
    words
        .into_iter()
        .map(shell_arg)
        .collect::<Vec<_>>()
        .join(" ")
}

/// One JSON-pointer token, escaped (`~` → `~0`, `/` → `~1`, RFC 6901).
pub fn pointer_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printed_commands_keep_each_word_one_word() {
        assert_eq!(
            shell_command(["hurl", "--variable", "base=http://h:1/api", "out/tests"]),
            "hurl --variable base=http://h:1/api out/tests"
        );
        let evil = "http://h/x;touch /tmp/pwned;$(id)`id`'";
        let line = shell_command(["hurl", "--variable", &format!("base={evil}")]);
        let words = through_bash_words(&line);
        assert_eq!(words, ["hurl", "--variable", &format!("base={evil}")]);
        assert_eq!(shell_arg(""), "''");
    }

    /// The words bash makes of `line` (without running anything of it).
    fn through_bash_words(line: &str) -> Vec<String> {
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!("printf '%s\\0' {line}"))
            .output()
            .unwrap();
        String::from_utf8(out.stdout)
            .unwrap()
            .split_terminator('\0')
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn controls_show_as_escapes() {
        assert_eq!(one_line("plain text"), "plain text");
        assert!(matches!(one_line("plain"), Cow::Borrowed(_)));
        assert_eq!(
            one_line("a\nb\r\tc\u{1b}[2J\u{7}\u{9b}d\u{202e}e"),
            "a\\nb\\r\\tc\\u{1b}[2J\\u{7}\\u{9b}d\\u{202e}e"
        );
        assert_eq!(one_line("x\u{2028}y\u{0}"), "x\\u{2028}y\\u{0}");
        // Invisible format characters: a zero-width space, a joiner, a BOM.
        assert_eq!(
            one_line("ad\u{200b}min\u{200d}\u{feff}\u{ad}"),
            "ad\\u{200b}min\\u{200d}\\u{feff}\\u{ad}"
        );
    }

    #[test]
    fn printable_keeps_lines() {
        assert_eq!(
            printable("a\nb\tc\u{1b}]0;t\u{7}"),
            "a\nb\tc\\u{1b}]0;t\\u{7}"
        );
        assert_eq!(printable("a\r\nb"), "a\\r\nb");
    }
}
