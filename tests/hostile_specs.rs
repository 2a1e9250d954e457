//! Hostile descriptions: what a description may make Cartograph read, and
//! how much memory it may make it take. A description fetched by URL whose
//! `$ref`s name this machine's files (an absolute path, a `../` out of its
//! folder) reads none of them; a local `$ref` to `/dev/zero` or a FIFO is
//! refused, not read for ever; memory bombs (a "billion laughs" YAML, a
//! `minLength` or `minItems` of a billion, a description that streams for
//! ever, nesting a hundred thousand deep) end, under an address-space limit,
//! with an error or a warning naming the place; bounds no value satisfies
//! are warned and their input left out; a panic inside the search stops
//! the run as a crash, not as a search that ran out of tests.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

/// The address space the binary runs in for the memory bombs: enough for a
/// run (threads and allocator reserve much they never touch), far below
/// what any bomb asks for.
const ADDRESS_SPACE: u64 = 3 << 30;

/// A server on 127.0.0.1 serving `files` by path, answering everything
/// else `200 {}`, and keeping each request it got (method, URI, body).
struct Served {
    base: String,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Served {
    async fn start(files: Vec<(String, String)>) -> Served {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let files = Arc::new(files);
        let kept = seen.clone();
        let app = axum::Router::new().fallback(move |request: Request| {
            let files = files.clone();
            let kept = kept.clone();
            async move {
                let path = request.uri().path().to_string();
                if path == "/forever.json" {
                    // A description that never ends.
                    let chunk = Bytes::from(vec![b' '; 64 * 1024]);
                    let head = futures_util::stream::once(async {
                        Ok::<_, std::io::Error>(Bytes::from_static(b"{\"openapi\": \"3.0.0\", "))
                    });
                    let tail = futures_util::stream::repeat_with(move || Ok(chunk.clone()));
                    return Body::from_stream(futures_util::StreamExt::chain(head, tail))
                        .into_response();
                }
                if let Some((_, text)) = files.iter().find(|(p, _)| *p == path) {
                    return text.clone().into_response();
                }
                let line = format!("{} {}", request.method(), request.uri());
                let body = axum::body::to_bytes(request.into_body(), 1 << 20)
                    .await
                    .unwrap_or_default();
                kept.lock()
                    .unwrap()
                    .push(format!("{line} {}", String::from_utf8_lossy(&body)));
                let mut answer = Response::new(Body::from("{}"));
                answer.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                answer
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Served {
            base: format!("http://{addr}"),
            seen,
        }
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

/// Runs the binary with `args` under an address-space limit (`prlimit`,
/// else the shell's `ulimit -v`) and a time limit, off the async runtime.
async fn bounded(args: &[&str], limit: Duration) -> Output {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let bin = env!("CARGO_BIN_EXE_cartograph");
        let mut command = if Command::new("prlimit").arg("--version").output().is_ok() {
            let mut c = Command::new("prlimit");
            c.arg(format!("--as={ADDRESS_SPACE}")).arg("--").arg(bin);
            c
        } else {
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg(format!(
                    "ulimit -v {}; exec \"$0\" \"$@\"",
                    ADDRESS_SPACE >> 10
                ))
                .arg(bin);
            c
        };
        let child = command
            .args(&args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        let id = child.id();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait_with_output());
        });
        match rx.recv_timeout(limit) {
            Ok(output) => output.expect("the binary ran"),
            Err(_) => {
                // Only the child started here, by its id.
                let _ = Command::new("kill").arg("-9").arg(id.to_string()).status();
                panic!("cartograph {args:?} did not end within {limit:?}");
            }
        }
    })
    .await
    .unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Whether the process was ended by a signal or an aborted allocation,
/// rather than exiting.
fn crashed(output: &Output) -> bool {
    output.status.code().is_none() || stderr(output).contains("memory allocation of")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fetched_descriptions_refs_never_read_this_machines_files() {
    // A file of this machine whose values must never reach the server.
    let local = tempfile::tempdir().unwrap();
    let secret = local.path().join("secret.yaml");
    std::fs::write(&secret, "type: string\nenum: [LOCAL-FILE-VALUE-7f3a]\n").unwrap();
    let absolute = secret.to_str().unwrap().to_string();
    let climbing = format!("../../../../../../../..{absolute}");
    let spec = format!(
        r#"openapi: 3.0.3
info: {{title: refs, version: "1"}}
paths:
  /a:
    get:
      parameters:
        - {{name: abs, in: query, required: true, schema: {{$ref: '{absolute}'}}}}
        - {{name: up, in: query, required: true, schema: {{$ref: '{climbing}'}}}}
        - {{name: own, in: query, required: true, schema: {{$ref: '/shared/own.yaml'}}}}
      responses:
        '200': {{description: ok}}
"#
    );
    // An absolute path is the origin's: served there, it is followed.
    let own = "type: string\nenum: [ORIGIN-VALUE-51c2]\n";
    let server = Served::start(vec![
        ("/docs/openapi.yaml".into(), spec),
        ("/shared/own.yaml".into(), own.into()),
    ])
    .await;
    let out = tempfile::tempdir().unwrap();
    let url = format!("{}/docs/openapi.yaml", server.base);
    let run = bounded(
        &[
            "run",
            &url,
            "--target",
            &server.base,
            "--max-requests",
            "40",
            "--no-replay",
            "--out",
            out.path().to_str().unwrap(),
        ],
        Duration::from_secs(120),
    )
    .await;
    let err = stderr(&run);
    assert!(matches!(run.status.code(), Some(0 | 1)), "{err}");
    let seen = server.seen();
    assert!(seen.iter().any(|s| s.starts_with("GET /a")), "{seen:?}");
    assert!(
        !seen.iter().any(|s| s.contains("LOCAL-FILE-VALUE")),
        "a value of a local file reached the server: {seen:?}"
    );
    assert!(
        seen.iter().any(|s| s.contains("ORIGIN-VALUE-51c2")),
        "the origin's own absolute $ref was not followed: {seen:?}\n{err}"
    );
    // The absolute path was asked of the origin (which answers `{}`
    // there), never read here; the climbing one is refused at its place.
    assert!(
        seen.iter()
            .any(|s| s.starts_with(&format!("GET {absolute} "))),
        "{seen:?}"
    );
    assert!(
        err.contains("#/paths/~1a/get/parameters/1/schema: unresolvable $ref")
            && err.contains("leaves the folder of the fetched description"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_ref_to_a_device_or_a_fifo_is_refused_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.yaml");
    let made = Command::new("mkfifo").arg(&fifo).status();
    let spec = dir.path().join("api.yaml");
    std::fs::write(
        &spec,
        r#"openapi: 3.0.3
info: {title: devices, version: "1"}
paths:
  /a:
    get:
      parameters:
        - {name: z, in: query, schema: {$ref: '/dev/zero'}}
        - {name: p, in: query, schema: {$ref: 'pipe.yaml'}}
      responses:
        '200': {description: ok}
"#,
    )
    .unwrap();
    let out = bounded(
        &["inspect", spec.to_str().unwrap()],
        Duration::from_secs(60),
    )
    .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("/dev/zero is not a regular file"), "{err}");
    if made.is_ok_and(|s| s.success()) {
        assert!(err.contains("pipe.yaml is not a regular file"), "{err}");
    }
    // The description itself may be a FIFO or a device, read no further
    // than the limit.
    let zero = bounded(&["graph", "/dev/zero"], Duration::from_secs(60)).await;
    assert_eq!(zero.status.code(), Some(2), "{}", stderr(&zero));
    assert!(
        stderr(&zero).contains("larger than 64 MiB"),
        "{}",
        stderr(&zero)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_billion_laughs_and_deep_nesting_are_refused_with_their_place() {
    let dir = tempfile::tempdir().unwrap();
    let mut bomb = String::from("openapi: 3.0.3\ninfo: {title: lol, version: '1'}\npaths: {}\n");
    bomb.push_str(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for (name, prev) in [
        ("b", "a"),
        ("c", "b"),
        ("d", "c"),
        ("e", "d"),
        ("f", "e"),
        ("g", "f"),
        ("h", "g"),
        ("i", "h"),
    ] {
        let refs = vec![format!("*{prev}"); 9].join(",");
        bomb.push_str(&format!("{name}: &{name} [{refs}]\n"));
    }
    assert!(bomb.len() < 1024, "{}", bomb.len());
    let path = dir.path().join("lol.yaml");
    std::fs::write(&path, &bomb).unwrap();
    let out = bounded(&["graph", path.to_str().unwrap()], Duration::from_secs(60)).await;
    let err = stderr(&out);
    assert!(!crashed(&out), "{err}");
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("lol.yaml:"), "{err}");
    assert!(err.contains("aliases expand past"), "{err}");

    // Nesting a hundred thousand deep, in YAML's flow style and in JSON.
    // And in YAML's block style, 200 deep, past Cartograph's own limit.
    let block: String = (0..200)
        .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
        .collect();
    for (name, text) in [
        (
            "deep.yaml",
            format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000)),
        ),
        (
            "deep.json",
            format!("{}1{}", "{\"a\":".repeat(100_000), "}".repeat(100_000)),
        ),
        ("block.yaml", format!("{block}{}1\n", " ".repeat(200))),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let out = bounded(&["graph", path.to_str().unwrap()], Duration::from_secs(60)).await;
        let err = stderr(&out);
        assert!(!crashed(&out), "{name}: {err}");
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        if name == "block.yaml" {
            assert!(err.contains("nested deeper than 128 levels"), "{err}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_description_that_streams_for_ever_is_cut_off() {
    let server = Served::start(Vec::new()).await;
    let url = format!("{}/forever.json", server.base);
    let out = bounded(&["graph", &url], Duration::from_secs(120)).await;
    let err = stderr(&out);
    assert!(!crashed(&out), "{err}");
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("larger than 64 MiB"), "{err}");
}

/// Runs `spec` (YAML, written to a file) against a fresh server for a
/// few requests under the memory limit; returns its stderr and what the
/// server got.
async fn run_spec(spec: &str, requests: &str) -> (Option<i32>, String, Vec<String>) {
    let server = Served::start(Vec::new()).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("api.yaml");
    std::fs::write(&path, spec).unwrap();
    let out = dir.path().join("out");
    let run = bounded(
        &[
            "run",
            path.to_str().unwrap(),
            "--target",
            &server.base,
            "--max-requests",
            requests,
            "--no-replay",
            "--out",
            out.to_str().unwrap(),
        ],
        Duration::from_secs(180),
    )
    .await;
    let err = stderr(&run);
    assert!(!crashed(&run), "{err}");
    (run.status.code(), err, server.seen())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_billion_long_string_or_array_is_cut_with_a_warning() {
    let spec = r#"openapi: 3.0.3
info: {title: huge, version: "1"}
paths:
  /s:
    get:
      parameters:
        - {name: q, in: query, required: true, schema: {type: string, minLength: 1000000000}}
      responses:
        '200': {description: ok}
  /a:
    post:
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: array
              minItems: 1000000000
              items: {type: string, minLength: 1000000000}
      responses:
        '200': {description: ok}
"#;
    let (code, err, seen) = run_spec(spec, "150").await;
    assert!(matches!(code, Some(0 | 1)), "{err}");
    assert!(
        err.contains("#/paths/~1s/get/parameters/0/schema: minLength 1000000000 is past the longest string generated"),
        "{err}"
    );
    assert!(
        err.contains("#/paths/~1a/post/requestBody/content/application~1json/schema: minItems 1000000000 is past the most items generated"),
        "{err}"
    );
    assert!(seen.iter().any(|s| s.starts_with("GET /s")), "{seen:?}");
    assert!(seen.iter().any(|s| s.starts_with("POST /a")), "{seen:?}");
    // Every request stays within what one generated value may hold.
    let longest = seen.iter().map(String::len).max().unwrap_or(0);
    assert!(longest < 4 << 20, "a request of {longest} bytes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bounds_no_value_satisfies_are_warned_and_their_input_left_out() {
    let spec = r#"openapi: 3.1.0
info: {title: slips, version: "1"}
paths:
  /x:
    get:
      parameters:
        - {name: backwards, in: query, schema: {type: integer, minimum: 10, maximum: 5}}
        - {name: between, in: query, schema: {type: integer, minimum: 1.5, maximum: 1.7}}
        - {name: fine, in: query, required: true, schema: {type: integer, minimum: 1, maximum: 3}}
      responses:
        '200': {description: ok}
  /y:
    post:
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [none, name]
              properties:
                none: {type: array, minItems: 2, items: false}
                short: {type: string, minLength: 5, maxLength: 2}
                name: {type: string}
      responses:
        '200': {description: ok}
"#;
    let (code, err, seen) = run_spec(spec, "200").await;
    // Not a crash, and not a search that "ran out of tests" early.
    assert!(matches!(code, Some(0 | 1)), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for expected in [
        "#/paths/~1x/get/parameters/0/schema: minimum 10 is not below maximum 5: no value satisfies it; parameter \"backwards\" left out",
        "#/paths/~1x/get/parameters/1/schema: no integer lies between minimum 1.5 and maximum 1.7",
        "#/paths/~1y/post/requestBody/content/application~1json/schema/properties/none: minItems 2 with `items: false`",
        "#/paths/~1y/post/requestBody/content/application~1json/schema/properties/short: minLength 5 > maxLength 2",
    ] {
        assert!(err.contains(expected), "missing {expected:?} in:\n{err}");
    }
    let gets: Vec<&String> = seen.iter().filter(|s| s.starts_with("GET /x")).collect();
    assert!(gets.len() > 5, "{seen:?}");
    assert!(
        gets.iter()
            .all(|s| !s.contains("backwards=") && !s.contains("between=")),
        "{gets:?}"
    );
    let posts: Vec<&String> = seen.iter().filter(|s| s.starts_with("POST /y")).collect();
    assert!(posts.len() > 5, "{seen:?}");
    assert!(posts.iter().any(|s| s.contains("\"name\"")), "{posts:?}");
}

/// A driver whose generation panics, as an unforeseen schema would make it.
struct Panicking;

impl cartograph::execution::Driver for Panicking {
    fn next_test(&mut self) -> Option<Box<dyn cartograph::execution::TestRun>> {
        panic!("an impossible range");
    }

    fn finished(
        &mut self,
        _test: Box<dyn cartograph::execution::TestRun>,
        _exchanges: &[cartograph::execution::Exchange],
    ) {
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_in_the_search_stops_the_run_as_a_crash() {
    use cartograph::execution::{self, RunConfig, StopReason, secrets::Secrets};
    let api = cartograph::load::load_text(
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      responses:\n        '200': {description: ok}\n",
        Path::new("t.yaml"),
    )
    .unwrap()
    .api;
    let config = RunConfig {
        target: url::Url::parse("http://127.0.0.1:9/").unwrap(),
        budget: Some(Duration::from_secs(30)),
        max_requests: Some(10),
        seed: 0,
        rate: None,
        burst: 1,
        concurrency: 2,
        read_only: false,
        timeout: Duration::from_secs(5),
        max_body: 1 << 20,
        max_retries: 0,
        fence: Default::default(),
        per_operation: Vec::new(),
        tls: Default::default(),
        trace_limit: cartograph::execution::TRACE_LIMIT,
    };
    let credentials = execution::Credentials::new(Vec::new(), None, None, Secrets::new());
    let link = cartograph::testing::Link::new(&api, config, credentials).unwrap();
    let outcome = execution::run(
        link.config,
        link.transport,
        link.credentials,
        link.politeness,
        Arc::new(Mutex::new(Panicking)),
        |_| {},
    )
    .await;
    assert_eq!(outcome.stop, StopReason::Crashed);
    let crash = outcome.crash.unwrap_or_default();
    assert!(
        crash.contains("choosing the next test failed: an impossible range"),
        "{crash}"
    );
}
