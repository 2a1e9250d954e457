//! A run never ends in a silent success, and small things users trip over
//! get the answer they expect: descriptions with nothing to test, cycles
//! and truncated files, flags that fetch a description from a URL, sizes,
//! timeouts, targets and seeds as people write them.

use crate::support;

use std::path::{Path, PathBuf};

use support::cli::{args, cartograph, read_report};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// `cartograph ARGS`: exit status and stderr.
async fn run(list: &[&str]) -> (Option<i32>, String, String) {
    let out = cartograph(args(list)).await;
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn a_description_with_no_operation_is_an_error_that_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "missing.yaml",
            "openapi: 3.1.0\ninfo: {title: t, version: '1'}\ncomponents: {schemas: {A: {type: object}}}\n",
            "no operation to test: the document has no `paths`",
        ),
        (
            "empty.yaml",
            "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths: {}\n",
            "no operation to test: `paths` is empty",
        ),
        (
            "skipped.yaml",
            "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /a: 5\n  /b:\n    get: 7\n",
            "no operation to test: every operation was skipped (2 part(s) of `paths`): #/paths/~1a (path item is not a mapping; skipped)",
        ),
        (
            "bare.yaml",
            "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    parameters: []\n",
            "no operation to test: its 1 path(s) declare no operation",
        ),
    ];
    for (name, text, said) in cases {
        let spec = write(dir.path(), name, text);
        let out = dir.path().join(format!("out-{name}"));
        let (code, _, stderr) = run(&[
            "run",
            spec.to_str().unwrap(),
            "--target",
            "http://127.0.0.1:9",
            "--out",
            out.to_str().unwrap(),
        ])
        .await;
        assert_eq!(code, Some(2), "{name}: {stderr}");
        assert!(stderr.contains(said), "{name}: {stderr}");
        assert!(stderr.contains(name), "{name} names the file: {stderr}");
    }
}

#[tokio::test]
async fn a_ref_cycle_and_a_truncated_file_are_warnings_naming_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let cycle = write(
        dir.path(),
        "cycle.yaml",
        "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      operationId: getA\n      responses:\n        '200':\n          description: ok\n          content:\n            application/json:\n              schema: {$ref: '#/components/schemas/A'}\ncomponents:\n  schemas:\n    A: {$ref: '#/components/schemas/B'}\n    B: {$ref: '#/components/schemas/A'}\n",
    );
    let (code, _, stderr) = run(&["graph", cycle.to_str().unwrap(), "-o", "/dev/null"]).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("cycle.yaml: #/components/schemas/A: `$ref` cycle A → B → A"),
        "{stderr}"
    );

    // The petstore of the Morest paper, cut in the middle of a line and
    // after a line that opens a structure: both warn at the last line.
    let petstore = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/specs/morest-petstore.yaml"),
    )
    .unwrap();
    let lines: Vec<&str> = petstore.lines().collect();
    let opening = lines
        .iter()
        .rposition(|l| l.trim_end().ends_with(':') && l.starts_with("    "))
        .unwrap();
    let cut_after_line = format!("{}\n", lines[..=opening].join("\n"));
    let cut_mid_line = &petstore[..petstore.len() * 3 / 4];
    let cut_mid_line = cut_mid_line.trim_end_matches(['\n', ' ']);
    for (name, text, line) in [
        ("after-line.yaml", cut_after_line.as_str(), opening + 1),
        ("mid-line.yaml", cut_mid_line, cut_mid_line.lines().count()),
    ] {
        let spec = write(dir.path(), name, text);
        let (code, _, stderr) = run(&["graph", spec.to_str().unwrap(), "-o", "/dev/null"]).await;
        assert_eq!(code, Some(0), "{name}: {stderr}");
        assert!(
            stderr.contains(&format!("{name}: {line}:1: the document seems cut short")),
            "{name}: {stderr}"
        );
    }
    // The whole file warns of nothing.
    let whole = write(dir.path(), "whole.yaml", &petstore);
    let (_, _, stderr) = run(&["graph", whole.to_str().unwrap(), "-o", "/dev/null"]).await;
    assert!(stderr.is_empty(), "{stderr}");
    // JSON cut short does not parse; the hint says why.
    let json = write(
        dir.path(),
        "cut.json",
        "{\"openapi\": \"3.0.0\", \"paths\": {\"/a\": {",
    );
    let (code, _, stderr) = run(&["graph", json.to_str().unwrap()]).await;
    assert_eq!(code, Some(2));
    assert!(stderr.contains("may be cut short"), "{stderr}");
}

