//! The initial graph of small descriptions, edge by edge.

use super::*;
use petgraph::visit::EdgeRef;

const SDL: &str = r#"
type Query { book(id: ID!): Book }
type Mutation { createBook(input: BookInput!): Book!  createAuthor(name: String!): Author!  addReview(review: ReviewInput!): Review! }
type Author { id: ID! name: String! }
type Book { id: ID! title: String! author: Author! }
type Review { id: ID! stars: Int! book: Book! }
input BookInput { title: String!, authorId: ID! }
input ReviewInput { bookId: ID!, stars: Int! }
"#;

fn graph_of(sdl: &str) -> PropertyGraph {
    let loaded = crate::load::load_text(sdl, std::path::Path::new("t.graphql")).unwrap();
    build(&loaded.api)
}

/// Every consumes binding of operation `op`, as (schema, input, property, location).
fn bindings(g: &PropertyGraph, op: &str) -> Vec<(String, String, String, Location)> {
    let node = g.operation(op).expect("operation");
    let mut out = Vec::new();
    for e in g.graph.edges_directed(node, petgraph::Direction::Incoming) {
        let Label::Consumes { bindings } = &e.weight().label else {
            continue;
        };
        for b in bindings {
            out.push((
                g.graph[e.source()].name.clone(),
                b.input.clone(),
                b.property.clone(),
                b.location,
            ));
        }
    }
    out.sort_by(|a, b| (&a.0, &a.1, &a.2).cmp(&(&b.0, &b.1, &b.2)));
    out
}

fn binding(schema: &str, input: &str, property: &str) -> (String, String, String, Location) {
    (
        schema.into(),
        input.into(),
        property.into(),
        Location::Argument,
    )
}

#[test]
fn identifier_fields_of_graphql_input_objects_are_bound_to_their_resource() {
    let g = graph_of(SDL);
    // Named as the GraphQL search reads them: `arg.field`, as an argument.
    assert_eq!(
        bindings(&g, "Mutation.createBook"),
        [binding("Author", "input.authorId", "id")]
    );
    assert!(bindings(&g, "Mutation.addReview").contains(&binding("Book", "review.bookId", "id")));
    assert_eq!(
        bindings(&g, "Query.book"),
        [binding("Book", "id", "id")],
        "top-level arguments keep their binding"
    );
}

#[test]
fn data_fields_a_mutation_writes_are_not_fed_from_answers() {
    let g = graph_of(SDL);
    // `review` names the object being made; `stars` is data it sends.
    assert_eq!(
        bindings(&g, "Mutation.addReview"),
        [binding("Book", "review.bookId", "id")]
    );
    let review = g.schema("Review").unwrap();
    let add = g.operation("Mutation.addReview").unwrap();
    assert!(g.find_edge(review, add, EdgeKind::Consumes).is_none());
    assert!(bindings(&g, "Mutation.createAuthor").is_empty());
}

#[test]
fn graphql_input_fields_typed_id_or_named_as_an_id_are_identifiers() {
    let g = graph_of(
        r#"
type Query { reviews(filter: ReviewFilter): [Review!]! }
type Mutation { addReview(input: ReviewInput!): Review!  updateBook(input: BookPatch!): Book! }
type Author { id: ID! name: String! }
type Book { id: ID! title: String! }
type Review { id: ID! stars: Int! book: Book! }
input ReviewInput { book: ID!, stars: Int!, author_id: ID }
input BookPatch { id: ID!, title: String }
input ReviewFilter { bookTitle: String }
"#,
    );
    // A bare resource name typed `ID`, and a snake_case id.
    assert_eq!(
        bindings(&g, "Mutation.addReview"),
        [
            binding("Author", "input.author_id", "id"),
            binding("Book", "input.book", "id"),
        ]
    );
    // The object a mutation changes is named by its `id`; its title is data.
    assert_eq!(
        bindings(&g, "Mutation.updateBook"),
        [binding("Book", "input.id", "id")]
    );
    // A query's filter may be fed by any field of an earlier answer.
    assert_eq!(
        bindings(&g, "Query.reviews"),
        [binding("Book", "filter.bookTitle", "title")]
    );
}

/// Answers and bodies written inline, as many published descriptions do.
const INLINE: &str = r#"
openapi: 3.0.3
info: {title: inline, version: "1"}
paths:
  /tenants:
    post:
      operationId: createTenant
      requestBody:
        content:
          application/json:
            schema:
              type: object
              required: [name]
              properties: {name: {type: string}, plan: {type: string}}
      responses:
        '201':
          description: created, with an empty body
          content:
            application/json:
              schema: {type: object}
    get:
      operationId: listTenants
      responses:
        '200':
          description: the tenants, in an envelope
          content:
            application/json:
              schema:
                type: object
                properties:
                  data:
                    type: array
                    items:
                      type: object
                      properties: {name: {type: string}, plan: {type: string}, created: {type: string}}
  /tenants/{tenant_name}:
    get:
      operationId: getTenant
      parameters:
        - {name: tenant_name, in: path, required: true, schema: {type: string}}
      responses:
        '200':
          description: one tenant
          content:
            application/json:
              schema:
                type: object
                properties: {name: {type: string}, plan: {type: string}, created: {type: string}}
  /templates:
    get:
      operationId: listTemplates
      responses:
        '200':
          description: templates by name
          content:
            application/json:
              schema:
                type: object
                additionalProperties:
                  type: object
                  properties: {name: {type: string}, size: {type: integer}}
"#;

