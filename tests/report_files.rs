//! `junit.xml` and `report.html`: the JUnit file validates against the Ant
//! JUnit schema CI systems read and its counts match the run; the page holds
//! the summary numbers, the graph as SVG, the progress plot, and escapes what
//! the server and the run put in it. Checked on a report built by hand (every
//! kind of operation and fault) and on a real run against the demo API.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use cartograph::execution::secrets::Secrets;
use cartograph::generation::SearchSummary;
use cartograph::oracles::{Confirmation, Fault, Reproducer, WitnessStep};
use cartograph::reports::{
    dot_to_svg, render_html, render_junit, write_extras, DotError, GraphPicture, OperationReport,
    Report, Settings, GRAPHVIZ_MISSING,
};
use quick_xml::events::Event;
use serde_json::Value;

/// A message as a hostile or careless server could make the oracle report it.
const NASTY: &str = "status 418 <script>alert(\"x\")</script> & more \u{1}\u{1b}[0m";

fn schema() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/junit/JUnit.xsd")
}

/// Validates `file` with xmllint; `false` (after saying so) when xmllint is
/// not installed, so the test can stop there.
fn validate(file: &Path) -> bool {
    let out = match Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(schema())
        .arg(file)
        .output()
    {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            println!("skipped: xmllint not installed (apt install libxml2-utils)");
            return false;
        }
        Err(e) => panic!("xmllint: {e}"),
    };
    assert!(
        out.status.success(),
        "{} does not validate against JUnit.xsd:\n{}\n{}",
        file.display(),
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(file).unwrap_or_default()
    );
    true
}

fn demo_api() -> cartograph::model::Api {
    cartograph::spec::load_text(
        cartograph::demo::OPENAPI_YAML,
        Path::new("models/demo/openapi.yaml"),
    )
    .unwrap()
    .api
}

fn dot_installed() -> bool {
    Command::new("dot").arg("-V").output().is_ok()
}

fn step(seq: u64, operation: &str, method: &str, path: &str, status: Option<u16>) -> WitnessStep {
    WitnessStep {
        seq,
        operation: operation.into(),
        method: method.into(),
        path: path.into(),
        status,
    }
}

fn op(
    name: &str,
    method: &str,
    path: &str,
    statuses: &[(&str, u64)],
    failures: &[(&str, u64)],
) -> OperationReport {
    OperationReport {
        operation: name.into(),
        method: method.into(),
        path: path.into(),
        line: None,
        spec: None,
        status_counts: statuses.iter().map(|(k, n)| (k.to_string(), *n)).collect(),
        failures: failures.iter().map(|(k, n)| (k.to_string(), *n)).collect(),
    }
}

