//! Reading SDL: apollo-parser, through apollo-compiler's owned AST, reads
//! every construct of the October 2021 spec (`extend schema` and descriptions
//! of the schema included) and locates each syntax error; the definitions
//! become a type system, with a warning for each part that cannot be used.

use std::collections::HashSet;
use std::path::Path;

use apollo_compiler::parser::{Parser, SourceMap, SourceSpan};
use apollo_compiler::{Name, Node, ast};

use super::Sink;
use crate::load::SpecError;
use crate::load::graphql::checks::kind_label;
use crate::model::graphql::{Field, InputValue, NamedType, TypeKind, TypeRef, TypeSystem};

/// Parses an SDL document; any syntax error refuses it, located at its
/// `line:column`, as does nesting deeper than `max_nesting` (the parser and
/// the walk over its tree recurse once per level).
pub(super) fn parse(
    text: &str,
    path: &Path,
    max_nesting: usize,
) -> Result<ast::Document, SpecError> {
    let mut parser = Parser::new().recursion_limit(max_nesting);
    let parsed = parser.parse_ast(text, path);
    let too_deep = parser.recursion_reached() > max_nesting;
    let errors = match parsed {
        Ok(doc) => return Ok(doc),
        Err(with) => with.errors,
    };
    if too_deep {
        // The parser stops recording errors at its limit, so the limit's is the last.
        let at = errors
            .iter()
            .next_back()
            .and_then(|d| d.line_column_range());
        let err = SpecError::new(
            path,
            format!("brackets nest deeper than {max_nesting} levels; refused"),
        )
        .hint("a schema nests a few levels deep: this document is malformed or hostile");
        return Err(match at {
            Some(r) => err.at(format!("{}:{}", r.start.line, r.start.column)),
            None => err,
        });
    }
    let count = errors.len();
    let Some(first) = errors.iter().next() else {
        return Err(SpecError::new(path, "GraphQL SDL syntax error"));
    };
    let more = match count - 1 {
        0 => String::new(),
        1 => " (and 1 more syntax error after it)".to_string(),
        n => format!(" (and {n} more syntax errors after it)"),
    };
    let err = SpecError::new(path, format!("GraphQL SDL {}{more}", first.error)).hint(
        "fix the schema at that position; the file is read as GraphQL SDL because of its extension or first keyword",
    );
    Err(match first.line_column_range() {
        Some(r) => err.at(format!("{}:{}", r.start.line, r.start.column)),
        None => err,
    })
}

/// `line:column` of a node, or empty when it has no place in the text.
pub(super) fn line_column(sources: &SourceMap, span: Option<SourceSpan>) -> String {
    span.and_then(|s| s.line_column(sources))
        .map(|lc| format!("{}:{}", lc.line, lc.column))
        .unwrap_or_default()
}

