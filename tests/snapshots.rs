//! Pinned output: a seeded demo (and a seeded `run`), rendered through every
//! writer, compared word for word with the files under `tests/snapshots/`:
//! JUnit, SARIF, HTML, the overlay, one reproducer of each part, one Hurl
//! file, the demo's summary and its stderr, and a run's terminal lines.
//! What changes from run to run (ports, folders, times, rates) is masked
//! first. A wording change fails here; when it is meant, the switch of
//! every golden file, `UPDATE_GOLDEN=1 cargo test --test integration
//! snapshots::`, rewrites them, and the diff goes in the commit.

use crate::support::golden;

use std::path::{Path, PathBuf};
use std::process::Command;

use cartograph::testing::DemoServer;

fn snapshot_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots")
}

/// `text` with what differs between two runs of the same seed replaced:
/// the output folder, ports, instants, durations and measured rates.
fn masked(text: &str, out: &Path) -> String {
    let rules: &[(&str, &str)] = &[
        (r"127\.0\.0\.1:\d+", "127.0.0.1:PORT"),
        (
            r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?",
            "TIME",
        ),
        (
            r#""(elapsed_ms|elapsed_s|seconds|early|search|replay|took_s)": ?[0-9.e+-]+"#,
            r#""$1": N"#,
        ),
        (
            r#"(name="elapsed_s" value|time|elapsed)="[0-9.]+""#,
            r#"$1="N""#,
        ),
        (r"\b\d+(\.\d+)? ?(s|ms|µs)\b", "N s"),
        (
            r"answered [0-9.]+ requests a second",
            "answered N requests a second",
        ),
    ];
    // The checkout's own path (the overlay extends the demo's description
    // by it) differs between machines and CI's copy of the repository.
    let mut text = text
        .replace(&*out.to_string_lossy(), "OUT")
        .replace(env!("CARGO_MANIFEST_DIR"), "REPO");
    for (pattern, with) in rules {
        text = regex::Regex::new(pattern)
            .unwrap()
            .replace_all(&text, *with)
            .into_owned();
    }
    text
}

/// Compares `text` with the snapshot `name` (or rewrites it under
/// `UPDATE_GOLDEN=1`).
fn check(name: &str, text: &str) {
    golden::check(
        &snapshot_dir().join(name),
        text,
        &format!("the rendered {name} changed"),
        module_path!(),
    );
}

/// The first file, by name, of a folder with the extension `ext`.
fn first(dir: &Path, ext: &str) -> PathBuf {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    files
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no .{ext} in {}", dir.display()))
}

#[test]
fn the_rendered_outputs_are_pinned() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let demo = Command::new(env!("CARGO_BIN_EXE_cartograph"))
        .args(["demo", "--max-requests", "4000", "--seed", "7", "--out"])
        .arg(&out)
        .output()
        .expect("binary runs");
    let stderr = String::from_utf8_lossy(&demo.stderr).into_owned();
    assert!(matches!(demo.status.code(), Some(0 | 1)), "{stderr}");
    let read =
        |p: PathBuf| std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let mut pinned: Vec<(String, String)> = vec![
        (
            "demo.stdout".into(),
            String::from_utf8_lossy(&demo.stdout).into_owned(),
        ),
        ("demo.stderr".into(), stderr),
    ];
    for file in [
        "junit.xml",
        "report.sarif",
        "report.html",
        "spec-fixes.overlay.yaml",
    ] {
        pinned.push((file.into(), read(out.join(file))));
    }
    for (name, path) in [
        ("reproducer.sh", first(&out.join("reproducers"), "sh")),
        (
            "graphql-reproducer.sh",
            first(&out.join("graphql/reproducers"), "sh"),
        ),
        ("suite.hurl", first(&out.join("tests"), "hurl")),
    ] {
        pinned.push((name.into(), read(path)));
    }
    for (name, text) in &pinned {
        let text = if name == "spec-fixes.overlay.yaml" {
            &extends_masked(text, &out)
        } else {
            text
        };
        check(name, &masked(text, &out));
    }
}

/// The overlay with its `extends` checked and masked: how it reaches the
/// demo's description (a relative climb or a file URL) depends on where the
/// checkout and the temporary folder are, so the test checks that it
/// resolves from the overlay's folder to the description, then pins `SPEC`.
fn extends_masked(text: &str, out: &Path) -> String {
    let line = text
        .lines()
        .find(|l| l.starts_with("extends: "))
        .unwrap_or_else(|| panic!("no extends in the overlay:\n{text}"));
    let reference: String = serde_json::from_str(&line["extends: ".len()..]).unwrap();
    let target = match reference.strip_prefix("file://") {
        Some(path) => PathBuf::from(path),
        None => out.join(&reference),
    };
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/demo/openapi.yaml");
    assert_eq!(
        target.canonicalize().ok(),
        spec.canonicalize().ok(),
        "the overlay's extends {reference:?} does not lead from {} to the demo's description",
        out.display()
    );
    text.replace(line, "extends: \"SPEC\"")
}

/// A `run`'s terminal lines against a fresh demo API.
#[tokio::test(flavor = "multi_thread")]
async fn a_runs_terminal_lines_are_pinned() {
    let server = DemoServer::start(0).await.unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/demo/openapi.yaml");
    let mut command = Command::new(env!("CARGO_BIN_EXE_cartograph"));
    command
        .arg("run")
        .arg(&spec)
        .args(["--target", &server.base_url()])
        .args(["--max-requests", "1500", "--seed", "7", "--out"])
        .arg(&out);
    let run = tokio::task::spawn_blocking(move || command.output().expect("binary runs"))
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    let spec_text = spec.to_string_lossy().into_owned();
    let text = masked(&stderr, &out).replace(&spec_text, "SPEC");
    check("run.stderr", &text);
}
