//! Inputs at the edges of what a description allows reach the servers that
//! crash on them, as Schemathesis's do: a value an unanchored `pattern`
//! accepts with text around its match, integers past 64 bits written digit
//! for digit (a path, a query and a JSON body), a multipart body without a
//! boundary, and an explicit GraphQL `null`. And a slow operation keeps to
//! its share of the run, in the search and in the replays, and is reported
//! once. The servers are purpose-built (tests/support/input_edges.rs).

use crate::support;

use std::path::Path;

use serde_json::Value;
use support::cli::{args, cartograph, read_report};
use support::input_edges;

/// The trace's exchanges.
fn trace(out: &Path, file: &str) -> Vec<Value> {
    std::fs::read_to_string(out.join(file))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A request header's value in a trace line.
fn header<'a>(ex: &'a Value, name: &str) -> Option<&'a str> {
    ex["request_headers"]
        .as_array()?
        .iter()
        .find(|h| h[0].as_str().is_some_and(|n| n.eq_ignore_ascii_case(name)))
        .and_then(|h| h[1].as_str())
}

/// Whether `text` holds an integer literal of 20 digits or more.
fn has_huge_integer(text: &str) -> bool {
    let mut run = 0;
    for c in text.chars() {
        run = if c.is_ascii_digit() { run + 1 } else { 0 };
        if run >= 20 {
            return true;
        }
    }
    false
}

