//! A purpose-built notes server with two users (alice, bob) and an admin,
//! each identity weakness planted next to a twin that gets it right
//! (`fixtures/servers/notes.yaml` describes it; every operation requires a
//! bearer token):
//!
//! | planted (weak)                                   | twin (right)                               |
//! |--------------------------------------------------|--------------------------------------------|
//! | `DELETE /drafts/{id}`: any user deletes any draft (306) | `DELETE /notes/{id}`: owner only, 403     |
//! | `PATCH /drafts/{id}`: no credentials checked (308, 306) | `PUT /notes/{id}`: 401 without, 403 others |
//! | `GET /notes/{id}/history`: 403 others, 404 missing (304) | `GET /notes/{id}`: 404 for both         |
//! | `GET /admin/users`: 401 to a known non-admin (305) | `GET /admin/stats`: 403 to a non-admin      |
//! | `GET /albums/{id}`: anyone reads an album only its owner may delete | `GET /notes/{id}`: 404 to others, who may not change it either |
//!
//! `POST /login` (not in the description) gives a user's token for a
//! password, for auth files; `POST /__reset` (nor that) empties it.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// The description, as a path under the crate.
pub const SPEC: &str = "fixtures/servers/notes.yaml";

/// Each user's header value.
pub const ALICE: &str = "Bearer alice-secret-token";
/// Bob's.
pub const BOB: &str = "Bearer bob-secret-token";
/// The admin's.
pub const ADMIN: &str = "Bearer admin-secret-token";

#[derive(Default)]
struct Notes {
    notes: BTreeMap<u64, Value>,
    drafts: BTreeMap<u64, Value>,
    albums: BTreeMap<u64, Value>,
    next: u64,
}

type Shared = Arc<Mutex<Notes>>;

fn user(headers: &HeaderMap) -> Option<&'static str> {
    let value = headers.get("authorization")?.to_str().ok()?;
    [("alice", ALICE), ("bob", BOB), ("admin", ADMIN)]
        .into_iter()
        .find(|(_, v)| *v == value)
        .map(|(u, _)| u)
}

fn say(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({ "message": message }))).into_response()
}

fn unauthorized() -> Response {
    say(StatusCode::UNAUTHORIZED, "credentials required")
}

fn title_of(body: &Value) -> Option<String> {
    let t = body.get("title")?.as_str()?;
    (1..=40).contains(&t.chars().count()).then(|| t.to_string())
}

/// Which collection a resource goes in.
#[derive(Clone, Copy)]
enum Kind {
    Note,
    Draft,
    Album,
}

fn make(state: &Shared, owner: &str, body: &Value, kind: Kind) -> Response {
    let Some(title) = title_of(body) else {
        return say(StatusCode::BAD_REQUEST, "title must be 1 to 40 characters");
    };
    let mut s = state.lock().unwrap();
    s.next += 1;
    let id = s.next;
    let note = json!({ "id": id, "owner": owner, "title": title });
    match kind {
        Kind::Note => s.notes.insert(id, note.clone()),
        Kind::Draft => s.drafts.insert(id, note.clone()),
        Kind::Album => s.albums.insert(id, note.clone()),
    };
    (StatusCode::CREATED, Json(note)).into_response()
}

fn owner_of(note: &Value) -> &str {
    note["owner"].as_str().unwrap_or_default()
}

async fn list_notes(State(s): State<Shared>, h: HeaderMap) -> Response {
    let Some(u) = user(&h) else {
        return unauthorized();
    };
    let s = s.lock().unwrap();
    let mine: Vec<&Value> = s
        .notes
        .values()
        .filter(|n| u == "admin" || owner_of(n) == u)
        .collect();
    Json(json!(mine)).into_response()
}

async fn create_note(State(s): State<Shared>, h: HeaderMap, body: Option<Json<Value>>) -> Response {
    let Some(u) = user(&h) else {
        return unauthorized();
    };
    make(&s, u, &body.map(|b| b.0).unwrap_or_default(), Kind::Note)
}

