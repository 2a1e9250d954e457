//! Reading API descriptions from disk into the [`crate::model::Api`] model.
//!
//! [`load`] detects the format (Swagger 2.0, OpenAPI 3.0/3.1 in JSON or YAML, GraphQL
//! SDL, GraphQL introspection JSON) and hands the document to the matching loader.
//! Loaders keep going past broken parts: each skipped part becomes one [`Warning`],
//! and only a document that cannot be read as an API description at all is an
//! [`SpecError`].

mod document;
pub mod graphql;
pub mod introspection;
pub mod lines;
mod openapi;
pub mod query_log;
pub mod remote;
mod source;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::model::Api;

pub use document::parse_text;
pub use lines::operation_lines;
pub use source::SpecSource;

/// A loaded description and what had to be skipped to load it.
#[derive(Debug)]
pub struct Loaded {
    /// The model.
    pub api: Api,
    /// One entry per part that could not be loaded and was left out.
    pub warnings: Vec<Warning>,
    /// Why the document declares no operation, when it declares none (not
    /// a warning: a description of webhooks or schemas only is complete;
    /// only a run has nothing to do with it).
    pub why_empty: Option<String>,
}

impl Loaded {
    /// True when nothing had to be left out.
    pub fn is_complete(&self) -> bool {
        self.warnings.is_empty()
    }

    /// Why the description yields no operation to test, when it yields
    /// none: `paths` missing, not a mapping or empty, or every operation
    /// skipped (naming them), or a GraphQL schema without root fields.
    pub fn no_operations(&self) -> Option<String> {
        if !self.api.operations.is_empty() {
            return None;
        }
        let why = match &self.why_empty {
            Some(why) => why.as_str(),
            None if self.api.format.is_graphql() => {
                "the schema's root types have no fields to call"
            }
            None => "the document declares none",
        };
        Some(format!("no operation to test: {why}"))
    }
}

/// A part of a description that was left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The file the part is in.
    pub file: PathBuf,
    /// Where in that file: a JSON pointer (`#/paths/~1pets/get`) or `line:column`.
    pub location: String,
    /// What went wrong and what was skipped.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}: {}",
            self.file.display(),
            self.location,
            self.message
        )
    }
}

/// A description that cannot be loaded at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    /// The file concerned.
    pub file: PathBuf,
    /// Where in it, when known (`line:column` or a JSON pointer).
    pub location: Option<String>,
    /// What is wrong.
    pub message: String,
    /// What the user can do about it.
    pub hint: Option<String>,
}

impl SpecError {
    /// An error about `file` with no particular location.
    pub fn new(file: &Path, message: impl Into<String>) -> SpecError {
        SpecError {
            file: file.to_path_buf(),
            location: None,
            message: message.into(),
            hint: None,
        }
    }

    /// Sets the location.
    pub fn at(mut self, location: impl Into<String>) -> SpecError {
        self.location = Some(location.into());
        self
    }

