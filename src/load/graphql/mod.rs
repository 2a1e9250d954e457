//! The GraphQL loader: SDL documents and introspection results into the model.
//!
//! Both inputs become one [`TypeSystem`](crate::model::graphql::TypeSystem), which is then checked (undefined or
//! misplaced types are left out with a [`Warning`]) and flattened into the
//! protocol-neutral [`Api`](crate::model::Api) by [`api_from_type_system`]: one operation per root
//! field, one named schema per object, interface, union, input object and enum.
//! `sdl` reads SDL, `introspection_json` an introspection result,
//! `checks` keeps only what a server could serve.

use std::path::Path;

use graphql_parser::schema as gql;
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
use sdl::{build_sdl, prepare, syntax_error};

/// Deepest list/non-null nesting accepted in an introspection type reference;
/// real schemas stay below 5, so anything deeper is a malformed or hostile document.
pub(super) const MAX_TYPE_REF_DEPTH: usize = 32;

/// Deepest bracket nesting of an SDL document (list types, input values,
/// directive arguments): real schemas stay below ten.
const MAX_SDL_NESTING: usize = 64;

/// Loads a GraphQL SDL document.
pub fn load_sdl(text: &str, path: &Path) -> Result<Loaded, SpecError> {
    let mut sink = Sink::new(path);
    let prepared = prepare(text.trim_start_matches('\u{feff}'));
    if let Some(at) = sdl::too_deep(&prepared.text, MAX_SDL_NESTING) {
        return Err(SpecError::new(
            path,
            format!("brackets nest deeper than {MAX_SDL_NESTING} levels; refused"),
        )
        .at(at)
        .hint("a schema nests a few levels deep: this document is malformed or hostile"));
    }
    let doc = gql::parse_schema::<String>(&prepared.text)
        .map_err(|e| syntax_error(path, &e.to_string()))?;
    let mut ts = build_sdl(doc, prepared.roots, &mut sink);
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
    let prepared = prepare(text.trim_start_matches('\u{feff}'));
    if sdl::too_deep(&prepared.text, MAX_SDL_NESTING).is_some() {
        return Default::default();
    }
    let Ok(doc) = gql::parse_schema::<String>(&prepared.text) else {
        return Default::default();
    };
    let mut lines = std::collections::HashMap::new();
    for def in doc.definitions {
        let (name, fields) = match def {
            gql::Definition::TypeDefinition(gql::TypeDefinition::Object(t)) => (t.name, t.fields),
            gql::Definition::TypeExtension(gql::TypeExtension::Object(t)) => (t.name, t.fields),
            _ => continue,
        };
        for f in fields {
            let line = u32::try_from(f.position.line).unwrap_or(u32::MAX);
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
