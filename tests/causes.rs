//! A run's causes against a server whose root causes are known
//! (`support/causes.rs`): one trigger on several operations, one exception
//! text on several, two properties read of nothing, a description that
//! marks nothing nullable, bodies checked nowhere, two parsers' words for
//! one unparsable body, and an echo of values holding quotes, each one
//! cause.

use std::path::Path;

use serde_json::Value;

use crate::support::causes;
use crate::support::cli::{args, cartograph, read_report};

/// The causes of `code` whose title contains `title`.
fn of<'a>(report: &'a Value, code: &str, title: &str) -> Vec<&'a Value> {
    report["causes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["code"] == code && c["title"].as_str().unwrap().contains(title))
        .collect()
}

/// A cause's operations, sorted.
fn operations(cause: &Value) -> Vec<&str> {
    let mut ops: Vec<&str> = cause["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap())
        .collect();
    ops.sort_unstable();
    ops
}

fn titles(report: &Value) -> Vec<String> {
    report["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| format!("{} {} {:?}", c["code"], c["title"], operations(c)))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn each_root_cause_is_one_cause() {
    let (addr, server) = causes::start().await;
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("openapi.yaml");
    std::fs::write(&spec, causes::SPEC).unwrap();
    let out = dir.path().join("out");
    let run = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &format!("http://{addr}"),
        "--max-requests",
        "1500",
        "--seed",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    server.abort();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    let report = read_report(Path::new(&out));
    let all = titles(&report);
    eprintln!("{} causes:\n{}", all.len(), all.join("\n"));

    // `limit` past 64 bits crashes three listings with a bare status
    // phrase: one cause, named by its trigger.
    let huge = of(&report, "server_error", "after an integer past 64 bits");
    assert_eq!(huge.len(), 1, "{all:#?}");
    assert_eq!(
        operations(huge[0]),
        ["listOrders", "listOwners", "listPets"],
        "{all:#?}"
    );
    // One exception text raised in two handlers is one cause; the same
    // words reading another property are another.
    let owner = of(&report, "server_error", "(reading 'owner')");
    assert_eq!(owner.len(), 1, "{all:#?}");
    assert_eq!(operations(owner[0]), ["getOwner", "getPet"]);
    let tags = of(&report, "server_error", "(reading 'tags')");
    assert_eq!(tags.len(), 1, "{all:#?}");
    assert_eq!(operations(tags[0]), ["listToys"]);
    assert_eq!(of(&report, "server_error", "").len(), 3, "{all:#?}");

    // Nulls where the description marks nothing nullable: one cause,
    // listing its places.
    let null = of(&report, "schema_violation", "marks no schema nullable");
    assert_eq!(null.len(), 1, "{all:#?}");
    let places: Vec<&str> = null[0]["places"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert!(
        places.iter().any(|p| p.contains("Pet/properties/tag"))
            && places.iter().any(|p| p.contains("Owner/properties/phone")),
        "{places:?}"
    );
    assert_eq!(of(&report, "schema_violation", "").len(), 1, "{all:#?}");
    // The HTML report lists them under the cause.
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let listed = html
        .split("<summary>Its places (2)</summary>")
        .skip(1)
        .filter_map(|rest| rest.split("</details>").next())
        .any(|list| list.contains("Pet/properties/tag") && list.contains("Owner/properties/phone"));
    assert!(listed, "the null's places in report.html");

    // No body checked anywhere: one cause, whichever fields showed it.
    let accepted = of(&report, "invalid_input_accepted", "");
    assert_eq!(accepted.len(), 1, "{all:#?}");
    assert_eq!(operations(accepted[0]), ["createOwner", "createPet"]);
    assert_eq!(accepted[0]["places"].as_array().unwrap().len(), 2);

    // A body neither parser could read, in two parsers' words: one cause.
    let unparsable = of(
        &report,
        "undocumented_status",
        "a request body it could not parse",
    );
    assert_eq!(unparsable.len(), 1, "{all:#?}");
    assert_eq!(operations(unparsable[0]), ["createOwner", "createPet"]);
    // The search's 404 echoes every value, quotes and all, HTML-escaped:
    // one cause.
    let search: Vec<&Value> = of(&report, "undocumented_status", "")
        .into_iter()
        .filter(|c| operations(c) == ["searchPets"])
        .collect();
    assert_eq!(search.len(), 1, "{all:#?}");
}
