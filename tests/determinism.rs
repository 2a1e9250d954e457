//! The same `--seed` against the same server state sends the same requests:
//! a short REST run and a short GraphQL run against a fresh demo API are
//! pinned request by request (method, path, body) in `fixtures/pins/`. A
//! change that alters what the search sends on purpose updates the pins in
//! the same commit, with `UPDATE_GOLDEN=1 cargo test --test integration
//! determinism::`, and says why; any other difference is a regression (a
//! hash-map order, a clock, a thread leaking into the choices).

use crate::support;

use std::path::{Path, PathBuf};

use cartograph::testing::DemoServer;
use support::cli::{args, cartograph};

/// Requests of each pinned run.
const REQUESTS: &str = "300";
const SEED: &str = "11";

fn pin_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/pins")
        .join(name)
}

/// One line per request of `trace.ndjson`: method, path and body.
fn requests(dir: &Path) -> String {
    let trace = std::fs::read_to_string(dir.join("trace.ndjson")).unwrap();
    let mut out = String::new();
    for line in trace.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        out.push_str(v["method"].as_str().unwrap_or(""));
        out.push(' ');
        out.push_str(v["path"].as_str().unwrap_or(""));
        if let Some(body) = v["request_body"].as_str() {
            out.push(' ');
            out.push_str(body);
        }
        out.push('\n');
    }
    out
}

/// Runs `spec` against a fresh demo server (`endpoint` under its base URL)
/// and returns the requests sent.
async fn pinned_run(spec: &str, endpoint: &str) -> String {
    let server = DemoServer::start(0).await.unwrap();
    let target = format!("{}{endpoint}", server.base_url());
    let out = tempfile::tempdir().unwrap();
    let result = cartograph(args(&[
        "run",
        spec,
        "--target",
        &target,
        "--max-requests",
        REQUESTS,
        "--seed",
        SEED,
        "--no-replay",
        "--out",
        out.path().to_str().unwrap(),
    ]))
    .await;
    assert!(
        matches!(result.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    server.shutdown().await;
    // The demo's answers name the port it runs on (Location headers are
    // relative, but be safe): the pin must not depend on it.
    requests(out.path()).replace(&server_port_free(&target), "http://127.0.0.1:PORT")
}

fn server_port_free(target: &str) -> String {
    let u = url::Url::parse(target).unwrap();
    format!("http://127.0.0.1:{}", u.port().unwrap())
}

/// Compares `got` with the pin `name`, or rewrites the pin when asked to.
fn check(name: &str, got: &str) {
    support::golden::check(
        &pin_file(name),
        got,
        "the run sent other requests than pinned",
        module_path!(),
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_seeded_rest_run_sends_the_pinned_requests() {
    let got = pinned_run("models/demo/openapi.yaml", "").await;
    assert_eq!(got.lines().count(), 300);
    let again = pinned_run("models/demo/openapi.yaml", "").await;
    assert_eq!(got, again, "two runs with one seed differ");
    check("rest-seed11.txt", &got);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_seeded_graphql_run_sends_the_pinned_requests() {
    let got = pinned_run("models/demo/schema.graphql", "/graphql").await;
    assert_eq!(got.lines().count(), 300);
    let again = pinned_run("models/demo/schema.graphql", "/graphql").await;
    assert_eq!(got, again, "two runs with one seed differ");
    check("graphql-seed11.txt", &got);
}
