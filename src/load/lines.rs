//! Where each operation is written in its description's text, so that reports
//! (SARIF, for CI annotations) can point at the line.
//!
//! OpenAPI (JSON or YAML): the text is walked once with yaml-rust2's event
//! parser, which knows every key's line; an operation is found at its
//! `paths → path → method` key, or at its path key when the path item is a
//! `$ref` to another file. GraphQL SDL: the root field's definition, from the
//! positions the GraphQL parser gives. Introspection JSON has no useful place.

use std::collections::HashMap;

use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::Marker;

use crate::model::{Api, SpecFormat};

/// Operation name → the 1-based line of `text` where the description writes
/// it; operations that cannot be found are left out (and a text that does
/// not parse gives an empty map).
pub fn operation_lines(text: &str, api: &Api) -> HashMap<String, u32> {
    match api.format {
        SpecFormat::GraphqlSdl => {
            let fields = super::graphql::sdl_field_lines(text);
            api.operations
                .iter()
                .filter_map(|o| Some((o.name.clone(), *fields.get(&o.pointer)?)))
                .collect()
        }
        SpecFormat::GraphqlIntrospection => HashMap::new(),
        SpecFormat::Swagger2 | SpecFormat::OpenApi30 | SpecFormat::OpenApi31 => {
            let keys = path_key_lines(text);
            api.operations
                .iter()
                .filter_map(|o| {
                    let pointer = o.pointer.trim_start_matches('#');
                    let line = keys.get(pointer).or_else(|| {
                        // The path item lives in another file: its key here.
                        keys.get(pointer.rsplit_once('/')?.0)
                    })?;
                    Some((o.name.clone(), *line))
                })
                .collect()
        }
    }
}

/// JSON pointer → line of every key under `paths` down to the methods
/// (`/paths/~1pets`, `/paths/~1pets/get`).
fn path_key_lines(text: &str) -> HashMap<String, u32> {
    let mut walk = Walk::default();
    let mut parser = Parser::new_from_str(text.trim_start_matches('\u{feff}'));
    // Stops when `paths` closes (the schemas after it are most of a large
    // document); a text that does not parse as YAML (the loader may have read
    // it as JSON that YAML rejects) keeps what was found before the error.
    while let Ok((ev, mark)) = parser.next_token() {
        if !walk.event(ev, mark) {
            break;
        }
    }
    walk.found
}

/// Keys deeper than this are never operations: `/paths/{path}/{method}`.
const DEPTH: usize = 3;

/// One open collection of the event stream.
enum Frame {
    /// A mapping: its pointer (when shallow enough to matter) and the key
    /// whose value comes next (`None` when a key comes next).
    Map {
        pointer: Option<String>,
        key: Option<String>,
    },
    /// A sequence: its pointer and the index of the next item.
    Seq {
        pointer: Option<String>,
        index: usize,
    },
}

#[derive(Default)]
struct Walk {
    stack: Vec<Frame>,
    found: HashMap<String, u32>,
}

impl Walk {
    /// The pointer of the value about to start in the current frame, when it
    /// is shallow enough to matter.
    fn child_pointer(&self) -> Option<String> {
        if self.stack.len() >= DEPTH {
            return None;
        }
        match self.stack.last() {
            None => Some(String::new()),
            Some(Frame::Map {
                pointer: Some(p),
                key: Some(k),
            }) => Some(format!("{p}/{}", super::document::escape_pointer(k))),
            Some(Frame::Seq {
                pointer: Some(p),
                index,
            }) => Some(format!("{p}/{index}")),
            _ => None,
        }
    }

    /// A value (scalar, alias or a collection just closed) is complete.
    fn value_done(&mut self) {
        match self.stack.last_mut() {
            Some(Frame::Map { key, .. }) => *key = None,
            Some(Frame::Seq { index, .. }) => *index += 1,
            None => {}
        }
    }