/// Twin: 404 for a note of another user and for a missing one alike.
async fn get_note(State(s): State<Shared>, h: HeaderMap, Path(id): Path<String>) -> Response {
    let Some(u) = user(&h) else {
        return unauthorized();
    };
    let s = s.lock().unwrap();
    match id.parse::<u64>().ok().and_then(|id| s.notes.get(&id)) {
        Some(n) if u == "admin" || owner_of(n) == u => Json(n.clone()).into_response(),
        _ => say(StatusCode::NOT_FOUND, "no such note"),
    }
}

/// Twin: owner only.
async fn replace_note(
    State(s): State<Shared>,
    h: HeaderMap,
    Path(id): Path<String>,
    body: Option<Json<Value>>,
) -> Response {
    let Some(u) = user(&h) else {
        return unauthorized();
    };
    let mut s = s.lock().unwrap();
    let Some(n) = id.parse::<u64>().ok().and_then(|id| s.notes.get_mut(&id)) else {
        return say(StatusCode::NOT_FOUND, "no such note");
    };
    if u != "admin" && owner_of(n) != u {
        return say(StatusCode::FORBIDDEN, "not your note");
    }
    let Some(title) = title_of(&body.map(|b| b.0).unwrap_or_default()) else {
        return say(StatusCode::BAD_REQUEST, "title must be 1 to 40 characters");
    };
    n["title"] = json!(title);
    Json(n.clone()).into_response()
}

/// Twin: owner only.
async fn delete_note(State(s): State<Shared>, h: HeaderMap, Path(id): Path<String>) -> Response {
    let Some(u) = user(&h) else {
        return unauthorized();
    };
    let mut s = s.lock().unwrap();
    let Some(id) = id.parse::<u64>().ok().filter(|id| s.notes.contains_key(id)) else {
        return say(StatusCode::NOT_FOUND, "no such note");
    };
    if u != "admin" && owner_of(&s.notes[&id]) != u {
        return say(StatusCode::FORBIDDEN, "not your note");
    }
    s.notes.remove(&id);
    StatusCode::NO_CONTENT.into_response()
}

/// Planted (304): 403 for another user's note, 404 for a missing one.
async fn note_history(State(s): State<Shared>, h: HeaderMap, Path(id): Path<String>) -> Response {
    let Some(u) = user(&h) else {
        return unauthorized();
    };
    let s = s.lock().unwrap();
    match id.parse::<u64>().ok().and_then(|id| s.notes.get(&id)) {
        None => say(StatusCode::NOT_FOUND, "no such note"),
        Some(n) if u != "admin" && owner_of(n) != u => say(StatusCode::FORBIDDEN, "not your note"),
        Some(_) => Json(json!(["created"])).into_response(),
    }
}

async fn create_draft(
    State(s): State<Shared>,
    h: HeaderMap,
    body: Option<Json<Value>>,
) -> Response {
    let Some(u) = user(&h) else {
        return unauthorized();
    };
    make(&s, u, &body.map(|b| b.0).unwrap_or_default(), Kind::Draft)
}

async fn get_draft(State(s): State<Shared>, h: HeaderMap, Path(id): Path<String>) -> Response {
    let Some(u) = user(&h) else {
        return unauthorized();
    };
    let s = s.lock().unwrap();
    match id.parse::<u64>().ok().and_then(|id| s.drafts.get(&id)) {
        Some(n) if u == "admin" || owner_of(n) == u => Json(n.clone()).into_response(),
        _ => say(StatusCode::NOT_FOUND, "no such draft"),
    }
}

/// Planted (308, 306): no credentials are checked at all.
async fn patch_draft(
    State(s): State<Shared>,
    Path(id): Path<String>,
    body: Option<Json<Value>>,
) -> Response {
    let mut s = s.lock().unwrap();
    let Some(n) = id.parse::<u64>().ok().and_then(|id| s.drafts.get_mut(&id)) else {
        return say(StatusCode::NOT_FOUND, "no such draft");
    };
    let Some(title) = title_of(&body.map(|b| b.0).unwrap_or_default()) else {
        return say(StatusCode::BAD_REQUEST, "title must be 1 to 40 characters");
    };
    n["title"] = json!(title);
    Json(n.clone()).into_response()
}