fn spec_file(dir: &Path) -> String {
    let spec = dir.join("openapi.yaml");
    std::fs::write(&spec, input_edges::SPEC).unwrap();
    spec.to_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn crashes_at_the_edges_of_the_inputs_are_all_found() {
    let (addr, server) = input_edges::start().await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let run = cartograph(args(&[
        "run",
        &spec_file(dir.path()),
        "--target",
        &format!("http://{addr}"),
        "--exclude",
        "getReport",
        "--max-requests",
        "1500",
        "--seed",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    server.abort();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    let exchanges = trace(&out, "trace.ndjson");
    let crashed = |op: &str, how: &dyn Fn(&Value) -> bool| {
        exchanges
            .iter()
            .any(|e| e["operation"] == op && e["status"] == 500 && how(e))
    };
    let mut missed = Vec::new();
    // Item 4: the pattern accepts `*abc`, its second branch being unanchored.
    if !crashed("listItems", &|e| {
        header(e, "If-None-Match").is_some_and(|v| v.starts_with('*') && v.len() > 1)
    }) {
        missed.push("listItems: an ETag the unanchored `\\*` branch accepts, like *abc");
    }
    // Item 6: past 64 bits, in a path, a query and a JSON body, as digits.
    if !crashed("getCounter", &|e| {
        has_huge_integer(e["path"].as_str().unwrap())
    }) {
        missed.push("getCounter: a 20-digit integer in the path");
    }
    if !crashed("findCounters", &|e| {
        e["path"].as_str().unwrap().contains("at=") && has_huge_integer(e["path"].as_str().unwrap())
    }) {
        missed.push("findCounters: a 20-digit integer in the query");
    }
    if !crashed("createCounter", &|e| {
        e["request_body"]
            .as_str()
            .is_some_and(|b| b.contains("\"value\":") && has_huge_integer(b))
    }) {
        missed.push("createCounter: a 20-digit integer in the JSON body");
    }
    // Item 5: multipart without a boundary.
    if !crashed("upload", &|e| {
        header(e, "content-type") == Some("multipart/form-data")
    }) {
        missed.push("upload: multipart/form-data without a boundary");
    }
    assert!(missed.is_empty(), "not found: {missed:#?}\n{stderr}");

    // Each is a confirmed server_error with a reproducer.
    let report = read_report(&out);
    for op in [
        "listItems",
        "getCounter",
        "findCounters",
        "createCounter",
        "upload",
    ] {
        let fault = report["faults"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["code"] == "server_error" && f["operation"] == op)
            .unwrap_or_else(|| panic!("{op}: {:#}", report["faults"]));
        assert_eq!(fault["confirmation"], "confirmed", "{fault:#}");
    }
    // The broken multipart bodies are sent, and say what they break.
    let broken: Vec<&Value> = exchanges
        .iter()
        .filter(|e| e["breach"]["kind"] == "malformed_multipart")
        .collect();
    assert!(
        broken.iter().any(|e| e["request_body"]
            .as_str()
            .is_some_and(|b| b.contains("Content-Length: "))),
        "a part whose length lies"
    );
    assert!(
        broken.iter().any(|e| e["request_body"]
            .as_str()
            .is_some_and(|b| b.contains("Content-Disposition form-data"))),
        "a malformed part"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_null_graphql_filter_that_crashes_the_server_is_found() {
    let (addr, server) = input_edges::graphql_start().await;
    let dir = tempfile::tempdir().unwrap();
    let sdl = dir.path().join("schema.graphql");
    std::fs::write(&sdl, input_edges::SDL).unwrap();
    let out = dir.path().join("out");
    let run = cartograph(args(&[
        "run",
        sdl.to_str().unwrap(),
        "--target",
        &format!("http://{addr}/graphql"),
        "--max-requests",
        "400",
        "--seed",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    server.abort();
    let stderr = String::from_utf8_lossy(&run.stderr);
    let report = read_report(&out);
    let fault = report["faults"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "server_error" && f["operation"] == "Query.items")
        .unwrap_or_else(|| panic!("{:#}\n{stderr}", report["faults"]));
    assert_eq!(fault["confirmation"], "confirmed", "{fault:#}");
    // Non-null arguments get their null too (and the server refuses it).
    let exchanges = trace(&out, "trace.ndjson");
    let null_for = |arg: &str| {
        exchanges.iter().any(|e| {
            e["request_body"]
                .as_str()
                .and_then(|b| serde_json::from_str::<Value>(b).ok())
                .is_some_and(|b| b["variables"].get(arg) == Some(&Value::Null))
        })
    };
    assert!(null_for("filter") && null_for("id"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_operation_keeps_to_its_share_and_is_reported_once() {
    let (addr, server) = input_edges::start().await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let run = cartograph(args(&[
        "run",
        &spec_file(dir.path()),
        "--target",
        &format!("http://{addr}"),
        "--budget",
        "20s",
        "--seed",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    server.abort();
    let stderr = String::from_utf8_lossy(&run.stderr);
    let report = read_report(&out);
    let search = trace(&out, "trace.ndjson");
    let ms = |e: &Value| e["elapsed_ms"].as_f64().unwrap_or(0.0);
    let total: f64 = search.iter().map(ms).sum();
    let slow: Vec<&Value> = search
        .iter()
        .filter(|e| e["operation"] == "getReport")
        .collect();
    let slow_ms: f64 = slow.iter().map(|e| ms(e)).sum();
    eprintln!(
        "getReport: {} requests, {slow_ms:.0} of {total:.0} ms waiting",
        slow.len()
    );
    // Each promise is checked, and all that broke are said at once.
    let mut broken: Vec<String> = Vec::new();
    // Its share is one sixth of the time spent waiting (six operations);
    // finding it slow costs it at most a few answers more.
    if slow.is_empty() || slow_ms > total * 0.35 {
        broken.push(format!(
            "getReport took {slow_ms:.0} of {total:.0} ms waiting ({} requests)",
            slow.len()
        ));
    }
    // The other operations had their turn.
    for op in [
        "listItems",
        "getCounter",
        "findCounters",
        "createCounter",
        "upload",
    ] {
        let n = search.iter().filter(|e| e["operation"] == op).count();
        if n < 50 {
            broken.push(format!("{op}: only {n} requests"));
        }
    }
    // Reported once, as a warning naming it and its times; not a fault of
    // its own kind.
    let warnings: Vec<&str> = report["warnings"]
        .as_array()
        .map(|w| w.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let about: Vec<&&str> = warnings
        .iter()
        .filter(|w| w.contains("getReport") && w.contains("slowly"))
        .collect();
    if about.len() != 1 || stderr.matches("warning: getReport answered slowly").count() != 1 {
        broken.push(format!("not warned once: {warnings:?}"));
    }
    if let Some(w) = about.first() {
        eprintln!("{w}");
    }
    // The replays went to the other faults first: each is confirmed.
    let faults = report["faults"].as_array().unwrap();
    let others: Vec<&Value> = faults
        .iter()
        .filter(|f| f["code"] == "server_error" && f["operation"] != "getReport")
        .collect();
    if others.is_empty() {
        broken.push("no other server error found".into());
    }
    for f in &others {
        if f["confirmation"] != "confirmed" {
            broken.push(format!("{} {}", f["operation"], f["confirmation"]));
        }
    }
    let replays = trace(&out, "replay.ndjson");
    let replay_total: f64 = replays.iter().map(ms).sum();
    let replay_slow: f64 = replays
        .iter()
        .filter(|e| e["operation"] == "getReport")
        .map(ms)
        .sum();
    eprintln!("replays: getReport {replay_slow:.0} of {replay_total:.0} ms");
    if !replays.iter().any(|e| e["operation"] != "getReport") {
        broken.push("the replays reached nothing but getReport".into());
    }
    assert!(broken.is_empty(), "{broken:#?}\n{stderr}");
}
