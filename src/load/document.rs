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
        // The limits' own refusals (nesting, alias expansion) say "refused".
        let hint = if e.info().ends_with("refused") {
            "real descriptions stay far below this: the document is malformed or hostile"
        } else {
            "fix the syntax at that position"
        };
        SpecError::new(path, format!("not valid YAML or JSON: {}", e.info()))
            .at(format!("{}:{}", mark.line(), mark.col() + 1))
            .hint(hint)
    })
}

/// YAML through yaml-rust2, a YAML 1.2 parser that accepts what real descriptions
/// contain and stricter parsers reject: tabs inside block scalars, C1 control
/// characters in strings, integers beyond 64 bits (kept as floating point).
fn parse_yaml(text: &str) -> Result<Value, yaml_rust2::ScanError> {
    Ok(load_yaml(text)?.map_or(Value::Null, yaml_to_json))
}

/// What YAML aliases may add to a document, in all, counted in nodes and
/// bytes of text: a "billion laughs" (anchors of aliases of anchors) turns
/// a few hundred bytes into gigabytes. Real descriptions alias a few
/// shared fragments, far below this.
pub(super) const ALIAS_BUDGET: usize = 1_000_000;

/// Deepest nesting of mappings and sequences: serde_json's own limit for
/// JSON (the YAML reader would otherwise recurse as deep as the text goes).
pub(super) const MAX_NESTING: usize = 128;

/// A collection being read, and the cost of the document when it opened.
struct Open {
    node: yaml_rust2::Yaml,
    anchor: usize,
    start: usize,
    key: Option<yaml_rust2::Yaml>,
}

/// The first document of a YAML stream, built from the parser's events as
/// yaml-rust2's own loader builds it, but refused past [`ALIAS_BUDGET`] and
/// [`MAX_NESTING`], and without recursion (the library's event driver
/// recurses once per level of nesting).
fn load_yaml(text: &str) -> Result<Option<yaml_rust2::Yaml>, yaml_rust2::ScanError> {
    use yaml_rust2::parser::Parser;
    use yaml_rust2::{Event, ScanError, Yaml};
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<Open> = Vec::new();
    let mut anchors: HashMap<usize, (Yaml, usize)> = HashMap::new();
    let mut first: Option<Yaml> = None;
    // Nodes and bytes of text read so far, aliases expanded; and what the
    // aliases alone added.
    let mut cost = 0usize;
    let mut expanded = 0usize;
    loop {
        let (event, mark) = parser.next_token()?;
        let (node, anchor, size) = match event {
            Event::StreamEnd => break,
            Event::StreamStart | Event::Nothing | Event::DocumentStart => continue,
            Event::DocumentEnd => {
                anchors.clear();
                continue;
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if stack.len() >= MAX_NESTING {
                    return Err(ScanError::new_string(
                        mark,
                        format!("nested deeper than {MAX_NESTING} levels; refused"),
                    ));
                }
                let node = if matches!(event, Event::SequenceStart(..)) {
                    Yaml::Array(Vec::new())
                } else {
                    Yaml::Hash(yaml_rust2::yaml::Hash::new())
                };
                stack.push(Open {
                    node,
                    anchor,
                    start: cost,
                    key: None,
                });
                cost += 1;
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let Some(open) = stack.pop() else {
                    return Err(ScanError::new(mark, "a collection ends that never began"));
                };
                (open.node, open.anchor, cost - open.start)
            }
            Event::Scalar(v, style, anchor, tag) => {
                let size = 1 + v.len();
                cost += size;
                (yaml_scalar(v, style, tag.as_ref()), anchor, size)
            }
            Event::Alias(id) => {
                let (node, size) = anchors.get(&id).cloned().unwrap_or((Yaml::BadValue, 1));
                expanded = expanded.saturating_add(size);
                if expanded > ALIAS_BUDGET {
                    return Err(ScanError::new_string(
                        mark,
                        format!(
                            "its aliases expand past {ALIAS_BUDGET} nodes and bytes (nested aliases, a \"billion laughs\"); refused"
                        ),
                    ));
                }
                cost += size;
                (node, 0, size)
            }
        };
        if anchor > 0 {
            anchors.insert(anchor, (node.clone(), size));
        }
        match stack.last_mut() {
            None => {
                if first.is_none() {
                    first = Some(node);
                }
            }
            Some(Open {
                node: Yaml::Array(items),
                ..
            }) => items.push(node),
            Some(Open {
                node: Yaml::Hash(map),
                key,
                ..
            }) => match key.take() {
                None => *key = Some(node),
                Some(k) => {
                    if map.insert(k, node).is_some() {
                        let shown = map
                            .back()
                            .map(|(k, _)| format!("{k:?}"))
                            .unwrap_or_default();
                        return Err(ScanError::new_string(
                            mark,
                            format!("{shown}: duplicated key in mapping"),
                        ));
                    }
                }
            },
            Some(_) => {}
        }
    }
    Ok(first)
}

