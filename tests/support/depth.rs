//! A purpose-built REST server where only what the server says leads on,
//! shaped after two real services: a DNS server API (PowerDNS) whose
//! listing names the only valid server id (`localhost`) and whose zone
//! creation is refused with a message naming the rule ("name must end with
//! a dot"), and a storage API (Kinto) whose answers wrap objects in a `data`
//! envelope and whose `{id}` sits two collections deep
//! (`/buckets/{bucket_id}/collections/{id}`). Every operation takes an
//! optional `X-API-Version` header the server refuses whenever it is sent
//! with a value other than `2`. Ids the server makes are words no generator
//! guesses, and, as in Kinto's description, the objects' schemas do not
//! declare them. Every refusal names its reason in `reason`, so a test can
//! tell refusals of the same kind apart from new ones.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// The description the server implements.
pub const SPEC: &str = r##"
openapi: 3.0.3
info: {title: Depth, version: "1"}
paths:
  /servers:
    get:
      operationId: listServers
      parameters: [{$ref: "#/components/parameters/version"}]
      responses:
        "200":
          description: the servers
          content:
            application/json:
              schema: {type: array, items: {$ref: "#/components/schemas/Server"}}
        "400": {$ref: "#/components/responses/refused"}
  /servers/{server_id}:
    get:
      operationId: getServer
      parameters:
        - {name: server_id, in: path, required: true, schema: {type: string}}
        - {$ref: "#/components/parameters/version"}
      responses:
        "200":
          description: a server
          content: {application/json: {schema: {$ref: "#/components/schemas/Server"}}}
        "400": {$ref: "#/components/responses/refused"}
        "404": {$ref: "#/components/responses/refused"}
  /servers/{server_id}/zones:
    get:
      operationId: listZones
      parameters:
        - {name: server_id, in: path, required: true, schema: {type: string}}
        - {$ref: "#/components/parameters/version"}
      responses:
        "200":
          description: the zones
          content:
            application/json:
              schema: {type: array, items: {$ref: "#/components/schemas/Zone"}}
        "400": {$ref: "#/components/responses/refused"}
        "404": {$ref: "#/components/responses/refused"}
    post:
      operationId: createZone
      parameters:
        - {name: server_id, in: path, required: true, schema: {type: string}}
        - {$ref: "#/components/parameters/version"}
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [name, kind]
              properties:
                name: {type: string}
                kind: {type: string, enum: [Native, Master]}
      responses:
        "201":
          description: the zone made
          content: {application/json: {schema: {$ref: "#/components/schemas/Zone"}}}
        "400": {$ref: "#/components/responses/refused"}
        "404": {$ref: "#/components/responses/refused"}
        "409": {$ref: "#/components/responses/refused"}
        "422": {$ref: "#/components/responses/refused"}
  /servers/{server_id}/zones/{zone_id}:
    get:
      operationId: getZone
      parameters:
        - {name: server_id, in: path, required: true, schema: {type: string}}
        - {name: zone_id, in: path, required: true, schema: {type: string}}
        - {$ref: "#/components/parameters/version"}
      responses:
        "200":
          description: a zone
          content: {application/json: {schema: {$ref: "#/components/schemas/Zone"}}}
        "400": {$ref: "#/components/responses/refused"}
        "404": {$ref: "#/components/responses/refused"}
    delete:
      operationId: deleteZone
      parameters:
        - {name: server_id, in: path, required: true, schema: {type: string}}
        - {name: zone_id, in: path, required: true, schema: {type: string}}
        - {$ref: "#/components/parameters/version"}
      responses:
        "204": {description: deleted}
        "400": {$ref: "#/components/responses/refused"}
        "404": {$ref: "#/components/responses/refused"}
  /buckets:
    get:
      operationId: listBuckets
      parameters: [{$ref: "#/components/parameters/version"}]
      responses:
        "200":
          description: the buckets
          content:
            application/json:
              schema:
                type: object
                properties:
                  data:
                    type: array
                    items:
                      type: object
                      properties: {title: {type: string}, last_modified: {type: integer}}
                      additionalProperties: {}
        "400": {$ref: "#/components/responses/refused"}
    post:
      operationId: createBucket
      parameters: [{$ref: "#/components/parameters/version"}]
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                data: {type: object, properties: {title: {type: string}}}
      responses:
        "201":
          description: the bucket made
          content:
            application/json:
              schema:
                type: object
                properties:
                  data:
                    type: object
                    properties: {title: {type: string}, last_modified: {type: integer}}
                    additionalProperties: {}
        "400": {$ref: "#/components/responses/refused"}
  /buckets/{bucket_id}:
    get:
      operationId: getBucket
      parameters:
        - {name: bucket_id, in: path, required: true, schema: {type: string}}
        - {$ref: "#/components/parameters/version"}
      responses:
        "200":
          description: a bucket
          content:
            application/json:
              schema:
                type: object
                properties:
                  data:
                    type: object
                    properties: {title: {type: string}, last_modified: {type: integer}}
                    additionalProperties: {}
        "400": {$ref: "#/components/responses/refused"}
        "404": {$ref: "#/components/responses/refused"}
  /buckets/{bucket_id}/collections:
    get:
      operationId: listCollections
      parameters:
        - {name: bucket_id, in: path, required: true, schema: {type: string}}
        - {$ref: "#/components/parameters/version"}
      responses:
        "200":
          description: the bucket's collections
          content:
            application/json:
              schema:
                type: object
                properties:
                  data:
                    type: array
                    items:
                      type: object
                      properties: {cache_expires: {type: integer}, last_modified: {type: integer}}
                      additionalProperties: {}
        "400": {$ref: "#/components/responses/refused"}
        "404": {$ref: "#/components/responses/refused"}
    post:
      operationId: createCollection
      parameters:
        - {name: bucket_id, in: path, required: true, schema: {type: string}}
        - {$ref: "#/components/parameters/version"}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                data: {type: object, properties: {cache_expires: {type: integer}}}
      responses:
        "201":
          description: the collection made
          content:
            application/json:
              schema:
                type: object
                properties:
                  data:
                    type: object
                    properties: {cache_expires: {type: integer}, last_modified: {type: integer}}
                    additionalProperties: {}
        "400": {$ref: "#/components/responses/refused"}
        "404": {$ref: "#/components/responses/refused"}
  /buckets/{bucket_id}/collections/{id}:
    get:
      operationId: getCollection
      parameters:
        - {name: bucket_id, in: path, required: true, schema: {type: string}}
        - {name: id, in: path, required: true, schema: {type: string}}
        - {$ref: "#/components/parameters/version"}
      responses:
        "200":
          description: a collection
          content:
            application/json:
              schema:
                type: object
                properties:
                  data:
                    type: object
                    properties: {cache_expires: {type: integer}, last_modified: {type: integer}}
                    additionalProperties: {}
        "400": {$ref: "#/components/responses/refused"}
        "404": {$ref: "#/components/responses/refused"}
