//! Reproducers that tell the truth: a run against a server with its faults
//! on (`tests/support/truthful.rs`) writes reproducers that show each fault
//! on a fresh faulty server when marked standalone (or say why they are
//! not), and say "did not show" on the same server with its faults off;
//! both as shell scripts and through `cartograph replay`. Paths are sent as
//! the description writes them (a trailing slash kept), an integer is not a
//! float, shrinking keeps the input a negative test breached and a GraphQL
//! request's variables, and a null parent is not a null field.

use crate::support;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;
use support::cli::{args, cartograph, hurl, read_report};
use support::truthful::{SCHEMA_PATH, SPEC_PATH, Truthful};

/// An output folder; `TRUTH_KEEP=1` keeps it (its path is printed).
fn out_dir() -> tempfile::TempDir {
    let mut dir = tempfile::tempdir().unwrap();
    if std::env::var_os("TRUTH_KEEP").is_some() {
        eprintln!("output kept in {}", dir.path().display());
        dir.disable_cleanup(true);
    }
    dir
}

fn bash(script: &Path, base: &str) -> Output {
    Command::new("bash")
        .arg(script)
        .arg(base)
        .output()
        .expect("bash runs")
}

/// Runs every reproducer of `report` against a fresh faulty server (those
/// marked standalone must show their fault) and a fresh server with the
/// faults off (none may show), as a script and through `cartograph replay`.
/// `endpoint` is appended to the base URL (GraphQL's `/graphql`); with
/// `stateless`, every reproducer must show its fault on a fresh faulty
/// server (the server keeps no state its faults depend on).
async fn judge_reproducers(dir: &Path, report: &Value, endpoint: &str, stateless: bool) -> usize {
    let mut judged = 0;
    for fault in report["faults"].as_array().unwrap() {
        let repro = &fault["reproducer"];
        let Some(shell) = repro["shell"].as_str() else {
            continue;
        };
        judged += 1;
        let script = dir.join(shell);
        let json = dir.join(repro["json"].as_str().unwrap());
        let name = format!("{} ({})", fault["signature"], script.display());
        let standalone = repro["standalone"] == true;
        if !standalone {
            let why = repro["not_standalone"].as_array().map_or(0, Vec::len)
                + repro["unmade"].as_array().map_or(0, Vec::len);
            assert!(
                why > 0,
                "{name}: not standalone, and no reason given: {repro:#}"
            );
        }
        for faulty in [true, false] {
            if faulty && !standalone && !stateless {
                continue;
            }
            let server = Truthful::start(faulty).await;
            let base = format!("{}{endpoint}", server.base_url);
            let (s, b) = (script.clone(), base.clone());
            let ran = tokio::task::spawn_blocking(move || bash(&s, &b))
                .await
                .unwrap();
            let err = String::from_utf8_lossy(&ran.stderr).into_owned();
            let want = if faulty { 1 } else { 0 };
            assert_eq!(
                ran.status.code(),
                Some(want),
                "{name} against a fresh server with its faults {}: {err}\n{}",
                if faulty { "on" } else { "off" },
                std::fs::read_to_string(&script).unwrap()
            );
            assert_eq!(err.contains("FAULT SHOWS"), faulty, "{name}: {err}");
            drop(server);
            let server = Truthful::start(faulty).await;
            let base = format!("{}{endpoint}", server.base_url);
            let replayed =
                cartograph(args(&["replay", json.to_str().unwrap(), "--target", &base])).await;
            assert_eq!(
                replayed.status.code(),
                Some(want),
                "cartograph replay {name}, faults {}: {}{}",
                if faulty { "on" } else { "off" },
                String::from_utf8_lossy(&replayed.stdout),
                String::from_utf8_lossy(&replayed.stderr)
            );
        }
    }
    judged
}

/// Whether a request (path and body of a reproducer's step) still carries
/// what its breach names (`query limit`, `body /index`).
fn carries(step: &Value) -> bool {
    let input = step["breach"]["input"].as_str().unwrap();
    let path = step["path"].as_str().unwrap();
    if let Some(name) = input.strip_prefix("query ") {
        let query = path.split_once('?').map_or("", |(_, q)| q);
        return url::form_urlencoded::parse(query.as_bytes()).any(|(k, _)| k == name);
    }
    if let Some(pointer) = input.strip_prefix("body ") {
        let body: Value = serde_json::from_str(step["body"].as_str().unwrap()).unwrap();
        return body.pointer(pointer).is_some();
    }
    true
}

