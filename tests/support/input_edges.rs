//! Purpose-built servers that crash (answer 500) on inputs at the edges of
//! what a description allows, as real services do, and on nothing else:
//!
//! - `listItems`: an `If-None-Match` header whose `pattern` is
//!   `^"([0-9]+?)"$|\*` (its second branch anchored nowhere). The server
//!   checks the pattern as JSON Schema does (a match anywhere), then reads a
//!   leading `*` as "any" and what follows it as a version number: `*abc`
//!   passes the check and crashes the parse (values that merely hold a `*`
//!   inside, `${7*7}`, are refused with 400).
//! - `getCounter`, `findCounters`, `createCounter`: an int64 in a path
//!   parameter, a query parameter and a JSON body, stored as a 64-bit
//!   integer: integers past 64 bits crash the conversion ("Python int too
//!   large to convert to SQLite INTEGER"). The body is read as text, so that
//!   only a number written digit for digit does it (a rounded `1.8e19` is
//!   refused with 400). `createCounter` without `value` crashes too (a
//!   fault any negative test finds).
//! - `upload`: `multipart/form-data` read by a parser that takes the
//!   boundary from the media type without checking that it is there.
//! - `getReport`: answers only after [`REPORT_DELAY`], and then 500, to
//!   any of its four parameters (so shrinking its witness would take a
//!   replay per parameter).
//!
//! [`graphql_start`] serves a GraphQL endpoint whose `items(filter:)`
//! crashes on an explicit `null` filter (absent is fine).

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use async_graphql::{
    EmptyMutation, EmptySubscription, Error, ID, InputObject, MaybeUndefined, Object, Schema,
    SimpleObject,
};
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// How long `getReport` takes to answer.
pub const REPORT_DELAY: Duration = Duration::from_millis(600);

/// The REST description the server implements.
pub const SPEC: &str = r##"
openapi: 3.0.3
info: {title: Edges, version: "1"}
paths:
  /items:
    get:
      operationId: listItems
      parameters:
        - name: If-None-Match
          in: header
          description: an ETag, or * for any
          schema: {type: string, pattern: '^"([0-9]+?)"$|\*'}
      responses:
        "200":
          description: the items
          content:
            application/json:
              schema: {type: array, items: {type: object, properties: {name: {type: string}}}}
        "304": {description: not modified}
        "400": {description: a malformed ETag}
  /counters/{n}:
    get:
      operationId: getCounter
      parameters:
        - {name: n, in: path, required: true, schema: {type: integer, format: int64}}
      responses:
        "200":
          description: the counter
          content: {application/json: {schema: {$ref: "#/components/schemas/Counter"}}}
        "400": {description: not a number}
  /counters:
    get:
      operationId: findCounters
      parameters:
        - {name: at, in: query, schema: {type: integer, format: int64}}
      responses:
        "200":
          description: counters at that value
          content:
            application/json:
              schema: {type: array, items: {$ref: "#/components/schemas/Counter"}}
        "400": {description: not a number}
    post:
      operationId: createCounter
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [value]
              properties:
                value: {type: integer, format: int64}
      responses:
        "201":
          description: created
          content: {application/json: {schema: {$ref: "#/components/schemas/Counter"}}}
        "400": {description: a malformed counter}
  /uploads:
    post:
      operationId: upload
      requestBody:
        required: true
        content:
          multipart/form-data:
            schema:
              type: object
              required: [file]
              properties:
                file: {type: string, format: binary}
                note: {type: string}
      responses:
        "201": {description: stored}
        "400": {description: a malformed upload}
  /reports:
    get:
      operationId: getReport
      parameters:
        - {name: days, in: query, required: true, schema: {type: integer, minimum: 1, maximum: 90}}
        - {name: format, in: query, required: true, schema: {type: string, enum: [csv, json]}}
        - {name: tz, in: query, required: true, schema: {type: string}}
        - {name: lang, in: query, required: true, schema: {type: string}}
      responses:
        "200": {description: the report}
        "400": {description: a malformed request}
components:
  schemas:
    Counter:
      type: object
      properties:
        value: {type: integer, format: int64}