/// A report with one operation of each kind (2xx, only 4xx, only 5xx, only
/// timeouts, never called) and three faults: confirmed with a reproducer,
/// flaky, and one whose message holds markup and control characters.
fn hand_built() -> Report {
    let settings = Settings {
        target: "http://127.0.0.1:8080/api".into(),
        spec: Some("specs/shop api.yaml".into()),
        seed: 4242,
        budget_s: Some(120.0),
        max_requests: Some(1234),
        rate_per_s: None,
        burst: 1,
        concurrency: 1,
        read_only: false,
        timeout_s: 10.0,
        headers: vec!["Authorization".into()],
        auth_command: false,
        skipped_checks: vec![],
        graph: true,
        feedback: true,
    };
    let faults = vec![
        Fault {
            code: "server_error".into(),
            operation: "placeOrder".into(),
            status: Some(500),
            signature: "server_error:placeOrder:500".into(),
            message: "the server answered 500".into(),
            count: 7,
            first_seq: 311,
            witness: vec![
                step(300, "createBook", "POST", "/books", Some(201)),
                step(305, "updateBook", "PATCH", "/books/17", Some(200)),
                step(311, "placeOrder", "POST", "/orders", Some(500)),
            ],
            confirmation: Confirmation::Confirmed,
            reproducer: Some(Reproducer {
                steps: vec![
                    step(0, "createBook", "POST", "/books", Some(201)),
                    step(1, "placeOrder", "POST", "/orders", Some(500)),
                ],
                shell: "reproducers/server_error-placeOrder-500.sh".into(),
                json: "reproducers/server_error-placeOrder-500.json".into(),
                requests: 9,
                standalone: true,
            }),
        },
        Fault {
            code: "server_error".into(),
            operation: "cancelOrder".into(),
            status: Some(503),
            signature: "server_error:cancelOrder:503".into(),
            message: "the server answered 503".into(),
            count: 1,
            first_seq: 900,
            witness: vec![step(900, "cancelOrder", "DELETE", "/orders/3", Some(503))],
            confirmation: Confirmation::Flaky,
            reproducer: None,
        },
        Fault {
            code: "undocumented_status".into(),
            operation: "listAuthors".into(),
            status: Some(418),
            signature: "undocumented_status:listAuthors:418".into(),
            message: NASTY.into(),
            count: 2,
            first_seq: 42,
            witness: vec![],
            confirmation: Confirmation::NotReplayed,
            reproducer: None,
        },
    ];
    let covered_at: Vec<(String, u64)> =
        [0u64, 0, 1, 2, 5, 9, 40, 41, 42, 120, 311, 600, 900, 1100]
            .iter()
            .enumerate()
            .map(|(i, seq)| (format!("status:op{i}:200"), *seq))
            .collect();
    Report {
        tool: BTreeMap::from([("name", "cartograph"), ("version", "0.1.0")]),
        settings,
        requests: 1234,
        refused_mutations: 0,
        stop: "max_requests".into(),
        elapsed_s: 12.5,
        operations: vec![
            op(
                "listBooks",
                "GET",
                "/books",
                &[("200", 40), ("400", 3)],
                &[],
            ),
            op(
                "placeOrder",
                "POST",
                "/orders",
                &[("201", 5), ("500", 7)],
                &[],
            ),
            op(
                "listAuthors",
                "GET",
                "/authors",
                &[("400", 9), ("418", 2)],
                &[],
            ),
            op(
                "cancelOrder",
                "DELETE",
                "/orders/{id}",
                &[("503", 1)],
                &[("timeout", 1)],
            ),
            op("slowReport", "GET", "/report", &[], &[("timeout", 4)]),
            op("deleteAuthor", "DELETE", "/authors/{id}", &[], &[]),
        ],
        operations_reached: 2,
        faults,
        schema_coverage: None,
        query_log: None,
        search: Some(SearchSummary {
            tests: 300,
            targets: 40,
            covered: covered_at.len(),
            covered_by_kind: BTreeMap::from([("status".to_string(), covered_at.len())]),
            suite: 12,
            graph_sequences: 6,
            sampled: BTreeMap::new(),
            improvements: BTreeMap::new(),
            covered_at,
        }),
    }
}

/// A `<testsuite>`'s attributes and what its test cases hold.
#[derive(Debug, Default)]
struct Suite {
    attrs: BTreeMap<String, String>,
    cases: Vec<(String, String)>,
    failures: usize,
    errors: usize,
    skipped: usize,
}

impl Suite {
    fn attr(&self, name: &str) -> usize {
        self.attrs[name].parse().unwrap()
    }
}

/// The suites of a junit.xml, read with a real XML parser.
fn suites(xml: &str) -> BTreeMap<String, Suite> {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut out = BTreeMap::new();
    let mut current: Option<Suite> = None;
    loop {
        let event = reader.read_event().expect("well-formed XML");
        let (e, _empty) = match &event {
            Event::Start(e) => (e.clone(), false),
            Event::Empty(e) => (e.clone(), true),
            Event::End(e) if e.name().as_ref() == b"testsuite" => {
                let s = current.take().unwrap();
                out.insert(s.attrs["name"].clone(), s);
                continue;
            }
            Event::Eof => break,
            _ => continue,
        };
        let attrs: BTreeMap<String, String> = e
            .attributes()
            .map(|a| {
                let a = a.unwrap();
                (
                    String::from_utf8(a.key.as_ref().to_vec()).unwrap(),
                    a.unescape_value().unwrap().into_owned(),
                )
            })
            .collect();
        match e.name().as_ref() {
            b"testsuite" => {
                current = Some(Suite {
                    attrs,
                    ..Suite::default()
                })
            }
            b"testcase" => current
                .as_mut()
                .unwrap()
                .cases
                .push((attrs["classname"].clone(), attrs["name"].clone())),
            b"failure" => current.as_mut().unwrap().failures += 1,
            b"error" => current.as_mut().unwrap().errors += 1,
            b"skipped" => current.as_mut().unwrap().skipped += 1,
            _ => {}
        }
    }
    out
}