#[tokio::test]
async fn flags_take_what_users_write() {
    let demo = cartograph::testing::DemoServer::start(0).await.unwrap();
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/demo/openapi.yaml");
    let spec = spec.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();

    let (code, _, stderr) = run(&[
        "run",
        spec,
        "--target",
        &demo.base_url(),
        "--timeout",
        "0s",
        "--out",
        out,
    ])
    .await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("the timeout must be above zero"),
        "{stderr}"
    );

    let bare = demo.base_url().trim_start_matches("http://").to_string();
    let (code, _, stderr) = run(&["run", spec, "--target", &bare, "--out", out]).await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "add http:// or https://, e.g. --target http://{bare}"
        )),
        "{stderr}"
    );

    // A seed past 2^53 is written as a string, every digit kept.
    let (code, _, stderr) = run(&[
        "run",
        spec,
        "--target",
        &demo.base_url(),
        "--max-requests",
        "40",
        "--seed",
        "18446744073709551557",
        "--no-replay",
        "--out",
        out,
    ])
    .await;
    assert!(matches!(code, Some(0 | 1)), "{stderr}");
    let report = read_report(Path::new(out));
    assert_eq!(report["settings"]["seed"], "18446744073709551557");
    demo.shutdown().await;

    // Sizes with units: 1k is 1024 bytes of the 20 MiB body.
    let server = support::misbehaving::Misbehaving::start().await;
    let big = write(
        dir.path(),
        "big.yaml",
        "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /big:\n    get: {operationId: big, responses: {'200': {description: ok}}}\n",
    );
    let (code, _, stderr) = run(&[
        "run",
        big.to_str().unwrap(),
        "--target",
        &server.base_url,
        "--max-body",
        "1k",
        "--max-requests",
        "3",
        "--no-replay",
        "--out",
        out,
    ])
    .await;
    // Every answer is cut at 1 KiB: none could be read.
    assert_eq!(code, Some(4), "{stderr}");
    let trace = std::fs::read_to_string(Path::new(out).join("trace.ndjson")).unwrap();
    let first: serde_json::Value = serde_json::from_str(trace.lines().next().unwrap()).unwrap();
    assert_eq!(first["truncated"], true);
    assert_eq!(first["response_body"].as_str().unwrap().len(), 1024);
    server.shutdown().await;
}

/// Serves `openapi.json` to requests that carry `X-Api-Key: letmein`, 401
/// to the others.
async fn guarded_description() -> String {
    use axum::http::{HeaderMap, StatusCode};
    use axum::response::IntoResponse;
    let app = axum::Router::new().route(
        "/openapi.json",
        axum::routing::get(|headers: HeaderMap| async move {
            if headers.get("x-api-key").is_some_and(|v| v == "letmein") {
                (
                    [("content-type", "application/json")],
                    r#"{"openapi":"3.0.0","info":{"title":"guarded","version":"1"},"paths":{"/things":{"get":{"operationId":"listThings","responses":{"200":{"description":"ok"}}}}}}"#,
                )
                    .into_response()
            } else {
                StatusCode::UNAUTHORIZED.into_response()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}/openapi.json")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graph_and_inspect_fetch_a_description_with_headers() {
    let url = guarded_description().await;
    let (code, _, stderr) = run(&["graph", &url]).await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("pass -H"), "{stderr}");
    let (code, stdout, stderr) = run(&["graph", &url, "-H", "X-Api-Key: letmein"]).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("op:listThings"), "{stdout}");
    let (code, stdout, stderr) = run(&[
        "inspect",
        &url,
        "--header",
        "X-Api-Key: letmein",
        "--timeout",
        "5s",
    ])
    .await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("listThings"), "{stdout}");
}

#[tokio::test]
async fn a_refused_connection_over_plain_http_is_not_blamed_on_certificates() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/openapi.json");
    for command in ["graph", "inspect", "run"] {
        let (code, _, stderr) = run(&[command, &url]).await;
        assert_eq!(code, Some(2), "{command}: {stderr}");
        assert!(
            stderr.contains(&format!("the connection to 127.0.0.1:{port} was refused")),
            "{command}: {stderr}"
        );
        assert!(!stderr.contains("--cacert"), "{command}: {stderr}");
    }
}

/// Serves `app` on a free loopback port; its base URL.
async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}")
}

/// One operation, `GET /things`, whose answer the description leaves open.
const THINGS: &str = "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /things:\n    get: {operationId: listThings, responses: {'200': {description: ok}}}\n";

/// `GET /things` answering `body` (JSON) to every request.
async fn things_answering(body: String) -> String {
    serve(axum::Router::new().route(
        "/things",
        axum::routing::get(move || {
            let body = body.clone();
            async move { ([("content-type", "application/json")], body) }
        }),
    ))
    .await
}