    /// Sets the hint.
    pub fn hint(mut self, hint: impl Into<String>) -> SpecError {
        self.hint = Some(hint.into());
        self
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(loc) = &self.location {
            write!(f, ":{loc}")?;
        }
        write!(f, ": {}", self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SpecError {}

/// Most a description may weigh, read from a file or fetched from a URL;
/// the files its `$ref`s name may weigh as much again, together. The
/// largest real descriptions (GitHub's REST API) are near 12 MB.
pub const MAX_DESCRIPTION_BYTES: usize = 64 << 20;

/// Why a file of a description was not read.
#[derive(Debug)]
pub(crate) enum Unreadable {
    /// The system refused.
    Io(std::io::Error),
    /// A device, a FIFO, a folder: reading one may never end.
    NotAFile,
    /// Past the size allowed.
    TooLarge(usize),
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unreadable::Io(e) => write!(f, "cannot be read: {e}"),
            Unreadable::NotAFile => write!(
                f,
                "is not a regular file (a device, a FIFO or a folder); refused"
            ),
            Unreadable::TooLarge(limit) => write!(
                f,
                "is larger than {}; refused (a description and its files may weigh {} in all)",
                crate::model::text::size_text(*limit),
                crate::model::text::size_text(MAX_DESCRIPTION_BYTES)
            ),
        }
    }
}

/// The bytes of `path`, at most `limit` of them; with `files_only`, only
/// from a regular file (a `$ref` to `/dev/zero` or a FIFO is not followed).
pub(crate) fn read_bounded(
    path: &Path,
    limit: usize,
    files_only: bool,
) -> Result<Vec<u8>, Unreadable> {
    use std::io::Read;
    let meta = std::fs::metadata(path).map_err(Unreadable::Io)?;
    if files_only && !meta.is_file() {
        return Err(Unreadable::NotAFile);
    }
    if meta.is_file() && meta.len() > limit as u64 {
        return Err(Unreadable::TooLarge(limit));
    }
    let file = std::fs::File::open(path).map_err(Unreadable::Io)?;
    let mut bytes = Vec::new();
    file.take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(Unreadable::Io)?;
    if bytes.len() > limit {
        return Err(Unreadable::TooLarge(limit));
    }
    Ok(bytes)
}

/// Loads the API description at `path`, whatever its format. The file may
/// be a FIFO (`<(curl …)`), but no more than [`MAX_DESCRIPTION_BYTES`] of
/// it is read.
pub fn load(path: &Path) -> Result<Loaded, SpecError> {
    load_in(path, None)
}

/// [`load`], its `$ref`s reading files only inside `within` (a fetched
/// description's mirror).
pub(crate) fn load_in(path: &Path, within: Option<&Path>) -> Result<Loaded, SpecError> {
    let bytes = read_bounded(path, MAX_DESCRIPTION_BYTES, false).map_err(|e| match e {
        Unreadable::Io(e) => {
            let err = SpecError::new(path, format!("cannot read the file: {e}"));
            if e.kind() == std::io::ErrorKind::NotFound {
                err.hint("check the path; `cartograph graph --help` shows the accepted formats")
            } else {
                err
            }
        }
        other => SpecError::new(path, format!("the file {other}"))
            .hint("pass an API description: this is not one"),
    })?;
    let text = String::from_utf8_lossy(&bytes);
    load_text_in(&text, path, within)
}

/// Loads a description held in memory; `path` names it in messages and anchors
/// relative `$ref`s.
pub fn load_text(text: &str, path: &Path) -> Result<Loaded, SpecError> {
    load_text_in(text, path, None)
}

fn load_text_in(text: &str, path: &Path, within: Option<&Path>) -> Result<Loaded, SpecError> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if matches!(ext.as_str(), "graphql" | "graphqls" | "gql" | "sdl") {
        return graphql::load_sdl(text, path);
    }
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.is_empty() {
        return Err(SpecError::new(path, "the file is empty")
            .hint("pass an OpenAPI/Swagger document (JSON or YAML) or a GraphQL schema"));
    }
    if looks_like_sdl(trimmed) && ext != "json" && ext != "yaml" && ext != "yml" {
        return graphql::load_sdl(text, path);
    }
    let value = parse_text(text, path)?;
    if value.get("openapi").is_some() || value.get("swagger").is_some() {
        let cut = cut_short(text, &value);
        let mut loaded = openapi::load(value, path, within)?;
        if let Some((line, why)) = cut {
            loaded.warnings.push(Warning {
                file: path.to_path_buf(),
                location: format!("{line}:1"),
                message: format!(
                    "the document seems cut short: {why}; what came after is missing ({} operation(s) loaded). Fetch or copy the file again",
                    loaded.api.operations.len()
                ),
            });
        }
        return Ok(loaded);
    }
    if graphql::introspection_root(&value).is_some() {
        return graphql::load_introspection(&value, path);
    }
    Err(SpecError::new(
        path,
        "not an API description: the document has no `openapi` or `swagger` field and is not a GraphQL introspection result",
    )
    .at("#/")
    .hint("Cartograph reads OpenAPI 3.x, Swagger 2.0, GraphQL SDL (.graphql) and GraphQL introspection JSON"))
}

