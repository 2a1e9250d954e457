//! `junit.xml`, `report.sarif` and `report.html`: the JUnit file validates
//! against the Ant JUnit schema CI systems read and its counts match the run;
//! the SARIF file validates against the OASIS SARIF 2.1.0 schema and holds one
//! result per fault, located at the operation; the page holds the summary
//! numbers, the graph as data for its explorer (parsed back and compared with
//! the export), the progress plot, and escapes what the server and the run put
//! in it. Checked on a report built by hand (every kind of operation and
//! fault), on a real run against the demo API, and on the Kubernetes
//! description's graph (945 operations).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

use cartograph::execution::OutDir;
use cartograph::execution::secrets::Secrets;
use cartograph::faults::{Confirmation, Fault, Reproducer, WitnessStep};
use cartograph::generation::SearchSummary;
use cartograph::graph::export::{GraphDocument, to_document};
use cartograph::oracles::registry::Code;
use cartograph::reports::{
    GRAPH_DATA_ID, GraphCoverage, LinkCoverage, NOSCRIPT_EDGES, OperationReport, Report, Settings,
    render_html, render_junit, render_sarif, write_extras, write_report,
};
use quick_xml::events::Event;

use crate::support;
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
            support::skip_for("xmllint not installed (apt install libxml2-utils)");
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
    cartograph::load::load_text(
        cartograph::testing::OPENAPI_YAML,
        Path::new("models/demo/openapi.yaml"),
    )
    .unwrap()
    .api
}

/// The demo description's graph, as the run exports it.
fn demo_graph() -> GraphDocument {
    to_document(&cartograph::graph::build(&demo_api()))
}

/// The graph data embedded in the page, parsed back.
fn embedded_data(html: &str) -> Value {
    let open = format!("<script type=\"application/json\" id=\"{GRAPH_DATA_ID}\">");
    let start = html.find(&open).expect("no graph data in the page") + open.len();
    let len = html[start..]
        .find("</script>")
        .expect("graph data not closed");
    serde_json::from_str(&html[start..start + len]).expect("graph data is JSON")
}

/// A graph of the embedded data, in the export's terms: node ids with their
/// names, edges as (id, origin, state, label).
#[derive(Debug, PartialEq)]
struct Drawn {
    title: String,
    nodes: Vec<(String, String)>,
    edges: Vec<(String, String, String, String)>,
}

/// Decodes one graph of the embedded data (layout in src/reports/explorer.rs).
fn decode(data: &Value, g: usize) -> Drawn {
    let kinds: Vec<&str> = data["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    let origins: Vec<&str> = data["origins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    let graph = &data["graphs"][g];
    let nodes: Vec<(String, String)> = graph["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            let id = n[0].as_str().unwrap().to_string();
            let name = match n.get(2).and_then(Value::as_str) {
                Some(name) => name.to_string(),
                None => id.split_once(':').unwrap().1.to_string(),
            };
            (id, name)
        })
        .collect();
    let edges = graph["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let node = |i: &Value| nodes[i.as_u64().unwrap() as usize].0.clone();
            (
                format!(
                    "{}:{}->{}",
                    kinds[e[0].as_u64().unwrap() as usize],
                    node(&e[1]),
                    node(&e[2])
                ),
                origins[e[3].as_u64().unwrap() as usize].to_string(),
                if e[4] == 1 { "suspended" } else { "active" }.to_string(),
                e[6].as_str().unwrap().to_string(),
            )
        })
        .collect();
    Drawn {
        title: graph["title"].as_str().unwrap().to_string(),
        nodes,
        edges,
    }
}

