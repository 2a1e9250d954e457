//! `report.html` in a real browser: headless Chromium opens pages written by
//! `render_html` through `scripts/check-report-html.sh`, which checks from the
//! DOM that the explorer's script ran and drew the graph. Skipped (with a
//! note) where no Chromium is installed.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

use cartograph::execution::secrets::Secrets;
use cartograph::graph::export::{GraphDocument, to_document};
use cartograph::reports::{GraphCoverage, LinkCoverage, Report, Settings, Tally, render_html};

/// The first browser the script would use, if any is on the PATH.
fn browser() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-headless-shell", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
}

fn graph(text: &str, name: &str) -> (cartograph::model::Api, GraphDocument) {
    let api = cartograph::load::load_text(text, Path::new(name))
        .unwrap()
        .api;
    let doc = to_document(&cartograph::graph::build(&api));
    (api, doc)
}

/// An empty report for `api`, as a run that sent nothing would write.
fn empty_report(api: &cartograph::model::Api) -> Report {
    let settings = Settings {
        target: "http://127.0.0.1:8080".into(),
        spec: None,
        seed: 1,
        budget_s: None,
        max_requests: Some(0),
        rate_per_s: None,
        burst: 1,
        concurrency: 1,
        read_only: false,
        timeout_s: 10.0,
        headers: vec![],
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
    let outcome = cartograph::execution::RunOutcome {
        requests: 0,
        refused: 0,
        fenced: 0,
        stop: cartograph::execution::StopReason::MaxRequests,
        elapsed: std::time::Duration::ZERO,
        auth_error: None,
        unreachable: None,
        rate_limited: Vec::new(),
        crash: None,
    };
    Tally::new(api).report(settings, &outcome, vec![])
}

/// What the script said: nodes and edges drawn; and the DOM it kept.
struct Check {
    nodes: usize,
    edges: usize,
    dom: String,
    said: String,
}

fn check(dir: &Path, fragment: &str) -> Check {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/check-report-html.sh");
    let png = dir.join(format!("{}.png", fragment.replace(['=', ':', '/'], "_")));
    let out = Command::new("bash")
        .arg(&script)
        .arg(dir)
        .arg(fragment)
        .env("PNG", &png)
        .output()
        .expect("bash runs");
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let number = |after: &str| -> usize {
        let rest = &said[said.find(after).unwrap_or_else(|| panic!("{said}")) + after.len()..];
        rest.split_whitespace().next().unwrap().parse().unwrap()
    };
    Check {
        nodes: number("ok: "),
        edges: number("nodes and "),
        dom: std::fs::read_to_string(png.with_extension("dom.html")).unwrap(),
        said,
    }
}

#[test]
fn the_explorer_draws_the_demo_graphs_in_chromium() {
    if browser().is_none() {
        support::skip_for("chromium not installed");
        return;
    }
    let (api, rest) = graph(
        cartograph::testing::OPENAPI_YAML,
        "models/demo/openapi.yaml",
    );
    let (_, graphql) = graph(
        cartograph::testing::GRAPHQL_SDL,
        "models/demo/schema.graphql",
    );
    let mut report = empty_report(&api);
    // Two consumes links marked exercised by hand (the search does not fill
    // this in yet): they must be drawn as such.
    let exercised: Vec<_> = rest
        .edges
        .iter()
        .filter(|e| e.kind.as_str() == "consumes" && e.target == "op:getBook")
        .collect();
    assert!(!exercised.is_empty());
    report.graph_coverage = Some(GraphCoverage {
        links: rest
            .edges
            .iter()
            .filter(|e| e.kind.as_str() == "consumes")
            .count(),
        links_exercised: exercised.len(),
        edges: exercised
            .iter()
            .map(|e| LinkCoverage {
                id: e.id.clone(),
                schema: e.source.trim_start_matches("schema:").into(),
                operation: "getBook".into(),
                flows: 10,
                successes: 8,
                exercised: true,
                reason: None,
                why: None,
                refused_with: Default::default(),
            })
            .collect(),
    });
    let dir = tempfile::tempdir().unwrap();
    let html = render_html(&report, &[rest.clone(), graphql], &Secrets::new());
    std::fs::write(dir.path().join("report.html"), html).unwrap();

    // The overview: the whole REST graph (it is small), with the selector.
    let overview = check(dir.path(), "explore");
    println!("{}", overview.said);
    assert_eq!(overview.nodes, rest.nodes.len(), "{}", overview.said);
    assert!(overview.edges > 0);
    assert!(overview.dom.contains("<select"), "no graph selector");
    assert_eq!(
        overview.dom.matches("class=\"gx-node op").count(),
        rest.nodes
            .iter()
            .filter(|n| n.id.starts_with("op:"))
            .count()
    );
    assert_eq!(
        overview.dom.matches(" ex\"").count(),
        exercised.len(),
        "exercised links are drawn as such, and only they"
    );
    assert!(overview.dom.contains("Links exercised: "));

    // A focus: getBook, its chain and consumers, and no more.
    let focus = check(dir.path(), "explore=getBook");
    println!("{}", focus.said);
    assert!(
        focus.nodes > 3 && focus.nodes < rest.nodes.len(),
        "{}",
        focus.said
    );
    assert!(focus.dom.contains("class=\"gx-node op focus\""));
    assert!(focus.dom.contains("gx-node op up"), "its chain is marked");
    assert!(focus.dom.contains("Chain: what must exist before it"));

    // The GraphQL graph, by name.
    let gql = check(dir.path(), "explore=Query.book");
    println!("{}", gql.said);
    assert!(gql.nodes > 1);

    // Interaction: the same page with a script that types, clicks, scrolls
    // and drags as a reader would, and writes down what the explorer did.
    let page = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    let play = dir.path().join("play");
    std::fs::create_dir_all(&play).unwrap();
    std::fs::write(
        play.join("report.html"),
        page.replace("</body>", &format!("<script>{PLAY}</script>\n</body>")),
    )
    .unwrap();
    let played = check(&play, "explore");
    let open = "<pre id=\"selftest\">";
    let start = played.dom.find(open).expect("the play script ran") + open.len();
    let len = played.dom[start..].find("</pre>").unwrap();
    let text = played.dom[start..start + len]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let got: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    println!("{got:#}");
    assert_eq!(got["error"], serde_json::Value::Null, "{got:#}");
    // Search: a substring finds getBook first; Enter focuses it.
    assert!(
        got["suggestions"][0].as_str().unwrap().contains("getBook"),
        "{got:#}"
    );
    assert_eq!(got["after_search"]["focus"], "operation getBook");
    assert!(got["after_search"]["nodes"].as_u64().unwrap() < rest.nodes.len() as u64);
    // Escape: out of the whole-window view, then back to the whole graph.
    assert_eq!(
        got["after_escape"],
        serde_json::json!([true, false, rest.nodes.len()])
    );
    // Filters: without inferred edges, fewer are drawn.
    assert!(
        got["without_inferred"].as_u64() < got["start"]["edges"].as_u64(),
        "{got:#}"
    );
    assert_eq!(got["with_inferred"], got["start"]["edges"]);
    // Zoom (button, wheel) and pan change the view.
    let scale = |t: &serde_json::Value| -> f64 {
        let t = t.as_str().unwrap();
        t[t.find("scale(").unwrap() + 6..t.len() - 1]
            .parse()
            .unwrap()
    };
    let zoomed = &got["zoomed"];
    assert!(
        (scale(&zoomed[1]) / scale(&zoomed[0]) - 1.25).abs() < 0.01,
        "{got:#}"
    );
    assert!(scale(&got["wheeled"]) > scale(&zoomed[1]));
    assert_ne!(got["dragged"], got["wheeled"]);
    assert!(got["dragged"].as_str().unwrap().starts_with("translate("));
    // Clicking a node focuses it; the selector switches to the GraphQL graph.
    assert_eq!(got["clicked"][0], got["clicked"][1], "{got:#}");
    assert!(got["second"]["ops"].as_u64() > Some(0));
    assert!(
        got["second"]["names"]
            .as_str()
            .unwrap()
            .contains("Query.book"),
        "{got:#}"
    );
}

/// A reader's session, run in the page after the explorer: what it did is
/// written as JSON into `<pre id="selftest">`.
const PLAY: &str = r#"
(function () {
  var out = {};
  try {
    var root = document.getElementById('gx');
    var nodes = function () { return Number(root.getAttribute('data-nodes')); };
    var edges = function () { return Number(root.getAttribute('data-edges')); };
    var svg = root.querySelector('.gx-canvas svg');
    var viewport = svg.querySelector(':scope > g');
    var transform = function () { return viewport.getAttribute('transform'); };
    var focused = function () { var f = root.querySelector('.gx-node.focus'); return f && f.getAttribute('aria-label'); };
    out.start = { nodes: nodes(), edges: edges() };
    var search = root.querySelector('input[type=search]');
    search.focus();
    search.value = 'getbo';
    search.dispatchEvent(new Event('input'));
    out.suggestions = Array.prototype.map.call(root.querySelectorAll('.gx-sugg li'), function (li) { return li.textContent; });
    search.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    out.after_search = { nodes: nodes(), focus: focused() };
    search.blur();
    var full = root.classList.contains('gx-full');
    document.body.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    var stillFull = root.classList.contains('gx-full');
    document.body.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    out.after_escape = [full, stillFull, nodes()];
    var inferred = Array.prototype.filter.call(root.querySelectorAll('.gx-filters label'), function (l) {
      return l.textContent.trim() === 'inferred';
    })[0].querySelector('input');
    inferred.click();
    out.without_inferred = edges();
    inferred.click();
    out.with_inferred = edges();
    var before = transform();
    Array.prototype.filter.call(root.querySelectorAll('button'), function (b) { return b.textContent === '+'; })[0].click();
    out.zoomed = [before, transform()];
    svg.dispatchEvent(new WheelEvent('wheel', { deltaY: -200, clientX: 300, clientY: 300, bubbles: true, cancelable: true }));
    out.wheeled = transform();
    var r = svg.getBoundingClientRect();
    var at = function (type, target, x, y, id) {
      target.dispatchEvent(new PointerEvent(type, { clientX: x, clientY: y, button: 0, pointerId: id, bubbles: true }));
    };
    at('pointerdown', svg, r.left + 40, r.top + 40, 1);
    at('pointermove', svg, r.left + 140, r.top + 80, 1);
    at('pointerup', svg, r.left + 140, r.top + 80, 1);
    out.dragged = transform();
    var node = root.querySelector('.gx-node.schema');
    var b = node.getBoundingClientRect();
    var name = node.getAttribute('aria-label');
    at('pointerdown', node, b.left + 8, b.top + 8, 2);
    at('pointerup', node, b.left + 8, b.top + 8, 2);
    out.clicked = [name, focused()];
    var select = root.querySelector('select');
    select.value = '1';
    select.dispatchEvent(new Event('change'));
    out.second = {
      ops: root.querySelectorAll('.gx-node.op').length,
      names: Array.prototype.map.call(root.querySelectorAll('.gx-node'), function (n) { return n.getAttribute('aria-label'); }).join(', ')
    };
  } catch (e) {
    out.error = String(e && e.stack || e);
  }
  var pre = document.createElement('pre');
  pre.id = 'selftest';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
"#;

/// The Kubernetes description's graph (1,466 nodes, 5,433 edges): the page
/// opens on its overview and on a focus; the times are printed, not asserted.
#[test]
fn the_explorer_handles_the_kubernetes_graph_in_chromium() {
    if browser().is_none() {
        support::skip_for("chromium not installed");
        return;
    }
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
    let dir = tempfile::tempdir().unwrap();
    let html = render_html(&empty_report(&api), &[doc], &Secrets::new());
    std::fs::write(dir.path().join("report.html"), html).unwrap();
    let overview = check(dir.path(), "explore");
    println!("{}", overview.said);
    assert!(
        overview.nodes >= 20 && overview.nodes <= 60,
        "{}",
        overview.said
    );
    assert!(overview.dom.contains("most connected schemas and the"));
    let focus = check(dir.path(), "explore=io.k8s.api.core.v1.Pod");
    println!("{}", focus.said);
    assert!(focus.dom.contains("class=\"gx-node schema focus\""));
    assert!(focus.nodes <= 160, "{}", focus.said);
}