"##;

/// Answer `text`'s integer as a 64-bit column would take it: 200 when it
/// fits, 500 when it is an integer that does not (the crash), 400 when it
/// is no integer.
fn store_integer(text: &str) -> Response {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let integer = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    match text.parse::<i64>() {
        Ok(v) => Json(json!({"value": v})).into_response(),
        Err(_) if integer => crash("integer too large to convert to INTEGER"),
        Err(_) => (StatusCode::BAD_REQUEST, "not an integer").into_response(),
    }
}

fn crash(why: &str) -> Response {
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        Json(json!({"message": "internal error", "cause": why})),
    )
        .into_response()
}

async fn list_items(headers: HeaderMap) -> Response {
    let Some(tag) = headers.get("if-none-match") else {
        return Json(json!([{"name": "a"}])).into_response();
    };
    let Ok(tag) = tag.to_str() else {
        return (StatusCode::BAD_REQUEST, "not text").into_response();
    };
    // The description's pattern, checked as JSON Schema does: anywhere.
    let pattern = regex::Regex::new(r#"^"([0-9]+?)"$|\*"#).unwrap();
    if !pattern.is_match(tag) {
        return (StatusCode::BAD_REQUEST, "malformed ETag").into_response();
    }
    // A leading `*` is the wildcard, and what follows it a version (none
    // for the bare `*`); anything else must be a quoted number.
    if let Some(version) = tag.strip_prefix('*') {
        return match version {
            "" => StatusCode::NOT_MODIFIED.into_response(),
            v => match v.parse::<u64>() {
                Ok(_) => StatusCode::NOT_MODIFIED.into_response(),
                Err(_) => crash("invalid literal for int() with base 10"),
            },
        };
    }
    let quoted = regex::Regex::new(r#"^"[0-9]+"$"#).unwrap();
    if quoted.is_match(tag) {
        Json(json!([{"name": "a"}])).into_response()
    } else {
        (StatusCode::BAD_REQUEST, "malformed ETag").into_response()
    }
}

async fn get_counter(Path(n): Path<String>) -> Response {
    store_integer(&n)
}

async fn find_counters(RawQuery(raw): RawQuery) -> Response {
    let at = url::form_urlencoded::parse(raw.unwrap_or_default().as_bytes())
        .find(|(k, _)| k == "at")
        .map(|(_, v)| v.into_owned());
    match at {
        None => Json(json!([])).into_response(),
        Some(at) => match store_integer(&at) {
            r if r.status() == StatusCode::OK => Json(json!([])).into_response(),
            r => r,
        },
    }
}

/// The number text after `"value":` in a JSON body, as written.
fn value_text(body: &str) -> Option<&str> {
    let at = body.find("\"value\"")? + "\"value\"".len();
    let rest = body[at..].trim_start().strip_prefix(':')?.trim_start();
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || "-+.eE".contains(c)))
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

async fn create_counter(body: String) -> Response {
    let Ok(parsed) = serde_json::from_str::<serde_json::Value>(&body) else {
        return (StatusCode::BAD_REQUEST, "not JSON").into_response();
    };
    if !parsed.is_object() {
        return (StatusCode::BAD_REQUEST, "not an object").into_response();
    }
    if parsed.get("value").is_none() {
        return crash("KeyError: 'value'");
    }
    match value_text(&body) {
        Some(text) => match store_integer(text) {
            r if r.status() == StatusCode::OK => {
                (StatusCode::CREATED, Json(json!({"value": parsed["value"]}))).into_response()
            }
            r => r,
        },
        None => (StatusCode::BAD_REQUEST, "value is not a number").into_response(),
    }
}

async fn upload(headers: HeaderMap, body: String) -> Response {
    let media = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !media.starts_with("multipart/form-data") {
        return (StatusCode::BAD_REQUEST, "not multipart").into_response();
    }
    // The crash: the boundary is taken for granted.
    let Some(boundary) = media.split("boundary=").nth(1) else {
        return crash("'NoneType' object has no attribute 'encode'");
    };
    let opening = format!("--{boundary}\r\n");
    if body.starts_with(&opening) && body.contains("Content-Disposition: form-data; name=\"file\"")
    {
        StatusCode::CREATED.into_response()
    } else {
        (StatusCode::BAD_REQUEST, "malformed multipart body").into_response()
    }
}

async fn get_report() -> Response {
    tokio::time::sleep(REPORT_DELAY).await;
    crash("report generation failed")
}

/// Starts the REST server on a free port of 127.0.0.1.
pub async fn start() -> (SocketAddr, JoinHandle<()>) {
    let router = Router::new()
        .route("/items", get(list_items))
        .route("/counters/{n}", get(get_counter))
        .route("/counters", get(find_counters).post(create_counter))
        .route("/uploads", post(upload))
        .route("/reports", get(get_report));
    serve(router).await
}

async fn serve(router: Router) -> (SocketAddr, JoinHandle<()>) {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .expect("a free loopback port");
    let addr = listener.local_addr().expect("a bound address");
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (addr, task)
}

/// The GraphQL schema [`graphql_start`] serves, as SDL.
pub const SDL: &str = r#"input ItemFilter {
  name: String
  tag: String
}