/// The same view of an export document.
fn expected(doc: &GraphDocument) -> Drawn {
    Drawn {
        title: doc.api.title.clone(),
        nodes: doc
            .nodes
            .iter()
            .map(|n| (n.id.clone(), n.name.clone()))
            .collect(),
        edges: doc
            .edges
            .iter()
            .map(|e| {
                (
                    e.id.clone(),
                    e.origin.as_str().to_string(),
                    serde_json::to_value(e.state)
                        .unwrap()
                        .as_str()
                        .unwrap()
                        .to_string(),
                    e.label.clone(),
                )
            })
            .collect(),
    }
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
        include: vec![],
        exclude: vec![],
        excluded_operations: vec![],
        rate_for: Default::default(),
        insecure: false,
    };
    let faults = vec![
        Fault {
            cause: "C00000001".into(),
            cause_title: "The server answered 500-599: placeOrder (500)".into(),
            place: None,
            class: Code::ServerError.oracle().class,
            severity: Code::ServerError.oracle().severity,
            code: Code::ServerError,
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
                unmade: Vec::new(),
                not_standalone: Vec::new(),
                planted: 0,
                fresh: None,
            }),
        },
        Fault {
            cause: "C00000003".into(),
            cause_title: "The server answered 500-599: cancelOrder (503)".into(),
            place: None,
            class: Code::ServerError.oracle().class,
            severity: Code::ServerError.oracle().severity,
            code: Code::ServerError,
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
            cause: "C00000002".into(),
            cause_title: "The status is not documented for the operation: 418".into(),
            place: None,
            class: Code::UndocumentedStatus.oracle().class,
            severity: Code::UndocumentedStatus.oracle().severity,
            code: Code::UndocumentedStatus,
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
        excluded_requests: 0,
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
        causes: cartograph::faults::causes::group(&faults),
        faults,
        schema_coverage: None,
        query_log: None,
        warnings: Vec::new(),
        graph_coverage: None,
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
            learnt_constraints: Vec::new(),
            ..Default::default()
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

    let causes = &suites["causes"];
    assert_eq!(causes.attr("tests"), report.causes.len());
    assert_eq!((causes.attr("failures"), causes.failures), (3, 3));
    assert_eq!((causes.attr("errors"), causes.attr("skipped")), (0, 0));
    assert_eq!(causes.cases[0].0, "causes.defect.server_error");
    assert!(
        causes.cases[0].1.starts_with("C00000001 "),
        "{:?}",
        causes.cases[0]
    );
    assert_eq!(causes.cases[2].0, "causes.conformance.undocumented_status");
    assert!(
        xml.contains("sh reproducers/server_error-placeOrder-500.sh"),
        "{xml}"
    );
    assert!(xml.contains("  1. POST /books -&gt; 201"), "{xml}");
    assert!(xml.contains("confirmation: confirmed"), "{xml}");
    assert!(
        xml.contains("(cancelOrder) (503) (flaky)") || xml.contains("cancelOrder (503) (flaky)"),
        "{xml}"
    );
    assert!(xml.contains("the server answered 503"), "{xml}");
    // Markup escaped, control characters XML forbids dropped.
    assert!(
        xml.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; more [0m"),
        "{xml}"
    );
    assert!(!xml.contains("<script"));
    assert!(
        !xml.chars()
            .any(|c| c < ' ' && !matches!(c, '\t' | '\n' | '\r'))
    );

    validate(&file);
}

#[test]
fn the_page_shows_the_summary_faults_operations_plot_and_graph() {
    let report = hand_built();
    let doc = demo_graph();
    let html = render_html(&report, std::slice::from_ref(&doc), &Secrets::new());
    // Kept for scripts/screenshot.sh: every kind of fault and operation.
    let sample = sample_dir().join("hand-built");
    std::fs::create_dir_all(&sample).unwrap();
    std::fs::write(sample.join("report.html"), &html).unwrap();

    // The causes lead, defects first, each linking to its faults below.
    let causes_at = html
        .find("<h2 id=\"causes\">Causes (3)</h2>")
        .expect("a causes section");
    let faults_at = html
        .find("<h2 id=\"faults\">All faults (3)</h2>")
        .expect("all faults");
    assert!(causes_at < faults_at);
    let classes: Vec<&str> = html
        .match_indices("<article class=\"cause ")
        .map(|(i, _)| html[i + 22..].split('"').next().unwrap())
        .collect();
    assert_eq!(classes, ["defect", "defect", "conformance"]);
    assert!(html.contains("<a href=\"#fault-0\"><code>server_error:placeOrder:500</code></a>"));
    assert!(html.contains("id=\"fault-0\""));

    // Self-contained: the script is inline, nothing is fetched.
    assert!(html.starts_with("<!DOCTYPE html>"));
    for external in [
        "<link",
        "src=",
        "@import",
        "url(http",
        "url(//",
        "fetch(",
        "XMLHttpRequest",
        "https://",
    ] {
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
    // No coverage recorded: the summary does not invent one.
    assert!(!html.contains("links exercised"));
    // Faults: witness, reproducer, link to its script, escaped message.
    assert!(html.contains(
        "<span class=\"seq\">#305</span> <code><span class=\"method\">PATCH</span> /books/17</code>"
    ));
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

    // The graph: its data, the explorer's mount point and script, the fallback.
    let graph = &html[html.find("id=\"graph\"").unwrap()..];
    assert!(graph.contains("<div id=\"gx\" class=\"gx\""));
    assert_eq!(
        html.matches("<script").count(),
        2,
        "the data and the explorer"
    );
    assert!(
        graph.contains("JSON.parse(dataEl.textContent)"),
        "the explorer's script"
    );
    let data = embedded_data(&html);
    assert_eq!(data["version"], 1);
    assert_eq!(data["graphs"].as_array().unwrap().len(), 1);
    assert_eq!(data["coverage"], Value::Null);
    assert_eq!(decode(&data, 0), expected(&doc));
    assert!(doc.edges.len() > 20 && doc.nodes.len() > 15, "a real graph");
    // Without JavaScript: no empty explorer box or help promising one (the
    // script unhides them), a note and the edges as a table.
    assert!(graph.contains("<div id=\"gx\" class=\"gx\" data-state=\"loading\" hidden></div>"));
    assert!(graph.contains("<p class=\"sub gx-help\" hidden>"));
    let noscript = &graph[graph.find("<noscript>").unwrap()..graph.find("</noscript>").unwrap()];
    assert!(noscript.contains("The graph explorer needs JavaScript"));
    let rows = noscript.matches("<tr><td>").count();
    assert_eq!(rows, doc.edges.len().min(NOSCRIPT_EDGES));
    let consumes = doc
        .edges
        .iter()
        .find(|e| e.kind.as_str() == "consumes")
        .unwrap();
    assert!(
        noscript.contains(&format!(
            "<td>consumes</td><td>{}</td>",
            consumes.source.trim_start_matches("schema:")
        )),
        "consumes edges are listed first"
    );
}

#[test]
fn two_graphs_are_both_embedded_for_the_selector() {
    let rest = demo_graph();
    let graphql = to_document(&cartograph::graph::build(
        &cartograph::load::load_text(
            cartograph::testing::GRAPHQL_SDL,
            Path::new("models/demo/schema.graphql"),
        )
        .unwrap()
        .api,
    ));
    let html = render_html(
        &hand_built(),
        &[rest.clone(), graphql.clone()],
        &Secrets::new(),
    );
    let data = embedded_data(&html);
    assert_eq!(data["graphs"].as_array().unwrap().len(), 2);
    assert_eq!(decode(&data, 0), expected(&rest));
    assert_eq!(decode(&data, 1), expected(&graphql));
    assert_eq!(data["graphs"][1]["format"], "GraphQL");
    // The fallback lists both.
    assert_eq!(html.matches("<h3 class=\"gx-table-title\">").count(), 2);
}

#[test]
fn exercised_links_are_marked_and_counted() {
    let doc = demo_graph();
    let consumes: Vec<_> = doc
        .edges
        .iter()
        .filter(|e| e.kind.as_str() == "consumes")
        .collect();
    let link = |i: usize, flows: u64, successes: u64, exercised: bool| {
        let e = consumes[i];
        LinkCoverage {
            id: e.id.clone(),
            schema: e.source.trim_start_matches("schema:").into(),
            operation: e.target.trim_start_matches("op:").into(),
            flows,
            successes,
            exercised,
            reason: (!exercised).then(|| "consumer_refused".to_string()),
            why: (!exercised).then(|| format!("{flows} value(s) refused (404 ×{flows})")),
            refused_with: if exercised {
                Default::default()
            } else {
                [("404".to_string(), flows)].into_iter().collect()
            },
        }
    };
    let mut report = hand_built();
    report.graph_coverage = Some(GraphCoverage {
        links: consumes.len(),
        links_exercised: 2,
        edges: vec![
            link(0, 40, 31, true),
            link(1, 5, 0, false),
            link(2, 9, 9, true),
        ],
    });
    let dir = tempfile::tempdir().unwrap();
    let out = OutDir::open(dir.path()).unwrap();
    let warnings =
        write_extras(&out, &report, std::slice::from_ref(&doc), &Secrets::new()).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.contains(&format!(
        "<div class=\"n\">2 of {}</div><div class=\"l\">graph links exercised",
        consumes.len()
    )));
    assert!(html.contains(&format!(
        "links exercised: 2 of {} (consumes links of the graph; 54 values passed along them)",
        consumes.len()
    )));
    let data = embedded_data(&html);
    assert_eq!(
        data["coverage"],
        serde_json::json!({"links": consumes.len(), "links_exercised": 2})
    );
    // The table without JavaScript says so too.
    assert!(html.contains("<th>Exercised</th>"));
    assert!(html.contains("<td><span class=\"badge ok\">yes</span> 40 flows, 31 2xx</td>"));
    assert!(html.contains("<td>no (5 flows, 0 2xx): 5 value(s) refused (404 ×5)</td>"));
    assert!(html.contains("Links not exercised"));
    // Each covered edge carries [flows, successes, exercised]; the others nothing.
    let drawn = decode(&data, 0);
    let edges = data["graphs"][0]["edges"].as_array().unwrap();
    for (i, (id, ..)) in drawn.edges.iter().enumerate() {
        let want = match report
            .graph_coverage
            .as_ref()
            .unwrap()
            .edges
            .iter()
            .find(|l| &l.id == id)
        {
            Some(l) => serde_json::json!([l.flows, l.successes, u8::from(l.exercised)]),
            None => Value::Null,
        };
        assert_eq!(
            edges[i].get(7).cloned().unwrap_or(Value::Null),
            want,
            "{id}"
        );
    }
    // report.json carries it, in the published shape.
    write_report(&out, &report, &Secrets::new()).unwrap();
    let json = support::cli::read_report(dir.path());
    assert_eq!(json["graph_coverage"]["links_exercised"], 2);
    assert_eq!(
        json["graph_coverage"]["edges"][0]["id"],
        consumes[0].id.as_str()
    );

    // An id the graph does not hold is a warning, not a silent no-op.
    report.graph_coverage.as_mut().unwrap().edges[1].id = "consumes:schema:Nope->op:getBook".into();
    let warnings =
        write_extras(&out, &report, std::slice::from_ref(&doc), &Secrets::new()).unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("1 graph_coverage link(s) name no edge"));
}