#[test]
fn junit_validates_against_the_ant_schema_and_its_counts_match() {
    let report = hand_built();
    let dir = tempfile::tempdir().unwrap();
    let xml = render_junit(
        &report,
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
        &Secrets::new(),
    );
    let file = dir.path().join("junit.xml");
    std::fs::write(&file, &xml).unwrap();

    let suites = suites(&xml);
    let ops = &suites["operations"];
    assert_eq!(ops.attrs["timestamp"], "2023-11-14T22:13:20");
    assert_eq!(ops.attrs["hostname"], "127.0.0.1");
    assert_eq!(ops.attrs["time"], "12.500");
    assert_eq!(ops.attr("tests"), report.operations.len());
    assert_eq!(ops.cases.len(), report.operations.len());
    // 2xx reached: pass. Only 4xx, only 5xx, never called: skipped. Only timeouts: error.
    assert_eq!((ops.attr("failures"), ops.failures), (0, 0));
    assert_eq!((ops.attr("skipped"), ops.skipped), (3, 3));
    assert_eq!((ops.attr("errors"), ops.errors), (1, 1));
    assert_eq!(
        ops.cases[0],
        ("operations".into(), "GET /books (listBooks)".into())
    );
    assert!(xml.contains("<skipped message=\"never called\"/>"), "{xml}");
    assert!(
        xml.contains("never answered 2xx (answers: 400×9, 418×2)"),
        "{xml}"
    );

    let faults = &suites["faults"];
    assert_eq!(faults.attr("tests"), report.faults.len());
    assert_eq!((faults.attr("failures"), faults.failures), (3, 3));
    assert_eq!((faults.attr("errors"), faults.attr("skipped")), (0, 0));
    assert_eq!(
        faults.cases[0],
        (
            "faults.server_error".into(),
            "server_error:placeOrder:500".into()
        )
    );
    assert!(
        xml.contains("sh reproducers/server_error-placeOrder-500.sh"),
        "{xml}"
    );
    assert!(xml.contains("  1. POST /books -&gt; 201"), "{xml}");
    assert!(xml.contains("confirmation: confirmed"), "{xml}");
    assert!(xml.contains("the server answered 503 (flaky)"), "{xml}");
    // Markup escaped, control characters XML forbids dropped.
    assert!(
        xml.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; more [0m"),
        "{xml}"
    );
    assert!(!xml.contains("<script"));
    assert!(!xml
        .chars()
        .any(|c| c < ' ' && !matches!(c, '\t' | '\n' | '\r')));

    validate(&file);
}

#[test]
fn the_page_shows_the_summary_faults_operations_plot_and_graph() {
    let report = hand_built();
    let dot = cartograph::graph::export::render(
        &cartograph::graph::build(&demo_api()),
        cartograph::graph::export::Format::Dot,
    );
    let picture = match dot_to_svg(&dot, Duration::from_secs(60)) {
        Ok(svg) => GraphPicture::Svg(svg),
        Err(DotError::NotInstalled) => {
            println!("note: Graphviz not installed; the graph is checked as missing");
            GraphPicture::Missing(GRAPHVIZ_MISSING.into())
        }
        Err(e) => panic!("{e}"),
    };
    let html = render_html(&report, &picture, &Secrets::new());
    // Kept for scripts/screenshot.sh: every kind of fault and operation.
    let sample = sample_dir().join("hand-built");
    std::fs::create_dir_all(&sample).unwrap();
    std::fs::write(sample.join("report.html"), &html).unwrap();

    // Self-contained: no script, nothing fetched.
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(!html.contains("<script"), "a <script> in the page");
    for external in ["<link", "src=\"http", "@import", "url(http"] {
        assert!(!html.contains(external), "{external} in the page");
    }
    // Summary.
    for needle in [
        "http://127.0.0.1:8080/api",
        "seed 4242",
        "<div class=\"n\">1234</div>",
        "12.5 s",
        "max_requests",
        "<div class=\"n\">2 of 6</div>",
        "<div class=\"n\">3</div><div class=\"l\">faults found",
        "1 confirmed, 1 flaky, 1 not replayed",
        "server_error 2</span>",
        "undocumented_status 1</span>",
        "14 of 40 testing targets covered",
    ] {
        assert!(html.contains(needle), "no {needle:?} in the page");
    }
    // Faults: witness, reproducer, link to its script, escaped message.
    assert!(html.contains("<span class=\"seq\">#305</span> <code><span class=\"method\">PATCH</span> /books/17</code>"));
    assert!(html.contains(
        "<a href=\"reproducers/server_error-placeOrder-500.sh\"><code>reproducers/server_error-placeOrder-500.sh</code></a>"
    ));
    assert!(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; more"));
    assert!(!html.contains('\u{1b}') && !html.contains('\u{1}'));
    // Operations coloured by what they reached.
    for (class, op) in [
        ("ok", "listBooks"),
        ("warn", "listAuthors"),
        ("bad", "cancelOrder"),
        ("bad", "slowReport"),
        ("never", "deleteAuthor"),
    ] {
        let row = html
            .lines()
            .find(|l| l.starts_with("<tr") && l.contains(&format!("<td>{op}</td>")))
            .unwrap_or_else(|| panic!("no row for {op}"));
        assert!(row.starts_with(&format!("<tr class=\"{class}\"")), "{row}");
    }
    // The plot: two step lines ending at the last request, with axis ticks.
    let targets = polyline(&html, "targets");
    let faults = polyline(&html, "faults");
    assert_eq!(
        targets.len(),
        2 + 2 * 13,
        "14 targets at 13 distinct requests"
    );
    assert_eq!(faults.len(), 2 + 2 * 3);
    assert!(
        targets
            .windows(2)
            .all(|w| w[1].0 >= w[0].0 && w[1].1 <= w[0].1),
        "steps only go right and up"
    );
    assert_eq!(targets.last().unwrap().0, faults.last().unwrap().0);
    assert!(html.contains(">requests sent</text>") && html.contains(">1200</text>"));
    assert!(html.contains("targets covered (14)") && html.contains("faults found (3)"));
    // The graph.
    match picture {
        GraphPicture::Svg(_) => {
            let graph = &html[html.find("id=\"graph\"").unwrap()..];
            assert!(graph.contains("<svg"), "no graph SVG");
            assert!(
                graph.contains("placeOrder"),
                "the graph names the operations"
            );
            assert!(!html.contains("<?xml") && !html.contains("<!DOCTYPE svg"));
        }
        GraphPicture::Missing(_) => assert!(html.contains("Graphviz not installed")),
    }
}

/// The points of the plot's polyline of this class.
fn polyline(html: &str, class: &str) -> Vec<(f64, f64)> {
    let start = html
        .find(&format!("<polyline class=\"{class}\""))
        .unwrap_or_else(|| panic!("no {class} polyline"));
    let rest = &html[start..];
    let points = &rest[rest.find("points=\"").unwrap() + 8..];
    let points = &points[..points.find('"').unwrap()];
    points
        .split(' ')
        .map(|p| {
            let (x, y) = p.split_once(',').unwrap();
            (x.parse().unwrap(), y.parse().unwrap())
        })
        .collect()
}

#[test]
fn without_graphviz_the_page_says_how_to_get_the_graph() {
    let html = render_html(
        &hand_built(),
        &GraphPicture::Missing(DotError::NotInstalled.page_note()),
        &Secrets::new(),
    );
    assert!(html.contains(
        "Graphviz not installed: install it (apt install graphviz / brew install graphviz) to see the graph here; graph-final.json holds it."
    ));
    if dot_installed() {
        let err = dot_to_svg("digraph { a -> ", Duration::from_secs(20)).unwrap_err();
        assert!(matches!(err, DotError::Failed(_)), "{err:?}");
    }
}

#[test]
fn secrets_are_redacted_from_both_files_even_with_markup_in_them() {
    let secret = "tok&<en>-1234";
    let secrets = Secrets::new();
    secrets.add(secret);
    let mut report = hand_built();
    report.settings.target = format!("http://127.0.0.1:8080/?key={secret}");
    report.faults[0].witness[0].path = format!("/books?token={secret}");
    report.faults[0].message = format!("echoed {secret}");
    let dir = tempfile::tempdir().unwrap();
    let dot = format!("digraph {{ \"{}\" -> b }}", secret.replace('"', ""));
    let warnings = write_extras(dir.path(), &report, &dot, &secrets).unwrap();
    if dot_installed() {
        assert!(warnings.is_empty(), "{warnings:?}");
    } else {
        assert!(
            warnings[0].contains("graphviz (dot) not found"),
            "{warnings:?}"
        );
    }
    let escaped = "tok&amp;&lt;en&gt;-1234";
    for name in ["junit.xml", "report.html"] {
        let text = std::fs::read_to_string(dir.path().join(name)).unwrap();
        assert!(
            !text.contains(secret) && !text.contains(escaped),
            "the secret in {name}"
        );
        assert!(text.contains("[REDACTED]"), "{name}");
    }
    validate(&dir.path().join("junit.xml"));
}

/// Where the sample page goes for `scripts/screenshot.sh`.
fn sample_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("report-sample")
}

/// Runs `cartograph demo` (1500 requests, seed 7) into `dir`; its report.json.
fn demo_run(dir: &Path) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_cartograph"))
        .args(["demo", "--max-requests", "1500", "--seed", "7", "--out"])
        .arg(dir)
        .output()
        .expect("binary runs");
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap()
}

