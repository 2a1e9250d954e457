//! What travels on the wire from a hostile description or server: answers
//! sent compressed are decoded (and a decompression bomb is cut at
//! --max-body), an API key given with --query-key reaches the server and no
//! file, a target with a query is refused without showing it, and header
//! names that are no HTTP token or that frame the message are never sent.

use crate::support;

use std::io::Write;
use std::net::Ipv4Addr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use cartograph::execution::{RequestSpec, Transport};
use serde_json::json;
use support::cli::{args, cartograph, read_report};

/// Serves `router` on a free port of 127.0.0.1; its base URL.
async fn serve(router: Router) -> String {
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    format!("http://{addr}")
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn brotli(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut e = brotli::CompressorWriter::new(&mut out, 4096, 9, 22);
        e.write_all(data).unwrap();
    }
    out
}

const ITEM: &str = r#"{"id": 7, "name": "café"}"#;

/// Answers compressed whatever the request asked: `/gz`, `/br`, `/deflate`,
/// and `/bomb` (64 MiB of JSON as 64 KiB of gzip).
fn compressing() -> Router {
    let bomb = {
        let mut text = b"{\"data\": \"".to_vec();
        text.resize(64 << 20, b'a');
        text.extend_from_slice(b"\"}");
        Arc::new(gzip(&text))
    };
    let answer = |coding: &'static str, body: Vec<u8>| {
        (
            [
                (header::CONTENT_TYPE, "application/json"),
                (header::CONTENT_ENCODING, coding),
            ],
            body,
        )
            .into_response()
    };
    Router::new().fallback(move |request: Request| {
        let bomb = bomb.clone();
        async move {
            match request.uri().path() {
                "/gz" => answer("gzip", gzip(ITEM.as_bytes())),
                "/br" => answer("br", brotli(ITEM.as_bytes())),
                "/deflate" => {
                    let mut e =
                        flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
                    e.write_all(ITEM.as_bytes()).unwrap();
                    answer("deflate", e.finish().unwrap())
                }
                "/bomb" => answer("gzip", bomb.to_vec()),
                _ => StatusCode::NOT_FOUND.into_response(),
            }
        }
    })
}

fn get(path: &str) -> RequestSpec {
    RequestSpec {
        operation: format!("GET {path}"),
        method: "GET".into(),
        path: path.into(),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn compressed_answers_are_decoded_and_a_bomb_is_cut_at_max_body() {
    let base = serve(compressing()).await;
    let cap = 64 * 1024;
    let transport =
        Transport::new(url::Url::parse(&base).unwrap(), cap, 1, &Default::default()).unwrap();
    for path in ["/gz", "/br", "/deflate"] {
        let got = transport
            .send(&get(path), &[], &[], Duration::from_secs(10))
            .await;
        assert_eq!(got.status, Some(200), "{path}: {:?}", got.failure);
        assert_eq!(String::from_utf8_lossy(&got.body), ITEM, "{path}");
        assert!(!got.truncated, "{path}");
    }
    let started = Instant::now();
    let bomb = transport
        .send(&get("/bomb"), &[], &[], Duration::from_secs(10))
        .await;
    assert_eq!(bomb.status, Some(200), "{:?}", bomb.failure);
    assert_eq!(bomb.body.len(), cap);
    assert!(bomb.body.starts_with(b"{\"data\": \"aaaa"));
    assert!(bomb.truncated);
    assert!(started.elapsed() < Duration::from_secs(5));
}

const COMPRESSED_SPEC: &str = r#"openapi: 3.0.3
info: {title: compressed, version: "1"}
paths:
  /gz:
    get:
      responses:
        '200':
          description: an item, sent as gzip
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Item'}
  /br:
    get:
      responses:
        '200':
          description: an item, sent as brotli
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Item'}
components:
  schemas:
    Item:
      type: object
      required: [id, name]
      properties:
        id: {type: integer}
        name: {type: string}
"#;

#[tokio::test(flavor = "multi_thread")]
async fn answers_sent_compressed_raise_no_false_alarm() {
    let base = serve(compressing()).await;
    let tmp = tempfile::tempdir().unwrap();
    let spec = tmp.path().join("spec.yaml");
    std::fs::write(&spec, COMPRESSED_SPEC).unwrap();
    let out = tmp.path().join("out");
    let done = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &base,
        "--max-requests",
        "20",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(0), "{stderr}");
    let report = read_report(&out);
    assert_eq!(report["faults"], json!([]), "{stderr}");
    assert_eq!(report["operations_reached"], 2, "{stderr}");
}

/// Whether `secret` is in any file under `dir`.
fn holds(dir: &Path, secret: &str) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(holds(&path, secret));
        } else if std::fs::read(&path).is_ok_and(|b| String::from_utf8_lossy(&b).contains(secret)) {
            found.push(path);
        }
    }
    found
}

