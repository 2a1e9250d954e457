//! Parsing JSON/YAML text, and the set of documents a description spans through
//! relative `$ref`s.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::SpecError;

/// Parses JSON or YAML text into a JSON value, with a located error on failure.
pub fn parse_text(text: &str, path: &Path) -> Result<Value, SpecError> {
    let text = text.trim_start_matches('\u{feff}');
    let first = text.trim_start().chars().next();
    if matches!(first, Some('{') | Some('[')) {
        match serde_json::from_str::<Value>(text) {
            Ok(v) => return Ok(v),
            // JSON with a stray syntax error is also tried as YAML (a superset), but
            // the JSON position is the more useful one to report.
            Err(json_err) => {
                if let Ok(v) = parse_yaml(text) {
                    return Ok(v);
                }
                let hint = if json_err.classify() == serde_json::error::Category::Eof {
                    "the text ends before its last `{` or `[` closes: the file may be cut short; fetch or copy it again"
                } else {
                    "fix the syntax at that position"
                };
                return Err(SpecError::new(path, format!("not valid JSON: {json_err}"))
                    .at(format!("{}:{}", json_err.line(), json_err.column()))
                    .hint(hint));
            }
        }
    }
    parse_yaml(text).map_err(|e| {
        let mark = e.marker();
        SpecError::new(path, format!("not valid YAML or JSON: {}", e.info()))
            .at(format!("{}:{}", mark.line(), mark.col() + 1))
            .hint("fix the syntax at that position")
    })
}

/// YAML through yaml-rust2, a YAML 1.2 parser that accepts what real descriptions
/// contain and stricter parsers reject: tabs inside block scalars, C1 control
/// characters in strings, integers beyond 64 bits (kept as floating point).
fn parse_yaml(text: &str) -> Result<Value, yaml_rust2::ScanError> {
    let docs = yaml_rust2::YamlLoader::load_from_str(text)?;
    Ok(docs.into_iter().next().map_or(Value::Null, yaml_to_json))
}

fn yaml_to_json(v: yaml_rust2::Yaml) -> Value {
    use yaml_rust2::Yaml as Y;
    match v {
        Y::Null | Y::BadValue | Y::Alias(_) => Value::Null,
        Y::Boolean(b) => Value::Bool(b),
        Y::Integer(i) => Value::from(i),
        Y::Real(text) => match parse_real(&text) {
            Some(n) => Value::Number(n),
            None => Value::String(text),
        },
        Y::String(s) => Value::String(s),
        Y::Array(items) => Value::Array(items.into_iter().map(yaml_to_json).collect()),
        Y::Hash(map) => {
            let mut out = serde_json::Map::with_capacity(map.len());
            let mut merged = Vec::new();
            for (k, v) in map {
                if matches!(&k, Y::String(s) if s == "<<") {
                    merged.push(v);
                } else {
                    out.insert(yaml_key(k), yaml_to_json(v));
                }
            }
            // A merge key (`<<: *common`, `<<: [*a, *b]`) adds the entries of
            // the mappings it names that the mapping does not set itself;
            // of several, the first wins.
            for v in merged {
                let sources = match v {
                    Y::Array(items) => items,
                    other => vec![other],
                };
                for source in sources {
                    if let Value::Object(entries) = yaml_to_json(source) {
                        for (k, v) in entries {
                            out.entry(k).or_insert(v);
                        }
                    }
                }
            }
            Value::Object(out)
        }
    }
}

fn parse_real(text: &str) -> Option<serde_json::Number> {
    let lower = text.to_ascii_lowercase();
    let f: f64 = match lower.trim_start_matches('+') {
        ".inf" | "-.inf" | ".nan" => return None,
        t => t.parse().ok()?,
    };
    serde_json::Number::from_f64(f)
}

/// Mapping keys become strings: `200:` and `true:` are keys in real documents.
fn yaml_key(k: yaml_rust2::Yaml) -> String {
    use yaml_rust2::Yaml as Y;
    match k {
        Y::String(s) | Y::Real(s) => s,
        Y::Integer(i) => i.to_string(),
        Y::Boolean(b) => b.to_string(),
        Y::Null | Y::BadValue | Y::Alias(_) => "null".into(),
        other => format!("{other:?}"),
    }
}

/// Index of a document in a [`DocSet`].
pub(super) type DocId = usize;

/// One parsed file.
pub(super) struct Doc {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its content.
    pub value: Value,
}

/// The root document and every file reachable from it through `$ref`s.
pub(super) struct DocSet {
    /// The documents; index 0 is the root.
    pub docs: Vec<Doc>,
    by_path: HashMap<PathBuf, DocId>,
    /// Referenced files that could not be loaded, and why.
    missing: HashMap<PathBuf, String>,
}

/// Where a `$ref` points: a document and a JSON pointer inside it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct Target {
    /// The document.
    pub doc: DocId,
    /// The pointer, without the leading `#` (`/components/schemas/Pet`, or empty).
    pub pointer: String,
}