/// Planted (306): any user deletes any draft.
async fn delete_draft(State(s): State<Shared>, h: HeaderMap, Path(id): Path<String>) -> Response {
    if user(&h).is_none() {
        return unauthorized();
    }
    let mut s = s.lock().unwrap();
    match id.parse::<u64>().ok().and_then(|id| s.drafts.remove(&id)) {
        Some(_) => StatusCode::NO_CONTENT.into_response(),
        None => say(StatusCode::NOT_FOUND, "no such draft"),
    }
}

async fn create_album(
    State(s): State<Shared>,
    h: HeaderMap,
    body: Option<Json<Value>>,
) -> Response {
    let Some(u) = user(&h) else {
        return unauthorized();
    };
    make(&s, u, &body.map(|b| b.0).unwrap_or_default(), Kind::Album)
}

/// Planted: any user reads any album, though only its owner may delete it.
async fn get_album(State(s): State<Shared>, h: HeaderMap, Path(id): Path<String>) -> Response {
    if user(&h).is_none() {
        return unauthorized();
    }
    let s = s.lock().unwrap();
    match id.parse::<u64>().ok().and_then(|id| s.albums.get(&id)) {
        Some(a) => Json(a.clone()).into_response(),
        None => say(StatusCode::NOT_FOUND, "no such album"),
    }
}

async fn delete_album(State(s): State<Shared>, h: HeaderMap, Path(id): Path<String>) -> Response {
    let Some(u) = user(&h) else {
        return unauthorized();
    };
    let mut s = s.lock().unwrap();
    let Some(id) = id
        .parse::<u64>()
        .ok()
        .filter(|id| s.albums.contains_key(id))
    else {
        return say(StatusCode::NOT_FOUND, "no such album");
    };
    if u != "admin" && owner_of(&s.albums[&id]) != u {
        return say(StatusCode::FORBIDDEN, "not your album");
    }
    s.albums.remove(&id);
    StatusCode::NO_CONTENT.into_response()
}

/// Twin: 403 to a known user who is not the admin.
async fn admin_stats(State(s): State<Shared>, h: HeaderMap) -> Response {
    match user(&h) {
        None => unauthorized(),
        Some("admin") => Json(json!({ "notes": s.lock().unwrap().notes.len() })).into_response(),
        Some(_) => say(StatusCode::FORBIDDEN, "admins only"),
    }
}

/// Planted (305): 401 to a known user who is not the admin.
async fn admin_users(h: HeaderMap) -> Response {
    match user(&h) {
        Some("admin") => Json(json!(["alice", "bob", "admin"])).into_response(),
        _ => unauthorized(),
    }
}

async fn login(body: Option<Json<Value>>) -> Response {
    let body = body.map(|b| b.0).unwrap_or_default();
    let token = match (body["user"].as_str(), body["password"].as_str()) {
        (Some("alice"), Some("alice-password")) => ALICE,
        (Some("bob"), Some("bob-password")) => BOB,
        (Some("admin"), Some("admin-password")) => ADMIN,
        _ => return say(StatusCode::UNAUTHORIZED, "wrong user or password"),
    };
    Json(json!({ "token": token.trim_start_matches("Bearer ") })).into_response()
}

/// `POST /__reset` (not in the description): back to no notes, drafts or
/// albums, ids from the start, for `--reset-command`.
async fn reset(State(s): State<Shared>) -> StatusCode {
    *s.lock().unwrap() = Notes::default();
    StatusCode::NO_CONTENT
}

/// Starts the server on a free loopback port.
pub async fn start() -> (SocketAddr, JoinHandle<()>) {
    let state: Shared = Arc::default();
    let app = Router::new()
        .route("/notes", get(list_notes).post(create_note))
        .route(
            "/notes/{noteId}",
            get(get_note).put(replace_note).delete(delete_note),
        )
        .route("/notes/{noteId}/history", get(note_history))
        .route("/drafts", post(create_draft))
        .route(
            "/drafts/{draftId}",
            get(get_draft).patch(patch_draft).delete(delete_draft),
        )
        .route("/albums", post(create_album))
        .route("/albums/{albumId}", get(get_album).delete(delete_album))
        .route("/admin/stats", get(admin_stats))
        .route("/admin/users", get(admin_users))
        .route("/login", post(login))
        .route("/__reset", post(reset))
        .with_state(state);
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    (addr, server)
}
