//! A script as a Hurl file: one entry per step, `[Captures]` for carried
//! values, and the status the run saw asserted. The target comes from the
//! `base` variable: `hurl --test --variable base=http://127.0.0.1:8080 *.hurl`
//! (with or without a trailing slash: each path climbs to the root first).
//!
//! Every text of the script is data, written in the form Hurl reads back as
//! exactly that text: URLs percent-encoded outside the characters Hurl takes
//! in a URL, header names and values with Hurl's escapes (`\#`, `\\`,
//! `\n`, `\u{7b}` for a `{` that must not open a template), raw bodies as
//! base64 when they hold what a raw string cannot (```` ``` ````, `{{`,
//! control characters), comments on one line. Only the `{{…}}` of the
//! values earlier steps captured are templates, and those of the
//! credentials ([`Credentials`]): each a variable the file's header names,
//! never its value.

use std::collections::HashSet;

use super::{Script, Source};
use crate::execution::secrets::Secrets;
use crate::model::text::one_line;

/// The credentials a suite file takes as Hurl variables, by name, never by
/// value: each header of the run's own credentials (`-H`,
/// `--auth-command`, an identity standing for the run's), each API key of
/// its query (`--query-key`), and each header of the other identities
/// (`--identity`, `[identities]`, `--auth-file`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Credentials {
    /// The run's own headers: (header name, variable).
    pub headers: Vec<(String, String)>,
    /// The run's API keys sent in the query: (parameter name, variable).
    pub query: Vec<(String, String)>,
    /// Per other identity, by name: its headers as (header name, variable).
    pub identities: Vec<(String, Vec<(String, String)>)>,
}

/// Names and the variables that give their values.
type Named = [(String, String)];

/// What prefixes every credential's variable: no value a step captures is
/// named so (captures are named after the inputs they fill).
const PREFIX: &str = "cartograph_";

impl Credentials {
    /// The variables of the run's header names `headers`, query key names
    /// `query`, and each identity's header names; each variable is
    /// `cartograph_` and the name in lower case with `_` for anything but
    /// letters and digits (`cartograph_authorization`,
    /// `cartograph_query_api_key`, `cartograph_identity_bob_authorization`),
    /// told apart by `_2`, `_3` when two names make the same.
    pub fn new(
        headers: &[String],
        query: &[String],
        identities: &[(String, Vec<String>)],
    ) -> Credentials {
        let mut taken: HashSet<String> = HashSet::new();
        let mut name = |parts: &[&str]| {
            let mut base = String::from(PREFIX);
            for (i, part) in parts.iter().enumerate() {
                if i > 0 {
                    base.push('_');
                }
                base.extend(part.chars().map(|c| {
                    if c.is_ascii_alphanumeric() {
                        c.to_ascii_lowercase()
                    } else {
                        '_'
                    }
                }));
            }
            let mut var = base.clone();
            let mut n = 1;
            while !taken.insert(var.clone()) {
                n += 1;
                var = format!("{base}_{n}");
            }
            var
        };
        let headers = headers.iter().map(|h| (h.clone(), name(&[h]))).collect();
        let query = query
            .iter()
            .map(|q| (q.clone(), name(&["query", q])))
            .collect();
        let identities = identities
            .iter()
            .map(|(who, hs)| {
                let vars = hs
                    .iter()
                    .map(|h| (h.clone(), name(&["identity", who, h])))
                    .collect();
                (who.clone(), vars)
            })
            .collect();
        Credentials {
            headers,
            query,
            identities,
        }
    }

    /// Whether there is nothing to give.
    pub fn is_empty(&self) -> bool {
        self.headers.is_empty()
            && self.query.is_empty()
            && self.identities.iter().all(|(_, h)| h.is_empty())
    }

