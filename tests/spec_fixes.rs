//! The spec fixes, end to end, on two purpose-built servers: one whose
//! description drifts in several ways over many operations and which has
//! two distinct server errors (`tests/support/drift.rs`, OpenAPI 3.0), and
//! one whose answers repeat the request's values (`tests/support/echo.rs`,
//! Swagger 2). A seeded run lists each planted cause once, defects first;
//! `spec-fixes.overlay.yaml` is applied with a real overlay tool
//! (`oas-patch`, from PyPI); a second run against the same server with the
//! patched description finds none of the conformance causes the overlay
//! covered, while the operations still answer as before, and the defects
//! remain.
//!
//! The tool is `$OAS_PATCH` or `oas-patch` on the PATH. Without it the
//! second half is skipped, saying so, unless `CARTOGRAPH_REQUIRE_TOOLS` is
//! set (CI sets it): then its absence fails the test. When
//! `openapi-overlays-js` is there too (`$OVERLAYJS` or `overlayjs`), it must
//! patch the description exactly as `oas-patch` does.

use crate::support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use support::cli::{cartograph, read_report};
use support::drift::{DRIFT_SPEC_PATH, Drift};
use support::echo::{ECHO_SPEC_PATH, Echo};

/// Requests per run: every planted cause shows within them for the seed.
const MAX_REQUESTS: &str = "1500";
const SEED: &str = "5";

/// A planted cause: its code, a piece of its title (or of one of its
/// places), the operations it is
/// seen on.
struct Planted {
    code: &'static str,
    title: &'static str,
    operations: &'static [&'static str],
}

const fn planted(
    code: &'static str,
    title: &'static str,
    operations: &'static [&'static str],
) -> Planted {
    Planted {
        code,
        title,
        operations,
    }
}

