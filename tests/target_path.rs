//! `--target` and the description's base path: a Swagger 2 `basePath` (or
//! the path of an OpenAPI server URL) is kept when the target names no path,
//! and a target that already has a path is used as it is. When most answers
//! are 404 anyway, or an operation only ever answers 401/403, the run says
//! so, on stderr and in report.json's `warnings`.

use crate::support;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use support::cli::{args, cartograph, read_report};

const SPEC: &str = r#"{
  "swagger": "2.0",
  "info": {"title": "things", "version": "1"},
  "basePath": "/api",
  "paths": {
    "/things": {"get": {"operationId": "listThings", "responses": {"200": {"description": "ok"}}}},
    "/secret": {"get": {"operationId": "getSecret", "responses": {"200": {"description": "ok"}, "401": {"description": "no"}}}}
  }
}"#;

/// Answers `/api/things` with `[]`, `/api/secret` with 401, anything else
/// 404; records every path it was asked for.
async fn serve() -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let app = Router::new()
        .fallback(
            |State(seen): State<Arc<Mutex<Vec<String>>>>, req: Request| async move {
                let path = req.uri().path().to_string();
                seen.lock().unwrap().push(path.clone());
                match path.as_str() {
                    "/api/things" => (StatusCode::OK, "[]").into_response(),
                    "/api/secret" => StatusCode::UNAUTHORIZED.into_response(),
                    _ => StatusCode::NOT_FOUND.into_response(),
                }
            },
        )
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (addr, seen)
}

async fn run(target: &str, dir: &std::path::Path) -> std::process::Output {
    let spec = dir.join("spec.json");
    std::fs::write(&spec, SPEC).unwrap();
    cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        target,
        "--max-requests",
        "60",
        "--seed",
        "1",
        "--out",
        dir.join("out").to_str().unwrap(),
    ]))
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn the_base_path_is_kept_under_a_bare_target() {
    let (addr, seen) = serve().await;
    let dir = tempfile::tempdir().unwrap();
    let result = run(&format!("http://{addr}"), dir.path()).await;
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(stderr.contains("base path /api"), "{stderr}");
    let paths = seen.lock().unwrap().clone();
    assert!(!paths.is_empty());
    assert!(paths.iter().all(|p| p.starts_with("/api/")), "{paths:?}");
    let report = read_report(&dir.path().join("out"));
    assert_eq!(report["operations_reached"], 1, "{report:#}");
    assert!(
        report["faults"].as_array().unwrap().is_empty(),
        "{:#}",
        report["faults"]
    );
    // getSecret only ever answered 401: the run says credentials are missing.
    let warnings = report["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| {
            let w = w.as_str().unwrap();
            w.contains("getSecret") && w.contains("credentials")
        }),
        "{warnings:?}"
    );
    assert!(stderr.contains("got only 401 or 403 answers"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_target_with_its_own_path_is_used_as_it_is_and_404s_are_named() {
    let (addr, seen) = serve().await;
    let dir = tempfile::tempdir().unwrap();
    let result = run(&format!("http://{addr}/v2"), dir.path()).await;
    let stderr = String::from_utf8_lossy(&result.stderr);
    let paths = seen.lock().unwrap().clone();
    assert!(paths.iter().all(|p| p.starts_with("/v2/")), "{paths:?}");
    // Everything answered 404: the first answers say the paths are wrong.
    assert!(stderr.contains("answers were 404"), "{stderr}");
    let report = read_report(&dir.path().join("out"));
    let warnings = report["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("--target's path")),
        "{warnings:?}"
    );
}
