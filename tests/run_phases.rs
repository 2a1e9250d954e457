//! A run keeps its promises across its phases, measured from the server's
//! side: one rate limit for the search and the replays, `--budget` bounding
//! the whole run, a slow endpoint reported as a `timeout` fault and then
//! called less often, a request cut by the budget's end not blamed on the
//! server, a documented redirect judged by its own answer, and a server that
//! never answers stopping the run with exit 3.

use crate::support;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use support::cli::{args, cartograph, read_report};

const SPEC: &str = r#"openapi: 3.0.3
info: {title: phases, version: '1'}
paths:
  /things:
    get:
      operationId: listThings
      responses: {'200': {description: ok}}
  /boom:
    get:
      operationId: boom
      responses: {'200': {description: ok}}
  /slow:
    get:
      operationId: slow
      responses: {'200': {description: ok}}
  /moved:
    get:
      operationId: moved
      responses: {'302': {description: found elsewhere}}
"#;

/// What the server saw: each request's path and when it arrived.
type Seen = Arc<Mutex<Vec<(String, Instant)>>>;

/// Serves [`SPEC`]: `/boom` answers 500, `/slow` answers after `slow`,
/// `/moved` redirects to `/things`.
async fn serve(slow: Duration) -> (SocketAddr, Seen) {
    let seen: Seen = Arc::default();
    let app = Router::new()
        .fallback(move |State(seen): State<Seen>, req: Request| async move {
            let path = req.uri().path().to_string();
            seen.lock().unwrap().push((path.clone(), Instant::now()));
            match path.as_str() {
                "/things" => (StatusCode::OK, "[]").into_response(),
                "/boom" => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
                "/slow" => {
                    tokio::time::sleep(slow).await;
                    (StatusCode::OK, "late").into_response()
                }
                "/moved" => (StatusCode::FOUND, [(header::LOCATION, "/things")]).into_response(),
                _ => StatusCode::NOT_FOUND.into_response(),
            }
        })
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (addr, seen)
}

fn spec_file(dir: &std::path::Path) -> String {
    let path = dir.join("openapi.yaml");
    std::fs::write(&path, SPEC).unwrap();
    path.to_str().unwrap().to_string()
}

