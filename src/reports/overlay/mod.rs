//! `spec-fixes.overlay.yaml`: the changes to the description that settle the
//! run's conformance causes, as an OpenAPI Overlay 1.0.0 document (`overlay`,
//! `info`, `extends`, `actions` with RFC 9535 JSONPath targets), for a person
//! to review and apply with an overlay tool (`oas-patch`, `openapi-overlays-js`).
//! Each action's `description` names its cause (id and title) and the
//! evidence; `x-cartograph-cause` holds the id for tools. Defects are never
//! in it: the server must change, not its description. Which conformance
//! causes no change settles, and why, is said in the file's opening comment.
//! What each cause changes is in `fixes`; how actions keep to what the
//! tools do, in `edit`.

mod edit;
mod fixes;
mod infer;
mod jsonpath;
mod yaml;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

pub use fixes::Seen;

use crate::execution::OutDir;
use crate::execution::secrets::Secrets;
use crate::faults::causes::Cause;
use crate::oracles::registry::Class;

/// The file's name in the output folder.
pub const FILE: &str = "spec-fixes.overlay.yaml";

/// What the overlay holds.
#[derive(Debug, Clone, Default)]
pub struct SpecFixes {
    /// The overlay document's text; none when no cause got an action.
    pub text: Option<String>,
    /// How many actions it holds.
    pub actions: usize,
    /// The conformance causes it settles.
    pub settled: Vec<String>,
    /// The conformance causes of the run.
    pub conformance: usize,
    /// The conformance causes it does not settle: id and why.
    pub unsettled: Vec<(String, String)>,
}

/// The overlay for `causes` (the report's, most important first), seen as
/// `seen` says; `extends` is the description's URI relative to the overlay
/// (see [`extends`]).
pub fn spec_fixes(
    seen: &Seen<'_>,
    causes: &[Cause],
    extends: Option<&str>,
    secrets: &Secrets,
) -> SpecFixes {
    let conformance: Vec<&Cause> = causes
        .iter()
        .filter(|c| c.class == Class::Conformance)
        .collect();
    let mut out = SpecFixes {
        conformance: conformance.len(),
        ..SpecFixes::default()
    };
    let Some(document) = seen.api.document.as_ref() else {
        out.unsettled = conformance
            .iter()
            .map(|c| {
                (
                    c.id.clone(),
                    "the description is not an OpenAPI document".into(),
                )
            })
            .collect();
        return out;
    };
    let mut editor = edit::Editor::new(document.root().clone());
    for cause in &conformance {
        match fixes::plan(&mut editor, seen, cause) {
            Ok(()) => out.settled.push(cause.id.clone()),
            Err(why) => out.unsettled.push((cause.id.clone(), why)),
        }
    }
    out.actions = editor.actions.len();
    if editor.actions.is_empty() {
        return out;
    }
    // Redacted before they are encoded: an escaped secret would not match.
    let comment = |line: &str| yaml::comment(&secrets.redact(line));
    let mut text = String::new();
    text.push_str(&comment(&format!(
        "Spec fixes for {} written by Cartograph: OpenAPI Overlay 1.0.0.",
        seen.api.title
    )));
    text.push_str(&comment(
        "Each action settles a conformance cause of report.json (the id in its description and in x-cartograph-cause); defects are never here: the server must change.",
    ));
    text.push_str(&comment(
        "Review, then apply with an overlay tool, e.g. `oas-patch overlay openapi.yaml spec-fixes.overlay.yaml -o openapi.fixed.yaml`, and run again.",
    ));
    if !out.unsettled.is_empty() {
        text.push_str("#\n");
        text.push_str(&comment("Conformance causes no action here settles:"));
        for (id, why) in &out.unsettled {
            let title = causes
                .iter()
                .find(|c| &c.id == id)
                .map_or("", |c| c.title.as_str());
            text.push_str(&comment(&format!("  {id} {title}")));
            text.push_str(&comment(&format!("    why: {why}")));
        }
    }
    let mut doc = Map::new();
    doc.insert("overlay".into(), json!("1.0.0"));
    doc.insert(
        "info".into(),
        json!({
            "title": format!("Spec fixes for {} (Cartograph)", seen.api.title),
            "version": "1.0.0",
        }),
    );
    if let Some(e) = extends {
        doc.insert("extends".into(), json!(e));
    }
    doc.insert(
        "actions".into(),
        Value::Array(editor.actions.iter().map(edit::Action::to_value).collect()),
    );
    let mut doc = Value::Object(doc);
    redact(&mut doc, secrets);
    text.push_str(&yaml::document(&doc));
    out.text = Some(text);
    out
}