/// The document with one node renamed (id and name), its edges following it.
fn rename_node(doc: &mut GraphDocument, old_id: &str, new_name: &str) {
    let new_id = format!("{}:{new_name}", old_id.split_once(':').unwrap().0);
    for n in &mut doc.nodes {
        if n.id == old_id {
            n.id = new_id.clone();
            n.name = new_name.to_string();
        }
    }
    for e in &mut doc.edges {
        if e.source == old_id {
            e.source = new_id.clone();
        }
        if e.target == old_id {
            e.target = new_id.clone();
        }
        e.id = format!("{}:{}->{}", e.kind.as_str(), e.source, e.target);
    }
}

#[test]
fn hostile_names_stay_data() {
    let hostile = "</script><script>alert(1)</script>";
    let mut doc = demo_graph();
    rename_node(&mut doc, "schema:Book", hostile);
    let label = "<!-- x --> & \u{2028} </SCRIPT >";
    doc.edges[0].label = label.into();
    doc.api.title = "<b>shop</b>".into();
    let html = render_html(&hand_built(), std::slice::from_ref(&doc), &Secrets::new());
    // Only the two script elements of the page, never one from the data.
    assert_eq!(html.matches("<script").count(), 2);
    assert_eq!(html.to_ascii_lowercase().matches("</script").count(), 2);
    assert!(!html.contains("alert(1)</script>"));
    assert!(!html.contains("<b>shop</b>"));
    // The names come back intact from the data.
    let drawn = decode(&embedded_data(&html), 0);
    assert_eq!(drawn, expected(&doc));
    assert!(drawn.nodes.iter().any(|(_, name)| name == hostile));
    assert!(drawn.edges.iter().any(|e| e.3 == label));
    // And the fallback table escapes them.
    assert!(html.contains("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
}

#[test]
fn without_a_graph_the_page_says_so() {
    let html = render_html(&hand_built(), &[], &Secrets::new());
    assert!(html.contains("No graph was recorded for this run."));
    assert!(!html.contains("<script"));
}

/// The Kubernetes description (945 operations, 5,433 edges): the page holds
/// the whole graph and is written in bounded time. The time is printed, not
/// asserted (shared machines are noisy); `benches/report_page.rs` keeps the
/// figure.
#[test]
fn the_kubernetes_graph_page_holds_the_whole_graph() {
    // The corpus beside the checkout, or wherever CARTOGRAPH_K8S_SPEC says.
    let spec = std::env::var_os("CARTOGRAPH_K8S_SPEC").map_or_else(
        || {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../shared/corpus/openapi/kubernetes.io__main__v1.10.0.json")
        },
        PathBuf::from,
    );
    if !spec.is_file() {
        println!("skipped: {} not found", spec.display());
        return;
    }
    let api = cartograph::load::load(&spec).unwrap().api;
    let doc = to_document(&cartograph::graph::build(&api));
    let mut report = hand_built();
    report.faults.clear();
    report.operations.clear();
    report.settings.target = "http://127.0.0.1:1/".into();
    let started = Instant::now();
    let html = render_html(&report, std::slice::from_ref(&doc), &Secrets::new());
    let took = started.elapsed();
    println!(
        "kubernetes: {} nodes, {} edges; report.html {} bytes ({} of them graph data) in {:.0} ms",
        doc.nodes.len(),
        doc.edges.len(),
        html.len(),
        {
            let open = html.find(GRAPH_DATA_ID).unwrap();
            html[open..].find("</script>").unwrap()
        },
        took.as_secs_f64() * 1000.0
    );
    assert_eq!(doc.nodes.len(), 1466);
    let data = embedded_data(&html);
    assert_eq!(decode(&data, 0), expected(&doc));
    // The fallback lists the start of the edges, not all 5,433.
    assert_eq!(html.matches("<tr><td>").count(), NOSCRIPT_EDGES);
    // Kept for scripts/check-report-html.sh.
    let sample = sample_dir().join("kubernetes");
    std::fs::create_dir_all(&sample).unwrap();
    std::fs::write(sample.join("report.html"), &html).unwrap();
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
fn secrets_are_redacted_from_both_files_even_with_markup_in_them() {
    let secret = "tok&<en>-1234";
    let secrets = Secrets::new();
    secrets.add(secret);
    let mut report = hand_built();
    report.settings.target = format!("http://127.0.0.1:8080/?key={secret}");
    report.faults[0].witness[0].path = format!("/books?token={secret}");
    report.faults[0].message = format!("echoed {secret}");
    // The graph too: a title, a node's name, an edge's label (JSON escapes
    // some of its characters, so the page's last redaction alone would miss it).
    let mut doc = demo_graph();
    doc.api.title = format!("shop {secret}");
    doc.nodes[0].name = format!("a\"{secret}\"b");
    doc.edges[0].label = format!("{secret} -> id");
    let dir = tempfile::tempdir().unwrap();
    let out = OutDir::open(dir.path()).unwrap();
    let warnings = write_extras(&out, &report, std::slice::from_ref(&doc), &secrets).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    let data = embedded_data(&html);
    let drawn = decode(&data, 0);
    assert_eq!(drawn.title, "shop [REDACTED]");
    assert_eq!(drawn.nodes[0].1, "a\"[REDACTED]\"b");
    assert_eq!(drawn.edges[0].3, "[REDACTED] -> id");
    for form in [
        r"tok\u0026\u003cen\u003e-1234",
        r"\u003cen\u003e-1234",
        "tok&<en>",
    ] {
        assert!(!html.contains(form), "{form} in the page");
    }
    let escaped = "tok&amp;&lt;en&gt;-1234";
    for name in ["junit.xml", "report.html", "report.sarif"] {
        let text = std::fs::read_to_string(dir.path().join(name)).unwrap();
        assert!(
            !text.contains(secret) && !text.contains(escaped),
            "the secret in {name}"
        );
        assert!(text.contains("[REDACTED]"), "{name}");
    }
    validate(&dir.path().join("junit.xml"));
}

/// The OASIS SARIF 2.1.0 schema (draft-04), with its formats (`uri`,
/// `uri-reference`, `date-time`) asserted.
fn sarif_validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sarif/sarif-schema-2.1.0.json"),
        )
        .unwrap(),
    )
    .unwrap();
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft4)
        .should_validate_formats(true)
        // Draft-04 does not define `uri-reference` (artifact locations), so
        // it would go unchecked; the crate's own check from draft 6 on.
        .with_format("uri-reference", is_uri_reference)
        .build(&schema)
        .expect("the SARIF schema compiles")
}

