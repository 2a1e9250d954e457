//! Choosing what a run may touch: `--include`/`--exclude` keep every phase
//! (search, follow-ups, confirmation, the suite) away from excluded
//! operations, and `--rate-for` holds per operation from the server's view.
//! A recording proxy in front of the demo API sees every request.

use crate::support;

use std::time::Duration;

use cartograph::testing::DemoServer;
use serde_json::Value;
use support::cli::{args, cartograph, read_report};
use support::recording::{Recording, Seen};

/// The root fields a GraphQL request body selects.
fn root_fields(body: &str) -> Vec<String> {
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        return Vec::new();
    };
    let Some(query) = v["query"].as_str() else {
        return Vec::new();
    };
    let Ok(doc) = apollo_compiler::ast::Document::parse(query, "query.graphql") else {
        return Vec::new();
    };
    use apollo_compiler::ast::{Definition, OperationType, Selection};
    let mut out = Vec::new();
    for d in &doc.definitions {
        let Definition::OperationDefinition(op) = d else {
            continue;
        };
        if op.operation_type == OperationType::Subscription {
            continue;
        }
        for s in &op.selection_set {
            if let Selection::Field(f) = s {
                out.push(f.name.to_string());
            }
        }
    }
    out
}

fn is_route(s: &Seen, method: &str, prefix: &str, segments: usize) -> bool {
    let path = s.path.split('?').next().unwrap_or("");
    s.method == method
        && path.starts_with(prefix)
        && path.split('/').filter(|x| !x.is_empty()).count() == segments
}

/// A run of `spec` against the demo API behind a recording proxy (at
/// `endpoint` under it), with `flags`; asserts it ended as a run does
/// (0 or 1). Returns the demo (to shut down), the proxy, the output folder
/// and stderr.
async fn proxied_run(
    spec: &str,
    endpoint: &str,
    flags: &[&str],
) -> (DemoServer, Recording, tempfile::TempDir, String) {
    let demo = DemoServer::start(0).await.unwrap();
    let proxy = Recording::start(&demo.base_url()).await;
    let out = tempfile::tempdir().unwrap();
    let target = format!("{}{endpoint}", proxy.base_url);
    let mut list = args(&[
        "run",
        spec,
        "--target",
        &target,
        "--out",
        out.path().to_str().unwrap(),
    ]);
    list.extend(args(flags));
    let run = cartograph(list).await;
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(matches!(run.status.code(), Some(0 | 1)), "{stderr}");
    (demo, proxy, out, stderr)
}

