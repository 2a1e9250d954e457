//! The shell reproducers judge an answer exactly as `cartograph replay`
//! does, and as the oracle did: for each fault check and answer body below,
//! the rendered script (with jq, and with python3 alone) and
//! [`script_run::shows`] agree with the expected verdict. Integers are told
//! from other numbers, a null parent is not a null field, a `*` token is
//! any item of a list, and nothing missing under a missing parent.

use std::net::Ipv4Addr;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::response::IntoResponse;
use cartograph::execution::{Exchange, RequestSpec};
use cartograph::oracles::registry::Code;
use cartograph::reproduce::{FaultCheck, Script, ScriptFault, Step, script_run, shell};
use serde_json::{Value, json};

fn check(v: Value) -> FaultCheck {
    serde_json::from_value(v).unwrap()
}

/// (check, body, whether the fault shows).
fn cases() -> Vec<(FaultCheck, Value, bool)> {
    let float_where_integer = check(
        json!({"kind": "json_type", "status": 200, "pointer": "/count", "json_type": "number", "allowed": ["integer"]}),
    );
    let null_author = check(
        json!({"kind": "json_value", "status": 200, "pointer": "/data/book/author", "value": null}),
    );
    let null_in_lists = check(
        json!({"kind": "json_value", "status": 200, "pointer": "/data/authors/*/books/*/author", "value": null}),
    );
    let missing_name = check(json!({"kind": "json_missing", "status": 200, "pointer": "/*/name"}));
    let missing_isbn =
        check(json!({"kind": "json_missing", "status": 200, "pointer": "/data/book/isbn"}));
    let bad_enum = check(
        json!({"kind": "json_value", "status": 200, "pointer": "/*/frequency", "value": "BIWEEKLY"}),
    );
    let legacy_number = check(
        json!({"kind": "json_type", "status": 200, "pointer": "/price", "json_type": "number"}),
    );
    // An internal failure at `book.author`, told by its wording.
    let crash = check(
        json!({"kind": "graphql_error", "status": 200, "path": "data.books[*].author", "text": "cannot read properties of undefined"}),
    );
    let crash_entry = |path: Value, message: &str| json!({"data": {"books": null}, "errors": [{"message": "other"}, {"message": message, "path": path}]});
    let unpathed = check(
        json!({"kind": "graphql_error", "status": 200, "path": "-", "text": "internal_server_error"}),
    );
    // The server below sends Content-Type and no Allow.
    let no_allow = check(json!({"kind": "no_header", "status": 200, "name": "allow"}));
    let no_content_type =
        check(json!({"kind": "no_header", "status": 200, "name": "content-type"}));
    let no_allow_405 = check(json!({"kind": "no_header", "status": 405, "name": "allow"}));
    vec![
        (no_allow, json!({}), true),
        (no_content_type, json!({}), false),
        (no_allow_405, json!({}), false),
        (
            crash.clone(),
            crash_entry(
                json!(["books", 3, "author"]),
                "TypeError: Cannot read properties of undefined (reading 'name')",
            ),
            true,
        ),
        // Elsewhere, or saying something else, or data there: no fault.
        (
            crash.clone(),
            crash_entry(
                json!(["books", 3, "title"]),
                "Cannot read properties of undefined",
            ),
            false,
        ),
        (
            crash.clone(),
            crash_entry(json!(["books", 3, "author"]), "Author not found"),
            false,
        ),
        (
            crash.clone(),
            json!({"data": {"books": [{"author": {"name": "a"}}]}}),
            false,
        ),
        // The text is in the entry, not in its path.
        (
            crash.clone(),
            crash_entry(json!(["books", 0, "author"]), "no"),
            false,
        ),
        (
            unpathed.clone(),
            json!({"errors": [{"message": "boom", "extensions": {"code": "INTERNAL_SERVER_ERROR"}}]}),
            true,
        ),
        (
            unpathed.clone(),
            json!({"errors": ["Internal_Server_Error: x"]}),
            true,
        ),
        (
            unpathed,
            json!({"errors": [{"message": "boom", "path": ["a"], "extensions": {"code": "INTERNAL_SERVER_ERROR"}}]}),
            false,
        ),
        (float_where_integer.clone(), json!({"count": 1.5}), true),
        (float_where_integer.clone(), json!({"count": 2}), false),
        (float_where_integer.clone(), json!({"count": 2.0}), false),
        (float_where_integer.clone(), json!({"count": "2"}), true),
        (float_where_integer.clone(), json!({"count": null}), true),
        (float_where_integer, json!({}), false),
        (
            null_author.clone(),
            json!({"data": {"book": {"author": null}}}),
            true,
        ),
        (null_author.clone(), json!({"data": {"book": null}}), false),
        (null_author.clone(), json!({"data": null}), false),
        (
            null_author,
            json!({"data": {"book": {"author": {"name": "x"}}}}),
            false,
        ),
        (
            null_in_lists.clone(),
            json!({"data": {"authors": [{"books": [{"author": {}}, {"author": null}]}]}}),
            true,
        ),
        (
            null_in_lists.clone(),
            json!({"data": {"authors": [{"books": [{"author": {}}]}, {"books": null}]}}),
            false,
        ),
        (null_in_lists, json!({"data": {"authors": []}}), false),
        (
            missing_name.clone(),
            json!([{"id": 1}, {"name": "n"}]),
            true,
        ),
        (missing_name.clone(), json!([{"name": "n"}]), false),
        (missing_name.clone(), json!([]), false),
        (missing_name, json!(null), false),
        (missing_isbn.clone(), json!({"data": {"book": null}}), false),
        (
            missing_isbn,
            json!({"data": {"book": {"title": "t"}}}),
            true,
        ),
        (
            bad_enum.clone(),
            json!([{"frequency": "WEEKLY"}, {"frequency": "BIWEEKLY"}]),
            true,
        ),
        (bad_enum, json!([{"frequency": "WEEKLY"}]), false),
        (legacy_number.clone(), json!({"price": 1}), true),
        (legacy_number, json!({"price": "1"}), false),
    ]
}

