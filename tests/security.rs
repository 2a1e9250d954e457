//! The security probes on a purpose-built server
//! (`tests/support/security.rs`): every planted weakness is found, with its
//! Web Fuzzing Commons code, and no twin that gets it right raises a
//! security cause; `--read-only` sends no probe that writes; and
//! `wfc-report.json` validates against the schema `webfuzzing-commons`
//! ships (`WFC_REPORT_SCHEMA`, set by `.ci/run`).

use crate::support;

use std::path::Path;

use serde_json::Value;
use support::cli::{args, cartograph, read_report, schema_errors};
use support::security::{SPEC_PATH, SecurityServer};

/// The probes' codes, with their WFC codes.
const PROBES: [(&str, u64); 5] = [
    ("sql_injection", 300),
    ("stored_xss", 301),
    ("ssrf", 302),
    ("mass_assignment", 303),
    ("hidden_endpoint", 310),
];

async fn run(server: &SecurityServer, out: &Path, extra: &[&str]) -> String {
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join(SPEC_PATH);
    let mut list = vec![
        "run",
        spec.to_str().unwrap(),
        "--target",
        &server.base_url,
        "--seed",
        "1",
        "--timeout",
        "2s",
        "--out",
        out.to_str().unwrap(),
    ];
    list.extend_from_slice(extra);
    let result = cartograph(args(&list)).await;
    String::from_utf8_lossy(&result.stderr).into_owned()
}

/// The security causes of a report: (code, operations, wfc, confirmation).
fn security_causes(report: &Value) -> Vec<(String, Vec<String>, Option<u64>, String)> {
    report["causes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| PROBES.iter().any(|(code, _)| c["code"] == *code))
        .map(|c| {
            (
                c["code"].as_str().unwrap().to_string(),
                c["operations"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|o| o.as_str().unwrap().to_string())
                    .collect(),
                c["wfc"].as_u64(),
                c["confirmation"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_planted_weakness_is_found_with_its_wfc_code_and_no_twin_raises_one() {
    let server = SecurityServer::start().await;
    let mut out = tempfile::tempdir().unwrap();
    // SECURITY_KEEP=1 keeps the run's output (its path is printed).
    if std::env::var_os("SECURITY_KEEP").is_some() {
        eprintln!("output kept in {}", out.path().display());
        out.disable_cleanup(true);
    }
    // Under a budget, as a user runs it: the replays leave the probes time.
    let stderr = run(&server, out.path(), &["--budget", "15s"]).await;
    let report = read_report(out.path());
    let causes = security_causes(&report);
    let planted = [
        ("sql_injection", "listNotes"),
        ("stored_xss", "createNote"),
        ("ssrf", "createWebhook"),
        ("mass_assignment", "createNote"),
        ("hidden_endpoint", "DELETE /notes/{id}"),
    ];
    for (code, op) in planted {
        let wfc = PROBES.iter().find(|(c, _)| *c == code).unwrap().1;
        assert!(
            causes.iter().any(|(c, ops, w, confirmation)| c == code
                && ops.iter().any(|o| o == op)
                && *w == Some(wfc)
                && confirmation == "confirmed"),
            "no confirmed {code} (WFC {wfc}) on {op}: {causes:#?}\n{stderr}"
        );
    }
    // Every security cause is a planted one: none on a twin.
    for (code, ops, _, _) in &causes {
        for op in ops {
            assert!(
                planted.contains(&(code.as_str(), op.as_str())),
                "{code} on {op} is no planted weakness: {causes:#?}"
            );
        }
    }
    // Each confirmed finding an answer shows has a reproducer, which shows
    // it on a fresh server (SSRF's evidence reaches the listener: none).
    let faults = report["faults"].as_array().unwrap();
    for (code, op) in planted.iter().filter(|(c, _)| *c != "ssrf") {
        let f = faults
            .iter()
            .find(|f| f["code"] == *code && f["operation"] == *op)
            .unwrap();
        let shell = f["reproducer"]["shell"]
            .as_str()
            .unwrap_or_else(|| panic!("no reproducer for {code} on {op}: {f:#}"));
        let fresh = SecurityServer::start().await;
        let (script, base) = (out.path().join(shell), fresh.base_url.clone());
        let ran = tokio::task::spawn_blocking(move || {
            std::process::Command::new("bash")
                .arg(&script)
                .arg(&base)
                .output()
                .expect("bash runs")
        })
        .await
        .unwrap();
        let err = String::from_utf8_lossy(&ran.stderr);
        assert_eq!(
            ran.status.code(),
            Some(1),
            "{shell} on a fresh server: {err}"
        );
        assert!(err.contains("FAULT SHOWS"), "{shell}: {err}");
    }
    // The SARIF rule carries the WFC code.
    let sarif: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("report.sarif")).unwrap())
            .unwrap();
    let rules = sarif["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    let rule = rules
        .iter()
        .find(|r| r["id"] == "ssrf")
        .expect("the ssrf rule");
    assert_eq!(rule["properties"]["wfc"], 302);
    // wfc-report.json lists them under their catalogue codes, and is valid.
    let wfc: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("wfc-report.json")).unwrap())
            .unwrap();
    let listed: Vec<u64> = wfc["faults"]["foundFaults"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["faultCategories"].as_array().unwrap().iter())
        .filter_map(|c| c["code"].as_u64())
        .collect();
    for (_, code) in PROBES {
        assert!(listed.contains(&code), "WFC {code} missing from {listed:?}");
    }
    validate_wfc(&wfc);
}

/// Validates a WFC report against `$WFC_REPORT_SCHEMA` (the `report.yaml`
/// of the pinned `webfuzzing-commons`), or skips saying why.
fn validate_wfc(wfc: &Value) {
    let Some(path) = std::env::var_os("WFC_REPORT_SCHEMA") else {
        support::skip_for(
            "WFC_REPORT_SCHEMA is not set (.ci/run sets it to the report.yaml of webfuzzing-commons)",
        );
        return;
    };
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", Path::new(&path).display()));
    let schema = cartograph::load::parse_text(&text, Path::new(&path))
        .unwrap_or_else(|e| panic!("{}: {e}", Path::new(&path).display()));
    let validator = jsonschema::validator_for(&schema).expect("the WFC schema compiles");
    let errors = schema_errors(&validator, wfc);
    assert!(
        errors.is_empty(),
        "wfc-report.json breaks the WFC report schema: {errors:#?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn read_only_probes_only_read() {
    let server = SecurityServer::start().await;
    let out = tempfile::tempdir().unwrap();
    let stderr = run(
        &server,
        out.path(),
        &["--read-only", "--max-requests", "800"],
    )
    .await;
    let report = read_report(out.path());
    let causes = security_causes(&report);
    let trace = std::fs::read_to_string(out.path().join("security.ndjson"))
        .unwrap_or_else(|e| panic!("no security.ndjson ({e}): {stderr}"));
    for line in trace.lines() {
        let ex: Value = serde_json::from_str(line).unwrap();
        assert_eq!(
            ex["method"], "GET",
            "a probe that writes under --read-only: {line}"
        );
    }
    // The injection into a read is still found; nothing that needs a write.
    assert!(
        causes
            .iter()
            .any(|(c, ops, _, _)| c == "sql_injection" && ops == &["listNotes"]),
        "{causes:#?}\n{stderr}"
    );
    assert!(
        causes
            .iter()
            .all(|(c, _, _, _)| c == "sql_injection" || c == "hidden_endpoint"),
        "{causes:#?}"
    );
}
