//! A script as a Hurl file: one entry per step, `[Captures]` for carried
//! values, and the status the run saw asserted. The target comes from the
//! `base` variable: `hurl --test --variable base=http://127.0.0.1:8080 *.hurl`
//! (with or without a trailing slash).

use super::{Script, Source};

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

/// A Hurl quoted string.
fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// A JSON body with `{{` that is not one of ours written so Hurl does not
/// read a template: inside a JSON string `{` may be spelled `\u007b`, and
/// outside strings JSON never has two opening braces in a row before a key.
fn literal_braces(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(at) = rest.find("{{") {
        let ours = rest[at + 2..].split("}}").next().is_some_and(|v| {
            !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
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

/// Whether `body` is JSON once each `{{var}}` stands for a value.
fn parses_with_captures(body: &str) -> bool {
    let mut text = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(at) = rest.find("{{") {
        let Some(end) = rest[at..].find("}}") else {
            break;
        };
        text.push_str(&rest[..at]);
        text.push('0');
        rest = &rest[at + end + 2..];
    }
    text.push_str(rest);
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

/// Renders `script` as a Hurl file; `title` heads it as a comment.
pub fn render(script: &Script, title: &str) -> String {
    let mut out = String::new();
    for line in title.lines() {
        out.push_str(&format!("# {line}\n"));
    }
    out.push_str(&format!(
        "# Written by Cartograph {}; run: hurl --test --variable base={} FILE\n\
         # (the /.. before each path makes a trailing slash in base harmless)\n\n",
        env!("CARGO_PKG_VERSION"),
        script.target.trim_end_matches('/')
    ));
    for step in &script.steps {
        out.push_str(&format!("# {}\n", step.operation));
        if let Some(b) = &step.breach {
            out.push_str(&format!(
                "# Deliberately: {}\n",
                b.to_string().replace('\n', " ")
            ));
        }
        out.push_str(&format!(
            "{} {{{{base}}}}{}\n",
            step.method,
            after_base(&script.target, &step.path)
        ));
        for (name, value) in &step.headers {
            out.push_str(&format!("{name}: {value}\n"));
        }
        if let Some(ct) = &step.content_type {
            out.push_str(&format!("Content-Type: {ct}\n"));
        }
        if let Some(body) = &step.body {
            let trimmed = body.trim_start();
            let json = step
                .content_type
                .as_deref()
                .is_some_and(crate::model::is_json_mime);
            // A negative test's body may be JSON cut short: Hurl refuses to
            // read that as a JSON body, so it goes as raw text.
            if json
                && (trimmed.starts_with('{') || trimmed.starts_with('['))
                && !body.contains('\n')
                && parses_with_captures(body)
            {
                out.push_str(&literal_braces(body));
                out.push('\n');
            } else {
                out.push_str("```\n");
                out.push_str(body);
                if !body.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str("```\n");
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
                out.push_str(&format!("{}: {query}\n", c.var));
            }
        }
        if step.graphql_clean {
            out.push_str("[Asserts]\njsonpath \"$.errors\" not exists\n");
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braces_in_strings_are_not_templates() {
        assert_eq!(literal_braces(r#"{"a":{{b_id}}}"#), r#"{"a":{{b_id}}}"#);
        assert_eq!(
            literal_braces(r#"{"query":"{ f(x: \"{{\") { a } }"}"#),
            r#"{"query":"{ f(x: \"{\u007b\") { a } }"}"#
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
}
