//! The GraphQL type system, kept whole for query generation and response checks.
//!
//! The protocol-neutral [`super::Api`] flattens GraphQL into operations and schemas
//! for the graph; this keeps what that flattening loses (field arguments at any
//! depth, interfaces, wrapping types).

use indexmap::IndexMap;
use serde::Serialize;

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
        for builtin in ["Int", "Float", "String", "Boolean", "ID"] {
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
            if let Some(t) = self.types.get_mut(&iface) {
                if t.kind == TypeKind::Interface {
                    for o in objs {
                        if !t.possible_types.contains(&o) {
                            t.possible_types.push(o);
                        }
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
