//! The GraphQL loader: SDL documents and introspection results into the model.
//!
//! Both inputs become one [`TypeSystem`], which is then checked (undefined or
//! misplaced types are left out with a [`Warning`]) and flattened into the
//! protocol-neutral [`Api`] by [`api_from_type_system`]: one operation per root
//! field, one named schema per object, interface, union, input object and enum.

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::Path;

use graphql_parser::schema as gql;
use indexmap::IndexMap;
use serde_json::Value;

use super::{Loaded, SpecError, Warning};
use crate::model::graphql::{Field, InputValue, NamedType, TypeKind, TypeRef, TypeSystem};
use crate::model::{
    Api, Location, Method, Operation, Parameter, Response, Schema, SchemaType, SpecFormat,
};

/// The scalars every GraphQL schema has whether or not the document declares them.
const BUILTIN_SCALARS: [&str; 5] = ["Int", "Float", "String", "Boolean", "ID"];

/// Deepest list/non-null nesting accepted in an introspection type reference;
/// real schemas stay below 5, so anything deeper is a malformed or hostile document.
const MAX_TYPE_REF_DEPTH: usize = 32;

/// Loads a GraphQL SDL document.
pub fn load_sdl(text: &str, path: &Path) -> Result<Loaded, SpecError> {
    let mut sink = Sink::new(path);
    let prepared = prepare(text.trim_start_matches('\u{feff}'));
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
    })
}

/// `Type.field` → the 1-based line where an SDL document defines the field
/// (the first definition, in a type or a type extension); empty when the
/// document does not parse.
pub fn sdl_field_lines(text: &str) -> std::collections::HashMap<String, u32> {
    let prepared = prepare(text.trim_start_matches('\u{feff}'));
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
    })
}

/// Builds the protocol-neutral Api from a type system (used by both loaders, and later for a live endpoint's introspection).
pub fn api_from_type_system(ts: TypeSystem, title: String, format: SpecFormat) -> Api {
    let roots = [
        (Method::GraphqlQuery, "Query", ts.query_type.as_deref()),
        (
            Method::GraphqlMutation,
            "Mutation",
            ts.mutation_type.as_deref(),
        ),
        (
            Method::GraphqlSubscription,
            "Subscription",
            ts.subscription_type.as_deref(),
        ),
    ];
    let mut operations = Vec::new();
    for (method, word, root) in roots {
        let Some(root_type) = root.and_then(|r| ts.get(r)) else {
            continue;
        };
        for field in &root_type.fields {
            operations.push(operation(&ts, method, word, &root_type.name, field));
        }
    }

    let root_names: HashSet<&str> = roots.iter().filter_map(|(_, _, r)| *r).collect();
    // Root types are entry points, not data, so they get no schema of their own
    // unless a field returns one (GitHub's `relay: Query!`): a reference to a schema
    // that is not there would leave the graph with a dangling edge.
    let referenced_roots: HashSet<&str> = ts
        .types
        .values()
        .flat_map(|t| {
            t.fields
                .iter()
                .map(|f| f.ty.base())
                .chain(t.input_fields.iter().map(|f| f.ty.base()))
        })
        .filter(|base| root_names.contains(base))
        .collect();
    let mut schemas = IndexMap::new();
    for t in ts.types.values() {
        if t.kind == TypeKind::Scalar
            || t.name.starts_with("__")
            || (root_names.contains(t.name.as_str()) && !referenced_roots.contains(t.name.as_str()))
        {
            continue;
        }
        schemas.insert(t.name.clone(), named_type_schema(&ts, t));
    }

    Api {
        title,
        version: None,
        format,
        servers: Vec::new(),
        operations,
        schemas,
        webhooks: Vec::new(),
        graphql: Some(ts),
    }
}

/// Collects warnings for one file.
struct Sink<'p> {
    file: &'p Path,
    warnings: Vec<Warning>,
}

impl<'p> Sink<'p> {
    fn new(file: &'p Path) -> Sink<'p> {
        Sink {
            file,
            warnings: Vec::new(),
        }
    }

    fn warn(&mut self, location: impl Into<String>, message: impl Into<String>) {
        self.warnings.push(Warning {
            file: self.file.to_path_buf(),
            location: location.into(),
            message: message.into(),
        });
    }
}

fn file_title(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "GraphQL API".to_string())
}

// ---------------------------------------------------------------------------
// SDL

/// A root operation type declared by `extend schema`, which graphql-parser 0.4
/// cannot parse and [`prepare`] therefore cuts out of the text.
struct RootDecl {
    operation: String,
    type_name: String,
    line: usize,
}

/// SDL text made parseable by graphql-parser 0.4, plus what was cut out of it.
struct Prepared<'a> {
    text: Cow<'a, str>,
    roots: Vec<RootDecl>,
}

/// Blanks out the two pieces of current SDL syntax that graphql-parser 0.4 rejects:
/// `extend schema ...` (its root types are returned instead) and a description
/// string before `schema { ... }` (descriptions of the schema are not used).
///
/// Blanked bytes become spaces and newlines are kept, so the parser's line numbers
/// still match the file. The scan is a single pass that only tracks strings,
/// comments and nesting, so it costs little next to the parse itself.
fn prepare(text: &str) -> Prepared<'_> {
    let b = text.as_bytes();
    let mut blanks: Vec<(usize, usize)> = Vec::new();
    let mut roots = Vec::new();
    let mut depth = 0usize;
    // The previous token at nesting depth 0, which decides what a `schema` keyword is.
    let mut prev = Tok::Other;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'#' {
            i = skip_comment(b, i);
        } else if c == b'"' {
            let end = skip_string(b, i);
            if depth == 0 {
                prev = Tok::Str(i, end);
            }
            i = end;
        } else if is_name_start(c) {
            let end = skip_name(b, i);
            if depth == 0 {
                let word = &b[i..end];
                if word == b"schema" {
                    match prev {
                        Tok::Str(s, e) => blanks.push((s, e)),
                        Tok::Extend(s) => {
                            if let Some((ext_end, decls)) = extend_schema(b, end) {
                                let line = 1 + b[..s].iter().filter(|&&c| c == b'\n').count();
                                roots.extend(decls.into_iter().map(|(operation, type_name)| {
                                    RootDecl {
                                        operation,
                                        type_name,
                                        line,
                                    }
                                }));
                                blanks.push((s, ext_end));
                                prev = Tok::Other;
                                i = ext_end;
                                continue;
                            }
                        }
                        Tok::Other => {}
                    }
                }
                prev = if word == b"extend" {
                    Tok::Extend(i)
                } else {
                    Tok::Other
                };
            }
            i = end;
        } else {
            match c {
                b'{' | b'(' | b'[' => {
                    depth += 1;
                    prev = Tok::Other;
                }
                b'}' | b')' | b']' => {
                    depth = depth.saturating_sub(1);
                    prev = Tok::Other;
                }
                b' ' | b'\t' | b'\n' | b'\r' | b',' => {}
                _ => {
                    if depth == 0 {
                        prev = Tok::Other;
                    }
                }
            }
            i += 1;
        }
    }
    if blanks.is_empty() {
        return Prepared {
            text: Cow::Borrowed(text),
            roots,
        };
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (s, e) in blanks {
        // Every cut starts and ends at an ASCII byte (a quote, a name, a brace), so
        // these slices fall on character boundaries; if not, parse the text as is.
        let (Some(keep), Some(cut)) = (text.get(last..s), text.get(s..e)) else {
            return Prepared {
                text: Cow::Borrowed(text),
                roots,
            };
        };
        out.push_str(keep);
        out.extend(cut.chars().map(|ch| match ch {
            '\n' | '\r' => ch,
            _ => ' ',
        }));
        last = e;
    }
    out.push_str(text.get(last..).unwrap_or(""));
    Prepared {
        text: Cow::Owned(out),
        roots,
    }
}