fn string_map<T>(v: &Value, f: impl Fn(&Value) -> T) -> BTreeMap<String, T> {
    v.as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), f(v))).collect())
        .unwrap_or_default()
}

fn steps(v: &Value) -> Vec<WitnessStep> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| WitnessStep {
            seq: s["seq"].as_u64().unwrap(),
            operation: s["operation"].as_str().unwrap().into(),
            method: s["method"].as_str().unwrap().into(),
            path: s["path"].as_str().unwrap().into(),
            status: s["status"].as_u64().map(|s| s as u16),
        })
        .collect()
}

/// The [`Report`] a report.json was written from (the type is not
/// deserialisable, and the run's entry point is not public).
fn report_from_json(r: &Value) -> Report {
    let s = &r["settings"];
    let text = |v: &Value| v.as_str().unwrap().to_string();
    let texts = |v: &Value| v.as_array().unwrap().iter().map(text).collect();
    Report {
        tool: BTreeMap::from([
            ("name", "cartograph"),
            ("version", env!("CARGO_PKG_VERSION")),
        ]),
        settings: Settings {
            target: text(&s["target"]),
            spec: s["spec"].as_str().map(str::to_string),
            seed: s["seed"].as_u64().unwrap(),
            budget_s: s["budget_s"].as_f64(),
            max_requests: s["max_requests"].as_u64(),
            rate_per_s: s["rate_per_s"].as_f64(),
            burst: s["burst"].as_u64().unwrap() as u32,
            concurrency: s["concurrency"].as_u64().unwrap() as usize,
            read_only: s["read_only"].as_bool().unwrap(),
            timeout_s: s["timeout_s"].as_f64().unwrap(),
            headers: texts(&s["headers"]),
            auth_command: s["auth_command"].as_bool().unwrap(),
            skipped_checks: texts(&s["skipped_checks"]),
            graph: s["graph"].as_bool().unwrap(),
            feedback: s["feedback"].as_bool().unwrap(),
        },
        requests: r["requests"].as_u64().unwrap(),
        refused_mutations: r["refused_mutations"].as_u64().unwrap(),
        stop: text(&r["stop"]),
        elapsed_s: r["elapsed_s"].as_f64().unwrap(),
        operations: r["operations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| OperationReport {
                operation: text(&o["operation"]),
                method: text(&o["method"]),
                path: text(&o["path"]),
                line: o["line"].as_u64().map(|l| l as u32),
                spec: o["spec"].as_str().map(str::to_string),
                status_counts: string_map(&o["status_counts"], |v| v.as_u64().unwrap()),
                failures: string_map(&o["failures"], |v| v.as_u64().unwrap()),
            })
            .collect(),
        operations_reached: r["operations_reached"].as_u64().unwrap() as usize,
        faults: r["faults"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| Fault {
                code: text(&f["code"]),
                operation: text(&f["operation"]),
                status: f["status"].as_u64().map(|s| s as u16),
                signature: text(&f["signature"]),
                message: text(&f["message"]),
                count: f["count"].as_u64().unwrap(),
                first_seq: f["first_seq"].as_u64().unwrap(),
                witness: steps(&f["witness"]),
                confirmation: match f["confirmation"].as_str().unwrap() {
                    "confirmed" => Confirmation::Confirmed,
                    "flaky" => Confirmation::Flaky,
                    _ => Confirmation::NotReplayed,
                },
                reproducer: f.get("reproducer").map(|p| Reproducer {
                    steps: steps(&p["steps"]),
                    shell: text(&p["shell"]),
                    json: text(&p["json"]),
                    requests: p["requests"].as_u64().unwrap(),
                    standalone: p["standalone"].as_bool().unwrap_or(true),
                }),
            })
            .collect(),
        schema_coverage: None,
        query_log: None,
        search: r.get("search").map(|s| SearchSummary {
            tests: s["tests"].as_u64().unwrap(),
            targets: s["targets"].as_u64().unwrap() as usize,
            covered: s["covered"].as_u64().unwrap() as usize,
            covered_by_kind: string_map(&s["covered_by_kind"], |v| v.as_u64().unwrap() as usize),
            suite: s["suite"].as_u64().unwrap() as usize,
            graph_sequences: s["graph_sequences"].as_u64().unwrap() as usize,
            sampled: string_map(&s["sampled"], |v| v.as_u64().unwrap()),
            improvements: string_map(&s["improvements"], |v| v.as_u64().unwrap()),
            covered_at: s["covered_at"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| (text(&p[0]), p[1].as_u64().unwrap()))
                .collect(),
        }),
    }
}

