//! Faults on the demo API as a user meets them: each planted REST fault
//! reported once by the oracle that fits it, confirmed, with a minimised
//! reproducer that shows it again against a fresh server (as a shell script
//! and through `cartograph replay`), and a regression suite that Hurl runs
//! green against a fresh server. Also the exit statuses and `--fail-on`.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cartograph::testing::{DemoServer, FAULTS_MD};
use serde_json::Value;
use support::cli::{args, cartograph, hurl};

/// A seed under which the search finds all seven REST faults within the cap.
const SEED: &str = "4";
/// The demo gives four fifths to the REST part: 8,000 requests, then 2,000
/// to the GraphQL endpoint.
const REQUESTS: &str = "10000";

/// (id, oracles, operations) of the planted faults in FAULTS.md's table; the
/// first oracle is the one of the API the fault was planted in.
fn planted() -> Vec<(String, Vec<String>, Vec<String>)> {
    let ticked = |cell: &str| -> Vec<String> {
        cell.split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 1)
            .map(|(_, s)| s.to_string())
            .collect()
    };
    FAULTS_MD
        .lines()
        .filter(|l| l.starts_with("| F"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            (cells[0].to_string(), ticked(cells[1]), ticked(cells[2]))
        })
        .collect()
}

/// The longest reproducer accepted per planted fault: the shortest chain
/// that triggers it while creating what it uses (FAULTS.md's chains reuse
/// the seed data, which only a fresh server has).
fn longest(id: &str) -> usize {
    match id {
        "F4" | "F6" => 1,
        "F5" => 5,
        _ => 4,
    }
}

fn run_bash(script: &Path, base: &str) -> Output {
    Command::new("bash")
        .arg(script)
        .arg(base)
        .output()
        .expect("bash runs")
}