/// Serves body `i` of `bodies` at `/i`, as JSON.
async fn serve(bodies: Vec<String>) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let bodies = Arc::new(bodies);
    let router = Router::new()
        .fallback(
            |State(bodies): State<Arc<Vec<String>>>, request: Request| async move {
                let i: usize = request.uri().path()[1..].parse().unwrap_or(0);
                (
                    [("content-type", "application/json")],
                    bodies.get(i).cloned().unwrap_or_default(),
                )
                    .into_response()
            },
        )
        .with_state(bodies);
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (format!("http://{addr}"), task)
}

fn script(i: usize, check: &FaultCheck) -> Script {
    Script {
        target: "http://127.0.0.1:9".into(),
        fault: Some(ScriptFault {
            code: Code::SchemaViolation,
            signature: "s".into(),
            message: "m".into(),
            check: check.clone(),
        }),
        steps: vec![Step {
            operation: "get".into(),
            method: "GET".into(),
            path: format!("/{i}"),
            headers: vec![],
            content_type: None,
            body: None,
            graphql_query: false,
            breach: None,
            identity: None,
            captures: vec![],
            status: Some(200),
            graphql_clean: false,
        }],
        standalone: true,
        unmade: vec![],
        not_standalone: vec![],
        direct: Vec::new(),
        planted: 0,
        fresh: None,
    }
}

/// A folder of links to the tools a reproducer uses, python3 but no jq.
fn without_jq() -> Option<tempfile::TempDir> {
    let dir = tempfile::tempdir().unwrap();
    for tool in [
        "bash", "curl", "python3", "sed", "tr", "cut", "mktemp", "rm", "grep", "cat",
    ] {
        // The interpreter itself, not a version manager's shim script.
        let find = if tool == "python3" {
            "python3 -c 'import sys; print(sys.executable)'".to_string()
        } else {
            format!("command -v {tool}")
        };
        let found = Command::new("bash").args(["-c", &find]).output().ok()?;
        let path = String::from_utf8_lossy(&found.stdout).trim().to_string();
        if path.is_empty() {
            return None;
        }
        std::os::unix::fs::symlink(&path, dir.path().join(tool)).ok()?;
    }
    Some(dir)
}