components:
  parameters:
    version:
      name: X-API-Version
      in: header
      description: the API version the client speaks
      schema: {type: string}
  responses:
    refused:
      description: refused
      content:
        application/json:
          schema:
            type: object
            properties: {error: {type: string}, reason: {type: string}}
  schemas:
    Server:
      type: object
      properties:
        id: {type: string}
        type: {type: string}
        url: {type: string}
    Zone:
      type: object
      properties:
        id: {type: string}
        name: {type: string}
        kind: {type: string}
        url: {type: string}
"##;

/// The only server the API knows.
pub const SERVER: &str = "localhost";

/// What the server holds and what reached it.
#[derive(Debug, Default)]
pub struct Store {
    zones: BTreeMap<String, Value>,
    /// Bucket id → its collections' ids.
    buckets: BTreeMap<String, Vec<String>>,
    made: u64,
    /// Requests answered, per operation, and how many with a 2xx.
    pub answered: BTreeMap<&'static str, (u64, u64)>,
}

/// The server's state, shared with the test.
pub type Shared = Arc<Mutex<Store>>;

/// A refusal naming its reason.
fn refuse(status: StatusCode, reason: &str, error: &str) -> Response {
    (status, Json(json!({"error": error, "reason": reason}))).into_response()
}

/// An id no generator guesses, the same on every run.
fn fresh_id(store: &mut Store, prefix: &str) -> String {
    store.made += 1;
    let n = store.made;
    format!("{prefix}{}x{}", n * 7919 % 10007, n)
}

