//! GraphQL errors read for what they say, on a purpose-built server
//! (tests/support/graphql_errors.rs): resolver crashes answered as bare
//! strings in `errors` are internal failures and a conformance finding of
//! their own; custom scalars (`UUID`, `Date`, `BigInt`) get values their
//! server takes, and its refusals of the others are no finding; a correct
//! refusal of a null for a non-null variable is no internal failure,
//! whatever code the server stamps on it.

use crate::support;

use serde_json::Value;
use support::cli::{args, cartograph, read_report};
use support::graphql_errors;

#[tokio::test(flavor = "multi_thread")]
async fn graphql_errors_are_judged_by_what_they_say() {
    let (addr, server) = graphql_errors::start().await;
    let dir = tempfile::tempdir().unwrap();
    let sdl = dir.path().join("schema.graphql");
    std::fs::write(&sdl, graphql_errors::SDL).unwrap();
    let out = dir.path().join("out");
    let endpoint = format!("http://{addr}/graphql");
    let run = cartograph(args(&[
        "run",
        sdl.to_str().unwrap(),
        "--target",
        &endpoint,
        "--max-requests",
        "800",
        "--seed",
        "1",
        "--no-replay",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    server.abort();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    let report = read_report(&out);
    let faults = report["faults"].as_array().unwrap();
    let summary: Vec<(String, String)> = faults
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap_or("").to_string(),
                f["operation"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    for f in faults {
        eprintln!("fault: {} {} {}", f["code"], f["operation"], f["message"]);
    }
    let on_report = |code: &str| {
        faults
            .iter()
            .filter(|f| f["code"] == code && f["operation"] == "Query.report")
            .collect::<Vec<_>>()
    };

    // (a) The crashes told as bare strings: read (the exception they end
    // with is the fault's message), and the form itself a finding.
    let crashes = on_report("graphql_internal_error");
    assert!(
        crashes.iter().any(|f| f["message"]
            .as_str()
            .is_some_and(|m| m.contains("KeyError"))),
        "the crashes of Query.report were not reported: {summary:?}"
    );
    assert!(
        !on_report("graphql_malformed_errors").is_empty(),
        "the bare-string `errors` were not reported: {summary:?}"
    );

    // (c) Every other error carries INTERNAL_SERVER_ERROR, the refusals of
    // null for non-null variables included: none is a fault.
    let refusals: Vec<&Value> = faults
        .iter()
        .filter(|f| {
            f["message"]
                .as_str()
                .is_some_and(|m| m.contains("must not be null"))
        })
        .collect();
    assert!(
        refusals.is_empty(),
        "a refusal stamped INTERNAL_SERVER_ERROR was called a fault: {refusals:#?}"
    );
    assert!(
        summary
            .iter()
            .all(|(c, o)| c != "graphql_internal_error" || o == "Query.report"),
        "an internal failure where nothing crashed: {summary:?}"
    );

    // Whatever title each crash echoes: one fault per way Python quotes
    // it (`'…'`, or `"…"` around a quote), not one per title.
    assert!(
        crashes.len() <= 2,
        "{} crash faults: {summary:?}",
        crashes.len()
    );

    // (b) Nothing is wrong with the custom-scalar fields, refusals included.
    let scalar_ops = ["Query.account", "Query.entries", "Query.tagged"];
    let wrong: Vec<&(String, String)> = summary
        .iter()
        .filter(|(c, o)| scalar_ops.contains(&o.as_str()) || c == "graphql_validation_error")
        .collect();
    assert!(wrong.is_empty(), "false findings: {wrong:?}");

    // What the run sent, from its trace: the cases were all exercised, and
    // the values Cartograph made up for the custom scalars were mostly taken.
    let trace = std::fs::read_to_string(out.join("trace.ndjson")).unwrap();
    // Per custom-scalar field: (positive tests' requests, answered with data, refused).
    let mut tally = [(0, 0, 0); 3];
    let mut null_refusals = 0;
    for line in trace.lines() {
        let ex: Value = serde_json::from_str(line).unwrap();
        let body: Value = ex["response_body"]
            .as_str()
            .and_then(|b| serde_json::from_str(b).ok())
            .unwrap_or(Value::Null);
        let first_error = body["errors"][0]["message"].as_str().unwrap_or("");
        if first_error.contains("must not be null") && ex.get("breach").is_some() {
            null_refusals += 1;
        }
        let op = ex["operation"].as_str().unwrap_or("");
        let Some(k) = scalar_ops.iter().position(|o| *o == op) else {
            continue;
        };
        if ex.get("breach").is_some() {
            continue;
        }
        let field = op.trim_start_matches("Query.");
        let (sent, answered, refused) = &mut tally[k];
        *sent += 1;
        if body["errors"].is_null() && !body["data"][field].is_null() {
            *answered += 1;
        } else if first_error.contains("expected type") {
            *refused += 1;
        }
    }
    eprintln!(
        "positive tests' requests (sent, answered data, refused) of {scalar_ops:?}: {tally:?}; \
         {null_refusals} refusals of a null"
    );
    // `UUID`, `Date` and `BigInt` values fit; a `Slug`'s name says nothing,
    // and the values made up for it are mostly refused, rightly.
    for (op, (sent, answered, _)) in scalar_ops[..2].iter().zip(tally) {
        assert!(sent >= 20, "{sent} requests of positive tests to {op}");
        assert!(
            answered * 10 >= sent * 9,
            "{answered} of {sent} requests to {op} answered data"
        );
    }
    assert!(
        tally[2].2 > 0,
        "no Slug was refused: the case went untested"
    );
    assert!(
        null_refusals > 0,
        "no null was refused: the case went untested"
    );
}