/// Whether `text` is an RFC 3986 URI reference, as `jsonschema` decides it.
fn is_uri_reference(text: &str) -> bool {
    static CHECK: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    CHECK
        .get_or_init(|| {
            jsonschema::options()
                .with_draft(jsonschema::Draft::Draft7)
                .should_validate_formats(true)
                .build(&serde_json::json!({"format": "uri-reference"}))
                .unwrap()
        })
        .is_valid(&Value::from(text))
}

/// `text` as JSON, asserted valid against the SARIF schema.
fn valid_sarif(text: &str) -> Value {
    let sarif: Value = serde_json::from_str(text).expect("report.sarif is JSON");
    let errors: Vec<String> = sarif_validator()
        .iter_errors(&sarif)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "report.sarif breaks the SARIF 2.1.0 schema: {errors:#?}\n{text}"
    );
    assert_eq!(sarif["version"], "2.1.0");
    assert_eq!(sarif["runs"].as_array().unwrap().len(), 1, "one run");
    sarif
}

/// What every report.sarif says of its report's causes: one result per
/// cause, in order, built from its representative fault; rule ids are
/// oracle codes, each rule referenced exists (by id and by index) and is
/// listed once; the logical location names the operation; the fingerprints
/// are the cause's id and the representative's signature; the level is the
/// rule's. Returns the results.
fn check_results(sarif: &Value, report: &Report) -> Vec<Value> {
    let run = &sarif["runs"][0];
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], "cartograph");
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
    let rules = driver["rules"].as_array().unwrap();
    let rule_ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    let codes: Vec<&str> = cartograph::oracles::registry::codes().collect();
    let mut fired: Vec<&str> = report.faults.iter().map(|f| f.code.as_str()).collect();
    fired.sort_unstable();
    fired.dedup();
    let mut listed = rule_ids.clone();
    listed.sort_unstable();
    assert_eq!(listed, fired, "one rule per code that fired, each once");
    for r in rules {
        assert!(codes.contains(&r["id"].as_str().unwrap()), "{r}");
        assert!(!r["shortDescription"]["text"].as_str().unwrap().is_empty());
        assert!(
            r["fullDescription"]["text"]
                .as_str()
                .unwrap()
                .contains("Fires when")
        );
    }

    let results = run["results"].as_array().unwrap().clone();
    assert_eq!(results.len(), report.causes.len(), "one result per cause");
    for (r, c) in results.iter().zip(&report.causes) {
        let f = report
            .faults
            .iter()
            .find(|f| f.signature == c.representative)
            .expect("a cause's representative is one of the faults");
        assert_eq!(
            r["partialFingerprints"]["cartographCause/v1"],
            c.id.as_str()
        );
        assert!(
            r["message"]["text"].as_str().unwrap().starts_with(&c.title),
            "the message leads with the cause"
        );
        assert_eq!(
            r["relatedLocations"].as_array().map_or(0, Vec::len),
            c.operations.iter().filter(|o| **o != f.operation).count()
        );
        assert_eq!(r["ruleId"], f.code.as_str());
        assert!(codes.contains(&f.code.as_str()));
        let index = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(
            rule_ids[index],
            f.code.as_str(),
            "ruleIndex points at its rule"
        );
        assert_eq!(r["level"], rules[index]["defaultConfiguration"]["level"]);
        assert_eq!(
            r["partialFingerprints"]["cartographSignature/v1"],
            f.signature.as_str(),
            "the representative's signature"
        );
        let location = &r["locations"][0];
        assert_eq!(
            location["logicalLocations"][0]["fullyQualifiedName"],
            f.operation.as_str()
        );
        assert_eq!(location["logicalLocations"][0]["kind"], "function");
        let physical = &location["physicalLocation"];
        assert!(
            !physical["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
                .is_empty()
        );
        assert!(physical["region"]["startLine"].as_u64().unwrap() >= 1);
        let text = r["message"]["text"].as_str().unwrap();
        assert!(
            text.contains(&format!("Seen {} time(s)", f.count)),
            "{text}"
        );
        match &f.reproducer {
            Some(p) => {
                assert_eq!(
                    r["attachments"][0]["artifactLocation"]["uri"],
                    p.shell.as_str()
                );
                assert!(
                    text.contains(&format!("bash {} [BASE_URL]", p.shell)),
                    "{text}"
                );
                let steps = r["properties"]["reproducer"]["steps"].as_array().unwrap();
                assert_eq!(steps.len(), p.steps.len());
                for (got, want) in steps.iter().zip(&p.steps) {
                    assert_eq!(got["method"], want.method.as_str());
                    assert_eq!(got["path"], want.path.as_str());
                    assert_eq!(got["status"].as_u64(), want.status.map(u64::from));
                }
            }
            None => {
                assert!(r.get("attachments").is_none());
                let steps = r["properties"]["witness"].as_array().map_or(0, Vec::len);
                assert_eq!(steps, f.witness.len());
                if let Some(first) = f.witness.first() {
                    assert!(text.contains("Witness (as sent): 1. "), "{text}");
                    assert!(text.contains(&format!("{} {}", first.method, first.path)));
                }
            }
        }
    }
    results
}

