//! A purpose-built server that is briefly unavailable, as Prefect was: `GET
//! /items/{id}` answers its record, but its second request gets 503 with
//! `Retry-After: 1` (a wait any run can afford) and its fourth 503 with
//! `Retry-After: 3600` (a wait past any test's budget). `GET /status`
//! always answers. A run should wait out the first, set the operation
//! aside after the second, and still count it as tested
//! (`tests/unavailable.rs`).

use std::net::Ipv4Addr;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// The description the server implements.
pub const SPEC: &str = r#"
openapi: 3.0.3
info: {title: Unavailable, version: "1"}
paths:
  /items/{id}:
    get:
      operationId: getItem
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer, minimum: 1, maximum: 9}}
      responses:
        "200":
          description: the item
          content: {application/json: {schema: {type: object, required: [id], properties: {id: {type: integer}}}}}
        "400": {description: not an id}
        "503": {description: busy; try again after Retry-After}
  /status:
    get:
      operationId: getStatus
      responses:
        "200":
          description: up
          content: {application/json: {schema: {type: object, required: [up], properties: {up: {type: boolean}}}}}
"#;

/// The running server; dropping it stops it.
pub struct Unavailable {
    /// Base URL, `http://127.0.0.1:PORT` (no trailing slash).
    pub base_url: String,
    calls: Arc<Calls>,
    task: JoinHandle<()>,
}

#[derive(Default)]
struct Calls {
    items: AtomicUsize,
    /// When each `GET /items/{id}` came.
    times: Mutex<Vec<Instant>>,
}

impl Unavailable {
    /// Starts the server on a free loopback port.
    pub async fn start() -> Unavailable {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("bind the unavailable server on 127.0.0.1");
        let addr = listener.local_addr().expect("a bound address");
        let calls = Arc::new(Calls::default());
        let router = Router::new()
            .route("/items/{id}", get(item))
            .route("/status", get(|| async { axum::Json(json!({"up": true})) }))
            .with_state(calls.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Unavailable {
            base_url: format!("http://{addr}"),
            calls,
            task,
        }
    }

    /// When each `GET /items/{id}` came, in order.
    pub fn item_times(&self) -> Vec<Instant> {
        self.calls
            .times
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl Drop for Unavailable {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn item(State(calls): State<Arc<Calls>>, Path(id): Path<String>) -> Response {
    calls
        .times
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(Instant::now());
    let n = calls.items.fetch_add(1, Ordering::SeqCst) + 1;
    let busy = |wait: &'static str| {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            [("retry-after", wait)],
            axum::Json(json!({"exception_message": "Service Unavailable"})),
        )
            .into_response()
    };
    match n {
        2 => return busy("1"),
        4 => return busy("3600"),
        _ => {}
    }
    match id.parse::<i64>() {
        Ok(id) if (1..=9).contains(&id) => axum::Json(json!({"id": id})).into_response(),
        _ => (StatusCode::BAD_REQUEST, "not an id").into_response(),
    }
}
