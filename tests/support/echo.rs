//! A purpose-built pet shop whose answers repeat the request's values, and
//! which departs from its Swagger 2 description ([`ECHO_SPEC_PATH`]) in
//! exactly these ways; one cause each only when the values are hidden:
//!
//! | cause | operations | what the server does |
//! |---|---|---|
//! | `undocumented_status` 404 | getPet, deletePet, getFeedingTime | `{"message": "no pet named '<name>'"}` for a name it does not know |
//! | `undocumented_status` 400 | listPets | `text/plain` `unknown species '<species>'` for a species other than `cat`, `dog` |
//! | `schema_violation` `Pet.tag` | listPets, getPet, createPet | sends `tag: null` (a string is documented) |
//! | `schema_violation` `Results.took` | search | sends `took` as `"3ms"` (an integer is documented), beside the query it echoes |
//! | `content_type_mismatch` `text/plain` | getFeedingTime | answers `<name> eats at 08:00` in `text/plain` |
//! | `invalid_input_accepted` | createPet | takes any species (`cat`, `dog` documented): no spec fix, the server should refuse |
//! | `server_error` (defect) | deletePet | 500 `{"message": "cannot delete '<name>': the pet still has records"}` |
//!
//! Other bad request bodies are refused with 400 (createPet documents no
//! client error: no fault).

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use percent_encoding::percent_decode_str;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// Path of the description, from the crate's root.
pub const ECHO_SPEC_PATH: &str = "fixtures/servers/echo.yaml";

/// The running server; dropping it stops it.
pub struct Echo {
    /// Base URL, e.g. "http://127.0.0.1:41234".
    pub base_url: String,
    task: JoinHandle<()>,
}

impl Echo {
    /// Starts the server with two pets.
    pub async fn start() -> Echo {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("bind the echo server on 127.0.0.1");
        let addr = listener.local_addr().expect("local address");
        let pets: BTreeMap<String, String> = [("Tom", "cat"), ("Rex", "dog")]
            .into_iter()
            .map(|(n, s)| (n.to_string(), s.to_string()))
            .collect();
        let router = Router::new()
            .fallback(handle)
            .with_state(Arc::new(Mutex::new(pets)));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Echo {
            base_url: format!("http://{addr}"),
            task,
        }
    }
}

impl Drop for Echo {
    fn drop(&mut self) {
        self.task.abort();
    }
}

type Shared = Arc<Mutex<BTreeMap<String, String>>>;

fn json_answer(status: StatusCode, body: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn text(status: StatusCode, body: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body,
    )
        .into_response()
}

fn pet(name: &str, species: &str) -> Value {
    json!({"name": name, "species": species, "tag": null})
}

fn unknown(name: &str) -> Response {
    json_answer(
        StatusCode::NOT_FOUND,
        json!({"message": format!("no pet named '{name}'")}),
    )
}

/// A new pet: an object with a string `name` and `species` (any species:
/// the search mutates enums to values outside them, unmarked).
fn new_pet(bytes: &Bytes) -> Option<(String, String)> {
    let v: Value = serde_json::from_slice(bytes).ok()?;
    let name = v.get("name")?.as_str()?.to_string();
    let species = v.get("species")?.as_str()?.to_string();
    Some((name, species))
}

async fn handle(State(pets): State<Shared>, request: Request) -> Response {
    let method = request.method().clone();
    let raw_path = request.uri().path().to_string();
    let query: Vec<(String, String)> = request
        .uri()
        .query()
        .map(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .into_owned()
                .collect()
        })
        .unwrap_or_default();
    let bytes = axum::body::to_bytes(request.into_body(), usize::MAX)
        .await
        .unwrap_or_default();
    let segments: Vec<String> = raw_path
        .trim_start_matches('/')
        .split('/')
        .map(|s| percent_decode_str(s).decode_utf8_lossy().into_owned())
        .collect();
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    let param = |name: &str| {
        query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let mut pets = pets.lock().unwrap_or_else(|e| e.into_inner());
    match (&method, segments.as_slice()) {
        (&Method::GET, ["pets"]) => match param("species") {
            Some(s) if s != "cat" && s != "dog" => {
                text(StatusCode::BAD_REQUEST, format!("unknown species '{s}'"))
            }
            species => json_answer(
                StatusCode::OK,
                Value::Array(
                    pets.iter()
                        .filter(|(_, s)| species.as_ref().is_none_or(|want| want == *s))
                        .map(|(n, s)| pet(n, s))
                        .collect(),
                ),
            ),
        },
        (&Method::POST, ["pets"]) => match new_pet(&bytes) {
            Some((name, species)) => {
                let answer = pet(&name, &species);
                pets.insert(name, species);
                json_answer(StatusCode::CREATED, answer)
            }
            None => text(StatusCode::BAD_REQUEST, "bad pet".into()),
        },
        (&Method::GET, ["pets", name]) => match pets.get(*name) {
            Some(species) => json_answer(StatusCode::OK, pet(name, species)),
            None => unknown(name),
        },
        (&Method::DELETE, ["pets", name]) => match pets.get(*name) {
            Some(_) => json_answer(
                StatusCode::INTERNAL_SERVER_ERROR,
                json!({"message": format!("cannot delete '{name}': the pet still has records")}),
            ),
            None => unknown(name),
        },
        (&Method::GET, ["pets", name, "feeding-o'clock"]) => match pets.get(*name) {
            Some(_) => text(StatusCode::OK, format!("{name} eats at 08:00")),
            None => unknown(name),
        },
        (&Method::GET, ["search"]) => match param("q") {
            Some(q) => json_answer(
                StatusCode::OK,
                json!({"query": q, "count": 0, "took": "3ms"}),
            ),
            None => text(StatusCode::BAD_REQUEST, "q is required".into()),
        },
        _ => text(StatusCode::NOT_FOUND, format!("no route {raw_path}")),
    }
}
