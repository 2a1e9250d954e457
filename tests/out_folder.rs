//! The output folder against what a repository or a person may have put in
//! it: a symbolic link where a folder or a file of the run goes is refused
//! (exit status 2) and nothing is written or deleted through it; a person's
//! own files (`reproducers/NOTES.md`, `tests/*.hurl`, a project's files when
//! `--out .`) survive the next run, which deletes only what the last run
//! wrote; a file of a run's name that no run wrote refuses the folder; and a
//! second run into a folder another run is writing is refused while the
//! first goes on. Each runs the binary against the demo API.

#![cfg(unix)]

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use cartograph::testing::DemoServer;
use serde_json::Value;

fn spec() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("models/demo/openapi.yaml")
        .to_string_lossy()
        .into_owned()
}

/// `cartograph run` of the demo description against `target` into `out`,
/// from `cwd`, capped at `requests`.
fn command(cwd: &Path, target: &str, out: &str, requests: &str, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cartograph"));
    c.current_dir(cwd)
        .args(["run", &spec(), "--target", target, "--seed", "7"])
        .args(["--max-requests", requests, "--out", out])
        .args(extra);
    c
}

async fn run(cwd: &Path, target: &str, out: &str, extra: &[&str]) -> Output {
    run_capped(cwd, target, out, "300", extra).await
}

async fn run_capped(cwd: &Path, target: &str, out: &str, requests: &str, extra: &[&str]) -> Output {
    let mut c = command(cwd, target, out, requests, extra);
    tokio::task::spawn_blocking(move || c.output().expect("binary runs"))
        .await
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every file under `dir` (links not followed) with its content.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let path = e.unwrap().path();
            let m = std::fs::symlink_metadata(&path).unwrap();
            if m.is_dir() {
                todo.push(path);
            } else {
                files.insert(path.clone(), std::fs::read(&path).unwrap_or_default());
            }
        }
    }
    files
}

