//! With `--reset-command` and more faults than the replay time can confirm
//! one by one (Prefect: 468 faults of 71 causes, and the whole replay time
//! spent confirming them, nothing proven), each cause's representative is
//! confirmed first, then the suite and those reproducers are proven after
//! resets, and only the time left confirms the other faults
//! (`support/many_faults.rs`). The run says what it did not confirm.

use std::path::Path;

use serde_json::Value;

use crate::support::cli::{args, cartograph, read_report};
use crate::support::many_faults::{CRASH_DELAY, CRASHES, ManyFaults};

#[tokio::test(flavor = "multi_thread")]
async fn each_cause_is_proven_before_its_other_faults_are_confirmed() {
    let server = ManyFaults::start().await;
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("openapi.yaml");
    std::fs::write(&spec, crate::support::many_faults::spec()).unwrap();
    let out = dir.path().join("out");
    // A reset that takes measurable time, as a real service's does.
    let command = format!("sleep 0.3; curl -sSf -X POST {}/__reset", server.base_url);
    let run = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &server.base_url,
        "--budget",
        "20s",
        "--seed",
        "1",
        "--reset-command",
        &command,
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&run.stderr);
    if std::env::var_os("CONFIRM_SHOW").is_some() {
        eprintln!("{stderr}");
    }
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        server.resets() > 1,
        "the run never reset the server: {stderr}"
    );
    let report = read_report(Path::new(&out));
    let faults = report["faults"].as_array().unwrap();
    let causes = report["causes"].as_array().unwrap();
    let summary: Vec<String> = faults
        .iter()
        .map(|f| {
            format!(
                "{} {} {} {}",
                f["cause"], f["operation"], f["confirmation"], f["reproducer"]["fresh"]
            )
        })
        .collect();
    // The premise: more faults than the replays can confirm one after
    // another in their time.
    assert!(
        faults.len() >= CRASHES / 4,
        "{} faults: {summary:#?}\n{stderr}",
        faults.len()
    );
    assert!(causes.len() <= 4, "{summary:#?}");
    let confirmed = faults
        .iter()
        .filter(|f| f["confirmation"] == "confirmed")
        .count();
    assert!(
        confirmed < faults.len(),
        "every fault confirmed: the server's {CRASH_DELAY:?} crashes are too quick for the premise"
    );
    // Every cause of a crash has a reproducer proven on a fresh server.
    for cause in causes.iter().filter(|c| c["code"] == "server_error") {
        let proven = faults.iter().any(|f| {
            f["cause"] == cause["id"]
                && f["confirmation"] == "confirmed"
                && f["reproducer"]["fresh"] == "shows"
        });
        assert!(
            proven,
            "cause {} ({}) has no reproducer proven on a fresh server: {summary:#?}\n{stderr}",
            cause["id"], cause["title"]
        );
    }
    // The suite too was proven after a reset.
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("suite.json")).unwrap()).unwrap();
    let proven = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["proven"] == true)
        .count();
    assert!(
        proven >= 1,
        "no suite file proven: {:#}\n{stderr}",
        doc["tests"]
    );
    // What was not confirmed is said, not hidden.
    let line = stderr
        .lines()
        .find(|l| l.contains("fault(s) confirmed"))
        .unwrap_or_else(|| panic!("no line on the confirmations: {stderr}"));
    assert!(
        line.contains(&format!(
            "{confirmed} of {} fault(s) confirmed",
            faults.len()
        )),
        "{line}"
    );
    assert!(line.contains("each cause's first"), "{line}");
}