fn rest_graph_of(yaml: &str) -> (crate::model::Api, PropertyGraph) {
    let loaded = crate::load::load_text(yaml, std::path::Path::new("t.yaml")).unwrap();
    let g = build(&loaded.api);
    (loaded.api, g)
}

#[test]
fn inline_bodies_become_schema_nodes_named_after_their_place() {
    let (api, g) = rest_graph_of(INLINE);
    for name in [
        "createTenant.body",
        "listTenants.200",
        "listTenants.200.data[]",
        "listTemplates.200{}",
    ] {
        assert!(g.schema(name).is_some(), "{name}: {:?}", api.inline.keys());
    }
    // The list's items and the single tenant have one shape: one node.
    assert!(g.schema("getTenant.200").is_none());
    let one = &api.operation("getTenant").unwrap().responses["200"].content["application/json"];
    assert_eq!(one.reference.as_deref(), Some("listTenants.200.data[]"));
    assert_eq!(api.inline["listTenants.200.data[]"], ["tenant"]);
    // An empty object gets no node.
    assert!(!api.inline.keys().any(|k| k.starts_with("createTenant.201")));
    let produces = |op: &str, schema: &str| {
        g.find_edge(
            g.operation(op).unwrap(),
            g.schema(schema).unwrap(),
            EdgeKind::Produces,
        )
        .is_some()
    };
    assert!(produces("listTenants", "listTenants.200.data[]"));
    assert!(produces("listTemplates", "listTemplates.200{}"));
    // `tenant_name` names a tenant's name: the inline body's, by the path.
    let sources = bindings(&g, "getTenant");
    assert!(
        sources.contains(&(
            "createTenant.body".to_string(),
            "tenant_name".to_string(),
            "name".to_string(),
            Location::Path
        )),
        "{sources:?}"
    );
}

const TAGS: &str = r##"
openapi: 3.0.0
info: {title: t, version: "1"}
paths:
  /pets/{petId}:
    get:
      operationId: getPet
      parameters: [{name: petId, in: path, required: true, schema: {type: integer}}]
      responses:
        "200": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Pet"}}}}
  /pets:
    get:
      operationId: findPets
      parameters:
        - {name: tag, in: query, schema: {type: string}}
        - {name: tags, in: query, schema: {type: array, items: {type: string}}}
        - {name: petSizes, in: query, schema: {type: array, items: {type: integer}}}
      responses:
        "200": {description: ok}
components:
  schemas:
    Pet:
      type: object
      properties:
        id: {type: integer}
        size: {type: integer}
        tags: {type: array, items: {type: string}}
        owners: {type: array, items: {type: object, properties: {name: {type: string}}}}
"##;

#[test]
fn lists_of_scalars_feed_inputs_element_by_element() {
    let (_, g) = rest_graph_of(TAGS);
    let sources = bindings(&g, "findPets");
    let has = |input: &str, property: &str| {
        sources.contains(&(
            "Pet".to_string(),
            input.to_string(),
            property.to_string(),
            Location::Query,
        ))
    };
    // A single tag is one of a pet's tags; a list filter takes them too, and a
    // list of sizes is fed by single sizes.
    assert!(has("tag", "tags"), "{sources:?}");
    assert!(has("tags", "tags"), "{sources:?}");
    assert!(has("petSizes", "size"), "{sources:?}");
    // A list of objects is not a list of values.
    assert!(!sources.iter().any(|s| s.2 == "owners"), "{sources:?}");
}

/// Kinto's description: the objects a listing returns (in a `data`
/// envelope) declare no `id`, and `{id}` sits two collections deep.
const NESTED: &str = r#"
swagger: "2.0"
info: {title: t, version: "1"}
paths:
  /buckets:
    get:
      operationId: get_buckets
      responses:
        "200":
          description: the buckets
          schema:
            type: object
            properties:
              data: {type: array, items: {type: object, properties: {title: {type: string}}, additionalProperties: {}}}
  /buckets/{id}:
    get:
      operationId: get_bucket
      parameters: [{name: id, in: path, required: true, type: string}]
      responses: {"200": {description: a bucket}}
  /buckets/{bucket_id}/collections:
    get:
      operationId: get_collections
      parameters: [{name: bucket_id, in: path, required: true, type: string}]
      responses:
        "200":
          description: the collections
          schema:
            type: object
            properties:
              data: {type: array, items: {type: object, properties: {cache_expires: {type: integer}}, additionalProperties: {}}}
  /buckets/{bucket_id}/collections/{id}:
    get:
      operationId: get_collection
      parameters:
        - {name: bucket_id, in: path, required: true, type: string}
        - {name: id, in: path, required: true, type: string}
      responses: {"200": {description: a collection}}
"#;

#[test]
fn ids_under_a_collection_bind_to_what_its_listing_returns_at_every_depth() {
    let api = crate::load::load_text(NESTED, std::path::Path::new("t.yaml"))
        .unwrap()
        .api;
    let g = build(&api);
    let path = |schema: &str, input: &str| {
        (
            schema.to_string(),
            input.to_string(),
            "id".to_string(),
            Location::Path,
        )
    };
    assert_eq!(
        bindings(&g, "get_collection"),
        [
            path("get_buckets.200.data[]", "bucket_id"),
            path("get_collections.200.data[]", "id"),
        ]
    );
    assert_eq!(
        bindings(&g, "get_collections"),
        [path("get_buckets.200.data[]", "bucket_id")]
    );
    assert_eq!(
        bindings(&g, "get_bucket"),
        [path("get_buckets.200.data[]", "id")]
    );
}
