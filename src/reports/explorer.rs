//! The graph explorer of `report.html`: the run's graph(s) embedded as compact
//! JSON in a `<script type="application/json">`, drawn and laid out in the
//! browser by `explorer.js` (no library, nothing fetched), with a `<noscript>`
//! table of edges for readers without JavaScript.
//!
//! The embedded document (`id="cartograph-graph-data"`), version 1:
//!
//! ```text
//! { "version": 1,
//!   "kinds": ["produces", "consumes", "equivalent", "same_endpoint"],
//!   "origins": ["spec", "inferred", "observed"],
//!   "coverage": {"links": 15, "links_exercised": 12} | null,
//!   "graphs": [{ "title": "…", "format": "openapi_3_0",
//!     "nodes": [[ID, KIND, NAME, METHOD, PATH, DEPRECATED], …],
//!     "edges": [[KIND, SOURCE, TARGET, ORIGIN, STATE, SCORE, LABEL, COVERAGE, EVIDENCE], …] }] }
//! ```
//!
//! A node's KIND is 0 (operation) or 1 (schema); NAME is 0 when it is the id
//! without its `op:`/`schema:` prefix; trailing empty fields are left out.
//! An edge's KIND and ORIGIN index `kinds` and `origins`, SOURCE and TARGET
//! index `nodes`, STATE is 0 (active), 1 (suspended) or 2 (a candidate
//! equivalence, which nothing uses); its export id is
//! `KIND:SOURCE_ID->TARGET_ID`. COVERAGE is `[flows, successes, exercised]`
//! from the report's `graph_coverage`, or 0; EVIDENCE the notes of an
//! observed edge (at most [`EVIDENCE_NOTES`]), left out when there are none.

use std::collections::HashMap;
use std::fmt::Write;

use serde_json::{Value, json};

use super::{GraphCoverage, LinkCoverage, Report};
use crate::execution::secrets::Secrets;
use crate::graph::export::{EdgeDocument, GraphDocument};
use crate::graph::{EdgeKind, EdgeState, NodeKind, Origin};

/// The `id` of the `<script type="application/json">` holding the graphs.
pub const GRAPH_DATA_ID: &str = "cartograph-graph-data";

/// Edges listed in the `<noscript>` table of each graph: enough to read the
/// small graphs whole, and the start of the big ones without a huge page.
pub const NOSCRIPT_EDGES: usize = 200;

/// Evidence notes kept per observed edge.
pub(super) const EVIDENCE_NOTES: usize = 3;

const SCRIPT: &str = include_str!("explorer.js");
/// The explorer's style, added to the page's.
pub(super) const STYLE: &str = include_str!("explorer.css");

const ORIGINS: [Origin; 3] = [Origin::Spec, Origin::Inferred, Origin::Observed];

fn kind_index(k: EdgeKind) -> usize {
    EdgeKind::ALL.iter().position(|&x| x == k).unwrap_or(0)
}

fn origin_index(o: Origin) -> usize {
    ORIGINS.iter().position(|&x| x == o).unwrap_or(0)
}

/// `OpenAPI 3.0`, `GraphQL`… for the graph selector.
fn format_label(format: &str) -> &str {
    match format {
        "swagger_2" => "Swagger 2.0",
        "openapi_3_0" => "OpenAPI 3.0",
        "openapi_3_1" => "OpenAPI 3.1",
        "graphql_sdl" | "graphql_introspection" => "GraphQL",
        other => other,
    }
}

/// The coverage of each link, by export edge id.
fn coverage_by_id(c: Option<&GraphCoverage>) -> HashMap<&str, &LinkCoverage> {
    c.map(|c| c.edges.iter().map(|l| (l.id.as_str(), l)).collect())
        .unwrap_or_default()
}

