//! A purpose-built server whose resources are named by the client, as
//! Airflow's pools, variables and connections are (`POST /pools
//! {"name": "p1"}` makes `/pools/p1`; the answer has no `id`), with two
//! users (alice, bob), a weakness planted next to a twin that gets it right,
//! and a logout that revokes the caller's token
//! (`fixtures/servers/named.yaml` describes it):
//!
//! | planted (weak)                                         | twin (right)                                 |
//! |--------------------------------------------------------|----------------------------------------------|
//! | `PATCH /pools/{pool_name}`: any user changes any pool (306) | `DELETE /pools/{pool_name}`: owner only, 403 |
//! | `DELETE /connections/{connection_id}`: any user (306)  | `GET /pools/{pool_name}`: 404 to others      |
//!
//! Pools are private (`GET /pools` lists the caller's own); connections are
//! shared (`GET /connections` lists everyone's). A second creation of a
//! name is refused 409, as Airflow does. `GET
//! /auth/logout` answers 307 and revokes the token it was sent with: every
//! later request with it is answered 403 `Invalid token`. `POST /keys`
//! makes a key its answer gives no id or name for (`/keys/{keyId}` cannot
//! be reached from it).

use std::collections::{BTreeMap, BTreeSet};
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

/// The description, as a path under the crate.
pub const SPEC: &str = "fixtures/servers/named.yaml";

/// Alice's header value.
pub const ALICE: &str = "Bearer alice-named-token";
/// Bob's.
pub const BOB: &str = "Bearer bob-named-token";

#[derive(Default)]
struct Named {
    pools: BTreeMap<String, Value>,
    connections: BTreeMap<String, Value>,
    keys: Vec<Value>,
    revoked: BTreeSet<String>,
}

type Shared = Arc<Mutex<Named>>;

fn say(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({ "message": message }))).into_response()
}

/// The answer to a caller refused: 401 without a known token, 403 with a
/// revoked one.
fn refuse(status: StatusCode) -> Response {
    if status == StatusCode::FORBIDDEN {
        say(status, "Invalid token")
    } else {
        say(status, "Not authenticated")
    }
}

/// The caller, or the status that refuses it (see [`refuse`]).
fn caller(s: &Named, headers: &HeaderMap) -> Result<&'static str, StatusCode> {
    let value = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if s.revoked.contains(value) {
        return Err(StatusCode::FORBIDDEN);
    }
    [("alice", ALICE), ("bob", BOB)]
        .into_iter()
        .find(|(_, v)| *v == value)
        .map(|(u, _)| u)
        .ok_or(StatusCode::UNAUTHORIZED)
}

fn name_of(body: &Value, field: &str) -> Option<String> {
    let n = body.get(field)?.as_str()?;
    (1..=64).contains(&n.chars().count()).then(|| n.to_string())
}

async fn list_pools(State(s): State<Shared>, h: HeaderMap) -> Response {
    let s = s.lock().unwrap();
    let u = match caller(&s, &h) {
        Ok(u) => u,
        Err(r) => return refuse(r),
    };
    let mine: Vec<&Value> = s.pools.values().filter(|p| p["owner"] == u).collect();
    Json(json!(mine)).into_response()
}

async fn create_pool(State(s): State<Shared>, h: HeaderMap, body: Option<Json<Value>>) -> Response {
    let mut s = s.lock().unwrap();
    let u = match caller(&s, &h) {
        Ok(u) => u,
        Err(r) => return refuse(r),
    };
    let body = body.map(|b| b.0).unwrap_or_default();
    let Some(name) = name_of(&body, "name") else {
        return say(StatusCode::UNPROCESSABLE_ENTITY, "name: 1 to 64 characters");
    };
    let Some(slots) = body.get("slots").and_then(Value::as_i64) else {
        return say(StatusCode::UNPROCESSABLE_ENTITY, "slots: an integer");
    };
    if s.pools.contains_key(&name) {
        return say(StatusCode::CONFLICT, "a pool of that name exists");
    }
    let pool = json!({ "name": name, "slots": slots, "owner": u });
    s.pools.insert(name, pool.clone());
    (StatusCode::CREATED, Json(pool)).into_response()
}

/// Twin: 404 for another user's pool and a missing one alike.
async fn get_pool(State(s): State<Shared>, h: HeaderMap, Path(name): Path<String>) -> Response {
    let s = s.lock().unwrap();
    let u = match caller(&s, &h) {
        Ok(u) => u,
        Err(r) => return refuse(r),
    };
    match s.pools.get(&name) {
        Some(p) if p["owner"] == u => Json(p.clone()).into_response(),
        _ => say(StatusCode::NOT_FOUND, "no such pool"),
    }
}

/// Planted (306): any user changes any pool's slots.
async fn patch_pool(
    State(s): State<Shared>,
    h: HeaderMap,
    Path(name): Path<String>,
    body: Option<Json<Value>>,
) -> Response {
    let mut s = s.lock().unwrap();
    if let Err(r) = caller(&s, &h) {
        return refuse(r);
    }
    let Some(pool) = s.pools.get_mut(&name) else {
        return say(StatusCode::NOT_FOUND, "no such pool");
    };
    if let Some(slots) = body.and_then(|b| b.0.get("slots").and_then(Value::as_i64)) {
        pool["slots"] = json!(slots);
    }
    Json(pool.clone()).into_response()
}

