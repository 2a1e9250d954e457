//! A purpose-built REST server whose useful values only sit in lists: pets
//! carry `tags` (a list of strings), a listing of bare tag names is the only
//! place one tag appears, and filters take a tag or a list of them. Tags are
//! made up words no generator guesses. The server counts what reached it, so a
//! test can tell whether list elements flowed.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// The description the server implements.
pub const SPEC: &str = r##"
openapi: 3.0.3
info: {title: Tagged pets, version: "1"}
paths:
  /pets:
    get:
      operationId: listPets
      parameters:
        - {name: tag, in: query, description: only pets with this tag, schema: {type: string}}
      responses:
        "200":
          description: the pets
          content:
            application/json:
              schema: {type: array, items: {$ref: "#/components/schemas/Pet"}}
  /pets/{petId}:
    get:
      operationId: getPet
      parameters: [{name: petId, in: path, required: true, schema: {type: integer}}]
      responses:
        "200":
          description: a pet
          content: {application/json: {schema: {$ref: "#/components/schemas/Pet"}}}
        "404": {description: no such pet}
  /tags:
    get:
      operationId: listTags
      responses:
        "200":
          description: every tag's name
          content:
            application/json:
              schema: {type: array, items: {type: string}}
  /tags/{tag}:
    get:
      operationId: getTag
      parameters: [{name: tag, in: path, required: true, schema: {type: string}}]
      responses:
        "200":
          description: how many pets have the tag
          content:
            application/json:
              schema:
                type: object
                properties: {name: {type: string}, pets: {type: integer}}
        "404": {description: no such tag}
  /owners:
    get:
      operationId: listOwners
      parameters:
        - name: petTags
          in: query
          description: owners of pets with all these tags
          schema: {type: array, items: {type: string}}
      responses:
        "200":
          description: the owners
          content:
            application/json:
              schema:
                type: array
                items: {type: object, properties: {name: {type: string}}}
components:
  schemas:
    Pet:
      type: object
      properties:
        id: {type: integer}
        name: {type: string}
        tags: {type: array, items: {type: string}}
"##;

/// What reached the server.
#[derive(Debug, Default)]
pub struct Counts {
    /// `GET /pets?tag=` naming a tag some pet has.
    pub pets_by_tag: AtomicU64,
    /// `GET /tags/{tag}` naming a tag that exists.
    pub tag_found: AtomicU64,
    /// `GET /tags/{tag}` naming the tag no pet has: only `/tags` lists it.
    pub lonely_found: AtomicU64,
    /// `GET /owners?petTags=` whose tags all exist.
    pub owners_by_tags: AtomicU64,
}

impl Counts {
    /// One counter's value.
    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}

const LONELY: &str = "umbral-quince";

fn pets() -> serde_json::Value {
    json!([
        {"id": 1, "name": "Rex", "tags": ["saffron-otter", "velvet-knot"]},
        {"id": 2, "name": "Mia", "tags": ["velvet-knot"]},
        {"id": 3, "name": "Ola", "tags": ["copper-wren"]},
    ])
}

fn known(tag: &str) -> bool {
    ["saffron-otter", "velvet-knot", "copper-wren"].contains(&tag)
}

/// `(name, value)` pairs of a raw query string.
fn query_pairs(raw: Option<String>) -> Vec<(String, String)> {
    url::form_urlencoded::parse(raw.unwrap_or_default().as_bytes())
        .into_owned()
        .collect()
}

async fn list_pets(State(counts): State<Arc<Counts>>, RawQuery(raw): RawQuery) -> Response {
    let pairs: HashMap<String, String> = query_pairs(raw).into_iter().collect();
    let all = pets();
    let Some(tag) = pairs.get("tag") else {
        return Json(all).into_response();
    };
    if known(tag) {
        counts.pets_by_tag.fetch_add(1, Ordering::Relaxed);
    }
    let chosen: Vec<_> = all
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["tags"].as_array().unwrap().iter().any(|t| t == tag))
        .cloned()
        .collect();
    Json(chosen).into_response()
}

async fn get_pet(Path(id): Path<String>) -> Response {
    let id: Option<i64> = id.parse().ok();
    match pets()
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"].as_i64() == id)
    {
        Some(p) => Json(p.clone()).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn list_tags() -> Response {
    Json(json!([
        "saffron-otter",
        "velvet-knot",
        "copper-wren",
        LONELY
    ]))
    .into_response()
}

async fn get_tag(State(counts): State<Arc<Counts>>, Path(tag): Path<String>) -> Response {
    if tag == LONELY {
        counts.lonely_found.fetch_add(1, Ordering::Relaxed);
    } else if !known(&tag) {
        return StatusCode::NOT_FOUND.into_response();
    }
    counts.tag_found.fetch_add(1, Ordering::Relaxed);
    Json(json!({"name": tag, "pets": 1})).into_response()
}

async fn list_owners(State(counts): State<Arc<Counts>>, RawQuery(raw): RawQuery) -> Response {
    let tags: Vec<String> = query_pairs(raw)
        .into_iter()
        .filter(|(k, _)| k == "petTags")
        .flat_map(|(_, v)| v.split(',').map(String::from).collect::<Vec<_>>())
        .collect();
    if !tags.is_empty() && tags.iter().all(|t| known(t)) {
        counts.owners_by_tags.fetch_add(1, Ordering::Relaxed);
        return Json(json!([{"name": "Ada"}])).into_response();
    }
    Json(json!([])).into_response()
}

/// Starts the server on a free port of 127.0.0.1.
pub async fn start() -> (SocketAddr, Arc<Counts>, JoinHandle<()>) {
    let counts = Arc::new(Counts::default());
    let router = Router::new()
        .route("/pets", get(list_pets))
        .route("/pets/{petId}", get(get_pet))
        .route("/tags", get(list_tags))
        .route("/tags/{tag}", get(get_tag))
        .route("/owners", get(list_owners))
        .with_state(counts.clone());
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .expect("a free loopback port");
    let addr = listener.local_addr().expect("a bound address");
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (addr, counts, task)
}
