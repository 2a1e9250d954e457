//! A purpose-built REST server shaped after Prefect's work pools, where a
//! path names a resource by a property other than the id its creation
//! answers with: `POST /pools/` answers `{id, name}` with a made-up uuid,
//! but `/pools/{name}` and `/pools/{pool_name}/queues/{name}` take names.
//! Pools are listed by `POST /pools/filter` (no `GET` listing; its
//! optional `offset`, `limit` and `name_like` filter what it answers), their
//! queues by `POST /pools/{pool_name}/queues/filter`, and every pool is made
//! with a queue named `default`, which, as in Prefect, the server fails to
//! delete (a 500). The server counts what reached it, so a test can tell a
//! path naming a pool by its id from one naming it by its name, and a
//! queue read under its own pool from one under another.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// The description the server implements.
pub const SPEC: &str = r##"
openapi: 3.0.3
info: {title: Pools, version: "1"}
paths:
  /pools/:
    post:
      operationId: createPool
      requestBody:
        required: true
        content: {application/json: {schema: {$ref: "#/components/schemas/PoolCreate"}}}
      responses:
        "201":
          description: the pool made
          content: {application/json: {schema: {$ref: "#/components/schemas/PoolResponse"}}}
        "409": {description: a pool of this name exists}
        "422": {description: invalid}
  /pools/filter:
    post:
      operationId: readPools
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                limit: {type: integer, minimum: 0, maximum: 200}
                offset: {type: integer, minimum: 0}
                name_like: {type: string, description: only pools whose name holds this}
      responses:
        "200":
          description: the pools
          content:
            application/json:
              schema: {type: array, items: {$ref: "#/components/schemas/PoolResponse"}}
  /pools/{name}:
    parameters:
      - {name: name, in: path, required: true, description: The pool name, schema: {type: string}}
    get:
      operationId: readPool
      responses:
        "200":
          description: a pool
          content: {application/json: {schema: {$ref: "#/components/schemas/PoolResponse"}}}
        "404": {description: no such pool}
    patch:
      operationId: updatePool
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties: {description: {type: string}}
      responses:
        "204": {description: updated}
        "404": {description: no such pool}
    delete:
      operationId: deletePool
      responses:
        "204": {description: deleted}
        "404": {description: no such pool}
  /pools/{pool_name}/queues:
    parameters:
      - {name: pool_name, in: path, required: true, description: The pool name, schema: {type: string}}
    post:
      operationId: createQueue
      requestBody:
        required: true
        content: {application/json: {schema: {$ref: "#/components/schemas/QueueCreate"}}}
      responses:
        "201":
          description: the queue made
          content: {application/json: {schema: {$ref: "#/components/schemas/QueueResponse"}}}
        "404": {description: no such pool}
        "409": {description: a queue of this name exists in the pool}
        "422": {description: invalid}
  /pools/{pool_name}/queues/filter:
    parameters:
      - {name: pool_name, in: path, required: true, description: The pool name, schema: {type: string}}
    post:
      operationId: readQueues
      responses:
        "200":
          description: the pool's queues
          content:
            application/json:
              schema: {type: array, items: {$ref: "#/components/schemas/QueueResponse"}}
        "404": {description: no such pool}
  /pools/{pool_name}/queues/{name}:
    parameters:
      - {name: pool_name, in: path, required: true, description: The pool name, schema: {type: string}}
      - {name: name, in: path, required: true, description: The queue name, schema: {type: string}}
    get:
      operationId: readQueue
      responses:
        "200":
          description: a queue
          content: {application/json: {schema: {$ref: "#/components/schemas/QueueResponse"}}}
        "404": {description: no such pool or queue}
    delete:
      operationId: deleteQueue
      responses:
        "204": {description: deleted}
        "404": {description: no such pool or queue}
components:
  schemas:
    PoolCreate:
      type: object
      required: [name]
      properties:
        name: {type: string, pattern: "^[a-z][a-z0-9-]{2,20}$"}
        description: {type: string}
    PoolResponse:
      type: object
      required: [id, name]
      properties:
        id: {type: string, format: uuid}
        name: {type: string, description: The name of the pool.}
        description: {type: string}
    QueueCreate:
      type: object
      required: [name]
      properties:
        name: {type: string, pattern: "^[a-z][a-z0-9-]{2,20}$"}
    QueueResponse:
      type: object
      required: [id, name, pool_id]
      properties:
        id: {type: string, format: uuid}
        name: {type: string, description: The name of the queue.}
        pool_id: {type: string, format: uuid}
