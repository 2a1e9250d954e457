//! `cartograph run` on the demo's GraphQL endpoint, as a user runs it: from
//! introspection and from the shipped SDL, with a fixed seed: both planted
//! GraphQL faults found and confirmed, every root field answering data, no
//! query of ours rejected by the server, and schema coverage in report.json.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

use cartograph::testing::DemoServer;
use support::cli::{cartograph, hurl, read_report};

#[tokio::test(flavor = "multi_thread")]
async fn the_demo_graphql_endpoint_shows_both_planted_faults() {
    let server = DemoServer::start(0).await.unwrap();
    let endpoint = format!("{}/graphql", server.base_url());
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().to_str().unwrap().to_string();
    let run = cartograph(
        [
            "run",
            "--graphql",
            "--target",
            &endpoint,
            "--max-requests",
            "3000",
            "--seed",
            "3",
            "--out",
            &dir,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
    )
    .await;
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("schema from introspection"), "{stderr}");
    let report = read_report(out.path());
    let faults = report["faults"].as_array().unwrap();
    let has = |code: &str, ops: &[&str]| {
        faults.iter().any(|f| {
            f["code"] == code
                && ops.iter().any(|o| f["operation"] == *o)
                && f["confirmation"] == "confirmed"
        })
    };
    // F7 is one fault of Book.author, under whichever root field reached it.
    let f7 = ["Query.book", "Query.order", "Mutation.placeOrder"];
    assert!(has("graphql_null_violation", &f7), "F7: {faults:#?}");
    assert_eq!(
        faults
            .iter()
            .filter(|f| f["code"] == "graphql_null_violation")
            .count(),
        1,
        "one fault for one broken field: {faults:#?}"
    );
    // F8: the leaked panic, and the crash it shows.
    assert!(has("stack_trace_leak", &["Query.book"]), "F8: {faults:#?}");
    for f in faults {
        let planted = match f["code"].as_str().unwrap() {
            "graphql_null_violation" => f["signature"].as_str().unwrap().contains("Book.author"),
            "stack_trace_leak" | "graphql_internal_error" => f["operation"] == "Query.book",
            _ => false,
        };
        assert!(
            planted,
            "not a planted fault (or a query of ours the server rejected): {f:#}"
        );
    }
    let coverage = &report["schema_coverage"];
    assert_eq!(coverage["root_fields"], 8, "{coverage}");
    assert_eq!(
        coverage["root_fields_reached"].as_array().unwrap().len(),
        8,
        "every root field answers data: {coverage}"
    );
    let (covered, total) = (
        coverage["covered"].as_u64().unwrap(),
        coverage["total"].as_u64().unwrap(),
    );
    assert!(
        covered >= 12 && covered <= total && total == 20,
        "{coverage}"
    );
    let html = std::fs::read_to_string(out.path().join("report.html")).unwrap();
    assert!(
        html.contains(&format!("{covered} of {total} (type, field) pairs")),
        "report.html shows the schema coverage"
    );

    // The same from the shipped SDL, with a reproducer that shows F8 again.
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().to_str().unwrap().to_string();
    let sdl = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/demo/schema.graphql");
    let run = cartograph(
        [
            "run",
            sdl.to_str().unwrap(),
            "--target",
            &endpoint,
            "--max-requests",
            "3000",
            "--seed",
            "3",
            "--out",
            &dir,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
    )
    .await;
    assert_eq!(
        run.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let report = read_report(out.path());
    let leak = report["faults"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "stack_trace_leak")
        .expect("F8")
        .clone();
    let script = out
        .path()
        .join(leak["reproducer"]["shell"].as_str().unwrap());
    let target = endpoint.clone();
    let shown = tokio::task::spawn_blocking(move || {
        Command::new("bash")
            .arg(&script)
            .arg(&target)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(
        shown.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );

    // The regression suite: the archive's tests as Hurl files, ids carried
    // by captures, green against a fresh server.
    let mut suite: Vec<PathBuf> = std::fs::read_dir(out.path().join("tests"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hurl"))
        .collect();
    suite.sort();
    assert!(suite.len() >= 10, "{} Hurl files", suite.len());
    let texts: Vec<String> = suite
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(
        texts
            .iter()
            .any(|t| t.contains("[Captures]") && t.contains("{{")),
        "some test carries an id from one answer to the next"
    );
    match hurl() {
        None => support::skip_for("hurl is not installed (set HURL or put it on PATH)"),
        Some(hurl) => {
            let fresh = DemoServer::start(0).await.unwrap();
            let base = format!("{}/graphql", fresh.base_url());
            let ran = tokio::task::spawn_blocking(move || {
                Command::new(hurl)
                    .args(["--test", "--jobs", "1", "--variable"])
                    .arg(format!("base={base}"))
                    .args(&suite)
                    .output()
                    .unwrap()
            })
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
    }
    server.shutdown().await;
}
