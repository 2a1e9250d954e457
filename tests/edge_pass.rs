//! On a slow service, a seeded 90 s run finds every planted crash (issue
//! 30): integers past 64 bits in a query, a path and a body (one inside the
//! alternative a tagged union takes), a body that is not an object, an
//! object in a string field, a non-string enum value, the description's own
//! example of a nested field, and a well-formed id that names nothing
//! behind a name rule only a refusal states; most of them behind ids only
//! bare listings give, two levels deep. The server
//! (tests/support/slow_edges.rs) answers at most 50 requests a second and
//! has 34 operations, so the budget is a few thousand requests.
//!
//! This test takes about 95 s (the budget, plus start-up and the report).

use crate::support;

use serde_json::Value;
use support::cli::{args, cartograph, read_report};
use support::slow_edges::{self, Crash};

#[tokio::test(flavor = "multi_thread")]
async fn a_seeded_90s_run_finds_every_planted_crash_on_a_slow_service() {
    let (addr, tracker, server) = slow_edges::start().await;
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("tracker.yaml");
    std::fs::write(&spec, slow_edges::SPEC).unwrap();
    let out = dir.path().join("out");
    let run = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &format!("http://{addr}"),
        "--budget",
        "90s",
        "--seed",
        "7",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    server.abort();
    let stderr = String::from_utf8_lossy(&run.stderr);
    let seen = tracker.summary();
    eprintln!("{seen}");
    assert!(
        run.status.code().is_some_and(|c| c <= 1),
        "{:?}\n{stderr}",
        run.status
    );
    let report = read_report(&out);
    let faults = report["faults"].as_array().cloned().unwrap_or_default();
    let server_error_on = |op: &str| {
        faults
            .iter()
            .any(|f| f["code"] == "server_error" && f["operation"] == op)
    };
    let missed: Vec<String> = Crash::ALL
        .iter()
        .filter(|c| !server_error_on(c.operation()))
        .map(|c| {
            format!(
                "{} ({}): the server saw it fire {} times",
                c.operation(),
                c.trigger(),
                tracker.fired(*c)
            )
        })
        .collect();
    // The server answers 500 to nothing else, so a server_error elsewhere
    // would be Cartograph's mistake.
    let planted: Vec<&str> = Crash::ALL.iter().map(|c| c.operation()).collect();
    let stray: Vec<&Value> = faults
        .iter()
        .filter(|f| {
            f["code"] == "server_error"
                && !f["operation"]
                    .as_str()
                    .is_some_and(|op| planted.contains(&op))
        })
        .collect();
    let rate = format!(
        "{} requests reached the server, {} in the report; busiest second {}",
        tracker.total(),
        report["requests"],
        tracker.busiest_second()
    );
    if !missed.is_empty() || !stray.is_empty() {
        // The run's files stay for a look at what was sent.
        let kept = dir.keep();
        panic!(
            "not found: {missed:#?}\nserver errors on no planted crash: {stray:#?}\n\
             {seen}{rate}\nthe run's files: {}\n{stderr}",
            kept.join("out").display()
        );
    }
    // The service was as slow as it says.
    assert!(tracker.busiest_second() <= 60, "{seen}{rate}");
    // Where the budget went: requests per phase, per class of value, the
    // rate measured, and the terminal's line saying it.
    let search = &report["search"];
    eprintln!(
        "phases {} complete {} rate {}\nclasses {}",
        search["phases"],
        search["edge_pass_complete"],
        search["answer_rate"],
        search["edge_classes"]
    );
    let phase = |p: &str| search["phases"][p].as_u64().unwrap_or(0);
    assert!(
        phase("initial") > 0 && phase("edge_pass") > 0 && phase("search") > 0,
        "{search}"
    );
    let huge = &search["edge_classes"]["huge"];
    // listTasks, getTask, updateBoard and listUsers broke on it.
    assert!(
        huge["operations_broken"].as_u64().unwrap_or(0) >= 4,
        "{huge}"
    );
    assert!(huge["inputs"].as_u64().unwrap_or(0) >= 4, "{huge}");
    let measured = search["answer_rate"]["search"].as_f64().unwrap_or(0.0);
    assert!(measured > 5.0 && measured <= 60.0, "{measured}");
    assert!(
        stderr.contains("requests a second; the edge pass"),
        "{stderr}"
    );
}