/// A folder outside `--out` with files that must stay as they are.
fn elsewhere(root: &Path, name: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("keep.sh"), "#!/bin/sh\necho mine\n").unwrap();
    std::fs::write(dir.join("keep.hurl"), "GET http://example.invalid/\n").unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn linked_folders_in_out_are_refused_and_nothing_goes_through_them() {
    let demo = DemoServer::start(0).await.unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (elsewhere(tmp.path(), "a"), elsewhere(tmp.path(), "b"));
    let before = snapshot(tmp.path());
    let out = tmp.path().join("out");
    std::fs::create_dir(&out).unwrap();
    symlink(&a, out.join("reproducers")).unwrap();
    symlink(&b, out.join("tests")).unwrap();
    let o = run(tmp.path(), &demo.base_url(), "out", &[]).await;
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("out/reproducers is a symbolic link"), "{err}");
    assert!(err.contains("out/tests is a symbolic link"), "{err}");
    // Not one request was sent: the folder is refused before the run.
    assert!(!out.join("trace.ndjson").exists());
    let mut after = snapshot(tmp.path());
    after.retain(|p, _| !p.starts_with(&out));
    assert_eq!(before, after, "files outside --out changed");

    // The demo's GraphQL part writes in OUT/graphql: a link there is refused.
    let demo_out = tmp.path().join("demo-out");
    std::fs::create_dir(&demo_out).unwrap();
    symlink(&a, demo_out.join("graphql")).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_cartograph"))
        .args(["demo", "--max-requests", "50", "--out"])
        .arg(&demo_out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("graphql is a symbolic link"),
        "{}",
        stderr(&o)
    );
    let mut after = snapshot(tmp.path());
    after.retain(|p, _| !p.starts_with(&out) && !p.starts_with(&demo_out));
    assert_eq!(before, after, "files outside --out changed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn linked_files_in_out_are_refused_and_their_targets_kept() {
    let demo = DemoServer::start(0).await.unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let victim = tmp.path().join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    for name in ["report.json", "trace.ndjson", "events.ndjson"] {
        let out = tmp.path().join(format!("out-{name}"));
        std::fs::create_dir(&out).unwrap();
        symlink(&victim, out.join(name)).unwrap();
        let out = out.to_string_lossy().into_owned();
        let events = format!("{out}/events.ndjson");
        let o = run(tmp.path(), &demo.base_url(), &out, &["--events", &events]).await;
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(name), "{name}: {err}");
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "precious",
            "{name}"
        );
    }
    // A dangling link is no different.
    let out = tmp.path().join("out-dangling");
    std::fs::create_dir(&out).unwrap();
    symlink(tmp.path().join("made-by-the-run"), out.join("report.json")).unwrap();
    let o = run(tmp.path(), &demo.base_url(), "out-dangling", &[]).await;
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!tmp.path().join("made-by-the-run").exists());

    // --out itself may be a link: the folder it names is written.
    let real = tmp.path().join("real");
    std::fs::create_dir(&real).unwrap();
    symlink(&real, tmp.path().join("linked")).unwrap();
    let o = run(tmp.path(), &demo.base_url(), "linked", &[]).await;
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    assert!(real.join("report.json").is_file());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persons_files_survive_the_next_run_and_the_last_runs_do_not() {
    let demo = DemoServer::start(0).await.unwrap();
    // A project whose root is --out: its own suite and notes stay.
    let project = tempfile::tempdir().unwrap();
    let root = project.path();
    std::fs::create_dir_all(root.join("tests")).unwrap();
    std::fs::create_dir_all(root.join("reproducers")).unwrap();
    std::fs::write(root.join("tests/api.hurl"), "GET {{base}}/books\n").unwrap();
    std::fs::write(root.join("reproducers/NOTES.md"), "# what we learnt\n").unwrap();
    std::fs::write(root.join("README.md"), "# project\n").unwrap();
    // And files of the very names the suite's first file could take.
    let api = cartograph::load::load_text(
        cartograph::testing::OPENAPI_YAML,
        Path::new("models/demo/openapi.yaml"),
    )
    .unwrap()
    .api;
    for op in &api.operations {
        let name = format!("tests/001-{}.hurl", op.name);
        std::fs::write(root.join(name), "# ours\n").unwrap();
    }
    let own = snapshot(root);

    let o = run_capped(root, &demo.base_url(), ".", "1200", &[]).await;
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    for (path, content) in &own {
        assert_eq!(
            snapshot(root).get(path),
            Some(content),
            "{}",
            path.display()
        );
    }
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("report.json")).unwrap()).unwrap();
    let reproducer = report["faults"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|f| f["reproducer"]["shell"].as_str())
        .expect("a confirmed fault with a reproducer")
        .to_string();
    assert!(root.join(&reproducer).is_file());
    // The suite's files are where suite.json says, the first beside the
    // person's file of its name.
    let suite: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("suite.json")).unwrap()).unwrap();
    let hurls: Vec<&str> = suite["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["hurl"].as_str())
        .collect();
    assert!(hurls.len() > 1, "the run wrote a suite: {hurls:?}");
    for h in &hurls {
        assert!(root.join(h).is_file(), "{h}");
    }
    assert!(
        hurls
            .iter()
            .any(|h| h.starts_with("tests/001-") && h.ends_with("-2.hurl")),
        "{hurls:?}"
    );

    // A file the last run wrote that the next one will not is gone after it.
    let stale = root.join("reproducers/99-stale.sh");
    std::fs::write(&stale, "echo stale\n").unwrap();
    let manifest = root.join(".cartograph-files");
    let mut listed = std::fs::read_to_string(&manifest).unwrap();
    listed.push_str("reproducers/99-stale.sh\n");
    std::fs::write(&manifest, listed).unwrap();

    let o = run_capped(root, &demo.base_url(), ".", "900", &[]).await;
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    let second = snapshot(root);
    for (path, content) in &own {
        assert_eq!(
            second.get(path),
            Some(content),
            "{} changed",
            path.display()
        );
    }
    assert!(!stale.exists(), "the last run's file was left");
    // What the folder holds now is the person's and this run's, each listed.
    let listed = std::fs::read_to_string(&manifest).unwrap();
    for path in second.keys() {
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if own.contains_key(path) || rel == ".cartograph-files" {
            continue;
        }
        assert!(
            listed.lines().any(|l| l == rel),
            "{rel} is not in the manifest:\n{listed}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_of_a_runs_name_that_no_run_wrote_refuses_the_folder() {
    let demo = DemoServer::start(0).await.unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    std::fs::create_dir_all(out.join("tests")).unwrap();
    std::fs::write(out.join("report.json"), "{\"mine\": true}\n").unwrap();
    let o = run(tmp.path(), &demo.base_url(), "out", &[]).await;
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("out/report.json is not a file a Cartograph run wrote"),
        "{err}"
    );
    assert!(err.contains("choose another --out"), "{err}");
    assert_eq!(
        std::fs::read_to_string(out.join("report.json")).unwrap(),
        "{\"mine\": true}\n"
    );
    // A folder there is no file of a run either: refused before the run.
    let other = tmp.path().join("other");
    std::fs::create_dir_all(other.join("report.json")).unwrap();
    std::fs::write(other.join("report.json/kept"), "mine").unwrap();
    let o = run(tmp.path(), &demo.base_url(), "other", &[]).await;
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!other.join("trace.ndjson").exists());
    assert!(other.join("report.json/kept").is_file());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_run_into_a_busy_folder_is_refused() {
    let demo = DemoServer::start(0).await.unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let target = demo.base_url();
    let first = command(tmp.path(), &target, "out", "1000000", &["--budget", "8s"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The trace is begun once the folder is held.
    let trace = tmp.path().join("out/trace.ndjson");
    let start = Instant::now();
    while !trace.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the first run never began"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let o = run_capped(tmp.path(), &target, "out", "20", &[]).await;
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("another Cartograph run (process {})", first.id())),
        "{err}"
    );
    let done = tokio::task::spawn_blocking(move || first.wait_with_output().unwrap())
        .await
        .unwrap();
    assert!(
        matches!(done.status.code(), Some(0 | 1)),
        "{}",
        stderr(&done)
    );
    // The first run's trace is its own: whole lines, each exchange once.
    let text = std::fs::read_to_string(&trace).unwrap();
    let mut seqs = std::collections::BTreeSet::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(seqs.insert(v["seq"].as_u64().unwrap()), "seq twice: {line}");
    }
    assert!(seqs.len() > 20, "{} exchanges", seqs.len());
    // Released at its end: the next run goes.
    let o = run_capped(tmp.path(), &target, "out", "20", &[]).await;
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
}