/// A message with everything a careless server can put in one: markup,
/// quotes, a backslash, line breaks, a terminal escape, NUL, non-ASCII.
const NASTIER: &str =
    "body: {\"a\\\\b\": \"</script>\"}\r\n\ttab \u{0}nul \u{1b}[31mred\u{1b}[0m ünïcødé ✓ 💥";

/// [`hand_built`] plus one fault of every oracle code it lacks, in every
/// shape: with and without a reproducer, witness or status, under a GraphQL
/// operation written in another description, and under no operation at all.
fn every_fault_kind() -> Report {
    let mut report = hand_built();
    report.operations[0].line = Some(21);
    report.operations[1].line = Some(140);
    let mut gql = op("Query.book", "QUERY", "book", &[("200", 3)], &[]);
    gql.line = Some(11);
    gql.spec = Some("models/demo/schema.graphql".into());
    report.operations.push(gql);
    let present: Vec<&str> = report.faults.iter().map(|f| f.code.as_str()).collect();
    let missing: Vec<&str> = cartograph::oracles::registry::codes()
        .filter(|c| !present.iter().any(|p| p == c))
        .collect();
    for (i, code) in missing.into_iter().enumerate() {
        let graphql = code.starts_with("graphql_");
        let operation = match (graphql, i % 3) {
            (true, 0) => "-",
            (true, _) => "Query.book",
            (false, 0) => "listBooks",
            (false, 1) => "placeOrder",
            (false, _) => "nowhereInTheDescription",
        };
        let status = (i % 4 != 3).then_some(200 + i as u16);
        let path = if graphql { "" } else { "/books?q=%22x%22" };
        let method = if graphql { "POST" } else { "GET" };
        let witness = if i % 5 == 4 {
            vec![]
        } else {
            vec![
                step(10 + i as u64, "createBook", "POST", "/books", Some(201)),
                step(11 + i as u64, operation, method, path, status),
            ]
        };
        let confirmation = match i % 3 {
            0 => Confirmation::Confirmed,
            1 => Confirmation::Flaky,
            _ => Confirmation::NotReplayed,
        };
        let reproducer = (confirmation == Confirmation::Confirmed).then(|| Reproducer {
            steps: vec![
                step(0, "createBook", "POST", "/books", Some(201)),
                step(1, operation, method, "/books/{{id}}", status),
            ],
            shell: format!("reproducers/{:02}-{code}-x.sh", i + 3),
            json: format!("reproducers/{:02}-{code}-x.json", i + 3),
            requests: 4,
            standalone: i % 2 == 0,
            unmade: if i % 2 == 0 {
                Vec::new()
            } else {
                vec![format!("getBook bookId = {i}")]
            },
            not_standalone: Vec::new(),
            planted: 0,
            fresh: None,
        });
        let status_text = status.map_or("-".to_string(), |s| s.to_string());
        report.faults.push(Fault {
            cause: format!("C{:08x}", 0x100 + i),
            cause_title: String::new(),
            place: None,
            class: Code::from_name(code).unwrap().oracle().class,
            severity: Code::from_name(code).unwrap().oracle().severity,
            code: Code::from_name(code).unwrap(),
            operation: operation.into(),
            status,
            signature: format!("{code}:{operation}:{status_text}:/items/0 \"type\""),
            message: format!("{code}: {NASTIER}"),
            count: 1 + i as u64,
            first_seq: 10 + i as u64,
            witness,
            confirmation,
            reproducer,
        });
    }
    report.group_causes();
    report
}

