//! No false alarm from answers that only look like faults, on a
//! purpose-built server (`tests/support/false_alarms.rs`): each case sent
//! through the engine as a run sends it and judged by the oracles, then a
//! whole run against the server.

use crate::support;

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use support::cli::{args, cartograph, read_report};
use support::drive::{api, capturing, codes, send, step};
use support::false_alarms::{FalseAlarms, SPEC_PATH};

const SECOND: Duration = Duration::from_secs(1);

#[tokio::test(flavor = "multi_thread")]
async fn an_id_put_where_a_slug_or_name_goes_is_no_evidence() {
    let api = api(SPEC_PATH);
    let server = FalseAlarms::start().await;
    let base = &server.base_url;
    // The new article's numeric id where its slug goes: the server deletes
    // nothing (204 all the same) and reads an unknown slug as `{}`.
    let ex = send(
        &api,
        base,
        vec![
            capturing(
                step(
                    "createArticle",
                    "POST",
                    "/articles",
                    Some(r#"{"title":"t"}"#),
                ),
                "id",
                "/id",
            ),
            step("deleteArticle", "DELETE", "/articles/{{id}}", None),
            step("getArticle", "GET", "/articles/{{id}}", None),
        ],
        SECOND,
    )
    .await;
    assert_eq!(ex.len(), 3);
    assert_eq!(ex[2].status, Some(200), "{:?}", ex[2].body);
    assert!(
        codes(&api, base, &ex)[2].is_empty(),
        "{:?}",
        codes(&api, base, &ex)
    );
    // The slug itself: deleted, then 404, as it should.
    let ex = send(
        &api,
        base,
        vec![
            capturing(
                step(
                    "createArticle",
                    "POST",
                    "/articles",
                    Some(r#"{"title":"t"}"#),
                ),
                "slug",
                "/slug",
            ),
            step("deleteArticle", "DELETE", "/articles/{{slug}}", None),
            step("getArticle", "GET", "/articles/{{slug}}", None),
        ],
        SECOND,
    )
    .await;
    assert_eq!(ex[2].status, Some(404));
    assert!(codes(&api, base, &ex)[2].is_empty());
    // A new tenant's id where its name goes: 404, which says nothing about
    // the tenant just made.
    let ex = send(
        &api,
        base,
        vec![
            capturing(
                step(
                    "createTenant",
                    "POST",
                    "/tenants",
                    Some(r#"{"name":"abc"}"#),
                ),
                "id",
                "/id",
            ),
            step("getTenant", "GET", "/tenants/{{id}}", None),
        ],
        SECOND,
    )
    .await;
    assert_eq!(ex[1].status, Some(404));
    assert!(
        codes(&api, base, &ex)[1].is_empty(),
        "{:?}",
        codes(&api, base, &ex)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_timeout_is_blamed_on_the_request_that_took_the_time() {
    let api = api(SPEC_PATH);
    let server = FalseAlarms::start().await;
    let base = &server.base_url;
    // getSlow keeps the server's one worker busy past our timeout; getQuick,
    // sent right after, waits behind it and times out too.
    let ex = send(
        &api,
        base,
        vec![
            step("getSlow", "GET", "/slow", None),
            step("getQuick", "GET", "/quick", None),
        ],
        SECOND,
    )
    .await;
    assert_eq!(ex.len(), 2);
    assert!(ex.iter().all(|e| e.status.is_none()), "{ex:?}");
    let found = codes(&api, base, &ex);
    assert_eq!(found[0], ["timeout"], "{found:?}");
    assert!(found[1].is_empty(), "getQuick only waited: {found:?}");
    // Once the worker is free, getQuick answers at once.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let ex = send(
        &api,
        base,
        vec![step("getQuick", "GET", "/quick", None)],
        SECOND,
    )
    .await;
    assert_eq!(ex[0].status, Some(200));
}

#[tokio::test(flavor = "multi_thread")]
async fn answers_the_request_asked_for_are_no_faults() {
    let api = api(SPEC_PATH);
    let server = FalseAlarms::start().await;
    let base = &server.base_url;
    let long = "a".repeat(10_000);
    let mut big_header = step("search", "GET", "/search", None);
    big_header
        .headers
        .push(("X-Trace".into(), "x".repeat(10_000)));
    let cases: Vec<(cartograph::reproduce::Step, u16)> = vec![
        // A documented redirect's HTML body: content checks skip redirects.
        (step("goElsewhere", "GET", "/go", None), 307),
        (
            step("search", "GET", &format!("/search?q={long}"), None),
            414,
        ),
        (big_header, 431),
        // An encoded `/` in the value changed the route.
        (step("getFile", "GET", "/files/a%2Fb", None), 404),
        (step("getStatus", "GET", "/status/563", None), 563),
        (step("getStatus", "GET", "/status/418", None), 418),
        (step("echoStatus", "GET", "/echo?code=503", None), 503),
    ];
    let mut alarms = Vec::new();
    for (s, status) in cases {
        let what = format!("{} {}", s.method, &s.path[..s.path.len().min(40)]);
        let ex = send(&api, base, vec![s], SECOND).await;
        assert_eq!(ex[0].status, Some(status), "{what}: {ex:?}");
        let found = codes(&api, base, &ex);
        if !found[0].is_empty() {
            alarms.push(format!("{what} answered {status}: {:?}", found[0]));
        }
    }
    // A delay asked for, longer than our timeout.
    let ex = send(
        &api,
        base,
        vec![step("getDelay", "GET", "/delay/3", None)],
        SECOND,
    )
    .await;
    assert!(ex[0].status.is_none());
    let found = codes(&api, base, &ex);
    if !found[0].is_empty() {
        alarms.push(format!("GET /delay/3 timed out: {:?}", found[0]));
    }
    assert!(alarms.is_empty(), "{alarms:#?}");
    // The same answers to requests that did not ask for them are faults.
    let ex = send(
        &api,
        base,
        vec![step("getFile", "GET", "/files/a/b", None)],
        SECOND,
    )
    .await;
    assert_eq!(codes(&api, base, &ex)[0], ["undocumented_status"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_raises_no_false_alarm_and_confirms_the_real_fault() {
    let server = FalseAlarms::start().await;
    let mut out = tempfile::tempdir().unwrap();
    // FALSE_ALARMS_KEEP=1 keeps the run's output (its path is printed).
    if std::env::var_os("FALSE_ALARMS_KEEP").is_some() {
        eprintln!("output kept in {}", out.path().display());
        out.disable_cleanup(true);
    }
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join(SPEC_PATH);
    let result = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &server.base_url,
        "--max-requests",
        "600",
        "--seed",
        "1",
        "--timeout",
        "1s",
        "--out",
        out.path().to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&result.stderr);
    let report = read_report(out.path());
    let faults = report["faults"].as_array().unwrap();
    let false_alarm = |f: &&Value| {
        let (code, op) = (
            f["code"].as_str().unwrap(),
            f["operation"].as_str().unwrap(),
        );
        matches!(
            code,
            "use_after_delete" | "created_not_readable" | "html_instead_of_json"
        ) || (code == "timeout" && op != "getSlow")
            || matches!(op, "getStatus" | "echoStatus" | "search" | "getFile")
    };
    let wrong: Vec<&Value> = faults.iter().filter(false_alarm).collect();
    assert!(wrong.is_empty(), "false alarms: {wrong:#?}\n{stderr}");
    // The real fault: a stack trace for `Accept: text/csv`, confirmed by
    // replays that send the same headers.
    let report_faults: Vec<&Value> = faults
        .iter()
        .filter(|f| f["operation"] == "getReport")
        .collect();
    for code in ["server_error", "stack_trace_leak"] {
        assert!(
            report_faults.iter().any(|f| f["code"] == code),
            "getReport's {code} missed: {faults:#?}"
        );
    }
    for f in &report_faults {
        assert_eq!(f["confirmation"], "confirmed", "{f:#}");
        // Its reproducer sends the same headers, and shows it on a fresh
        // server, as a script and through `cartograph replay`.
        let fresh = FalseAlarms::start().await;
        let script = out.path().join(f["reproducer"]["shell"].as_str().unwrap());
        let base = fresh.base_url.clone();
        let ran = tokio::task::spawn_blocking(move || {
            std::process::Command::new("bash")
                .arg(&script)
                .arg(&base)
                .output()
                .unwrap()
        })
        .await
        .unwrap();
        assert_eq!(
            ran.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&ran.stderr)
        );
        let json = out.path().join(f["reproducer"]["json"].as_str().unwrap());
        let replayed = cartograph(args(&[
            "replay",
            json.to_str().unwrap(),
            "--target",
            &fresh.base_url,
        ]))
        .await;
        assert_eq!(replayed.status.code(), Some(1));
    }
    // The 403s of getVault mean "no such vault": no advice to pass
    // credentials for it. getAdmin's 401 came with WWW-Authenticate.
    let warnings: Vec<&str> = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(
        !warnings.iter().any(|w| w.contains("getVault")),
        "{warnings:#?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("getAdmin") && w.contains("WWW-Authenticate")),
        "{warnings:#?}"
    );
    // Every breach the trace notes is one its request carried.
    let trace = std::fs::read_to_string(out.path().join("trace.ndjson")).unwrap();
    for line in trace.lines() {
        let ex: Value = serde_json::from_str(line).unwrap();
        let Some(input) = ex["breach"]["input"].as_str() else {
            continue;
        };
        let Some(pointer) = input.strip_prefix("body ") else {
            continue;
        };
        if matches!(
            ex["breach"]["kind"].as_str(),
            Some("missing" | "missing_with_default")
        ) {
            continue;
        }
        // A body the trace cut (10,000 characters in a field) cannot be read back.
        if ex["truncated"] == true {
            continue;
        }
        let body: Value = serde_json::from_str(ex["request_body"].as_str().unwrap_or("null"))
            .unwrap_or(Value::Null);
        assert!(
            body.pointer(pointer).is_some(),
            "the label names what was not sent: {line}"
        );
    }
}
