//! A GraphQL reproducer checks what its oracle judged, never the status
//! alone: against a server that answers 200 to everything
//! (tests/support/graphql_always200.rs), the reproducer of `Query.book`'s
//! internal error asserts an `errors` entry at `data.book` that says what
//! the oracle read in it; it shows on the faulty server and exits "does not
//! show" on the twin, where the same query answers the book.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support;
use support::cli::{cartograph, read_report};
use support::graphql_always200;

/// The exit code of reproducer `script` run against `base`.
async fn verdict(script: &Path, base: String) -> (Option<i32>, String) {
    let script = script.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let out = Command::new("bash").arg(script).arg(base).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_graphql_error_reproducer_checks_the_errors_path_and_kind() {
    let (faulty, _f) = graphql_always200::start(true).await;
    let (twin, _t) = graphql_always200::start(false).await;
    let out = tempfile::tempdir().unwrap();
    let endpoint = format!("http://{faulty}/graphql");
    let run = cartograph(
        [
            "run",
            "--graphql",
            "--target",
            &endpoint,
            "--max-requests",
            "400",
            "--seed",
            "1",
            "--out",
            out.path().to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
    )
    .await;
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    let report = read_report(out.path());
    let faults = report["faults"].as_array().unwrap();
    let crash = faults
        .iter()
        .find(|f| {
            f["code"] == "graphql_internal_error"
                && f["operation"] == "Query.book"
                && f["confirmation"] == "confirmed"
        })
        .unwrap_or_else(|| panic!("no confirmed internal error of Query.book: {faults:#?}"));
    let json: Value = serde_json::from_str(
        &std::fs::read_to_string(
            out.path()
                .join(crash["reproducer"]["json"].as_str().unwrap()),
        )
        .unwrap(),
    )
    .unwrap();
    // The check names the entry's path and what it says, not a status alone.
    let check = &json["fault"]["check"];
    assert_eq!(check["kind"], "graphql_error", "{check:#}");
    assert_eq!(check["path"], "data.book", "{check:#}");
    assert_eq!(
        check["text"], "cannot read properties of undefined",
        "{check:#}"
    );
    let script = out
        .path()
        .join(crash["reproducer"]["shell"].as_str().unwrap());
    let (code, said) = verdict(&script, format!("http://{faulty}/graphql")).await;
    assert_eq!(
        code,
        Some(1),
        "the fault does not show on the faulty server: {said}"
    );
    let (code, said) = verdict(&script, format!("http://{twin}/graphql")).await;
    assert_eq!(
        code,
        Some(0),
        "on the twin the same query answers the book, yet: {said}"
    );
    assert!(
        said.contains("the fault did not show (last status 200)"),
        "{said}"
    );
}