#[test]
fn sarif_validates_against_the_oasis_schema_and_holds_every_fault() {
    let report = every_fault_kind();
    let codes: Vec<&str> = cartograph::oracles::registry::codes().collect();
    for code in &codes {
        assert!(
            report.faults.iter().any(|f| f.code.as_str() == *code),
            "{code}"
        );
    }
    let ended = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let text = render_sarif(&report, ended, &Secrets::new());
    let sarif = valid_sarif(&text);
    let results = check_results(&sarif, &report);
    let run = &sarif["runs"][0];
    assert_eq!(
        run["tool"]["driver"]["rules"].as_array().unwrap().len(),
        codes.len()
    );

    // The invocation: when, and that the run completed.
    let invocation = &run["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], true);
    assert_eq!(invocation["endTimeUtc"], "2023-11-14T22:13:20Z");
    assert_eq!(invocation["startTimeUtc"], "2023-11-14T22:13:07Z");
    let props = &run["properties"];
    assert_eq!(props["requests"], 1234);
    assert_eq!(props["operations_reached"], 2);
    assert_eq!(props["seed"], "4242", "a string: every digit survives");
    assert_eq!(props["target"], "http://127.0.0.1:8080/api");

    // Locations: the description at the operation's line, or its first line;
    // a GraphQL operation in its own description.
    let at = |i: usize| {
        let signature = &report.faults[i].signature;
        let r = results
            .iter()
            .find(|r| r["partialFingerprints"]["cartographSignature/v1"] == signature.as_str())
            .expect("every fault here is its own cause");
        let p = &r["locations"][0]["physicalLocation"];
        (
            p["artifactLocation"]["uri"].as_str().unwrap().to_string(),
            p["region"]["startLine"].as_u64().unwrap(),
        )
    };
    for (i, f) in report.faults.iter().enumerate() {
        let expected = match f.operation.as_str() {
            "listBooks" => ("specs/shop%20api.yaml", 21),
            "placeOrder" => ("specs/shop%20api.yaml", 140),
            "Query.book" => ("models/demo/schema.graphql", 11),
            _ => ("specs/shop%20api.yaml", 1),
        };
        assert_eq!(
            at(i),
            (expected.0.to_string(), expected.1),
            "{}",
            f.signature
        );
    }

    // Levels: errors for server failures, leaks and stateful faults;
    // warnings for conformance; a note for our own rejected query.
    let level = |code: &str| {
        let r = results.iter().find(|r| r["ruleId"] == code).unwrap();
        r["level"].as_str().unwrap().to_string()
    };
    for code in [
        "server_error",
        "timeout",
        "ignored_auth",
        "graphql_internal_error",
        "stack_trace_leak",
        "sql_leak",
        "debug_page_leak",
        "use_after_delete",
        "created_not_readable",
        "dangling_location",
        "non_idempotent",
    ] {
        assert_eq!(level(code), "error", "{code}");
    }
    for code in [
        "undocumented_status",
        "schema_violation",
        "content_type_mismatch",
        "html_instead_of_json",
        "graphql_missing_field",
        "graphql_null_violation",
        "graphql_wrong_type",
        "graphql_enum_violation",
        "graphql_list_mismatch",
        "graphql_typename_violation",
    ] {
        assert_eq!(level(code), "warning", "{code}");
    }
    assert_eq!(level("graphql_validation_error"), "note");

    // The request that showed a fault, and the message's facts.
    let first = results
        .iter()
        .find(|r| r["ruleId"] == "server_error" && r["properties"]["operation"] == "placeOrder")
        .unwrap();
    assert_eq!(first["webRequest"]["method"], "POST");
    assert_eq!(first["webRequest"]["target"], "/orders");
    assert_eq!(first["webResponse"]["statusCode"], 500);
    let message = first["message"]["text"].as_str().unwrap();
    assert!(
        message.starts_with("The server answered 500-599: placeOrder (500)\n1 fault(s)"),
        "{message}"
    );
    assert!(
        message.contains(
            "Representative: the server answered 500\nSeen 7 time(s), first at request #311; confirmed"
        ),
        "{message}"
    );
    assert!(
        message.contains("1. POST /books -> 201; 2. POST /orders -> 500"),
        "{message}"
    );
    let flaky = results
        .iter()
        .find(|r| r["properties"]["operation"] == "cancelOrder")
        .unwrap();
    assert!(
        flaky["message"]["text"]
            .as_str()
            .unwrap()
            .contains("Representative: the server answered 503 (flaky)")
    );
    // Nasty characters: JSON keeps the text, minus the control characters
    // that are noise in a CI page (tab and line breaks stay).
    let nasty = results
        .iter()
        .map(|r| r["message"]["text"].as_str().unwrap())
        .find(|t| t.contains("ünïcødé"))
        .unwrap();
    assert!(
        nasty.contains("body: {\"a\\\\b\": \"</script>\"}\r\n\ttab nul [31mred[0m ünïcødé ✓ 💥"),
        "{nasty}"
    );
    assert!(!text.contains("\\u0000") && !text.contains("\\u001b"));

    // Kept for people who want to look at one.
    let sample = sample_dir().join("hand-built");
    std::fs::create_dir_all(&sample).unwrap();
    std::fs::write(sample.join("report.sarif"), &text).unwrap();
}

#[test]
fn sarif_never_holds_a_secret_even_escaped_or_in_a_uri() {
    let secret = "tok\"&<en>\\-1234";
    let secrets = Secrets::new();
    secrets.add(secret);
    let mut report = every_fault_kind();
    report.settings.target = format!("http://127.0.0.1:8080/?key={secret}");
    report.settings.spec = Some(format!("http://127.0.0.1:8080/graphql?key={secret}"));
    report.operations[4].spec = Some(format!("specs/{secret}.yaml"));
    report.faults[0].witness[0].path = format!("/books?token={secret}");
    report.faults[0].message = format!("echoed {secret}");
    report.faults[2].signature = format!("undocumented_status:listAuthors:418:{secret}");
    let text = render_sarif(&report, SystemTime::now(), &secrets);
    let json_escaped = serde_json::to_string(secret).unwrap();
    let json_escaped = json_escaped.trim_matches('"');
    let percent = "tok%22&%3Cen%3E%5C-1234";
    for form in [secret, json_escaped, percent, "tok%22", "en%3E"] {
        assert!(!text.contains(form), "{form:?} in report.sarif");
    }
    assert!(text.contains("[REDACTED]"));
    let sarif = valid_sarif(&text);
    let run = &sarif["runs"][0];
    assert_eq!(
        run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "http://127.0.0.1:8080/graphql?key=%5BREDACTED%5D"
    );
    assert_eq!(
        run["properties"]["target"],
        "http://127.0.0.1:8080/?key=[REDACTED]"
    );
    assert!(
        run["results"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["partialFingerprints"]["cartographSignature/v1"]
                == "undocumented_status:listAuthors:418:[REDACTED]")
    );

    // write_extras writes it too, redacted.
    let dir = tempfile::tempdir().unwrap();
    let out = OutDir::open(dir.path()).unwrap();
    write_extras(&out, &report, &[], &secrets).unwrap();
    let written = std::fs::read_to_string(dir.path().join("report.sarif")).unwrap();
    assert!(!written.contains(secret) && !written.contains(json_escaped));
    valid_sarif(&written);
}

#[test]
fn an_interrupted_run_is_not_a_successful_execution() {
    let mut report = hand_built();
    for (stop, ok) in [
        ("budget", true),
        ("max_requests", true),
        ("exhausted", true),
        ("interrupted", false),
        ("auth_failed", false),
    ] {
        report.stop = stop.into();
        let sarif = valid_sarif(&render_sarif(&report, SystemTime::now(), &Secrets::new()));
        let invocation = &sarif["runs"][0]["invocations"][0];
        assert_eq!(invocation["executionSuccessful"], ok, "{stop}");
        assert_eq!(
            invocation.get("toolExecutionNotifications").is_some(),
            !ok,
            "{stop}"
        );
    }
    // No fault, no rule, still a valid file.
    report.faults.clear();
    let sarif = valid_sarif(&render_sarif(&report, SystemTime::now(), &Secrets::new()));
    assert_eq!(sarif["runs"][0]["results"], serde_json::json!([]));
    assert_eq!(
        sarif["runs"][0]["tool"]["driver"]["rules"],
        serde_json::json!([])
    );
}

#[test]
fn the_sarif_validator_rejects_what_the_schema_forbids() {
    let mut sarif = valid_sarif(&render_sarif(
        &every_fault_kind(),
        SystemTime::now(),
        &Secrets::new(),
    ));
    let validator = sarif_validator();
    for (pointer, bad) in [
        ("/runs/0/results/0/level", serde_json::json!("fatal")),
        (
            "/runs/0/results/0/locations/0/physicalLocation/artifactLocation/uri",
            serde_json::json!("spaces are not a URI"),
        ),
        (
            "/runs/0/invocations/0/endTimeUtc",
            serde_json::json!("yesterday"),
        ),
        ("/runs/0/results/0/region", serde_json::json!({})),
    ] {
        let mut broken = sarif.clone();
        match broken.pointer_mut(pointer) {
            Some(v) => *v = bad,
            None => {
                let (parent, key) = pointer.rsplit_once('/').unwrap();
                broken.pointer_mut(parent).unwrap()[key] = bad;
            }
        }
        assert!(!validator.is_valid(&broken), "{pointer} accepted");
    }
    sarif["version"] = serde_json::json!("2.0.0");
    assert!(!validator.is_valid(&sarif));
}

/// The 1-based line of the `method:` key under the `path:` key of the demo's
/// OpenAPI description, found by reading the text, not by the tool.
fn demo_rest_line(method: &str, path: &str) -> u64 {
    let lines: Vec<&str> = cartograph::testing::OPENAPI_YAML.lines().collect();
    let start = lines
        .iter()
        .position(|l| *l == format!("  {path}:"))
        .unwrap_or_else(|| panic!("no {path} in the demo description"));
    let key = format!("    {}:", method.to_ascii_lowercase());
    (start + lines[start..].iter().position(|l| *l == key).unwrap() + 1) as u64
}

/// The same for a root field of the demo's GraphQL schema (`Query.book`).
fn demo_graphql_line(operation: &str) -> u64 {
    let (root, field) = operation.split_once('.').unwrap();
    let lines: Vec<&str> = cartograph::testing::GRAPHQL_SDL.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with(&format!("type {root} ")))
        .unwrap();
    let at = lines[start..]
        .iter()
        .position(|l| {
            let t = l.trim_start();
            t.starts_with(&format!("{field}(")) || t.starts_with(&format!("{field}:"))
        })
        .unwrap();
    (start + at + 1) as u64
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
    let mut report = Report {
        tool: BTreeMap::from([
            ("name", "cartograph"),
            ("version", env!("CARGO_PKG_VERSION")),
        ]),
        settings: Settings {
            target: text(&s["target"]),
            spec: s["spec"].as_str().map(str::to_string),
            seed: s["seed"].as_str().unwrap().parse().unwrap(),
            budget_s: s["budget_s"].as_f64(),
            max_requests: s["max_requests"].as_u64(),
            rate_per_s: s["rate_per_s"].as_f64(),
            burst: s["burst"].as_u64().unwrap() as u32,
            concurrency: s["concurrency"].as_u64().unwrap() as usize,
            read_only: s["read_only"].as_bool().unwrap(),
            timeout_s: s["timeout_s"].as_f64().unwrap(),
            headers: texts(&s["headers"]),
            auth_command: s["auth_command"].as_bool().unwrap(),
            skipped_checks: texts(&s["skipped_checks"])
                .iter()
                .map(|c| Code::from_name(c).unwrap())
                .collect(),
            graph: s["graph"].as_bool().unwrap(),
            feedback: s["feedback"].as_bool().unwrap(),
            include: texts(&s["include"]),
            exclude: texts(&s["exclude"]),
            excluded_operations: texts(&s["excluded_operations"]),
            rate_for: s["rate_for"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_f64().unwrap()))
                .collect(),
            insecure: s["insecure"].as_bool().unwrap(),
        },
        requests: r["requests"].as_u64().unwrap(),
        refused_mutations: r["refused_mutations"].as_u64().unwrap(),
        excluded_requests: r["excluded_requests"].as_u64().unwrap(),
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
        causes: Vec::new(),
        faults: r["faults"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| Fault {
                cause: text(&f["cause"]),
                cause_title: String::new(),
                place: None,
                class: Code::from_name(&text(&f["code"])).unwrap().oracle().class,
                severity: Code::from_name(&text(&f["code"]))
                    .unwrap()
                    .oracle()
                    .severity,
                code: Code::from_name(&text(&f["code"])).unwrap(),
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
                    unmade: Vec::new(),
                    not_standalone: Vec::new(),
                    planted: 0,
                    fresh: None,
                }),
            })
            .collect(),
        schema_coverage: None,
        query_log: None,
        warnings: Vec::new(),
        graph_coverage: None,
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
            learnt_constraints: Vec::new(),
            ..Default::default()
        }),
    };
    report.group_causes();
    report
}