#[derive(Clone, Copy)]
enum Tok {
    /// A string from this offset to that one (a description).
    Str(usize, usize),
    /// The `extend` keyword at this offset.
    Extend(usize),
    Other,
}

fn is_name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn skip_name(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
        i += 1;
    }
    i
}

fn skip_comment(b: &[u8], i: usize) -> usize {
    b[i..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |p| i + p)
}

/// Offset just past the string (plain or block) starting at `i`.
fn skip_string(b: &[u8], i: usize) -> usize {
    if b[i..].starts_with(b"\"\"\"") {
        let mut j = i + 3;
        while j < b.len() {
            if b[j..].starts_with(b"\\\"\"\"") {
                j += 4;
            } else if b[j..].starts_with(b"\"\"\"") {
                return j + 3;
            } else {
                j += 1;
            }
        }
        return b.len();
    }
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'"' => return j + 1,
            // An unterminated string: stop so the parser reports it at this line.
            b'\n' => return j,
            _ => j += 1,
        }
    }
    b.len()
}

/// Skips whitespace, commas and comments.
fn skip_ignored(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'\n' | b'\r' | b',' => i += 1,
            b'#' => i = skip_comment(b, i),
            _ => break,
        }
    }
    i
}

/// Reads `@dir(...)* { op: Type ... }` after `extend schema`; returns the offset
/// just past it and the root declarations. `None` when it does not have that
/// shape, so the parser reports the error.
fn extend_schema(b: &[u8], start: usize) -> Option<(usize, Vec<(String, String)>)> {
    let mut j = skip_ignored(b, start);
    let mut end = None;
    while b.get(j) == Some(&b'@') {
        let name_start = skip_ignored(b, j + 1);
        let name_end = skip_name(b, name_start);
        if name_end == name_start {
            return None;
        }
        end = Some(name_end);
        j = skip_ignored(b, name_end);
        if b.get(j) == Some(&b'(') {
            let close = skip_parens(b, j)?;
            end = Some(close);
            j = skip_ignored(b, close);
        }
    }
    let mut decls = Vec::new();
    if b.get(j) != Some(&b'{') {
        return end.map(|e| (e, decls));
    }
    j += 1;
    loop {
        j = skip_ignored(b, j);
        if b.get(j) == Some(&b'}') {
            return Some((j + 1, decls));
        }
        let op_end = skip_name(b, j);
        let operation = std::str::from_utf8(b.get(j..op_end)?).ok()?;
        j = skip_ignored(b, op_end);
        if operation.is_empty() || b.get(j) != Some(&b':') {
            return None;
        }
        j = skip_ignored(b, j + 1);
        let type_end = skip_name(b, j);
        let type_name = std::str::from_utf8(b.get(j..type_end)?).ok()?;
        if type_name.is_empty() {
            return None;
        }
        decls.push((operation.to_string(), type_name.to_string()));
        j = type_end;
    }
}

/// Offset just past the `)` matching the `(` at `i`.
fn skip_parens(b: &[u8], i: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut j = i;
    while j < b.len() {
        match b[j] {
            b'"' => {
                j = skip_string(b, j);
                continue;
            }
            b'#' => {
                j = skip_comment(b, j);
                continue;
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(j + 1);
                }
            }
            _ => {}
        }
        j += 1;
    }
    None
}

/// Turns graphql-parser's message (`schema parse error: Parse error at 3:5\nUnexpected ...`)
/// into an error located at `line:column`.
fn syntax_error(path: &Path, raw: &str) -> SpecError {
    let location = raw.split_once("Parse error at ").and_then(|(_, rest)| {
        let loc: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == ':')
            .collect();
        (!loc.is_empty()).then_some(loc)
    });
    let details: Vec<&str> = raw
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.contains("Parse error at "))
        .collect();
    let details = if details.is_empty() {
        raw.trim().to_string()
    } else {
        details.join("; ")
    };
    let err = SpecError::new(path, format!("GraphQL SDL syntax error: {details}")).hint(
        "fix the schema at that position; the file is read as GraphQL SDL because of its extension or first keyword",
    );
    match location {
        Some(loc) => err.at(loc),
        None => err,
    }
}

fn build_sdl(
    doc: gql::Document<'_, String>,
    ext_roots: Vec<RootDecl>,
    sink: &mut Sink,
) -> TypeSystem {
    let mut ts = TypeSystem::default();
    let mut extensions = Vec::new();
    let mut schema_seen = false;
    for def in doc.definitions {
        match def {
            gql::Definition::SchemaDefinition(s) => {
                let at = s.position.to_string();
                if schema_seen {
                    sink.warn(
                        at.as_str(),
                        "a second `schema` definition; its root types are merged into the first",
                    );
                }
                schema_seen = true;
                set_root(&mut ts.query_type, s.query, "query", &at, sink);
                set_root(&mut ts.mutation_type, s.mutation, "mutation", &at, sink);
                set_root(
                    &mut ts.subscription_type,
                    s.subscription,
                    "subscription",
                    &at,
                    sink,
                );
            }
            gql::Definition::TypeDefinition(t) => {
                let t = named_type_from_sdl(t, sink);
                if ts.types.contains_key(&t.name) {
                    sink.warn(
                        t.name.as_str(),
                        "the type is defined more than once; the later definition is ignored",
                    );
                } else {
                    ts.types.insert(t.name.clone(), t);
                }
            }
            // Applied after every definition so that an extension placed before its
            // base type still adds its fields after the base type's own.
            gql::Definition::TypeExtension(e) => extensions.push(e),
            // Directives change nothing that can be called or returned.
            gql::Definition::DirectiveDefinition(_) => {}
        }
    }
    for r in ext_roots {
        let at = format!("{}:1", r.line);
        let slot = match r.operation.as_str() {
            "query" => &mut ts.query_type,
            "mutation" => &mut ts.mutation_type,
            "subscription" => &mut ts.subscription_type,
            other => {
                sink.warn(
                    at,
                    format!("`extend schema` declares an unknown operation `{other}`; ignored"),
                );
                continue;
            }
        };
        set_root(slot, Some(r.type_name), &r.operation, &at, sink);
    }
    for e in extensions {
        apply_extension(&mut ts, e, sink);
    }
    ts
}

fn set_root(slot: &mut Option<String>, value: Option<String>, op: &str, at: &str, sink: &mut Sink) {
    let Some(value) = value else { return };
    match slot {
        Some(existing) if *existing != value => {
            let message = format!(
                "{op} root type declared as both `{existing}` and `{value}`; kept the first"
            );
            sink.warn(at, message);
        }
        Some(_) => {}
        None => *slot = Some(value),
    }
}

fn named_type_from_sdl(def: gql::TypeDefinition<'_, String>, sink: &mut Sink) -> NamedType {
    use gql::TypeDefinition as D;
    match def {
        D::Scalar(s) => {
            let mut t = NamedType::new(s.name, TypeKind::Scalar);
            t.description = s.description;
            t
        }
        D::Object(o) => {
            let mut t = NamedType::new(o.name, TypeKind::Object);
            t.description = o.description;
            add_interfaces(&mut t, o.implements_interfaces);
            add_fields(&mut t, o.fields, sink);
            t
        }
        D::Interface(i) => {
            let mut t = NamedType::new(i.name, TypeKind::Interface);
            t.description = i.description;
            add_interfaces(&mut t, i.implements_interfaces);
            add_fields(&mut t, i.fields, sink);
            t
        }
        D::Union(u) => {
            let mut t = NamedType::new(u.name, TypeKind::Union);
            t.description = u.description;
            add_members(&mut t, u.types);
            t
        }
        D::Enum(e) => {
            let mut t = NamedType::new(e.name, TypeKind::Enum);
            t.description = e.description;
            add_enum_values(&mut t, e.values);
            t
        }
        D::InputObject(i) => {
            let mut t = NamedType::new(i.name, TypeKind::InputObject);
            t.description = i.description;
            add_input_fields(&mut t, i.fields, sink);
            t
        }
    }
}