    /// Every variable, with what to give it, for people.
    pub fn variables(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for (h, var) in &self.headers {
            let example = if h.eq_ignore_ascii_case("authorization") {
                " (e.g. `Bearer …`)"
            } else {
                ""
            };
            out.push((
                var.clone(),
                format!("the value of the run's {h} header{example}"),
            ));
        }
        for (q, var) in &self.query {
            out.push((
                var.clone(),
                format!("the run's API key, sent as the query parameter {q}"),
            ));
        }
        for (who, headers) in &self.identities {
            for (h, var) in headers {
                out.push((
                    var.clone(),
                    format!("the value of identity {who}'s {h} header"),
                ));
            }
        }
        out
    }

    /// What `step` sends of them: its headers and its query parameters,
    /// each (name, variable). A step that tests missing or malformed
    /// credentials sends none, the anonymous identity none, another
    /// identity only its own headers.
    fn of(&self, step: &super::Step) -> (&Named, &Named) {
        let none: &Named = &[];
        let bare = step
            .breach
            .as_ref()
            .is_some_and(|b| b.kind.drops_credentials());
        match step.identity.as_deref() {
            _ if bare => (none, none),
            Some(crate::execution::identities::ANONYMOUS) => (none, none),
            Some(name) => (
                self.identities
                    .iter()
                    .find(|(who, _)| who == name)
                    .map_or(none, |(_, h)| h.as_slice()),
                none,
            ),
            None => (&self.headers, &self.query),
        }
    }
}

/// A JSON pointer as a Hurl JSONPath (`/0/id` → `$[0]['id']`).
fn jsonpath(pointer: &str) -> String {
    let mut out = String::from("$");
    for t in pointer.split('/').skip(1) {
        let t = t.replace("~1", "/").replace("~0", "~");
        if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit()) {
            out.push_str(&format!("[{t}]"));
        } else {
            out.push_str(&format!(
                "['{}']",
                t.replace('\\', "\\\\").replace('\'', "\\'")
            ));
        }
    }
    out
}

/// A Hurl quoted string: `\\`, `"`, control characters and `{` (which
/// would open a template) escaped.
fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '#' => out.push('#'),
            c => escape(c, &mut out),
        }
    }
    out.push('"');
    out
}

/// A comment line: `text` on one line, its control characters escaped.
fn comment(text: &str) -> String {
    format!("# {}\n", one_line(text))
}

/// Whether `name` can be a Hurl variable (and so one of our captures).
fn variable_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `text` cut into literal parts and the `{{name}}`s of `known` names, in
/// order: `(literal, None)` and `("", Some(name))`; a `{{` of any other
/// name is literal.
fn pieces<'a>(text: &'a str, known: &HashSet<&str>) -> Vec<(&'a str, Option<&'a str>)> {
    let mut out = Vec::new();
    let mut rest = text;
    let mut from = 0;
    while let Some(found) = rest[from..].find("{{") {
        let start = from + found;
        let name = rest[start + 2..]
            .find("}}")
            .map(|len| &rest[start + 2..start + 2 + len])
            .filter(|name| known.contains(name));
        match name {
            Some(name) => {
                out.push((&rest[..start], None));
                out.push(("", Some(name)));
                rest = &rest[start + 2 + name.len() + 2..];
                from = 0;
            }
            None => from = start + 2,
        }
    }
    out.push((rest, None));
    out
}

/// Characters a Hurl URL takes as they are, besides ASCII letters and digits.
const URL_CHARS: &str = ":/.-?=&_%*,@~+!$'();[]";