fn shell_verdict(file: &Path, base: &str, path: Option<&Path>) -> bool {
    let mut command = Command::new("bash");
    command.arg(file).arg(base);
    if let Some(p) = path {
        command.env("PATH", p);
    }
    let out = command.output().unwrap();
    match out.status.code() {
        Some(1) => true,
        Some(0) => false,
        other => panic!(
            "{}: exit {other:?}: {}",
            file.display(),
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn scripts_and_replay_judge_every_check_alike() {
    let cases = cases();
    let (base, server) = serve(cases.iter().map(|(_, b, _)| b.to_string()).collect()).await;
    let dir = tempfile::tempdir().unwrap();
    let has_jq = Command::new("jq").arg("--version").output().is_ok();
    let python_only = without_jq();
    for (i, (check, body, want)) in cases.iter().enumerate() {
        let exchange = Exchange {
            request: RequestSpec::default(),
            status: Some(200),
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.to_string(),
            ..Default::default()
        };
        assert_eq!(
            script_run::shows(check, &exchange),
            *want,
            "cartograph replay: {check:?} on {body}"
        );
        let file = dir.path().join(format!("{i}.sh"));
        std::fs::write(&file, shell::render(&script(i, check))).unwrap();
        let (f, b) = (file.clone(), base.clone());
        if has_jq {
            let shown = tokio::task::spawn_blocking(move || shell_verdict(&f, &b, None))
                .await
                .unwrap();
            assert_eq!(shown, *want, "script with jq: {check:?} on {body}");
        }
        if let Some(p) = &python_only {
            let (f, b, p) = (file.clone(), base.clone(), p.path().to_path_buf());
            let shown = tokio::task::spawn_blocking(move || shell_verdict(&f, &b, Some(&p)))
                .await
                .unwrap();
            assert_eq!(shown, *want, "script with python3: {check:?} on {body}");
        }
    }
    server.abort();
}

/// A reproducer whose step is answered 502-504 where the run had its
/// answer could not be run (exit 2, "cannot run"), in the shell script and
/// in `cartograph replay` alike, rather than saying the fault did not show:
/// a freshly reset server answers 503 until it is fully up. A fault that
/// is a server error still shows on a 503.
#[tokio::test(flavor = "multi_thread")]
async fn an_unavailable_server_means_the_script_cannot_run() {
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let router = Router::new().fallback(|| async {
        (
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            [("content-type", "application/json")],
            "{}",
        )
    });
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    let dir = tempfile::tempdir().unwrap();
    // (what the run was answered, the fault's check, exit status wanted)
    let cases = [
        (201, json!({"kind": "status", "status": 201}), 2),
        (500, json!({"kind": "server_error"}), 1),
    ];
    for (i, (saw, check_json, want)) in cases.into_iter().enumerate() {
        let mut s = script(0, &check(check_json));
        s.steps[0].status = Some(saw);
        s.target = base.clone();
        let sh = dir.path().join(format!("down{i}.sh"));
        std::fs::write(&sh, shell::render(&s)).unwrap();
        let json_file = sh.with_extension("json");
        std::fs::write(&json_file, serde_json::to_string(&s).unwrap()).unwrap();
        let (file, b) = (sh.clone(), base.clone());
        let out = tokio::task::spawn_blocking(move || {
            Command::new("bash").arg(&file).arg(&b).output().unwrap()
        })
        .await
        .unwrap();
        let said = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(
            out.status.code(),
            Some(want),
            "script, run saw {saw}: {said}"
        );
        let replayed = tokio::task::spawn_blocking(move || {
            Command::new(env!("CARGO_BIN_EXE_cartograph"))
                .arg("replay")
                .arg(&json_file)
                .output()
                .unwrap()
        })
        .await
        .unwrap();
        let replay_said = String::from_utf8_lossy(&replayed.stderr).to_string();
        assert_eq!(
            replayed.status.code(),
            Some(want),
            "replay, run saw {saw}: {replay_said}"
        );
        if want == 2 {
            assert!(
                said.contains("cannot run: answered 503 where the run was answered 201"),
                "{said}"
            );
            assert!(
                replay_said.contains("cannot run:") && replay_said.contains("answered 503"),
                "{replay_said}"
            );
        }
    }
    server.abort();
}