/// The compact document the explorer reads, every text redacted.
pub(super) fn data_document(report: &Report, graphs: &[GraphDocument], secrets: &Secrets) -> Value {
    let r = |s: &str| Value::String(secrets.redact(s).into_owned());
    let coverage = coverage_by_id(report.graph_coverage.as_ref());
    let graphs: Vec<Value> = graphs
        .iter()
        .map(|g| {
            let mut index: HashMap<&str, usize> = HashMap::with_capacity(g.nodes.len());
            let nodes: Vec<Value> = g
                .nodes
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    index.insert(n.id.as_str(), i);
                    let (kind, prefix) = match n.kind {
                        NodeKind::Operation => (0, "op:"),
                        NodeKind::Schema => (1, "schema:"),
                    };
                    let mut a = vec![r(&n.id), json!(kind)];
                    let name = if n.id.strip_prefix(prefix) == Some(n.name.as_str()) {
                        json!(0)
                    } else {
                        r(&n.name)
                    };
                    match n.operation() {
                        Some(op) => {
                            a.extend([name, r(op.method.as_str()), r(&op.path)]);
                            if op.deprecated {
                                a.push(json!(1));
                            }
                        }
                        None if name != json!(0) => a.push(name),
                        None => {}
                    }
                    Value::Array(a)
                })
                .collect();
            let edges: Vec<Value> = g
                .edges
                .iter()
                .filter_map(|e| {
                    let (s, t) = (
                        *index.get(e.source.as_str())?,
                        *index.get(e.target.as_str())?,
                    );
                    let mut a = vec![
                        json!(kind_index(e.kind)),
                        json!(s),
                        json!(t),
                        json!(origin_index(e.origin)),
                        json!(match e.state {
                            EdgeState::Active => 0,
                            EdgeState::Suspended => 1,
                            EdgeState::Candidate => 2,
                        }),
                        json!((e.score.clamp(0.0, 1.0) * 100.0).round() / 100.0),
                        r(&e.label),
                    ];
                    let cov = coverage.get(e.id.as_str());
                    if cov.is_some() || !e.evidence.is_empty() {
                        a.push(match cov {
                            Some(l) => json!([l.flows, l.successes, u8::from(l.exercised)]),
                            None => json!(0),
                        });
                    }
                    if !e.evidence.is_empty() {
                        a.push(Value::Array(
                            e.evidence
                                .iter()
                                .take(EVIDENCE_NOTES)
                                .map(|ev| r(&ev.note))
                                .collect(),
                        ));
                    }
                    Some(Value::Array(a))
                })
                .collect();
            json!({
                "title": r(&g.api.title),
                "format": r(format_label(&g.api.format)),
                "nodes": nodes,
                "edges": edges,
            })
        })
        .collect();
    json!({
        "version": 1,
        "kinds": EdgeKind::ALL.iter().map(|k| k.as_str()).collect::<Vec<_>>(),
        "origins": ORIGINS.iter().map(|o| o.as_str()).collect::<Vec<_>>(),
        "coverage": report.graph_coverage.as_ref().map(|c| json!({
            "links": c.links,
            "links_exercised": c.links_exercised,
        })),
        "graphs": graphs,
    })
}

