//! The built-in demo API ("bookshop"): a real HTTP server with planted faults.
//!
//! It serves a small REST API (described by [`OPENAPI_YAML`]) and a GraphQL API
//! (described by [`GRAPHQL_SDL`]) over one in-memory store, so the demo command
//! can run Cartograph end to end without any external service. The planted
//! faults are listed in `models/demo/FAULTS.md`.

mod graphql;
mod rest;
mod store;

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use async_graphql_axum::GraphQL;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post, post_service};
use axum::{Json, Router};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use rest::ApiError;
use store::SharedStore;

/// The OpenAPI description shipped with the demo.
pub const OPENAPI_YAML: &str = include_str!("../../models/demo/openapi.yaml");

/// The GraphQL SDL shipped with the demo.
pub const GRAPHQL_SDL: &str = include_str!("../../models/demo/schema.graphql");

/// The list of planted faults, read only to score a finished demo run.
pub const FAULTS_MD: &str = include_str!("../../models/demo/FAULTS.md");

/// A running demo server; dropping it without [`DemoServer::shutdown`] also stops serving.
pub struct DemoServer {
    /// The bound address.
    pub addr: SocketAddr,
    stop: oneshot::Sender<()>,
    task: JoinHandle<io::Result<()>>,
}

impl DemoServer {
    /// Binds 127.0.0.1:port (0 = a free port) and serves in the background on the current tokio runtime.
    pub async fn start(port: u16) -> io::Result<DemoServer> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        let addr = listener.local_addr()?;
        let openapi = openapi_json(&format!("http://{addr}"))?;
        let app = app(SharedStore::seeded(), openapi);
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    // A dropped sender counts as a stop request too.
                    let _ = stopped.await;
                })
                .await
        });
        Ok(DemoServer { addr, stop, task })
    }

    /// Base URL, e.g. "http://127.0.0.1:41234".
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops serving (graceful).
    pub async fn shutdown(self) {
        let _ = self.stop.send(());
        // The serve result carries nothing actionable once we are stopping.
        let _ = self.task.await;
    }
}

/// The embedded OpenAPI description as JSON, pointing its `servers` at `base_url`.
fn openapi_json(base_url: &str) -> io::Result<Value> {
    let mut document = crate::load::parse_text(
        OPENAPI_YAML,
        std::path::Path::new("models/demo/openapi.yaml"),
    )
    .map_err(|e| io::Error::other(e.to_string()))?;
    document["servers"] = json!([{ "url": base_url }]);
    Ok(document)
}

fn app(store: SharedStore, openapi: Value) -> Router {
    let openapi = Arc::new(openapi);
    let graphql = GraphQL::new(graphql::schema(store.clone()));
    rest::router()
        .route(
            "/openapi.json",
            get(move || async move { Json(openapi.as_ref().clone()) }),
        )
        .route("/graphql", post_service(graphql))
        .route("/__health", get(health))
        .route("/__reset", post(reset))
        .fallback(|| async { ApiError::not_found("no such resource") })
        .with_state(store)
}

async fn health() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

async fn reset(State(store): State<SharedStore>) -> StatusCode {
    store.reset();
    StatusCode::NO_CONTENT
}
