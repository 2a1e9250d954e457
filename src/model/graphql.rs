//! The GraphQL type system, kept whole for query generation and response checks.
//!
//! The protocol-neutral [`super::Api`] flattens GraphQL into operations and schemas
//! for the graph; this keeps what that flattening loses (field arguments at any
//! depth, interfaces, wrapping types).

use indexmap::IndexMap;
use serde::Serialize;

use super::{
    Api, Location, Method, Operation, Parameter, Response, Schema, SchemaType, SpecFormat,
};
use std::collections::HashSet;

use serde_json::Value;

/// The scalars every GraphQL schema has, whether or not its document
/// declares them.
pub const BUILTIN_SCALARS: [&str; 5] = ["Int", "Float", "String", "Boolean", "ID"];

/// What sort of named type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TypeKind {
    /// A leaf value (`Int`, `ID`, or a custom scalar).
    Scalar,
    /// An object type with fields.
    Object,
    /// An interface.
    Interface,
    /// A union of object types.
    Union,
    /// An enumeration.
    Enum,
    /// An input object.
    InputObject,
}

/// A reference to a type with its list and non-null wrappers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum TypeRef {
    /// A named type.
    Named(String),
    /// `[T]`.
    List(Box<TypeRef>),
    /// `T!`.
    NonNull(Box<TypeRef>),
}

impl TypeRef {
    /// The named type at the bottom of the wrappers.
    pub fn base(&self) -> &str {
        match self {
            TypeRef::Named(n) => n,
            TypeRef::List(t) | TypeRef::NonNull(t) => t.base(),
        }
    }

    /// Whether the outermost wrapper is non-null.
    pub fn is_non_null(&self) -> bool {
        matches!(self, TypeRef::NonNull(_))
    }

    /// Whether there is a list anywhere in the wrappers.
    pub fn is_list(&self) -> bool {
        match self {
            TypeRef::Named(_) => false,
            TypeRef::List(_) => true,
            TypeRef::NonNull(t) => t.is_list(),
        }
    }
}

impl std::fmt::Display for TypeRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TypeRef::Named(n) => f.write_str(n),
            TypeRef::List(t) => write!(f, "[{t}]"),
            TypeRef::NonNull(t) => write!(f, "{t}!"),
        }
    }
}

/// An argument or input-object field.
#[derive(Debug, Clone, Serialize)]
pub struct InputValue {
    /// Its name.
    pub name: String,
    /// Its type.
    pub ty: TypeRef,
    /// The default, as GraphQL literal text.
    pub default_value: Option<String>,
    /// Its description.
    pub description: Option<String>,
}

/// A field of an object or interface type.
#[derive(Debug, Clone, Serialize)]
pub struct Field {
    /// Its name.
    pub name: String,
    /// Its arguments.
    pub args: Vec<InputValue>,
    /// Its type.
    pub ty: TypeRef,
    /// Whether it is deprecated.
    pub deprecated: bool,
    /// Its description.
    pub description: Option<String>,
}

/// A named type.
#[derive(Debug, Clone, Serialize)]
pub struct NamedType {
    /// Its name.
    pub name: String,
    /// Its kind.
    pub kind: TypeKind,
    /// Fields (objects and interfaces).
    pub fields: Vec<Field>,
    /// Fields (input objects).
    pub input_fields: Vec<InputValue>,
    /// Interfaces it implements (objects and interfaces).
    pub interfaces: Vec<String>,
    /// Members (unions) or implementers (interfaces, filled in after loading).
    pub possible_types: Vec<String>,
    /// Values (enums).
    pub enum_values: Vec<String>,
    /// Its description.
    pub description: Option<String>,
}

impl NamedType {
    /// An empty type of the given kind.
    pub fn new(name: impl Into<String>, kind: TypeKind) -> NamedType {
        NamedType {
            name: name.into(),
            kind,
            fields: Vec::new(),
            input_fields: Vec::new(),
            interfaces: Vec::new(),
            possible_types: Vec::new(),
            enum_values: Vec::new(),
            description: None,
        }
    }

    /// Looks a field up by name.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// A whole GraphQL schema.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TypeSystem {
    /// Name of the query root type.
    pub query_type: Option<String>,
    /// Name of the mutation root type.
    pub mutation_type: Option<String>,
    /// Name of the subscription root type.
    pub subscription_type: Option<String>,
    /// Every named type, built-in scalars included.
    pub types: IndexMap<String, NamedType>,
}

impl TypeSystem {
    /// Looks a named type up.
    pub fn get(&self, name: &str) -> Option<&NamedType> {
        self.types.get(name)
    }

    /// Whether `name` is a type whose values have fields to select.
    pub fn is_composite(&self, name: &str) -> bool {
        self.get(name).is_some_and(|t| {
            matches!(
                t.kind,
                TypeKind::Object | TypeKind::Interface | TypeKind::Union
            )
        })
    }

