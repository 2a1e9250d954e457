//! End-to-end tests of the built-in demo API over real HTTP on 127.0.0.1.
//!
//! Every test starts its own server on a free port, so tests stay independent.

use std::collections::BTreeSet;

use cartograph::testing::{DemoServer, GRAPHQL_SDL, OPENAPI_YAML};
use reqwest::{Client, Method, StatusCode};
use serde_json::{Value, json};

const ALL_OPERATIONS: [&str; 17] = [
    "listAuthors",
    "createAuthor",
    "getAuthor",
    "deleteAuthor",
    "listBooks",
    "createBook",
    "getBook",
    "updateBook",
    "deleteBook",
    "listReviews",
    "createReview",
    "listOrders",
    "placeOrder",
    "getOrder",
    "cancelOrder",
    "createList",
    "getList",
];

const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

fn spec() -> Value {
    cartograph::load::parse_text(OPENAPI_YAML, std::path::Path::new("openapi.yaml"))
        .expect("openapi.yaml parses")
}

/// The (path template, method, operation) of every operation in the spec.
fn operations(spec: &Value) -> Vec<(String, String, Value)> {
    let paths = spec["paths"].as_object().expect("paths is an object");
    let mut found = Vec::new();
    for (path, item) in paths {
        for method in METHODS {
            if let Some(operation) = item.get(method) {
                found.push((path.clone(), method.to_string(), operation.clone()));
            }
        }
    }
    found
}

