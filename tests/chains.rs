//! Ids bound by the property the path takes, and from one chain (issue 30,
//! items 3 and 4): on a server shaped after Prefect's work pools
//! (tests/support/chains.rs), whose creation answers `{id, name}` while its
//! paths take the name, a seeded run names pools by their names, reads a
//! pool's queues under that very pool, and so reaches the crash planted
//! behind `DELETE /pools/{pool_name}/queues/default`; its first listing by
//! `POST` sends no optional filter.

use crate::support;

use support::chains::{self, Counts};
use support::cli::{args, cartograph, read_report};

#[tokio::test(flavor = "multi_thread")]
async fn name_keyed_paths_get_names_from_one_chain() {
    let (addr, counts, server) = chains::start().await;
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("openapi.yaml");
    std::fs::write(&spec, chains::SPEC).unwrap();
    let out = dir.path().join("out");
    let target = format!("http://{addr}");
    let run = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &target,
        "--max-requests",
        "1000",
        "--seed",
        "1",
        "--no-replay",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    server.abort();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.code().is_some_and(|c| c <= 1), "{stderr}");

    let by_name = Counts::get(&counts.pool_by_name);
    let by_id = Counts::get(&counts.pool_by_id);
    let in_pool = Counts::get(&counts.queue_in_pool);
    let elsewhere = Counts::get(&counts.queue_elsewhere);
    let crashed = Counts::get(&counts.default_deleted);
    eprintln!(
        "pools named by name {by_name}, by id {by_id}; queues under their pool {in_pool}, \
         under another {elsewhere}; default queue deleted {crashed}"
    );
    // The server's ids all start so (support::chains::Store::id).
    let trace = std::fs::read_to_string(out.join("trace.ndjson")).unwrap();
    let by_id_lines: Vec<&str> = trace
        .lines()
        .filter(|l| l.contains(r#""path":"/pools/5e1f"#))
        .collect();
    for l in by_id_lines.iter().take(10) {
        eprintln!("by id: {}", &l[..l.len().min(400)]);
    }
    assert!(
        by_name > 4 * by_id,
        "a pool's path took its id ({by_id} times) about as often as its name ({by_name}): {stderr}"
    );
    assert!(
        in_pool > 0,
        "no queue was read under its own pool: {stderr}"
    );
    assert!(
        in_pool > 4 * elsewhere,
        "queues read under another pool ({elsewhere}) about as often as under their own ({in_pool})"
    );
    assert!(crashed > 0, "the default queue was never deleted: {stderr}");
    // The first listing by POST sends no optional filter (a random
    // `name_like` or `offset` lists nothing).
    let first_listing = trace
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|e| e["operation"] == "readPools" && e.get("breach").is_none())
        .expect("a listing of pools");
    assert_eq!(
        first_listing["request_body"].as_str(),
        Some("{}"),
        "the first listing of pools: {first_listing}"
    );
    let report = read_report(&out);
    let causes = report["causes"].as_array().unwrap();
    assert!(
        causes.iter().any(|c| c["code"] == "server_error"
            && c["operations"]
                .as_array()
                .is_some_and(|ops| ops.iter().any(|o| o == "deleteQueue"))),
        "no cause for the 500 of deleteQueue: {causes:#?}"
    );
}
