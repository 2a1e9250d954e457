//! A purpose-built server whose failures have known root causes, so that a
//! run's causes can be counted against them (issue 31, item 4):
//!
//! 1. `listPets`, `listOwners`, `listOrders` store `limit` as a 64-bit
//!    integer: one past 64 bits crashes each with a bare `Internal Server
//!    Error` (one root cause: the conversion).
//! 2. `getPet` and `getOwner` read `owner` of a record that has none: a
//!    Node.js `TypeError … (reading 'owner')`, raised in each route's own
//!    handler (one root cause). `listToys` reads `tags` of nothing: the same
//!    words but another property (another root cause).
//! 3. Every list answers `null` for a field, and the description marks no
//!    schema nullable (one gap of the description, at two places).
//! 4. `createPet` and `createOwner` check no field of their bodies (one root
//!    cause: no validation), and a body that is not JSON gets an undocumented
//!    400 in two parsers' words, Python's and Express's (one root cause).
//! 5. `searchPets` answers an undocumented 404 that echoes `q` HTML-escaped
//!    (one root cause, however many values hold quotes).

use std::net::{Ipv4Addr, SocketAddr};

use axum::extract::{Path, RawQuery};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// The description the server implements: nothing in it is nullable.
pub const SPEC: &str = r##"
openapi: 3.0.3
info: {title: Causes, version: "1"}
paths:
  /pets:
    get:
      operationId: listPets
      parameters:
        - {name: limit, in: query, schema: {type: integer, format: int64}}
      responses:
        "200":
          description: the pets
          content: {application/json: {schema: {type: array, items: {$ref: "#/components/schemas/Pet"}}}}
        "400": {description: not a number}
    post:
      operationId: createPet
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [name, age]
              properties:
                name: {type: string, maxLength: 20}
                age: {type: integer, minimum: 0}
      responses:
        "201": {description: created}
        "409": {description: taken}
        "422": {description: not an object}
  /pets/{petId}:
    get:
      operationId: getPet
      parameters:
        - {name: petId, in: path, required: true, schema: {type: integer}}
      responses:
        "200":
          description: the pet
          content: {application/json: {schema: {$ref: "#/components/schemas/Pet"}}}
        "404": {description: no such pet}
  /pets/{petId}/toys:
    get:
      operationId: listToys
      parameters:
        - {name: petId, in: path, required: true, schema: {type: integer}}
      responses:
        "200": {description: the toys}
        "404": {description: no such pet}
  /owners:
    get:
      operationId: listOwners
      parameters:
        - {name: limit, in: query, schema: {type: integer, format: int64}}
      responses:
        "200":
          description: the owners
          content: {application/json: {schema: {type: array, items: {$ref: "#/components/schemas/Owner"}}}}
        "400": {description: not a number}
    post:
      operationId: createOwner
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [email]
              properties:
                email: {type: string}
                phone: {type: string, maxLength: 15}
      responses:
        "201": {description: created}
        "409": {description: taken}
        "422": {description: not an object}
  /owners/{ownerId}:
    get:
      operationId: getOwner
      parameters:
        - {name: ownerId, in: path, required: true, schema: {type: integer}}
      responses:
        "200":
          description: the owner
          content: {application/json: {schema: {$ref: "#/components/schemas/Owner"}}}
        "404": {description: no such owner}
  /orders:
    get:
      operationId: listOrders
      parameters:
        - {name: limit, in: query, schema: {type: integer, format: int64}}
      responses:
        "200": {description: the orders}
        "400": {description: not a number}
  /search:
    get:
      operationId: searchPets
      parameters:
        - {name: q, in: query, required: true, schema: {type: string}}
      responses:
        "200": {description: the pets that match}
        "400": {description: an empty query}
components:
  schemas:
    Pet:
      type: object
      properties:
        id: {type: integer}
        name: {type: string}
        tag: {type: string}
    Owner:
      type: object
      properties:
        id: {type: integer}
        email: {type: string}
        phone: {type: string}
"##;