    /// Fills `possible_types` of interfaces from the objects that implement them,
    /// and adds the five built-in scalars when the document left them implicit.
    pub fn finish(&mut self) {
        for builtin in BUILTIN_SCALARS {
            self.types
                .entry(builtin.to_string())
                .or_insert_with(|| NamedType::new(builtin, TypeKind::Scalar));
        }
        let mut implementers: IndexMap<String, Vec<String>> = IndexMap::new();
        for t in self.types.values() {
            for i in &t.interfaces {
                implementers
                    .entry(i.clone())
                    .or_default()
                    .push(t.name.clone());
            }
        }
        for (iface, objs) in implementers {
            if let Some(t) = self.types.get_mut(&iface)
                && t.kind == TypeKind::Interface
            {
                for o in objs {
                    if !t.possible_types.contains(&o) {
                        t.possible_types.push(o);
                    }
                }
            }
        }
        if self.query_type.is_none() && self.types.contains_key("Query") {
            self.query_type = Some("Query".into());
        }
        if self.mutation_type.is_none() && self.types.contains_key("Mutation") {
            self.mutation_type = Some("Mutation".into());
        }
        if self.subscription_type.is_none() && self.types.contains_key("Subscription") {
            self.subscription_type = Some("Subscription".into());
        }
    }
}

// ---------------------------------------------------------------------------
// Type system → Api

/// Writes `s` as a quoted GraphQL string with the escapes the spec defines
/// (control characters, C1 included, as `\uXXXX`), and characters outside
/// the Basic Multilingual Plane as surrogate pairs, which every spec
/// edition accepts: for queries sent and for schemas written alike.
pub fn write_string_literal(s: &str, out: &mut String) {
    use std::fmt::Write as _;
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c if (c as u32) > 0xFFFF => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{u:04X}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Parses an executable document (a query generated, sent or logged) with
/// apollo-parser, the parser the SDL loader uses; when it does not parse,
/// the first syntax error at its `line:column`. Nesting is bounded by the
/// parser's recursion limit, so a hostile document is an error, not a crash.
pub fn parse_executable(text: &str) -> Result<apollo_compiler::ast::Document, String> {
    apollo_compiler::parser::Parser::new()
        .parse_ast(text, "query.graphql")
        .map_err(|with| {
            let Some(first) = with.errors.iter().next() else {
                return "syntax error".to_string();
            };
            match first.line_column_range() {
                Some(r) => format!("{}:{}: {}", r.start.line, r.start.column, first.error),
                None => first.error.to_string(),
            }
        })
}

/// The operation of a GraphQL document that a request with `name` (its
/// `operationName`; empty counts as none) executes: the one so named, or
/// the document's only operation; none when neither is there.
pub fn executed_operation<'d>(
    doc: &'d apollo_compiler::ast::Document,
    name: Option<&str>,
) -> Option<&'d apollo_compiler::ast::OperationDefinition> {
    use apollo_compiler::ast::Definition;
    let ops: Vec<&apollo_compiler::ast::OperationDefinition> = doc
        .definitions
        .iter()
        .filter_map(|d| match d {
            Definition::OperationDefinition(o) => Some(&**o),
            _ => None,
        })
        .collect();
    match name.filter(|n| !n.is_empty()) {
        Some(n) => ops
            .into_iter()
            .find(|o| o.name.as_ref().is_some_and(|own| own.as_str() == n)),
        None if ops.len() == 1 => ops.into_iter().next(),
        None => None,
    }
}

/// Builds the protocol-neutral Api from a type system (the SDL and
/// introspection loaders' last step, and a live endpoint's): one operation
/// per root field, one named schema per object, interface, union, input
/// object and enum.
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
        left_out: Vec::new(),
        inline: IndexMap::new(),
        document: None,
        security_schemes: IndexMap::new(),
    }
}

fn operation(ts: &TypeSystem, method: Method, word: &str, root: &str, field: &Field) -> Operation {
    let parameters = field
        .args
        .iter()
        .map(|a| Parameter {
            name: a.name.clone(),
            location: Location::Argument,
            required: a.ty.is_non_null() && a.default_value.is_none(),
            schema: type_schema(ts, &a.ty),
            deep_object: false,
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
        security: Vec::new(),
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
    use super::write_string_literal;

    #[test]
    fn string_literals_escape_every_control_character() {
        let mut out = String::new();
        write_string_literal("a\"b\\c\nd\u{8}\u{1b}\u{9b}é😀", &mut out);
        assert_eq!(out, r#""a\"b\\c\nd\b\u001B\u009Bé\uD83D\uDE00""#);
    }
}