/// Signs that a description was cut short, with the line where it ends:
/// a YAML text whose last line is inside a structure and either has no
/// newline after it (cut in the middle of a line) or is a key with nothing
/// under it (cut after a line); or `$ref`s into a top-level section the
/// document does not have (`#/components/…` without `components`). A JSON
/// text cut short does not parse at all.
fn cut_short(text: &str, root: &serde_json::Value) -> Option<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let last = lines
        .iter()
        .rposition(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))?;
    let line = lines[last];
    let mut reasons = Vec::new();
    let yaml = !matches!(
        text.trim_start_matches('\u{feff}')
            .trim_start()
            .chars()
            .next(),
        Some('{' | '[')
    );
    let indent = line.len() - line.trim_start().len();
    if yaml && indent > 0 && !in_block_scalar(&lines[..=last]) {
        let shown: String = line.trim().chars().take(60).collect();
        let content = line.split(" #").next().unwrap_or(line).trim_end();
        if !text.ends_with('\n') && !text.ends_with('\r') {
            reasons.push(format!(
                "its last line ({shown:?}, line {}) is indented, inside a structure, and has no newline after it",
                last + 1
            ));
        } else if content.ends_with(':')
            || content.trim() == "-"
            || content
                .rsplit(": ")
                .next()
                .is_some_and(|v| matches!(v.trim(), "|" | ">" | "|-" | ">-" | "|+" | ">+"))
        {
            reasons.push(format!(
                "its last line ({shown:?}, line {}) opens a structure with nothing under it",
                last + 1
            ));
        }
    }
    let mut missing = std::collections::BTreeMap::<String, usize>::new();
    local_refs_into_missing_sections(root, root, &mut missing);
    for (section, n) in &missing {
        reasons.push(format!(
            "{n} `$ref`(s) point into `#/{section}`, which the document does not have"
        ));
    }
    (!reasons.is_empty()).then(|| (last + 1, reasons.join("; ")))
}

/// Whether the last of `lines` is a line of a block scalar (`|`, `>`):
/// its text may end with a colon without being a key.
fn in_block_scalar(lines: &[&str]) -> bool {
    let Some((last, before)) = lines.split_last() else {
        return false;
    };
    let indent = |l: &str| l.len() - l.trim_start().len();
    let own = indent(last);
    before
        .iter()
        .rev()
        .filter(|l| !l.trim().is_empty())
        .find(|l| indent(l) < own)
        .is_some_and(|parent| {
            let value = parent.split(" #").next().unwrap_or(parent).trim_end();
            let tail = value.rsplit([' ', ':']).next().unwrap_or("");
            tail.starts_with('|') || tail.starts_with('>')
        })
}

/// Counts, by top-level section, the local `$ref`s of `v` whose section
/// `root` does not have.
fn local_refs_into_missing_sections(
    root: &serde_json::Value,
    v: &serde_json::Value,
    out: &mut std::collections::BTreeMap<String, usize>,
) {
    match v {
        serde_json::Value::Object(map) => {
            if let Some(r) = map.get("$ref").and_then(serde_json::Value::as_str)
                && let Some(rest) = r.strip_prefix("#/")
            {
                let section = rest
                    .split('/')
                    .next()
                    .unwrap_or("")
                    .replace("~1", "/")
                    .replace("~0", "~");
                // The sections a description puts `$ref` targets in: a
                // missing one is missing text, not a typo in one `$ref`.
                let known = [
                    "components",
                    "definitions",
                    "parameters",
                    "responses",
                    "securityDefinitions",
                    "paths",
                    "webhooks",
                ];
                if known.contains(&section.as_str()) && root.get(&section).is_none() {
                    *out.entry(section).or_default() += 1;
                }
            }
            for child in map.values() {
                local_refs_into_missing_sections(root, child, out);
            }
        }
        serde_json::Value::Array(items) => {
            for child in items {
                local_refs_into_missing_sections(root, child, out);
            }
        }
        _ => {}
    }
}

/// Whether text starts like a GraphQL SDL document rather than JSON or YAML.
fn looks_like_sdl(text: &str) -> bool {
    let mut rest = text;
    // Skip comments and description strings at the top of the file.
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix('#') {
            rest = r.split_once('\n').map_or("", |(_, after)| after);
        } else if let Some(r) = rest.strip_prefix("\"\"\"") {
            rest = r.split_once("\"\"\"").map_or("", |(_, after)| after);
        } else {
            break;
        }
    }
    let word: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let after = &rest[word.len()..];
    // `type:` is YAML; `type Query` is SDL.
    !after.trim_start().starts_with(':')
        && matches!(
            word.as_str(),
            "type"
                | "schema"
                | "scalar"
                | "interface"
                | "union"
                | "enum"
                | "input"
                | "directive"
                | "extend"
        )
}