fn version_refused(headers: &HeaderMap) -> Option<Response> {
    let v = headers.get("x-api-version")?;
    (v.as_bytes() != b"2").then(|| refuse(StatusCode::BAD_REQUEST, "version", "bad API version"))
}

/// Counts the answer under `op`.
fn answer(shared: &Shared, op: &'static str, r: Response) -> Response {
    let mut store = shared.lock().unwrap();
    let e = store.answered.entry(op).or_default();
    e.0 += 1;
    e.1 += u64::from(r.status().is_success());
    r
}

fn unknown_server(id: &str) -> Option<Response> {
    (id != SERVER).then(|| refuse(StatusCode::NOT_FOUND, "server", "Not Found"))
}

fn server() -> Value {
    json!({"id": SERVER, "type": "Server", "url": "/api/v1/servers/localhost"})
}

async fn list_servers(State(s): State<Shared>, headers: HeaderMap) -> Response {
    let r = version_refused(&headers).unwrap_or_else(|| Json(json!([server()])).into_response());
    answer(&s, "listServers", r)
}

async fn get_server(
    State(s): State<Shared>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let r = version_refused(&headers)
        .or_else(|| unknown_server(&id))
        .unwrap_or_else(|| Json(server()).into_response());
    answer(&s, "getServer", r)
}

async fn list_zones(
    State(s): State<Shared>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let r = version_refused(&headers)
        .or_else(|| unknown_server(&id))
        .unwrap_or_else(|| {
            let zones: Vec<Value> = s.lock().unwrap().zones.values().cloned().collect();
            Json(zones).into_response()
        });
    answer(&s, "listZones", r)
}

async fn create_zone(
    State(s): State<Shared>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let r = version_refused(&headers)
        .or_else(|| unknown_server(&id))
        .unwrap_or_else(|| {
            let Ok(body) = serde_json::from_slice::<Value>(&body) else {
                return refuse(StatusCode::BAD_REQUEST, "body", "a JSON body is required");
            };
            let name = body.get("name").and_then(Value::as_str).unwrap_or("");
            let kind = body.get("kind").and_then(Value::as_str).unwrap_or("");
            if !["Native", "Master"].contains(&kind) {
                return refuse(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "kind",
                    "kind must be Native or Master",
                );
            }
            if !name.ends_with('.') {
                return refuse(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "dot",
                    "name must end with a dot",
                );
            }
            let mut store = s.lock().unwrap();
            if store.zones.contains_key(name) {
                return refuse(StatusCode::CONFLICT, "conflict", "Conflict");
            }
            let zone = json!({"id": name, "name": name, "kind": kind,
                "url": format!("/api/v1/servers/localhost/zones/{name}")});
            store.zones.insert(name.to_string(), zone.clone());
            (StatusCode::CREATED, Json(zone)).into_response()
        });
    answer(&s, "createZone", r)
}

fn unknown_zone(s: &Shared, zone: &str) -> Option<Response> {
    (!s.lock().unwrap().zones.contains_key(zone))
        .then(|| refuse(StatusCode::NOT_FOUND, "zone", "Could not find domain"))
}

async fn get_zone(
    State(s): State<Shared>,
    headers: HeaderMap,
    Path((id, zone)): Path<(String, String)>,
) -> Response {
    let r = version_refused(&headers)
        .or_else(|| unknown_server(&id))
        .or_else(|| unknown_zone(&s, &zone))
        .unwrap_or_else(|| Json(s.lock().unwrap().zones[&zone].clone()).into_response());
    answer(&s, "getZone", r)
}

async fn delete_zone(
    State(s): State<Shared>,
    headers: HeaderMap,
    Path((id, zone)): Path<(String, String)>,
) -> Response {
    let r = version_refused(&headers)
        .or_else(|| unknown_server(&id))
        .or_else(|| unknown_zone(&s, &zone))
        .unwrap_or_else(|| {
            s.lock().unwrap().zones.remove(&zone);
            StatusCode::NO_CONTENT.into_response()
        });
    answer(&s, "deleteZone", r)
}