"##;

/// What reached the server, counted by what the path named.
#[derive(Debug, Default)]
pub struct Counts {
    /// Requests to `/pools/{name}…` whose segment is an existing pool's name.
    pub pool_by_name: AtomicU64,
    /// Requests to `/pools/{name}…` whose segment is an existing pool's id.
    pub pool_by_id: AtomicU64,
    /// `/pools/{pool_name}/queues/{name}` naming a queue of that pool.
    pub queue_in_pool: AtomicU64,
    /// `/pools/{pool_name}/queues/{name}` naming an existing pool and a
    /// queue of another pool.
    pub queue_elsewhere: AtomicU64,
    /// Deletions of a pool's `default` queue (each a 500).
    pub default_deleted: AtomicU64,
}

impl Counts {
    /// One counter's value.
    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}

#[derive(Debug, Default)]
struct Store {
    made: u64,
    pools: Vec<Pool>,
}

#[derive(Debug)]
struct Pool {
    id: String,
    name: String,
    description: String,
    queues: Vec<(String, String)>,
}

impl Store {
    /// A fresh uuid-shaped id no generator guesses.
    fn id(&mut self) -> String {
        self.made += 1;
        format!(
            "5e1f{:04x}-7c2a-4b1d-9e3f-a0b1c2d3{:04x}",
            self.made, self.made
        )
    }
}

fn pool_json(p: &Pool) -> Value {
    json!({"id": p.id, "name": p.name, "description": p.description})
}

fn queue_json(p: &Pool, q: &(String, String)) -> Value {
    json!({"id": q.0, "name": q.1, "pool_id": p.id})
}

fn valid_name(v: &Value) -> Option<String> {
    let s = v.as_str()?;
    let ok = (3..=21).contains(&s.len())
        && s.starts_with(|c: char| c.is_ascii_lowercase())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    ok.then(|| s.to_string())
}

type Shared = (Arc<Mutex<Store>>, Arc<Counts>);

/// The pool a path segment names, counting whether it came by name or id.
fn find<'a>(store: &'a mut Store, counts: &Counts, segment: &str) -> Option<&'a mut Pool> {
    if store.pools.iter().any(|p| p.id == segment) {
        counts.pool_by_id.fetch_add(1, Ordering::Relaxed);
    }
    let pool = store.pools.iter_mut().find(|p| p.name == segment)?;
    counts.pool_by_name.fetch_add(1, Ordering::Relaxed);
    Some(pool)
}

async fn create_pool(State((store, _)): State<Shared>, body: Option<Json<Value>>) -> Response {
    let Some(name) = body.and_then(|Json(b)| valid_name(&b["name"])) else {
        return StatusCode::UNPROCESSABLE_ENTITY.into_response();
    };
    let mut store = store.lock().unwrap();
    if store.pools.iter().any(|p| p.name == name) {
        return StatusCode::CONFLICT.into_response();
    }
    let id = store.id();
    let queue = store.id();
    let pool = Pool {
        id,
        name,
        description: String::new(),
        queues: vec![(queue, "default".into())],
    };
    let answer = pool_json(&pool);
    store.pools.push(pool);
    (StatusCode::CREATED, Json(answer)).into_response()
}

async fn read_pools(State((store, _)): State<Shared>, body: Option<Json<Value>>) -> Response {
    let store = store.lock().unwrap();
    let body = body.map(|Json(b)| b).unwrap_or_default();
    let like = body["name_like"].as_str().unwrap_or("");
    let offset = body["offset"].as_u64().unwrap_or(0) as usize;
    let limit = body["limit"].as_u64().unwrap_or(200) as usize;
    let pools = store
        .pools
        .iter()
        .filter(|p| p.name.contains(like))
        .skip(offset)
        .take(limit)
        .map(pool_json);
    Json(Value::Array(pools.collect())).into_response()
}