/// A real run of the binary against the demo API, its report rendered with
/// the graph of the demo's description.
#[test]
fn a_real_demo_run_renders_valid_files() {
    let dir = tempfile::tempdir().unwrap();
    let report = report_from_json(&demo_run(dir.path()));
    assert_eq!(report.requests, 1500);
    assert!(!report.faults.is_empty(), "the demo has faults to find");

    let dot = cartograph::graph::export::render(
        &cartograph::graph::build(&demo_api()),
        cartograph::graph::export::Format::Dot,
    );
    let warnings = write_extras(dir.path(), &report, &dot, &Secrets::new()).unwrap();
    let xml = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();

    let suites = suites(&xml);
    assert_eq!(suites["operations"].attr("tests"), report.operations.len());
    let not_reached = report.operations.len() - report.operations_reached;
    assert_eq!(
        suites["operations"].attr("skipped") + suites["operations"].attr("errors"),
        not_reached
    );
    assert_eq!(suites["faults"].attr("tests"), report.faults.len());
    assert_eq!(suites["faults"].attr("failures"), report.faults.len());
    validate(&dir.path().join("junit.xml"));

    assert!(html.contains(&format!("<div class=\"n\">{}</div>", report.requests)));
    assert!(html.contains(&format!(
        "<div class=\"n\">{} of {}</div>",
        report.operations_reached,
        report.operations.len()
    )));
    for f in &report.faults {
        assert!(
            html.contains(&format!("<code>{}</code>", f.signature)),
            "{}",
            f.signature
        );
    }
    let covered = report.search.as_ref().map_or(0, |s| s.covered_at.len());
    assert!(covered > 0);
    assert!(html.contains(&format!("targets covered ({covered})")));
    assert!(polyline(&html, "targets").len() > 2);
    if dot_installed() {
        assert!(warnings.is_empty(), "{warnings:?}");
        assert!(html[html.find("id=\"graph\"").unwrap()..].contains("<svg"));
    }

    // Kept for scripts/screenshot.sh.
    let sample = sample_dir();
    std::fs::create_dir_all(&sample).unwrap();
    std::fs::write(sample.join("report.html"), &html).unwrap();
    std::fs::write(sample.join("junit.xml"), &xml).unwrap();
}

/// The binary writes both files itself at the end of a run.
#[test]
fn the_demo_command_writes_junit_and_html() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cartograph"))
        .args(["demo", "--max-requests", "1500", "--seed", "7", "--out"])
        .arg(dir.path())
        .output()
        .expect("binary runs");
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for name in ["junit.xml", "report.html"] {
        assert!(dir.path().join(name).is_file(), "no {name}");
    }
    validate(&dir.path().join("junit.xml"));
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.contains("<div class=\"n\">1500</div>"));
}
