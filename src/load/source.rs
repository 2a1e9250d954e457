//! Where a description came from, as the reports name it: its location (a
//! path relative to the working directory, a URL, or the demo's embedded
//! file) and the line where it writes each operation.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::model::Api;

/// The API description a run read, as the reports name it.
#[derive(Debug, Clone, Default)]
pub struct SpecSource {
    /// Where it is (`Settings::spec`): a path, relative to the working
    /// directory when under it, or a URL.
    pub location: Option<String>,
    /// Operation name → the line where the description writes it.
    pub lines: HashMap<String, u32>,
}

impl SpecSource {
    /// A description read from `path` (read again here for the lines: a file
    /// that cannot be read now, or not again, such as a FIFO, only loses them).
    pub fn file(path: &Path, api: &Api) -> SpecSource {
        let lines = super::read_bounded(path, super::MAX_DESCRIPTION_BYTES, true)
            .map(|b| super::operation_lines(&String::from_utf8_lossy(&b), api))
            .unwrap_or_default();
        SpecSource {
            location: Some(relative_to_cwd(path)),
            lines,
        }
    }

    /// A description held in memory (the demo's), named by `location`.
    pub fn text(location: &str, text: &str, api: &Api) -> SpecSource {
        SpecSource {
            location: Some(location.to_string()),
            lines: super::operation_lines(text, api),
        }
    }

    /// A schema asked of an endpoint by introspection.
    pub fn url(url: &str) -> SpecSource {
        SpecSource {
            location: Some(url.to_string()),
            lines: HashMap::new(),
        }
    }
}

/// `path` as given, or relative to the working directory when it is an
/// absolute path under it (CI platforms resolve paths from the checkout).
fn relative_to_cwd(path: &Path) -> String {
    let shown = std::env::current_dir()
        .ok()
        .filter(|_| path.is_absolute())
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf());
    // `./api.yaml` and `api.yaml` are one file.
    let shown: PathBuf = shown
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect();
    shown.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_are_named_relative_to_the_working_directory() {
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(
            relative_to_cwd(&cwd.join("specs").join("api.yaml")),
            "specs/api.yaml"
        );
        assert_eq!(relative_to_cwd(Path::new("./api.yaml")), "api.yaml");
        assert_eq!(
            relative_to_cwd(Path::new("../shared/api.yaml")),
            "../shared/api.yaml"
        );
        let outside = Path::new("/nonexistent-root-dir/api.yaml");
        assert_eq!(relative_to_cwd(outside), "/nonexistent-root-dir/api.yaml");
    }

    #[test]
    fn a_file_source_knows_its_operations_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("openapi.yaml");
        std::fs::write(&path, crate::demo::OPENAPI_YAML).unwrap();
        let api = super::super::load(&path).unwrap().api;
        let source = SpecSource::file(&path, &api);
        assert_eq!(source.lines.len(), api.operations.len());
        assert_eq!(source.lines["listAuthors"], 20);
        // Gone by the time it is read again: the run goes on without lines.
        std::fs::remove_file(&path).unwrap();
        assert!(SpecSource::file(&path, &api).lines.is_empty());
    }
}