/// Builds the type system of a parsed SDL document.
pub(super) fn build_sdl(doc: &ast::Document, sink: &mut Sink) -> TypeSystem {
    use ast::Definition as D;
    let mut ts = TypeSystem::default();
    let mut extensions = Vec::new();
    let mut extended_roots = Vec::new();
    let mut schema_seen = false;
    let mut executable_seen = false;
    for def in &doc.definitions {
        match def {
            D::SchemaDefinition(s) => {
                let at = line_column(&doc.sources, s.location());
                if schema_seen {
                    sink.warn(
                        at.as_str(),
                        "a second `schema` definition; its root types are merged into the first",
                    );
                }
                schema_seen = true;
                for root in &s.root_operations {
                    set_root_of(&mut ts, root, &at, sink);
                }
            }
            // Applied after every `schema` definition, as their merge.
            D::SchemaExtension(s) => {
                let at = line_column(&doc.sources, s.location());
                extended_roots.extend(s.root_operations.iter().map(|r| (r, at.clone())));
            }
            D::ScalarTypeDefinition(_)
            | D::ObjectTypeDefinition(_)
            | D::InterfaceTypeDefinition(_)
            | D::UnionTypeDefinition(_)
            | D::EnumTypeDefinition(_)
            | D::InputObjectTypeDefinition(_) => {
                let Some(t) = named_type_from_sdl(def, sink) else {
                    continue;
                };
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
            D::ScalarTypeExtension(_)
            | D::ObjectTypeExtension(_)
            | D::InterfaceTypeExtension(_)
            | D::UnionTypeExtension(_)
            | D::EnumTypeExtension(_)
            | D::InputObjectTypeExtension(_) => extensions.push(def),
            // Directives change nothing that can be called or returned.
            D::DirectiveDefinition(_) => {}
            D::OperationDefinition(_) | D::FragmentDefinition(_) => {
                if !executable_seen {
                    executable_seen = true;
                    sink.warn(
                        line_column(&doc.sources, def.location()),
                        "an operation or fragment in a schema document; ignored, with any others",
                    );
                }
            }
        }
    }
    for (root, at) in extended_roots {
        set_root_of(&mut ts, root, &at, sink);
    }
    for e in extensions {
        apply_extension(&mut ts, e, sink);
    }
    ts
}

fn set_root_of(
    ts: &mut TypeSystem,
    root: &(ast::OperationType, ast::NamedType),
    at: &str,
    sink: &mut Sink,
) {
    let (operation, type_name) = root;
    let (slot, op) = match operation {
        ast::OperationType::Query => (&mut ts.query_type, "query"),
        ast::OperationType::Mutation => (&mut ts.mutation_type, "mutation"),
        ast::OperationType::Subscription => (&mut ts.subscription_type, "subscription"),
    };
    set_root(slot, Some(type_name.to_string()), op, at, sink);
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

/// The named type a type definition declares; `None` for any other definition.
pub(super) fn named_type_from_sdl(def: &ast::Definition, sink: &mut Sink) -> Option<NamedType> {
    use ast::Definition as D;
    let described = |name: &Name, kind, description: &Option<Node<str>>| {
        let mut t = NamedType::new(name.as_str(), kind);
        t.description = description.as_deref().map(str::to_string);
        t
    };
    Some(match def {
        D::ScalarTypeDefinition(s) => described(&s.name, TypeKind::Scalar, &s.description),
        D::ObjectTypeDefinition(o) => {
            let mut t = described(&o.name, TypeKind::Object, &o.description);
            add_interfaces(&mut t, &o.implements_interfaces);
            add_fields(&mut t, &o.fields, sink);
            t
        }
        D::InterfaceTypeDefinition(i) => {
            let mut t = described(&i.name, TypeKind::Interface, &i.description);
            add_interfaces(&mut t, &i.implements_interfaces);
            add_fields(&mut t, &i.fields, sink);
            t
        }
        D::UnionTypeDefinition(u) => {
            let mut t = described(&u.name, TypeKind::Union, &u.description);
            add_members(&mut t, &u.members);
            t
        }
        D::EnumTypeDefinition(e) => {
            let mut t = described(&e.name, TypeKind::Enum, &e.description);
            add_enum_values(&mut t, &e.values);
            t
        }
        D::InputObjectTypeDefinition(i) => {
            let mut t = described(&i.name, TypeKind::InputObject, &i.description);
            add_input_fields(&mut t, &i.fields, sink);
            t
        }
        _ => return None,
    })
}

/// Adds a type extension to the type it extends; other definitions are ignored.
pub(super) fn apply_extension(ts: &mut TypeSystem, ext: &ast::Definition, sink: &mut Sink) {
    use ast::Definition as D;
    match ext {
        D::ScalarTypeExtension(s) => {
            extension_target(ts, &s.name, TypeKind::Scalar, sink);
        }
        D::ObjectTypeExtension(o) => {
            if let Some(t) = extension_target(ts, &o.name, TypeKind::Object, sink) {
                add_interfaces(t, &o.implements_interfaces);
                add_fields(t, &o.fields, sink);
            }
        }
        D::InterfaceTypeExtension(i) => {
            if let Some(t) = extension_target(ts, &i.name, TypeKind::Interface, sink) {
                add_interfaces(t, &i.implements_interfaces);
                add_fields(t, &i.fields, sink);
            }
        }
        D::UnionTypeExtension(u) => {
            if let Some(t) = extension_target(ts, &u.name, TypeKind::Union, sink) {
                add_members(t, &u.members);
            }
        }
        D::EnumTypeExtension(e) => {
            if let Some(t) = extension_target(ts, &e.name, TypeKind::Enum, sink) {
                add_enum_values(t, &e.values);
            }
        }
        D::InputObjectTypeExtension(i) => {
            if let Some(t) = extension_target(ts, &i.name, TypeKind::InputObject, sink) {
                add_input_fields(t, &i.fields, sink);
            }
        }
        _ => {}
    }
}

/// The type an extension adds to, created when the base definition is missing
/// (federation subgraphs extend types that live in other subgraphs).
pub(super) fn extension_target<'t>(
    ts: &'t mut TypeSystem,
    name: &Name,
    kind: TypeKind,
    sink: &mut Sink,
) -> Option<&'t mut NamedType> {
    let existing_kind = ts.types.get(name.as_str()).map(|t| t.kind);
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
                .entry(name.to_string())
                .or_insert_with_key(|n| NamedType::new(n.clone(), kind)),
        ),
    }
}

