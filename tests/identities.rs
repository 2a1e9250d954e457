//! Several identities against the purpose-built notes server
//! (tests/support/notes.rs): a seeded run with a second identity finds
//! every planted weakness with its WFC code and raises no security cause on
//! a twin; its reproducers replay the sequence with each identity's header
//! from the environment; no token is written anywhere; a run with one
//! identity sends no identity test.

use std::path::Path;

use serde_json::Value;

use crate::support;
use support::cli::{args, cartograph, read_report};
use support::notes;

/// The security causes of a report: (code, operation, wfc).
fn security_causes(report: &Value) -> Vec<(String, String, Option<u64>)> {
    let security = [
        "other_identity_write",
        "other_identity_read",
        "anonymous_modification",
        "existence_leak",
        "valid_credentials_told_401",
        "ignored_auth",
    ];
    report["causes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| security.contains(&c["code"].as_str().unwrap()))
        .flat_map(|c| {
            c["operations"].as_array().unwrap().iter().map(move |op| {
                (
                    c["code"].as_str().unwrap().to_string(),
                    op.as_str().unwrap().to_string(),
                    c["wfc"].as_u64(),
                )
            })
        })
        .collect()
}

fn every_file(dir: &Path) -> Vec<std::path::PathBuf> {
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

#[tokio::test(flavor = "multi_thread")]
async fn a_second_identity_finds_every_planted_weakness_and_no_twin() {
    let (addr, server) = notes::start().await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let target = format!("http://{addr}");
    let alice = format!("alice=Authorization: {}", notes::ALICE);
    let bob = format!("bob=Authorization: {}", notes::BOB);
    let run = cartograph(args(&[
        "run",
        notes::SPEC,
        "--target",
        &target,
        "--identity",
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
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    let report = read_report(&out);
    let found = security_causes(&report);
    eprintln!("{found:#?}");
    let has = |code: &str, op: &str, wfc: u64| {
        found
            .iter()
            .any(|(c, o, w)| c == code && o == op && *w == Some(wfc))
    };
    // Every planted weakness, with its WFC code.
    assert!(has("other_identity_write", "deleteDraft", 306), "{found:?}");
    assert!(has("other_identity_write", "patchDraft", 306), "{found:?}");
    assert!(
        has("anonymous_modification", "patchDraft", 308),
        "{found:?}"
    );
    assert!(has("existence_leak", "getNoteHistory", 304), "{found:?}");
    assert!(
        has("valid_credentials_told_401", "adminUsers", 305),
        "{found:?}"
    );
    // Read by bob after he was refused its deletion (no WFC code).
    assert!(
        found
            .iter()
            .any(|(c, o, w)| c == "other_identity_read" && o == "getAlbum" && w.is_none()),
        "{found:?}"
    );
    // No security cause on a twin.
    for twin in ["getNote", "replaceNote", "deleteNote", "adminStats"] {
        assert!(
            !found.iter().any(|(_, o, _)| o == twin),
            "a security cause on the twin {twin}: {found:?}"
        );
    }
    // Each names the identities and the resource.
    let titles: Vec<&str> = report["causes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["code"] == "other_identity_write")
        .map(|c| c["title"].as_str().unwrap())
        .collect();
    assert!(
        titles
            .iter()
            .any(|t| t.contains("deleteDraft (bob on alice's createDraft)")),
        "{titles:?}"
    );
    assert!(report["search"]["phases"]["identities"].as_u64().unwrap() > 0);
    // No identity's token is written anywhere.
    for file in every_file(&out) {
        let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
        for token in ["alice-secret-token", "bob-secret-token"] {
            assert!(!text.contains(token), "{token} in {}", file.display());
        }
    }
    // The reproducer of bob's deletion replays it with each identity's
    // header from the environment: the fault shows (exit 1).
    let fault = report["faults"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "other_identity_write" && f["operation"] == "deleteDraft")
        .expect("the deleteDraft fault");
    let script = out.join(fault["reproducer"]["shell"].as_str().expect("a reproducer"));
    let text = std::fs::read_to_string(&script).unwrap();
    assert!(
        text.contains("IDENTITY=CARTOGRAPH_IDENTITY_BOB step 'DELETE'"),
        "{text}"
    );
    let replay = |bob: Option<&str>| {
        let mut cmd = std::process::Command::new("bash");
        cmd.arg(&script).arg(&target).env(
            "CARTOGRAPH_HEADER",
            format!("Authorization: {}", notes::ALICE),
        );
        if let Some(bob) = bob {
            cmd.env("CARTOGRAPH_IDENTITY_BOB", format!("Authorization: {bob}"));
        }
        cmd.output().unwrap()
    };
    let shown = replay(Some(notes::BOB));
    assert_eq!(
        shown.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    // `cartograph replay` of the same reproducer reads bob's header from
    // the same variable.
    let json = script.with_extension("json");
    let replay_json = |bob: Option<&str>| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_cartograph"));
        cmd.args(["replay", json.to_str().unwrap(), "--target", &target, "-H"])
            .arg(format!("Authorization: {}", notes::ALICE));
        if let Some(bob) = bob {
            cmd.env("CARTOGRAPH_IDENTITY_BOB", format!("Authorization: {bob}"));
        }
        cmd.output().unwrap()
    };
    let shown = replay_json(Some(notes::BOB));
    assert_eq!(
        shown.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    let unset = replay_json(None);
    assert_eq!(unset.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unset.stderr).contains("set CARTOGRAPH_IDENTITY_BOB="));
    // Without bob's header the script says which variable to set, before
    // it sends anything (its first step would create a draft).
    let unset = replay(None);
    assert_eq!(unset.status.code(), Some(2));
    let said = String::from_utf8_lossy(&unset.stderr);
    assert!(said.contains("set CARTOGRAPH_IDENTITY_BOB="), "{said}");
    assert!(!said.contains(" -> "), "a request was sent: {said}");
    // Bob's header refused (401 where the run was let in): the script
    // cannot run, and says whose credentials, rather than "did not show".
    let refused = replay(Some("Bearer not-bobs-token"));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{said}");
    assert!(
        said.contains("cannot run: answered 401 where the run was answered 204")
            && said.contains("set CARTOGRAPH_IDENTITY_BOB="),
        "{said}"
    );
    server.abort();
}

#[tokio::test(flavor = "multi_thread")]
async fn one_identity_sends_no_identity_test_and_read_only_skips_the_writes() {
    let (addr, server) = notes::start().await;
    let dir = tempfile::tempdir().unwrap();
    let target = format!("http://{addr}");
    let header = format!("Authorization: {}", notes::ALICE);
    let alone = dir.path().join("alone");
    let run = cartograph(args(&[
        "run",
        notes::SPEC,
        "--target",
        &target,
        "-H",
        &header,
        "--max-requests",
        "400",
        "--seed",
        "1",
        "--no-replay",
        "--out",
        alone.to_str().unwrap(),
    ]))
    .await;
    assert!(
        run.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let report = read_report(&alone);
    assert!(report["search"]["phases"].get("identities").is_none());
    let trace = std::fs::read_to_string(alone.join("trace.ndjson")).unwrap();
    assert!(!trace.contains("\"identity\""));

    // Read-only with a second identity: only reads go as bob.
    let read_only = dir.path().join("read-only");
    let bob = format!("bob=Authorization: {}", notes::BOB);
    let run = cartograph(args(&[
        "run",
        notes::SPEC,
        "--target",
        &target,
        "-H",
        &header,
        "--identity",
        &bob,
        "--read-only",
        "--max-requests",
        "400",
        "--seed",
        "1",
        "--no-replay",
        "--out",
        read_only.to_str().unwrap(),
    ]))
    .await;
    assert!(
        run.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let report = read_report(&read_only);
    let found = security_causes(&report);
    assert!(
        found
            .iter()
            .any(|(c, o, _)| c == "valid_credentials_told_401" && o == "adminUsers"),
        "{found:?}"
    );
    let trace = std::fs::read_to_string(read_only.join("trace.ndjson")).unwrap();
    for line in trace.lines() {
        let ex: Value = serde_json::from_str(line).unwrap();
        if ex["request"]["identity"].is_string() {
            assert_eq!(ex["request"]["method"], "GET", "{line}");
        }
    }
    server.abort();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_auth_file_logs_in_and_a_bad_one_is_told_where() {
    let (addr, server) = notes::start().await;
    let dir = tempfile::tempdir().unwrap();
    let target = format!("http://{addr}");
    let login = |user: &str| {
        serde_json::json!({"name": user, "loginEndpointAuth": {
            "endpoint": "/login", "verb": "POST", "contentType": "application/json",
            "payloadUserPwd": {"username": user, "password": format!("{user}-password"),
                               "usernameField": "user", "passwordField": "password"},
            "token": {"extractFrom": "body", "extractSelector": "/token", "sendIn": "header",
                      "sendName": "Authorization", "sendTemplate": "Bearer {token}"}}})
    };
    let file = dir.path().join("auth.json");
    std::fs::write(
        &file,
        serde_json::json!({"schemaVersion": "0.2.0", "auth": [login("alice"), login("bob")]})
            .to_string(),
    )
    .unwrap();
    let out = dir.path().join("out");
    let run = cartograph(args(&[
        "run",
        notes::SPEC,
        "--target",
        &target,
        "--auth-file",
        file.to_str().unwrap(),
        "--max-requests",
        "600",
        "--seed",
        "1",
        "--no-replay",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    let report = read_report(&out);
    let found = security_causes(&report);
    assert!(
        found
            .iter()
            .any(|(c, o, _)| c == "other_identity_write" && o == "deleteDraft"),
        "{found:?}"
    );
    for f in every_file(&out) {
        let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
        assert!(
            !text.contains("alice-password") && !text.contains("bob-secret-token"),
            "{}",
            f.display()
        );
    }

    // A login the server refuses stops the run (exit 4), naming the
    // identity and never the password.
    let mut wrong = login("bob");
    wrong["loginEndpointAuth"]["payloadUserPwd"]["password"] = "not-bobs-password".into();
    let refused = dir.path().join("refused.json");
    std::fs::write(
        &refused,
        serde_json::json!({"auth": [login("alice"), wrong]}).to_string(),
    )
    .unwrap();
    let run = cartograph(args(&[
        "run",
        notes::SPEC,
        "--target",
        &target,
        "--auth-file",
        refused.to_str().unwrap(),
        "--out",
        dir.path().join("refused-out").to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("the login of identity bob (POST /login) was answered 401"),
        "{stderr}"
    );
    assert!(!stderr.contains("not-bobs-password"), "{stderr}");

    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "auth:\n- name: bob\n  fixedHeaders:\n  - name: Authorization\n",
    )
    .unwrap();
    let run = cartograph(args(&[
        "run",
        notes::SPEC,
        "--target",
        &target,
        "--auth-file",
        bad.to_str().unwrap(),
        "--out",
        dir.path().join("bad-out").to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("bad.yaml: auth[0] (bob).fixedHeaders: [0]: no string `value`"),
        "{stderr}"
    );
    server.abort();
}

/// A run over the named server (tests/support/named.rs) with `extra`
/// arguments: its exit status, stderr and output folder.
async fn named_run(
    target: &str,
    dir: &Path,
    name: &str,
    extra: &[&str],
) -> (Option<i32>, String, std::path::PathBuf) {
    let out = dir.join(name);
    let mut list = vec![
        "run",
        support::named::SPEC,
        "--target",
        target,
        "--seed",
        "1",
        "--no-replay",
        "--out",
        out.to_str().unwrap(),
    ];
    list.extend_from_slice(extra);
    let run = cartograph(args(&list)).await;
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    (run.status.code(), stderr, out)
}

#[tokio::test(flavor = "multi_thread")]
async fn resources_the_client_names_are_tested_across_identities() {
    use support::named;
    let (addr, server) = named::start().await;
    let dir = tempfile::tempdir().unwrap();
    let target = format!("http://{addr}");
    let alice = format!("alice=Authorization: {}", named::ALICE);
    let bob = format!("bob=Authorization: {}", named::BOB);
    let (code, stderr, out) = named_run(
        &target,
        dir.path(),
        "both",
        &[
            "--identity",
            &alice,
            "--identity",
            &bob,
            "--max-requests",
            "1500",
        ],
    )
    .await;
    assert_eq!(code, Some(1), "{stderr}");
    let report = read_report(&out);
    let found = security_causes(&report);
    eprintln!("{found:#?}");
    // Pools and connections are named in the creation's body, and their
    // answers give no id: each identity test creates one of a fresh name
    // (the search's name exists: a second creation is a 409).
    for planted in ["patch_pool", "delete_connection"] {
        assert!(
            found
                .iter()
                .any(|(c, o, w)| c == "other_identity_write" && o == planted && *w == Some(306)),
            "{planted}: {found:?}"
        );
    }
    // Connections are listed to every user: the finding says the API
    // shares them; pools are private, and it does not.
    let message = |op: &str| {
        report["faults"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["code"] == "other_identity_write" && f["operation"] == op)
            .map(|f| f["message"].as_str().unwrap().to_string())
            .unwrap_or_default()
    };
    assert!(
        message("delete_connection").contains("bob also sees it listed (GET /connections)"),
        "{}",
        message("delete_connection")
    );
    assert!(
        !message("patch_pool").contains("listed"),
        "{}",
        message("patch_pool")
    );
    for twin in ["delete_pool", "get_pool", "get_connection"] {
        assert!(
            !found.iter().any(|(_, o, _)| o == twin),
            "a security cause on the twin {twin}: {found:?}"
        );
    }
    // The logout is left out, and the run says so: it would have revoked
    // the token the rest of the run sends.
    assert!(
        stderr.contains("that end the session left out")
            && stderr.contains("logout (GET /auth/logout)"),
        "{stderr}"
    );
    let trace = std::fs::read_to_string(out.join("trace.ndjson")).unwrap();
    assert!(!trace.contains("/auth/logout"));
    assert!(
        !report["warnings"].to_string().contains("no identity test"),
        "{}",
        report["warnings"]
    );

    // Identities given, and nothing the identity tests can follow: a key's
    // answer names no id, and its body no name /keys/{keyId} takes. The
    // run says so, with why and what to do.
    let (code, stderr, out) = named_run(
        &target,
        dir.path(),
        "keys",
        &[
            "--identity",
            &alice,
            "--identity",
            &bob,
            "--include",
            "*_key",
            "--max-requests",
            "300",
        ],
    )
    .await;
    assert!(code.is_some_and(|c| c <= 1), "{stderr}");
    let said = "identities were given (bob), but no identity test on a created resource ran";
    assert!(stderr.contains(said), "{stderr}");
    assert!(stderr.contains("(post_key) give no id"), "{stderr}");
    let report = read_report(&out);
    assert!(
        report["warnings"].to_string().contains(said),
        "{}",
        report["warnings"]
    );

    // Asked to call it, the run logs itself out; the warning blames the
    // GET that did it, not an earlier change.
    let header = format!("Authorization: {}", named::ALICE);
    let (code, stderr, _) = named_run(
        &target,
        dir.path(),
        "logout",
        &["-H", &header, "--call-logout", "--max-requests", "800"],
    )
    .await;
    assert!(code.is_some_and(|c| c <= 1), "{stderr}");
    assert!(stderr.contains("credentials stopped working"), "{stderr}");
    assert!(
        stderr.contains("GET /auth/logout (answered 307)") && stderr.contains("--exclude 'logout'"),
        "{stderr}"
    );
    server.abort();
}
