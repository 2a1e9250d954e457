//! Credentials given on the command line never reach a file the run writes,
//! and hiding them never breaks those files: a short credential that is also
//! a common word (`token test`) leaves `<testsuites>` and jq's `test(…)`
//! alone, and a long one is removed even where the server echoes it.

use crate::support;

use std::path::Path;
use std::process::Command;

use cartograph::testing::DemoServer;
use support::cli::{args, cartograph};

/// Every file under `dir`, recursively.
fn files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn secrets_stay_out_and_the_files_stay_valid() {
    let server = DemoServer::start(0).await.unwrap();
    let base = server.base_url();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().to_str().unwrap();
    let long = "s3cr3t-k3y-0123456789";
    let result = cartograph(args(&[
        "run",
        "models/demo/openapi.yaml",
        "--target",
        &base,
        "--max-requests",
        "1500",
        "--seed",
        "4",
        "-H",
        "Authorization: token test",
        "-H",
        &format!("X-Api-Key: {long}"),
        "--out",
        dir,
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(
        matches!(result.status.code(), Some(0 | 1)),
        "the run worked: {stderr}"
    );
    let written = files(out.path());
    assert!(written.len() > 5, "{written:?}");
    for file in &written {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        assert!(!text.contains("token test"), "{} holds it", file.display());
        assert!(!text.contains(long), "{} holds it", file.display());
    }

    // junit.xml is still XML, with its own element names.
    let junit = std::fs::read_to_string(out.path().join("junit.xml")).unwrap();
    assert!(junit.contains("<testsuites"), "{junit}");
    let mut reader = quick_xml::Reader::from_str(&junit);
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Eof) => break,
            Ok(_) => {}
            Err(e) => panic!("junit.xml does not parse: {e}"),
        }
    }

    // The trace names the credential headers without their values.
    let trace = std::fs::read_to_string(out.path().join("trace.ndjson")).unwrap();
    let first: serde_json::Value = serde_json::from_str(trace.lines().next().unwrap()).unwrap();
    let headers = first["request_headers"].as_array().unwrap();
    assert!(
        headers.contains(&serde_json::json!(["Authorization", "[REDACTED]"])),
        "{headers:?}"
    );

    // Reproducers still read JSON with jq's test(…), and still run.
    let scripts: Vec<_> = written
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "sh"))
        .collect();
    assert!(!scripts.is_empty(), "no reproducer in {written:?}");
    for script in scripts {
        let text = std::fs::read_to_string(script).unwrap();
        assert!(!text.contains("[REDACTED]"), "{}", script.display());
        let syntax = Command::new("bash").arg("-n").arg(script).output().unwrap();
        assert!(syntax.status.success(), "{}", script.display());
    }
    server.shutdown().await;
}