/// The value of query parameter `name`, decoded.
fn query(raw: &Option<String>, name: &str) -> Option<String> {
    url::form_urlencoded::parse(raw.as_deref().unwrap_or("").as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// A listing: `limit` stored as a 64-bit integer (an integer past it
/// crashes), its items each with a `null` field.
fn listing(raw: &Option<String>, items: Value) -> Response {
    if let Some(limit) = query(raw, "limit")
        && limit.parse::<i64>().is_err()
    {
        let digits = limit.strip_prefix('-').unwrap_or(&limit);
        if !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()) {
            return (StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error").into_response();
        }
        return (StatusCode::BAD_REQUEST, "limit is not a number").into_response();
    }
    Json(items).into_response()
}

/// What Express answers for an exception thrown in a handler, with its
/// stack, as a development build does.
fn node_crash(property: &str, handler: &str, file: &str) -> Response {
    let error = format!(
        "TypeError: Cannot read properties of undefined (reading '{property}')\n    at {handler} (/srv/app/routes/{file}.js:27:31)\n    at Layer.handle [as handle_request] (/srv/app/node_modules/express/lib/router/layer.js:95:5)"
    );
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        Json(json!({ "error": error })),
    )
        .into_response()
}

/// A create that checks nothing of its body but that it is a JSON object;
/// `parser` words the refusal of a body that is not JSON.
fn create(body: &str, parser: fn(&serde_json::Error) -> String) -> Response {
    match serde_json::from_str::<Value>(body) {
        Err(e) => (
            StatusCode::BAD_REQUEST,
            Json(json!({ "error": parser(&e) })),
        )
            .into_response(),
        Ok(Value::Object(_)) => (StatusCode::CREATED, Json(json!({"id": 7}))).into_response(),
        Ok(_) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            Json(json!({"error": "not an object"})),
        )
            .into_response(),
    }
}

/// Python's `json` module's words.
fn python_words(e: &serde_json::Error) -> String {
    format!(
        "Expecting value: line {} column {} (char {})",
        e.line(),
        e.column(),
        e.column().saturating_sub(1)
    )
}

/// Express's `body-parser` words.
fn express_words(e: &serde_json::Error) -> String {
    format!("Unexpected token in JSON at position {}", e.column())
}

/// `text` escaped for HTML, as a template engine does.
fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

async fn search(RawQuery(raw): RawQuery) -> Response {
    match query(&raw, "q").filter(|q| !q.is_empty()) {
        None => (StatusCode::BAD_REQUEST, "an empty query").into_response(),
        Some(q) if q == "Rex" => Json(json!([{"id": 1, "name": "Rex"}])).into_response(),
        Some(q) => (
            StatusCode::NOT_FOUND,
            Json(json!({ "error": format!("No pet matches {}", html_escape(&q)) })),
        )
            .into_response(),
    }
}

/// Starts the server on a free port of 127.0.0.1.
pub async fn start() -> (SocketAddr, JoinHandle<()>) {
    let router = Router::new()
        .route(
            "/pets",
            get(|RawQuery(raw): RawQuery| async move {
                listing(
                    &raw,
                    json!([{"id": 1, "name": "Rex", "tag": null}, {"id": 2, "name": "Tom", "tag": null}]),
                )
            })
            .post(|body: String| async move { create(&body, python_words) }),
        )
        .route(
            "/pets/{petId}",
            get(|Path(_): Path<String>| async { node_crash("owner", "getPet", "pets") }),
        )
        .route(
            "/pets/{petId}/toys",
            get(|Path(_): Path<String>| async { node_crash("tags", "listToys", "toys") }),
        )
        .route(
            "/owners",
            get(|RawQuery(raw): RawQuery| async move {
                listing(&raw, json!([{"id": 1, "email": "a@example.com", "phone": null}]))
            })
            .post(|body: String| async move { create(&body, express_words) }),
        )
        .route(
            "/owners/{ownerId}",
            get(|Path(_): Path<String>| async { node_crash("owner", "getOwner", "owners") }),
        )
        .route(
            "/orders",
            get(|RawQuery(raw): RawQuery| async move {
                listing(&raw, json!([{"id": 1, "total": 12}]))
            }),
        )
        .route("/search", get(search));
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .expect("a free loopback port");
    let addr = listener.local_addr().expect("a bound address");
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (addr, task)
}