pub(super) fn add_interfaces(t: &mut NamedType, names: &[Name]) {
    for n in names {
        if !t.interfaces.iter().any(|i| i == n.as_str()) {
            t.interfaces.push(n.to_string());
        }
    }
}

pub(super) fn add_members(t: &mut NamedType, names: &[ast::NamedType]) {
    for n in names {
        if !t.possible_types.iter().any(|m| m == n.as_str()) {
            t.possible_types.push(n.to_string());
        }
    }
}

pub(super) fn add_enum_values(t: &mut NamedType, values: &[Node<ast::EnumValueDefinition>]) {
    let mut seen: HashSet<String> = t.enum_values.iter().cloned().collect();
    for v in values {
        if seen.insert(v.value.to_string()) {
            t.enum_values.push(v.value.to_string());
        }
    }
}

pub(super) fn add_fields(
    t: &mut NamedType,
    fields: &[Node<ast::FieldDefinition>],
    sink: &mut Sink,
) {
    // A set rather than a scan: root types of generated schemas have thousands of fields.
    let mut seen: HashSet<String> = t.fields.iter().map(|f| f.name.clone()).collect();
    for f in fields {
        if !seen.insert(f.name.to_string()) {
            sink.warn(
                format!("{}.{}", t.name, f.name),
                "the field is defined more than once; the later definition is ignored",
            );
            continue;
        }
        t.fields.push(Field {
            deprecated: f.directives.get("deprecated").is_some(),
            args: f
                .arguments
                .iter()
                .map(|a| input_value_from_sdl(a))
                .collect(),
            ty: type_ref_from_sdl(&f.ty),
            name: f.name.to_string(),
            description: f.description.as_deref().map(str::to_string),
        });
    }
}

pub(super) fn add_input_fields(
    t: &mut NamedType,
    fields: &[Node<ast::InputValueDefinition>],
    sink: &mut Sink,
) {
    let mut seen: HashSet<String> = t.input_fields.iter().map(|f| f.name.clone()).collect();
    for f in fields {
        if !seen.insert(f.name.to_string()) {
            sink.warn(
                format!("{}.{}", t.name, f.name),
                "the input field is defined more than once; the later definition is ignored",
            );
            continue;
        }
        t.input_fields.push(input_value_from_sdl(f));
    }
}

pub(super) fn input_value_from_sdl(v: &ast::InputValueDefinition) -> InputValue {
    InputValue {
        default_value: v.default_value.as_ref().map(|d| {
            let mut s = String::new();
            write_literal(&mut s, d);
            s
        }),
        ty: type_ref_from_sdl(&v.ty),
        name: v.name.to_string(),
        description: v.description.as_deref().map(str::to_string),
    }
}

pub(super) fn type_ref_from_sdl(t: &ast::Type) -> TypeRef {
    match t {
        ast::Type::Named(n) => TypeRef::Named(n.to_string()),
        ast::Type::NonNullNamed(n) => TypeRef::NonNull(Box::new(TypeRef::Named(n.to_string()))),
        ast::Type::List(inner) => TypeRef::List(Box::new(type_ref_from_sdl(inner))),
        ast::Type::NonNullList(inner) => {
            TypeRef::NonNull(Box::new(TypeRef::List(Box::new(type_ref_from_sdl(inner)))))
        }
    }
}

/// Writes a value as GraphQL literal text, the form introspection reports defaults in:
/// numbers in their shortest form, strings with the standard escapes.
pub(super) fn write_literal(out: &mut String, v: &ast::Value) {
    use ast::Value as V;
    match v {
        V::Variable(n) => {
            out.push('$');
            out.push_str(n);
        }
        V::Int(n) => match n.as_str().parse::<i64>() {
            Ok(i) => out.push_str(&i.to_string()),
            Err(_) => out.push_str(n.as_str()),
        },
        V::Float(f) => match f.try_to_f64() {
            Ok(x) => {
                let s = x.to_string();
                out.push_str(&s);
                // Keep it a Float literal: Rust prints 1.0 as `1`.
                if x.is_finite() && !s.contains(['.', 'e', 'E']) {
                    out.push_str(".0");
                }
            }
            Err(_) => out.push_str(f.as_str()),
        },
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