/// Every `$ref` string anywhere under `value`.
fn refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(object) => {
            for (key, inner) in object {
                match (key.as_str(), inner) {
                    ("$ref", Value::String(target)) => out.push(target.clone()),
                    _ => refs(inner, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| refs(item, out)),
        _ => {}
    }
}

/// Where `value` holds a null default or example, or a 3.0 `nullable`.
fn null_hints(value: &Value, at: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(object) => {
            for (key, inner) in object {
                let here = format!("{at}/{key}");
                let null_example = match (key.as_str(), inner) {
                    ("default" | "example", Value::Null) => true,
                    ("examples", Value::Array(items)) => items.contains(&Value::Null),
                    ("nullable", _) => true,
                    _ => false,
                };
                if null_example {
                    out.push(here.clone());
                }
                null_hints(inner, &here, out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                null_hints(item, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// A JSON Schema validator for an OpenAPI 3.1 schema object of `spec` (JSON Schema 2020-12).
fn validator(spec: &Value, schema: &Value) -> jsonschema::Validator {
    let mut root = schema.clone();
    // Refs point at `#/components/...`, so the components travel with the schema.
    let Value::Object(object) = &mut root else {
        panic!("schema is not an object: {schema}");
    };
    object.insert("components".into(), spec["components"].clone());
    jsonschema::draft202012::new(&root).expect("schema compiles")
}

/// One HTTP answer.
#[derive(Debug)]
struct Reply {
    status: StatusCode,
    location: Option<String>,
    etag: Option<String>,
    body: Value,
    text: String,
}

struct Harness {
    server: DemoServer,
    http: Client,
    spec: Value,
    exercised: BTreeSet<String>,
}

impl Harness {
    async fn start() -> Self {
        let server = DemoServer::start(0).await.expect("demo server starts");
        let http = Client::builder().no_proxy().build().expect("client builds");
        Self {
            server,
            http,
            spec: spec(),
            exercised: BTreeSet::new(),
        }
    }

    /// A raw request; `path` may carry a query string.
    async fn call(&self, method: Method, path: &str, body: Option<Value>) -> Reply {
        self.call_with(method, path, &[], body).await
    }

    /// A raw request with extra headers.
    async fn call_with(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> Reply {
        let url = format!("{}{path}", self.server.base_url());
        let mut request = self.http.request(method, url);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("request is answered");
        let status = response.status();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .map(|value| value.to_str().expect("ASCII header").to_string())
        };
        let location = header("location");
        let etag = header("etag");
        let text = response.text().await.expect("body is read");
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text.clone()))
        };
        Reply {
            status,
            location,
            etag,
            body,
            text,
        }
    }

    async fn get(&self, path: &str) -> Reply {
        self.call(Method::GET, path, None).await
    }

    /// Calls an operation by id and checks the answer against what the spec documents.
    async fn op(
        &mut self,
        operation_id: &str,
        params: &[(&str, u64)],
        query: &str,
        body: Option<Value>,
    ) -> Reply {
        self.op_with(operation_id, params, query, &[], body).await
    }

    /// [`Harness::op`] with extra request headers.
    async fn op_with(
        &mut self,
        operation_id: &str,
        params: &[(&str, u64)],
        query: &str,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> Reply {
        let (template, method, operation) = operations(&self.spec)
            .into_iter()
            .find(|(_, _, operation)| operation["operationId"] == operation_id)
            .unwrap_or_else(|| panic!("{operation_id} is in the spec"));
        let mut path = template.clone();
        for (name, value) in params {
            path = path.replace(&format!("{{{name}}}"), &value.to_string());
        }
        let method = Method::from_bytes(method.to_uppercase().as_bytes()).expect("HTTP method");
        let reply = self
            .call_with(method, &format!("{path}{query}"), headers, body)
            .await;
        let documented = &operation["responses"][reply.status.as_str()];
        assert!(
            documented.is_object(),
            "{operation_id} answered undocumented {}: {}",
            reply.status,
            reply.text
        );
        if let Some(schema) = documented.pointer("/content/application~1json/schema") {
            let errors: Vec<String> = validator(&self.spec, schema)
                .iter_errors(&reply.body)
                .map(|error| error.to_string())
                .collect();
            assert!(
                errors.is_empty(),
                "{operation_id} body {} violates its schema: {errors:?}",
                reply.text
            );
        }
        if documented.pointer("/headers/Location").is_some() {
            assert!(reply.location.is_some(), "{operation_id} lacks Location");
        }
        if reply.status.is_success() {
            self.exercised.insert(operation_id.to_string());
        }
        reply
    }

    async fn graphql(&self, query: &str) -> Value {
        let reply = self
            .call(Method::POST, "/graphql", Some(json!({ "query": query })))
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
        reply.body
    }

    /// Creates an author and one of their books; returns (author id, book id).
    async fn author_with_book(&mut self, stock: u64) -> (u64, u64) {
        let author = self
            .op(
                "createAuthor",
                &[],
                "",
                Some(json!({ "name": "Ann Leckie" })),
            )
            .await;
        let author_id = id_of(&author);
        let book = json!({ "title": "Ancillary Justice", "price": 14.0, "stock": stock });
        let book = self
            .op("createBook", &[("authorId", author_id)], "", Some(book))
            .await;
        assert_eq!(book.status, StatusCode::CREATED, "{}", book.text);
        (author_id, id_of(&book))
    }

    async fn order(&mut self, book_id: u64, quantity: u64) -> Reply {
        let body = json!({ "bookId": book_id, "quantity": quantity });
        self.op("placeOrder", &[], "", Some(body)).await
    }
}

fn id_of(reply: &Reply) -> u64 {
    reply.body["id"]
        .as_u64()
        .unwrap_or_else(|| panic!("no id in {}", reply.text))
}

// ---------------------------------------------------------------------------
// The description itself

#[test]
fn openapi_yaml_is_structurally_valid() {
    let spec = spec();
    assert!(
        spec["openapi"]
            .as_str()
            .is_some_and(|v| v.starts_with("3.1."))
    );
    assert!(spec["info"]["title"].is_string() && spec["info"]["version"].is_string());
    let schemas = spec["components"]["schemas"]
        .as_object()
        .expect("components/schemas");
    for name in [
        "Author",
        "Book",
        "Review",
        "Order",
        "NewAuthor",
        "NewBook",
        "BookPatch",
        "NewReview",
        "NewOrder",
        "Error",
        "ListRef",
        "ReadingList",
        "NewReadingList",
    ] {
        assert!(schemas.contains_key(name), "missing schema {name}");
    }

    let mut all_refs = Vec::new();
    refs(&spec, &mut all_refs);
    for target in &all_refs {
        let name = target
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("unexpected ref {target}"));
        assert!(schemas.contains_key(name), "dangling ref {target}");
    }

    let operations = operations(&spec);
    let ids: BTreeSet<&str> = operations
        .iter()
        .map(|(_, _, operation)| operation["operationId"].as_str().expect("operationId"))
        .collect();
    assert_eq!(ids.len(), operations.len(), "operationIds are unique");
    assert_eq!(ids, ALL_OPERATIONS.into_iter().collect());

    let mut with_body = BTreeSet::new();
    for (path, _, operation) in &operations {
        let id = &operation["operationId"];
        let responses = operation["responses"].as_object().expect("responses");
        assert!(responses.keys().any(|code| code.starts_with('2')), "{id}");
        for (code, response) in responses {
            assert!(response["description"].is_string(), "{id} {code}");
            if let Some(schema) = response.pointer("/content/application~1json/schema") {
                validator(&spec, schema);
            }
            if code == "201" {
                assert!(
                    response.pointer("/headers/Location/schema").is_some(),
                    "{id}"
                );
            }
        }
        assert_eq!(
            responses["400"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/Error",
            "{id}"
        );
        let params = operation["parameters"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let path_params: Vec<&str> = params
            .iter()
            .filter(|param| param["in"] == "path")
            .map(|param| param["name"].as_str().expect("parameter name"))
            .collect();
        for name in &path_params {
            assert!(path.contains(&format!("{{{name}}}")), "{id} param {name}");
        }
        assert_eq!(path.matches('{').count(), path_params.len(), "{id}");
        if !path_params.is_empty() {
            assert_eq!(
                responses["404"]["content"]["application/json"]["schema"]["$ref"],
                "#/components/schemas/Error",
                "{id}"
            );
        }
        if let Some(body) = operation.get("requestBody") {
            assert_eq!(body["required"], true, "{id}");
            assert!(
                body.pointer("/content/application~1json/schema").is_some(),
                "{id}"
            );
            with_body.insert(id.as_str().unwrap_or_default().to_string());
        }
    }
    let expected: BTreeSet<String> = [
        "createAuthor",
        "createBook",
        "updateBook",
        "createReview",
        "placeOrder",
        "createList",
    ]
    .map(String::from)
    .into();
    assert_eq!(with_body, expected);

    // OpenAPI 3.1 null forms, and nothing that would hand a generator a null
    // by accident: F14's gate must take a tool that writes the null branch.
    let mut nulls = Vec::new();
    null_hints(&spec, "", &mut nulls);
    assert!(
        nulls.is_empty(),
        "null defaults, examples or `nullable`: {nulls:?}"
    );
    let new_list = &schemas["NewReadingList"];
    assert!(
        new_list["required"]
            .as_array()
            .is_some_and(|names| names.contains(&json!("parent")))
    );
    assert_eq!(
        new_list["properties"]["parent"]["anyOf"],
        json!([{ "$ref": "#/components/schemas/ListRef" }, { "type": "null" }])
    );
    assert_eq!(
        new_list["properties"]["note"]["type"],
        json!(["string", "null"])
    );
    assert_eq!(
        schemas["ListRef"]["properties"]["id"]["exclusiveMinimum"],
        0
    );

    // An optional bearer scheme on exactly two operations, documenting the 401
    // a malformed header deserves (F11).
    assert_eq!(
        spec["components"]["securitySchemes"]["bearerAuth"],
        json!({
            "type": "http",
            "scheme": "bearer",
            "description": spec["components"]["securitySchemes"]["bearerAuth"]["description"]
        })
    );
    assert!(spec.get("security").is_none());
    let secured: BTreeSet<&str> = operations
        .iter()
        .filter(|(_, _, operation)| operation.get("security").is_some())
        .map(|(_, _, operation)| operation["operationId"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(secured, BTreeSet::from(["createReview", "listOrders"]));
    for (_, _, operation) in &operations {
        if operation.get("security").is_some() {
            assert_eq!(operation["security"], json!([{}, { "bearerAuth": [] }]));
            assert!(operation["responses"]["401"].is_object());
        }
    }

    // createReview's 201 deliberately documents no body.
    let review = &spec["paths"]["/authors/{authorId}/books/{bookId}/reviews"]["post"];
    assert!(review["responses"]["201"].get("content").is_none());
    // /__reset is documented in the guide and models/demo/README.md only.
    assert!(spec["paths"].get("/__reset").is_none());
}

#[tokio::test]
async fn openapi_json_is_served_with_the_live_server_url() {
    let harness = Harness::start().await;
    let reply = harness.get("/openapi.json").await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.body["servers"][0]["url"], harness.server.base_url());
    let mut expected = spec();
    expected["servers"] = reply.body["servers"].clone();
    assert_eq!(reply.body, expected);
    harness.server.shutdown().await;
}

#[test]
fn shipped_sdl_declares_the_documented_operations() {
    let document = apollo_compiler::ast::Document::parse(GRAPHQL_SDL, "schema.graphql")
        .expect("schema.graphql parses");
    let text = document.to_string();
    for needle in [
        "author(id: ID!): Author",
        "book(id: ID!): Book",
        "order(id: ID!): Order",
        "authors: [Author!]!",
        "createAuthor(name: String!, bio: String): Author!",
        "createBook(authorId: ID!, input: BookInput!): Book!",
        "placeOrder(bookId: ID!, quantity: Int!): Order!",
        "deleteAuthor(id: ID!): Boolean!",
        "author: Author!",
    ] {
        assert!(text.contains(needle), "missing {needle}");
    }
}

// ---------------------------------------------------------------------------
// Happy paths and ordinary errors

#[tokio::test]
async fn every_operation_answers_2xx_on_a_happy_path() {
    let mut h = Harness::start().await;
    let health = h.get("/__health").await;
    assert_eq!(health.status, StatusCode::OK);

    let authors = h.op("listAuthors", &[], "?limit=10", None).await;
    assert_eq!(authors.body.as_array().map(Vec::len), Some(2));

    let author = h
        .op(
            "createAuthor",
            &[],
            "",
            Some(json!({ "name": "N. K. Jemisin", "bio": "Broken Earth trilogy" })),
        )
        .await;
    assert_eq!(author.status, StatusCode::CREATED);
    let author_id = id_of(&author);
    assert_eq!(author.location, Some(format!("/authors/{author_id}")));
    let location = author.location.clone().unwrap_or_default();
    assert_eq!(h.get(&location).await.body, author.body);
    h.op("getAuthor", &[("authorId", author_id)], "", None)
        .await;

    let new_book = json!({
        "title": "The Fifth Season", "price": 10.5, "stock": 30, "tags": ["fantasy"]
    });
    let book = h
        .op("createBook", &[("authorId", author_id)], "", Some(new_book))
        .await;
    assert_eq!(book.status, StatusCode::CREATED);
    let book_id = id_of(&book);
    assert_eq!(book.body["authorId"], author_id);
    assert_eq!(book.body["status"], "available");
    let location = book.location.clone().unwrap_or_default();
    assert_eq!(h.get(&location).await.status, StatusCode::OK);

    let ids = [("authorId", author_id), ("bookId", book_id)];
    let listed = h
        .op("listBooks", &[("authorId", author_id)], "", None)
        .await;
    assert_eq!(listed.body.as_array().map(Vec::len), Some(1));
    h.op("getBook", &ids, "", None).await;
    let patch = json!({ "stock": 25, "tags": ["fantasy", "award"], "status": "available" });
    let patched = h.op("updateBook", &ids, "", Some(patch)).await;
    assert_eq!(patched.status, StatusCode::OK);
    assert_eq!(patched.body["stock"], 25);

    let review = json!({ "rating": 5, "text": "Stunning." });
    let review = h.op("createReview", &ids, "", Some(review)).await;
    assert_eq!(review.status, StatusCode::CREATED);
    let reviews = h.op("listReviews", &ids, "", None).await;
    assert_eq!(reviews.body.as_array().map(Vec::len), Some(1));

    let order = h.order(book_id, 2).await;
    assert_eq!(order.status, StatusCode::CREATED);
    let order_id = id_of(&order);
    assert_eq!(order.body["bookId"], book_id);
    assert_eq!(order.body["status"], "placed");
    let location = order.location.clone().unwrap_or_default();
    assert_eq!(h.get(&location).await.status, StatusCode::OK);
    h.op("getOrder", &[("orderId", order_id)], "", None).await;
    let placed = h.op("listOrders", &[], "?status=placed", None).await;
    assert_eq!(placed.body.as_array().map(Vec::len), Some(1));
    let cancelled = h
        .op("cancelOrder", &[("orderId", order_id)], "", None)
        .await;
    assert_eq!(cancelled.status, StatusCode::OK);
    assert_eq!(cancelled.body["status"], "cancelled");

    let deleted = h.op("deleteBook", &ids, "", None).await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    let deleted = h
        .op("deleteAuthor", &[("authorId", author_id)], "", None)
        .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);

    let top = h
        .op(
            "createList",
            &[],
            "",
            Some(json!({ "name": "To read", "parent": null })),
        )
        .await;
    assert_eq!(top.status, StatusCode::CREATED);
    assert_eq!(
        top.body,
        json!({ "id": 1, "name": "To read", "parent": null, "note": null })
    );
    let location = top.location.clone().unwrap_or_default();
    assert_eq!(h.get(&location).await.body, top.body);
    let child = json!({ "name": "SF", "parent": { "id": 1 }, "note": "for the holidays" });
    let child = h.op("createList", &[], "", Some(child)).await;
    assert_eq!(child.status, StatusCode::CREATED);
    let read = h
        .op(
            "getList",
            &[("listId", id_of(&child))],
            "?expand=parent",
            None,
        )
        .await;
    assert_eq!(read.body["parent"]["name"], "To read");

    let all: BTreeSet<String> = ALL_OPERATIONS.iter().map(|id| id.to_string()).collect();
    assert_eq!(h.exercised, all);
    h.server.shutdown().await;
}

#[tokio::test]
async fn invalid_input_answers_400_and_unknown_ids_404() {
    let mut h = Harness::start().await;
    let bad_bodies = [
        ("createAuthor", json!({})),
        ("createAuthor", json!({ "name": 7 })),
        ("createAuthor", json!({ "name": "" })),
        ("createAuthor", json!({ "name": "A", "bio": null })),
        ("createAuthor", json!([1, 2])),
        ("placeOrder", json!({ "bookId": 1 })),
        ("placeOrder", json!({ "bookId": "1", "quantity": 1 })),
        ("placeOrder", json!({ "bookId": 1, "quantity": 11 })),
        ("placeOrder", json!({ "bookId": 1, "quantity": 0 })),
        ("placeOrder", json!({ "bookId": 1, "quantity": 1.5 })),
    ];
    for (operation, body) in bad_bodies {
        let reply = h.op(operation, &[], "", Some(body.clone())).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{operation} {body}");
        assert!(reply.body["message"].is_string());
    }
    let bad_books = [
        json!({ "price": 1.0, "stock": 1 }),
        json!({ "title": "T", "price": -1, "stock": 1 }),
        json!({ "title": "T", "price": "1", "stock": 1 }),
        json!({ "title": "T", "price": 1, "stock": -1 }),
        json!({ "title": "T", "price": 1, "stock": 1, "tags": [1] }),
        json!({ "title": "T", "price": 1e12, "stock": 1 }),
    ];
    for body in bad_books {
        let reply = h
            .op("createBook", &[("authorId", 1)], "", Some(body.clone()))
            .await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{body}");
    }
    let ids = [("authorId", 1), ("bookId", 1)];
    for patch in [
        json!({ "status": "lost" }),
        json!({ "stock": "3" }),
        json!(null),
    ] {
        let reply = h.op("updateBook", &ids, "", Some(patch.clone())).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{patch}");
    }
    let reply = h
        .op(
            "createReview",
            &ids,
            "",
            Some(json!({ "rating": 6, "text": "x" })),
        )
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);

    let malformed = h
        .http
        .post(format!("{}/authors", h.server.base_url()))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .expect("answered");
    assert_eq!(malformed.status(), StatusCode::BAD_REQUEST);

    for path in [
        "/authors/abc",
        "/authors/0",
        "/orders/-1",
        "/authors/1/books/x",
    ] {
        assert_eq!(h.get(path).await.status, StatusCode::BAD_REQUEST, "{path}");
    }
    let status = h.op("listOrders", &[], "?status=lost", None).await.status;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let status = h.op("listAuthors", &[], "?limit=ten", None).await.status;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    let missing = [
        h.op("getAuthor", &[("authorId", 999)], "", None).await,
        h.op("getBook", &[("authorId", 1), ("bookId", 999)], "", None)
            .await,
        h.op("getBook", &[("authorId", 2), ("bookId", 1)], "", None)
            .await,
        h.op("getOrder", &[("orderId", 999)], "", None).await,
        h.order(999, 1).await,
    ];
    for reply in missing {
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{}", reply.text);
    }
    h.server.shutdown().await;
}

#[tokio::test]
async fn reset_restores_the_start_state() {
    let mut h = Harness::start().await;
    let author = h
        .op("createAuthor", &[], "", Some(json!({ "name": "Extra" })))
        .await;
    assert_eq!(id_of(&author), 3);
    let second = h
        .op("createAuthor", &[], "", Some(json!({ "name": "More" })))
        .await;
    assert_eq!(id_of(&second), 4);
    h.op("deleteAuthor", &[("authorId", 1)], "", None).await;
    let order = h.order(1, 1).await;
    assert_eq!(id_of(&order), 2);

    let reset = h.call(Method::POST, "/__reset", None).await;
    assert_eq!(reset.status, StatusCode::NO_CONTENT);

    let authors = h.op("listAuthors", &[], "", None).await;
    let names: Vec<&str> = authors
        .body
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|author| author["name"].as_str())
        .collect();
    assert_eq!(names, ["Ursula K. Le Guin", "Terry Pratchett"]);
    let orders = h.op("listOrders", &[], "", None).await;
    assert_eq!(orders.body.as_array().map(Vec::len), Some(1));
    let again = h
        .op("createAuthor", &[], "", Some(json!({ "name": "Extra" })))
        .await;
    assert_eq!(id_of(&again), 3);
    assert_eq!(id_of(&h.order(1, 1).await), 2);
    h.server.shutdown().await;
}

#[tokio::test]
async fn shutdown_stops_serving() {
    let harness = Harness::start().await;
    let url = format!("{}/__health", harness.server.base_url());
    assert!(harness.http.get(&url).send().await.is_ok());
    harness.server.shutdown().await;
    let fresh = Client::builder().no_proxy().build().expect("client");
    assert!(fresh.get(&url).send().await.is_err());
}

// ---------------------------------------------------------------------------
// Planted faults (models/demo/FAULTS.md)

#[tokio::test]
async fn f1_order_after_patching_stock_to_zero_is_a_500() {
    let mut h = Harness::start().await;
    let (author_id, book_id) = h.author_with_book(5).await;
    let ids = [("authorId", author_id), ("bookId", book_id)];
    let patched = h
        .op("updateBook", &ids, "", Some(json!({ "stock": 0 })))
        .await;
    assert_eq!(patched.status, StatusCode::OK);
    let order = h
        .call(
            Method::POST,
            "/orders",
            Some(json!({ "bookId": book_id, "quantity": 1 })),
        )
        .await;
    assert_eq!(order.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(order.body, json!({ "message": "internal error" }));

    // Near misses: no PATCH, stock 0 from creation, PATCH to a positive stock, seed book.
    let (_, fresh) = h.author_with_book(5).await;
    assert_eq!(h.order(fresh, 1).await.status, StatusCode::CREATED);
    let (_, empty) = h.author_with_book(0).await;
    assert_eq!(h.order(empty, 1).await.status, StatusCode::CONFLICT);
    let (author_id, restocked) = h.author_with_book(5).await;
    let ids = [("authorId", author_id), ("bookId", restocked)];
    h.op("updateBook", &ids, "", Some(json!({ "stock": 5 })))
        .await;
    let order = h.order(restocked, 1).await;
    assert_eq!(order.status, StatusCode::CREATED);
    assert_eq!(order.body["total"], 13.3, "bulk discount applied");
    let seed = [("authorId", 1), ("bookId", 1)];
    h.op("updateBook", &seed, "", Some(json!({ "stock": 0 })))
        .await;
    assert_eq!(h.order(1, 1).await.status, StatusCode::CONFLICT);
    h.server.shutdown().await;
}

#[tokio::test]
async fn f2_price_reads_back_as_a_string_after_a_price_patch() {
    let mut h = Harness::start().await;
    let (author_id, book_id) = h.author_with_book(5).await;
    let ids = [("authorId", author_id), ("bookId", book_id)];
    let path = format!("/authors/{author_id}/books/{book_id}");

    // Near miss: a PATCH without price keeps the number.
    h.op("updateBook", &ids, "", Some(json!({ "stock": 4 })))
        .await;
    assert_eq!(h.get(&path).await.body["price"], 14.0);

    let patched = h
        .op("updateBook", &ids, "", Some(json!({ "price": 12.5 })))
        .await;
    assert_eq!(patched.body["price"], 12.5);
    let read = h.get(&path).await;
    assert_eq!(read.status, StatusCode::OK);
    assert_eq!(read.body["price"], "12.50");
    let book_schema = json!({ "$ref": "#/components/schemas/Book" });
    assert!(!validator(&h.spec, &book_schema).is_valid(&read.body));
    h.server.shutdown().await;
}

#[tokio::test]
async fn f3_deleted_book_is_still_served() {
    let mut h = Harness::start().await;
    let (author_id, book_id) = h.author_with_book(5).await;
    let ids = [("authorId", author_id), ("bookId", book_id)];
    assert_eq!(
        h.op("deleteBook", &ids, "", None).await.status,
        StatusCode::NO_CONTENT
    );
    let read = h.op("getBook", &ids, "", None).await;
    assert_eq!(read.status, StatusCode::OK);
    assert_eq!(read.body["status"], "retired");
    let listed = h
        .op("listBooks", &[("authorId", author_id)], "", None)
        .await;
    assert_eq!(listed.body, json!([]));
    let again = h.op("deleteBook", &ids, "", None).await;
    assert_eq!(again.status, StatusCode::NOT_FOUND);

    // Near miss: a deleted author is really gone.
    let author = [("authorId", author_id)];
    h.op("deleteAuthor", &author, "", None).await;
    assert_eq!(
        h.op("getAuthor", &author, "", None).await.status,
        StatusCode::NOT_FOUND
    );
    h.server.shutdown().await;
}

#[tokio::test]
async fn f4_quote_in_name_filter_is_a_500_without_details() {
    let mut h = Harness::start().await;
    let reply = h.get("/authors?name=O%27Brien").await;
    assert_eq!(reply.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(reply.text, r#"{"message":"internal error"}"#);

    let found = h.op("listAuthors", &[], "?name=pratchett", None).await;
    assert_eq!(found.body.as_array().map(Vec::len), Some(1));
    let none = h.op("listAuthors", &[], "?name=OBrien", None).await;
    assert_eq!(none.body, json!([]));
    h.server.shutdown().await;
}

#[tokio::test]
async fn f5_cancelling_twice_is_a_500() {
    let mut h = Harness::start().await;
    let (_, book_id) = h.author_with_book(5).await;
    let order_id = id_of(&h.order(book_id, 1).await);
    let path = format!("/orders/{order_id}/cancel");
    let first = h.call(Method::POST, &path, None).await;
    assert_eq!(first.status, StatusCode::OK);
    assert_eq!(first.body["status"], "cancelled");
    let second = h.call(Method::POST, &path, None).await;
    assert_eq!(second.status, StatusCode::INTERNAL_SERVER_ERROR);

    // Near miss: cancelling a shipped order is a documented conflict.
    let shipped = h.op("cancelOrder", &[("orderId", 1)], "", None).await;
    assert_eq!(shipped.status, StatusCode::CONFLICT);
    h.server.shutdown().await;
}

#[tokio::test]
async fn f6_out_of_range_limit_answers_undocumented_422() {
    let mut h = Harness::start().await;
    let responses = &h.spec["paths"]["/authors"]["get"]["responses"];
    assert!(responses.get("422").is_none());
    for limit in ["0", "101"] {
        let reply = h.get(&format!("/authors?limit={limit}")).await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{limit}");
    }
    for limit in ["1", "100"] {
        let reply = h
            .op("listAuthors", &[], &format!("?limit={limit}"), None)
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{limit}");
    }
    h.server.shutdown().await;
}

#[tokio::test]
async fn f7_deleted_author_reads_as_null_in_a_non_null_field() {
    let mut h = Harness::start().await;
    let introspection = h
        .graphql(r#"{ __type(name: "Book") { fields { name type { kind ofType { name } } } } }"#)
        .await;
    let fields = introspection["data"]["__type"]["fields"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let author = fields
        .iter()
        .find(|field| field["name"] == "author")
        .expect("Book.author");
    assert_eq!(author["type"]["kind"], "NON_NULL");
    assert_eq!(author["type"]["ofType"]["name"], "Author");

    let (author_id, book_id) = h.author_with_book(5).await;
    let order_id = id_of(&h.order(book_id, 1).await);
    let query = format!(
        r#"{{ order(id: "{order_id}") {{ book {{ author {{ name }} }} }} book(id: "{book_id}") {{ title author {{ id }} }} }}"#
    );

    // Near miss: while the author exists the field is filled.
    let before = h.graphql(&query).await;
    assert_eq!(
        before["data"]["book"]["author"]["id"],
        author_id.to_string()
    );

    h.op("deleteAuthor", &[("authorId", author_id)], "", None)
        .await;
    let reply = h
        .call(Method::POST, "/graphql", Some(json!({ "query": query })))
        .await;
    assert!(reply.text.contains(r#""author":null"#), "{}", reply.text);
    assert!(reply.body.get("errors").is_none(), "{}", reply.text);
    assert_eq!(reply.body["data"]["order"]["book"]["author"], Value::Null);
    assert_eq!(reply.body["data"]["book"]["title"], "Ancillary Justice");

    // The GraphQL mutation path triggers it as well.
    let created = h
        .graphql(
            r#"mutation { createAuthor(name: "Becky Chambers") { id }
               }"#,
        )
        .await;
    let author_id = created["data"]["createAuthor"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let book = h
        .graphql(&format!(
            r#"mutation {{ createBook(authorId: "{author_id}", input: {{ title: "Wayfarers", price: 9.5, stock: 3 }}) {{ id }} }}"#
        ))
        .await;
    let book_id = book["data"]["createBook"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let deleted = h
        .graphql(&format!(
            r#"mutation {{ deleteAuthor(id: "{author_id}") }}"#
        ))
        .await;
    assert_eq!(deleted["data"]["deleteAuthor"], true);
    let orphan = h
        .graphql(&format!(
            r#"{{ book(id: "{book_id}") {{ author {{ name }} }} }}"#
        ))
        .await;
    assert_eq!(orphan, json!({ "data": { "book": { "author": null } } }));
    h.server.shutdown().await;
}

#[tokio::test]
async fn f8_non_numeric_book_id_leaks_a_stack_trace() {
    let h = Harness::start().await;
    let reply = h.graphql(r#"{ book(id: "abc") { title } }"#).await;
    let message = reply["errors"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("panicked at src/store.rs:42:9"), "{reply}");
    assert!(message.contains("stack backtrace:"), "{reply}");

    // Near misses: a numeric id works; other lookups reject bad ids cleanly.
    let ok = h.graphql(r#"{ book(id: "1") { title status } }"#).await;
    assert_eq!(
        ok,
        json!({ "data": { "book": { "title": "A Wizard of Earthsea", "status": "AVAILABLE" } } })
    );
    for query in [
        r#"{ author(id: "abc") { name } }"#,
        r#"{ order(id: "abc") { id } }"#,
    ] {
        let reply = h.graphql(query).await;
        let message = reply["errors"][0]["message"].as_str().unwrap_or_default();
        assert!(message.starts_with("invalid id"), "{reply}");
    }
    h.server.shutdown().await;
}

#[tokio::test]
async fn f9_review_location_does_not_resolve() {
    let mut h = Harness::start().await;
    let ids = [("authorId", 1), ("bookId", 1)];
    let review = json!({ "rating": 4, "text": "Good." });
    let created = h.op("createReview", &ids, "", Some(review)).await;
    assert_eq!(created.status, StatusCode::CREATED);
    // The undocumented body is the created review.
    assert_eq!(created.body["rating"], 4);
    let location = created.location.clone().expect("Location");
    assert_eq!(location, format!("/reviews/{}", id_of(&created)));
    assert_eq!(h.get(&location).await.status, StatusCode::NOT_FOUND);

    // Near miss: other creations point at resources that exist.
    let author = h
        .op("createAuthor", &[], "", Some(json!({ "name": "Someone" })))
        .await;
    let location = author.location.clone().expect("Location");
    assert_eq!(h.get(&location).await.status, StatusCode::OK);
    h.server.shutdown().await;
}

#[tokio::test]
async fn f10_if_match_with_a_quoted_non_number_is_a_500() {
    let mut h = Harness::start().await;
    let ids = [("authorId", 1), ("bookId", 2)];
    let path = "/authors/1/books/2";
    let read = h.op("getBook", &ids, "", None).await;
    assert_eq!(read.etag.as_deref(), Some("\"1\""));
    let stock = || Some(json!({ "stock": 4 }));

    for tag in ["\"abc\"", "\"\"", "\"1.0\"", "\"-1\"", "\" 1\""] {
        let reply = h
            .call_with(Method::PATCH, path, &[("if-match", tag)], stock())
            .await;
        assert_eq!(reply.status, StatusCode::INTERNAL_SERVER_ERROR, "{tag}");
        assert_eq!(reply.body, json!({ "message": "internal error" }), "{tag}");
    }
    // The crashes changed nothing.
    assert_eq!(h.get(path).await.etag.as_deref(), Some("\"1\""));

    // Near misses: the documented uses, and headers the server ignores.
    let updated = h.op_with("updateBook", &ids, "", &[], stock()).await;
    assert_eq!(updated.status, StatusCode::OK);
    assert_eq!(updated.etag.as_deref(), Some("\"2\""));
    let current = [("if-match", "\"2\"")];
    let matched = h.op_with("updateBook", &ids, "", &current, stock()).await;
    assert_eq!(matched.status, StatusCode::OK);
    assert_eq!(matched.etag.as_deref(), Some("\"3\""));
    let stale = h.op_with("updateBook", &ids, "", &current, stock()).await;
    assert_eq!(
        stale.status,
        StatusCode::PRECONDITION_FAILED,
        "{}",
        stale.text
    );
    let huge = [("if-match", "\"99999999999999999999999\"")];
    let huge = h.op_with("updateBook", &ids, "", &huge, stock()).await;
    assert_eq!(huge.status, StatusCode::PRECONDITION_FAILED);
    for ignored in ["*", "3", "abc", "W/\"abc\"", "\"abc", "\""] {
        let reply = h
            .op_with("updateBook", &ids, "", &[("if-match", ignored)], stock())
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{ignored}");
    }
    // The tag is read only for a valid body and a live book.
    let bad = [("if-match", "\"abc\"")];
    let invalid = h
        .op_with("updateBook", &ids, "", &bad, Some(json!({ "stock": "x" })))
        .await;
    assert_eq!(invalid.status, StatusCode::BAD_REQUEST);
    let missing = [("authorId", 1), ("bookId", 999)];
    let missing = h.op_with("updateBook", &missing, "", &bad, stock()).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    // Only updateBook reads it.
    let read = h.op_with("getBook", &ids, "", &bad, None).await;
    assert_eq!(read.status, StatusCode::OK);
    h.server.shutdown().await;
}

#[tokio::test]
async fn f11_malformed_bearer_credentials_are_a_500() {
    let mut h = Harness::start().await;
    let operation = &h.spec["paths"]["/orders"]["get"];
    assert!(
        operation["responses"]["401"].is_object(),
        "401 is documented"
    );
    let ids = [("authorId", 1), ("bookId", 1)];
    let review = || Some(json!({ "rating": 4, "text": "Good." }));
    for value in [
        "Token abc",
        "Basic dXNlcjpwYXNz",
        "Bearer",
        "Bearer a b",
        "abc",
        "",
    ] {
        let auth = [("authorization", value)];
        let orders = h.call_with(Method::GET, "/orders", &auth, None).await;
        assert_eq!(
            orders.status,
            StatusCode::INTERNAL_SERVER_ERROR,
            "{value:?}"
        );
        assert_eq!(orders.body, json!({ "message": "internal error" }));
        let path = "/authors/1/books/1/reviews";
        let created = h.call_with(Method::POST, path, &auth, review()).await;
        assert_eq!(
            created.status,
            StatusCode::INTERNAL_SERVER_ERROR,
            "{value:?}"
        );
    }
    // No review was stored by the crashed calls.
    let reviews = h.op("listReviews", &ids, "", None).await;
    assert_eq!(reviews.body.as_array().map(Vec::len), Some(1));

    // Near misses: anonymous, any well-formed bearer token, other operations.
    for auth in [
        &[][..],
        &[("authorization", "Bearer abc.def")],
        &[("authorization", "bearer x")],
    ] {
        let orders = h.op_with("listOrders", &[], "", auth, None).await;
        assert_eq!(orders.status, StatusCode::OK, "{auth:?}");
        let created = h.op_with("createReview", &ids, "", auth, review()).await;
        assert_eq!(created.status, StatusCode::CREATED, "{auth:?}");
    }
    let token = [("authorization", "Token abc")];
    let order = h
        .op_with("getOrder", &[("orderId", 1)], "", &token, None)
        .await;
    assert_eq!(order.status, StatusCode::OK);
    let authors = h.op_with("listAuthors", &[], "", &token, None).await;
    assert_eq!(authors.status, StatusCode::OK);
    h.server.shutdown().await;
}

#[tokio::test]
async fn f12_non_integer_offset_is_a_500() {
    let mut h = Harness::start().await;
    for offset in ["abc", "", "1.5", "1e2", "0x1"] {
        let reply = h.get(&format!("/authors/1/books?offset={offset}")).await;
        assert_eq!(
            reply.status,
            StatusCode::INTERNAL_SERVER_ERROR,
            "{offset:?}"
        );
        assert_eq!(reply.body, json!({ "message": "internal error" }));
    }
    // Parsed before the author is looked up.
    let unknown = h.get("/authors/999/books?offset=abc").await;
    assert_eq!(unknown.status, StatusCode::INTERNAL_SERVER_ERROR);

    // Near misses: integers in and out of range, and F6's malformed limit.
    let author = [("authorId", 1)];
    for (offset, count) in [("0", 2), ("1", 1), ("5", 0), ("99999999999999999999", 0)] {
        let reply = h
            .op("listBooks", &author, &format!("?offset={offset}"), None)
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{offset}");
        assert_eq!(reply.body.as_array().map(Vec::len), Some(count), "{offset}");
    }
    let second = h.op("listBooks", &author, "?offset=1", None).await;
    assert_eq!(second.body[0]["title"], "The Dispossessed");
    let negative = h.op("listBooks", &author, "?offset=-1", None).await;
    assert_eq!(negative.status, StatusCode::BAD_REQUEST);
    let limit = h.op("listAuthors", &[], "?limit=x", None).await;
    assert_eq!(limit.status, StatusCode::BAD_REQUEST);
    h.server.shutdown().await;
}

#[tokio::test]
async fn f13_book_without_stock_is_a_500() {
    let mut h = Harness::start().await;
    let no_stock = json!({ "title": "Small Gods", "price": 8.5 });
    let reply = h
        .call(Method::POST, "/authors/2/books", Some(no_stock))
        .await;
    assert_eq!(reply.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(reply.body, json!({ "message": "internal error" }));
    let author = [("authorId", 2)];
    let listed = h.op("listBooks", &author, "", None).await;
    assert_eq!(
        listed.body.as_array().map(Vec::len),
        Some(1),
        "nothing created"
    );

    // Near misses: stock of a wrong type or range, other fields missing first.
    for body in [
        json!({ "title": "Small Gods", "price": 8.5, "stock": "3" }),
        json!({ "title": "Small Gods", "price": 8.5, "stock": null }),
        json!({ "title": "Small Gods", "price": 8.5, "stock": -1 }),
        json!({ "price": 8.5 }),
        json!({ "title": "Small Gods" }),
    ] {
        let reply = h.op("createBook", &author, "", Some(body.clone())).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{body}");
    }
    let complete = json!({ "title": "Small Gods", "price": 8.5, "stock": 3 });
    let created = h.op("createBook", &author, "", Some(complete)).await;
    assert_eq!(created.status, StatusCode::CREATED);
    assert_eq!(id_of(&created), 4, "the crash used no id");
    h.server.shutdown().await;
}

#[tokio::test]
async fn f14_expanding_a_top_level_lists_parent_is_a_500() {
    let mut h = Harness::start().await;
    // Before the first list exists, only an explicit null parent creates one.
    for body in [
        json!({ "name": "To read" }),
        json!({ "name": "To read", "parent": "abc" }),
        json!({ "name": "To read", "parent": 1 }),
        json!({ "name": "To read", "parent": {} }),
        json!({ "name": "To read", "parent": { "id": 1 } }),
        json!({ "name": "To read", "parent": { "id": "1" } }),
    ] {
        let reply = h.op("createList", &[], "", Some(body.clone())).await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    }
    for body in [
        json!({ "parent": null }),
        json!({ "name": "", "parent": null }),
        json!({ "name": "To read", "parent": null, "note": 5 }),
    ] {
        let reply = h.op("createList", &[], "", Some(body.clone())).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{body}");
    }
    let list = [("listId", 1)];
    for query in ["", "?expand=parent"] {
        let reply = h.op("getList", &list, query, None).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{query}");
    }

    let top = json!({ "name": "To read", "parent": null });
    let created = h.op("createList", &[], "", Some(top)).await;
    assert_eq!(created.status, StatusCode::CREATED);
    assert_eq!(created.location.as_deref(), Some("/lists/1"));
    let reply = h.get("/lists/1?expand=parent").await;
    assert_eq!(reply.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(reply.body, json!({ "message": "internal error" }));

    // Near misses: the same list without expand, a child list with it.
    let plain = h.op("getList", &list, "", None).await;
    assert_eq!(plain.body["parent"], Value::Null);
    let child = json!({ "name": "SF", "parent": { "id": 1 } });
    let child = h.op("createList", &[], "", Some(child)).await;
    assert_eq!(child.status, StatusCode::CREATED);
    assert_eq!(child.body["parent"], json!({ "id": 1 }));
    let child_id = [("listId", id_of(&child))];
    let expanded = h.op("getList", &child_id, "?expand=parent", None).await;
    assert_eq!(expanded.status, StatusCode::OK);
    assert_eq!(
        expanded.body["parent"],
        json!({ "id": 1, "name": "To read", "parent": null, "note": null })
    );
    let unknown = h.op("getList", &list, "?expand=children", None).await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST);

    // A reset forgets the lists.
    h.call(Method::POST, "/__reset", None).await;
    assert_eq!(h.get("/lists/1").await.status, StatusCode::NOT_FOUND);
    h.server.shutdown().await;
}

// ---------------------------------------------------------------------------
// GraphQL happy path

#[tokio::test]
async fn graphql_queries_and_mutations_work_over_the_shared_store() {
    let mut h = Harness::start().await;
    let authors = h
        .graphql("{ authors { id name bio books { title } } }")
        .await;
    assert!(authors.get("errors").is_none(), "{authors}");
    assert_eq!(
        authors["data"]["authors"][0]["books"][1]["title"],
        "The Dispossessed"
    );
    assert_eq!(authors["data"]["authors"][1]["bio"], Value::Null);

    let author = h
        .graphql(
            r#"mutation { createAuthor(name: "Octavia E. Butler", bio: "Kindred") { id name } }"#,
        )
        .await;
    let author_id = author["data"]["createAuthor"]["id"]
        .as_str()
        .and_then(|id| id.parse::<u64>().ok())
        .expect("numeric id");
    // REST sees GraphQL writes.
    let rest = h
        .op("getAuthor", &[("authorId", author_id)], "", None)
        .await;
    assert_eq!(rest.body["bio"], "Kindred");

    let book = h
        .graphql(&format!(
            r#"mutation {{ createBook(authorId: "{author_id}", input: {{ title: "Kindred", price: 11.0, stock: 2, tags: ["sf"] }}) {{ id stock tags status author {{ name }} }} }}"#
        ))
        .await;
    assert!(book.get("errors").is_none(), "{book}");
    let book_id = book["data"]["createBook"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    assert_eq!(
        book["data"]["createBook"]["author"]["name"],
        "Octavia E. Butler"
    );

    let order = h
        .graphql(&format!(
            r#"mutation {{ placeOrder(bookId: "{book_id}", quantity: 2) {{ id quantity total status book {{ stock }} }} }}"#
        ))
        .await;
    assert_eq!(
        order["data"]["placeOrder"],
        json!({ "id": "2", "quantity": 2, "total": 22.0, "status": "PLACED", "book": { "stock": 0 } })
    );
    let too_many = h
        .graphql(&format!(
            r#"mutation {{ placeOrder(bookId: "{book_id}", quantity: 1) {{ id }} }}"#
        ))
        .await;
    assert!(too_many["errors"][0]["message"].is_string(), "{too_many}");
    let seeded = h
        .graphql(r#"{ order(id: "1") { status book { title } } }"#)
        .await;
    assert_eq!(
        seeded["data"]["order"],
        json!({ "status": "SHIPPED", "book": { "title": "Guards! Guards!" } })
    );
    let missing = h.graphql(r#"{ author(id: "999") { name } }"#).await;
    assert_eq!(missing, json!({ "data": { "author": null } }));
    h.server.shutdown().await;
}