fn apply_extension(ts: &mut TypeSystem, ext: gql::TypeExtension<'_, String>, sink: &mut Sink) {
    use gql::TypeExtension as E;
    match ext {
        E::Scalar(s) => {
            extension_target(ts, s.name, TypeKind::Scalar, sink);
        }
        E::Object(o) => {
            if let Some(t) = extension_target(ts, o.name, TypeKind::Object, sink) {
                add_interfaces(t, o.implements_interfaces);
                add_fields(t, o.fields, sink);
            }
        }
        E::Interface(i) => {
            if let Some(t) = extension_target(ts, i.name, TypeKind::Interface, sink) {
                add_interfaces(t, i.implements_interfaces);
                add_fields(t, i.fields, sink);
            }
        }
        E::Union(u) => {
            if let Some(t) = extension_target(ts, u.name, TypeKind::Union, sink) {
                add_members(t, u.types);
            }
        }
        E::Enum(e) => {
            if let Some(t) = extension_target(ts, e.name, TypeKind::Enum, sink) {
                add_enum_values(t, e.values);
            }
        }
        E::InputObject(i) => {
            if let Some(t) = extension_target(ts, i.name, TypeKind::InputObject, sink) {
                add_input_fields(t, i.fields, sink);
            }
        }
    }
}

/// The type an extension adds to, created when the base definition is missing
/// (federation subgraphs extend types that live in other subgraphs).
fn extension_target<'t>(
    ts: &'t mut TypeSystem,
    name: String,
    kind: TypeKind,
    sink: &mut Sink,
) -> Option<&'t mut NamedType> {
    let existing_kind = ts.types.get(&name).map(|t| t.kind);
    match existing_kind {
        Some(k) if k != kind => {
            sink.warn(
                name.as_str(),
                format!(
                    "an extension as {} of a type defined as {}; the extension is ignored",
                    kind_label(kind),
                    kind_label(k)
                ),
            );
            None
        }
        _ => Some(
            ts.types
                .entry(name)
                .or_insert_with_key(|n| NamedType::new(n.clone(), kind)),
        ),
    }
}

fn add_interfaces(t: &mut NamedType, names: Vec<String>) {
    for n in names {
        if !t.interfaces.contains(&n) {
            t.interfaces.push(n);
        }
    }
}

fn add_members(t: &mut NamedType, names: Vec<String>) {
    for n in names {
        if !t.possible_types.contains(&n) {
            t.possible_types.push(n);
        }
    }
}

fn add_enum_values(t: &mut NamedType, values: Vec<gql::EnumValue<'_, String>>) {
    let mut seen: HashSet<String> = t.enum_values.iter().cloned().collect();
    for v in values {
        if seen.insert(v.name.clone()) {
            t.enum_values.push(v.name);
        }
    }
}

fn add_fields(t: &mut NamedType, fields: Vec<gql::Field<'_, String>>, sink: &mut Sink) {
    // A set rather than a scan: root types of generated schemas have thousands of fields.
    let mut seen: HashSet<String> = t.fields.iter().map(|f| f.name.clone()).collect();
    for f in fields {
        if !seen.insert(f.name.clone()) {
            sink.warn(
                format!("{}.{}", t.name, f.name),
                "the field is defined more than once; the later definition is ignored",
            );
            continue;
        }
        t.fields.push(Field {
            deprecated: f.directives.iter().any(|d| d.name == "deprecated"),
            args: f.arguments.into_iter().map(input_value_from_sdl).collect(),
            ty: type_ref_from_sdl(f.field_type),
            name: f.name,
            description: f.description,
        });
    }
}

fn add_input_fields(t: &mut NamedType, fields: Vec<gql::InputValue<'_, String>>, sink: &mut Sink) {
    let mut seen: HashSet<String> = t.input_fields.iter().map(|f| f.name.clone()).collect();
    for f in fields {
        if !seen.insert(f.name.clone()) {
            sink.warn(
                format!("{}.{}", t.name, f.name),
                "the input field is defined more than once; the later definition is ignored",
            );
            continue;
        }
        t.input_fields.push(input_value_from_sdl(f));
    }
}

fn input_value_from_sdl(v: gql::InputValue<'_, String>) -> InputValue {
    InputValue {
        default_value: v.default_value.as_ref().map(|d| {
            let mut s = String::new();
            write_literal(&mut s, d);
            s
        }),
        ty: type_ref_from_sdl(v.value_type),
        name: v.name,
        description: v.description,
    }
}

fn type_ref_from_sdl(t: gql::Type<'_, String>) -> TypeRef {
    match t {
        gql::Type::NamedType(n) => TypeRef::Named(n),
        gql::Type::ListType(inner) => TypeRef::List(Box::new(type_ref_from_sdl(*inner))),
        gql::Type::NonNullType(inner) => TypeRef::NonNull(Box::new(type_ref_from_sdl(*inner))),
    }
}

/// Writes a value as GraphQL literal text, the form introspection reports defaults in.
fn write_literal(out: &mut String, v: &gql::Value<'_, String>) {
    use gql::Value as V;
    match v {
        V::Variable(n) => {
            out.push('$');
            out.push_str(n);
        }
        V::Int(n) => out.push_str(&n.as_i64().unwrap_or_default().to_string()),
        V::Float(f) => {
            let s = f.to_string();
            out.push_str(&s);
            // Keep it a Float literal: Rust prints 1.0 as `1`.
            if f.is_finite() && !s.contains(['.', 'e', 'E']) {
                out.push_str(".0");
            }
        }
        V::String(s) => write_string_literal(out, s),
        V::Boolean(b) => out.push_str(if *b { "true" } else { "false" }),
        V::Null => out.push_str("null"),
        V::Enum(n) => out.push_str(n),
        V::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_literal(out, item);
            }
            out.push(']');
        }
        V::Object(fields) => {
            out.push('{');
            for (i, (k, item)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(k);
                out.push_str(": ");
                write_literal(out, item);
            }
            out.push('}');
        }
    }
}