const KEY: &str = "k3y-0f-th3-qu3ry";

const KEYED_SPEC: &str = r#"openapi: 3.0.3
info: {title: keyed, version: "1"}
components:
  securitySchemes:
    key: {type: apiKey, in: query, name: api_key}
security: [{key: []}]
paths:
  /items:
    get:
      operationId: listItems
      parameters:
        - {name: n, in: query, required: true, schema: {type: integer}}
      responses:
        '200':
          description: the items
          content:
            application/json:
              schema: {type: object}
        '401':
          description: no key
"#;

/// Answers 401 without `api_key=KEY`; with it, echoes the query (the key
/// included), and crashes on a negative `n`.
async fn keyed(State(with_key): State<Arc<Mutex<u32>>>, request: Request) -> Response {
    let query = request.uri().query().unwrap_or("").to_string();
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    if !pairs.iter().any(|(k, v)| k == "api_key" && v == KEY) {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    *with_key.lock().unwrap() += 1;
    let n: i64 = pairs
        .iter()
        .find(|(k, _)| k == "n")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    if n < 0 {
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot list {n} items for {query}"),
        )
            .into_response();
    }
    axum::Json(json!({"query": query, "n": n})).into_response()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_query_api_key_reaches_the_server_and_no_file() {
    let with_key = Arc::new(Mutex::new(0u32));
    let base = serve(Router::new().fallback(keyed).with_state(with_key.clone())).await;
    let tmp = tempfile::tempdir().unwrap();
    let spec = tmp.path().join("spec.yaml");
    std::fs::write(&spec, KEYED_SPEC).unwrap();

    // In the target, the key would be written everywhere: refused, unshown.
    let done = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &format!("{base}/?api_key={KEY}"),
        "--out",
        tmp.path().join("refused").to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--query-key"), "{stderr}");
    assert!(!stderr.contains(KEY), "{stderr}");

    let out = tmp.path().join("out");
    let done = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &base,
        "--query-key",
        &format!("api_key={KEY}"),
        "--max-requests",
        "60",
        "--seed",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(1), "the crash is found: {stderr}");
    assert!(*with_key.lock().unwrap() > 5, "{stderr}");
    assert!(!stderr.contains(KEY), "{stderr}");
    assert_eq!(holds(&out, KEY), Vec::<std::path::PathBuf>::new());

    // The reproducer takes the key from CARTOGRAPH_QUERY: with it the
    // crash shows (exit 1); without it the server only says 401.
    let script = std::fs::read_dir(out.join("reproducers"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "sh"))
        .expect("a reproducer");
    if which_curl().is_none() {
        support::skip_for("curl is not installed");
        return;
    }
    let replay = |key: Option<&str>| {
        let mut cmd = std::process::Command::new("bash");
        cmd.arg(&script).arg(&base).env_remove("CARTOGRAPH_QUERY");
        if let Some(k) = key {
            cmd.env("CARTOGRAPH_QUERY", k);
        }
        cmd.output().unwrap()
    };
    let shown = replay(Some(&format!("api_key={KEY}")));
    assert_eq!(
        shown.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    // Without the key the server refuses the request the run was let
    // in with: the script cannot run, and says which variable to set.
    let unshown = replay(None);
    let said = String::from_utf8_lossy(&unshown.stderr);
    assert_eq!(unshown.status.code(), Some(2), "{said}");
    assert!(
        said.contains("cannot run: answered 401") && said.contains("CARTOGRAPH_QUERY='name=value'"),
        "{said}"
    );
}

fn which_curl() -> Option<()> {
    std::process::Command::new("curl")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|_| ())
}

