//! `--reset-command`: a run against a server whose faults need state
//! (`tests/support/stateful.rs`) writes, for each planted fault, a
//! reproducer marked standalone that shows it after a reset, proven so
//! before it was written (`fresh: shows`); no reproducer marked standalone
//! fails to show after a reset, with or without the flag; and the suite
//! passes after one reset. A reset that fails ends the run, naming it.

use crate::support;

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use support::cli::{args, cartograph, hurl, read_report};
use support::stateful::{SIGNED_SPEC_PATH, SPEC_PATH, Stateful};

/// An output folder; `RESET_KEEP=1` keeps it (its path is printed).
fn out_dir() -> tempfile::TempDir {
    let mut dir = tempfile::tempdir().unwrap();
    if std::env::var_os("RESET_KEEP").is_some() {
        eprintln!("output kept in {}", dir.path().display());
        dir.disable_cleanup(true);
    }
    dir
}

/// `POST /__reset` on the server at `base`.
async fn reset(base: &str) {
    reqwest::Client::new()
        .post(format!("{base}/__reset"))
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .expect("the server resets");
}

/// Runs `cartograph run` against `server`, with its reset as
/// `--reset-command` when `with_reset`; the report.
async fn run(server: &Stateful, out: &Path, with_reset: bool) -> Value {
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join(SPEC_PATH);
    let command = format!("curl -sSf -X POST {}/__reset", server.base_url);
    let mut list = vec![
        "run",
        spec.to_str().unwrap(),
        "--target",
        &server.base_url,
        "--max-requests",
        "6000",
        "--seed",
        "3",
        "--out",
        out.to_str().unwrap(),
    ];
    if with_reset {
        list.extend(["--reset-command", &command]);
    }
    let result = cartograph(args(&list)).await;
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{stderr}");
    if std::env::var_os("RESET_KEEP").is_some() {
        eprintln!("{stderr}");
    }
    if with_reset {
        assert!(stderr.contains("proven on a fresh server"), "{stderr}");
    }
    read_report(out)
}

/// Runs every reproducer marked standalone after a reset of `server`: each
/// must show its fault. The number run.
async fn standalone_ones_show(server: &Stateful, out: &Path, report: &Value) -> usize {
    let mut ran = 0;
    for fault in report["faults"].as_array().unwrap() {
        let repro = &fault["reproducer"];
        let Some(shell) = repro["shell"].as_str() else {
            continue;
        };
        if repro["standalone"] != true {
            let why = repro["not_standalone"].as_array().map_or(0, Vec::len);
            assert!(why > 0, "not standalone, and no reason given: {repro:#}");
            continue;
        }
        reset(&server.base_url).await;
        let script = out.join(shell);
        let base = server.base_url.clone();
        let s = script.clone();
        let done = tokio::task::spawn_blocking(move || {
            Command::new("bash").arg(&s).arg(&base).output().unwrap()
        })
        .await
        .unwrap();
        let err = String::from_utf8_lossy(&done.stderr);
        assert_eq!(
            done.status.code(),
            Some(1),
            "{} is marked standalone, yet after a reset: {err}\n{}",
            fault["signature"],
            std::fs::read_to_string(&script).unwrap()
        );
        assert!(err.contains("FAULT SHOWS"), "{err}");
        ran += 1;
    }
    ran
}