/// A request path as the rest of a Hurl URL line: every character Hurl
/// would not take (a space, `#`, `{`, quotes, control and non-ASCII
/// characters) percent-encoded, as an HTTP client sends it anyway.
fn url(path: &str, known: &HashSet<&str>) -> String {
    let mut out = String::with_capacity(path.len());
    for (literal, var) in pieces(path, known) {
        for c in literal.chars() {
            if c.is_ascii_alphanumeric() || URL_CHARS.contains(c) {
                out.push(c);
            } else {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
        }
        if let Some(v) = var {
            out.push_str(&format!("{{{{{v}}}}}"));
        }
    }
    out
}

/// One character in Hurl's escape form, for strings that are not quoted.
fn escape(c: char, out: &mut String) {
    match c {
        '\\' => out.push_str("\\\\"),
        '#' => out.push_str("\\#"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        // A `{` never opens a template of its own.
        '{' => out.push_str("\\u{7b}"),
        c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        c => out.push(c),
    }
}

/// A header name as a Hurl key: letters, digits and `_-.@$` as they are,
/// everything else (`:`, spaces, brackets, line breaks) escaped.
fn key(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || "_-.@$".contains(c) {
            out.push(c);
        } else if c == ':' {
            out.push_str("\\:");
        } else if "\\#\n\r\t".contains(c) || c.is_control() {
            escape(c, &mut out);
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    out
}

/// A header value as Hurl reads it back: escapes for `\`, `#`, `{` and
/// control characters, and for the spaces at either end (Hurl trims them).
fn value(text: &str, known: &HashSet<&str>) -> String {
    let mut out = String::with_capacity(text.len());
    let parts = pieces(text, known);
    let last = parts.len() - 1;
    for (i, (literal, var)) in parts.iter().enumerate() {
        let n = literal.chars().count();
        for (k, c) in literal.chars().enumerate() {
            let edge = (i == 0 && k == 0) || (i == last && k + 1 == n);
            if c == ' ' && edge {
                out.push_str("\\u{20}");
            } else {
                escape(c, &mut out);
            }
        }
        if let Some(v) = var {
            out.push_str(&format!("{{{{{v}}}}}"));
        }
    }
    out
}

/// Whether Hurl would read a JSON body's line as a section header and
/// refuse the file: an array whose first item is a bare word (`[null]`,
/// `[true]`); such a body goes as a raw string instead.
fn reads_as_a_section(body: &str) -> bool {
    body.strip_prefix('[')
        .and_then(|rest| rest.chars().next())
        .is_some_and(|c| c.is_ascii_alphabetic())
}

/// Whether a raw body can go between ```` ``` ```` lines as it is: no
/// ```` ``` ```` that would end it, no `{{` that is not one of ours, no
/// control character but line breaks and tabs.
fn raw_safe(body: &str, known: &HashSet<&str>) -> bool {
    pieces(body, known).iter().all(|(literal, _)| {
        !literal.contains("```")
            && !literal.contains("{{")
            && !literal
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t')
    }) && !body.contains("```")
}

/// A JSON body with `{{` that is not one of ours written so Hurl does not
/// read a template: inside a JSON string `{` may be spelled `\u007b`, and
/// outside strings JSON never has two opening braces in a row before a key.
fn literal_braces(body: &str, known: &HashSet<&str>) -> String {
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(at) = rest.find("{{") {
        let ours = rest[at + 2..]
            .split("}}")
            .next()
            .is_some_and(|v| known.contains(v));
        if ours {
            let end = at + 2 + rest[at + 2..].find("}}").unwrap_or(0) + 2;
            out.push_str(&rest[..end]);
            rest = &rest[end..];
        } else {
            out.push_str(&rest[..at]);
            out.push_str("{\\u007b");
            rest = &rest[at + 2..];
        }
    }
    out.push_str(rest);
    out
}

/// Whether `body` is JSON once each captured `{{var}}` stands for a value.
fn parses_with_captures(body: &str, known: &HashSet<&str>) -> bool {
    let mut text = String::with_capacity(body.len());
    for (literal, var) in pieces(body, known) {
        text.push_str(literal);
        if var.is_some() {
            text.push('0');
        }
    }
    serde_json::from_str::<serde_json::Value>(&text).is_ok()
}

/// A step's URL after `{{base}}`: one `/..` more than the target's path has
/// segments, then the whole path the run requested. Hurl (curl) removes dot
/// segments before sending, and they climb no higher than the root, so
/// `base=http://h:8080/` sends what `base=http://h:8080` does, instead of
/// `//books`; a `base` with the target's path (`http://h/api`, `/api/`)
/// does too.
fn after_base(target: &str, path: &str) -> String {
    let Ok(target) = url::Url::parse(target) else {
        return path.to_string();
    };
    let root = target.path();
    let depth = root.split('/').filter(|s| !s.is_empty()).count();
    // As the engine joins them: an empty path is the target itself.
    let whole = if path.is_empty() {
        root.to_string()
    } else if path.starts_with('/') {
        format!("{}{path}", root.trim_end_matches('/'))
    } else {
        format!("{}/{path}", root.trim_end_matches('/'))
    };
    format!("{}{whole}", "/..".repeat(depth + 1))
}

/// Renders `script` as a Hurl file; `title` heads it as a comment. The
/// steps send `credentials` as variables, which the header names.
pub fn render(script: &Script, title: &str, credentials: &Credentials) -> String {
    let mut out = String::new();
    for line in title.lines() {
        out.push_str(&comment(line));
    }
    // The credentials this file's steps send, once each, in order.
    let mut used: Vec<&str> = Vec::new();
    for step in &script.steps {
        let (headers, query) = credentials.of(step);
        for (_, var) in headers.iter().chain(query) {
            if !used.contains(&var.as_str()) {
                used.push(var);
            }
        }
    }
    let mut run = vec![
        "hurl".to_string(),
        "--test".to_string(),
        "--variable".to_string(),
        format!("base={}", script.target.trim_end_matches('/')),
    ];
    for var in &used {
        run.push("--secret".to_string());
        run.push(format!("{var}=…"));
    }
    out.push_str(&comment(&format!(
        "Written by Cartograph {}; run: {} FILE",
        env!("CARGO_PKG_VERSION"),
        crate::model::text::shell_command(run.iter().map(String::as_str))
    )));
    out.push_str(&comment(
        "(the /.. before each path makes a trailing slash in base harmless)",
    ));
    if !used.is_empty() {
        out.push_str(&comment(
            "Credentials are never written here: give each variable its value (--secret keeps it out of Hurl's output; --variable, or HURL_SECRET_<name> / HURL_VARIABLE_<name> in the environment, works too):",
        ));
        for (var, what) in credentials.variables() {
            if used.contains(&var.as_str()) {
                out.push_str(&comment(&format!("  {var}: {what}")));
            }
        }
    }
    out.push('\n');
    // Hurl knows the methods it can send by their letters: anything else
    // cannot be written, and the test is left out whole.
    if let Some(step) = script
        .steps
        .iter()
        .find(|s| s.method.is_empty() || !s.method.chars().all(|c| c.is_ascii_uppercase()))
    {
        out.push_str(&comment(&format!(
            "Left out: {} sends the method {:?}, which a Hurl file cannot hold.",
            step.operation, step.method
        )));
        return out;
    }
    // The variables earlier steps captured: only these are `{{…}}` to fill.
    let mut known: HashSet<&str> = HashSet::new();
    for step in &script.steps {
        out.push_str(&comment(&step.operation));
        if let Some(b) = &step.breach {
            out.push_str(&comment(&format!("Deliberately: {b}")));
        }
        match step.identity.as_deref() {
            Some(crate::execution::identities::ANONYMOUS) => {
                out.push_str(&comment("Sent as the anonymous caller: no credentials"))
            }
            Some(name) => out.push_str(&comment(&format!("Sent as identity {name}"))),
            None => {}
        }
        // Hurl squashes `/./` and `/../` unless told not to: a path that
        // holds them goes as the run sent it, right after `base` (whose
        // trailing slash it then cannot climb out of).
        let dotted = step
            .path
            .split('?')
            .next()
            .unwrap_or("")
            .split('/')
            .any(|seg| seg == "." || seg == "..");
        let after = if dotted {
            step.path.clone()
        } else {
            after_base(&script.target, &step.path)
        };
        out.push_str(&format!(
            "{} {{{{base}}}}{}\n",
            step.method,
            url(&after, &known)
        ));
        for (name, v) in &step.headers {
            // The loader refuses such names; one that came another way is
            // still never written.
            if !crate::model::headers::is_token(name) {
                continue;
            }
            out.push_str(&format!("{}: {}\n", key(name), value(v, &known)));
        }
        let (auth, query) = credentials.of(step);
        for (name, var) in auth {
            out.push_str(&format!("{}: {{{{{var}}}}}\n", key(name)));
        }
        if let Some(ct) = &step.content_type {
            out.push_str(&format!("Content-Type: {}\n", value(ct, &known)));
        }
        // The run followed redirects but for operations that document one
        // (their redirect is the answer): Hurl does not unless told, and
        // would meet the 302 where the run recorded what came after it.
        let follow = !script.direct.contains(&step.operation);
        if dotted || follow {
            out.push_str("[Options]\n");
        }
        if dotted {
            out.push_str("path-as-is: true\n");
        }
        if follow {
            out.push_str("location: true\n");
        }
        if !query.is_empty() {
            out.push_str("[QueryStringParams]\n");
            for (name, var) in query {
                out.push_str(&format!("{}: {{{{{var}}}}}\n", key(name)));
            }
        }
        if let Some(body) = &step.body {
            let trimmed = body.trim_start();
            let json = step
                .content_type
                .as_deref()
                .is_some_and(crate::model::is_json_mime);
            let templates = pieces(body, &known).iter().any(|(_, v)| v.is_some());
            // A negative test's body may be JSON cut short: Hurl refuses to
            // read that as a JSON body, so it goes as raw text.
            if json
                && (trimmed.starts_with('{') || trimmed.starts_with('['))
                && !reads_as_a_section(trimmed)
                && !body.contains('\n')
                && parses_with_captures(body, &known)
            {
                out.push_str(&literal_braces(body, &known));
                out.push('\n');
            } else if raw_safe(body, &known) {
                out.push_str("```\n");
                out.push_str(body);
                if !body.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str("```\n");
            } else if !templates {
                // Exactly the bytes sent, none of them read as Hurl.
                use base64::Engine;
                out.push_str(&format!(
                    "base64,{};\n",
                    base64::engine::general_purpose::STANDARD.encode(body)
                ));
            } else {
                out.push_str(&comment(
                    "The body is left out: it holds ``` , {{ or control characters, which a Hurl raw string cannot hold, besides captured values.",
                ));
            }
        }
        match step.status {
            Some(s) => out.push_str(&format!("HTTP {s}\n")),
            None => out.push_str("HTTP *\n"),
        }
        if !step.captures.is_empty() {
            out.push_str("[Captures]\n");
            for c in &step.captures {
                let query = match &c.from {
                    Source::LocationId => {
                        format!(
                            "header \"Location\" regex {}",
                            quoted("([^/?#]+)/?(?:[?#].*)?$")
                        )
                    }
                    Source::Json { pointer } => format!("jsonpath {}", quoted(&jsonpath(pointer))),
                };
                out.push_str(&format!("{}: {query}\n", key(&c.var)));
            }
        }
        for c in &step.captures {
            if variable_name(&c.var) {
                known.insert(c.var.as_str());
            }
        }
        if step.graphql_clean {
            out.push_str("[Asserts]\njsonpath \"$.errors\" not exists\n");
        }
        out.push('\n');
    }
    out
}

/// [`render`] with every secret taken out of the bodies first: a body
/// written as base64 hides its text from the redaction of the whole file.
pub fn render_redacted(
    script: &Script,
    title: &str,
    credentials: &Credentials,
    secrets: &Secrets,
) -> String {
    let mut script = script.clone();
    for step in &mut script.steps {
        if let Some(body) = &mut step.body
            && let std::borrow::Cow::Owned(clean) = secrets.redact(body)
        {
            *body = clean;
        }
    }
    render(&script, title, credentials)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reproduce::{Capture, Step};

    fn known<'a>(names: &[&'a str]) -> HashSet<&'a str> {
        names.iter().copied().collect()
    }

    #[test]
    fn braces_in_strings_are_not_templates() {
        let k = known(&["b_id"]);
        assert_eq!(literal_braces(r#"{"a":{{b_id}}}"#, &k), r#"{"a":{{b_id}}}"#);
        assert_eq!(
            literal_braces(r#"{"query":"{ f(x: \"{{\") { a } }"}"#, &k),
            r#"{"query":"{ f(x: \"{\u007b\") { a } }"}"#
        );
        // A name no step captured is text, not a template.
        assert_eq!(
            literal_braces(r#"{"a":"{{base}}"}"#, &k),
            r#"{"a":"{\u007bbase}}"}"#
        );
    }

    #[test]
    fn paths_climb_to_the_root_before_the_targets_path() {
        assert_eq!(after_base("http://h:8080/", "/books/1"), "/../books/1");
        assert_eq!(after_base("http://h:8080", "/books?x=1"), "/../books?x=1");
        assert_eq!(after_base("http://h/api/", "/books"), "/../../api/books");
        assert_eq!(after_base("http://h/graphql", ""), "/../../graphql");
        assert_eq!(after_base("http://h/graphql/", ""), "/../../graphql/");
    }

    #[test]
    fn pointers_become_jsonpaths() {
        assert_eq!(jsonpath("/0/id"), "$[0]['id']");
        assert_eq!(jsonpath("/a~1b/it's"), r"$['a/b']['it\'s']");
    }

    #[test]
    fn quoted_strings_escape_what_hurl_reads() {
        assert_eq!(quoted(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(quoted("{{x}}\n#"), r#""\u{7b}\u{7b}x}}\n#""#);
    }

    #[test]
    fn urls_hold_only_what_hurl_takes() {
        let k = known(&["id"]);
        assert_eq!(url("/a/{{id}}?q=1&r=x%20y", &k), "/a/{{id}}?q=1&r=x%20y");
        assert_eq!(
            url("/a b/#c/{{base}}/\n[Options]/é\u{1b}\"`<>|^\\", &k),
            "/a%20b/%23c/%7B%7Bbase%7D%7D/%0A[Options]/%C3%A9%1B%22%60%3C%3E%7C%5E%5C"
        );
    }

    #[test]
    fn header_names_and_values_are_escaped() {
        let k = known(&["token"]);
        assert_eq!(key("X-Api-Key"), "X-Api-Key");
        assert_eq!(
            key("[Options]\noutput: x#"),
            r"\u{5b}Options\u{5d}\noutput\:\u{20}x\#"
        );
        assert_eq!(value("Bearer {{token}}", &k), "Bearer {{token}}");
        assert_eq!(
            value(" a #b {{base}} \\ \n[Options]\r ", &k),
            r"\u{20}a \#b \u{7b}\u{7b}base}} \\ \n[Options]\r\u{20}"
        );
        assert_eq!(value("", &k), "");
    }

    #[test]
    fn raw_bodies_that_hurl_would_misread_go_as_base64() {
        let k = known(&[]);
        assert!(raw_safe("plain\ntext\twith tab", &k));
        assert!(!raw_safe("x\n```\n[Options]\n", &k));
        assert!(!raw_safe("{{base}}", &k));
        assert!(!raw_safe("bell \u{7}", &k));
        assert!(raw_safe("{{id}}", &known(&["id"])));
    }

    fn step(operation: &str, method: &str, path: &str) -> Step {
        Step {
            operation: operation.into(),
            method: method.into(),
            path: path.into(),
            headers: vec![],
            content_type: None,
            body: None,
            graphql_query: false,
            breach: None,
            identity: None,
            captures: vec![],
            status: Some(200),
            graphql_clean: false,
        }
    }

    #[test]
    fn hostile_text_stays_data() {
        let evil = "\n[Options]\noutput: /tmp/pwned\n```\n{{base}} # \u{1b}[2J";
        let mut make = step(&format!("make{evil}"), "POST", &format!("/m/{evil}"));
        make.headers = vec![(format!("X{evil}"), format!("v{evil}"))];
        make.content_type = Some(format!("text/plain{evil}"));
        make.body = Some(format!("body{evil}"));
        make.captures = vec![Capture {
            var: "id".into(),
            from: Source::Json {
                pointer: format!("/{evil}"),
            },
        }];
        let mut read = step(evil, "GET", "/m/{{id}}");
        read.body = Some(format!("{{{{id}}}}{evil}"));
        read.content_type = Some("text/plain".into());
        let script = Script {
            target: format!("http://h/{evil}"),
            fault: None,
            steps: vec![make, read],
            standalone: true,
            unmade: vec![],
            not_standalone: vec![],
            direct: Vec::new(),
            planted: 0,
            fresh: None,
        };
        let text = render(&script, &format!("Covers: {evil}"), &Credentials::default());
        // A header name that is no HTTP token is never written.
        assert!(!text.lines().any(|l| l.starts_with("X\\n")), "{text}");
        for line in text.lines() {
            assert!(!line.contains(|c: char| c.is_control()), "{line:?}");
            // Each line is a comment, an entry's own syntax, or an escaped value.
            let ours = line.is_empty()
                || line.starts_with("# ")
                // The target's path comes first, encoded (a trailing slash
                // in base climbs back out with the `/..`s).
                || line
                    .strip_prefix("POST ")
                    .is_some_and(|r| r.starts_with("{{base}}/../") && !r.contains(' '))
                || line
                    .strip_prefix("GET ")
                    .is_some_and(|r| r.starts_with("{{base}}/../") && r.contains("/m/{{id}}"))
                || line.starts_with("Content-Type: text/plain")
                || line.starts_with("base64,")
                || line == "HTTP 200"
                || line == "[Options]"
                || line == "location: true"
                || line == "[Captures]"
                || line.starts_with("id: jsonpath \"$['\\n[Options]");
            assert!(ours, "{line}\n{text}");
        }
        // The body with a captured value and text a raw string cannot hold
        // is left out, saying so.
        assert!(text.contains("# The body is left out"), "{text}");
    }

    #[test]
    fn an_array_of_a_bare_word_is_no_section_and_redirects_are_followed_as_the_run_did() {
        let mut array = step("createLogs", "POST", "/logs");
        array.body = Some("[null]".into());
        array.content_type = Some("application/json".into());
        let mut login = step("login", "POST", "/login");
        login.body = Some("[true,1]".into());
        login.content_type = Some("application/json".into());
        let script = Script {
            target: "http://h".into(),
            fault: None,
            steps: vec![array, login],
            standalone: true,
            unmade: vec![],
            not_standalone: vec![],
            // `login` documents its redirect: the run did not follow it.
            direct: vec!["login".into()],
            planted: 0,
            fresh: None,
        };
        let text = render(&script, "t", &Credentials::default());
        // Hurl reads a line `[null]` outside a raw string as a section
        // header and refuses the file.
        assert!(text.contains("```\n[null]\n```\n"), "{text}");
        assert!(text.contains("```\n[true,1]\n```\n"), "{text}");
        let (first, second) = text.split_once("POST {{base}}/../login").unwrap();
        assert!(first.contains("[Options]\nlocation: true\n"), "{text}");
        assert!(!second.contains("location: true"), "{text}");
    }

    #[test]
    fn methods_hurl_cannot_send_leave_the_test_out() {
        let script = Script {
            target: "http://h".into(),
            fault: None,
            steps: vec![step("x", "GET\n[Options]", "/")],
            standalone: true,
            unmade: vec![],
            not_standalone: vec![],
            direct: Vec::new(),
            planted: 0,
            fresh: None,
        };
        let text = render(&script, "t", &Credentials::default());
        assert!(
            text.lines().all(|l| l.is_empty() || l.starts_with("# ")),
            "{text}"
        );
    }

    #[test]
    fn secrets_leave_bodies_before_base64_hides_them() {
        let secrets = Secrets::new();
        secrets.add("a-long-secret-value");
        let mut s = step("x", "POST", "/");
        s.body = Some("```a-long-secret-value```".into());
        let script = Script {
            target: "http://h".into(),
            fault: None,
            steps: vec![s],
            standalone: true,
            unmade: vec![],
            not_standalone: vec![],
            direct: Vec::new(),
            planted: 0,
            fresh: None,
        };
        use base64::Engine;
        let text = render_redacted(&script, "t", &Credentials::default(), &secrets);
        let b64 = text
            .lines()
            .find_map(|l| l.strip_prefix("base64,"))
            .unwrap()
            .trim_end_matches(';');
        let body = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap();
        assert_eq!(String::from_utf8(body).unwrap(), "```[REDACTED]```");
    }

    #[test]
    fn credentials_are_variables_named_in_the_header_and_absent_where_a_test_drops_them() {
        let credentials = Credentials::new(
            &["Authorization".into(), "X-Api-Key".into()],
            &["api_key".into()],
            &[("bob".into(), vec!["Authorization".into()])],
        );
        assert_eq!(
            credentials.headers[0],
            ("Authorization".into(), "cartograph_authorization".into())
        );
        assert_eq!(credentials.query[0].1, "cartograph_query_api_key");
        assert_eq!(
            credentials.identities[0].1[0].1,
            "cartograph_identity_bob_authorization"
        );
        let mine = step("list", "GET", "/notes?x=1");
        let mut bare = step("listBare", "GET", "/notes");
        bare.breach = Some(crate::execution::Breach {
            kind: crate::execution::BreachKind::NoCredentials,
            input: "credentials bearerAuth".into(),
            class: None,
        });
        let mut anonymous = step("listAnon", "GET", "/notes");
        anonymous.identity = Some(crate::execution::identities::ANONYMOUS.into());
        let mut bobs = step("listBob", "GET", "/notes");
        bobs.identity = Some("bob".into());
        let script = Script {
            target: "http://h".into(),
            fault: None,
            steps: vec![mine, bare, anonymous, bobs],
            standalone: true,
            unmade: vec![],
            not_standalone: vec![],
            direct: Vec::new(),
            planted: 0,
            fresh: None,
        };
        let text = render(&script, "t", &credentials);
        let entries: Vec<&str> = text.split("\n\n").collect();
        // The header names every variable the file uses, with what it is.
        assert!(
            entries[0].contains("--secret 'cartograph_authorization=…'")
                && entries[0].contains(
                    "#   cartograph_authorization: the value of the run's Authorization header"
                )
                && entries[0].contains("#   cartograph_identity_bob_authorization:"),
            "{text}"
        );
        assert!(
            entries[1].contains(
                "Authorization: {{cartograph_authorization}}\nX-Api-Key: {{cartograph_x_api_key}}\n"
            ) && entries[1]
                .contains("[QueryStringParams]\napi_key: {{cartograph_query_api_key}}\n"),
            "{text}"
        );
        for e in &entries[2..4] {
            assert!(!e.contains("cartograph_"), "{e}");
        }
        assert!(
            entries[4].contains("Authorization: {{cartograph_identity_bob_authorization}}")
                && !entries[4].contains("{{cartograph_authorization}}")
                && !entries[4].contains("QueryStringParams"),
            "{text}"
        );
        // Without credentials, a file says nothing of them.
        let plain = render(&script, "t", &Credentials::default());
        assert!(!plain.contains("cartograph_"), "{plain}");
        // Two names that make one variable are told apart.
        let twins = Credentials::new(&["X-Key".into(), "X_Key".into()], &[], &[]);
        assert_eq!(twins.headers[1].1, "cartograph_x_key_2");
    }

    #[test]
    fn dot_segments_are_sent_as_they_are() {
        let script = crate::reproduce::Script {
            target: "http://127.0.0.1:1".into(),
            fault: None,
            steps: vec![crate::reproduce::Step {
                operation: "op".into(),
                method: "GET".into(),
                path: "/files/../x/".into(),
                headers: vec![],
                content_type: None,
                body: None,
                graphql_query: false,
                breach: None,
                identity: None,
                captures: vec![],
                status: Some(200),
                graphql_clean: false,
            }],
            standalone: true,
            unmade: vec![],
            not_standalone: vec![],
            direct: Vec::new(),
            planted: 0,
            fresh: None,
        };
        let text = render(&script, "t", &Credentials::default());
        assert!(
            text.contains(
                "GET {{base}}/files/../x/\n[Options]\npath-as-is: true\nlocation: true\nHTTP 200"
            ),
            "{text}"
        );
    }
}
