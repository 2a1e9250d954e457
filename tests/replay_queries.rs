//! `cartograph replay-queries` on the fixture log `fixtures/graphql/demo-queries.ndjson`
//! against a fresh demo server, as a user runs it: duplicates counted once, the
//! planted fault F7 reported, schema coverage equal to the figure computed by
//! hand in `fixtures/graphql/README.md`, every request written as a Hurl
//! regression test (run with Hurl when it is installed), and read-only mode
//! skipping the mutations.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cartograph::testing::DemoServer;
use serde_json::Value;
use support::cli::{cartograph, hurl, read_report};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

async fn replay(endpoint: &str, out: &Path, extra: &[&str]) -> Output {
    let log = root().join("fixtures/graphql/demo-queries.ndjson");
    let mut args: Vec<String> = vec![
        "replay-queries".into(),
        log.to_str().unwrap().into(),
        "--target".into(),
        endpoint.into(),
        "--out".into(),
        out.to_str().unwrap().into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    cartograph(args).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_production_log_is_deduplicated_checked_and_measured() {
    let server = DemoServer::start(0).await.unwrap();
    let endpoint = format!("{}/graphql", server.base_url());
    let sdl = root().join("models/demo/schema.graphql");
    let out = tempfile::tempdir().unwrap();
    let run = replay(&endpoint, out.path(), &["--schema", sdl.to_str().unwrap()]).await;
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "faults found: {stderr}");
    let report = read_report(out.path());

    let log = &report["query_log"];
    assert_eq!(log["requests"], 11, "{log}");
    assert_eq!(log["distinct"], 8, "{log}");
    assert_eq!(log["duplicates"], 3, "{log}");
    assert_eq!(log["sent"], 8, "{log}");
    assert_eq!(
        report["requests"].as_u64(),
        Some(8),
        "each distinct request once"
    );

    let faults = report["faults"].as_array().unwrap();
    assert_eq!(faults.len(), 1, "{faults:#?}");
    assert_eq!(
        faults[0]["signature"], "graphql_null_violation:Book.author:200",
        "{faults:#?}"
    );
    assert_eq!(faults[0]["confirmation"], "confirmed");

    let coverage = &report["schema_coverage"];
    assert_eq!(coverage["covered"], 15, "hand-computed: {coverage}");
    assert_eq!(coverage["total"], 20, "{coverage}");
    assert_eq!(coverage["root_fields"], 8, "{coverage}");
    let mut reached: Vec<&str> = coverage["root_fields_reached"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    reached.sort();
    assert_eq!(
        reached,
        [
            "Mutation.createAuthor",
            "Mutation.createBook",
            "Mutation.deleteAuthor",
            "Query.authors",
            "Query.book",
            "Query.order"
        ]
    );

    // One regression test per distinct request, in log order.
    let mut suite: Vec<PathBuf> = std::fs::read_dir(out.path().join("tests"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hurl"))
        .collect();
    suite.sort();
    assert_eq!(suite.len(), 8, "{suite:?}");
    let first = std::fs::read_to_string(&suite[0]).unwrap();
    assert!(first.contains("demo-queries.ndjson:1, 2 times"), "{first}");
    assert!(
        first.contains("jsonpath \"$.errors\" not exists"),
        "{first}"
    );
    match hurl() {
        None => support::skip_for("hurl is not installed (set HURL or put it on PATH)"),
        Some(hurl) => {
            // Against a fresh server, in order: the mutations make what the
            // later queries read, as in the logged session.
            let fresh = DemoServer::start(0).await.unwrap();
            let base = format!("{}/graphql", fresh.base_url());
            let result = tokio::task::spawn_blocking(move || {
                Command::new(hurl)
                    .args(["--test", "--jobs", "1", "--variable"])
                    .arg(format!("base={base}"))
                    .args(&suite)
                    .output()
                    .unwrap()
            })
            .await
            .unwrap();
            assert!(
                result.status.success(),
                "hurl --test failed:\n{}\n{}",
                String::from_utf8_lossy(&result.stdout),
                String::from_utf8_lossy(&result.stderr)
            );
            fresh.shutdown().await;
        }
    }

    // Read-only, schema from introspection: the mutations are skipped, so
    // book 4 never exists and F7 cannot show.
    let fresh = DemoServer::start(0).await.unwrap();
    let endpoint = format!("{}/graphql", fresh.base_url());
    let out = tempfile::tempdir().unwrap();
    let run = replay(&endpoint, out.path(), &["--read-only"]).await;
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("schema from introspection"), "{stderr}");
    let report = read_report(out.path());
    assert_eq!(report["query_log"]["sent"], 5, "{}", report["query_log"]);
    assert_eq!(report["query_log"]["skipped_mutations"], 3);
    assert_eq!(report["requests"].as_u64(), Some(5));
    assert_eq!(report["faults"].as_array().unwrap().len(), 0);
    assert_eq!(report["schema_coverage"]["covered"], 14);
    assert_eq!(report["schema_coverage"]["root_fields"], 4);
    fresh.shutdown().await;
    server.shutdown().await;
}

#[test]
fn an_unreadable_log_is_a_usage_error_that_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("empty.ndjson");
    std::fs::write(&log, "not json\n{\"variables\": {}}\n").unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_cartograph"))
        .args(["replay-queries", log.to_str().unwrap()])
        .args(["--target", "http://127.0.0.1:9/graphql"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("empty.ndjson:1: not JSON"), "{stderr}");
    assert!(
        stderr.contains("empty.ndjson:2: no `query` string"),
        "{stderr}"
    );
    assert!(stderr.contains("no GraphQL request to replay"), "{stderr}");
}
