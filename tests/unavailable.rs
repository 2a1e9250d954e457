//! A server briefly unavailable (`support/unavailable.rs`): a 503 with a
//! short `Retry-After` is waited out and the request sent again, and an
//! operation the server later asks to wait on past the budget is set aside
//! with a warning, without making the run one that could not do its work
//! (exit 4): it was tested before. Prefect's run ended in exit 4 for one
//! operation of 188, set aside in its last second.

use std::path::Path;
use std::time::Duration;

use crate::support::cli::{args, cartograph, read_report};
use crate::support::unavailable::{SPEC, Unavailable};

#[tokio::test(flavor = "multi_thread")]
async fn a_few_503s_are_waited_out_or_set_aside_without_failing_the_run() {
    let server = Unavailable::start().await;
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("openapi.yaml");
    std::fs::write(&spec, SPEC).unwrap();
    let out = dir.path().join("out");
    let run = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &server.base_url,
        "--budget",
        "4s",
        "--no-replay",
        "--seed",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&run.stderr);
    // The 503 with `Retry-After: 1` was waited out: the next request came
    // a second later or more.
    let times = server.item_times();
    assert!(
        times.len() >= 4,
        "{} item request(s): {stderr}",
        times.len()
    );
    assert!(
        times[2] - times[1] >= Duration::from_millis(950),
        "the retry came {:?} after the 503",
        times[2] - times[1]
    );
    // The wait past the budget set the operation aside, and says so.
    assert!(
        stderr.contains("Retry-After longer than the run can wait") && stderr.contains("getItem"),
        "{stderr}"
    );
    // It had been tested: the run did its work.
    assert!(matches!(run.status.code(), Some(0 | 1)), "{stderr}");
    let report = read_report(Path::new(&out));
    assert_ne!(report["stop"], "rate_limited", "{stderr}");
}
