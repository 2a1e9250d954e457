//! A reverse proxy on 127.0.0.1 that records every request (method, path,
//! body, arrival time) and forwards it to a real server (the demo API), so a
//! test can say what a whole run sent, in every phase.

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// One request the proxy received.
#[derive(Debug, Clone)]
pub struct Seen {
    /// Upper-case method.
    pub method: String,
    /// Path and query, as received.
    pub path: String,
    /// The body, as text.
    pub body: String,
    /// When it arrived.
    pub at: Instant,
}

struct ProxyState {
    upstream: String,
    /// Paths the proxy answers itself (a description and its `$ref` files).
    files: Vec<(String, String)>,
    client: reqwest::Client,
    seen: Mutex<Vec<Seen>>,
}

/// The running proxy; dropping it stops it.
pub struct Recording {
    /// Base URL of the proxy (no trailing slash).
    pub base_url: String,
    state: Arc<ProxyState>,
    task: JoinHandle<()>,
}

impl Recording {
    /// Starts a proxy to `upstream` (a base URL, no trailing slash).
    pub async fn start(upstream: &str) -> Recording {
        Recording::serving(upstream, Vec::new()).await
    }

    /// Starts a proxy to `upstream` that answers the `files` (path, text)
    /// itself.
    pub async fn serving(upstream: &str, files: Vec<(String, String)>) -> Recording {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("bind the recording proxy on 127.0.0.1");
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(ProxyState {
            upstream: upstream.trim_end_matches('/').to_string(),
            files,
            client: reqwest::Client::new(),
            seen: Mutex::new(Vec::new()),
        });
        let app = Router::new()
            .fallback(forward)
            .with_state(Arc::clone(&state));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Recording {
            base_url,
            state,
            task,
        }
    }

    /// Every request received, in arrival order.
    pub fn seen(&self) -> Vec<Seen> {
        self.state.seen.lock().unwrap().clone()
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn forward(
    State(state): State<Arc<ProxyState>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri
        .path_and_query()
        .map_or_else(|| uri.path().to_string(), |p| p.as_str().to_string());
    state.seen.lock().unwrap().push(Seen {
        method: method.as_str().to_string(),
        path: path.clone(),
        body: String::from_utf8_lossy(&body).into_owned(),
        at: Instant::now(),
    });
    if let Some((_, text)) = state.files.iter().find(|(p, _)| *p == path) {
        return Response::builder()
            .header("content-type", "application/yaml")
            .body(Body::from(text.clone()))
            .unwrap();
    }
    let mut request = state
        .client
        .request(method, format!("{}{path}", state.upstream))
        .body(body.to_vec());
    if let Some(ct) = headers.get("content-type") {
        request = request.header("content-type", ct);
    }
    match request.send().await {
        Ok(answer) => {
            let mut out = Response::builder().status(answer.status());
            for (name, value) in answer.headers() {
                // The proxy answers with its own framing.
                if name != "transfer-encoding" && name != "content-length" {
                    out = out.header(name, value);
                }
            }
            let bytes = answer.bytes().await.unwrap_or_default();
            out.body(Body::from(bytes)).unwrap()
        }
        Err(e) => Response::builder()
            .status(StatusCode::BAD_GATEWAY)
            .body(Body::from(e.to_string()))
            .unwrap(),
    }
}