fn write_string_literal(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

// ---------------------------------------------------------------------------
// Introspection

/// Reads `__schema`; an `Err` holds a location and message for a [`SpecError`].
fn build_introspection(
    root: &Value,
    base: &str,
    sink: &mut Sink,
) -> Result<TypeSystem, (String, String)> {
    let mut ts = TypeSystem {
        query_type: root_type_name(root, "queryType"),
        mutation_type: root_type_name(root, "mutationType"),
        subscription_type: root_type_name(root, "subscriptionType"),
        ..TypeSystem::default()
    };
    let types = root.get("types").and_then(Value::as_array).ok_or_else(|| {
        (
            format!("{base}/types"),
            "the introspection result has no `types` list".to_string(),
        )
    })?;
    for (i, entry) in types.iter().enumerate() {
        let at = format!("{base}/types/{i}");
        let Some(name) = entry.get("name").and_then(Value::as_str) else {
            sink.warn(at, "a type without a `name`; skipped");
            continue;
        };
        if name.starts_with("__") {
            continue;
        }
        let kind = match entry.get("kind").and_then(Value::as_str) {
            Some("SCALAR") => TypeKind::Scalar,
            Some("OBJECT") => TypeKind::Object,
            Some("INTERFACE") => TypeKind::Interface,
            Some("UNION") => TypeKind::Union,
            Some("ENUM") => TypeKind::Enum,
            Some("INPUT_OBJECT") => TypeKind::InputObject,
            other => {
                sink.warn(
                    name,
                    format!(
                        "the type has kind {}, which a named type cannot have; skipped",
                        other.map_or("(none)".to_string(), |k| format!("`{k}`"))
                    ),
                );
                continue;
            }
        };
        if ts.types.contains_key(name) {
            sink.warn(
                name,
                "the type is listed more than once; the later entry is ignored",
            );
            continue;
        }
        let mut t = NamedType::new(name, kind);
        t.description = str_field(entry, "description");
        match kind {
            TypeKind::Object | TypeKind::Interface => {
                t.fields = introspection_fields(entry, name, sink);
                t.interfaces = type_names(entry, "interfaces");
                t.possible_types = type_names(entry, "possibleTypes");
            }
            TypeKind::Union => t.possible_types = type_names(entry, "possibleTypes"),
            TypeKind::Enum => {
                t.enum_values = list(entry, "enumValues")
                    .filter_map(|v| v.get("name").and_then(Value::as_str))
                    .map(str::to_string)
                    .collect();
            }
            TypeKind::InputObject => {
                let mut seen = HashSet::new();
                for (j, f) in list(entry, "inputFields").enumerate() {
                    match introspection_input_value(f) {
                        Ok(v) if !seen.insert(v.name.clone()) => sink.warn(
                            format!("{name}.{}", v.name),
                            "the input field is listed more than once; the later entry is ignored",
                        ),
                        Ok(v) => t.input_fields.push(v),
                        Err(msg) => sink.warn(
                            entry_location(name, f, j),
                            format!("{msg}; input field skipped"),
                        ),
                    }
                }
            }
            TypeKind::Scalar => {}
        }
        ts.types.insert(name.to_string(), t);
    }
    Ok(ts)
}

fn introspection_fields(entry: &Value, type_name: &str, sink: &mut Sink) -> Vec<Field> {
    let mut fields = Vec::new();
    let mut seen = HashSet::new();
    for (j, f) in list(entry, "fields").enumerate() {
        let at = entry_location(type_name, f, j);
        let Some(name) = f.get("name").and_then(Value::as_str) else {
            sink.warn(at, "a field without a `name`; skipped");
            continue;
        };
        // Meta-fields refer to the `__` types, which are not part of the API.
        if name.starts_with("__") {
            continue;
        }
        if !seen.insert(name) {
            sink.warn(
                at,
                "the field is listed more than once; the later entry is ignored",
            );
            continue;
        }
        let ty = match f
            .get("type")
            .ok_or_else(|| "no `type`".to_string())
            .and_then(|t| type_ref(t, 0))
        {
            Ok(ty) => ty,
            Err(msg) => {
                sink.warn(at, format!("{msg}; field skipped"));
                continue;
            }
        };
        let args: Result<Vec<InputValue>, String> =
            list(f, "args").map(introspection_input_value).collect();
        let args = match args {
            Ok(args) => args,
            Err(msg) => {
                sink.warn(
                    at,
                    format!("an argument is malformed ({msg}); field skipped"),
                );
                continue;
            }
        };
        fields.push(Field {
            name: name.to_string(),
            args,
            ty,
            deprecated: f
                .get("isDeprecated")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            description: str_field(f, "description"),
        });
    }
    fields
}

fn introspection_input_value(v: &Value) -> Result<InputValue, String> {
    let name = v
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| "no `name`".to_string())?;
    let ty = v
        .get("type")
        .ok_or_else(|| format!("`{name}` has no `type`"))
        .and_then(|t| type_ref(t, 0).map_err(|m| format!("`{name}`: {m}")))?;
    Ok(InputValue {
        name: name.to_string(),
        ty,
        default_value: str_field(v, "defaultValue"),
        description: str_field(v, "description"),
    })
}

fn type_ref(v: &Value, depth: usize) -> Result<TypeRef, String> {
    if depth > MAX_TYPE_REF_DEPTH {
        return Err("the type reference is nested too deeply".into());
    }
    let of_type = || {
        v.get("ofType")
            .filter(|t| !t.is_null())
            .ok_or_else(|| "a wrapping type reference without `ofType`".to_string())
            .and_then(|t| type_ref(t, depth + 1))
    };
    match v.get("kind").and_then(Value::as_str) {
        Some("NON_NULL") => match of_type()? {
            TypeRef::NonNull(_) => Err("a non-null type wraps another non-null type".into()),
            inner => Ok(TypeRef::NonNull(Box::new(inner))),
        },
        Some("LIST") => Ok(TypeRef::List(Box::new(of_type()?))),
        _ => v
            .get("name")
            .and_then(Value::as_str)
            .map(|n| TypeRef::Named(n.to_string()))
            .ok_or_else(|| "a type reference without a `name`".to_string()),
    }
}

