//! Depth: a seeded run on a server where only what the server says leads on
//! (tests/support/depth.rs: a listing naming the only valid parent id, an
//! optional header refused everywhere, a creation refused with a message
//! naming its rule, an `{id}` two collections deep) reaches every operation
//! with a 2xx, exercises most of the graph's links, and does not keep
//! sending what the server already refused.

use crate::support;

use std::collections::HashMap;

use serde_json::Value;
use support::cli::{args, cartograph, read_report};
use support::depth;

/// Requests of the run: enough for the search to learn, small enough for CI.
const REQUESTS: &str = "2000";

#[tokio::test(flavor = "multi_thread")]
async fn a_run_follows_what_the_server_says() {
    let (addr, store, server) = depth::start().await;
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("openapi.yaml");
    std::fs::write(&spec, depth::SPEC).unwrap();
    let out = dir.path().join("out");
    let target = format!("http://{addr}");
    let run = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &target,
        "--max-requests",
        REQUESTS,
        "--seed",
        "1",
        "--no-replay",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    server.abort();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.code().is_some_and(|c| c <= 1), "{stderr}");
    let report = read_report(&out);

    // Every operation answered 2xx.
    let answered = store.lock().unwrap().answered.clone();
    eprintln!("answered (requests, 2xx) per operation: {answered:?}");
    let missing: Vec<&str> = [
        "listServers",
        "getServer",
        "listZones",
        "createZone",
        "getZone",
        "deleteZone",
        "listBuckets",
        "createBucket",
        "getBucket",
        "listCollections",
        "createCollection",
        "getCollection",
    ]
    .into_iter()
    .filter(|op| answered.get(op).is_none_or(|(_, ok)| *ok == 0))
    .collect();

    // Graph links exercised.
    let coverage = &report["graph_coverage"];
    let links = coverage["links"].as_u64().unwrap();
    let exercised = coverage["links_exercised"].as_u64().unwrap();
    eprintln!("graph links exercised: {exercised} of {links}");
    for e in coverage["edges"].as_array().unwrap() {
        eprintln!("  {}", e);
    }

    // Requests of positive tests refused for a reason the server had
    // already given (the same `reason`), over all requests.
    let trace = std::fs::read_to_string(out.join("trace.ndjson")).unwrap();
    let mut seen: HashMap<String, u64> = HashMap::new();
    let (mut total, mut again) = (0u64, 0u64);
    for line in trace.lines() {
        let ex: Value = serde_json::from_str(line).unwrap();
        total += 1;
        let status = ex["status"].as_u64().unwrap_or(0);
        if !(400..500).contains(&status) || ex.get("breach").is_some() {
            continue;
        }
        let body: Value = ex["response_body"]
            .as_str()
            .and_then(|b| serde_json::from_str(b).ok())
            .unwrap_or(Value::Null);
        let reason = body["reason"].as_str().unwrap_or("other").to_string();
        let n = seen.entry(reason).or_default();
        *n += 1;
        if *n > 1 {
            again += 1;
        }
    }
    let share = again as f64 / total.max(1) as f64;
    eprintln!(
        "refused again: {again} of {total} requests ({:.1}%), by reason {seen:?}",
        share * 100.0
    );

    // What the answers taught is in the graph (valid against its schema),
    // shown by `inspect --graph`, and the rule read from the refusal is in
    // report.json with its message.
    let final_graph: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("graph-final.json")).unwrap())
            .unwrap();
    let graph_schema: Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models/graph.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&graph_schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&final_graph)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "graph-final.json: {errors:#?}");
    let inspect = cartograph(args(&[
        "inspect",
        spec.to_str().unwrap(),
        "--graph",
        out.join("graph-final.json").to_str().unwrap(),
        "--op",
        "getZone",
    ]))
    .await;
    let shown = String::from_utf8_lossy(&inspect.stdout);
    eprintln!("{shown}");
    assert!(
        inspect.status.success(),
        "{}",
        String::from_utf8_lossy(&inspect.stderr)
    );
    let header = shown.split("header X-API-Version").nth(1).unwrap_or("");
    assert!(
        header
            .lines()
            .take(3)
            .any(|l| l.contains("learnt from the answers: left out of positive tests")),
        "the refused header's verdict is not shown: {shown}"
    );
    let learnt = report["search"]["learnt_constraints"].as_array().unwrap();
    assert!(
        learnt.iter().any(|l| l["operation"] == "createZone"
            && l["input"] == "body /name"
            && l["rule"] == "ends with \".\""
            && l["message"] == "name must end with a dot"),
        "{learnt:#?}"
    );

    assert!(
        missing.is_empty(),
        "never answered 2xx: {missing:?}\n{stderr}"
    );
    assert!(
        exercised as f64 >= 0.6 * links as f64 && links > 0,
        "{exercised} of {links} graph links exercised"
    );
    assert!(
        share < 0.2,
        "{again} of {total} requests sent values the server had already refused: {seen:?}"
    );
}