/// The exchange logs stop at `--trace-limit`, whole lines, and the run says
/// how many exchanges it left out; the faults are judged as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_trace_stops_at_its_limit_and_says_what_it_left_out() {
    let demo = DemoServer::start(0).await.unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let o = run_capped(
        tmp.path(),
        &demo.base_url(),
        "out",
        "2000",
        &["--no-replay", "--trace-limit", "64k"],
    )
    .await;
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let trace = std::fs::read_to_string(tmp.path().join("out/trace.ndjson")).unwrap();
    assert!(trace.len() <= 64 * 1024, "{} bytes", trace.len());
    for line in trace.lines() {
        serde_json::from_str::<Value>(line).expect("whole JSON lines");
    }
    let kept = trace.lines().count();
    assert!(kept > 0);
    let note = err
        .lines()
        .find(|l| l.contains("trace.ndjson holds the first"))
        .unwrap_or_else(|| panic!("no note of the limit: {err}"));
    assert!(
        note.contains(&format!("first {kept} exchange(s)")),
        "{note}"
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join("out/report.json")).unwrap())
            .unwrap();
    assert!(report["faults"].as_array().is_some_and(|f| !f.is_empty()));
    // `0` keeps every exchange.
    let o = run_capped(
        tmp.path(),
        &demo.base_url(),
        "all",
        "2000",
        &["--no-replay", "--trace-limit", "0"],
    )
    .await;
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!err.contains("holds the first"), "{err}");
    let all = std::fs::read_to_string(tmp.path().join("all/trace.ndjson")).unwrap();
    assert!(all.lines().count() > kept, "{} lines", all.lines().count());
}