type Item {
  id: ID!
  name: String!
  tag: String
}

type Query {
  items(filter: ItemFilter, first: Int): [Item!]!
  item(id: ID!): Item
}
"#;

#[derive(InputObject)]
struct ItemFilter {
    name: Option<String>,
    tag: Option<String>,
}

#[derive(SimpleObject, Clone)]
struct Item {
    id: ID,
    name: String,
    tag: Option<String>,
}

fn catalogue() -> Vec<Item> {
    vec![
        Item {
            id: ID("1".into()),
            name: "lamp".into(),
            tag: Some("home".into()),
        },
        Item {
            id: ID("2".into()),
            name: "kettle".into(),
            tag: None,
        },
    ]
}

/// What a resolver says when the server would crash: the handler answers 500.
const CRASH: &str = "CRASH";

struct Query;

#[Object]
impl Query {
    async fn items(
        &self,
        filter: MaybeUndefined<ItemFilter>,
        first: Option<i32>,
    ) -> async_graphql::Result<Vec<Item>> {
        // Absent means "no filter"; an explicit null is dereferenced.
        let filter = match filter {
            MaybeUndefined::Undefined => None,
            MaybeUndefined::Null => return Err(Error::new(CRASH)),
            MaybeUndefined::Value(f) => Some(f),
        };
        let items = catalogue().into_iter().filter(|i| {
            filter.as_ref().is_none_or(|f| {
                f.name.as_ref().is_none_or(|n| &i.name == n)
                    && f.tag.as_ref().is_none_or(|t| i.tag.as_ref() == Some(t))
            })
        });
        Ok(items.take(first.unwrap_or(10).max(0) as usize).collect())
    }

    async fn item(&self, id: ID) -> Option<Item> {
        catalogue().into_iter().find(|i| i.id == id)
    }
}

type ItemsSchema = Schema<Query, EmptyMutation, EmptySubscription>;

async fn graphql(State(schema): State<ItemsSchema>, body: String) -> Response {
    let request = match serde_json::from_str::<async_graphql::Request>(&body) {
        Ok(request) => request,
        Err(e) => {
            return Json(async_graphql::Response::from_errors(vec![
                async_graphql::ServerError::new(e.to_string(), None),
            ]))
            .into_response();
        }
    };
    let response = schema.execute(request).await;
    if response.errors.iter().any(|e| e.message == CRASH) {
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            Json(json!({"errors": [{"message": "Internal Server Error"}]})),
        )
            .into_response();
    }
    Json(response).into_response()
}

/// Starts the GraphQL server on a free port of 127.0.0.1, endpoint
/// `http://{addr}/graphql`.
pub async fn graphql_start() -> (SocketAddr, JoinHandle<()>) {
    let schema = Schema::build(Query, EmptyMutation, EmptySubscription).finish();
    let router = Router::new()
        .route("/graphql", post(graphql))
        .with_state(schema);
    serve(router).await
}
