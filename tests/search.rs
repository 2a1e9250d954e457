//! The search as a user runs it against the demo API: within a fixed request
//! budget and seed, every operation answered 2xx, the planted faults that need
//! a chain of calls found, the graph refined as the Morest paper describes,
//! and `--no-graph` runs without it.

use crate::support;

use std::path::Path;
use std::process::Output;

use serde_json::Value;
use support::cli::cartograph;

/// The seed the pinned run uses; any seed does most of this, this one all of it.
const SEED: &str = "3";

fn spec() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("models/demo/openapi.yaml")
        .to_string_lossy()
        .into_owned()
}

fn read(dir: &Path, name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap()
}

async fn run(target: &str, out: &Path, extra: &[&str]) -> Output {
    let mut args: Vec<String> = vec![
        "run".into(),
        spec(),
        "--target".into(),
        target.into(),
        "--seed".into(),
        SEED.into(),
        "--max-requests".into(),
        "3000".into(),
        "--out".into(),
        out.to_string_lossy().into_owned(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    cartograph(args).await
}

fn edge<'a>(g: &'a Value, id: &str) -> Option<&'a Value> {
    g["edges"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn within_3000_requests_every_operation_succeeds_and_chained_faults_are_found() {
    let demo = cartograph::testing::DemoServer::start(0).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let result = run(&demo.base_url(), out.path(), &[]).await;
    assert_eq!(result.status.code(), Some(1), "faults found exit 1");
    let report = read(out.path(), "report.json");
    assert_eq!(report["requests"], 3000);
    for op in report["operations"].as_array().unwrap() {
        assert!(
            op["status_counts"]
                .as_object()
                .unwrap()
                .keys()
                .any(|k| k.starts_with('2')),
            "{} never answered 2xx: {}",
            op["operation"],
            op["status_counts"]
        );
    }
    let signatures: Vec<&str> = report["faults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["signature"].as_str().unwrap())
        .collect();
    // F1: create author → create book → PATCH stock to 0 → order it.
    assert!(
        signatures.contains(&"server_error:placeOrder:500"),
        "{signatures:?}"
    );
    // F5: place an order, cancel it, cancel it again.
    assert!(
        signatures.contains(&"server_error:cancelOrder:500"),
        "{signatures:?}"
    );
    // The F1 witness really is the chain: the order's book was patched to stock 0.
    let trace: Vec<Value> = std::fs::read_to_string(out.path().join("trace.ndjson"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let f1 = trace
        .iter()
        .position(|l| l["operation"] == "placeOrder" && l["status"] == 500)
        .unwrap();
    let book: Value = serde_json::from_str(trace[f1]["request_body"].as_str().unwrap()).unwrap();
    let patched = trace[..f1].iter().any(|l| {
        l["operation"] == "updateBook"
            && l["status"] == 200
            && l["path"]
                .as_str()
                .unwrap()
                .ends_with(&format!("/books/{}", book["bookId"]))
            && l["request_body"].as_str().unwrap().contains("\"stock\":0")
    });
    assert!(
        patched,
        "no PATCH to stock 0 of book {} before the 500",
        book["bookId"]
    );
    // The archive is the final suite, and keeps a test for each fault. (Its
    // shortest witness may rely on state earlier tests left behind: a lone
    // order for a book patched before; replaying against a fresh server is
    // the reproducer's job.)
    let suite = read(out.path(), "suite.json");
    let tests = suite["tests"].as_array().unwrap();
    assert!(tests.len() > 10, "{}", tests.len());
    for fault in [
        "fault:server_error:placeOrder:500",
        "fault:server_error:cancelOrder:500",
    ] {
        assert!(
            tests
                .iter()
                .any(|t| t["covers"].as_array().unwrap().iter().any(|c| c == fault)),
            "no test covers {fault}"
        );
    }
    // The search says what it did.
    let search = &report["search"];
    assert!(search["covered"].as_u64().unwrap() > 40, "{search}");
    assert!(search["graph_sequences"].as_u64().unwrap() > 0, "{search}");
    assert!(
        search["covered_by_kind"]["edge"].as_u64().unwrap() > 5,
        "{search}"
    );

    // The refined graph (Morest 3.3).
    let g = read(out.path(), "graph-final.json");
    let initial = read(out.path(), "graph-initial.json");
    // createReview answers a body the description omits: an observed produces edge.
    let id = "produces:op:createReview->schema:Review";
    assert!(edge(&initial, id).is_none());
    assert_eq!(
        edge(&g, id).expect("observed produces")["origin"],
        "observed"
    );
    // Orders hold book ids: an observed equivalence Order.bookId = Book.id.
    let e = edge(&g, "equivalent:schema:Book->schema:Order").expect("Book–Order equivalence");
    assert_eq!(e["state"], "active");
    assert!(
        e["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["source"] == "id"
                && p["target"] == "bookId"
                && p["rule"] == "observed-value"),
        "{e}"
    );
    assert!(!e["evidence"].as_array().unwrap().is_empty(), "{e}");
    // Order.status and Book.status share a name, never a meaning.
    for e in g["edges"].as_array().unwrap() {
        if e["kind"] != "equivalent" || e["state"] != "active" {
            continue;
        }
        let ends = [e["source"].as_str().unwrap(), e["target"].as_str().unwrap()];
        if ends.contains(&"schema:Order") && ends.contains(&"schema:Book") {
            assert!(
                !e["pairs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|p| p["source"] == "status" && p["target"] == "status"),
                "{e}"
            );
        }
    }
    demo.shutdown().await;
}

/// Whether two properties' names say they may hold the same values: the
/// same name, or a reference named after the other schema's `id`
/// (`Book.authorId` and `Author.id`).
fn names_relate(a_schema: &str, a_prop: &str, b_schema: &str, b_prop: &str) -> bool {
    let refers = |prop: &str, schema: &str, other: &str| {
        other == "id" && prop.to_lowercase() == format!("{}id", schema.to_lowercase())
    };
    a_prop == b_prop || refers(a_prop, b_schema, b_prop) || refers(b_prop, a_schema, a_prop)
}

/// Runs the search on a fresh demo server; the report and the final graph.
async fn fresh_run(seed: &str, requests: &str) -> (Value, Value) {
    let demo = cartograph::testing::DemoServer::start(0).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let args: Vec<String> = vec![
        "run".into(),
        spec(),
        "--target".into(),
        demo.base_url(),
        "--seed".into(),
        seed.into(),
        "--max-requests".into(),
        requests.into(),
        "--no-replay".into(),
        "--out".into(),
        out.path().to_string_lossy().into_owned(),
    ];
    let result = cartograph(args).await;
    assert_eq!(
        result.status.code(),
        Some(1),
        "seed {seed}: faults found exit 1"
    );
    demo.shutdown().await;
    (
        read(out.path(), "report.json"),
        read(out.path(), "graph-final.json"),
    )
}

/// Exercised links over all links of `graph_coverage`, after checking that
/// its list agrees with its counts.
fn link_share(report: &Value) -> f64 {
    let c = &report["graph_coverage"];
    let (links, exercised) = (
        c["links"].as_u64().unwrap(),
        c["links_exercised"].as_u64().unwrap(),
    );
    assert!(links >= 20, "{c}");
    let listed = c["edges"].as_array().unwrap();
    assert_eq!(listed.len() as u64, links);
    assert_eq!(
        listed.iter().filter(|l| l["exercised"] == true).count() as u64,
        exercised
    );
    assert!(listed.iter().all(|l| {
        let (flows, successes) = (
            l["flows"].as_u64().unwrap(),
            l["successes"].as_u64().unwrap(),
        );
        l["exercised"] == (successes > 0) && successes <= flows
    }));
    exercised as f64 / links as f64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_several_seeds_no_coincidence_is_an_active_equivalence_and_links_carry_values() {
    for seed in ["1", "3", "5", "7"] {
        let (report, g) = fresh_run(seed, "3000").await;
        for e in g["edges"].as_array().unwrap() {
            if e["kind"] != "equivalent" || e["origin"] != "observed" {
                continue;
            }
            let (a, b) = (
                e["source"].as_str().unwrap().trim_start_matches("schema:"),
                e["target"].as_str().unwrap().trim_start_matches("schema:"),
            );
            for p in e["pairs"].as_array().unwrap() {
                if p["rule"] != "observed-value" {
                    continue;
                }
                assert!(p["values"].as_u64().unwrap() >= 4, "seed {seed}: {e}");
                let (pa, pb) = (p["source"].as_str().unwrap(), p["target"].as_str().unwrap());
                if e["state"] == "active" && p["candidate"] != true {
                    assert!(
                        names_relate(a, pa, b, pb),
                        "seed {seed}: {a}.{pa} = {b}.{pb} is active on coincidence: {e}"
                    );
                }
            }
        }
        // Links learnt late (bindings an equivalence adds) get few tries in
        // 3,000 requests; the share varies by two or three links between
        // seeds (0.64 to 0.82 over these four).
        let share = link_share(&report);
        assert!(share >= 0.6, "seed {seed}: {share}");
    }
    // With a longer run, four links in five carried a value the consumer
    // then accepted.
    let (report, _) = fresh_run("2", "20000").await;
    let share = link_share(&report);
    assert!(share >= 0.8, "{share}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_graph_runs_without_the_graph_and_never_changes_it() {
    let demo = cartograph::testing::DemoServer::start(0).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let result = run(&demo.base_url(), out.path(), &["--no-graph"]).await;
    assert!(result.status.code().is_some_and(|c| c <= 1), "{result:?}");
    let report = read(out.path(), "report.json");
    assert_eq!(report["settings"]["graph"], false);
    assert_eq!(report["settings"]["feedback"], false);
    assert_eq!(report["search"]["graph_sequences"], 0);
    assert_eq!(report["search"]["sampled"]["graph"], 0);
    // No graph, no edges to exercise.
    assert!(report["search"]["covered_by_kind"].get("edge").is_none());
    assert_eq!(
        std::fs::read_to_string(out.path().join("graph-initial.json")).unwrap(),
        std::fs::read_to_string(out.path().join("graph-final.json")).unwrap()
    );
    demo.shutdown().await;
}