/// A scalar's value as yaml-rust2's loader reads it: quoted text is a
/// string; a plain one is told by its core-schema tag, or by its look.
fn yaml_scalar(
    v: String,
    style: yaml_rust2::scanner::TScalarStyle,
    tag: Option<&yaml_rust2::parser::Tag>,
) -> yaml_rust2::Yaml {
    use yaml_rust2::Yaml;
    if style != yaml_rust2::scanner::TScalarStyle::Plain {
        return Yaml::String(v);
    }
    let Some(tag) = tag else {
        return Yaml::from_str(&v);
    };
    if tag.handle != "tag:yaml.org,2002:" {
        return Yaml::String(v);
    }
    match tag.suffix.as_str() {
        "bool" => match v.as_str() {
            "true" | "True" | "TRUE" => Yaml::Boolean(true),
            "false" | "False" | "FALSE" => Yaml::Boolean(false),
            _ => Yaml::BadValue,
        },
        "int" => v.parse::<i64>().map_or(Yaml::BadValue, Yaml::Integer),
        "float" => match Yaml::from_str(&v) {
            Yaml::Real(_) | Yaml::Integer(_) => Yaml::Real(v),
            _ => Yaml::BadValue,
        },
        "null" => match v.as_str() {
            "~" | "null" => Yaml::Null,
            _ => Yaml::BadValue,
        },
        _ => Yaml::String(v),
    }
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
    /// The folder every referenced file must be in (a fetched description's
    /// mirror), when there is one.
    within: Option<PathBuf>,
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
    ///
    /// With `within` (the folder a fetched description is mirrored in), a
    /// reference is read only inside it: an absolute path is taken from the
    /// folder's root, as the origin's path it mirrors, and one whose `../`
    /// climbs out is refused. Only regular files are read (never a device
    /// or a FIFO), and at most [`super::MAX_DESCRIPTION_BYTES`] of them in all.
    pub(super) fn load(root: Value, root_path: &Path, within: Option<&Path>) -> DocSet {
        let mut set = DocSet {
            docs: vec![Doc {
                path: root_path.to_path_buf(),
                value: root,
            }],
            by_path: HashMap::new(),
            missing: HashMap::new(),
            within: within.map(normalise),
        };
        set.by_path.insert(normalise(root_path), 0);
        let mut left = super::MAX_DESCRIPTION_BYTES;
        let mut next = 0;
        while next < set.docs.len() {
            let mut files = Vec::new();
            collect_external_files(&set.docs[next].value, &mut files);
            let base = set.docs[next].path.clone();
            for file in files {
                let path = set.locate(&base, &file);
                if set.by_path.contains_key(&path) || set.missing.contains_key(&path) {
                    continue;
                }
                if file.starts_with("http://") || file.starts_with("https://") {
                    // Never fetched: loading a description must not touch the network.
                    continue;
                }
                if let Some(dir) = &set.within
                    && !path.starts_with(dir)
                {
                    set.missing.insert(
                        path,
                        "it leaves the folder of the fetched description (a `../` past its root); a description read from a URL may only refer to files of its own origin".into(),
                    );
                    continue;
                }
                let value = match super::read_bounded(&path, left, true) {
                    Ok(bytes) => {
                        left -= bytes.len();
                        match parse_text(&String::from_utf8_lossy(&bytes), &path) {
                            Ok(v) => v,
                            Err(e) => {
                                set.missing.insert(path, format!("cannot be parsed: {e}"));
                                continue;
                            }
                        }
                    }
                    Err(e) => {
                        set.missing
                            .insert(path.clone(), format!("{} {e}", path.display()));
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
            *self
                .by_path
                .get(&self.locate(&self.docs[from].path, file))?
        };
        let pointer = percent_decode(fragment);
        self.get(doc, &pointer)?;
        Some(Target { doc, pointer })
    }

    /// Why a `$ref` written in document `from` does not resolve, for messages.
    pub(super) fn unresolvable(&self, from: DocId, reference: &str) -> String {
        let file = reference.split('#').next().unwrap_or("");
        if !file.is_empty() {
            let path = self.locate(&self.docs[from].path, file);
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

    /// The file `file` (a `$ref`'s part before `#`) names when written in
    /// the document at `base`: beside it, or, inside a mirror, an absolute
    /// path from the mirror's root.
    fn locate(&self, base: &Path, file: &str) -> PathBuf {
        if let Some(dir) = &self.within {
            let decoded = percent_decode(file);
            if decoded.starts_with('/') || Path::new(&decoded).is_absolute() {
                return normalise(&dir.join(decoded.trim_start_matches('/')));
            }
        }
        normalise(&resolve_relative(base, file))
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
    fn a_billion_laughs_is_refused_at_its_line() {
        let mut text = String::from("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for (name, prev) in [("b", "a"), ("c", "b"), ("d", "c"), ("e", "d"), ("f", "e")] {
            let refs = vec![format!("*{prev}"); 9].join(", ");
            text.push_str(&format!("{name}: &{name} [{refs}]\n"));
        }
        let err = parse_text(&text, Path::new("lol.yaml")).unwrap_err();
        assert!(err.message.contains("aliases expand past"), "{err}");
        // Located where the budget ran out, on the last lines.
        let line: usize = err
            .location
            .as_deref()
            .unwrap()
            .split(':')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(line >= 5, "{err}");
        // A few levels of the same are well within it.
        let small = "a: &a [x, y]\nb: &b [*a, *a]\nc: [*b, *b]\n";
        let v = parse_text(small, Path::new("ok.yaml")).unwrap();
        assert_eq!(v["c"][1][0][1], "y");
    }

    #[test]
    fn nesting_past_the_limit_is_refused_without_recursion() {
        // Block style: a mapping in a mapping, 200 deep.
        let block: String = (0..200)
            .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
            .collect();
        let err = parse_text(
            &format!("{block}{}1\n", " ".repeat(200)),
            Path::new("deep.yaml"),
        )
        .unwrap_err();
        assert!(err.message.contains("nested deeper than 128"), "{err}");
        assert!(
            err.location.as_deref().unwrap().starts_with("129:"),
            "{err}"
        );
        // Flow style, as YAML and as JSON: the parsers' own limits.
        let deep = format!("{}1{}", "[".repeat(200_000), "]".repeat(200_000));
        let err = parse_text(&format!("x: {deep}"), Path::new("deep.yaml")).unwrap_err();
        assert!(err.message.contains("recursion limit"), "{err}");
        let err = parse_text(&deep, Path::new("deep.json")).unwrap_err();
        assert!(err.message.contains("recursion limit"), "{err}");
        let ok = format!("{}1{}", "[".repeat(100), "]".repeat(100));
        assert!(parse_text(&format!("x: {ok}"), Path::new("ok.yaml")).is_ok());
    }

    #[test]
    fn yaml_reads_as_the_librarys_loader_reads_it() {
        let text =
            "a: !!int '7'\nb: !!float 1\nc: !!bool 'true'\nd: '12'\ne: 0x1f\nf: ~\ng: !!str 3\n";
        let v = parse_text(text, Path::new("t.yaml")).unwrap();
        assert_eq!(v["a"], "7", "quoted scalars stay text");
        assert_eq!(v["b"], 1.0);
        assert_eq!(v["d"], "12");
        assert_eq!(v["e"], 31);
        assert!(v["f"].is_null());
        assert_eq!(v["g"], "3");
        let err = parse_text("a: 1\na: 2\n", Path::new("dup.yaml")).unwrap_err();
        assert!(err.message.contains("duplicated key"), "{err}");
    }

    #[test]
    fn refs_to_devices_and_fifos_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("api.yaml");
        let value = serde_json::json!({"a": {"$ref": "/dev/zero"}, "b": {"$ref": "sub"}});
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let set = DocSet::load(value, &root, None);
        assert_eq!(set.docs.len(), 1);
        let why = set.unresolvable(0, "/dev/zero");
        assert!(why.contains("not a regular file"), "{why}");
        assert!(set.unresolvable(0, "sub").contains("not a regular file"));
    }

    #[test]
    fn inside_a_mirror_refs_stay_in_it() {
        let dir = tempfile::tempdir().unwrap();
        let mirror = dir.path().join("mirror");
        std::fs::create_dir_all(mirror.join("docs")).unwrap();
        std::fs::create_dir_all(mirror.join("shared")).unwrap();
        std::fs::write(mirror.join("shared/own.yaml"), "type: string\n").unwrap();
        // A file beside the mirror, and one of this machine.
        std::fs::write(dir.path().join("outside.yaml"), "type: string\n").unwrap();
        let outside = dir.path().join("outside.yaml");
        let root = mirror.join("docs/openapi.yaml");
        let value = serde_json::json!({
            "own": {"$ref": "/shared/own.yaml"},
            "up": {"$ref": "../../outside.yaml"},
            "abs": {"$ref": outside.to_str().unwrap()},
        });
        let set = DocSet::load(value, &root, Some(&mirror));
        assert!(set.target(0, "/shared/own.yaml").is_some());
        assert!(set.target(0, "../../outside.yaml").is_none());
        assert!(
            set.unresolvable(0, "../../outside.yaml")
                .contains("leaves the folder")
        );
        // An absolute path is the origin's: looked for in the mirror only.
        assert!(set.target(0, outside.to_str().unwrap()).is_none());
        assert_eq!(set.docs.len(), 2);
        // Outside a mirror, the same references are followed.
        let value = serde_json::json!({"up": {"$ref": "../../outside.yaml"}});
        let set = DocSet::load(value, &root, None);
        assert!(set.target(0, "../../outside.yaml").is_some());
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