const HEADERS_SPEC: &str = r#"{
  "openapi": "3.0.3",
  "info": {"title": "headers", "version": "1"},
  "paths": {
    "/echo": {
      "get": {
        "parameters": [
          {"name": "X-A\r\nX-Injected: 1", "in": "header", "required": true, "schema": {"type": "string"}},
          {"name": "Host", "in": "header", "required": true, "schema": {"type": "string", "example": "elsewhere.example"}},
          {"name": "Transfer-Encoding", "in": "header", "required": true, "schema": {"type": "string", "example": "chunked"}},
          {"name": "Connection", "in": "header", "required": true, "schema": {"type": "string", "example": "close"}},
          {"name": "X-Trace", "in": "header", "required": true, "schema": {"type": "string", "example": "t1"}}
        ],
        "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}}
      }
    }
  }
}"#;

#[tokio::test(flavor = "multi_thread")]
async fn header_names_from_the_description_never_split_or_reroute_a_request() {
    let seen: Arc<Mutex<Vec<HeaderMap>>> = Arc::default();
    let router = Router::new()
        .fallback(
            |State(seen): State<Arc<Mutex<Vec<HeaderMap>>>>, headers: HeaderMap| async move {
                seen.lock().unwrap().push(headers);
                axum::Json(json!({}))
            },
        )
        .with_state(seen.clone());
    let base = serve(router).await;
    let tmp = tempfile::tempdir().unwrap();
    let spec = tmp.path().join("spec.json");
    std::fs::write(&spec, HEADERS_SPEC).unwrap();
    let out = tmp.path().join("out");
    let done = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &base,
        "--max-requests",
        "20",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&done.stderr);
    // A request without the required X-Trace is accepted: a fault, not ours.
    assert!(matches!(done.status.code(), Some(0 | 1)), "{stderr}");
    assert!(stderr.contains("not an HTTP token"), "{stderr}");
    assert!(
        !stderr.contains("\r\nX-Injected") && !stderr.contains('\r'),
        "{stderr}"
    );
    let seen = seen.lock().unwrap();
    assert!(!seen.is_empty(), "{stderr}");
    let authority = base.trim_start_matches("http://");
    for headers in seen.iter() {
        assert!(!headers.contains_key("x-injected"), "{headers:?}");
        assert!(!headers.contains_key("transfer-encoding"), "{headers:?}");
        assert_eq!(headers[header::HOST], authority, "{headers:?}");
    }
    assert!(seen.iter().any(|h| h.contains_key("x-trace")));
    let written: Vec<_> = holds(&out, "X-Injected")
        .into_iter()
        .filter(|p| !p.ends_with("report.json") && !p.ends_with("report.html"))
        .collect();
    assert_eq!(written, Vec::<std::path::PathBuf>::new());
}

const PLAIN_SPEC: &str = r#"openapi: 3.0.3
info: {title: plain, version: "1"}
paths:
  /items:
    get:
      responses:
        '200':
          description: the items
          content:
            application/json:
              schema: {type: object}
"#;

#[tokio::test(flavor = "multi_thread")]
async fn the_printed_hurl_command_keeps_a_hostile_target_one_word() {
    let router = Router::new().fallback(|| async { axum::Json(json!({})) });
    let base = serve(router).await;
    let tmp = tempfile::tempdir().unwrap();
    let spec = tmp.path().join("spec.yaml");
    std::fs::write(&spec, PLAIN_SPEC).unwrap();
    let pwned = tmp.path().join("pwned");
    let target = format!("{base}/x;touch$IFS{}", pwned.display());
    let out = tmp.path().join("out");
    let done = cartograph(args(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        &target,
        "--max-requests",
        "10",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(matches!(done.status.code(), Some(0 | 1)), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.contains("regression suite:"))
        .unwrap_or_else(|| panic!("no suite line: {stderr}"));
    let command = &line[line.find("(hurl ").expect(line) + 1..line.rfind(')').unwrap()];
    // Pasted into bash, with a `hurl` that only prints its arguments.
    let ran = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("hurl() {{ printf '%s\\n' \"$@\"; }}\n{command}"))
        .output()
        .unwrap();
    let words = String::from_utf8_lossy(&ran.stdout);
    assert!(!pwned.exists(), "the pasted command ran `touch`: {command}");
    assert!(
        words.lines().any(|w| w == format!("base={target}")),
        "{command}\n{words}"
    );
}