async fn run(spec: &Path, target: &str, out: &Path) -> (Value, String) {
    let args: Vec<String> = [
        "run",
        &spec.to_string_lossy(),
        "--target",
        target,
        "--seed",
        SEED,
        "--max-requests",
        MAX_REQUESTS,
        "--no-replay",
        "--out",
        &out.to_string_lossy(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let output = cartograph(args).await;
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    (read_report(out), stderr)
}

fn causes(report: &Value) -> &Vec<Value> {
    report["causes"].as_array().expect("causes")
}

fn describe(report: &Value) -> Vec<String> {
    causes(report)
        .iter()
        .map(|c| format!("{} {} {}", c["class"], c["title"], c["operations"]))
        .collect()
}

/// Each planted cause is listed once, with every operation it is on, and
/// nothing else is; defects come first.
fn each_cause_once(report: &Value, planted: &[Planted]) {
    let all = causes(report);
    for p in planted {
        let found: Vec<&Value> = all
            .iter()
            .filter(|c| {
                // A gap through the whole description is one cause that
                // lists its places.
                let places = c["places"].as_array().map_or(&[][..], Vec::as_slice);
                c["code"] == p.code
                    && (c["title"].as_str().unwrap().contains(p.title)
                        || places
                            .iter()
                            .any(|at| at.as_str().unwrap().contains(p.title)))
            })
            .collect();
        assert_eq!(
            found.len(),
            1,
            "{} {:?} once: {:#?}",
            p.code,
            p.title,
            describe(report)
        );
        let ops: BTreeSet<&str> = found[0]["operations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o.as_str().unwrap())
            .collect();
        let want: BTreeSet<&str> = p.operations.iter().copied().collect();
        assert_eq!(ops, want, "{} {:?}", p.code, p.title);
    }
    assert_eq!(all.len(), planted.len(), "{:#?}", describe(report));
    let classes: Vec<&str> = all.iter().map(|c| c["class"].as_str().unwrap()).collect();
    let first_conformance = classes.iter().position(|c| *c == "conformance");
    assert!(
        first_conformance.is_none_or(|i| classes[i..].iter().all(|c| *c == "conformance")),
        "defects first: {classes:?}"
    );
}

/// `$NAME` or `command` on the PATH, when it runs.
fn tool(env: &str, command: &str, probe: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(env) {
        return Some(PathBuf::from(p));
    }
    Command::new(command)
        .arg(probe)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|_| PathBuf::from(command))
}

fn parse(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    cartograph::load::parse_text(&text, path).unwrap()
}

/// Applies `overlay` to `spec` with oas-patch into `dir/patched.json`
/// (checked against openapi-overlays-js when it is there); `None` when
/// oas-patch cannot be run and the tools are not required.
fn apply(spec: &Path, overlay: &Path, dir: &Path) -> Option<PathBuf> {
    let Some(oas_patch) = tool("OAS_PATCH", "oas-patch", "--version") else {
        support::skip_for(
            "applying the overlay and the second run need oas-patch (pip install oas-patch==0.6.0, or set OAS_PATCH)",
        );
        return None;
    };
    let validate = Command::new(&oas_patch)
        .arg("validate")
        .arg(overlay)
        .output()
        .expect("oas-patch runs");
    assert!(
        validate.status.success(),
        "oas-patch validate: {}{}",
        String::from_utf8_lossy(&validate.stdout),
        String::from_utf8_lossy(&validate.stderr)
    );
    let patched = dir.join("patched.json");
    let applied = Command::new(&oas_patch)
        .arg("overlay")
        .arg(spec)
        .arg(overlay)
        .arg("-o")
        .arg(&patched)
        .output()
        .expect("oas-patch runs");
    assert!(
        applied.status.success(),
        "oas-patch overlay: {}",
        String::from_utf8_lossy(&applied.stderr)
    );
    if let Some(overlayjs) = tool("OVERLAYJS", "overlayjs", "--help") {
        let out = Command::new(&overlayjs)
            .arg("--openapi")
            .arg(spec)
            .arg("--overlay")
            .arg(overlay)
            .output()
            .expect("overlayjs runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "overlayjs: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let js = dir.join("patched-overlayjs.yaml");
        std::fs::write(&js, &out.stdout).unwrap();
        assert_eq!(parse(&js), parse(&patched), "the two tools patch alike");
    }
    Some(patched)
}

/// The whole check on one server: the first run, the overlay, the tool,
/// the second run. Causes of the `unsettled` codes get no action: the
/// overlay says why.
async fn check(spec: &str, target: &str, planted: &[Planted], unsettled: &[&str]) {
    // SPEC_FIXES_OUT=DIR keeps the runs' output and the patched description
    // in DIR/<description's name>; by default they go to a temporary folder.
    let temp = tempfile::tempdir().unwrap();
    let dir = match std::env::var_os("SPEC_FIXES_OUT") {
        Some(d) => Path::new(&d).join(Path::new(spec).file_stem().unwrap()),
        None => temp.path().to_path_buf(),
    };
    std::fs::create_dir_all(&dir).unwrap();
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join(spec);
    let first_out = dir.join("first");
    let (first, stderr) = run(&spec, target, &first_out).await;
    each_cause_once(&first, planted);

    let overlay_path = first_out.join("spec-fixes.overlay.yaml");
    assert!(
        stderr.contains("spec fixes:") && stderr.contains("spec-fixes.overlay.yaml"),
        "{stderr}"
    );
    let overlay = parse(&overlay_path);
    assert_eq!(overlay["overlay"], "1.0.0");
    let covered: BTreeSet<String> = overlay["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["x-cartograph-cause"].as_str().unwrap().to_string())
        .collect();
    let conformance: BTreeSet<String> = causes(&first)
        .iter()
        .filter(|c| c["class"] == "conformance")
        .filter(|c| !unsettled.contains(&c["code"].as_str().unwrap()))
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        covered, conformance,
        "every conformance cause has actions, no defect has"
    );
    let text = std::fs::read_to_string(&overlay_path).unwrap();
    let (comment, _) = text.split_once("\noverlay:").unwrap();
    for c in causes(&first) {
        if unsettled.contains(&c["code"].as_str().unwrap()) {
            let id = c["id"].as_str().unwrap();
            assert!(
                comment.contains(id),
                "the opening comment says why {id} has no action: {comment}"
            );
        }
    }

    let Some(patched) = apply(&spec, &overlay_path, &dir) else {
        return;
    };
    let second_out = dir.join("second");
    let (second, _) = run(&patched, target, &second_out).await;
    let left: Vec<&Value> = causes(&second)
        .iter()
        .filter(|c| covered.contains(c["id"].as_str().unwrap()))
        .collect();
    assert!(left.is_empty(), "causes the overlay covered: {left:#?}");
    assert!(
        !causes(&second)
            .iter()
            .any(|c| c["class"] == "conformance"
                && !unsettled.contains(&c["code"].as_str().unwrap())),
        "{:#?}",
        describe(&second)
    );
    // The defects remain, as they were.
    let defects = |r: &Value| -> BTreeSet<String> {
        causes(r)
            .iter()
            .filter(|c| c["class"] == "defect")
            .map(|c| c["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(defects(&second), defects(&first));
    // Gone because the description now says what the server does: every
    // operation and status of the covered faults was answered again.
    for f in first["faults"].as_array().unwrap() {
        if !covered.contains(f["cause"].as_str().unwrap()) {
            continue;
        }
        let op = f["operation"].as_str().unwrap();
        let status = f["status"].to_string();
        let answered = second["operations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["operation"] == op)
            .is_some_and(|o| o["status_counts"].get(&status).is_some());
        assert!(answered, "the second run never had {op} answer {status}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drifting_server_causes_are_listed_once_and_the_overlay_settles_them() {
    let server = Drift::start().await;
    let planted = [
        planted("server_error", "KeyError", &["getStats"]),
        planted("server_error", "ZeroDivisionError", &["placeOrder"]),
        planted(
            "schema_violation",
            "#/components/schemas/Author/properties/born: type",
            &["listAuthors", "getAuthor", "createAuthor"],
        ),
        planted(
            "schema_violation",
            "#/components/schemas/Book: required \"isbn\"",
            &["listBooks", "getBook", "createBook"],
        ),
        planted(
            "schema_violation",
            "#/components/schemas/Loan/properties/state: enum",
            &["listLoans", "getLoan"],
        ),
        planted(
            "schema_violation",
            "#/components/schemas/Tag/properties/count: type",
            &["listTags"],
        ),
        planted(
            "content_type_mismatch",
            "text/plain",
            &["getAuthor", "getBook", "getLoan"],
        ),
        planted(
            "undocumented_status",
            "404",
            &["deleteAuthor", "deleteBook"],
        ),
        planted("html_instead_of_json", "200", &["getHealth"]),
    ];
    check(DRIFT_SPEC_PATH, &server.base_url, &planted, &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn echoing_server_causes_hide_their_values_and_the_overlay_settles_them() {
    let server = Echo::start().await;
    let planted = [
        planted("server_error", "cannot delete", &["deletePet"]),
        planted(
            "undocumented_status",
            "404",
            &["getPet", "deletePet", "getFeedingTime"],
        ),
        planted("undocumented_status", "400", &["listPets"]),
        planted(
            "schema_violation",
            "#/definitions/Pet/properties/tag: type",
            &["listPets", "getPet", "createPet"],
        ),
        planted(
            "schema_violation",
            "#/definitions/Results/properties/took: type",
            &["search"],
        ),
        planted("content_type_mismatch", "text/plain", &["getFeedingTime"]),
        // The server takes any species: its fix is in the server.
        planted(
            "invalid_input_accepted",
            "body /species: not in enum",
            &["createPet"],
        ),
    ];
    check(
        ECHO_SPEC_PATH,
        &server.base_url,
        &planted,
        &["invalid_input_accepted"],
    )
    .await;
}
