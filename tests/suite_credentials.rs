//! Hurl suites that carry credentials as variables: against the notes
//! server (tests/support/notes.rs), where every call needs a bearer token,
//! a run with `-H` and a second identity writes files that send
//! `{{cartograph_…}}` variables, named in each file's header and in
//! `suite.json`, and never a token; `hurl --test --secret …` passes them on
//! a fresh server, and without them the files do not run. A step that tests
//! missing credentials sends none.

use std::path::{Path, PathBuf};
use std::process::Command;

use cartograph::reproduce::{Script, Step, hurl as render_hurl};
use serde_json::Value;

use crate::support;
use support::cli::{args, cartograph, hurl};
use support::notes;

fn every_file(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(every_file(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// `hurl --test --jobs 1` on `files` against `base`, with `extra` arguments.
async fn run_hurl(
    hurl: PathBuf,
    base: String,
    extra: Vec<String>,
    files: Vec<PathBuf>,
) -> (bool, String) {
    tokio::task::spawn_blocking(move || {
        let out = Command::new(hurl)
            .args(["--test", "--jobs", "1", "--variable"])
            .arg(format!("base={base}"))
            .args(&extra)
            .args(&files)
            .output()
            .unwrap();
        (
            out.status.success(),
            format!(
                "{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn suite_files_take_each_credential_as_a_variable_and_pass_with_them() {
    let (addr, _server) = notes::start().await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let target = format!("http://{addr}");
    let alice = format!("Authorization: {}", notes::ALICE);
    let bob = format!("bob=Authorization: {}", notes::BOB);
    let run = cartograph(args(&[
        "run",
        notes::SPEC,
        "--target",
        &target,
        "-H",
        &alice,
        "--identity",
        &bob,
        "--max-requests",
        "1500",
        "--seed",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.code().is_some_and(|c| c <= 1), "{stderr}");
    // The line on the suite says how to give them.
    assert!(
        stderr.contains("--secret 'cartograph_authorization=…'"),
        "{stderr}"
    );

    // No token in any file written.
    for f in every_file(&out) {
        let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
        for token in ["alice-secret-token", "bob-secret-token"] {
            assert!(!text.contains(token), "{} holds {token}", f.display());
        }
    }

    // suite.json says how to run the suite, and what each variable is.
    let suite: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("suite.json")).unwrap()).unwrap();
    let command = suite["run"]["command"].as_str().unwrap();
    assert!(
        command.contains("--secret 'cartograph_authorization=…'")
            && command.contains("--secret 'cartograph_identity_bob_authorization=…'")
            && command.ends_with("tests/*.hurl"),
        "{command}"
    );
    assert!(
        suite["run"]["credentials"]["cartograph_authorization"]
            .as_str()
            .unwrap()
            .contains("Authorization header"),
        "{:#}",
        suite["run"]
    );

    let mut files: Vec<PathBuf> = every_file(&out.join("tests"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "hurl"))
        .collect();
    files.sort();
    assert!(files.len() >= 3, "{} Hurl files", files.len());
    let mut bare_entries = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        // Each entry that is no test of missing credentials sends the token
        // as the variable, and the header names every variable used.
        for entry in text.split("\n\n").skip(1).filter(|e| !e.trim().is_empty()) {
            let bare = entry.contains("# Deliberately: ") && entry.contains("credentials");
            if bare {
                bare_entries += 1;
                // The run's credentials never go with it; a test of missing
                // ones sends none at all (a malformed one is its own).
                assert!(
                    !entry.contains("{{cartograph_"),
                    "{}:\n{entry}",
                    f.display()
                );
                if entry.contains("no credentials") {
                    assert!(
                        !entry.contains("Authorization:"),
                        "{}:\n{entry}",
                        f.display()
                    );
                }
            } else {
                assert!(
                    entry.contains("Authorization: {{cartograph_"),
                    "{}:\n{entry}",
                    f.display()
                );
            }
        }
        if text.contains("{{cartograph_authorization}}") {
            assert!(
                text.contains(
                    "#   cartograph_authorization: the value of the run's Authorization header"
                ),
                "{text}"
            );
        }
    }

    // The search's tests of missing credentials are in the suite too.
    assert!(bare_entries > 0, "no file tests missing credentials");

    let Some(hurl) = hurl() else {
        support::skip_for("hurl is not installed (set HURL or put it on PATH)");
        return;
    };
    // On a fresh server, with the variables, the suite passes.
    let (fresh, _fresh_server) = notes::start().await;
    let secrets = vec![
        "--secret".to_string(),
        format!("cartograph_authorization={}", notes::ALICE),
        "--secret".to_string(),
        format!("cartograph_identity_bob_authorization={}", notes::BOB),
    ];
    let (passed, said) = run_hurl(
        hurl.clone(),
        format!("http://{fresh}"),
        secrets,
        files.clone(),
    )
    .await;
    assert!(passed, "hurl --test failed with the credentials:\n{said}");
    // Without them, the files cannot run: they need the variables.
    let (passed, said) = run_hurl(hurl, format!("http://{fresh}"), Vec::new(), files).await;
    assert!(
        !passed && said.contains("cartograph_authorization"),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn with_a_reset_the_suite_proven_with_the_token_passes_with_the_variables() {
    let Some(hurl) = hurl() else {
        support::skip_for("hurl is not installed (set HURL or put it on PATH)");
        return;
    };
    let (addr, _server) = notes::start().await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let target = format!("http://{addr}");
    let alice = format!("Authorization: {}", notes::ALICE);
    let reset = format!("curl -sSf -X POST {target}/__reset");
    let run = cartograph(args(&[
        "run",
        notes::SPEC,
        "--target",
        &target,
        "-H",
        &alice,
        "--reset-command",
        &reset,
        "--max-requests",
        "800",
        "--seed",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.code().is_some_and(|c| c <= 1), "{stderr}");
    let mut files: Vec<PathBuf> = every_file(&out.join("tests"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "hurl"))
        .collect();
    files.sort();
    assert!(files.len() >= 3, "{} Hurl files\n{stderr}", files.len());
    // Proven after a reset with the token the run sent: the same files,
    // given it as the variable, pass after one reset, one after another.
    let client = reqwest::Client::new();
    client
        .post(format!("{target}/__reset"))
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .expect("the server resets");
    let (passed, said) = run_hurl(
        hurl,
        target,
        vec![
            "--secret".into(),
            format!("cartograph_authorization={}", notes::ALICE),
        ],
        files,
    )
    .await;
    assert!(passed, "hurl --test failed after one reset:\n{said}");
}

fn step(operation: &str, status: u16) -> Step {
    Step {
        operation: operation.into(),
        method: "GET".into(),
        path: "/notes".into(),
        headers: vec![],
        content_type: None,
        body: None,
        graphql_query: false,
        breach: None,
        identity: None,
        captures: vec![],
        status: Some(status),
        graphql_clean: false,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_step_that_tests_missing_credentials_sends_none() {
    let Some(hurl) = hurl() else {
        support::skip_for("hurl is not installed (set HURL or put it on PATH)");
        return;
    };
    let (addr, _server) = notes::start().await;
    let mut bare = step("listNotes", 401);
    bare.breach = Some(cartograph::execution::Breach {
        input: "credentials bearerAuth".into(),
        kind: cartograph::execution::BreachKind::NoCredentials,
        class: None,
    });
    let mut anonymous = step("listNotes", 401);
    anonymous.identity = Some(cartograph::execution::identities::ANONYMOUS.into());
    let script = Script {
        target: format!("http://{addr}"),
        fault: None,
        // With the token 200; without it, the server answers 401.
        steps: vec![step("listNotes", 200), bare, anonymous],
        standalone: true,
        unmade: vec![],
        not_standalone: vec![],
        direct: Vec::new(),
        planted: 0,
        fresh: None,
    };
    let credentials = render_hurl::Credentials::new(&["Authorization".into()], &[], &[]);
    let text = render_hurl::render(
        &script,
        "listNotes with and without credentials",
        &credentials,
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.hurl");
    std::fs::write(&file, &text).unwrap();
    let (passed, said) = run_hurl(
        hurl,
        format!("http://{addr}"),
        vec![
            "--secret".into(),
            format!("cartograph_authorization={}", notes::ALICE),
        ],
        vec![file],
    )
    .await;
    assert!(passed, "{text}\n{said}");
}
