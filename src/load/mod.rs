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
}

impl Loaded {
    /// True when nothing had to be left out.
    pub fn is_complete(&self) -> bool {
        self.warnings.is_empty()
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

/// Loads the API description at `path`, whatever its format.
pub fn load(path: &Path) -> Result<Loaded, SpecError> {
    let bytes = std::fs::read(path).map_err(|e| {
        let err = SpecError::new(path, format!("cannot read the file: {e}"));
        if e.kind() == std::io::ErrorKind::NotFound {
            err.hint("check the path; `cartograph graph --help` shows the accepted formats")
        } else {
            err
        }
    })?;
    let text = String::from_utf8_lossy(&bytes);
    load_text(&text, path)
}

/// Loads a description held in memory; `path` names it in messages and anchors
/// relative `$ref`s.
pub fn load_text(text: &str, path: &Path) -> Result<Loaded, SpecError> {
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
        return openapi::load(value, path);
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