async fn list_buckets(State(s): State<Shared>, headers: HeaderMap) -> Response {
    let r = version_refused(&headers).unwrap_or_else(|| {
        let data: Vec<Value> = s
            .lock()
            .unwrap()
            .buckets
            .keys()
            .map(|b| json!({"id": b, "last_modified": 1}))
            .collect();
        Json(json!({ "data": data })).into_response()
    });
    answer(&s, "listBuckets", r)
}

async fn create_bucket(State(s): State<Shared>, headers: HeaderMap) -> Response {
    let r = version_refused(&headers).unwrap_or_else(|| {
        let mut store = s.lock().unwrap();
        let id = fresh_id(&mut store, "b");
        store.buckets.insert(id.clone(), Vec::new());
        let data = json!({"id": id, "last_modified": store.made});
        (StatusCode::CREATED, Json(json!({ "data": data }))).into_response()
    });
    answer(&s, "createBucket", r)
}

fn unknown_bucket(s: &Shared, bucket: &str) -> Option<Response> {
    (!s.lock().unwrap().buckets.contains_key(bucket))
        .then(|| refuse(StatusCode::NOT_FOUND, "bucket", "bucket not found"))
}

async fn get_bucket(
    State(s): State<Shared>,
    headers: HeaderMap,
    Path(b): Path<String>,
) -> Response {
    let r = version_refused(&headers)
        .or_else(|| unknown_bucket(&s, &b))
        .unwrap_or_else(|| Json(json!({"data": {"id": b, "last_modified": 1}})).into_response());
    answer(&s, "getBucket", r)
}

async fn list_collections(
    State(s): State<Shared>,
    headers: HeaderMap,
    Path(b): Path<String>,
) -> Response {
    let r = version_refused(&headers)
        .or_else(|| unknown_bucket(&s, &b))
        .unwrap_or_else(|| {
            let data: Vec<Value> = s.lock().unwrap().buckets[&b]
                .iter()
                .map(|c| json!({"id": c, "last_modified": 1}))
                .collect();
            Json(json!({ "data": data })).into_response()
        });
    answer(&s, "listCollections", r)
}

async fn create_collection(
    State(s): State<Shared>,
    headers: HeaderMap,
    Path(b): Path<String>,
) -> Response {
    let r = version_refused(&headers)
        .or_else(|| unknown_bucket(&s, &b))
        .unwrap_or_else(|| {
            let mut store = s.lock().unwrap();
            let id = fresh_id(&mut store, "c");
            store.buckets.get_mut(&b).unwrap().push(id.clone());
            let data = json!({"id": id, "last_modified": store.made});
            (StatusCode::CREATED, Json(json!({ "data": data }))).into_response()
        });
    answer(&s, "createCollection", r)
}

async fn get_collection(
    State(s): State<Shared>,
    headers: HeaderMap,
    Path((b, c)): Path<(String, String)>,
) -> Response {
    let r = version_refused(&headers)
        .or_else(|| unknown_bucket(&s, &b))
        .or_else(|| {
            (!s.lock().unwrap().buckets[&b].contains(&c))
                .then(|| refuse(StatusCode::NOT_FOUND, "collection", "collection not found"))
        })
        .unwrap_or_else(|| Json(json!({"data": {"id": c, "last_modified": 1}})).into_response());
    answer(&s, "getCollection", r)
}

/// Starts the server on a free port of 127.0.0.1.
pub async fn start() -> (SocketAddr, Shared, JoinHandle<()>) {
    let shared: Shared = Default::default();
    let router = Router::new()
        .route("/servers", get(list_servers))
        .route("/servers/{server_id}", get(get_server))
        .route(
            "/servers/{server_id}/zones",
            get(list_zones).post(create_zone),
        )
        .route(
            "/servers/{server_id}/zones/{zone_id}",
            get(get_zone).delete(delete_zone),
        )
        .route("/buckets", get(list_buckets).post(create_bucket))
        .route("/buckets/{bucket_id}", get(get_bucket))
        .route(
            "/buckets/{bucket_id}/collections",
            get(list_collections).post(create_collection),
        )
        .route("/buckets/{bucket_id}/collections/{id}", get(get_collection))
        .with_state(shared.clone());
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .expect("a free loopback port");
    let addr = listener.local_addr().expect("a bound address");
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (addr, shared, task)
}
