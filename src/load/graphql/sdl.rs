//! Reading SDL: the document scanned for its schema blocks (root
//! declarations, extensions) and parsed into a type system, with a warning
//! for each part that cannot be read.

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::Path;

use graphql_parser::schema as gql;

use super::Sink;
use crate::load::SpecError;
use crate::load::graphql::checks::kind_label;
use crate::model::graphql::{Field, InputValue, NamedType, TypeKind, TypeRef, TypeSystem};

/// A root operation type declared by `extend schema`, which graphql-parser 0.4
/// cannot parse and [`prepare`] therefore cuts out of the text.
pub(super) struct RootDecl {
    pub(super) operation: String,
    pub(super) type_name: String,
    pub(super) line: usize,
}

/// SDL text made parseable by graphql-parser 0.4, plus what was cut out of it.
pub(super) struct Prepared<'a> {
    pub(super) text: Cow<'a, str>,
    pub(super) roots: Vec<RootDecl>,
}

/// Blanks out the two pieces of current SDL syntax that graphql-parser 0.4 rejects:
/// `extend schema ...` (its root types are returned instead) and a description
/// string before `schema { ... }` (descriptions of the schema are not used).
///
/// Blanked bytes become spaces and newlines are kept, so the parser's line numbers
/// still match the file. The scan is a single pass that only tracks strings,
/// comments and nesting, so it costs little next to the parse itself.
pub(super) fn prepare(text: &str) -> Prepared<'_> {
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
pub(super) enum Tok {
    /// A string from this offset to that one (a description).
    Str(usize, usize),
    /// The `extend` keyword at this offset.
    Extend(usize),
    Other,
}

pub(super) fn is_name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

pub(super) fn skip_name(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
        i += 1;
    }
    i
}

pub(super) fn skip_comment(b: &[u8], i: usize) -> usize {
    b[i..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |p| i + p)
}

/// Offset just past the string (plain or block) starting at `i`.
pub(super) fn skip_string(b: &[u8], i: usize) -> usize {
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
pub(super) fn skip_ignored(b: &[u8], mut i: usize) -> usize {
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
pub(super) fn extend_schema(b: &[u8], start: usize) -> Option<(usize, Vec<(String, String)>)> {
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

/// Where brackets first nest deeper than `limit`, as `line:column`: the
/// SDL parser recurses once per level, so a hostile document would overflow
/// its stack.
pub(super) fn too_deep(text: &str, limit: usize) -> Option<String> {
    let b = text.as_bytes();
    let mut depth = 0usize;
    let mut j = 0;
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
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    let before = &text[..j];
                    let line = before.matches('\n').count() + 1;
                    let column = before.len() - before.rfind('\n').map_or(0, |n| n + 1) + 1;
                    return Some(format!("{line}:{column}"));
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        j += 1;
    }
    None
}

/// Offset just past the `)` matching the `(` at `i`.
pub(super) fn skip_parens(b: &[u8], i: usize) -> Option<usize> {
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
pub(super) fn syntax_error(path: &Path, raw: &str) -> SpecError {
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

pub(super) fn build_sdl(
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

pub(super) fn set_root(
    slot: &mut Option<String>,
    value: Option<String>,
    op: &str,
    at: &str,
    sink: &mut Sink,
) {
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

pub(super) fn named_type_from_sdl(
    def: gql::TypeDefinition<'_, String>,
    sink: &mut Sink,
) -> NamedType {
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

pub(super) fn apply_extension(
    ts: &mut TypeSystem,
    ext: gql::TypeExtension<'_, String>,
    sink: &mut Sink,
) {
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
pub(super) fn extension_target<'t>(
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

pub(super) fn add_interfaces(t: &mut NamedType, names: Vec<String>) {
    for n in names {
        if !t.interfaces.contains(&n) {
            t.interfaces.push(n);
        }
    }
}

pub(super) fn add_members(t: &mut NamedType, names: Vec<String>) {
    for n in names {
        if !t.possible_types.contains(&n) {
            t.possible_types.push(n);
        }
    }
}

pub(super) fn add_enum_values(t: &mut NamedType, values: Vec<gql::EnumValue<'_, String>>) {
    let mut seen: HashSet<String> = t.enum_values.iter().cloned().collect();
    for v in values {
        if seen.insert(v.name.clone()) {
            t.enum_values.push(v.name);
        }
    }
}

pub(super) fn add_fields(t: &mut NamedType, fields: Vec<gql::Field<'_, String>>, sink: &mut Sink) {
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

pub(super) fn add_input_fields(
    t: &mut NamedType,
    fields: Vec<gql::InputValue<'_, String>>,
    sink: &mut Sink,
) {
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

pub(super) fn input_value_from_sdl(v: gql::InputValue<'_, String>) -> InputValue {
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

pub(super) fn type_ref_from_sdl(t: gql::Type<'_, String>) -> TypeRef {
    match t {
        gql::Type::NamedType(n) => TypeRef::Named(n),
        gql::Type::ListType(inner) => TypeRef::List(Box::new(type_ref_from_sdl(*inner))),
        gql::Type::NonNullType(inner) => TypeRef::NonNull(Box::new(type_ref_from_sdl(*inner))),
    }
}

/// Writes a value as GraphQL literal text, the form introspection reports defaults in.
pub(super) fn write_literal(out: &mut String, v: &gql::Value<'_, String>) {
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
        V::String(s) => crate::model::graphql::write_string_literal(s, out),
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