/// A real run of the binary against the demo API, its report rendered with
/// the graph of the demo's description.
#[test]
fn a_real_demo_run_renders_valid_files() {
    let dir = tempfile::tempdir().unwrap();
    let report = report_from_json(&demo_run(dir.path()));
    // Held after the run: a run's files are its own to replace.
    let out = OutDir::open(dir.path()).unwrap();
    assert_eq!(report.requests, 1500);
    assert!(!report.faults.is_empty(), "the demo has faults to find");

    let doc = demo_graph();
    let warnings =
        write_extras(&out, &report, std::slice::from_ref(&doc), &Secrets::new()).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let xml = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();

    let suites = suites(&xml);
    assert_eq!(suites["operations"].attr("tests"), report.operations.len());
    let not_reached = report.operations.len() - report.operations_reached;
    assert_eq!(
        suites["operations"].attr("skipped") + suites["operations"].attr("errors"),
        not_reached
    );
    assert_eq!(suites["causes"].attr("tests"), report.causes.len());
    assert_eq!(suites["causes"].attr("failures"), report.causes.len());
    validate(&dir.path().join("junit.xml"));
    let sarif = valid_sarif(&std::fs::read_to_string(dir.path().join("report.sarif")).unwrap());
    check_results(&sarif, &report);

    assert!(html.contains(&format!("<div class=\"n\">{}</div>", report.requests)));
    assert!(html.contains(&format!(
        "<div class=\"n\">{} of {}</div>",
        report.operations_reached,
        report.operations.len()
    )));
    for f in &report.faults {
        assert!(
            html.contains(&format!(
                "<code>{}</code>",
                quick_xml::escape::escape(f.signature.as_str())
            )),
            "{}",
            f.signature
        );
    }
    let covered = report.search.as_ref().map_or(0, |s| s.covered_at.len());
    assert!(covered > 0);
    assert!(html.contains(&format!("targets covered ({covered})")));
    assert!(polyline(&html, "targets").len() > 2);
    assert_eq!(decode(&embedded_data(&html), 0), expected(&doc));

    // Kept for scripts/screenshot.sh.
    let sample = sample_dir();
    std::fs::create_dir_all(&sample).unwrap();
    std::fs::write(sample.join("report.html"), &html).unwrap();
    std::fs::write(sample.join("junit.xml"), &xml).unwrap();
}