impl DocSet {
    /// Builds the set from the root document, loading every file its `$ref`s name,
    /// transitively. A file that cannot be loaded is remembered, not reported: a
    /// reference in a part that is never read (a description, an extension) costs
    /// nothing, and one that is read fails there, with a warning at that place.
    pub(super) fn load(root: Value, root_path: &Path) -> DocSet {
        let mut set = DocSet {
            docs: vec![Doc {
                path: root_path.to_path_buf(),
                value: root,
            }],
            by_path: HashMap::new(),
            missing: HashMap::new(),
        };
        set.by_path.insert(normalise(root_path), 0);
        let mut next = 0;
        while next < set.docs.len() {
            let mut files = Vec::new();
            collect_external_files(&set.docs[next].value, &mut files);
            let base = set.docs[next].path.clone();
            for file in files {
                let path = normalise(&resolve_relative(&base, &file));
                if set.by_path.contains_key(&path) || set.missing.contains_key(&path) {
                    continue;
                }
                if file.starts_with("http://") || file.starts_with("https://") {
                    // Never fetched: loading a description must not touch the network.
                    continue;
                }
                let value = match std::fs::read(&path) {
                    Ok(bytes) => match parse_text(&String::from_utf8_lossy(&bytes), &path) {
                        Ok(v) => v,
                        Err(e) => {
                            set.missing.insert(path, format!("cannot be parsed: {e}"));
                            continue;
                        }
                    },
                    Err(e) => {
                        set.missing.insert(
                            path.clone(),
                            format!("{} cannot be read: {e}", path.display()),
                        );
                        continue;
                    }
                };
                let id = set.docs.len();
                set.by_path.insert(path.clone(), id);
                set.docs.push(Doc { path, value });
            }
            next += 1;
        }
        set
    }

    /// Resolves a `$ref` string written in document `from`.
    pub(super) fn target(&self, from: DocId, reference: &str) -> Option<Target> {
        let (file, fragment) = match reference.split_once('#') {
            Some((f, p)) => (f, p),
            None => (reference, ""),
        };
        let doc = if file.is_empty() {
            from
        } else {
            let path = normalise(&resolve_relative(&self.docs[from].path, file));
            *self.by_path.get(&path)?
        };
        let pointer = percent_decode(fragment);
        self.get(doc, &pointer)?;
        Some(Target { doc, pointer })
    }

    /// Why a `$ref` written in document `from` does not resolve, for messages.
    pub(super) fn unresolvable(&self, from: DocId, reference: &str) -> String {
        let file = reference.split('#').next().unwrap_or("");
        if !file.is_empty() {
            let path = normalise(&resolve_relative(&self.docs[from].path, file));
            if let Some(why) = self.missing.get(&path) {
                return format!("unresolvable $ref {reference:?}: {why}");
            }
        }
        format!("unresolvable $ref {reference:?}: nothing at that location")
    }

    /// The value at a pointer.
    pub(super) fn get(&self, doc: DocId, pointer: &str) -> Option<&Value> {
        let root = &self.docs.get(doc)?.value;
        if pointer.is_empty() || pointer == "/" {
            Some(root)
        } else {
            root.pointer(pointer)
        }
    }

    /// The path of a document.
    pub(super) fn path(&self, doc: DocId) -> &Path {
        &self.docs[doc].path
    }
}

/// The files `$ref`s in `v` name (`common.yaml`, not `#/components/…`), once each.
pub(super) fn collect_external_files(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get("$ref") {
                let file = r.split('#').next().unwrap_or("");
                if !file.is_empty() && !out.iter().any(|f| f == file) {
                    out.push(file.to_string());
                }
            }
            for child in map.values() {
                collect_external_files(child, out);
            }
        }
        Value::Array(items) => {
            for child in items {
                collect_external_files(child, out);
            }
        }
        _ => {}
    }
}

fn resolve_relative(base: &Path, file: &str) -> PathBuf {
    let file = percent_decode(file);
    let dir = base.parent().unwrap_or_else(|| Path::new("."));
    dir.join(file)
}

/// Removes `.` and `..` components without touching the file system, so that the
/// same file reached by two relative routes is loaded once.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

pub(super) use crate::model::text::pointer_token as escape_pointer;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_merge_keys_add_what_the_mapping_does_not_set() {
        let text = "common: &errors\n  '400': {description: bad}\n  '404': {description: missing}\nother: &more\n  '500': {description: broken}\nresponses:\n  '200': {description: ok}\n  '404': {description: not here}\n  <<: [*errors, *more]\nsingle:\n  <<: *more\n";
        let v = parse_text(text, Path::new("t.yaml")).unwrap();
        let r = &v["responses"];
        assert_eq!(r["200"]["description"], "ok");
        assert_eq!(r["400"]["description"], "bad");
        // The mapping's own entry wins over the merged one.
        assert_eq!(r["404"]["description"], "not here");
        assert_eq!(r["500"]["description"], "broken");
        assert!(r.get("<<").is_none(), "{r}");
        assert_eq!(v["single"]["500"]["description"], "broken");
    }

    #[test]
    fn yaml_numeric_keys_become_strings() {
        let v = parse_text(
            "responses:\n  200: {description: ok}\n",
            Path::new("x.yaml"),
        )
        .unwrap();
        assert!(v["responses"]["200"].is_object());
    }

    #[test]
    fn json_syntax_error_is_located() {
        let err = parse_text("{\"a\": 1,,}", Path::new("bad.json")).unwrap_err();
        assert_eq!(err.location.as_deref(), Some("1:9"));
        assert!(err.to_string().starts_with("bad.json:1:9: not valid JSON"));
    }

    #[test]
    fn yaml_syntax_error_is_located() {
        let err = parse_text("a: [1, 2\nb: c: d\n", Path::new("bad.yaml")).unwrap_err();
        assert!(err.location.is_some(), "{err}");
    }

    #[test]
    fn percent_decoding_of_pointers() {
        assert_eq!(percent_decode("/paths/~1pets%7Bid%7D"), "/paths/~1pets{id}");
        assert_eq!(percent_decode("100%"), "100%");
    }

    #[test]
    fn normalise_collapses_parent_dirs() {
        assert_eq!(
            normalise(Path::new("a/b/../c/./d.yaml")),
            Path::new("a/c/d.yaml")
        );
    }
}