/// Every string of `v`, keys included, with `secrets` redacted.
fn redact(v: &mut Value, secrets: &Secrets) {
    match v {
        Value::String(s) => {
            if let std::borrow::Cow::Owned(r) = secrets.redact(s) {
                *s = r;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| redact(i, secrets)),
        Value::Object(map) => {
            let entries: Vec<(String, Value)> = std::mem::take(map).into_iter().collect();
            for (k, mut val) in entries {
                redact(&mut val, secrets);
                map.insert(secrets.redact(&k).into_owned(), val);
            }
        }
        _ => {}
    }
}

/// Writes the overlay into the output folder when there is anything to
/// write (an earlier run's was deleted when the folder was opened); returns
/// the path written.
pub fn write(
    out: &OutDir,
    fixes: &SpecFixes,
    secrets: &Secrets,
) -> std::io::Result<Option<PathBuf>> {
    let Some(text) = &fixes.text else {
        return Ok(None);
    };
    out.write(FILE, secrets.redact(text).as_bytes())?;
    Ok(Some(out.path(FILE)))
}

impl SpecFixes {
    /// The run's closing line about the overlay.
    pub fn summary(&self, written: Option<&Path>) -> String {
        match written {
            Some(path) => format!(
                "cartograph: spec fixes: {} action(s) settling {} of {} conformance cause(s) in {} (review, then apply with an OpenAPI Overlay tool: oas-patch overlay SPEC {})",
                self.actions,
                self.settled.len(),
                self.conformance,
                path.display(),
                path.display()
            ),
            None if self.conformance == 0 => {
                "cartograph: no spec fixes: no conformance cause".to_string()
            }
            None => format!(
                "cartograph: no spec fixes: none of the {} conformance cause(s) is settled by a change to the description",
                self.conformance
            ),
        }
    }
}

/// `extends`: the description the run read (`spec`, a path relative to the
/// working directory or a URL), as a URI reference from the overlay's folder
/// `out`, where a relative reference is resolved.
pub fn extends(spec: &str, out: &Path) -> String {
    if spec.contains("://") {
        return spec.to_string();
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    let absolute = |p: &Path| {
        normalise(&if p.is_absolute() {
            p.to_path_buf()
        } else {
            cwd.join(p)
        })
    };
    let spec_path = absolute(Path::new(spec));
    let out = absolute(out);
    let common = spec_path
        .components()
        .zip(out.components())
        .take_while(|(a, b)| a == b)
        .count();
    let mut parts: Vec<String> = Vec::new();
    let shared_dirs = spec_path
        .components()
        .take(common)
        .filter(|c| matches!(c, std::path::Component::Normal(_)))
        .count();
    if shared_dirs == 0 {
        // Only the root in common (`/tmp/out` and `/home/me/api.yaml`): an
        // absolute file URL says it better than a climb to the root.
        return url::Url::from_file_path(&spec_path)
            .map(|u| u.to_string())
            .unwrap_or_else(|_| spec.to_string());
    }
    parts.extend(std::iter::repeat_n(
        "..".to_string(),
        out.components().count() - common,
    ));
    for c in spec_path.components().skip(common) {
        parts.push(encode_segment(&c.as_os_str().to_string_lossy()));
    }
    parts.join("/")
}

/// A path without `.` and `..` (read lexically).
fn normalise(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// A path segment as RFC 3986 writes it: unreserved characters and a few
/// sub-delimiters as they are, the rest percent-encoded (`:` too, which a
/// first segment may not hold).
fn encode_segment(s: &str) -> String {
    const KEEP: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'~')
        .remove(b'!')
        .remove(b'$')
        .remove(b'&')
        .remove(b'\'')
        .remove(b'(')
        .remove(b')')
        .remove(b'*')
        .remove(b'+')
        .remove(b',')
        .remove(b';')
        .remove(b'=')
        .remove(b'@');
    percent_encoding::utf8_percent_encode(s, KEEP).to_string()
}

#[cfg(test)]
mod tests;
