//! JSON pointers as fault checks read them: a `*` token stands for every
//! item of an array (a fault at `/*/price` is in some item, whichever place
//! it has on this server), a value that is not there is not a value (a null
//! parent is not a null field), and integers are told from other numbers.
//! `cartograph replay` reads answers with these; the shell reproducers'
//! `json` function (jq, or python3) does exactly the same.

use serde_json::Value;

/// A pointer's tokens, unescaped (`/a~1b/0` → `["a/b", "0"]`).
pub fn tokens(pointer: &str) -> Vec<String> {
    if pointer.is_empty() {
        return Vec::new();
    }
    pointer
        .trim_start_matches('/')
        .split('/')
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect()
}

fn at<'a>(v: &'a Value, tokens: &[String], out: &mut Vec<&'a Value>) {
    let Some((first, rest)) = tokens.split_first() else {
        out.push(v);
        return;
    };
    match v {
        Value::Array(items) if first == "*" => {
            for item in items {
                at(item, rest, out);
            }
        }
        Value::Object(map) => {
            if let Some(next) = map.get(first.as_str()) {
                at(next, rest, out);
            }
        }
        Value::Array(items) => {
            if let Some(next) = index(first).and_then(|i| items.get(i)) {
                at(next, rest, out);
            }
        }
        _ => {}
    }
}

/// An array index token: digits only (`-`, `+1`, `01x` are not).
fn index(token: &str) -> Option<usize> {
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    token.parse().ok()
}

/// The values present at `pointer` in `body` (none when a parent is
/// missing, null or not a container).
pub fn values_at<'a>(body: &'a Value, pointer: &str) -> Vec<&'a Value> {
    let mut out = Vec::new();
    at(body, &tokens(pointer), &mut out);
    out
}

/// For each object or array present where `pointer`'s parent is, whether
/// it holds the pointer's last token: `false` is a member missing from an
/// object that is there.
pub fn holds(body: &Value, pointer: &str) -> Vec<bool> {
    let tokens = tokens(pointer);
    let Some((last, parents)) = tokens.split_last() else {
        return Vec::new();
    };
    let mut found = Vec::new();
    at(body, parents, &mut found);
    found
        .into_iter()
        .filter_map(|p| match p {
            Value::Object(map) => Some(map.contains_key(last.as_str())),
            Value::Array(items) => index(last).map(|i| i < items.len()),
            _ => None,
        })
        .collect()
}

/// A value's kind: jq's type names, but `integer` for a number without a
/// fractional part (as JSON Schema counts `1.0`) and `number` for the rest.
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
        other => super::json_type(other),
    }
}

/// Whether a value of `kind` is one of `allowed` (JSON Schema type names;
/// `number` allows integers too).
pub fn allowed(kind: &str, allowed: &[String]) -> bool {
    allowed
        .iter()
        .any(|a| a == kind || (a == "number" && kind == "integer"))
}

/// Whether two JSON values are equal, numbers by value (`1` and `1.0`).
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// A GraphQL response path (`data.authors[*].books[*].author`) as a pointer
/// (`/data/authors/*/books/*/author`).
pub fn from_graphql_path(path: &str) -> String {
    path.replace("[*]", ".*")
        .split('.')
        .map(|t| format!("/{}", crate::model::text::pointer_token(t)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wildcards_reach_every_item_and_missing_parents_nothing() {
        let body = json!({"data": {"books": [{"author": null}, {"author": {"name": "x"}}]}});
        assert_eq!(values_at(&body, "/data/books/*/author").len(), 2);
        assert_eq!(values_at(&body, "/data/books/1/author/name"), [&json!("x")]);
        let parent_null = json!({"data": {"book": null}});
        assert!(values_at(&parent_null, "/data/book/author").is_empty());
        assert!(holds(&parent_null, "/data/book/author").is_empty());
        let missing = json!([{"id": 1}, {"name": "n"}]);
        assert_eq!(holds(&missing, "/*/name"), [false, true]);
        assert_eq!(values_at(&json!({"a/b": 1}), "/a~1b"), [&json!(1)]);
    }

    #[test]
    fn integers_are_told_from_other_numbers() {
        assert_eq!(kind(&json!(2)), "integer");
        assert_eq!(kind(&json!(2.0)), "integer");
        assert_eq!(kind(&json!(1.5)), "number");
        assert_eq!(kind(&json!("2")), "string");
        let integer = ["integer".to_string()];
        assert!(!allowed("number", &integer));
        assert!(allowed("integer", &["number".to_string()]));
    }

    #[test]
    fn graphql_paths_become_pointers() {
        assert_eq!(
            from_graphql_path("data.authors[*].books[*].author"),
            "/data/authors/*/books/*/author"
        );
        assert_eq!(from_graphql_path("data.book"), "/data/book");
    }
}