#[tokio::test(flavor = "multi_thread")]
async fn excluded_rest_operations_get_no_request_in_any_phase() {
    let (demo, proxy, out, stderr) = proxied_run(
        "models/demo/openapi.yaml",
        "",
        &[
            "--max-requests",
            "2500",
            "--seed",
            "5",
            "--exclude",
            "DELETE /authors/*",
            "--exclude",
            "getBook",
            "--exclude",
            "tag:reviews",
            "--exclude",
            "noSuchOperation*",
        ],
    )
    .await;
    assert!(
        stderr.contains("\"noSuchOperation*\" names no operation"),
        "{stderr}"
    );
    let seen = proxy.seen();
    assert!(seen.len() > 500, "{} requests", seen.len());
    // The run did replay (confirmation and suite), so every phase was seen.
    assert!(out.path().join("tests").is_dir(), "{stderr}");
    for s in &seen {
        assert!(
            !is_route(s, "DELETE", "/authors/", 2),
            "deleteAuthor sent: {s:?}"
        );
        assert!(
            !is_route(s, "DELETE", "/authors/", 4),
            "deleteBook (DELETE /authors/{{a}}/books/{{b}}) sent: {s:?}"
        );
        assert!(!is_route(s, "GET", "/authors/", 4), "getBook sent: {s:?}");
        assert!(
            !s.path.contains("/reviews"),
            "a reviews operation was sent: {s:?}"
        );
    }
    // Follow-ups that would GET a created book are fenced too: createBook
    // still ran.
    assert!(seen.iter().any(|s| is_route(s, "POST", "/authors/", 3)));
    let report = read_report(out.path());
    let settings = &report["settings"];
    let excluded: Vec<&str> = settings["excluded_operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for op in [
        "deleteAuthor",
        "deleteBook",
        "getBook",
        "listReviews",
        "createReview",
    ] {
        assert!(excluded.contains(&op), "{op} not in {excluded:?}");
    }
    assert_eq!(settings["exclude"][0], "DELETE /authors/*");
    assert!(
        report["operations"]
            .as_array()
            .unwrap()
            .iter()
            .all(|o| !excluded.contains(&o["operation"].as_str().unwrap()))
    );
    demo.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn excluded_graphql_root_fields_get_no_request() {
    let (demo, proxy, out, _) = proxied_run(
        "models/demo/schema.graphql",
        "/graphql",
        &[
            "--max-requests",
            "800",
            "--seed",
            "2",
            "--exclude",
            "Mutation.delete*",
            "--exclude",
            "Query.book",
        ],
    )
    .await;
    let seen = proxy.seen();
    assert!(seen.len() > 200, "{} requests", seen.len());
    let mut called = std::collections::BTreeSet::new();
    for s in &seen {
        for f in root_fields(&s.body) {
            called.insert(f);
        }
    }
    assert!(!called.is_empty());
    for f in &called {
        assert!(
            !f.starts_with("delete") && f != "book",
            "{f} was called: {called:?}"
        );
    }
    assert!(
        called.contains("books") || called.contains("authors"),
        "{called:?}"
    );
    let report = read_report(out.path());
    let excluded = report["settings"]["excluded_operations"].to_string();
    assert!(excluded.contains("Query.book\""), "{excluded}");
    assert!(excluded.contains("Mutation.deleteAuthor"), "{excluded}");
    demo.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_selection_that_leaves_nothing_is_an_error() {
    let run = cartograph(args(&[
        "graph",
        "models/demo/openapi.yaml",
        "--include",
        "tag:orders",
        "--exclude",
        "/orders*",
    ]))
    .await;
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("leave no operation"));

    // `graph` and `inspect` show only what is selected.
    let graph = cartograph(args(&[
        "graph",
        "models/demo/openapi.yaml",
        "--include",
        "tag:orders",
    ]))
    .await;
    assert_eq!(graph.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&graph.stdout).unwrap();
    let ops: Vec<String> = doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["kind"] == "operation")
        .map(|n| n["name"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(ops.len(), 4, "{ops:?}");
    assert!(ops.iter().all(|o| o.contains("rder")), "{ops:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rate_for_some_operations_holds_from_the_servers_view() {
    let (demo, proxy, out, _) = proxied_run(
        "models/demo/openapi.yaml",
        "",
        &[
            "--budget",
            "8s",
            "--seed",
            "1",
            "--rate-for",
            "GET /authors*=4/s",
        ],
    )
    .await;
    let seen = proxy.seen();
    let limited: Vec<&Seen> = seen
        .iter()
        .filter(|s| s.method == "GET" && s.path.starts_with("/authors"))
        .collect();
    let others = seen.len() - limited.len();
    // The busiest one-second window of the limited operations.
    let busiest = limited
        .iter()
        .map(|a| {
            limited
                .iter()
                .filter(|b| b.at >= a.at && b.at < a.at + Duration::from_secs(1))
                .count()
        })
        .max()
        .unwrap_or(0);
    assert!(
        limited.len() >= 8,
        "the limited operations still ran: {}",
        limited.len()
    );
    // 4/s with no burst: 4 in any second, one more for timer jitter.
    assert!(busiest <= 5, "{busiest} GET /authors… in one second");
    // The others were not held to it. With one request in flight, each
    // limited request holds the worker for a quarter second, so how many
    // others go depends on how often tests call the limited operations
    // (the edge pass gives every operation its turn, five of the demo's
    // seventeen are GET /authors…): twice as many still shows they did not
    // wait for the limit's tokens.
    assert!(
        others > limited.len() * 2,
        "{others} other requests, {} limited",
        limited.len()
    );
    let report = read_report(out.path());
    assert_eq!(report["settings"]["rate_for"]["GET /authors*"], 4.0);
    demo.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_description_served_over_http_is_fetched_with_its_refs_and_run() {
    let demo = DemoServer::start(0).await.unwrap();
    // A relative server URL, and a schema in a file beside the description.
    let spec = r#"openapi: 3.0.3
info: {title: remote, version: "1"}
servers:
  - url: /
paths:
  /authors:
    get:
      operationId: listAuthors
      responses:
        '200':
          description: the authors
          content:
            application/json:
              schema:
                type: array
                items: {$ref: 'schemas/author.yaml'}
"#;
    let author = "type: object\nproperties:\n  id: {type: integer}\n  name: {type: string}\nrequired: [id, name]\n";
    let proxy = Recording::serving(
        &demo.base_url(),
        vec![
            ("/docs/openapi.yaml".into(), spec.into()),
            ("/docs/schemas/author.yaml".into(), author.into()),
        ],
    )
    .await;
    let out = tempfile::tempdir().unwrap();
    let url = format!("{}/docs/openapi.yaml", proxy.base_url);
    let run = cartograph(args(&[
        "run",
        &url,
        "--max-requests",
        "40",
        "--no-replay",
        "--out",
        out.path().to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("unresolvable"), "{stderr}");
    let seen = proxy.seen();
    assert!(seen.iter().any(|s| s.path == "/docs/schemas/author.yaml"));
    assert!(
        seen.iter()
            .filter(|s| s.path.starts_with("/authors"))
            .count()
            >= 10
    );
    let report = read_report(out.path());
    assert_eq!(report["settings"]["target"], format!("{}/", proxy.base_url));
    assert_eq!(report["settings"]["spec"], url);
    assert_eq!(report["operations_reached"], 1);

    // Without a SPEC, a GraphQL-looking target gets the flag it needs.
    let bare = cartograph(args(&["run", "--target", "http://127.0.0.1:9/graphql"])).await;
    assert_eq!(bare.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bare.stderr).contains("add --graphql"));
    demo.shutdown().await;
}
