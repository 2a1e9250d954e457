//! GraphQL values flow the way they do on real servers: ids only a query
//! lists (`events { nodes { id } }`) reach the root fields that take one
//! (`event(id:)`), a link mutation gets one id from each of its two sources
//! (a creating mutation and a listing query), and `UUID` arguments get
//! well-formed values. The server is purpose-built (tests/support) and
//! counts what reached it.

use crate::support;

use support::cli::{args, cartograph, read_report};
use support::graphql_flow::{self, Counts};

#[tokio::test(flavor = "multi_thread")]
async fn ids_a_query_lists_and_uuids_reach_the_fields_that_take_them() {
    let (addr, counts, server) = graphql_flow::start().await;
    let dir = tempfile::tempdir().unwrap();
    let sdl = dir.path().join("schema.graphql");
    std::fs::write(&sdl, graphql_flow::SDL).unwrap();
    let out = dir.path().join("out");
    let endpoint = format!("http://{addr}/graphql");
    let run = cartograph(args(&[
        "run",
        sdl.to_str().unwrap(),
        "--target",
        &endpoint,
        "--max-requests",
        "1500",
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

    let found = Counts::get(&counts.event_found);
    let linked = Counts::get(&counts.linked);
    let people = Counts::get(&counts.person_found);
    eprintln!(
        "event found {found} of {}, linked {linked}, person found {people}",
        Counts::get(&counts.event_calls)
    );
    assert!(found > 0, "no event(id:) named a listed event: {stderr}");
    assert!(
        linked > 0,
        "addPersonToEvent never got two real ids: {stderr}"
    );
    assert!(
        people > 0,
        "person(id:) never named a created person: {stderr}"
    );

    // Negative tests send malformed values on purpose (a fixed list, and
    // mutants of a negative test keep its value), and a mutation now and
    // then edits a uuid out of shape (still uuid-long); but no UUID argument
    // is short random text, as they all were when custom scalars got it.
    let (sent, malformed) = (
        Counts::get(&counts.uuids_sent),
        Counts::get(&counts.uuids_malformed),
    );
    let short: Vec<String> = counts
        .malformed_values
        .lock()
        .unwrap()
        .iter()
        .filter(|v| v.chars().count() < 30)
        .cloned()
        .collect();
    assert!(sent > 50, "{sent} UUID arguments");
    assert!(
        malformed * 2 < sent && short.len() <= 12,
        "{malformed} of {sent} UUID arguments malformed, {} short ones: {short:?}",
        short.len()
    );

    let report = read_report(&out);
    let exercised: Vec<String> = report["graph_coverage"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["exercised"] == true)
        .map(|e| format!("{} > {}", e["schema"], e["operation"]).replace('"', ""))
        .collect();
    for link in [
        "Event > Query.event",
        "Event > Mutation.addPersonToEvent",
        "Person > Mutation.addPersonToEvent",
    ] {
        assert!(
            exercised.iter().any(|e| e == link),
            "{link} not exercised: {exercised:?}"
        );
    }
}