/// Twin: owner only.
async fn delete_pool(State(s): State<Shared>, h: HeaderMap, Path(name): Path<String>) -> Response {
    let mut s = s.lock().unwrap();
    let u = match caller(&s, &h) {
        Ok(u) => u,
        Err(r) => return refuse(r),
    };
    match s.pools.get(&name) {
        None => say(StatusCode::NOT_FOUND, "no such pool"),
        Some(p) if p["owner"] != u => say(StatusCode::FORBIDDEN, "not your pool"),
        Some(_) => {
            s.pools.remove(&name);
            StatusCode::NO_CONTENT.into_response()
        }
    }
}

async fn create_connection(
    State(s): State<Shared>,
    h: HeaderMap,
    body: Option<Json<Value>>,
) -> Response {
    let mut s = s.lock().unwrap();
    let u = match caller(&s, &h) {
        Ok(u) => u,
        Err(r) => return refuse(r),
    };
    let body = body.map(|b| b.0).unwrap_or_default();
    let Some(id) = name_of(&body, "connection_id") else {
        return say(
            StatusCode::UNPROCESSABLE_ENTITY,
            "connection_id: 1 to 64 characters",
        );
    };
    if s.connections.contains_key(&id) {
        return say(StatusCode::CONFLICT, "a connection of that id exists");
    }
    let conn = json!({ "connection_id": id, "conn_type": body["conn_type"].as_str().unwrap_or("http"), "owner": u });
    s.connections.insert(id, conn.clone());
    (StatusCode::CREATED, Json(conn)).into_response()
}

/// Every user's connections: they are shared.
async fn list_connections(State(s): State<Shared>, h: HeaderMap) -> Response {
    let s = s.lock().unwrap();
    if let Err(r) = caller(&s, &h) {
        return refuse(r);
    }
    Json(json!(s.connections.values().collect::<Vec<_>>())).into_response()
}

/// Twin of the delete: 404 for another user's connection.
async fn get_connection(State(s): State<Shared>, h: HeaderMap, Path(id): Path<String>) -> Response {
    let s = s.lock().unwrap();
    let u = match caller(&s, &h) {
        Ok(u) => u,
        Err(r) => return refuse(r),
    };
    match s.connections.get(&id) {
        Some(c) if c["owner"] == u => Json(c.clone()).into_response(),
        _ => say(StatusCode::NOT_FOUND, "no such connection"),
    }
}

/// Planted (306): any user deletes any connection.
async fn delete_connection(
    State(s): State<Shared>,
    h: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let mut s = s.lock().unwrap();
    if let Err(r) = caller(&s, &h) {
        return refuse(r);
    }
    match s.connections.remove(&id) {
        Some(_) => StatusCode::NO_CONTENT.into_response(),
        None => say(StatusCode::NOT_FOUND, "no such connection"),
    }
}

/// A key whose answer names nothing the item path takes.
async fn create_key(State(s): State<Shared>, h: HeaderMap, body: Option<Json<Value>>) -> Response {
    let mut s = s.lock().unwrap();
    if let Err(r) = caller(&s, &h) {
        return refuse(r);
    }
    let label = body
        .and_then(|b| b.0.get("label").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_default();
    s.keys.push(json!({ "label": label }));
    (StatusCode::CREATED, Json(json!({ "label": label }))).into_response()
}

async fn get_key(State(s): State<Shared>, h: HeaderMap, Path(_id): Path<String>) -> Response {
    let s = s.lock().unwrap();
    if let Err(r) = caller(&s, &h) {
        return refuse(r);
    }
    say(StatusCode::NOT_FOUND, "no such key")
}

/// Ends the session: the token it was sent with is refused from now on.
async fn logout(State(s): State<Shared>, h: HeaderMap) -> Response {
    let mut s = s.lock().unwrap();
    if let Some(v) = h.get("authorization").and_then(|v| v.to_str().ok()) {
        s.revoked.insert(v.to_string());
    }
    (StatusCode::TEMPORARY_REDIRECT, [("location", "/")]).into_response()
}

/// Starts the server on a free loopback port.
pub async fn start() -> (SocketAddr, JoinHandle<()>) {
    let state: Shared = Arc::default();
    let app = Router::new()
        .route("/pools", get(list_pools).post(create_pool))
        .route(
            "/pools/{pool_name}",
            get(get_pool).patch(patch_pool).delete(delete_pool),
        )
        .route(
            "/connections",
            get(list_connections).post(create_connection),
        )
        .route(
            "/connections/{connection_id}",
            get(get_connection).delete(delete_connection),
        )
        .route("/keys", axum::routing::post(create_key))
        .route("/keys/{keyId}", get(get_key))
        .route("/auth/logout", get(logout))
        .with_state(state);
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    (addr, server)
}