/// The most requests any one-second window held.
fn busiest_second(times: &[Instant]) -> usize {
    let mut times = times.to_vec();
    times.sort();
    (0..times.len())
        .map(|i| {
            times[i..]
                .iter()
                .take_while(|t| t.duration_since(times[i]) < Duration::from_secs(1))
                .count()
        })
        .max()
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn one_rate_holds_for_the_search_and_the_replays() {
    let (addr, seen) = serve(Duration::from_millis(1)).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let result = cartograph(args(&[
        "run",
        &spec_file(dir.path()),
        "--target",
        &format!("http://{addr}"),
        "--max-requests",
        "20",
        "--rate",
        "5/s",
        "--burst",
        "1",
        "--skip-check",
        "timeout",
        "--seed",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(stderr.contains("replaying"), "the replays ran: {stderr}");
    let times: Vec<Instant> = seen.lock().unwrap().iter().map(|(_, t)| *t).collect();
    assert!(times.len() > 20, "search and replays: {}", times.len());
    // 5/s with a burst of 1: five in any second, six at a window's edges
    // (the server's clock adds its own jitter).
    assert!(busiest_second(&times) <= 6, "{}", busiest_second(&times));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_budget_bounds_the_whole_run_and_the_budgets_end_is_no_timeout() {
    // Every /slow request outlives the budget: the last one is cut by it.
    let (addr, _) = serve(Duration::from_secs(30)).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let started = Instant::now();
    let result = cartograph(args(&[
        "run",
        &spec_file(dir.path()),
        "--target",
        &format!("http://{addr}"),
        "--budget",
        "4s",
        "--timeout",
        "20s",
        "--seed",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&result.stderr);
    // Replays and files included; the slack is for a loaded machine.
    assert!(took < Duration::from_secs(8), "{took:?}: {stderr}");
    let report = read_report(&out);
    assert!(report["elapsed_s"].as_f64().unwrap() <= 3.6, "{report:#}");
    let slow = report["operations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["operation"] == "slow")
        .unwrap();
    assert!(
        slow["failures"]["interrupted"].as_u64().unwrap() >= 1,
        "{slow}"
    );
    assert!(
        !report["faults"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["code"] == "timeout"),
        "the budget's end is not the server's fault: {:#}",
        report["faults"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn slow_endpoints_are_a_confirmed_timeout_fault_and_are_called_less() {
    let (addr, seen) = serve(Duration::from_secs(2)).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let result = cartograph(args(&[
        "run",
        &spec_file(dir.path()),
        "--target",
        &format!("http://{addr}"),
        "--max-requests",
        "300",
        "--timeout",
        "200ms",
        "--seed",
        "5",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&result.stderr);
    let report = read_report(&out);
    let timeout = report["faults"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "timeout" && f["operation"] == "slow")
        .unwrap_or_else(|| panic!("{stderr}\n{:#}", report["faults"]))
        .clone();
    assert_eq!(timeout["confirmation"], "confirmed", "{timeout:#}");
    let script = out.join(timeout["reproducer"]["shell"].as_str().unwrap());
    let text = std::fs::read_to_string(&script).unwrap();
    assert!(text.contains("--max-time"), "{text}");
    // After three timeouts in a row, /slow gets no more than its share of
    // the time spent waiting for answers.
    let paths: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|(p, _)| p.clone())
        .collect();
    let slow = paths.iter().filter(|p| *p == "/slow").count();
    let things = paths.iter().filter(|p| *p == "/things").count();
    assert!(slow * 3 < things, "/slow {slow}, /things {things}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_documented_redirect_is_judged_by_itself() {
    let (addr, _) = serve(Duration::from_millis(1)).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    cartograph(args(&[
        "run",
        &spec_file(dir.path()),
        "--target",
        &format!("http://{addr}"),
        "--max-requests",
        "60",
        "--seed",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    let report = read_report(&out);
    let moved = report["operations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["operation"] == "moved")
        .unwrap();
    let statuses: Vec<&String> = moved["status_counts"].as_object().unwrap().keys().collect();
    assert_eq!(statuses, ["302"], "{moved}");
    assert!(
        !report["faults"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["operation"] == "moved"),
        "{:#}",
        report["faults"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_never_answers_stops_the_run_with_exit_3() {
    // Accepts connections and closes them at once: TCP works, HTTP never does.
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            drop(socket);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let started = Instant::now();
    let result = cartograph(args(&[
        "run",
        &spec_file(dir.path()),
        "--target",
        &format!("http://{addr}"),
        "--budget",
        "60s",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(3), "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "it stopped early"
    );
    assert!(stderr.contains("nothing answered"), "{stderr}");
    let report = read_report(&out);
    assert_eq!(report["stop"], "unreachable");
}

/// Each line of an `--events` stream, asserted valid against
/// `models/events.schema.json`.
fn events(text: &str) -> Vec<serde_json::Value> {
    let validator = support::cli::schema_validator("models/events.schema.json");
    text.lines()
        .map(|line| {
            let event: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("not one JSON object: {e}: {line}"));
            let errors = support::cli::schema_errors(&validator, &event);
            assert!(errors.is_empty(), "{line}\nbreaks the schema: {errors:#?}");
            event
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_events_follow_the_run_and_end_as_its_report_does() {
    let server = cartograph::testing::DemoServer::start(0).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("events.ndjson");
    let run = cartograph(args(&[
        "run",
        "models/demo/openapi.yaml",
        "--target",
        &server.base_url(),
        "--max-requests",
        "800",
        "--seed",
        "3",
        "-H",
        "X-Token: sekrit-events-token",
        "--events",
        file.to_str().unwrap(),
        "--out",
        out.path().to_str().unwrap(),
    ]))
    .await;
    server.shutdown().await;
    let stderr = String::from_utf8_lossy(&run.stderr);
    let report = read_report(out.path());
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains("sekrit-events-token"), "{text}");
    let events = events(&text);
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.first(), Some(&"run_started"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"run_finished"), "{kinds:?}");
    assert_eq!(events[0]["settings"]["seed"], report["settings"]["seed"]);
    // The phases, in order, each opened then closed.
    let phases: Vec<String> = events
        .iter()
        .filter(|e| e["event"].as_str().unwrap().starts_with("phase_"))
        .map(|e| {
            format!(
                "{} {}",
                e["event"].as_str().unwrap(),
                e["phase"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        phases,
        [
            "phase_started search",
            "phase_finished search",
            "phase_started replay",
            "phase_finished replay"
        ],
        "{stderr}"
    );
    let elapsed: Vec<f64> = events
        .iter()
        .map(|e| e["elapsed"].as_f64().unwrap())
        .collect();
    assert!(elapsed.windows(2).all(|w| w[0] <= w[1]), "{elapsed:?}");
    // Every operation reached, once each; every fault found, once each.
    let reached: Vec<&str> = events
        .iter()
        .filter(|e| e["event"] == "operation_reached")
        .map(|e| e["operation"].as_str().unwrap())
        .collect();
    let mut distinct = reached.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), reached.len(), "{reached:?}");
    assert_eq!(
        reached.len() as u64,
        report["operations_reached"].as_u64().unwrap()
    );
    let mut found: Vec<&str> = events
        .iter()
        .filter(|e| e["event"] == "fault_found")
        .map(|e| e["fault"]["signature"].as_str().unwrap())
        .collect();
    found.sort_unstable();
    let mut reported: Vec<&str> = report["faults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["signature"].as_str().unwrap())
        .collect();
    reported.sort_unstable();
    assert!(!reported.is_empty());
    assert_eq!(found, reported);
    // The last event agrees with report.json and the exit status.
    let last = events.last().unwrap();
    assert_eq!(last["requests"], report["requests"]);
    assert_eq!(last["stop"], report["stop"]);
    assert_eq!(last["operations_reached"], report["operations_reached"]);
    assert_eq!(
        last["faults"].as_u64().unwrap() as usize,
        report["faults"].as_array().unwrap().len()
    );
    assert_eq!(
        last["causes"].as_u64().unwrap() as usize,
        report["causes"].as_array().unwrap().len()
    );
    let confirmed = report["causes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["confirmation"] == "confirmed")
        .count();
    assert!(confirmed > 0, "{stderr}");
    assert_eq!(last["confirmed"].as_u64().unwrap() as usize, confirmed);
    assert_eq!(
        kinds.iter().filter(|k| **k == "cause_confirmed").count(),
        confirmed
    );
    assert_eq!(last["exit_code"].as_i64(), run.status.code().map(i64::from));
}

#[tokio::test(flavor = "multi_thread")]
async fn events_go_to_stdout_and_say_when_nothing_answered() {
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = tempfile::tempdir().unwrap();
    let run = cartograph(args(&[
        "run",
        "models/demo/openapi.yaml",
        "--target",
        &format!("http://127.0.0.1:{port}"),
        "--events",
        "-",
        "--out",
        out.path().to_str().unwrap(),
    ]))
    .await;
    assert_eq!(run.status.code(), Some(3));
    let events = events(&String::from_utf8_lossy(&run.stdout));
    assert_eq!(events.first().unwrap()["event"], "run_started");
    let last = events.last().unwrap();
    assert_eq!(last["event"], "run_finished");
    assert_eq!(last["exit_code"], 3);
    assert_eq!(last["requests"], 0);
}
