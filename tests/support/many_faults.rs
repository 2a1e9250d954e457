//! A purpose-built server with many faults of few causes, each crash slow
//! to answer, and `POST /__reset` (not described) that it counts: a run
//! with `--reset-command` has time to confirm a few faults, not all of them
//! (Prefect: 468 faults of 71 causes), and must still prove each cause's
//! representative on a fresh server (`tests/confirm_first.rs`).
//!
//! - `GET /owners{i}/{id}` for `i` below [`CRASHES`] / 2 crashes as Express
//!   does when a handler reads `owner` of nothing; the rest,
//!   `GET /tags{i}/{id}`, read `tags` of nothing (another root cause). Each
//!   crash takes [`CRASH_DELAY`] to answer.
//! - `GET /healthy{i}` answer what they document, at once.

use std::fmt::Write as _;
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// Operations that crash, half for each root cause.
pub const CRASHES: usize = 40;

/// Operations that answer as documented.
const HEALTHY: usize = 8;

/// How long a crash takes to answer: confirming every fault one after
/// another takes [`CRASHES`] times this, more than a small budget leaves.
pub const CRASH_DELAY: Duration = Duration::from_millis(300);

/// The description the server implements.
pub fn spec() -> String {
    let mut s =
        String::from("openapi: 3.0.3\ninfo: {title: Many faults, version: \"1\"}\npaths:\n");
    let record = "content: {application/json: {schema: {type: object, required: [id], properties: {id: {type: integer}}}}}";
    for i in 0..CRASHES {
        let (collection, op) = collection(i);
        let _ = write!(
            s,
            "  /{collection}/{{id}}:\n    get:\n      operationId: {op}\n      parameters:\n        - {{name: id, in: path, required: true, schema: {{type: integer}}}}\n      responses:\n        \"200\": {{description: one, {record}}}\n        \"404\": {{description: none}}\n"
        );
    }
    for i in 0..HEALTHY {
        let _ = write!(
            s,
            "  /healthy{i}:\n    get:\n      operationId: healthy{i}\n      responses:\n        \"200\": {{description: fine, {record}}}\n"
        );
    }
    s
}

/// The `i`th crashing collection and its operation.
fn collection(i: usize) -> (String, String) {
    if i < CRASHES / 2 {
        (format!("owners{i}"), format!("getOwner{i}"))
    } else {
        (format!("tags{i}"), format!("getTags{i}"))
    }
}

/// The running server; dropping it stops it.
pub struct ManyFaults {
    /// Base URL, `http://127.0.0.1:PORT` (no trailing slash).
    pub base_url: String,
    resets: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

impl ManyFaults {
    /// Starts the server on a free loopback port.
    pub async fn start() -> ManyFaults {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("bind the many-faults server on 127.0.0.1");
        let addr = listener.local_addr().expect("a bound address");
        let resets = Arc::new(AtomicUsize::new(0));
        let router = Router::new().fallback(handle).with_state(resets.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        ManyFaults {
            base_url: format!("http://{addr}"),
            resets,
            task,
        }
    }

    /// Times `POST /__reset` was answered.
    pub fn resets(&self) -> usize {
        self.resets.load(Ordering::SeqCst)
    }
}

impl Drop for ManyFaults {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What Express answers for an exception thrown in a handler.
fn node_crash(property: &str, handler: &str) -> Response {
    let error = format!(
        "TypeError: Cannot read properties of undefined (reading '{property}')\n    at {handler} (/srv/app/routes/{handler}.js:27:31)\n    at Layer.handle [as handle_request] (/srv/app/node_modules/express/lib/router/layer.js:95:5)"
    );
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        axum::Json(json!({ "error": error })),
    )
        .into_response()
}

async fn handle(State(resets): State<Arc<AtomicUsize>>, request: Request) -> Response {
    let path = request.uri().path().to_string();
    if request.method() == Method::POST && path == "/__reset" {
        resets.fetch_add(1, Ordering::SeqCst);
        return StatusCode::NO_CONTENT.into_response();
    }
    if request.method() != Method::GET {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match parts.as_slice() {
        [name] if name.starts_with("healthy") => axum::Json(json!({"id": 1})).into_response(),
        [name, id] if id.parse::<i64>().is_ok() => {
            let (property, digits) = if let Some(d) = name.strip_prefix("owners") {
                ("owner", d)
            } else if let Some(d) = name.strip_prefix("tags") {
                ("tags", d)
            } else {
                return StatusCode::NOT_FOUND.into_response();
            };
            if digits.parse::<usize>().is_err() {
                return StatusCode::NOT_FOUND.into_response();
            }
            tokio::time::sleep(CRASH_DELAY).await;
            node_crash(property, &format!("handler{digits}"))
        }
        [_, _] => StatusCode::NOT_FOUND.into_response(),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}