/// JSON safe inside a `<script>` element: no `<` (so no `</script>` or
/// `<!--` can end or change the element), no `>` or `&`, and the two line
/// separators older JavaScript parsers reject, all as `\uXXXX` escapes, which
/// `JSON.parse` reads back as the same characters.
pub(super) fn script_safe_json(v: &Value) -> String {
    let text = v.to_string();
    let mut out = String::with_capacity(text.len() + text.len() / 64);
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// Coverage entries whose id names no edge of the graphs (a mismatch between
/// the search's ids and the export's, which the explorer cannot draw).
pub(super) fn unmatched_coverage(report: &Report, graphs: &[GraphDocument]) -> usize {
    let Some(c) = &report.graph_coverage else {
        return 0;
    };
    let ids: std::collections::HashSet<&str> = graphs
        .iter()
        .flat_map(|g| g.edges.iter().map(|e| e.id.as_str()))
        .collect();
    c.edges
        .iter()
        .filter(|l| !ids.contains(l.id.as_str()))
        .count()
}

/// Writes the page's graph section: the explorer's mount point, the
/// `<noscript>` fallback, the data and the script.
pub(super) fn section(
    out: &mut String,
    report: &Report,
    graphs: &[GraphDocument],
    secrets: &Secrets,
    t: &dyn Fn(&str) -> String,
) {
    out.push_str("<h2 id=\"graph\">Property graph</h2>\n");
    if graphs.is_empty() {
        out.push_str("<p class=\"note\">No graph was recorded for this run.</p>\n");
        return;
    }
    // Hidden until the script runs: without it, the help and an empty box
    // would promise an explorer that never comes (the table below stands in).
    out.push_str("<p class=\"sub gx-help\" hidden>The graph the run used, as it ended (graph-final.json). Drag to pan, wheel or the buttons to zoom; search or click an operation or schema to see what feeds it, what it feeds, and what must be created before it.</p>\n");
    out.push_str("<div id=\"gx\" class=\"gx\" data-state=\"loading\" hidden></div>\n");
    noscript(out, report, graphs, t);
    let data = data_document(report, graphs, secrets);
    let _ = write!(
        out,
        "<script type=\"application/json\" id=\"{GRAPH_DATA_ID}\">{}</script>\n<script>\n{SCRIPT}</script>\n",
        script_safe_json(&data)
    );
}

/// Edges in the order the table lists them: consumes (the links the search
/// follows) first, then produces, equivalent, same endpoint.
fn table_order(edges: &[EdgeDocument]) -> Vec<&EdgeDocument> {
    let rank = |k: EdgeKind| match k {
        EdgeKind::Consumes => 0,
        EdgeKind::Produces => 1,
        EdgeKind::Equivalent => 2,
        EdgeKind::SameEndpoint => 3,
    };
    let mut v: Vec<&EdgeDocument> = edges.iter().collect();
    v.sort_by_key(|e| rank(e.kind));
    v
}

fn noscript(
    out: &mut String,
    report: &Report,
    graphs: &[GraphDocument],
    t: &dyn Fn(&str) -> String,
) {
    let coverage = coverage_by_id(report.graph_coverage.as_ref());
    let covered = report.graph_coverage.is_some();
    out.push_str("<noscript>\n<p class=\"note\">The graph explorer needs JavaScript. Below, each graph's edges as a table; graph-final.json holds the whole graph.</p>\n");
    for g in graphs {
        let shown = g.edges.len().min(NOSCRIPT_EDGES);
        let _ = writeln!(
            out,
            "<h3 class=\"gx-table-title\">{} ({}): {} operations, {} schemas, {} edges{}</h3>",
            t(&g.api.title),
            t(format_label(&g.api.format)),
            g.nodes
                .iter()
                .filter(|n| n.kind == NodeKind::Operation)
                .count(),
            g.nodes
                .iter()
                .filter(|n| n.kind == NodeKind::Schema)
                .count(),
            g.edges.len(),
            if shown < g.edges.len() {
                format!(", the first {shown} listed")
            } else {
                String::new()
            }
        );
        let _ = write!(
            out,
            "<table class=\"gx-table\">\n<thead><tr><th>Kind</th><th>From</th><th>To</th><th>Label</th><th>Origin</th><th>State</th><th class=\"num\">Score</th>{}</tr></thead>\n<tbody>\n",
            if covered { "<th>Exercised</th>" } else { "" }
        );
        // Names by id, so a big graph's table is not quadratic.
        let names: HashMap<&str, &str> = g
            .nodes
            .iter()
            .map(|n| (n.id.as_str(), n.name.as_str()))
            .collect();
        for e in table_order(&g.edges).into_iter().take(shown) {
            let from = names.get(e.source.as_str()).copied().unwrap_or(&e.source);
            let to = names.get(e.target.as_str()).copied().unwrap_or(&e.target);
            let exercised = match coverage.get(e.id.as_str()) {
                _ if !covered => String::new(),
                Some(l) if l.exercised => format!(
                    "<td><span class=\"badge ok\">yes</span> {} flows, {} 2xx</td>",
                    l.flows, l.successes
                ),
                Some(l) => format!(
                    "<td>no ({} flows, {} 2xx){}</td>",
                    l.flows,
                    l.successes,
                    l.why
                        .as_deref()
                        .map(|w| format!(": {}", t(w)))
                        .unwrap_or_default()
                ),
                None => "<td></td>".to_string(),
            };
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"mono\">{}</td><td>{}</td><td>{}</td><td class=\"num\">{:.2}</td>{exercised}</tr>",
                e.kind.as_str(),
                t(from),
                t(to),
                t(&e.label),
                e.origin.as_str(),
                match e.state {
                    EdgeState::Active => "active",
                    EdgeState::Suspended => "suspended",
                    EdgeState::Candidate => "candidate",
                },
                e.score
            );
        }
        out.push_str("</tbody>\n</table>\n");
    }
    out.push_str("</noscript>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_json_cannot_close_the_element_and_parses_back() {
        let v = json!({"name": "</script><script>alert(1)</script> <!-- & \u{2028}"});
        let text = script_safe_json(&v);
        assert!(!text.contains('<') && !text.contains('>') && !text.contains('&'));
        assert!(!text.contains('\u{2028}'));
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn the_script_holds_nothing_that_ends_or_changes_its_element() {
        let lower = SCRIPT.to_ascii_lowercase();
        assert!(!lower.contains("</script"), "explorer.js holds </script");
        assert!(!lower.contains("<!--"), "explorer.js holds <!--");
        assert!(!STYLE.contains("</style"), "explorer.css holds </style");
    }
}
