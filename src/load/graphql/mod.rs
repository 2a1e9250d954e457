//! The GraphQL loader: SDL documents and introspection results into the model.
//!
//! Both inputs become one [`TypeSystem`](crate::model::graphql::TypeSystem), which is then checked (undefined or
//! misplaced types are left out with a [`Warning`]) and flattened into the
//! protocol-neutral [`Api`](crate::model::Api) by [`api_from_type_system`]: one operation per root
//! field, one named schema per object, interface, union, input object and enum.
//! `sdl` reads SDL, `introspection_json` an introspection result,
//! `checks` keeps only what a server could serve.

use std::path::Path;

use serde_json::Value;

mod checks;
mod introspection_json;
mod sdl;
#[cfg(test)]
mod tests;

use super::{Loaded, SpecError, Warning};
use crate::model::SpecFormat;
pub use crate::model::graphql::api_from_type_system;
use checks::{check_roots, validate};
use introspection_json::build_introspection;
use sdl::build_sdl;

/// Deepest list/non-null nesting accepted in an introspection type reference;
/// real schemas stay below 5, so anything deeper is a malformed or hostile document.
pub(super) const MAX_TYPE_REF_DEPTH: usize = 32;

/// Deepest nesting of an SDL document (list types, input values, directive
/// arguments), apollo-parser's recursion limit: real schemas stay below ten.
const MAX_SDL_NESTING: usize = 64;

/// Loads a GraphQL SDL document.
pub fn load_sdl(text: &str, path: &Path) -> Result<Loaded, SpecError> {
    let mut sink = Sink::new(path);
    let doc = sdl::parse(text.trim_start_matches('\u{feff}'), path, MAX_SDL_NESTING)?;
    let mut ts = build_sdl(&doc, &mut sink);
    validate(&mut ts, &mut sink);
    ts.finish();
    check_roots(&mut ts, &mut sink).map_err(|message| {
        SpecError::new(path, message).hint(
            "a GraphQL schema needs a `type Query { ... }` or a `schema { query: ... }` definition",
        )
    })?;
    Ok(Loaded {
        api: api_from_type_system(ts, file_title(path), SpecFormat::GraphqlSdl),
        warnings: sink.warnings,
        why_empty: None,
    })
}

/// `Type.field` → the 1-based line where an SDL document defines the field
/// (the first definition, in a type or a type extension); empty when the
/// document does not parse.
pub fn sdl_field_lines(text: &str) -> std::collections::HashMap<String, u32> {
    use apollo_compiler::ast::Definition as D;
    let Ok(doc) = sdl::parse(
        text.trim_start_matches('\u{feff}'),
        Path::new("schema.graphql"),
        MAX_SDL_NESTING,
    ) else {
        return Default::default();
    };
    let mut lines = std::collections::HashMap::new();
    for def in &doc.definitions {
        let (name, fields) = match def {
            D::ObjectTypeDefinition(t) => (&t.name, &t.fields),
            D::ObjectTypeExtension(t) => (&t.name, &t.fields),
            _ => continue,
        };
        for f in fields {
            let Some(at) = f.location().and_then(|s| s.line_column(&doc.sources)) else {
                continue;
            };
            let line = u32::try_from(at.line).unwrap_or(u32::MAX);
            lines.entry(format!("{name}.{}", f.name)).or_insert(line);
        }
    }
    lines
}

/// Returns the `__schema` object of an introspection result: accepts `{"data":{"__schema":..}}` and `{"__schema":..}`.
pub fn introspection_root(value: &Value) -> Option<&Value> {
    value
        .get("data")
        .and_then(|d| d.get("__schema"))
        .or_else(|| value.get("__schema"))
        .filter(|s| s.is_object())
}

/// Loads a GraphQL introspection query result.
pub fn load_introspection(value: &Value, path: &Path) -> Result<Loaded, SpecError> {
    let mut sink = Sink::new(path);
    let root = introspection_root(value).ok_or_else(|| {
        SpecError::new(
            path,
            "not a GraphQL introspection result: no `__schema` object",
        )
        .at("#/")
        .hint("expected `{\"data\": {\"__schema\": ...}}` as returned by an introspection query")
    })?;
    let base = if value.get("data").and_then(|d| d.get("__schema")).is_some() {
        "#/data/__schema"
    } else {
        "#/__schema"
    };
    let mut ts = build_introspection(root, base, &mut sink).map_err(|(at, message)| {
        SpecError::new(path, message)
            .at(at)
            .hint("run the full introspection query; `types` must list every named type")
    })?;
    validate(&mut ts, &mut sink);
    ts.finish();
    check_roots(&mut ts, &mut sink).map_err(|message| {
        SpecError::new(path, message)
            .at(format!("{base}/queryType"))
            .hint("`__schema.queryType.name` must name an object type listed in `types`")
    })?;
    Ok(Loaded {
        api: api_from_type_system(ts, file_title(path), SpecFormat::GraphqlIntrospection),
        warnings: sink.warnings,
        why_empty: None,
    })
}

/// Collects warnings for one file.
pub(super) struct Sink<'p> {
    pub(super) file: &'p Path,
    pub(super) warnings: Vec<Warning>,
}

impl<'p> Sink<'p> {
    pub(super) fn new(file: &'p Path) -> Sink<'p> {
        Sink {
            file,
            warnings: Vec::new(),
        }
    }

    pub(super) fn warn(&mut self, location: impl Into<String>, message: impl Into<String>) {
        self.warnings.push(Warning {
            file: self.file.to_path_buf(),
            location: location.into(),
            message: message.into(),
        });
    }
}

pub(super) fn file_title(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "GraphQL API".to_string())
}