/// `cartograph run SPEC --target TARGET EXTRA… --out OUT`: exit status,
/// stderr, and the report when one was written.
async fn run_against(
    spec: &Path,
    target: &str,
    extra: &[&str],
    out: &Path,
) -> (Option<i32>, String, Option<serde_json::Value>) {
    let mut list = vec![
        "run",
        spec.to_str().unwrap(),
        "--target",
        target,
        "--out",
        out.to_str().unwrap(),
    ];
    list.extend_from_slice(extra);
    let (code, _, stderr) = run(&list).await;
    let report = out.join("report.json").exists().then(|| read_report(out));
    (code, stderr, report)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_auth_command_that_fails_or_hangs_ends_the_run_in_exit_4() {
    let target = things_answering(r#"[{"id": 1}]"#.into()).await;
    let dir = tempfile::tempdir().unwrap();
    let spec = write(dir.path(), "things.yaml", THINGS);
    let out = dir.path().join("failed");
    let (code, stderr, report) = run_against(
        &spec,
        &target,
        &[
            "--auth-command",
            "echo secret >&2; exit 3",
            "--budget",
            "10s",
        ],
        &out,
    )
    .await;
    assert_eq!(code, Some(4), "{stderr}");
    assert!(stderr.contains("the auth command failed"), "{stderr}");
    assert_eq!(report.unwrap()["stop"], "auth_failed");

    // A command that never ends is bounded by the budget.
    let out = dir.path().join("hung");
    let started = std::time::Instant::now();
    let (code, stderr, report) = run_against(
        &spec,
        &target,
        &["--auth-command", "sleep 60", "--budget", "3s"],
        &out,
    )
    .await;
    assert_eq!(code, Some(4), "{stderr}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    assert!(
        stderr.contains("the auth command had not finished when the budget ended"),
        "{stderr}"
    );
    assert_eq!(report.unwrap()["stop"], "auth_failed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_accepts_and_never_answers_is_exit_3() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let target = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        // Every connection is held open, and nothing is ever written.
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let spec = write(dir.path(), "things.yaml", THINGS);
    // The budget ends before --timeout; then --timeout before the cap.
    for (extra, said) in [
        (
            &["--budget", "2s", "--timeout", "30s"][..],
            "no answer came before the run stopped",
        ),
        (
            &["--max-requests", "3", "--timeout", "500ms"][..],
            "no answer came within --timeout",
        ),
    ] {
        let out = dir.path().join(format!("out-{}", extra[1]));
        let (code, stderr, report) = run_against(&spec, &target, extra, &out).await;
        assert_eq!(code, Some(3), "{extra:?}: {stderr}");
        assert!(stderr.contains("nothing answered"), "{extra:?}: {stderr}");
        assert!(stderr.contains(said), "{extra:?}: {stderr}");
        assert!(report.is_some(), "{extra:?}: the report is written");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_sends_nothing_is_exit_4() {
    let target = things_answering(r#"[{"id": 1}]"#.into()).await;
    let dir = tempfile::tempdir().unwrap();
    let spec = write(dir.path(), "things.yaml", THINGS);
    for (extra, said) in [
        (
            &["--budget", "0s"][..],
            "the budget ended before the first request",
        ),
        (
            &["--max-requests", "0"][..],
            "--max-requests 0 lets no request out",
        ),
    ] {
        let out = dir.path().join(format!("out-{}", extra[0]));
        let (code, stderr, report) = run_against(&spec, &target, extra, &out).await;
        assert_eq!(code, Some(4), "{extra:?}: {stderr}");
        assert!(
            stderr.contains("nothing was sent, so nothing was tested"),
            "{extra:?}: {stderr}"
        );
        assert!(stderr.contains(said), "{extra:?}: {stderr}");
        let report = report.unwrap();
        assert_eq!(report["requests"], 0);
        assert!(
            report["warnings"].to_string().contains("nothing was sent"),
            "{report}"
        );
    }
    // The same server, one request allowed: a pass.
    let out = dir.path().join("one");
    let (code, stderr, _) = run_against(&spec, &target, &["--max-requests", "1"], &out).await;
    assert_eq!(code, Some(0), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_too_long_or_too_deep_to_read_are_exit_4() {
    let dir = tempfile::tempdir().unwrap();
    let spec = write(dir.path(), "things.yaml", THINGS);
    let long = format!("[{}1]", "1,".repeat(1500));
    let target = things_answering(long).await;
    let out = dir.path().join("long");
    let (code, stderr, _) = run_against(
        &spec,
        &target,
        &["--max-body", "1k", "--max-requests", "20"],
        &out,
    )
    .await;
    assert_eq!(code, Some(4), "{stderr}");
    assert!(
        stderr.contains("none of the 20 answers could be read")
            && stderr.contains("20 were longer than --max-body"),
        "{stderr}"
    );
    // A --max-body that holds them: a pass.
    let (code, stderr, _) = run_against(&spec, &target, &["--max-requests", "20"], &out).await;
    assert_eq!(code, Some(0), "{stderr}");

    let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
    let target = things_answering(deep).await;
    let out = dir.path().join("deep");
    let (code, stderr, _) = run_against(&spec, &target, &["--max-requests", "20"], &out).await;
    assert_eq!(code, Some(4), "{stderr}");
    assert!(
        stderr.contains("20 held JSON nested 128 levels deep or more"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graphql_target_without_the_endpoints_path_is_exit_4() {
    // The endpoint is /graphql; every other path is 404.
    let target = serve(axum::Router::new().route(
        "/graphql",
        axum::routing::post(|| async {
            (
                [("content-type", "application/json")],
                r#"{"data": {"hello": "world"}}"#,
            )
        }),
    ))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let schema = write(
        dir.path(),
        "schema.graphql",
        "type Query { hello: String }\n",
    );
    let out = dir.path().join("root");
    let (code, stderr, _) = run_against(&schema, &target, &["--max-requests", "20"], &out).await;
    assert_eq!(code, Some(4), "{stderr}");
    assert!(
        stderr.contains("none of the 20 answers could be read")
            && stderr.contains("give --target the endpoint's own path"),
        "{stderr}"
    );
    // The endpoint itself answers data: a pass.
    let out = dir.path().join("endpoint");
    let endpoint = format!("{target}/graphql");
    let (code, stderr, _) = run_against(&schema, &endpoint, &["--max-requests", "20"], &out).await;
    assert_eq!(code, Some(0), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_search_a_large_api_with_many_faults_keeps_to_the_budget() {
    // 5,000 operations, one in ten answering 500: a fault per such
    // operation called, each with its replay scripts to make (which cost
    // as much as the API is large, for every fault, before).
    let mut spec = String::from("openapi: 3.0.0\ninfo: {title: big, version: '1'}\npaths:\n");
    for i in 0..5_000 {
        spec.push_str(&format!(
            "  /r{i}:\n    get: {{operationId: op{i}, responses: {{'200': {{description: ok}}}}}}\n"
        ));
    }
    let target = serve(
        axum::Router::new().fallback(|uri: axum::http::Uri| async move {
            let crash = uri.path().ends_with('0');
            (
                if crash {
                    axum::http::StatusCode::INTERNAL_SERVER_ERROR
                } else {
                    axum::http::StatusCode::OK
                },
                [("content-type", "application/json")],
                "{}",
            )
        }),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let spec = write(dir.path(), "big.yaml", &spec);
    let out = dir.path().join("out");
    let events = dir.path().join("events.ndjson");
    let (code, stderr, report) = run_against(
        &spec,
        &target,
        &["--budget", "3s", "--events", events.to_str().unwrap()],
        &out,
    )
    .await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(report.unwrap()["faults"].as_array().unwrap().len() > 10);
    // From the search's start (reading and preparing the description come
    // before the budget) to the run's end.
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&events)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let at = |event: &str| {
        lines
            .iter()
            .find(|l| l["event"] == event && (l["phase"] == "search" || event == "run_finished"))
            .unwrap_or_else(|| panic!("no {event}"))["elapsed"]
            .as_f64()
            .unwrap()
    };
    let took = at("run_finished") - at("phase_started");
    let phases: Vec<String> = lines
        .iter()
        .filter(|l| l["event"].as_str().is_some_and(|e| e.starts_with("phase_")))
        .map(|l| l.to_string())
        .collect();
    assert!(
        took < 7.0,
        "{took} s for a 3 s budget: {phases:#?}\n{stderr}"
    );
}

/// A wrong base URL (every operation answered 404) is an error that says to
/// check it, exit status 4: not a conformance cause, and nothing for the
/// overlay to document.
#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_base_url_is_said_not_reported_as_a_cause() {
    let demo = cartograph::testing::DemoServer::start(0).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/demo/openapi.yaml");
    let target = format!("{}/wrong", demo.base_url());
    let (code, _, err) = run(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &target,
        "--max-requests",
        "400",
        "--seed",
        "1",
        "--out",
        out.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code, Some(4), "{err}");
    assert!(err.contains("every operation answered 404"), "{err}");
    assert!(err.contains("check the base URL"), "{err}");
    let report = read_report(&out);
    assert_eq!(
        report["causes"].as_array().map(Vec::len),
        Some(0),
        "{report:#}"
    );
    assert!(!out.join("spec-fixes.overlay.yaml").exists());
    // The right base URL still finds its causes.
    let (code, _, err) = run(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &demo.base_url(),
        "--max-requests",
        "400",
        "--seed",
        "1",
        "--no-replay",
        "--out",
        out.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code, Some(1), "{err}");
}