fn root_type_name(root: &Value, key: &str) -> Option<String> {
    root.get(key)
        .and_then(|t| t.get("name"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn type_names(entry: &Value, key: &str) -> Vec<String> {
    list(entry, key)
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

/// The items of an array member; a missing or null member (introspection reports
/// `fields: null` for non-object types) is an empty list.
fn list<'v>(v: &'v Value, key: &str) -> impl Iterator<Item = &'v Value> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter())
        .into_iter()
        .flatten()
}

fn str_field(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

/// `Type.field` when the entry has a name, else `Type.#index`.
fn entry_location(type_name: &str, entry: &Value, index: usize) -> String {
    match entry.get("name").and_then(Value::as_str) {
        Some(n) => format!("{type_name}.{n}"),
        None => format!("{type_name}.#{index}"),
    }
}

// ---------------------------------------------------------------------------
// Checks shared by both loaders

/// What a name refers to, built-in scalars included (they may be left implicit).
fn kind_of(types: &IndexMap<String, NamedType>, name: &str) -> Option<TypeKind> {
    types
        .get(name)
        .map(|t| t.kind)
        .or_else(|| BUILTIN_SCALARS.contains(&name).then_some(TypeKind::Scalar))
}

/// Why `name` cannot be a field's type, if it cannot.
fn output_problem(types: &IndexMap<String, NamedType>, name: &str) -> Option<String> {
    match kind_of(types, name) {
        None => Some(format!("its type `{name}` is not defined")),
        Some(TypeKind::InputObject) => Some(format!(
            "its type `{name}` is an input object, which cannot be returned"
        )),
        Some(_) => None,
    }
}

/// Why `name` cannot be an argument's or input field's type, if it cannot.
fn input_problem(types: &IndexMap<String, NamedType>, name: &str) -> Option<String> {
    match kind_of(types, name) {
        None => Some(format!("type `{name}` is not defined")),
        Some(TypeKind::Scalar | TypeKind::Enum | TypeKind::InputObject) => None,
        Some(k) => Some(format!(
            "type `{name}` is {}, which cannot be an input",
            kind_label(k)
        )),
    }
}

/// Leaves out every field, argument, member and interface that refers to a type
/// that is missing or of the wrong kind, with one warning each, so that later
/// stages can look every name up.
fn validate(ts: &mut TypeSystem, sink: &mut Sink) {
    for i in 0..ts.types.len() {
        let Some((_, t)) = ts.types.get_index_mut(i) else {
            continue;
        };
        let name = t.name.clone();
        let fields = std::mem::take(&mut t.fields);
        let input_fields = std::mem::take(&mut t.input_fields);
        let interfaces = std::mem::take(&mut t.interfaces);
        let possible_types = std::mem::take(&mut t.possible_types);
        let types = &ts.types;

        let fields: Vec<Field> = fields
            .into_iter()
            .filter_map(|f| check_field(types, &name, f, sink))
            .collect();
        let input_fields: Vec<InputValue> = input_fields
            .into_iter()
            .filter(|f| match input_problem(types, f.ty.base()) {
                None => true,
                Some(p) => {
                    sink.warn(
                        format!("{name}.{}", f.name),
                        format!("{p}; input field skipped"),
                    );
                    false
                }
            })
            .collect();
        let interfaces: Vec<String> = interfaces
            .into_iter()
            .filter(|n| match kind_of(types, n) {
                Some(TypeKind::Interface) => true,
                other => {
                    sink.warn(
                        name.as_str(),
                        format!(
                            "implements `{n}`, which {}; left out of its interfaces",
                            not_what(other, "an interface")
                        ),
                    );
                    false
                }
            })
            .collect();
        let possible_types: Vec<String> = possible_types
            .into_iter()
            .filter(|n| match kind_of(types, n) {
                Some(TypeKind::Object) => true,
                other => {
                    sink.warn(
                        name.as_str(),
                        format!(
                            "possible type `{n}` {}; left out",
                            not_what(other, "an object type")
                        ),
                    );
                    false
                }
            })
            .collect();

        if let Some((_, t)) = ts.types.get_index_mut(i) {
            t.fields = fields;
            t.input_fields = input_fields;
            t.interfaces = interfaces;
            t.possible_types = possible_types;
        }
    }
}

fn not_what(kind: Option<TypeKind>, wanted: &str) -> String {
    match kind {
        None => "is not defined".to_string(),
        Some(k) => format!("is {}, not {wanted}", kind_label(k)),
    }
}

fn check_field(
    types: &IndexMap<String, NamedType>,
    type_name: &str,
    mut field: Field,
    sink: &mut Sink,
) -> Option<Field> {
    let at = format!("{type_name}.{}", field.name);
    if let Some(p) = output_problem(types, field.ty.base()) {
        sink.warn(at, format!("{p}; field skipped"));
        return None;
    }
    let mut args = Vec::with_capacity(field.args.len());
    for a in std::mem::take(&mut field.args) {
        let Some(p) = input_problem(types, a.ty.base()) else {
            args.push(a);
            continue;
        };
        // An optional argument can simply not be sent; without a required one the
        // field cannot be called at all.
        if a.ty.is_non_null() && a.default_value.is_none() {
            sink.warn(
                at,
                format!("required argument `{}`: {p}; field skipped", a.name),
            );
            return None;
        }
        sink.warn(
            at.as_str(),
            format!("argument `{}`: {p}; argument left out", a.name),
        );
    }
    field.args = args;
    Some(field)
}

/// Checks the root types after [`TypeSystem::finish`] has filled in the default
/// names; a missing query root is fatal, a bad mutation or subscription root is not.
fn check_roots(ts: &mut TypeSystem, sink: &mut Sink) -> Result<(), String> {
    match ts.query_type.as_deref() {
        None => return Err("not a GraphQL schema: no query root type".into()),
        Some(q) => match ts.get(q).map(|t| t.kind) {
            Some(TypeKind::Object) => {}
            other => {
                return Err(format!(
                    "not a GraphQL schema: the query root type `{q}` {}",
                    not_what(other, "an object type")
                ))
            }
        },
    }
    for (slot, op) in [
        (&mut ts.mutation_type, "mutation"),
        (&mut ts.subscription_type, "subscription"),
    ] {
        let Some(name) = slot.as_deref() else {
            continue;
        };
        let kind = ts.types.get(name).map(|t| t.kind);
        if kind != Some(TypeKind::Object) {
            sink.warn(
                name,
                format!(
                    "the {op} root type `{name}` {}; its operations are left out",
                    not_what(kind, "an object type")
                ),
            );
            *slot = None;
        }
    }
    Ok(())
}

fn kind_label(kind: TypeKind) -> &'static str {
    match kind {
        TypeKind::Scalar => "a scalar",
        TypeKind::Object => "an object type",
        TypeKind::Interface => "an interface",
        TypeKind::Union => "a union",
        TypeKind::Enum => "an enum",
        TypeKind::InputObject => "an input object",
    }
}

// ---------------------------------------------------------------------------
// Type system → Api

fn operation(ts: &TypeSystem, method: Method, word: &str, root: &str, field: &Field) -> Operation {
    let parameters = field
        .args
        .iter()
        .map(|a| Parameter {
            name: a.name.clone(),
            location: Location::Argument,
            required: a.ty.is_non_null() && a.default_value.is_none(),
            schema: type_schema(ts, &a.ty),
            description: a.description.clone(),
            examples: Vec::new(),
        })
        .collect();
    let mut responses = IndexMap::new();
    responses.insert(
        "200".to_string(),
        Response {
            description: "GraphQL response".to_string(),
            content: IndexMap::from([("application/json".to_string(), type_schema(ts, &field.ty))]),
            headers: IndexMap::new(),
            links: Vec::new(),
        },
    );
    Operation {
        name: format!("{word}.{}", field.name),
        operation_id: None,
        method,
        path: field.name.clone(),
        summary: field.description.as_deref().and_then(first_line),
        tags: Vec::new(),
        deprecated: field.deprecated,
        parameters,
        request_body: None,
        responses,
        pointer: format!("{root}.{}", field.name),
    }
}

fn first_line(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

/// The schema of values of type `ty`, null included unless `ty` is non-null.
///
/// A nullable reference to a named type is `Schema::named(X)` with
/// `types: [Null]` alongside the reference: "X or null", without wrapping it in
/// alternatives. A nullable custom scalar stays untyped, since an empty `types`
/// already allows null and adding `Null` would allow only null.
fn type_schema(ts: &TypeSystem, ty: &TypeRef) -> Schema {
    match ty {
        TypeRef::NonNull(inner) => non_null_schema(ts, inner),
        _ => {
            let mut s = non_null_schema(ts, ty);
            if (!s.types.is_empty() || s.reference.is_some()) && !s.nullable() {
                s.types.push(SchemaType::Null);
            }
            s
        }
    }
}

/// The schema of the non-null values of type `ty`.
fn non_null_schema(ts: &TypeSystem, ty: &TypeRef) -> Schema {
    match ty {
        // `T!!` is not valid GraphQL, but a hand-built type system may hold it.
        TypeRef::NonNull(inner) => non_null_schema(ts, inner),
        TypeRef::List(inner) => Schema::array_of(type_schema(ts, inner)),
        TypeRef::Named(name) => named_ref_schema(ts, name),
    }
}

fn named_ref_schema(ts: &TypeSystem, name: &str) -> Schema {
    let scalar = |t: SchemaType, format: Option<&str>| Schema {
        types: vec![t],
        format: format.map(str::to_string),
        ..Schema::default()
    };
    match name {
        "Int" => scalar(SchemaType::Integer, Some("int32")),
        "Float" => scalar(SchemaType::Number, None),
        "String" => scalar(SchemaType::String, None),
        "Boolean" => scalar(SchemaType::Boolean, None),
        "ID" => scalar(SchemaType::String, Some("ID")),
        _ => match ts.get(name).map(|t| t.kind) {
            Some(TypeKind::Scalar) => Schema {
                format: Some(name.to_string()),
                ..Schema::default()
            },
            _ => Schema::named(name),
        },
    }
}

/// The named schema of a non-scalar type.
fn named_type_schema(ts: &TypeSystem, t: &NamedType) -> Schema {
    let mut s = Schema {
        description: t.description.clone(),
        ..Schema::default()
    };
    match t.kind {
        TypeKind::Object | TypeKind::Interface => {
            s.types = vec![SchemaType::Object];
            for f in &t.fields {
                s.properties.insert(f.name.clone(), type_schema(ts, &f.ty));
                if f.ty.is_non_null() {
                    s.required.push(f.name.clone());
                }
            }
        }
        TypeKind::InputObject => {
            s.types = vec![SchemaType::Object];
            for f in &t.input_fields {
                s.properties.insert(f.name.clone(), type_schema(ts, &f.ty));
                // As for arguments: a non-null input field with a default may be omitted.
                if f.ty.is_non_null() && f.default_value.is_none() {
                    s.required.push(f.name.clone());
                }
            }
        }
        TypeKind::Enum => {
            s.types = vec![SchemaType::String];
            s.enum_values = t
                .enum_values
                .iter()
                .map(|v| Value::String(v.clone()))
                .collect();
        }
        TypeKind::Union | TypeKind::Scalar => {}
    }
    if matches!(t.kind, TypeKind::Union | TypeKind::Interface) {
        s.alternatives = t.possible_types.iter().map(Schema::named).collect();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::PathBuf;
    use std::time::Instant;

    const SDL: &str = r#"
"""The schema's own description, which graphql-parser 0.4 cannot parse."""
schema { query: Query mutation: Mutation }

directive @key(fields: String!) repeatable on OBJECT | INTERFACE

"Something with an id."
interface Node { id: ID! }

type User implements Node @key(fields: "id") {
  id: ID!
  name: String
  friends(first: Int = 10, after: String): [User!]!
}

type Post implements Node {
  id: ID!
  title: String!
  author: User
}

union SearchResult = User | Post

enum Role { ADMIN USER }

input UserFilter {
  role: Role! = USER
  nameLike: String
  ids: [ID!]!
}

scalar DateTime

type Query {
  """
  Looks one node up.
  Second line.
  """
  node(id: ID!): Node
  search(terms: [String!]! = ["a\"b", "c"], filter: UserFilter, limit: Float = 1.0): [SearchResult]
}

type Mutation {
  setRole(id: ID!, role: Role!): User
}

extend type Query {
  me: User! @deprecated(reason: "use node")
}

extend type Post {
  published: DateTime
}
"#;

    fn load(text: &str) -> Loaded {
        match load_sdl(text, Path::new("test.graphql")) {
            Ok(l) => l,
            Err(e) => panic!("load failed: {e}"),
        }
    }

    fn op<'a>(api: &'a Api, name: &str) -> &'a Operation {
        api.operation(name)
            .unwrap_or_else(|| panic!("no operation {name}"))
    }

    fn param<'a>(o: &'a Operation, name: &str) -> &'a Parameter {
        o.parameters
            .iter()
            .find(|p| p.name == name)
            .unwrap_or_else(|| panic!("no parameter {name} on {}", o.name))
    }

    fn response_schema(o: &Operation) -> &Schema {
        &o.responses["200"].content["application/json"]
    }

    fn nullable_named(name: &str) -> Schema {
        Schema {
            types: vec![SchemaType::Null],
            ..Schema::named(name)
        }
    }

    #[test]
    fn sdl_type_system() {
        let loaded = load(SDL);
        assert!(loaded.is_complete(), "{:?}", loaded.warnings);
        let ts = loaded.api.graphql.as_ref().expect("type system");
        assert_eq!(ts.query_type.as_deref(), Some("Query"));
        assert_eq!(ts.mutation_type.as_deref(), Some("Mutation"));
        assert_eq!(ts.subscription_type, None);

        let query = ts.get("Query").expect("Query");
        let names: Vec<&str> = query.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["node", "search", "me"]);
        assert!(query.field("me").expect("me").deprecated);
        assert_eq!(
            query.field("node").and_then(|f| f.description.as_deref()),
            Some("Looks one node up.\nSecond line.")
        );
        let search = query.field("search").expect("search");
        assert_eq!(search.args[0].ty.to_string(), "[String!]!");
        assert_eq!(
            search.args[0].default_value.as_deref(),
            Some(r#"["a\"b", "c"]"#)
        );
        assert_eq!(search.args[2].default_value.as_deref(), Some("1.0"));
        assert_eq!(search.ty.to_string(), "[SearchResult]");

        let node = ts.get("Node").expect("Node");
        assert_eq!(node.kind, TypeKind::Interface);
        assert_eq!(node.possible_types, ["User", "Post"]);
        assert_eq!(node.description.as_deref(), Some("Something with an id."));
        assert_eq!(ts.get("User").expect("User").interfaces, ["Node"]);
        assert_eq!(
            ts.get("SearchResult").expect("union").possible_types,
            ["User", "Post"]
        );
        assert_eq!(ts.get("Role").expect("enum").enum_values, ["ADMIN", "USER"]);
        let filter = ts.get("UserFilter").expect("input");
        assert_eq!(filter.kind, TypeKind::InputObject);
        assert_eq!(
            filter.input_fields[0].default_value.as_deref(),
            Some("USER")
        );
        // The extension's field comes after the base type's own.
        let post = ts.get("Post").expect("Post");
        assert_eq!(
            post.fields.last().map(|f| f.name.as_str()),
            Some("published")
        );
        assert_eq!(ts.get("DateTime").map(|t| t.kind), Some(TypeKind::Scalar));
        assert_eq!(ts.get("Int").map(|t| t.kind), Some(TypeKind::Scalar));
    }

    #[test]
    fn sdl_api() {
        let api = load(SDL).api;
        assert_eq!(api.title, "test");
        assert_eq!(api.format, SpecFormat::GraphqlSdl);
        let names: Vec<&str> = api.operations.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(
            names,
            ["Query.node", "Query.search", "Query.me", "Mutation.setRole"]
        );

        let node = op(&api, "Query.node");
        assert_eq!(node.method, Method::GraphqlQuery);
        assert_eq!(node.path, "node");
        assert_eq!(node.pointer, "Query.node");
        assert_eq!(node.operation_id, None);
        assert_eq!(node.summary.as_deref(), Some("Looks one node up."));
        let id = param(node, "id");
        assert!(id.required);
        assert_eq!(id.location, Location::Argument);
        assert_eq!(id.schema.types, [SchemaType::String]);
        assert_eq!(id.schema.format.as_deref(), Some("ID"));
        assert_eq!(*response_schema(node), nullable_named("Node"));
        assert_eq!(node.responses["200"].description, "GraphQL response");

        let search = op(&api, "Query.search");
        let terms = param(search, "terms");
        assert!(!terms.required, "a default makes it optional");
        assert_eq!(
            terms.schema,
            Schema::array_of(Schema::of_type(SchemaType::String))
        );
        let filter = param(search, "filter");
        assert!(!filter.required);
        assert_eq!(filter.schema, nullable_named("UserFilter"));
        let mut list = Schema::array_of(nullable_named("SearchResult"));
        list.types.push(SchemaType::Null);
        assert_eq!(*response_schema(search), list);

        let me = op(&api, "Query.me");
        assert!(me.deprecated);
        assert!(me.parameters.is_empty());
        assert_eq!(*response_schema(me), Schema::named("User"));

        let set_role = op(&api, "Mutation.setRole");
        assert_eq!(set_role.method, Method::GraphqlMutation);
        assert_eq!(param(set_role, "role").schema, Schema::named("Role"));
        assert!(param(set_role, "role").required);

        let keys: Vec<&str> = api.schemas.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["Node", "User", "Post", "SearchResult", "Role", "UserFilter"]
        );
        let user = &api.schemas["User"];
        assert_eq!(user.types, [SchemaType::Object]);
        assert_eq!(user.required, ["id", "friends"]);
        assert_eq!(
            user.properties["name"].types,
            [SchemaType::String, SchemaType::Null]
        );
        assert_eq!(
            user.properties["id"],
            Schema {
                types: vec![SchemaType::String],
                format: Some("ID".into()),
                ..Schema::default()
            }
        );
        assert_eq!(
            user.properties["friends"],
            Schema::array_of(Schema::named("User"))
        );
        // A nullable custom scalar stays "any": `[Null]` would mean only null.
        assert_eq!(
            api.schemas["Post"].properties["published"],
            Schema {
                format: Some("DateTime".into()),
                ..Schema::default()
            }
        );
        let node_schema = &api.schemas["Node"];
        assert_eq!(
            node_schema.alternatives,
            [Schema::named("User"), Schema::named("Post")]
        );
        assert!(node_schema.properties.contains_key("id"));
        assert_eq!(
            api.schemas["SearchResult"].alternatives,
            [Schema::named("User"), Schema::named("Post")]
        );
        let role = &api.schemas["Role"];
        assert_eq!(role.types, [SchemaType::String]);
        assert_eq!(role.enum_values, [json!("ADMIN"), json!("USER")]);
        let filter = &api.schemas["UserFilter"];
        assert_eq!(filter.required, ["ids"], "`role` has a default");
        assert_eq!(filter.properties["role"], Schema::named("Role"));
    }

    /// Writes a type system in the shape an introspection query returns.
    fn to_introspection(ts: &TypeSystem) -> Value {
        fn ty(t: &TypeRef) -> Value {
            match t {
                TypeRef::Named(n) => json!({"kind": "OBJECT", "name": n, "ofType": null}),
                TypeRef::List(i) => json!({"kind": "LIST", "name": null, "ofType": ty(i)}),
                TypeRef::NonNull(i) => {
                    json!({"kind": "NON_NULL", "name": null, "ofType": ty(i)})
                }
            }
        }
        fn input(v: &InputValue) -> Value {
            json!({"name": v.name, "description": v.description, "type": ty(&v.ty),
                   "defaultValue": v.default_value})
        }
        fn names(list: &[String]) -> Value {
            list.iter()
                .map(|n| json!({"kind": "OBJECT", "name": n, "ofType": null}))
                .collect()
        }
        let types: Vec<Value> = ts
            .types
            .values()
            .map(|t| {
                let kind = serde_json::to_value(t.kind).expect("kind");
                let composite = matches!(t.kind, TypeKind::Object | TypeKind::Interface);
                json!({
                    "kind": kind,
                    "name": t.name,
                    "description": t.description,
                    "fields": composite.then(|| t.fields.iter().map(|f| json!({
                        "name": f.name, "description": f.description,
                        "args": f.args.iter().map(input).collect::<Vec<_>>(),
                        "type": ty(&f.ty), "isDeprecated": f.deprecated,
                        "deprecationReason": null,
                    })).collect::<Vec<_>>()),
                    "inputFields": (t.kind == TypeKind::InputObject)
                        .then(|| t.input_fields.iter().map(input).collect::<Vec<_>>()),
                    "interfaces": composite.then(|| names(&t.interfaces)),
                    "enumValues": (t.kind == TypeKind::Enum).then(|| t.enum_values.iter()
                        .map(|v| json!({"name": v, "isDeprecated": false})).collect::<Vec<_>>()),
                    "possibleTypes": matches!(t.kind, TypeKind::Union | TypeKind::Interface)
                        .then(|| names(&t.possible_types)),
                })
            })
            .chain([json!({"kind": "OBJECT", "name": "__Schema", "fields": []})])
            .collect();
        let root = |n: &Option<String>| n.as_ref().map(|n| json!({"name": n}));
        json!({"data": {"__schema": {
            "queryType": root(&ts.query_type),
            "mutationType": root(&ts.mutation_type),
            "subscriptionType": root(&ts.subscription_type),
            "types": types,
            "directives": [],
        }}})
    }

    #[test]
    fn introspection_matches_sdl() {
        let from_sdl = load(SDL).api;
        let json = to_introspection(from_sdl.graphql.as_ref().expect("ts"));
        assert!(introspection_root(&json).is_some());
        let loaded = load_introspection(&json, Path::new("dir/schema.json")).expect("loads");
        assert!(loaded.is_complete(), "{:?}", loaded.warnings);
        let api = loaded.api;
        assert_eq!(api.title, "schema");
        assert_eq!(api.format, SpecFormat::GraphqlIntrospection);
        let ops = |a: &Api| serde_json::to_value(&a.operations).expect("ops");
        assert_eq!(ops(&api), ops(&from_sdl));
        let schemas = |a: &Api| serde_json::to_value(&a.schemas).expect("schemas");
        assert_eq!(schemas(&api), schemas(&from_sdl));
    }

    #[test]
    fn hand_written_introspection() {
        let named = |kind: &str, name: &str| json!({"kind": kind, "name": name, "ofType": null});
        let non_null = |t: Value| json!({"kind": "NON_NULL", "name": null, "ofType": t});
        let json = json!({"__schema": {
            "queryType": {"name": "query_root"},
            "mutationType": null,
            "types": [
                {"kind": "OBJECT", "name": "query_root", "fields": [
                    {"name": "user", "args": [
                        {"name": "id", "type": non_null(named("SCALAR", "ID")), "defaultValue": null},
                        {"name": "n", "type": non_null(named("SCALAR", "Int")), "defaultValue": "3"}
                    ], "type": named("OBJECT", "User"), "isDeprecated": false, "description": "A user."},
                    {"name": "broken", "args": [], "type": {"kind": "LIST", "ofType": null}},
                    {"name": "ghost", "args": [], "type": named("OBJECT", "Ghost")},
                    {"name": "__schema", "args": [], "type": non_null(named("OBJECT", "__Schema"))}
                ], "interfaces": []},
                {"kind": "OBJECT", "name": "User", "fields": [
                    {"name": "id", "args": [], "type": non_null(named("SCALAR", "ID"))},
                    {"name": "tags", "args": [], "type": {"kind": "LIST", "name": null,
                        "ofType": non_null(named("SCALAR", "String"))}}
                ]},
                {"kind": "WEIRD", "name": "Odd"},
                {"kind": "SCALAR"},
                {"kind": "OBJECT", "name": "__Type", "fields": []}
            ]
        }});
        let loaded = load_introspection(&json, Path::new("x.json")).expect("loads");
        let locations: Vec<&str> = loaded
            .warnings
            .iter()
            .map(|w| w.location.as_str())
            .collect();
        assert_eq!(
            locations,
            [
                "query_root.broken",
                "Odd",
                "#/__schema/types/3",
                "query_root.ghost"
            ]
        );
        let api = loaded.api;
        let names: Vec<&str> = api.operations.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["Query.user"]);
        let user = op(&api, "Query.user");
        assert_eq!(user.pointer, "query_root.user");
        assert_eq!(user.summary.as_deref(), Some("A user."));
        assert!(param(user, "id").required);
        assert!(!param(user, "n").required);
        assert_eq!(param(user, "n").schema.format.as_deref(), Some("int32"));
        assert_eq!(*response_schema(user), nullable_named("User"));
        let keys: Vec<&str> = api.schemas.keys().map(String::as_str).collect();
        assert_eq!(keys, ["User"]);
        let mut tags = Schema::array_of(Schema::of_type(SchemaType::String));
        tags.types.push(SchemaType::Null);
        assert_eq!(api.schemas["User"].properties["tags"], tags);
    }

    #[test]
    fn introspection_root_shapes() {
        assert!(introspection_root(&json!({"data": {"__schema": {}}})).is_some());
        assert!(introspection_root(&json!({"__schema": {}})).is_some());
        assert!(introspection_root(&json!({"data": null, "errors": []})).is_none());
        assert!(introspection_root(&json!({"openapi": "3.0.0"})).is_none());
        let err = load_introspection(&json!({"__schema": {"types": []}}), Path::new("a.json"))
            .expect_err("no query type");
        assert!(err.message.contains("no query root type"), "{err}");
        let err = load_introspection(&json!([1]), Path::new("a.json")).expect_err("not one");
        assert!(err.hint.is_some());
    }

    #[test]
    fn syntax_error_has_line() {
        let text = "type Query {\n  a: Int\n  b: (\n}\n";
        let err = load_sdl(text, Path::new("bad.graphql")).expect_err("syntax error");
        let location = err.location.clone().expect("location");
        assert!(location.starts_with("3:"), "{location}");
        assert!(err.hint.is_some());
        assert!(err.message.contains("syntax"), "{}", err.message);
    }

    #[test]
    fn no_query_root() {
        let err = load_sdl("type Foo { a: Int }", Path::new("a.graphql")).expect_err("no root");
        assert_eq!(err.message, "not a GraphQL schema: no query root type");
        let err = load_sdl(
            "schema { mutation: M } type M { a: Int }",
            Path::new("a.graphql"),
        )
        .expect_err("no root");
        assert!(err.message.contains("no query root type"));
        let err = load_sdl(
            "schema { query: Nope } type M { a: Int }",
            Path::new("a.graphql"),
        )
        .expect_err("undefined root");
        assert!(
            err.message.contains("`Nope` is not defined"),
            "{}",
            err.message
        );
    }

    #[test]
    fn recoverable_problems_become_warnings() {
        let text = r#"
type Query {
  a: Missing
  b(x: Missing!): Int
  c(x: Missing, y: Int): Int
  d(x: Query): Int
  e: In
  ok: Int
  ok: String
}
input In { f: Query, g: Int }
union U = In | Nope
type T implements Query & Absent { x: Int }
extend interface T { y: Int }
"#;
        let loaded = load(text);
        let got: Vec<(String, String)> = loaded
            .warnings
            .iter()
            .map(|w| (w.location.clone(), w.message.clone()))
            .collect();
        let locations: Vec<&str> = got.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(
            locations,
            [
                "Query.ok", "T", "Query.a", "Query.b", "Query.c", "Query.d", "Query.e", "In.f",
                "U", "U", "T", "T"
            ],
            "{got:#?}"
        );
        assert!(got[2].1.contains("`Missing` is not defined"), "{got:#?}");
        let ts = loaded.api.graphql.as_ref().expect("ts");
        let fields: Vec<&str> = ts
            .get("Query")
            .expect("Q")
            .fields
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        // An optional argument of the wrong kind is left out; the field stays.
        assert_eq!(fields, ["c", "d", "ok"]);
        assert_eq!(
            ts.get("Query")
                .and_then(|q| q.field("c"))
                .map(|f| f.args.len()),
            Some(1)
        );
        assert_eq!(ts.get("U").expect("U").possible_types, Vec::<String>::new());
        assert!(ts.get("T").expect("T").interfaces.is_empty());
        let names: Vec<&str> = loaded
            .api
            .operations
            .iter()
            .map(|o| o.name.as_str())
            .collect();
        assert_eq!(names, ["Query.c", "Query.d", "Query.ok"]);
    }

    #[test]
    fn extensions_and_extend_schema() {
        // A federation subgraph: the base types live elsewhere.
        let text = r#"
extend schema @link(url: "https://specs.apollo.dev/federation/v2.0", import: ["@key"])
extend type Query { product(id: ID!): Product }
type Product @key(fields: "id") { id: ID! }
extend schema { mutation: Mut }
type Mut { noop: Boolean }
extend type User @key(fields: "email") { email: ID! @external }
extend enum Color { RED }
enum Color { BLUE }
"#;
        let loaded = load(text);
        assert!(loaded.is_complete(), "{:?}", loaded.warnings);
        let ts = loaded.api.graphql.as_ref().expect("ts");
        assert_eq!(ts.query_type.as_deref(), Some("Query"));
        assert_eq!(ts.mutation_type.as_deref(), Some("Mut"));
        assert_eq!(ts.get("User").map(|u| u.fields.len()), Some(1));
        assert_eq!(ts.get("Color").expect("Color").enum_values, ["BLUE", "RED"]);
        let names: Vec<&str> = loaded
            .api
            .operations
            .iter()
            .map(|o| o.name.as_str())
            .collect();
        assert_eq!(names, ["Query.product", "Mutation.noop"]);
        assert_eq!(op(&loaded.api, "Mutation.noop").pointer, "Mut.noop");
    }

    #[test]
    fn prepare_keeps_line_numbers() {
        let text = "\"\"\"desc\nmore\"\"\"\nschema { query: Q }\nextend schema\n  @a(b: \")\")\n  { subscription: S }\ntype Q { a: Int }";
        let p = prepare(text);
        assert_eq!(p.text.len(), text.len());
        assert_eq!(p.text.lines().count(), text.lines().count());
        assert!(p.text.contains("schema { query: Q }"));
        assert!(!p.text.contains("desc"));
        assert!(!p.text.contains("subscription"));
        assert_eq!(p.roots.len(), 1);
        assert_eq!(p.roots[0].operation, "subscription");
        assert_eq!(p.roots[0].line, 4);
        // Untouched text is borrowed, not copied.
        assert!(matches!(
            prepare("type Q { schema: Int }").text,
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn real_root_referenced_by_a_field_gets_a_schema() {
        let api = load("type Query { relay: Query! n: Int }").api;
        assert!(api.schemas.contains_key("Query"));
        let api = load("type Query { n: Int }").api;
        assert!(api.schemas.is_empty());
    }

    #[test]
    fn corpus_loads() {
        let dir = PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../shared/corpus/graphql"
        ));
        let Ok(entries) = std::fs::read_dir(&dir) else {
            println!("skipped: GraphQL corpus not found at {}", dir.display());
            return;
        };
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        paths.sort();
        let mut failures = Vec::new();
        for path in paths {
            let Ok(text) = std::fs::read_to_string(&path) else {
                failures.push(format!("{}: unreadable", path.display()));
                continue;
            };
            let start = Instant::now();
            let result = match path.extension().and_then(|e| e.to_str()) {
                Some("graphql") => load_sdl(&text, &path),
                Some("json") => match serde_json::from_str::<Value>(&text) {
                    Ok(v) => load_introspection(&v, &path),
                    Err(e) => Err(SpecError::new(&path, e.to_string())),
                },
                _ => continue,
            };
            let elapsed = start.elapsed();
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            match result {
                Ok(l) => {
                    println!(
                        "{name}: {} ops, {} schemas, {} warnings, {:.1} ms",
                        l.api.operations.len(),
                        l.api.schemas.len(),
                        l.warnings.len(),
                        elapsed.as_secs_f64() * 1000.0
                    );
                    for w in l.warnings.iter().take(5) {
                        println!("    warning: {}: {}", w.location, w.message);
                    }
                    if l.api.operations.is_empty() {
                        failures.push(format!("{name}: no operations"));
                    }
                }
                Err(e) => failures.push(e.to_string()),
            }
        }
        assert!(failures.is_empty(), "{failures:#?}");
    }
}
