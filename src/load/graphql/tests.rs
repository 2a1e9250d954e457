//! The GraphQL loaders on small schemas and on the corpus.

use super::*;

use crate::model::graphql::{InputValue, TypeKind, TypeRef, TypeSystem};
use crate::model::{Api, Location, Method, Operation, Parameter, Schema, SchemaType, SpecFormat};
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
fn introspected_names_outside_the_name_grammar_are_refused() {
    let named = |kind: &str, name: &str| json!({"kind": kind, "name": name, "ofType": null});
    // A read-only run's query would read `{ user { id } } mutation { drop }`.
    let splice = "user { id } } mutation { drop";
    let json = json!({"__schema": {
        "queryType": {"name": "Query"},
        "types": [
            {"kind": "OBJECT", "name": "Query", "fields": [
                {"name": splice, "args": [], "type": named("OBJECT", "User")},
                {"name": "byArg", "args": [
                    {"name": "id) { x } mutation { drop(", "type": named("SCALAR", "ID")}
                ], "type": named("OBJECT", "User")},
                {"name": "byType", "args": [], "type": named("OBJECT", "User { x }")},
                {"name": "zero\u{200b}width", "args": [], "type": named("OBJECT", "User")},
                {"name": "ok", "args": [
                    {"name": "e", "type": named("ENUM", "Color")}
                ], "type": named("OBJECT", "User")}
            ]},
            {"kind": "OBJECT", "name": "User", "fields": [
                {"name": "id", "args": [], "type": named("SCALAR", "ID")},
                {"name": "9lives", "args": [], "type": named("SCALAR", "ID")}
            ]},
            {"kind": "ENUM", "name": "Color", "enumValues": [{"name": "RED"}, {"name": "RED } mutation { x"}]},
            {"kind": "OBJECT", "name": "Bad Type", "fields": []}
        ]
    }});
    let loaded = load_introspection(&json, Path::new("x.json")).expect("loads");
    let api = &loaded.api;
    let names: Vec<&str> = api.operations.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["Query.ok"]);
    assert_eq!(
        api.schemas["User"].properties.keys().collect::<Vec<_>>(),
        ["id"]
    );
    let ts = api.graphql.as_ref().expect("a type system");
    assert_eq!(ts.types["Color"].enum_values, ["RED"]);
    assert!(!ts.types.contains_key("Bad Type"));
    for w in &loaded.warnings {
        assert!(!w.location.contains(['{', ' ']), "{w:?}");
    }
    let said: Vec<&str> = loaded.warnings.iter().map(|w| w.message.as_str()).collect();
    assert!(
        said.iter()
            .filter(|m| m.contains("is not a GraphQL name"))
            .count()
            >= 6,
        "{said:#?}"
    );
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
fn syntax_errors_are_located_and_counted() {
    // The first error at its line and column, in an `extend schema` block too,
    // which graphql-parser 0.4 could not read at all.
    let text = "type Query { a: Int }\nextend schema {\n  query Query\n}\ntype B { b: }\n";
    let err = load_sdl(text, Path::new("bad.graphql")).expect_err("syntax errors");
    assert_eq!(err.location.as_deref(), Some("3:9"), "{err}");
    assert!(
        err.message
            .starts_with("GraphQL SDL syntax error: expected"),
        "{}",
        err.message
    );
    assert!(err.message.contains("more syntax error"), "{}", err.message);
    assert!(err.to_string().contains("bad.graphql"), "{err}");
}

#[test]
fn nesting_past_the_limit_is_refused_at_its_place() {
    let deep = |n: usize| format!("{}Int{}", "[".repeat(n), "]".repeat(n));
    // Far past the limit, in a type and in a default value: refused, not a crash.
    for text in [
        format!("type Query {{\n  a: {} }}", deep(200_000)),
        format!(
            "type Query {{\n  a(x: [Int] = {}0{}): Int }}",
            "[".repeat(200_000),
            "]".repeat(200_000)
        ),
    ] {
        let err = load_sdl(&text, Path::new("deep.graphql")).expect_err("too deep");
        assert!(err.message.contains("deeper than 64 levels"), "{err}");
        let at = err.location.clone().expect("located");
        assert!(at.starts_with("2:"), "{at}");
    }
    // At the limit it loads.
    let text = format!("type Query {{ a: {} }}", deep(MAX_SDL_NESTING));
    assert!(load_sdl(&text, Path::new("ok.graphql")).is_ok());
}

#[test]
fn the_schema_is_read_natively_with_its_description_and_extensions() {
    let text = r#"
"""The schema's description."""
schema @link(url: "https://specs.apollo.dev/link/v1.0") { query: Q }
# An extension has no description (the spec's grammar gives it none).
extend schema @composeDirective(name: "@custom") { mutation: M }
extend schema { subscription: S }
"Q's own words." type Q { a: Int }
type M { b: Int }
type S { c: Int }
"#;
    let loaded = load(text);
    assert!(loaded.is_complete(), "{:?}", loaded.warnings);
    let ts = loaded.api.graphql.as_ref().expect("ts");
    assert_eq!(ts.query_type.as_deref(), Some("Q"));
    assert_eq!(ts.mutation_type.as_deref(), Some("M"));
    assert_eq!(ts.subscription_type.as_deref(), Some("S"));
    assert_eq!(
        ts.get("Q").and_then(|q| q.description.as_deref()),
        Some("Q's own words.")
    );
}

#[test]
fn an_operation_in_a_schema_document_is_left_out_with_a_warning() {
    let text = "type Query { a: Int }\nquery Q { a }\nfragment F on Query { a }\n";
    let loaded = load(text);
    let got: Vec<(&str, &str)> = loaded
        .warnings
        .iter()
        .map(|w| (w.location.as_str(), w.message.as_str()))
        .collect();
    assert_eq!(
        got,
        [(
            "2:1",
            "an operation or fragment in a schema document; ignored, with any others"
        )]
    );
    assert_eq!(loaded.api.operations.len(), 1);
}

#[test]
fn an_object_default_keeps_its_written_order() {
    let text =
        "input O { z: Int, a: Int }\ntype Query { f(o: O = {z: 1, a: 2.50, s: \"x\\n\"}): Int }";
    let loaded = load(text);
    let ts = loaded.api.graphql.as_ref().expect("ts");
    let arg = &ts.get("Query").expect("Q").fields[0].args[0];
    assert_eq!(
        arg.default_value.as_deref(),
        Some(r#"{z: 1, a: 2.5, s: "x\n"}"#)
    );
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
            "Query.ok", "T", "Query.a", "Query.b", "Query.c", "Query.d", "Query.e", "In.f", "U",
            "U", "T", "T"
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