async fn read_pool(State((store, counts)): State<Shared>, Path(name): Path<String>) -> Response {
    let mut store = store.lock().unwrap();
    match find(&mut store, &counts, &name) {
        Some(p) => Json(pool_json(p)).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn update_pool(
    State((store, counts)): State<Shared>,
    Path(name): Path<String>,
    body: Option<Json<Value>>,
) -> Response {
    let mut store = store.lock().unwrap();
    match find(&mut store, &counts, &name) {
        Some(p) => {
            if let Some(d) = body.as_ref().and_then(|b| b["description"].as_str()) {
                p.description = d.to_string();
            }
            StatusCode::NO_CONTENT.into_response()
        }
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn delete_pool(State((store, counts)): State<Shared>, Path(name): Path<String>) -> Response {
    let mut store = store.lock().unwrap();
    if find(&mut store, &counts, &name).is_none() {
        return StatusCode::NOT_FOUND.into_response();
    }
    store.pools.retain(|p| p.name != name);
    StatusCode::NO_CONTENT.into_response()
}

async fn create_queue(
    State((store, counts)): State<Shared>,
    Path(pool): Path<String>,
    body: Option<Json<Value>>,
) -> Response {
    let mut store = store.lock().unwrap();
    let id = store.id();
    let Some(p) = find(&mut store, &counts, &pool) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let Some(name) = body.and_then(|Json(b)| valid_name(&b["name"])) else {
        return StatusCode::UNPROCESSABLE_ENTITY.into_response();
    };
    if p.queues.iter().any(|q| q.1 == name) {
        return StatusCode::CONFLICT.into_response();
    }
    p.queues.push((id, name));
    let answer = queue_json(p, p.queues.last().unwrap());
    (StatusCode::CREATED, Json(answer)).into_response()
}

async fn read_queues(State((store, counts)): State<Shared>, Path(pool): Path<String>) -> Response {
    let mut store = store.lock().unwrap();
    match find(&mut store, &counts, &pool) {
        Some(p) => Json(Value::Array(
            p.queues.iter().map(|q| queue_json(p, q)).collect(),
        ))
        .into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// The queue `name` of pool `pool`, counting whether it sits in that pool
/// or in another one; `None` when either is unknown.
fn queue_of(store: &mut Store, counts: &Counts, pool: &str, name: &str) -> Option<(usize, usize)> {
    let elsewhere = store
        .pools
        .iter()
        .any(|p| p.name != pool && p.queues.iter().any(|q| q.1 == name));
    let p = find(store, counts, pool)?;
    let found = p.queues.iter().position(|q| q.1 == name);
    if found.is_some() {
        counts.queue_in_pool.fetch_add(1, Ordering::Relaxed);
    } else if elsewhere {
        counts.queue_elsewhere.fetch_add(1, Ordering::Relaxed);
    }
    let k = store.pools.iter().position(|p| p.name == pool)?;
    Some((k, found?))
}

async fn read_queue(
    State((store, counts)): State<Shared>,
    Path((pool, name)): Path<(String, String)>,
) -> Response {
    let mut store = store.lock().unwrap();
    match queue_of(&mut store, &counts, &pool, &name) {
        Some((p, q)) => {
            let p = &store.pools[p];
            Json(queue_json(p, &p.queues[q])).into_response()
        }
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn delete_queue(
    State((store, counts)): State<Shared>,
    Path((pool, name)): Path<(String, String)>,
) -> Response {
    let mut store = store.lock().unwrap();
    let Some((p, q)) = queue_of(&mut store, &counts, &pool, &name) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    if name == "default" {
        counts.default_deleted.fetch_add(1, Ordering::Relaxed);
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            Json(json!({"exception_message": "Internal Server Error"})),
        )
            .into_response();
    }
    store.pools[p].queues.remove(q);
    StatusCode::NO_CONTENT.into_response()
}

/// Starts the server on a free port of 127.0.0.1.
pub async fn start() -> (SocketAddr, Arc<Counts>, JoinHandle<()>) {
    let counts = Arc::new(Counts::default());
    let store = Arc::new(Mutex::new(Store::default()));
    // One name per segment for the router (it refuses two at one place),
    // whatever the description calls them.
    let router = Router::new()
        .route("/pools/", post(create_pool))
        .route("/pools/filter", post(read_pools))
        .route(
            "/pools/{pool}",
            get(read_pool).patch(update_pool).delete(delete_pool),
        )
        .route("/pools/{pool}/queues", post(create_queue))
        .route("/pools/{pool}/queues/filter", post(read_queues))
        .route(
            "/pools/{pool}/queues/{name}",
            get(read_queue).delete(delete_queue),
        )
        .with_state((store, counts.clone()));
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .expect("a free loopback port");
    let addr = listener.local_addr().expect("a bound address");
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (addr, counts, task)
}