    /// Takes one event; false when nothing more can be found.
    fn event(&mut self, ev: Event, mark: Marker) -> bool {
        match ev {
            // Later documents of a stream are not the description.
            Event::DocumentEnd | Event::StreamEnd => return false,
            Event::MappingStart(..) => {
                let pointer = self.child_pointer();
                self.stack.push(Frame::Map { pointer, key: None });
            }
            Event::SequenceStart(..) => {
                let pointer = self.child_pointer();
                self.stack.push(Frame::Seq { pointer, index: 0 });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                let closed = self.stack.pop();
                if let Some(Frame::Map {
                    pointer: Some(p), ..
                }) = closed
                    && p == "/paths"
                {
                    return false;
                }
                self.value_done();
            }
            Event::Scalar(text, ..) => {
                let depth = self.stack.len();
                let Some(Frame::Map { pointer, key: None }) = self.stack.last() else {
                    self.value_done();
                    return true;
                };
                if let Some(p) = pointer.as_deref()
                    && depth > 1
                    && (p == "/paths" || p.starts_with("/paths/"))
                {
                    let here = format!("{p}/{}", super::document::escape_pointer(&text));
                    let line = u32::try_from(mark.line()).unwrap_or(u32::MAX);
                    self.found.entry(here).or_insert(line);
                }
                if let Some(Frame::Map { key, .. }) = self.stack.last_mut() {
                    *key = Some(text);
                }
            }
            Event::Alias(_) => self.value_done(),
            _ => {}
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn lines_of(text: &str, name: &str) -> HashMap<String, u32> {
        let api = crate::load::load_text(text, Path::new(name)).unwrap().api;
        assert!(!api.operations.is_empty());
        operation_lines(text, &api)
    }

    /// The 1-based line of the first line of `text` that starts (after
    /// indentation) with `prefix`, after the line starting with `after`
    /// (`u32::MAX` when there is none).
    fn line_of(text: &str, after: &str, prefix: &str) -> u32 {
        let start = text
            .lines()
            .position(|l| l.trim_start().starts_with(after))
            .unwrap();
        text.lines()
            .skip(start)
            .position(|l| l.trim_start().starts_with(prefix))
            .map_or(u32::MAX, |i| (start + i + 1) as u32)
    }

    #[test]
    fn every_demo_operation_is_found_at_its_method_key() {
        let text = crate::demo::OPENAPI_YAML;
        let lines = lines_of(text, "models/demo/openapi.yaml");
        let api = crate::load::load_text(text, Path::new("openapi.yaml"))
            .unwrap()
            .api;
        assert_eq!(lines.len(), api.operations.len(), "{lines:?}");
        for op in &api.operations {
            let path_key = format!("{}:", op.path);
            let method_key = format!("{}:", op.method.as_str().to_ascii_lowercase());
            assert_eq!(
                lines[&op.name],
                line_of(text, &path_key, &method_key),
                "{}",
                op.name
            );
        }
    }

    #[test]
    fn json_keys_are_found_too_and_a_referenced_path_item_at_its_path() {
        let text = r#"{
  "openapi": "3.0.3",
  "info": {"title": "t", "version": "1"},
  "paths": {
    "/a/{id}": {
      "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
      "get": {"operationId": "getA", "responses": {"200": {"description": "ok"}}},
      "delete": {
        "responses": {"204": {"description": "gone"}}
      }
    },
    "/b": {"$ref": "b.json"}
  }
}"#;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("b.json"),
            r#"{"post": {"operationId": "postB", "responses": {"201": {"description": "made"}}}}"#,
        )
        .unwrap();
        let path = dir.path().join("api.json");
        let api = crate::load::load_text(text, &path).unwrap().api;
        let lines = operation_lines(text, &api);
        assert_eq!(lines["getA"], 7);
        assert_eq!(lines["DELETE /a/{id}"], 8);
        assert_eq!(lines["postB"], 12, "the path key of the referenced item");
    }

    #[test]
    fn graphql_root_fields_are_found_at_their_definitions() {
        let text = crate::demo::GRAPHQL_SDL;
        let lines = lines_of(text, "schema.graphql");
        let api = crate::load::load_text(text, Path::new("schema.graphql"))
            .unwrap()
            .api;
        assert_eq!(lines.len(), api.operations.len(), "{lines:?}");
        for op in &api.operations {
            let (root, field) = op.pointer.split_once('.').unwrap();
            let after = format!("type {root}");
            let with_args = line_of(text, &after, &format!("{field}("));
            let without = line_of(text, &after, &format!("{field}:"));
            assert_eq!(lines[&op.name], with_args.min(without), "{}", op.name);
        }
    }

    #[test]
    fn text_that_does_not_parse_finds_nothing_and_does_not_panic() {
        let api = crate::load::load_text(
            crate::demo::OPENAPI_YAML,
            Path::new("models/demo/openapi.yaml"),
        )
        .unwrap()
        .api;
        for text in ["", "paths: [", "{\"paths\": {\"/x\": ", "\u{0}\u{1}"] {
            assert!(operation_lines(text, &api).is_empty(), "{text:?}");
        }
    }
}