/// The binary writes the three files itself at the end of a run; its
/// report.sarif locates every fault at the line of the embedded description
/// that writes its operation.
#[test]
fn the_demo_command_writes_junit_html_and_sarif() {
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
    for name in ["junit.xml", "report.html", "report.sarif"] {
        assert!(dir.path().join(name).is_file(), "no {name}");
    }
    validate(&dir.path().join("junit.xml"));
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.contains("<div class=\"n\">1500</div>"));

    let report_json: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    let report = report_from_json(&report_json);
    assert_eq!(
        report.settings.spec.as_deref(),
        Some("models/demo/openapi.yaml")
    );
    assert!(!report.faults.is_empty(), "the demo has faults to find");
    let sarif = valid_sarif(&std::fs::read_to_string(dir.path().join("report.sarif")).unwrap());
    let results = check_results(&sarif, &report);
    let run = &sarif["runs"][0];
    assert_eq!(run["invocations"][0]["executionSuccessful"], true);
    assert_eq!(run["properties"]["requests"], 1500);
    assert_eq!(run["properties"]["seed"], "7");
    for (r, c) in results.iter().zip(&report.causes) {
        let f = report
            .faults
            .iter()
            .find(|f| f.signature == c.representative)
            .unwrap();
        let physical = &r["locations"][0]["physicalLocation"];
        let graphql = f.operation.starts_with("Query.") || f.operation.starts_with("Mutation.");
        let op = report
            .operations
            .iter()
            .find(|o| o.operation == f.operation);
        let (uri, line) = match op {
            Some(op) if graphql => (
                "models/demo/schema.graphql",
                demo_graphql_line(&op.operation),
            ),
            Some(op) => (
                "models/demo/openapi.yaml",
                demo_rest_line(&op.method, &op.path),
            ),
            // A GraphQL query the oracle could not name: the description's top.
            None => ("models/demo/openapi.yaml", 1),
        };
        assert_eq!(physical["artifactLocation"]["uri"], uri, "{}", f.signature);
        assert_eq!(physical["region"]["startLine"], line, "{}", f.signature);
        if let Some(p) = &f.reproducer {
            assert!(dir.path().join(&p.shell).is_file(), "no {}", p.shell);
        }
    }
    // Every operation's line is in report.json, found where the text has it.
    for op in &report.operations {
        let expected = if op.spec.is_some() {
            demo_graphql_line(&op.operation)
        } else {
            demo_rest_line(&op.method, &op.path)
        };
        assert_eq!(op.line.map(u64::from), Some(expected), "{}", op.operation);
    }
    // The GraphQL part's own file points at its schema.
    let part =
        valid_sarif(&std::fs::read_to_string(dir.path().join("graphql/report.sarif")).unwrap());
    for r in part["runs"][0]["results"].as_array().unwrap() {
        assert_eq!(
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "models/demo/schema.graphql"
        );
    }
    // Both APIs' graphs, for the explorer's selector.
    let data = embedded_data(&html);
    let formats: Vec<&str> = data["graphs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["format"].as_str().unwrap())
        .collect();
    assert_eq!(formats, ["OpenAPI 3.1", "GraphQL"]);
    let final_graph: GraphDocument = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("graph-final.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        decode(&data, 0),
        expected(&final_graph),
        "the graph the run ended with"
    );
}
