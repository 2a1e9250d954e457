//! The regression suite a demo run writes, run as a user runs it: every Hurl
//! file, REST and GraphQL, passes against a fresh demo server, with a
//! trailing slash in `base`; `suite.json` says of each archived test which
//! file holds it or why it was left out; and the demo's closing note says
//! how to run it all against `cartograph demo --serve`.

use crate::support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use cartograph::testing::DemoServer;
use serde_json::Value;
use support::cli::{args, cartograph, hurl};

/// Requests like a default demo's minute makes on a loaded machine: more
/// resources than the run remembers the requests of, and listings that
/// hold thousands of what the run made.
const REQUESTS: &str = "60000";
const SEED: &str = "2";

/// The Hurl files under `dir`, by name.
fn hurl_files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".hurl"))
                .collect()
        })
        .unwrap_or_default()
}

/// Checks that each test of `out/suite.json` names its Hurl file or why it
/// was left out, and that the files named are those written; returns how
/// many tests were left out.
fn accounted(out: &Path) -> usize {
    let suite: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("suite.json")).unwrap()).unwrap();
    let tests = suite["tests"].as_array().unwrap();
    let mut named = BTreeSet::new();
    let mut left_out = 0;
    for t in tests {
        match (t["hurl"].as_str(), t["left_out"].as_str()) {
            (Some(file), None) => {
                named.insert(file.trim_start_matches("tests/").to_string());
            }
            (None, Some(why)) => {
                assert!(!why.is_empty(), "a test left out with no reason: {t:#}");
                left_out += 1;
            }
            _ => panic!(
                "a test of {}/suite.json with neither a file nor a reason: {t:#}",
                out.display()
            ),
        }
    }
    assert_eq!(named, hurl_files(&out.join("tests")), "{}", out.display());
    left_out
}

/// Runs `files` with Hurl against `base`, one at a time in order as a user
/// does; panics with Hurl's report when one fails.
async fn passes(hurl: &Path, base: &str, dir: &Path) -> usize {
    let files: Vec<_> = hurl_files(dir).into_iter().map(|f| dir.join(f)).collect();
    let mut command = Command::new(hurl);
    command
        .args(["--test", "--jobs", "1", "--variable"])
        .arg(format!("base={base}"))
        .args(&files);
    let ran = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert!(
        ran.status.success(),
        "hurl --test failed with base={base} in {}:\n{}\n{}",
        dir.display(),
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr)
    );
    files.len()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_demos_suite_passes_on_a_fresh_server() {
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
    ]))
    .await;
    let stdout = String::from_utf8_lossy(&result.stdout);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(
        matches!(result.status.code(), Some(0 | 1)),
        "{stdout}\n{stderr}"
    );
    let rest = hurl_files(&out.path().join("tests")).len();
    let graphql = hurl_files(&out.path().join("graphql/tests")).len();
    assert!(
        rest >= 60 && graphql >= 8,
        "{rest} REST and {graphql} GraphQL Hurl files\n{stderr}"
    );
    if let Some(hurl) = hurl() {
        // Each part against a fresh server, as the closing note says; a
        // trailing slash in base does no harm.
        for (part, endpoint, slash) in [
            ("tests", "", ""),
            ("graphql/tests", "/graphql", "/"),
            ("tests", "", "/"),
        ] {
            let fresh = DemoServer::start(0).await.unwrap();
            let base = format!("{}{endpoint}{slash}", fresh.base_url());
            passes(&hurl, &base, &out.path().join(part)).await;
            fresh.shutdown().await;
        }
    } else {
        support::skip_for(
            "hurl is not installed (set HURL or put it on PATH); the suite was written but not run",
        );
    }
    let left_out = accounted(out.path()) + accounted(&out.path().join("graphql"));
    eprintln!("{rest} REST and {graphql} GraphQL Hurl files, {left_out} tests left out");
    // The printed commands and the files' headers give bases without a
    // trailing slash.
    let first = hurl_files(&out.path().join("tests"))
        .into_iter()
        .next()
        .unwrap();
    let header = std::fs::read_to_string(out.path().join("tests").join(first)).unwrap();
    for text in [stderr.as_ref(), stdout.as_ref(), header.as_str()] {
        for line in text.lines().filter(|l| l.contains("--variable base=")) {
            let base = line
                .split("base=")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap();
            assert!(!base.ends_with('/'), "{line}");
        }
    }
    // The closing note: the demo's own port is gone, so how to run the
    // suites, with their counts, against `demo --serve`.
    assert!(stdout.contains("cartograph demo --serve"), "{stdout}");
    for (n, part) in [(rest, "REST"), (graphql, "GraphQL")] {
        let note = format!("the {part} regression suite: {n} file(s)");
        assert!(stdout.contains(&note), "no \"{note}\" in:\n{stdout}");
    }
}