#[tokio::test(flavor = "multi_thread")]
async fn planted_faults_are_reported_once_confirmed_and_reproducible() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().to_str().unwrap();
    let result = cartograph(args(&[
        "demo",
        "--max-requests",
        REQUESTS,
        "--seed",
        SEED,
        "--out",
        dir,
        "--events",
        &format!("{dir}/events.ndjson"),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&result.stderr);
    // Every planted fault found: the demo worked, and says so with 0.
    assert_eq!(result.status.code(), Some(0), "{stderr}");
    // One stream of events for both parts, ended by the merged run.
    let events: Vec<Value> = std::fs::read_to_string(out.path().join("events.ndjson"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let finished: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "run_finished")
        .collect();
    assert_eq!(finished.len(), 1, "{events:#?}");
    assert_eq!(events.last().unwrap()["event"], "run_finished");
    // One seed repeats the whole demo, said once; the causes of both parts
    // are listed together in its summary, not once per part on stderr.
    assert_eq!(stderr.matches("cartograph: seed ").count(), 1, "{stderr}");
    assert!(!stderr.contains("  defect/"), "{stderr}");
    assert!(String::from_utf8_lossy(&result.stdout).contains("  defect/high"));
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("report.json")).unwrap())
            .unwrap();
    let faults = report["faults"].as_array().unwrap();
    assert_eq!(finished[0]["requests"], report["requests"]);
    assert_eq!(finished[0]["faults"], faults.len());
    assert_eq!(finished[0]["exit_code"], 0);

    // The REST faults first; F7 and F8 live behind the GraphQL endpoint.
    let all = planted();
    let rest: Vec<(String, String, Vec<String>)> = all
        .iter()
        // GraphQL faults are listed under a root field or a schema
        // location (`Query.book`, `Book.author`), REST ones under an
        // operationId.
        .filter(|(_, _, ops)| !ops[0].contains('.'))
        .map(|(id, oracles, ops)| (id.clone(), oracles[0].clone(), ops.clone()))
        .collect();
    assert_eq!(rest.len(), 12, "{rest:?}");
    for (id, oracle, operations) in &rest {
        let hits: Vec<&Value> = faults
            .iter()
            .filter(|f| {
                f["code"] == *oracle.as_str() && operations.iter().any(|o| f["operation"] == *o)
            })
            .collect();
        assert!(
            !hits.is_empty(),
            "{id} ({oracle}) not reported: {faults:#?}"
        );
        for op in operations {
            let on_op = hits
                .iter()
                .filter(|f| f["operation"] == *op.as_str())
                .count();
            assert!(on_op <= 1, "{id} reported {on_op} times on {op}: {hits:#?}");
        }
        for f in &hits {
            assert_eq!(f["confirmation"], "confirmed", "{id}: {f:#}");
        }
        // At least one reproducer per fault creates what it uses and is no
        // longer than the shortest such chain.
        let good = hits.iter().any(|f| {
            let repro = &f["reproducer"];
            repro["standalone"] == true && repro["steps"].as_array().unwrap().len() <= longest(id)
        });
        assert!(
            good,
            "{id}: no standalone reproducer of at most {} steps: {hits:#?}",
            longest(id)
        );
    }
    // The GraphQL part (2,000 requests) shares the run and the report. F7 is
    // one fault of Book.author, under whichever root field reached it first.
    for (id, oracle) in [("F7", "graphql_null_violation"), ("F8", "stack_trace_leak")] {
        let (_, _, operations) = all.iter().find(|(i, _, _)| i == id).unwrap();
        assert!(
            faults
                .iter()
                .any(|f| f["code"] == oracle && operations.iter().any(|o| f["operation"] == *o)),
            "{id} not reported: {faults:#?}"
        );
    }
    let coverage = &report["schema_coverage"];
    assert_eq!(
        coverage["root_fields_reached"].as_array().unwrap().len(),
        8,
        "{coverage}"
    );
    // Nothing else: the demo's deliberate quirks are not faults.
    for f in faults {
        assert!(
            all.iter().any(
                |(_, oracles, ops)| oracles.iter().any(|o| f["code"] == *o.as_str())
                    && ops.iter().any(|o| f["operation"] == *o)
            ),
            "a fault that is not planted: {f:#}"
        );
    }

    // Every reproducer shows its fault against a fresh server.
    let fresh = DemoServer::start(0).await.unwrap();
    let base = fresh.base_url();
    // GraphQL reproducers take the endpoint, REST ones the base URL. F8's
    // one names a literal id ("abc"), so it is not marked standalone, but it
    // needs no state: it must show on a fresh server too.
    let (scripts, targets): (Vec<PathBuf>, Vec<String>) = faults
        .iter()
        .filter(|f| {
            f["reproducer"]["standalone"] == true
                || (f["code"] == "stack_trace_leak"
                    && f["operation"] == "Query.book"
                    && f["reproducer"].is_object())
        })
        .map(|f| {
            let op = f["operation"].as_str().unwrap();
            let graphql = op.starts_with("Query.") || op.starts_with("Mutation.");
            (
                out.path().join(f["reproducer"]["shell"].as_str().unwrap()),
                if graphql {
                    format!("{base}/graphql")
                } else {
                    base.clone()
                },
            )
        })
        .unzip();
    assert!(
        scripts.len() >= 8,
        "{} standalone reproducers",
        scripts.len()
    );
    for (script, target) in scripts.iter().zip(&targets) {
        let (script, target) = (script.clone(), target.clone());
        let name = script.display().to_string();
        let shown = tokio::task::spawn_blocking(move || run_bash(&script, &target))
            .await
            .unwrap();
        let err = String::from_utf8_lossy(&shown.stderr);
        assert_eq!(shown.status.code(), Some(1), "{name}: {err}");
        assert!(err.contains("FAULT SHOWS"), "{err}");
    }
    // And through `cartograph replay`, from the .sh name.
    let replayed = cartograph(args(&[
        "replay",
        scripts[0].to_str().unwrap(),
        "--target",
        &base,
    ]))
    .await;
    assert_eq!(
        replayed.status.code(),
        Some(1),
        "{}{}",
        String::from_utf8_lossy(&replayed.stdout),
        String::from_utf8_lossy(&replayed.stderr)
    );
    assert!(String::from_utf8_lossy(&replayed.stdout).contains("FAULT SHOWS"));
    fresh.shutdown().await;

    // The regression suite passes against a fresh server.
    let suite: Vec<PathBuf> = std::fs::read_dir(out.path().join("tests"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hurl"))
        .collect();
    assert!(suite.len() >= 15, "{} Hurl files", suite.len());
    let Some(hurl) = hurl() else {
        support::skip_for(
            "hurl is not installed (set HURL or put it on PATH); the suite was written but not run",
        );
        return;
    };
    let fresh = DemoServer::start(0).await.unwrap();
    let mut command = Command::new(hurl);
    command
        .arg("--test")
        .arg("--jobs")
        .arg("1")
        .arg("--variable")
        .arg(format!("base={}", fresh.base_url()))
        .args(&suite);
    let ran = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    fresh.shutdown().await;
    assert!(
        ran.status.success(),
        "hurl --test failed:\n{}\n{}",
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn fail_on_narrows_what_fails_the_run() {
    // `run`, whose exit status is about the faults (the demo's is about
    // finding every planted one).
    let server = DemoServer::start(0).await.unwrap();
    let target = server.base_url();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().to_str().unwrap();
    let base = [
        "run",
        "models/demo/openapi.yaml",
        "--target",
        &target,
        "--max-requests",
        "1500",
        "--seed",
        SEED,
        "--no-replay",
        "--out",
        dir,
    ];
    let all = cartograph(args(&base)).await;
    assert_eq!(
        all.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&all.stderr)
    );
    let mut narrowed = args(&base);
    narrowed.extend(args(&["--fail-on", "non_idempotent,sql_leak"]));
    let some = cartograph(narrowed).await;
    assert_eq!(
        some.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&some.stderr)
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("report.json")).unwrap())
            .unwrap();
    assert!(
        !report["faults"].as_array().unwrap().is_empty(),
        "still reported"
    );

    let mut bad = args(&base);
    bad.extend(args(&["--fail-on", "nonsense"]));
    let bad = cartograph(bad).await;
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("'nonsense' for '--fail-on") && err.contains("server_error"),
        "{err}"
    );
    server.shutdown().await;
}

