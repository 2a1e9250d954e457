//! Standalone means it: a reproducer marked standalone makes every value it
//! uses, also a name an earlier request sent in a body field (a rename),
//! and a 409 conflict's script makes what it conflicts with. Against a
//! server where both are needed (`tests/support/renames.rs`), every
//! reproducer marked standalone shows its fault after a reset, with or
//! without `--reset-command`, and the conflict's reproducer is one.

use crate::support;

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use support::cli::{args, cartograph, read_report};
use support::renames::{Renames, SPEC_PATH};

/// An output folder; `FRESH_KEEP=1` keeps it (its path is printed).
fn out_dir() -> tempfile::TempDir {
    let mut dir = tempfile::tempdir().unwrap();
    if std::env::var_os("FRESH_KEEP").is_some() {
        eprintln!("output kept in {}", dir.path().display());
        dir.disable_cleanup(true);
    }
    dir
}

async fn reset(base: &str) {
    reqwest::Client::new()
        .post(format!("{base}/__reset"))
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .expect("the server resets");
}

/// Runs `cartograph run` against `server` (with its reset when
/// `with_reset`); the report.
async fn run(server: &Renames, out: &Path, with_reset: bool) -> Value {
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join(SPEC_PATH);
    let command = format!("curl -sSf -X POST {}/__reset", server.base_url);
    let mut list = vec![
        "run",
        spec.to_str().unwrap(),
        "--target",
        &server.base_url,
        "--max-requests",
        "3000",
        "--seed",
        "1",
        "--out",
        out.to_str().unwrap(),
    ];
    if with_reset {
        list.extend(["--reset-command", &command]);
    }
    let result = cartograph(args(&list)).await;
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{stderr}");
    if std::env::var_os("FRESH_KEEP").is_some() {
        eprintln!("{stderr}");
    }
    read_report(out)
}

/// Runs every reproducer after a reset; those marked standalone must show
/// their fault. Per signature: (standalone, exit status).
async fn verdicts(server: &Renames, out: &Path, report: &Value) -> Vec<(String, bool, i32)> {
    let mut seen = Vec::new();
    for fault in report["faults"].as_array().unwrap() {
        let repro = &fault["reproducer"];
        let Some(shell) = repro["shell"].as_str() else {
            continue;
        };
        reset(&server.base_url).await;
        let script = out.join(shell);
        let base = server.base_url.clone();
        let s = script.clone();
        let done = tokio::task::spawn_blocking(move || {
            Command::new("bash").arg(&s).arg(&base).output().unwrap()
        })
        .await
        .unwrap();
        let standalone = repro["standalone"] == true;
        let code = done.status.code().unwrap_or(-1);
        if standalone {
            assert_eq!(
                code,
                1,
                "{} is marked standalone, yet after a reset: {}\n{}",
                fault["signature"],
                String::from_utf8_lossy(&done.stderr),
                std::fs::read_to_string(&script).unwrap()
            );
        } else {
            let why = repro["not_standalone"].as_array().map_or(0, Vec::len);
            assert!(why > 0, "not standalone, and no reason given: {repro:#}");
        }
        seen.push((
            fault["signature"].as_str().unwrap().to_string(),
            standalone,
            code,
        ));
    }
    seen
}

fn find<'a>(seen: &'a [(String, bool, i32)], prefix: &str) -> &'a (String, bool, i32) {
    seen.iter()
        .find(|(s, _, _)| s.starts_with(prefix))
        .unwrap_or_else(|| panic!("no reproducer of {prefix}: {seen:?}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_reset_a_standalone_reproducer_makes_what_it_names() {
    let server = Renames::start().await;
    let out = out_dir();
    let report = run(&server, out.path(), false).await;
    assert_eq!(server.resets(), 0);
    let seen = verdicts(&server, out.path(), &report).await;
    // The conflict's script makes its own: it shows after a reset.
    let (_, _, code) = find(&seen, "undocumented_status:createPool:409");
    assert_eq!(*code, 1, "{seen:?}");
    // The renamed file's read: once shrinking (on the run's state, where
    // the file is) cut the rename, the script is not standalone, and its
    // note names the renamed file as the run's.
    let (_, standalone, _) = find(&seen, "invalid_input_accepted:getFile");
    let renamed = report["faults"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| {
            f["signature"]
                .as_str()
                .unwrap()
                .starts_with("invalid_input_accepted:getFile")
        })
        .unwrap();
    let steps = renamed["reproducer"]["steps"].as_array().unwrap();
    let renames = steps.iter().any(|s| s["operation"] == "renameFile");
    if !renames {
        assert!(!standalone, "{renamed:#}");
        let note = renamed["reproducer"]["not_standalone"].to_string();
        assert!(note.contains("from the run"), "{note}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn with_a_reset_both_reproducers_are_proven_standalone() {
    let server = Renames::start().await;
    let out = out_dir();
    let report = run(&server, out.path(), true).await;
    let seen = verdicts(&server, out.path(), &report).await;
    for prefix in [
        "undocumented_status:createPool:409",
        "invalid_input_accepted:getFile",
    ] {
        let (_, standalone, code) = find(&seen, prefix);
        assert!(*standalone && *code == 1, "{prefix}: {seen:?}");
    }
    let renamed = report["faults"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| {
            f["signature"]
                .as_str()
                .unwrap()
                .starts_with("invalid_input_accepted:getFile")
        })
        .unwrap();
    assert_eq!(renamed["reproducer"]["fresh"], "shows", "{renamed:#}");
}
