//! A script as a Hurl file: one entry per step, `[Captures]` for carried
//! values, and the status the run saw asserted. The target comes from the
//! `base` variable: `hurl --test --variable base=http://127.0.0.1:8080 *.hurl`.

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

/// Renders `script` as a Hurl file; `title` heads it as a comment.
pub fn render(script: &Script, title: &str) -> String {
    let mut out = String::new();
    for line in title.lines() {
        out.push_str(&format!("# {line}\n"));
    }
    out.push_str(&format!(
        "# Written by Cartograph {}; run: hurl --test --variable base={} FILE\n\n",
        env!("CARGO_PKG_VERSION"),
        script.target
    ));
    for step in &script.steps {
        out.push_str(&format!("# {}\n", step.operation));
        if let Some(b) = &step.breach {
            out.push_str(&format!(
                "# Deliberately: {}\n",
                b.to_string().replace('\n', " ")
            ));
        }
        out.push_str(&format!("{} {{{{base}}}}{}\n", step.method, step.path));
        for (name, value) in &step.headers {
            out.push_str(&format!("{name}: {value}\n"));
        }
        if let Some(ct) = &step.content_type {
            out.push_str(&format!("Content-Type: {ct}\n"));
        }
        // Hurl squashes `/./` and `/../` unless told not to: the path goes
        // as the run sent it.
        let path = step.path.split('?').next().unwrap_or("");
        if path.split('/').any(|seg| seg == "." || seg == "..") {
            out.push_str("[Options]\npath-as-is: true\n");
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
    fn pointers_become_jsonpaths() {
        assert_eq!(jsonpath("/0/id"), "$[0]['id']");
        assert_eq!(jsonpath("/a~1b/it's"), r"$['a/b']['it\'s']");
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
                captures: vec![],
                status: Some(200),
                graphql_clean: false,
            }],
            standalone: true,
            unmade: vec![],
            not_standalone: vec![],
            direct: Vec::new(),
        };
        let text = render(&script, "t");
        assert!(
            text.contains("GET {{base}}/files/../x/\n[Options]\npath-as-is: true\nHTTP 200"),
            "{text}"
        );
    }
}