#[tokio::test(flavor = "multi_thread")]
async fn with_a_reset_every_planted_fault_has_a_proven_standalone_reproducer() {
    let server = Stateful::start().await;
    let out = out_dir();
    let report = run(&server, out.path(), true).await;
    assert!(server.resets() > 1, "the run never reset the server");
    let faults = report["faults"].as_array().unwrap();
    let proven = |code: &str, ops: &[&str]| {
        faults.iter().find(|f| {
            f["code"] == code
                && ops.contains(&f["operation"].as_str().unwrap_or(""))
                && f["reproducer"]["standalone"] == true
                && f["reproducer"]["fresh"] == "shows"
        })
    };
    for (code, ops) in [
        // A write answered 500 that kept its record, and broke the listing.
        ("server_error", &["listNotes"][..]),
        // Only a closed project shows it.
        ("schema_violation", &["getProject", "updateProject"][..]),
        ("dangling_location", &["createTask"][..]),
        ("use_after_delete", &["deleteProject", "getProject"][..]),
        // A closed project without a task breaks the listing.
        ("server_error", &["listProjects"][..]),
    ] {
        assert!(
            proven(code, ops).is_some(),
            "no proven standalone reproducer of {code} on {ops:?}: {:#}",
            Value::Array(
                faults
                    .iter()
                    .map(|f| serde_json::json!([
                        f["signature"],
                        f["confirmation"],
                        f["reproducer"]["fresh"],
                        f["reproducer"]["not_standalone"]
                    ]))
                    .collect()
            )
        );
    }
    // Every reproducer says what it did on a fresh server, and a script
    // says so in its header.
    for f in faults.iter().filter(|f| f["reproducer"].is_object()) {
        let fresh = f["reproducer"]["fresh"]
            .as_str()
            .unwrap_or_else(|| panic!("no fresh: {f:#}"));
        let text =
            std::fs::read_to_string(out.path().join(f["reproducer"]["shell"].as_str().unwrap()))
                .unwrap();
        assert!(text.contains(&format!("# Fresh: {fresh}.")), "{text}");
        assert_eq!(
            f["reproducer"]["standalone"] == true,
            fresh == "shows",
            "{f:#}"
        );
    }
    let shown = standalone_ones_show(&server, out.path(), &report).await;
    assert!(shown >= 5, "{shown}");

    // The suite passes after one reset, as the files run one after another.
    let Some(hurl) = hurl() else {
        support::skip_for("hurl is not installed (set HURL or put it on PATH)");
        return;
    };
    // In the order `tests/*.hurl` gives them.
    let mut suite: Vec<_> = std::fs::read_dir(out.path().join("tests"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hurl"))
        .collect();
    suite.sort();
    assert!(suite.len() >= 5, "{} Hurl files", suite.len());
    reset(&server.base_url).await;
    let mut command = Command::new(hurl);
    command
        .args(["--test", "--jobs", "1", "--variable"])
        .arg(format!("base={}", server.base_url))
        .args(&suite);
    let ran = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert!(
        ran.status.success(),
        "hurl --test failed after one reset:\n{}\n{}",
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_reset_no_standalone_reproducer_fails_after_one() {
    let server = Stateful::start().await;
    let out = out_dir();
    let report = run(&server, out.path(), false).await;
    assert_eq!(server.resets(), 0);
    for f in report["faults"].as_array().unwrap() {
        assert!(f["reproducer"]["fresh"].is_null(), "{f:#}");
    }
    standalone_ones_show(&server, out.path(), &report).await;
}

/// The 409 of a file parsed twice needs the token of the server's start
/// (signed with a key each start draws, as Airflow's file tokens are): a
/// reproducer that sends the token the run's server gave, and does not
/// fetch it, is not standalone, and says which value it lacks. Airflow's
/// reparse script was marked standalone and did not show after a restart.
#[tokio::test(flavor = "multi_thread")]
async fn a_token_the_server_signed_is_not_a_value_a_script_makes() {
    let server = Stateful::start().await;
    let out = out_dir();
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join(SIGNED_SPEC_PATH);
    let list = [
        "run",
        spec.to_str().unwrap(),
        "--target",
        &server.base_url,
        "--max-requests",
        "600",
        "--seed",
        "3",
        "--out",
        out.path().to_str().unwrap(),
    ];
    let result = cartograph(args(&list)).await;
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{stderr}");
    let report = read_report(out.path());
    let parse = report["faults"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["operation"] == "parseFile" && f["code"] == "undocumented_status")
        .unwrap_or_else(|| panic!("the 409 of parseFile was not found: {report:#}"));
    let repro = &parse["reproducer"];
    if repro["standalone"] != true {
        let why = repro["not_standalone"].to_string();
        assert!(why.contains("file_token"), "{repro:#}");
    }
    standalone_ones_show(&server, out.path(), &report).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_reset_ends_the_run_naming_it() {
    let server = Stateful::start().await;
    let out = out_dir();
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join(SPEC_PATH);
    let result = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &server.base_url,
        "--max-requests",
        "50",
        "--out",
        out.path().to_str().unwrap(),
        "--reset-command",
        "echo 'container not found: shop-db' >&2; exit 7",
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(4), "{stderr}");
    assert!(
        stderr
            .contains("the reset command `echo 'container not found: shop-db' >&2; exit 7` failed"),
        "{stderr}"
    );
    assert!(stderr.contains("container not found: shop-db"), "{stderr}");
    assert!(stderr.contains("exit status: 7"), "{stderr}");
}

/// A reset of a real service takes seconds, and a run under `--budget`
/// proves its reproducers after resets of their own: the search leaves the
/// time for them, and runs each once before shrinking any. With the
/// replays' share alone (a fifth of the budget), and each fault shrunk
/// against resets in turn, the first fault took every reset.
#[tokio::test(flavor = "multi_thread")]
async fn a_slow_reset_still_leaves_time_to_prove_reproducers() {
    let server = Stateful::start().await;
    let out = out_dir();
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join(SPEC_PATH);
    let command = format!("sleep 0.5; curl -sSf -X POST {}/__reset", server.base_url);
    let list = [
        "run",
        spec.to_str().unwrap(),
        "--target",
        &server.base_url,
        "--budget",
        "24s",
        "--seed",
        "1",
        "--reset-command",
        &command,
        "--out",
        out.path().to_str().unwrap(),
    ];
    let result = cartograph(args(&list)).await;
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("of the budget for running reproducers and the suite after resets"),
        "{stderr}"
    );
    // Each fault is first run once on a fresh server, before any is shrunk
    // against resets (a reset per try): most get a verdict there.
    let report = read_report(out.path());
    let proven = report["faults"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["reproducer"]["fresh"].is_string())
        .count();
    assert!(
        proven >= 3,
        "{proven} reproducer(s) run on a fresh server: {stderr}"
    );
}

/// A reset that is quick before the search and slow after it (Jupyter's:
/// 3.6 s at start, 22 s once the run had started kernels) still leaves a
/// suite: one reset, then every file in order, proves the files that ran
/// to their end; what the time left unproven is written apart, with why
/// (never no file at all). The summary says what the resets cost and what
/// budget would have proven everything, and the proven files pass in hurl
/// after one reset.
#[tokio::test(flavor = "multi_thread")]
async fn a_reset_that_slows_down_still_proves_the_suite_and_says_what_resets_cost() {
    let server = Stateful::start().await;
    let out = out_dir();
    let counter = tempfile::tempdir().unwrap();
    let count = counter.path().join("resets");
    let command = format!(
        "n=$(cat '{c}' 2>/dev/null || echo 0); echo $((n+1)) > '{c}'; if [ \"$n\" -gt 0 ]; then sleep 1.5; fi; curl -sSf -X POST {}/__reset",
        server.base_url,
        c = count.display()
    );
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join(SPEC_PATH);
    let list = [
        "run",
        spec.to_str().unwrap(),
        "--target",
        &server.base_url,
        "--budget",
        "30s",
        "--seed",
        "1",
        "--reset-command",
        &command,
        "--out",
        out.path().to_str().unwrap(),
    ];
    let result = cartograph(args(&list)).await;
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.contains("reset(s) of the target"))
        .unwrap_or_else(|| panic!("no line on the resets: {stderr}"));
    // At least the reset's own sleep; no upper bound: a loaded machine
    // makes curl and the shell slow too.
    let slowest: f64 = line
        .split("slowest ")
        .nth(1)
        .and_then(|rest| rest.split('s').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no slowest reset: {line}"));
    assert!(slowest >= 1.5, "{line}");
    assert!(
        line.contains("--budget") || line.contains("every reproducer and suite file was run"),
        "{line}"
    );
    assert!(
        stderr.contains("proven on a fresh server (one reset, then every file in order)"),
        "{stderr}"
    );
    // suite.json says of each file whether a fresh server proved it.
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("suite.json")).unwrap())
            .unwrap();
    assert!(
        doc["fresh"]["resets_s"].as_array().unwrap().len() >= 2,
        "{:#}",
        doc["fresh"]
    );
    let mut proven = 0;
    for t in doc["tests"].as_array().unwrap() {
        let Some(file) = t["hurl"].as_str() else {
            assert!(t["left_out"].is_string(), "{t:#}");
            continue;
        };
        assert!(out.path().join(file).is_file(), "{file}");
        if t["proven"] == true {
            assert!(!file.starts_with("tests/unproven/"), "{t:#}");
            proven += 1;
        } else {
            assert_eq!(t["proven"], false, "{t:#}");
            assert!(file.starts_with("tests/unproven/"), "{t:#}");
            assert!(
                t["unproven"].as_str().is_some_and(|w| !w.is_empty()),
                "{t:#}"
            );
        }
    }
    assert!(proven >= 3, "{proven} proven suite test(s): {stderr}");
    let Some(hurl) = hurl() else {
        support::skip_for("hurl is not installed (set HURL or put it on PATH)");
        return;
    };
    let mut suite: Vec<_> = std::fs::read_dir(out.path().join("tests"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hurl"))
        .collect();
    suite.sort();
    reset(&server.base_url).await;
    let mut command = Command::new(hurl);
    command
        .args(["--test", "--jobs", "1", "--variable"])
        .arg(format!("base={}", server.base_url))
        .args(&suite);
    let ran = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert!(
        ran.status.success(),
        "hurl --test failed after one reset:\n{}\n{}",
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr)
    );
}
