//! The HTTP engine as a user runs it (`cartograph run`), against a purpose-built
//! misbehaving server and the demo API, all on 127.0.0.1.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::cli::{cartograph, read_report};
use support::misbehaving::Misbehaving;

const MISBEHAVING: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/fixtures/servers/misbehaving.yaml"
);

/// Writes a one-file OpenAPI description with these `paths` (YAML) into `dir`.
fn tiny_spec(dir: &Path, title: &str, paths: &str) -> PathBuf {
    let spec = dir.join(format!("{title}.yaml"));
    std::fs::write(
        &spec,
        format!("openapi: 3.0.0\ninfo: {{title: {title}, version: '1'}}\npaths:\n{paths}"),
    )
    .unwrap();
    spec
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn trace(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out.join("trace.ndjson"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("trace line is JSON"))
        .collect()
}

fn of_op<'a>(trace: &'a [Value], op: &str) -> Vec<&'a Value> {
    trace.iter().filter(|l| l["operation"] == op).collect()
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_server_is_survived_recorded_and_kept_within_budget() {
    let server = Misbehaving::start().await;
    let out = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let result = cartograph(args(&[
        "run",
        MISBEHAVING,
        "--target",
        &server.base_url,
        "--budget",
        // Long enough that, on a loaded CI machine, every endpoint still
        // gets an answered request between the slow, endless and 429 ones.
        "8s",
        "--timeout",
        "700ms",
        "--max-body",
        "1000000",
        "--concurrency",
        "4",
        "--seed",
        "3",
        "-H",
        "Authorization: Bearer sekret-token-123",
        "--out",
        out.path().to_str().unwrap(),
    ]))
    .await;
    let elapsed = started.elapsed();
    let stderr = String::from_utf8_lossy(&result.stderr);
    // /rate-long asks to wait two minutes: the run says it could not test
    // everything (4), after the other operations had their turn.
    assert_eq!(result.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("Retry-After longer than the run can wait"),
        "{stderr}"
    );
    // The budget bounds the whole run: in-flight requests are cut at its end.
    assert!(elapsed < Duration::from_secs(11), "took {elapsed:?}");

    let t = trace(out.path());
    // A request in flight at the budget's end is cut, and says so.
    let slow = of_op(&t, "slow");
    // Each slow request timed out, or the end of the budget cut it.
    assert!(
        slow.iter().any(|l| l["failure"]["kind"] == "timeout")
            && slow
                .iter()
                .all(|l| l["failure"]["kind"] == "timeout" || l["failure"]["kind"] == "interrupted"),
        "{slow:?}"
    );
    // On a loaded machine a request may time out or be cut at the budget's
    // end; every answer that came is what the policy says.
    let answered = |records: Vec<&Value>| -> Vec<Value> {
        records
            .into_iter()
            .filter(|l| l["failure"].is_null())
            .cloned()
            .collect()
    };
    let endless = answered(of_op(&t, "endless"));
    assert!(
        !endless.is_empty()
            && endless
                .iter()
                .all(|l| l["truncated"] == true && l["status"] == 200),
        "{endless:?}"
    );
    // A 20 MB body is cut at --max-body whenever it is read at all (a
    // request may time out first on a loaded machine; CI saw it once).
    let big = answered(of_op(&t, "big"));
    assert!(
        !big.is_empty() && big.iter().all(|l| l["truncated"] == true),
        "a 20 MB body is cut at --max-body: {big:?}"
    );
    let invalid = of_op(&t, "invalidJson");
    assert!(invalid.iter().any(|l| l["status"] == 200));
    let dropped = of_op(&t, "drop");
    assert!(
        !dropped.is_empty() && dropped.iter().all(|l| l["failure"]["kind"] == "no_answer"),
        "{dropped:?}"
    );
    // The 429 storm is recorded (retry_after_pauses_the_whole_run checks the
    // waiting and the eventual success; here the budget may end during a pause).
    let storm = of_op(&t, "storm");
    assert!(storm.iter().any(|l| l["status"] == 429), "{storm:?}");
    let away = answered(of_op(&t, "redirectAway"));
    assert!(
        !away.is_empty() && away.iter().all(|l| l["status"] == 302),
        "cross-origin redirects are not followed: {away:?}"
    );
    let same = answered(of_op(&t, "redirectSame"));
    assert!(
        same.iter().all(|l| l["status"] == 200),
        "same-origin redirects are followed"
    );

    // Nothing reached the other origin, so no credential could have.
    assert!(
        server.other_origin_requests().is_empty(),
        "{:?}",
        server.other_origin_requests()
    );
    // The credential was sent to the target…
    assert!(server.requests().iter().any(|r| {
        r.headers
            .iter()
            .any(|(n, v)| n == "authorization" && v == "Bearer sekret-token-123")
    }));
    // …and written nowhere.
    for file in files_under(out.path()) {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(
            !text.contains("sekret-token-123"),
            "secret in {}",
            file.display()
        );
    }
    let report = read_report(out.path());
    assert_eq!(
        report["settings"]["headers"],
        serde_json::json!(["Authorization"])
    );
    assert_eq!(report["stop"], "rate_limited");
    // Broken answers are findings, under the operation that gave them.
    let found = |code: &str, op: &str| {
        report["faults"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["code"] == code && f["operation"] == op)
    };
    for (code, op) in [
        ("no_answer", "drop"),
        ("no_answer", "reset"),
        ("invalid_http", "badStatus"),
        ("invalid_http", "negativeLength"),
        ("invalid_http", "resetMid"),
        ("invalid_json", "invalidJson"),
    ] {
        assert!(found(code, op), "no {code} for {op}: {}", report["faults"]);
    }
    assert!(report["requests"].as_u64().unwrap() >= t.len() as u64 - 4);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_after_pauses_the_whole_run() {
    let server = Misbehaving::start().await;
    let dir = tempfile::tempdir().unwrap();
    let spec = tiny_spec(
        dir.path(),
        "storm",
        "  /storm:\n    get: {operationId: storm, responses: {'200': {description: ok}}}\n  /ok:\n    get: {operationId: ok, responses: {'200': {description: ok}}}\n",
    );
    let out = dir.path().join("out");
    let result = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &server.base_url,
        "--max-requests",
        "12",
        "--concurrency",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    assert!(result.status.code().is_some());
    let received = server.requests();
    let storms: Vec<_> = received.iter().filter(|r| r.path == "/storm").collect();
    assert!(
        storms.len() >= 4,
        "three 429s, then the retry that succeeds: {storms:?}"
    );
    // After each 429 (Retry-After: 1) nothing new is sent for about a second; a
    // request the other worker had already sent may still arrive just after.
    for first in storms.iter().take(3) {
        let during: Vec<_> = received
            .iter()
            .filter(|r| {
                r.at > first.at + Duration::from_millis(100)
                    && r.at < first.at + Duration::from_millis(900)
            })
            .map(|r| (r.path.clone(), r.at - first.at))
            .collect();
        assert!(
            during.is_empty(),
            "requests went out during the pause: {during:?}"
        );
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limit_holds_in_every_sliding_second() {
    let server = Misbehaving::start().await;
    let dir = tempfile::tempdir().unwrap();
    let spec = tiny_spec(
        dir.path(),
        "ok",
        "  /ok:\n    get: {operationId: ok, responses: {'200': {description: ok}}}\n",
    );
    let out = dir.path().join("out");
    let result = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &server.base_url,
        "--rate",
        "20/s",
        "--burst",
        "3",
        "--budget",
        "10s",
        "--concurrency",
        "8",
        // The server's DELETE /ok, which the description does not list, is
        // a hidden endpoint; this test is about the rate (which the probes
        // keep too: they go through the same limiter).
        "--skip-check",
        "hidden_endpoint",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    assert_eq!(
        result.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    let times: Vec<Instant> = server.requests().iter().map(|r| r.at).collect();
    // At most 200 in the ten seconds; half of that still shows the rate
    // is used: a loaded machine (CI runs tests side by side) sent 126.
    assert!(
        times.len() >= 100,
        "the rate is used, not just respected: {}",
        times.len()
    );
    // Measured where the requests arrive, on a machine other tests load:
    // arrival jitters by the scheduler's tick, so the window is nine tenths
    // of a second. The limiter allows 3 + 18 requests in it, the bound 23
    // leaves two for the jitter, and a limiter that did not hold would send
    // hundreds.
    for (i, t) in times.iter().enumerate() {
        let in_window = times[i..]
            .iter()
            .take_while(|u| **u < *t + Duration::from_millis(900))
            .count();
        assert!(
            in_window <= 20 + 3,
            "{in_window} requests in the 0.9 s after request {i}"
        );
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_never_sends_a_mutation() {
    // Server side: the misbehaving server records every method it receives.
    let server = Misbehaving::start().await;
    let out = tempfile::tempdir().unwrap();
    let result = cartograph(args(&[
        "run",
        MISBEHAVING,
        "--target",
        &server.base_url,
        "--read-only",
        "--max-requests",
        "60",
        "--timeout",
        "300ms",
        "--out",
        out.path().to_str().unwrap(),
    ]))
    .await;
    assert!(result.status.code().is_some());
    let methods: Vec<String> = server.requests().iter().map(|r| r.method.clone()).collect();
    assert!(!methods.is_empty());
    assert!(
        methods
            .iter()
            .all(|m| m == "GET" || m == "HEAD" || m == "OPTIONS"),
        "{methods:?}"
    );
    server.shutdown().await;

    // A full run on the demo API.
    let demo = cartograph::testing::DemoServer::start(0).await.unwrap();
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/demo/openapi.yaml");
    let out = tempfile::tempdir().unwrap();
    let result = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &demo.base_url(),
        "--read-only",
        "--budget",
        "3s",
        "--out",
        out.path().to_str().unwrap(),
    ]))
    .await;
    assert!(result.status.code().is_some());
    let t = trace(out.path());
    assert!(t.len() > 100);
    assert!(
        t.iter().all(|l| l["method"] == "GET"),
        "only reads on the demo"
    );
    let report = read_report(out.path());
    assert_eq!(report["settings"]["read_only"], true);
    demo.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_401_renews_credentials_from_the_auth_command_which_stay_secret() {
    let server = Misbehaving::start().await;
    let dir = tempfile::tempdir().unwrap();
    let spec = tiny_spec(
        dir.path(),
        "auth",
        "  /unauthorized:\n    get: {operationId: unauthorized, responses: {'200': {description: ok}, '401': {description: no}}}\n",
    );
    let marker = dir.path().join("issued-once");
    // First run prints a stale token, later runs a fresh one.
    let command = format!(
        "if [ -f {m} ]; then echo 'Authorization: Bearer fresh-token'; else touch {m}; echo 'Authorization: Bearer stale'; fi",
        m = marker.display()
    );
    let out = dir.path().join("out");
    let result = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &server.base_url,
        "--max-requests",
        "5",
        "--auth-command",
        &command,
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    assert_eq!(
        result.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    let statuses: Vec<u64> = trace(&out)
        .iter()
        .map(|l| l["status"].as_u64().unwrap())
        .collect();
    assert_eq!(&statuses[..2], &[401, 200], "{statuses:?}");
    for file in files_under(&out) {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            !text.contains("fresh-token") && !text.contains(&command),
            "secret in {}",
            file.display()
        );
    }
    server.shutdown().await;
}

#[tokio::test]
async fn an_unreachable_target_exits_3() {
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = tempfile::tempdir().unwrap();
    let result = cartograph(args(&[
        "run",
        MISBEHAVING,
        "--target",
        &format!("http://127.0.0.1:{port}"),
        "--max-requests",
        "3",
        "--out",
        out.path().to_str().unwrap(),
    ]))
    .await;
    assert_eq!(result.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&result.stderr).contains("cannot be reached"));
    read_report(out.path());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_seed_sends_the_same_requests_to_a_reset_server() {
    let demo = cartograph::testing::DemoServer::start(0).await.unwrap();
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/demo/openapi.yaml");
    let client = reqwest::Client::new();
    let mut runs = Vec::new();
    for _ in 0..2 {
        client
            .post(format!("{}/__reset", demo.base_url()))
            .send()
            .await
            .unwrap();
        let out = tempfile::tempdir().unwrap();
        let result = cartograph(args(&[
            "run",
            spec.to_str().unwrap(),
            "--target",
            &demo.base_url(),
            "--seed",
            "42",
            "--max-requests",
            "1500",
            "--out",
            out.path().to_str().unwrap(),
        ]))
        .await;
        assert!(result.status.code().is_some());
        let sent: Vec<(String, String, String)> = trace(out.path())
            .iter()
            .map(|l| {
                (
                    l["method"].as_str().unwrap().to_string(),
                    l["path"].as_str().unwrap().to_string(),
                    l["request_body"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        runs.push(sent);
    }
    assert_eq!(runs[0].len(), 1500);
    assert_eq!(runs[0], runs[1]);
    demo.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limit_headers_slow_the_run_before_the_quota_runs_out() {
    let server = Misbehaving::start().await;
    let dir = tempfile::tempdir().unwrap();
    let spec = tiny_spec(
        dir.path(),
        "limited",
        "  /limited:\n    get: {operationId: limited, responses: {'200': {description: ok}}}\n  /limited-x:\n    get: {operationId: limitedX, responses: {'200': {description: ok}}}\n",
    );
    let out = dir.path().join("out");
    let result = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &server.base_url,
        "--budget",
        "6s",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    assert_eq!(
        result.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    let t = trace(&out);
    // Unthrottled, a loopback client sends thousands of requests in 6 s; the
    // server allows 5 per 2 s on each path.
    assert!(t.len() >= 8 && t.len() <= 40, "{} requests", t.len());
    assert!(
        t.iter().all(|l| l["status"] == 200),
        "no 429: the quota was never exceeded"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_the_run_and_everything_is_still_written() {
    let demo = cartograph::testing::DemoServer::start(0).await.unwrap();
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/demo/openapi.yaml");
    let out = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cartograph"))
        .args([
            "run",
            spec.to_str().unwrap(),
            "--target",
            &demo.base_url(),
            "--budget",
            "60s",
            "--out",
            out.path().to_str().unwrap(),
        ])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let started = Instant::now();
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5), "stops promptly");
    // As shells expect of a process SIGTERM ended: no pass.
    assert_eq!(status.code(), Some(143), "{status:?}");
    let report = read_report(out.path());
    assert_eq!(report["stop"], "interrupted");
    assert_eq!(
        trace(out.path()).len() as u64,
        report["requests"].as_u64().unwrap()
    );
    demo.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_run_refines_the_graph_and_the_diff_shows_it() {
    let demo = cartograph::testing::DemoServer::start(0).await.unwrap();
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/demo/openapi.yaml");
    let out = tempfile::tempdir().unwrap();
    let result = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &demo.base_url(),
        "--seed",
        "5",
        "--max-requests",
        "3000",
        "--out",
        out.path().to_str().unwrap(),
    ]))
    .await;
    assert!(result.status.code().is_some());
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("models/graph.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let load = |name: &str| -> Value {
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(out.path().join(name)).unwrap()).unwrap();
        assert!(validator.is_valid(&v), "{name} breaks graph.schema.json");
        v
    };
    let (initial, last) = (load("graph-initial.json"), load("graph-final.json"));
    let edge = |g: &Value, id: &str| {
        g["edges"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"] == id)
            .cloned()
    };
    // createReview answers a Review the description does not document.
    let observed = "produces:op:createReview->schema:Review";
    assert!(edge(&initial, observed).is_none());
    let e = edge(&last, observed).expect("observed produces edge");
    assert_eq!(e["origin"], "observed");
    assert!(!e["evidence"][0]["exchanges"].as_array().unwrap().is_empty());
    // Book.authorId holds Author ids: seen, not only guessed from the name.
    let e = edge(&last, "equivalent:schema:Author->schema:Book").expect("Author–Book equivalence");
    assert_eq!(e["origin"], "observed");
    assert!(
        e["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["source"] == "id"
                && p["target"] == "authorId"
                && p["rule"] == "observed-value")
    );
    // Statuses share a name, never a meaning.
    for e in last["edges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "equivalent")
    {
        assert!(
            !e["pairs"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["source"] == "status" || p["target"] == "status"),
            "{e}"
        );
    }
    let diff = cartograph(args(&[
        "graph",
        "--diff",
        out.path().join("graph-initial.json").to_str().unwrap(),
        out.path().join("graph-final.json").to_str().unwrap(),
    ]))
    .await;
    let text = String::from_utf8_lossy(&diff.stdout);
    assert!(
        text.contains("produces op:createReview → schema:Review  [201 $]  (observed)"),
        "{text}"
    );
    assert!(
        text.contains("evidence: the 201 body matches the properties of Review"),
        "{text}"
    );

    // --no-feedback leaves the graph as the description made it.
    let out2 = tempfile::tempdir().unwrap();
    cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &demo.base_url(),
        "--seed",
        "5",
        "--max-requests",
        "300",
        "--no-feedback",
        "--out",
        out2.path().to_str().unwrap(),
    ]))
    .await;
    let a = std::fs::read_to_string(out2.path().join("graph-initial.json")).unwrap();
    let b = std::fs::read_to_string(out2.path().join("graph-final.json")).unwrap();
    assert_eq!(a, b);
    demo.shutdown().await;
}

#[tokio::test]
async fn the_readme_first_command_runs_the_demo_and_scores_it() {
    let out = tempfile::tempdir().unwrap();
    // A request budget, not a time one: a loaded machine (CI runs the
    // tests side by side) sends fewer requests in four seconds, and then
    // reaches fewer operations.
    let result = cartograph(args(&[
        "demo",
        "--max-requests",
        "4000",
        "--seed",
        "1",
        "--out",
        out.path().to_str().unwrap(),
    ]))
    .await;
    let stdout = String::from_utf8_lossy(&result.stdout);
    let stderr = String::from_utf8_lossy(&result.stderr);
    // 4,000 requests may or may not find every planted fault: the demo exits
    // 0 only when it found every one, and otherwise 1, saying which it missed.
    match result.status.code() {
        Some(0) => assert!(!stderr.contains("missed"), "{stderr}"),
        Some(1) => assert!(
            stderr.contains("the demo missed planted fault(s)"),
            "{stderr}"
        ),
        other => panic!("exit {other:?}: {stderr}"),
    }
    assert!(
        stdout.contains("operations answered 2xx: 17 of 17"),
        "{stdout}"
    );
    let line = stdout
        .lines()
        .find(|l| l.contains("planted faults found:"))
        .expect("score line");
    let found: usize = line.split_whitespace().nth(3).unwrap().parse().unwrap();
    assert!(found >= 2, "{line}");
    for file in [
        "trace.ndjson",
        "report.json",
        "graph-initial.json",
        "graph-final.json",
    ] {
        assert!(out.path().join(file).exists(), "{file}");
    }
    read_report(out.path());
}

/// A description of some of the misbehaving server's endpoints, as its
/// fixture writes them.
fn some_of_misbehaving(dir: &Path, operations: &[&str]) -> PathBuf {
    let mut spec = cartograph::load::parse_text(
        &std::fs::read_to_string(MISBEHAVING).unwrap(),
        Path::new(MISBEHAVING),
    )
    .unwrap();
    spec["paths"].as_object_mut().unwrap().retain(|_, item| {
        item.as_object()
            .unwrap()
            .values()
            .any(|op| operations.iter().any(|o| op["operationId"] == *o))
    });
    let path = dir.join("some.json");
    std::fs::write(&path, spec.to_string()).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_answers_are_findings_and_do_not_stop_a_run_that_answers() {
    let server = Misbehaving::start().await;
    let dir = tempfile::tempdir().unwrap();
    let spec = some_of_misbehaving(
        dir.path(),
        &[
            "ok",
            "drop",
            "reset",
            "badStatus",
            "negativeLength",
            "resetMid",
        ],
    );
    let out = dir.path().join("out");
    let result = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &server.base_url,
        "--max-requests",
        "400",
        "--seed",
        "5",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("nothing answered"), "{stderr}");
    let report = read_report(&out);
    assert_eq!(report["stop"], "max_requests", "{stderr}");
    let faults = report["faults"].as_array().unwrap();
    let fault = |op: &str| {
        faults
            .iter()
            .find(|f| f["operation"] == op)
            .unwrap_or_else(|| panic!("no fault for {op}: {faults:?}"))
    };
    for (op, code) in [
        ("drop", "no_answer"),
        ("reset", "no_answer"),
        ("badStatus", "invalid_http"),
        ("negativeLength", "invalid_http"),
        ("resetMid", "invalid_http"),
    ] {
        let f = fault(op);
        assert_eq!(f["code"], code, "{f}");
        assert_eq!(f["class"], "defect");
        assert_eq!(f["confirmation"], "confirmed", "{f}");
        // The shell reproducer recognises it too: exit 1, the fault shows.
        let script = out.join(f["reproducer"]["shell"].as_str().unwrap());
        let ran = Command::new("bash")
            .arg(&script)
            .arg(&server.base_url)
            .output()
            .unwrap();
        assert_eq!(
            ran.status.code(),
            Some(1),
            "{}: {}",
            script.display(),
            String::from_utf8_lossy(&ran.stderr)
        );
    }
    // The raw first bytes, escaped: inert text, whatever came.
    let bad = fault("badStatus")["message"].as_str().unwrap().to_string();
    assert!(bad.contains(r"HTTP/1.1 abc OK\r\nContent-Type"), "{bad}");
    let negative = fault("negativeLength")["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(negative.contains("Content-Length: -5"), "{negative}");
    // The answering operation kept being called, the broken ones less.
    let ops = report["operations"].as_array().unwrap();
    let calls = |name: &str| -> u64 {
        let op = ops.iter().find(|o| o["operation"] == name).unwrap();
        op["status_counts"]
            .as_object()
            .unwrap()
            .values()
            .chain(
                op["failures"]
                    .as_object()
                    .into_iter()
                    .flat_map(|m| m.values()),
            )
            .map(|n| n.as_u64().unwrap())
            .sum()
    };
    assert!(calls("ok") >= 100, "ok called {} times", calls("ok"));
    for op in ["drop", "reset", "badStatus", "negativeLength", "resetMid"] {
        assert!(calls(op) * 2 < calls("ok"), "{op}: {} calls", calls(op));
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_in_which_nothing_answers_stops_early_and_says_why() {
    let server = Misbehaving::start().await;
    let dir = tempfile::tempdir().unwrap();
    let spec = some_of_misbehaving(dir.path(), &["drop", "reset"]);
    let out = dir.path().join("out");
    let result = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &server.base_url,
        "--max-requests",
        "2000",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("the server closed the connection before answering"),
        "{stderr}"
    );
    assert!(!stderr.contains("--cacert"), "{stderr}");
    let report = read_report(&out);
    assert_eq!(report["stop"], "unreachable");
    assert!(
        report["requests"].as_u64().unwrap() < 100,
        "{}",
        report["requests"]
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_past_the_budget_sets_its_operation_aside_and_exits_4() {
    let server = Misbehaving::start().await;
    let dir = tempfile::tempdir().unwrap();
    let spec = some_of_misbehaving(dir.path(), &["ok", "rateLong"]);
    let out = dir.path().join("out");
    let started = Instant::now();
    let result = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &server.base_url,
        "--budget",
        "4s",
        "--no-replay",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("warning: the server answered 429 or 503 with a Retry-After longer than the run can wait (past the end of --budget; over 60 s without one) for 1 operation(s): rateLong (120 s)"),
        "{stderr}"
    );
    let report = read_report(&out);
    assert_eq!(report["stop"], "rate_limited");
    assert!(
        report["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("rateLong (120 s)")),
        "{}",
        report["warnings"]
    );
    // The others had their turn, for the whole budget; the limited one was
    // asked once and never again.
    let requests = server.requests();
    let to = |p: &str| requests.iter().filter(|r| r.path == p).count();
    assert_eq!(to("/rate-long"), 1, "asked once, then left alone");
    assert!(to("/ok") > 50, "{} requests to /ok", to("/ok"));
    assert!(started.elapsed() >= Duration::from_secs(3));
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_wide_retry_after_past_the_budget_stops_the_run_at_once() {
    let server = Misbehaving::start().await;
    let dir = tempfile::tempdir().unwrap();
    let spec = some_of_misbehaving(dir.path(), &["rateLong", "rateLong2"]);
    let out = dir.path().join("out");
    let started = Instant::now();
    let result = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &server.base_url,
        "--budget",
        "60s",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(4), "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert!(stderr.contains("the run stopped"), "{stderr}");
    let report = read_report(&out);
    assert_eq!(report["stop"], "rate_limited");
    assert_eq!(server.requests().len(), 2, "one request each, then nothing");

    // Without --budget, a wait of two minutes is more than a run waits.
    let started = Instant::now();
    let result = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &server.base_url,
        "--max-requests",
        "50",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(4), "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    server.shutdown().await;
}

#[tokio::test]
async fn outputs_that_cannot_be_written_exit_4() {
    let demo = cartograph::testing::DemoServer::start(0).await.unwrap();
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/demo/openapi.yaml");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    // The folder goes away once the run holds it and has begun its trace:
    // as on a full disk, the writes after the search fail. (A folder where
    // report.json goes is refused before the run: exit 2, tests/out_folder.rs.)
    let watched = out.clone();
    let remover = tokio::spawn(async move {
        while !watched.join("trace.ndjson").exists() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        std::fs::remove_dir_all(&watched).unwrap();
    });
    let result = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &demo.base_url(),
        "--max-requests",
        "30",
        "--rate",
        "15/s",
        "--no-replay",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    remover.await.unwrap();
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("cannot write") && stderr.contains("graph-final.json"),
        "{stderr}"
    );
    demo.shutdown().await;
}

/// A server that, like uvicorn after an unhandled error, answers a 500 and
/// then drops the connection at the next request sent on it; every
/// connection's first request is answered.
async fn closes_after_500() -> std::net::SocketAddr {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut failed = false;
                let mut buf = vec![0u8; 16 * 1024];
                loop {
                    let Ok(n) = socket.read(&mut buf).await else {
                        return;
                    };
                    if n == 0 || failed {
                        // The next request after a 500: no answer at all.
                        return;
                    }
                    let text = String::from_utf8_lossy(&buf[..n]);
                    let answer = if text.starts_with("GET /boom") {
                        failed = true;
                        "HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n"
                    } else {
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n[]"
                    };
                    if socket.write_all(answer.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

#[tokio::test(flavor = "multi_thread")]
async fn a_connection_closed_after_a_500_is_no_finding_of_the_next_request() {
    let addr = closes_after_500().await;
    let dir = tempfile::tempdir().unwrap();
    let spec = tiny_spec(
        dir.path(),
        "keepalive",
        "  /boom:\n    get:\n      operationId: boom\n      responses: {'200': {description: ok}}\n  /things:\n    get:\n      operationId: listThings\n      responses: {'200': {description: ok}}\n",
    );
    let out = dir.path().join("out");
    let run = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &format!("http://{addr}"),
        "--max-requests",
        "200",
        "--seed",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&run.stderr);
    let report = read_report(&out);
    let codes: Vec<&str> = report["faults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"server_error"), "{codes:?}\n{stderr}");
    assert!(!codes.contains(&"no_answer"), "{codes:?}\n{stderr}");
    // Both operations were called many times: the 500s came on, and the
    // requests after them were answered on connections of their own.
    let calls = |op: &str| of_op(&trace(&out), op).len();
    assert!(calls("boom") >= 5 && calls("listThings") >= 5, "{stderr}");
}