#[tokio::test(flavor = "multi_thread")]
async fn rest_reproducers_show_their_fault_and_only_then() {
    let server = Truthful::start(true).await;
    let out = out_dir();
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join(SPEC_PATH);
    let result = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &server.base_url,
        "--max-requests",
        "1500",
        "--seed",
        "1",
        "--out",
        out.path().to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{stderr}");
    drop(server);
    let report = read_report(out.path());
    let faults = report["faults"].as_array().unwrap();
    for (code, op) in [
        ("server_error", "listFlowRuns"),
        ("schema_violation", "getStats"),
        ("invalid_input_accepted", "createEntry"),
        ("invalid_input_accepted", "listItems"),
    ] {
        let f = faults
            .iter()
            .find(|f| f["code"] == code && f["operation"] == op)
            .unwrap_or_else(|| panic!("{code} on {op} not reported: {faults:#?}"));
        assert_eq!(f["confirmation"], "confirmed", "{f:#}");
        assert!(f["reproducer"].is_object(), "{f:#}");
    }
    // An accepted wrong value served back (by the creation, by the listing)
    // is the one invalid_input_accepted fault, not a schema violation.
    let echoed: Vec<&Value> = faults
        .iter()
        .filter(|f| {
            f["code"] == "schema_violation"
                && (f["operation"] == "createEntry" || f["operation"] == "listEntries")
        })
        .collect();
    assert!(echoed.is_empty(), "{echoed:#?}");
    let trace = std::fs::read_to_string(out.path().join("trace.ndjson")).unwrap();
    assert!(
        trace.lines().any(|l| {
            let e: Value = serde_json::from_str(l).unwrap();
            e["operation"] == "listEntries"
                && e["response_body"]
                    .as_str()
                    .is_some_and(|b| b.contains("\"index\":\""))
        }),
        "no listing served a wrong index back: the test proves nothing"
    );
    // Shrinking kept what each negative test broke.
    for f in faults
        .iter()
        .filter(|f| f["code"] == "invalid_input_accepted")
    {
        let json = out.path().join(f["reproducer"]["json"].as_str().unwrap());
        let script: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let last = script["steps"].as_array().unwrap().last().unwrap().clone();
        assert!(
            carries(&last),
            "the reproducer lost what it breaches: {last:#}"
        );
    }
    // The trailing slash is kept.
    let flow = faults
        .iter()
        .find(|f| f["operation"] == "listFlowRuns")
        .unwrap();
    let steps = flow["reproducer"]["steps"].as_array().unwrap();
    assert_eq!(steps.last().unwrap()["path"], "/flow_runs/", "{flow:#}");

    let judged = judge_reproducers(out.path(), &report, "", false).await;
    assert!(judged >= 4, "{judged} reproducers");

    // The regression suite passes on a fresh faulty server: its paths are
    // the description's (a missing slash would get 307s).
    let Some(hurl) = hurl() else {
        support::skip_for("hurl is not installed (set HURL or put it on PATH)");
        return;
    };
    let suite: Vec<_> = std::fs::read_dir(out.path().join("tests"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hurl"))
        .collect();
    let flows = suite
        .iter()
        .filter(|p| std::fs::read_to_string(p).unwrap().contains("/flow_runs"))
        .count();
    assert!(flows > 0, "no Hurl file calls /flow_runs/");
    let fresh = Truthful::start(true).await;
    let mut command = Command::new(hurl);
    command
        .args(["--test", "--jobs", "1", "--variable"])
        .arg(format!("base={}", fresh.base_url))
        .args(&suite);
    let ran = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert!(
        ran.status.success(),
        "hurl --test failed:\n{}\n{}",
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr)
    );
    // A file that asserts the fault's answer fails where the fault is off.
    let asserting: Vec<_> = suite
        .iter()
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            text.contains("/flow_runs/\n") && text.contains("HTTP 500")
        })
        .cloned()
        .collect();
    assert!(!asserting.is_empty(), "no Hurl file asserts the 500");
    let off = Truthful::start(false).await;
    for file in asserting {
        let mut command = Command::new(support::cli::hurl().unwrap());
        command
            .args(["--test", "--variable"])
            .arg(format!("base={}", off.base_url))
            .arg(&file);
        let ran = tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap();
        assert!(
            !ran.status.success(),
            "{} passed without the fault",
            file.display()
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn graphql_reproducers_judge_what_the_oracle_judged() {
    let server = Truthful::start(true).await;
    let out = out_dir();
    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join(SCHEMA_PATH);
    let endpoint = format!("{}/graphql", server.base_url);
    let result = cartograph(args(&[
        "run",
        schema.to_str().unwrap(),
        "--target",
        &endpoint,
        "--max-requests",
        "600",
        "--seed",
        "1",
        "--out",
        out.path().to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{stderr}");
    drop(server);
    let report = read_report(out.path());
    let faults = report["faults"].as_array().unwrap();
    for (code, op) in [
        ("graphql_null_violation", "Query.book"),
        ("server_error", "Query.count"),
    ] {
        let f = faults
            .iter()
            .find(|f| f["code"] == code && f["operation"] == op)
            .unwrap_or_else(|| panic!("{code} on {op} not reported: {faults:#?}"));
        assert_eq!(f["confirmation"], "confirmed", "{f:#}");
        // The request keeps its variables.
        let json = out.path().join(f["reproducer"]["json"].as_str().unwrap());
        let script: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        for step in script["steps"].as_array().unwrap() {
            let body: Value = serde_json::from_str(step["body"].as_str().unwrap()).unwrap();
            if body["query"].as_str().unwrap().contains('$') {
                assert!(body["variables"].is_object(), "variables lost: {step:#}");
            }
        }
    }
    let judged = judge_reproducers(out.path(), &report, "/graphql", true).await;
    assert!(judged >= 2, "{judged} reproducers");
}
