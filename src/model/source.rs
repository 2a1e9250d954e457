//! The description's own document, as parsed: where findings point back to
//! (the schema a body broke, the response an answer lacks), and what the
//! spec fixes change. Only the root file is kept: a place reached through a
//! `$ref` into another file is not in it, and is reported as unknown.

use std::sync::Arc;

use serde_json::Value;

/// How many `$ref`s in a row are followed before giving up (a cycle).
const MAX_HOPS: usize = 16;

/// The root document of an OpenAPI description, shared by every stage that
/// reads it.
#[derive(Clone)]
pub struct SourceDocument(Arc<Value>);

impl std::fmt::Debug for SourceDocument {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SourceDocument(..)")
    }
}

impl SourceDocument {
    /// Keeps `root`.
    pub fn new(root: Value) -> SourceDocument {
        SourceDocument(Arc::new(root))
    }

    /// The whole document.
    pub fn root(&self) -> &Value {
        &self.0
    }

    /// The value at `tokens` (unescaped JSON pointer tokens), no `$ref` followed.
    pub fn get(&self, tokens: &[String]) -> Option<&Value> {
        get(&self.0, tokens)
    }

    /// Where the chain of `$ref`s starting at `at` ends (`at` itself when it
    /// is no reference); `None` when a reference leaves this file, does not
    /// resolve, or loops.
    pub fn follow(&self, at: &[String]) -> Option<Vec<String>> {
        follow(&self.0, at)
    }

    /// `tokens` walked from the root, following the `$ref`s of the nodes
    /// passed through (a path item or response written as a reference), but
    /// not of the node reached.
    pub fn walk(&self, tokens: &[String]) -> Option<Vec<String>> {
        walk(&self.0, tokens)
    }
}

/// The value at `tokens` in `root`.
pub fn get<'a>(root: &'a Value, tokens: &[String]) -> Option<&'a Value> {
    let mut at = root;
    for t in tokens {
        at = match at {
            Value::Object(map) => map.get(t)?,
            Value::Array(items) => items.get(t.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(at)
}

/// See [`SourceDocument::follow`].
pub fn follow(root: &Value, at: &[String]) -> Option<Vec<String>> {
    let mut at = at.to_vec();
    for _ in 0..MAX_HOPS {
        let node = get(root, &at)?;
        let Some(reference) = node.get("$ref").and_then(Value::as_str) else {
            return Some(at);
        };
        at = local_target(reference)?;
    }
    None
}

/// See [`SourceDocument::walk`].
pub fn walk(root: &Value, tokens: &[String]) -> Option<Vec<String>> {
    let mut at: Vec<String> = Vec::new();
    for t in tokens {
        at = follow(root, &at)?;
        at.push(t.clone());
        get(root, &at)?;
    }
    Some(at)
}

/// The tokens of a `$ref` into this same file (`#/components/schemas/Pet`).
fn local_target(reference: &str) -> Option<Vec<String>> {
    let fragment = reference.strip_prefix('#')?;
    let decoded = percent_encoding::percent_decode_str(fragment)
        .decode_utf8()
        .ok()?;
    Some(tokens(&decoded))
}

/// The unescaped tokens of a JSON pointer, with or without its leading `#`.
pub fn tokens(pointer: &str) -> Vec<String> {
    let pointer = pointer.strip_prefix('#').unwrap_or(pointer);
    if pointer.is_empty() {
        return Vec::new();
    }
    pointer
        .split('/')
        .skip(1)
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect()
}

/// A JSON pointer written as a URI fragment (`#/components/schemas/Pet`).
pub fn pointer(tokens: &[String]) -> String {
    let mut out = String::from("#");
    for t in tokens {
        out.push('/');
        out.push_str(&super::text::pointer_token(t));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn t(p: &str) -> Vec<String> {
        tokens(p)
    }

    #[test]
    fn pointers_round_trip_with_escapes() {
        let p = "#/paths/~1books~1{id}~1/get/responses/200/content/a~0b";
        assert_eq!(
            t(p),
            [
                "paths",
                "/books/{id}/",
                "get",
                "responses",
                "200",
                "content",
                "a~b"
            ]
        );
        assert_eq!(pointer(&t(p)), p);
        assert!(t("#").is_empty() && t("").is_empty());
    }

    #[test]
    fn references_are_followed_within_the_file_only() {
        let doc = SourceDocument::new(json!({
            "paths": {"/a": {"$ref": "#/x-items/a"}},
            "x-items": {"a": {"get": {"responses": {"200": {"$ref": "#/components/responses/Ok%20It"}}}}},
            "components": {"responses": {"Ok It": {"description": "ok"}, "Far": {"$ref": "other.yaml#/Ok"}}},
            "loop": {"$ref": "#/loop"}
        }));
        assert_eq!(
            doc.walk(&t("#/paths/~1a/get/responses/200")).unwrap(),
            t("#/x-items/a/get/responses/200")
        );
        assert_eq!(
            doc.follow(&t("#/x-items/a/get/responses/200")).unwrap(),
            t("#/components/responses/Ok It")
        );
        assert_eq!(doc.follow(&t("#/components/responses/Far")), None);
        assert_eq!(doc.follow(&t("#/loop")), None);
        assert_eq!(doc.walk(&t("#/paths/~1b")), None);
    }
}
