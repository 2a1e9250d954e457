//! Values that sit in lists flow: an element of a pet's `tags` reaches a
//! `tag` filter and a `petTags` list filter, and a name only a listing of
//! bare names gives (`GET /tags`) reaches `/tags/{tag}`. The server is
//! purpose-built (tests/support) and counts what reached it.

use crate::support;

use support::cli::{args, cartograph};
use support::list_flow::{self, Counts};

#[tokio::test(flavor = "multi_thread")]
async fn elements_of_lists_reach_the_inputs_named_after_them() {
    let (addr, counts, server) = list_flow::start().await;
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("openapi.yaml");
    std::fs::write(&spec, list_flow::SPEC).unwrap();
    let out = dir.path().join("out");
    let target = format!("http://{addr}");
    let run = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &target,
        "--max-requests",
        "600",
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

    let by_tag = Counts::get(&counts.pets_by_tag);
    let found = Counts::get(&counts.tag_found);
    let lonely = Counts::get(&counts.lonely_found);
    let owners = Counts::get(&counts.owners_by_tags);
    eprintln!("pets by tag {by_tag}, tag found {found} (lonely {lonely}), owners {owners}");
    assert!(by_tag > 0, "no pet's tag reached ?tag=: {stderr}");
    assert!(owners > 0, "no pet's tags reached ?petTags=: {stderr}");
    assert!(found > 0, "no tag reached /tags/{{tag}}: {stderr}");
    assert!(
        lonely > 0,
        "the tag only GET /tags lists never reached /tags/{{tag}}: {stderr}"
    );
}