/// `run` ends its terminal output with the causes, defects first, as the
/// demo's summary does: a person sees what was found without opening a file.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_ends_with_its_causes_defects_first() {
    let demo = DemoServer::start(0).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/demo/openapi.yaml");
    let result = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &demo.base_url(),
        "--max-requests",
        "3000",
        "--seed",
        SEED,
        "--no-replay",
        "--out",
        out.path().to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{stderr}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("report.json")).unwrap())
            .unwrap();
    let causes = report["causes"].as_array().unwrap();
    assert!(!causes.is_empty());
    let lines: Vec<&str> = stderr.lines().collect();
    let summary = lines
        .iter()
        .position(|l| l.contains(" requests in "))
        .unwrap_or_else(|| panic!("no summary line: {stderr}"));
    let listed: Vec<&str> = lines[summary..]
        .iter()
        .copied()
        .filter(|l| l.starts_with("  defect/") || l.starts_with("  conformance/"))
        .collect();
    assert_eq!(listed.len(), causes.len().min(20), "{stderr}");
    // Defects before conformance, as in the report.
    let first_conformance = listed.iter().position(|l| l.starts_with("  conformance/"));
    if let Some(i) = first_conformance {
        assert!(
            listed[i..].iter().all(|l| l.starts_with("  conformance/")),
            "{stderr}"
        );
    }
    for (line, cause) in listed.iter().zip(causes) {
        let title = cause["title"].as_str().unwrap();
        let head: String = title.chars().take(20).collect();
        assert!(line.contains(&head), "{line} vs {title}");
    }
}
