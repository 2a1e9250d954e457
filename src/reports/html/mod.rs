//! `report.html`: one self-contained page for people (inline CSS, SVG and
//! script, nothing fetched), so it can be attached to a CI run or mailed and
//! still open: the summary, the faults with their witnesses and reproducers,
//! the operations coloured by what was reached, a plot of targets covered and
//! faults found over the requests, and the property graph in an explorer the
//! browser draws (see [`super::explorer`]).

use std::collections::BTreeMap;
use std::fmt::Write;

use super::junit::{confirmation_text, operation_case_name};
use super::{escape_attr, escape_text, explorer, OperationReport, Report};
use crate::execution::secrets::Secrets;
use crate::graph::export::GraphDocument;
use crate::oracles::registry::Class;
use crate::oracles::{Confirmation, WitnessStep};

/// What an operation reached, which colours its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// Answered 2xx at least once.
    Success,
    /// Answered, never 2xx, not only 5xx (the server turned the requests away).
    Refused,
    /// Called, but only 5xx or no response at all.
    Broken,
    /// Never sent.
    Never,
}

impl Reach {
    fn of(op: &OperationReport) -> Reach {
        let codes = || op.status_counts.keys();
        if codes().any(|k| k.starts_with('2')) {
            Reach::Success
        } else if codes().any(|k| !k.starts_with('5')) {
            Reach::Refused
        } else if !op.status_counts.is_empty() || !op.failures.is_empty() {
            Reach::Broken
        } else {
            Reach::Never
        }
    }

    fn class(self) -> &'static str {
        match self {
            Reach::Success => "ok",
            Reach::Refused => "warn",
            Reach::Broken => "bad",
            Reach::Never => "never",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Reach::Success => "2xx reached",
            Reach::Refused => "no 2xx",
            Reach::Broken => "5xx / no response only",
            Reach::Never => "never called",
        }
    }
}

/// Unexercised graph links listed, with why, in the summary.
const MISSED_LINKS: usize = 20;

/// Class of a status code's badge.
fn status_class(code: &str) -> &'static str {
    match code.as_bytes().first() {
        Some(b'2') => "ok",
        Some(b'4') => "warn",
        Some(b'5') => "bad",
        _ => "other",
    }
}

const STYLE: &str = r#"
:root { --fg:#1f2328; --muted:#59636e; --line:#d1d9e0; --bg:#ffffff; --panel:#f6f8fa;
  --ok:#1a7f37; --ok-bg:#dafbe1; --warn:#9a6700; --warn-bg:#fff8c5; --bad:#cf222e; --bad-bg:#ffebe9;
  --never:#6e7781; --never-bg:#eaeef2; --accent:#0969da; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--fg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 24px 28px 64px; }
header { border-bottom: 1px solid var(--line); margin-bottom: 8px; padding-bottom: 12px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h1 .target { font-weight: 500; color: var(--muted); }
h2 { font-size: 20px; margin: 36px 0 12px; padding-bottom: 6px; border-bottom: 1px solid var(--line); }
h3 { font-size: 16px; margin: 0; }
a { color: var(--accent); }
nav a { margin-right: 16px; color: var(--accent); text-decoration: none; }
nav a:hover { text-decoration: underline; }
.sub { color: var(--muted); margin: 0 0 8px; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; font-size: 13px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(170px, 1fr)); gap: 12px; margin: 16px 0; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; }
.card .n { font-size: 26px; font-weight: 650; line-height: 1.2; }
.card .l { color: var(--muted); font-size: 13px; }
.card.bad .n { color: var(--bad); } .card.ok .n { color: var(--ok); } .card.warn .n { color: var(--warn); }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: 4px 18px; margin: 8px 0; }
dl.kv dt { color: var(--muted); } dl.kv dd { margin: 0; overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 0 7px; border-radius: 10px; font-size: 12.5px; line-height: 20px;
  border: 1px solid transparent; white-space: nowrap; margin: 1px 2px 1px 0; }
.badge.ok { background: var(--ok-bg); color: var(--ok); border-color: #aceebb; }
.badge.warn { background: var(--warn-bg); color: var(--warn); border-color: #eed888; }
.badge.bad { background: var(--bad-bg); color: var(--bad); border-color: #ffcecb; }
.badge.never, .badge.other { background: var(--never-bg); color: var(--never); border-color: #d0d7de; }
.badge.code { background: #ddf4ff; color: #0550ae; border-color: #b6e3ff; }
.fault { border: 1px solid var(--line); border-left: 4px solid var(--bad); border-radius: 8px;
  padding: 14px 18px; margin: 14px 0; background: #fff; }
.fault.flaky { border-left-color: var(--warn); }
.cause { border: 1px solid var(--line); border-left: 4px solid var(--bad); border-radius: 8px;
  padding: 12px 18px; margin: 12px 0; background: #fff; }
.cause.conformance { border-left-color: #d4a72c; }
.cause header { border: 0; margin: 0 0 4px; padding: 0; display: flex; flex-wrap: wrap; gap: 8px; align-items: center; }
.cause .where { color: var(--muted); margin: 2px 0; overflow-wrap: anywhere; }
.cause details summary { cursor: pointer; color: var(--accent); }
.badge.defect { background: var(--bad-bg); color: var(--bad); border-color: #ffcecb; }
.badge.conformance { background: var(--warn-bg); color: var(--warn); border-color: #eed888; }
.fault header { border: 0; margin: 0 0 6px; padding: 0; display: flex; flex-wrap: wrap; gap: 8px; align-items: center; }
.fault .msg { font-size: 15px; margin: 4px 0 8px; overflow-wrap: anywhere; }
.steps-wrap { display: grid; grid-template-columns: 1fr 1fr; gap: 18px; }
@media (max-width: 800px) { .steps-wrap { grid-template-columns: 1fr; } }
.steps h4 { font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin: 8px 0 4px; }
.steps ol { margin: 0; padding-left: 22px; }
.steps li { margin: 2px 0; overflow-wrap: anywhere; }
.steps .seq { color: var(--muted); }
.method { font-weight: 650; }
table { border-collapse: collapse; width: 100%; font-size: 14px; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: middle; overflow-wrap: anywhere; }
th { background: var(--panel); font-weight: 600; position: sticky; top: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.ok td:first-child { border-left: 5px solid var(--ok); }
tr.warn td:first-child { border-left: 5px solid #d4a72c; }
tr.bad td:first-child { border-left: 5px solid var(--bad); }
tr.never td:first-child { border-left: 5px solid #afb8c1; }
tr.ok { background: #f3fcf5; } tr.warn { background: #fffcea; } tr.bad { background: #fff5f4; } tr.never { background: #f6f8fa; color: var(--muted); }
.legend span { margin-right: 14px; }
.note { background: var(--warn-bg); border: 1px solid #eed888; border-radius: 8px; padding: 10px 14px; }
.plot svg { width: 100%; height: auto; max-width: 960px; display: block; }
footer { margin-top: 40px; color: var(--muted); font-size: 13px; }
"#;

/// Renders `report.html` from the report and the graph(s) the run used (one
/// per API tested; the page switches between them). Every text taken from
/// the run passes through `secrets.redact` before it is escaped.
pub fn render_html(report: &Report, graphs: &[GraphDocument], secrets: &Secrets) -> String {
    let t = |s: &str| escape_text(&secrets.redact(s));
    let s = &report.settings;
    let mut out = String::with_capacity(256 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>Cartograph report: {}</title>\n<style>{STYLE}{}</style>\n</head>\n<body>\n<main>\n",
        t(&s.target),
        explorer::STYLE
    );
    let _ = write!(
        out,
        "<header>\n<h1>Cartograph report <span class=\"target\">{}</span></h1>\n<p class=\"sub\">cartograph {} · seed {} · {} requests in {}</p>\n<nav><a href=\"#summary\">Summary</a><a href=\"#causes\">Causes ({})</a><a href=\"#faults\">All faults ({})</a><a href=\"#operations\">Operations</a><a href=\"#progress\">Progress</a><a href=\"#graph\">Graph</a></nav>\n</header>\n",
        t(&s.target),
        t(report.tool.get("version").copied().unwrap_or(env!("CARGO_PKG_VERSION"))),
        s.seed,
        report.requests,
        seconds(report.elapsed_s),
        report.causes.len(),
        report.faults.len()
    );
    summary(&mut out, report, &t);
    causes(&mut out, report, &t);
    faults(&mut out, report, &t);
    operations(&mut out, report, &t);
    let _ = write!(
        out,
        "<h2 id=\"progress\">Progress</h2>\n<p class=\"sub\">When each testing target was first covered and each fault first seen, by requests sent.</p>\n<div class=\"plot\">{}</div>\n",
        plot(report)
    );
    explorer::section(&mut out, report, graphs, secrets, &t);
    let _ = write!(
        out,
        "<footer>Written by cartograph {}. report.json holds every number on this page; junit.xml the same verdicts for CI.</footer>\n</main>\n</body>\n</html>\n",
        t(report.tool.get("version").copied().unwrap_or(env!("CARGO_PKG_VERSION")))
    );
    out
}

/// `12.3 s`, `4 min 05 s`.
fn seconds(s: f64) -> String {
    if s < 60.0 {
        format!("{s:.1} s")
    } else {
        let whole = s.round() as u64;
        format!("{} min {:02} s", whole / 60, whole % 60)
    }
}

fn summary(out: &mut String, report: &Report, t: &dyn Fn(&str) -> String) {
    let s = &report.settings;
    let confirmed = count_confirmation(report, Confirmation::Confirmed);
    let flaky = count_confirmation(report, Confirmation::Flaky);
    let total_ops = report.operations.len();
    let reach_class = if report.operations_reached == total_ops {
        "ok"
    } else if report.operations_reached == 0 {
        "bad"
    } else {
        "warn"
    };
    out.push_str("<h2 id=\"summary\">Summary</h2>\n<div class=\"cards\">\n");
    let mut card = |class: &str, n: String, label: &str| {
        let _ = writeln!(
            out,
            "<div class=\"card {class}\"><div class=\"n\">{n}</div><div class=\"l\">{label}</div></div>"
        );
    };
    card("", report.requests.to_string(), "requests sent");
    card("", seconds(report.elapsed_s), "elapsed");
    card(
        reach_class,
        format!("{} of {total_ops}", report.operations_reached),
        "operations answered 2xx",
    );
    let defects = report
        .causes
        .iter()
        .filter(|c| c.class == Class::Defect)
        .count();
    card(
        if defects > 0 {
            "bad"
        } else if report.causes.is_empty() {
            "ok"
        } else {
            "warn"
        },
        report.causes.len().to_string(),
        &format!(
            "causes ({defects} defect(s), {} conformance)",
            report.causes.len() - defects
        ),
    );
    card("", report.faults.len().to_string(), "faults found");
    card("", confirmed.to_string(), "confirmed by replay");
    card(
        if flaky > 0 { "warn" } else { "" },
        flaky.to_string(),
        "flaky",
    );
    if let Some(c) = &report.graph_coverage {
        card(
            "",
            format!("{} of {}", c.links_exercised, c.links),
            "graph links exercised",
        );
    }
    out.push_str("</div>\n<dl class=\"kv\">\n");
    let mut kv = |k: &str, v: String| {
        let _ = writeln!(out, "<dt>{k}</dt><dd>{v}</dd>");
    };
    kv("Target", format!("<code>{}</code>", t(&s.target)));
    kv("Seed", s.seed.to_string());
    kv("Stop reason", t(&report.stop));
    let mut limits = Vec::new();
    if let Some(b) = s.budget_s {
        limits.push(format!("budget {}", seconds(b)));
    }
    if let Some(m) = s.max_requests {
        limits.push(format!("at most {m} requests"));
    }
    if let Some(r) = s.rate_per_s {
        limits.push(format!("{r}/s (burst {})", s.burst));
    }
    limits.push(format!("concurrency {}", s.concurrency));
    if s.read_only {
        limits.push("read-only".to_string());
    }
    if !s.graph {
        limits.push("without the graph".to_string());
    }
    if !s.feedback {
        limits.push("no feedback".to_string());
    }
    kv("Limits", t(&limits.join(", ")));
    if report.refused_mutations > 0 {
        kv("Refused (read-only)", report.refused_mutations.to_string());
    }
    let mut by_code: BTreeMap<&str, usize> = BTreeMap::new();
    for f in &report.faults {
        *by_code.entry(f.code.as_str()).or_default() += 1;
    }
    kv(
        "Faults by code",
        if by_code.is_empty() {
            "none".to_string()
        } else {
            by_code
                .iter()
                .map(|(c, n)| format!("<span class=\"badge code\">{} {n}</span>", t(c)))
                .collect::<Vec<_>>()
                .join(" ")
        },
    );
    kv(
        "Confirmation",
        format!(
            "{confirmed} confirmed, {flaky} flaky, {} not replayed",
            count_confirmation(report, Confirmation::NotReplayed)
        ),
    );
    if let Some(search) = &report.search {
        kv(
            "Search",
            t(&format!(
                "{} of {} testing targets covered ({}); {} tests run, {} kept in the suite",
                search.covered,
                search.targets,
                search
                    .covered_by_kind
                    .iter()
                    .map(|(k, n)| format!("{k} {n}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                search.tests,
                search.suite
            )),
        );
    }
    if let Some(c) = &report.schema_coverage {
        // AutoGraphQL's measure: (type, field) pairs that came back.
        let share = if c.total == 0 {
            0.0
        } else {
            100.0 * c.covered as f64 / c.total as f64
        };
        kv(
            "Schema coverage",
            t(&format!(
                "{} of {} (type, field) pairs ({share:.0}%); {} of {} root fields answered data: {}",
                c.covered,
                c.total,
                c.root_fields_reached.len(),
                c.root_fields,
                c.root_fields_reached.join(", ")
            )),
        );
    }
    if let Some(c) = &report.graph_coverage {
        let flows: u64 = c.edges.iter().map(|l| l.flows).sum();
        kv(
            "Graph links",
            t(&format!(
                "links exercised: {} of {} (consumes links of the graph; {flows} values passed along them)",
                c.links_exercised, c.links
            )),
        );
        // Why the others were not: the step of the chain that never happened.
        let missed: Vec<&super::LinkCoverage> = c.edges.iter().filter(|l| !l.exercised).collect();
        if !missed.is_empty() {
            let mut list = String::from("<ul class=\"why-not\">");
            for l in missed.iter().take(MISSED_LINKS) {
                let _ = write!(
                    list,
                    "<li><span class=\"mono\">{} → {}</span>: {}</li>",
                    t(&l.schema),
                    t(&l.operation),
                    t(l.why.as_deref().unwrap_or("not exercised"))
                );
            }
            if missed.len() > MISSED_LINKS {
                let _ = write!(
                    list,
                    "<li>… and {} more (report.json graph_coverage)</li>",
                    missed.len() - MISSED_LINKS
                );
            }
            list.push_str("</ul>");
            kv("Links not exercised", list);
        }
    }
    if !s.skipped_checks.is_empty() {
        kv("Checks off", t(&s.skipped_checks.join(", ")));
    }
    out.push_str("</dl>\n");
}

fn count_confirmation(report: &Report, c: Confirmation) -> usize {
    report.faults.iter().filter(|f| f.confirmation == c).count()
}

fn step_item(s: &WitnessStep, seq: bool, t: &dyn Fn(&str) -> String) -> String {
    let status = match s.status {
        Some(code) => {
            let code = code.to_string();
            format!(
                "<span class=\"badge {}\">{code}</span>",
                status_class(&code)
            )
        }
        None => "<span class=\"badge other\">no response</span>".to_string(),
    };
    format!(
        "<li>{}<code><span class=\"method\">{}</span> {}</code> → {status}</li>",
        if seq {
            format!("<span class=\"seq\">#{}</span> ", s.seq)
        } else {
            String::new()
        },
        t(&s.method),
        t(&s.path)
    )
}

/// A link to a file of the output folder, when the path is a plain relative
/// one (never a URL with a scheme: the page must not link anywhere else).
fn file_link(path: &str, t: &dyn Fn(&str) -> String) -> String {
    let relative = !path.is_empty()
        && !path.starts_with('/')
        && !path.starts_with('\\')
        && !path.split('/').next().unwrap_or("").contains(':');
    if relative {
        // The escaped text is a valid attribute value too (quotes are escaped).
        let p = t(path);
        format!("<a href=\"{p}\"><code>{p}</code></a>")
    } else {
        format!("<code>{}</code>", t(path))
    }
}

/// The causes, most important first: what a person fixes, each with where
/// it was seen, its representative's reproducer and its faults.
fn causes(out: &mut String, report: &Report, t: &dyn Fn(&str) -> String) {
    let _ = writeln!(
        out,
        "<h2 id=\"causes\">Causes ({})</h2>\n<p class=\"sub\">Faults one check reported for one reason (the same code path, input, answer shape, place or message), defects first, then conformance; each by severity. All faults are listed below.</p>",
        report.causes.len()
    );
    if report.causes.is_empty() {
        out.push_str("<p>No fault was found.</p>\n");
        return;
    }
    let anchor = |signature: &str| {
        report
            .faults
            .iter()
            .position(|f| f.signature == signature)
            .map(|i| format!("fault-{i}"))
    };
    for c in &report.causes {
        let (conf_class, conf_label) = confirmation_badge(c.confirmation);
        let _ = write!(
            out,
            "<article class=\"cause {}\" id=\"cause-{}\">\n<header><span class=\"badge {}\">{}</span><span class=\"badge {}\">{}</span><span class=\"badge code\">{}</span><h3>{}</h3><span class=\"badge {conf_class}\">{conf_label}</span></header>\n<p class=\"where\">{} fault(s), seen {} time(s), on {} operation(s): {}</p>\n",
            c.class.as_str(),
            t(&c.id),
            c.class.as_str(),
            c.class.as_str(),
            match c.severity {
                crate::oracles::registry::Severity::High => "bad",
                crate::oracles::registry::Severity::Medium => "warn",
                crate::oracles::registry::Severity::Low => "never",
            },
            c.severity.as_str(),
            t(&c.code),
            t(&c.title),
            c.faults.len(),
            c.count,
            c.operations.len(),
            t(&c.operations.join(", ")),
        );
        let representative = report
            .faults
            .iter()
            .find(|f| f.signature == c.representative);
        if let Some(r) = representative.and_then(|f| f.reproducer.as_ref()) {
            let _ = writeln!(
                out,
                "<dl class=\"kv files\"><dt>Reproducer</dt><dd>{}</dd>{}</dl>",
                file_link(&r.shell, t),
                standalone_note(r, t)
            );
        }
        out.push_str("<details><summary>Its faults</summary><ul>\n");
        for sig in &c.faults {
            match anchor(sig) {
                Some(a) => {
                    let _ = writeln!(out, "<li><a href=\"#{a}\"><code>{}</code></a></li>", t(sig));
                }
                None => {
                    let _ = writeln!(out, "<li><code>{}</code></li>", t(sig));
                }
            }
        }
        out.push_str("</ul></details>\n</article>\n");
    }
}

/// A confirmation's badge: its class and label.
fn confirmation_badge(c: Confirmation) -> (&'static str, &'static str) {
    match c {
        Confirmation::Confirmed => ("bad", "confirmed"),
        Confirmation::Flaky => ("warn", "flaky"),
        Confirmation::NotReplayed => ("never", "not replayed"),
        Confirmation::NoAnswer => ("never", "unconfirmed: no answer"),
    }
}

fn faults(out: &mut String, report: &Report, t: &dyn Fn(&str) -> String) {
    let _ = writeln!(
        out,
        "<h2 id=\"faults\">All faults ({})</h2>",
        report.faults.len()
    );
    if report.faults.is_empty() {
        out.push_str("<p>No fault was found.</p>\n");
        return;
    }
    for (i, f) in report.faults.iter().enumerate() {
        let (conf_class, conf_label) = confirmation_badge(f.confirmation);
        let _ = write!(
            out,
            "<article class=\"fault{}\" id=\"fault-{i}\">\n<header><span class=\"badge code\">{}</span><h3>{}</h3>{}<span class=\"badge {conf_class}\" title=\"{}\">{conf_label}</span></header>\n<p class=\"msg\">{}</p>\n<dl class=\"kv\"><dt>Signature</dt><dd><code>{}</code></dd><dt>Seen</dt><dd>{} time(s), first at request #{}</dd><dt>Confirmation</dt><dd>{}</dd></dl>\n",
            if f.confirmation == Confirmation::Flaky { " flaky" } else { "" },
            t(&f.code),
            t(&f.operation),
            match f.status {
                Some(code) => {
                    let code = code.to_string();
                    format!("<span class=\"badge {}\">{code}</span>", status_class(&code))
                }
                None => String::new(),
            },
            escape_attr(confirmation_text(f.confirmation)),
            t(&f.message),
            t(&f.signature),
            f.count,
            f.first_seq,
            t(confirmation_text(f.confirmation)),
        );
        if !f.witness.is_empty() || f.reproducer.is_some() {
            out.push_str("<div class=\"steps-wrap\">\n");
            if !f.witness.is_empty() {
                out.push_str("<div class=\"steps\"><h4>Witness (as sent)</h4><ol>\n");
                for s in &f.witness {
                    out.push_str(&step_item(s, true, t));
                    out.push('\n');
                }
                out.push_str("</ol></div>\n");
            }
            if let Some(r) = &f.reproducer {
                let _ = write!(
                    out,
                    "<div class=\"steps\"><h4>Reproducer (minimised)</h4><ol>\n{}</ol>\n<dl class=\"kv files\"><dt>Shell script</dt><dd>{}</dd><dt>JSON</dt><dd>{}</dd><dt>Cost</dt><dd>{} request(s) spent confirming and shrinking it</dd>{}</dl></div>\n",
                    r.steps
                        .iter()
                        .map(|s| step_item(s, false, t) + "\n")
                        .collect::<String>(),
                    file_link(&r.shell, t),
                    file_link(&r.json, t),
                    r.requests,
                    standalone_note(r, t),
                );
            }
            out.push_str("</div>\n");
        }
        out.push_str("</article>\n");
    }
}

/// Why a reproducer needs the run's server, when it does.
fn standalone_note(r: &crate::oracles::Reproducer, t: &dyn Fn(&str) -> String) -> String {
    if r.standalone {
        return String::new();
    }
    let why = if !r.not_standalone.is_empty() {
        r.not_standalone.join("; ")
    } else if r.unmade.is_empty() {
        "it leaves out requests that made what it uses".to_string()
    } else {
        format!("it names what it does not create: {}", r.unmade.join("; "))
    };
    format!(
        "<dt>Fresh server</dt><dd>may not show the fault: {}</dd>",
        t(&why)
    )
}

fn operations(out: &mut String, report: &Report, t: &dyn Fn(&str) -> String) {
    let _ = write!(
        out,
        "<h2 id=\"operations\">Operations ({} of {} answered 2xx)</h2>\n<p class=\"legend\"><span><span class=\"badge ok\">2xx reached</span></span><span><span class=\"badge warn\">answered, no 2xx</span></span><span><span class=\"badge bad\">5xx or no response only</span></span><span><span class=\"badge never\">never called</span></span></p>\n",
        report.operations_reached,
        report.operations.len()
    );
    out.push_str("<table>\n<thead><tr><th>Operation</th><th>Method</th><th>Path</th><th>Answers</th><th class=\"num\">Requests</th><th class=\"num\">Faults</th></tr></thead>\n<tbody>\n");
    for op in &report.operations {
        let reach = Reach::of(op);
        let mut answers: Vec<String> = op
            .status_counts
            .iter()
            .map(|(code, n)| {
                format!(
                    "<span class=\"badge {}\">{} ×{n}</span>",
                    status_class(code),
                    t(code)
                )
            })
            .collect();
        answers.extend(
            op.failures
                .iter()
                .map(|(kind, n)| format!("<span class=\"badge bad\">{} ×{n}</span>", t(kind))),
        );
        if answers.is_empty() {
            answers.push(format!(
                "<span class=\"badge never\">{}</span>",
                reach.label()
            ));
        }
        let requests: u64 =
            op.status_counts.values().sum::<u64>() + op.failures.values().sum::<u64>();
        let faults = report
            .faults
            .iter()
            .filter(|f| f.operation == op.operation)
            .count();
        let _ = writeln!(
            out,
            "<tr class=\"{}\" title=\"{}\"><td>{}</td><td class=\"mono method\">{}</td><td class=\"mono\">{}</td><td>{}</td><td class=\"num\">{requests}</td><td class=\"num\">{}</td></tr>",
            reach.class(),
            t(&format!("{}: {}", operation_case_name(op), reach.label())),
            t(&op.operation),
            t(&op.method),
            t(&op.path),
            answers.join(" "),
            if faults == 0 {
                String::new()
            } else {
                format!("<span class=\"badge bad\">{faults}</span>")
            }
        );
    }
    out.push_str("</tbody>\n</table>\n");
}

/// Tick step and axis top for 0..=max with about `n` ticks: 1, 2 or 5 times a
/// power of ten (at least 1 when the axis counts whole things).
fn ticks(max: f64, n: usize, whole: bool) -> (f64, f64) {
    let max = if max > 0.0 { max } else { 1.0 };
    let raw = max / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let mut step = mag
        * if norm <= 1.0 {
            1.0
        } else if norm <= 2.0 {
            2.0
        } else if norm <= 5.0 {
            5.0
        } else {
            10.0
        };
    if whole {
        step = step.max(1.0);
    }
    (step, (max / step).ceil() * step)
}

/// The ticks 0, step, 2·step, … up to `top`, counted rather than summed so
/// rounding never drops the last one.
fn tick_values(step: f64, top: f64) -> impl Iterator<Item = f64> {
    let n = (top / step).round() as u64;
    (0..=n).map(move |i| i as f64 * step)
}

/// The number on a tick: whole numbers as such, thousands as `12k`.
fn tick_label(v: f64) -> String {
    if v >= 10_000.0 && (v / 1000.0).fract() == 0.0 {
        format!("{}k", v / 1000.0)
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

/// A step line's points: from (0, 0), one unit up at each event's x.
fn step_points(xs: &[f64], x_end: f64, sx: &dyn Fn(f64) -> f64, sy: &dyn Fn(f64) -> f64) -> String {
    let mut pts = vec![(sx(0.0), sy(0.0))];
    let mut n = 0.0;
    let mut i = 0;
    while i < xs.len() {
        let x = xs[i];
        let mut j = i;
        while j < xs.len() && xs[j] == x {
            j += 1;
        }
        pts.push((sx(x), sy(n)));
        n += (j - i) as f64;
        pts.push((sx(x), sy(n)));
        i = j;
    }
    pts.push((sx(x_end), sy(n)));
    pts.iter()
        .map(|(x, y)| format!("{x:.1},{y:.1}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The progress plot: targets covered (left axis) and faults found (right
/// axis) over requests sent, as step lines. Two axes because there are
/// typically a hundred times more targets than faults; on one axis the fault
/// line would lie flat on the floor.
fn plot(report: &Report) -> String {
    // `seq` counts from 0, so the request at seq s is the (s + 1)th sent.
    let mut covered: Vec<f64> = report
        .search
        .as_ref()
        .map(|s| {
            s.covered_at
                .iter()
                .map(|(_, seq)| *seq as f64 + 1.0)
                .collect()
        })
        .unwrap_or_default();
    covered.sort_by(f64::total_cmp);
    let mut found: Vec<f64> = report
        .faults
        .iter()
        .map(|f| f.first_seq as f64 + 1.0)
        .collect();
    found.sort_by(f64::total_cmp);
    let x_last = covered
        .last()
        .copied()
        .unwrap_or(0.0)
        .max(found.last().copied().unwrap_or(0.0))
        .max(report.requests as f64);
    if x_last <= 0.0 {
        return "<p class=\"note\">No request was sent: nothing to plot.</p>".to_string();
    }

    let (w, h) = (960.0, 340.0);
    let (left, right, top, bottom) = (70.0, 70.0, 44.0, 56.0);
    let (pw, ph) = (w - left - right, h - top - bottom);
    let (x_step, x_top) = ticks(x_last, 8, true);
    // Some headroom, so a line at its maximum does not run along the frame.
    let (yl_step, yl_top) = ticks(covered.len() as f64 * 1.05, 5, true);
    let (yr_step, yr_top) = ticks(found.len() as f64 * 1.05, 5, true);
    let sx = |x: f64| left + x / x_top * pw;
    let syl = |y: f64| top + ph - y / yl_top * ph;
    let syr = |y: f64| top + ph - y / yr_top * ph;
    let (c_targets, c_faults, grid, axis, muted) =
        ("#0969da", "#cf222e", "#eaeef2", "#57606a", "#59636e");

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"Targets covered and faults found over requests\" font-family=\"system-ui, -apple-system, Segoe UI, Roboto, Arial, sans-serif\" font-size=\"12\">"
    );
    // Grid and x ticks.
    for x in tick_values(x_step, x_top) {
        let px = sx(x);
        let _ = write!(
            svg,
            "<line x1=\"{px:.1}\" y1=\"{top}\" x2=\"{px:.1}\" y2=\"{:.1}\" stroke=\"{grid}\"/>\n<line x1=\"{px:.1}\" y1=\"{:.1}\" x2=\"{px:.1}\" y2=\"{:.1}\" stroke=\"{axis}\"/>\n<text x=\"{px:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"{muted}\">{}</text>\n",
            top + ph,
            top + ph,
            top + ph + 5.0,
            top + ph + 19.0,
            tick_label(x)
        );
    }
    // Left ticks (targets) with horizontal grid lines.
    for y in tick_values(yl_step, yl_top) {
        let py = syl(y);
        let _ = write!(
            svg,
            "<line x1=\"{left}\" y1=\"{py:.1}\" x2=\"{:.1}\" y2=\"{py:.1}\" stroke=\"{grid}\"/>\n<line x1=\"{:.1}\" y1=\"{py:.1}\" x2=\"{left}\" y2=\"{py:.1}\" stroke=\"{axis}\"/>\n<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"{c_targets}\">{}</text>\n",
            left + pw,
            left - 5.0,
            left - 8.0,
            py + 4.0,
            tick_label(y)
        );
    }
    // Right ticks (faults).
    for y in tick_values(yr_step, yr_top) {
        let py = syr(y);
        let _ = write!(
            svg,
            "<line x1=\"{:.1}\" y1=\"{py:.1}\" x2=\"{:.1}\" y2=\"{py:.1}\" stroke=\"{axis}\"/>\n<text x=\"{:.1}\" y=\"{:.1}\" fill=\"{c_faults}\">{}</text>\n",
            left + pw,
            left + pw + 5.0,
            left + pw + 8.0,
            py + 4.0,
            tick_label(y)
        );
    }
    // Axes and their labels.
    let _ = write!(
        svg,
        "<line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{:.1}\" stroke=\"{axis}\"/>\n<line x1=\"{:.1}\" y1=\"{top}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{axis}\"/>\n<line x1=\"{left}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{axis}\"/>\n",
        top + ph,
        left + pw,
        left + pw,
        top + ph,
        top + ph,
        left + pw,
        top + ph
    );
    let _ = write!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"{axis}\" font-size=\"13\">requests sent</text>\n<text transform=\"translate(18 {:.1}) rotate(-90)\" text-anchor=\"middle\" fill=\"{c_targets}\" font-size=\"13\">targets covered</text>\n<text transform=\"translate({:.1} {:.1}) rotate(90)\" text-anchor=\"middle\" fill=\"{c_faults}\" font-size=\"13\">faults found</text>\n",
        left + pw / 2.0,
        h - 12.0,
        top + ph / 2.0,
        w - 16.0,
        top + ph / 2.0
    );
    // The lines: faults drawn last so they stay visible where they cross.
    let _ = writeln!(
        svg,
        "<polyline class=\"targets\" fill=\"none\" stroke=\"{c_targets}\" stroke-width=\"2.2\" stroke-linejoin=\"round\" points=\"{}\"/>",
        step_points(&covered, x_last, &sx, &syl)
    );
    let _ = writeln!(
        svg,
        "<polyline class=\"faults\" fill=\"none\" stroke=\"{c_faults}\" stroke-width=\"2.2\" stroke-dasharray=\"6 3\" stroke-linejoin=\"round\" points=\"{}\"/>",
        step_points(&found, x_last, &sx, &syr)
    );
    // Legend above the plot, where no line can cross it.
    let targets_label = if report.search.is_some() {
        format!("targets covered ({})", covered.len())
    } else {
        "targets covered (not recorded)".to_string()
    };
    let ly = 18.0;
    let fx = left + 250.0;
    let _ = write!(
        svg,
        "<line x1=\"{left}\" y1=\"{ly}\" x2=\"{:.1}\" y2=\"{ly}\" stroke=\"{c_targets}\" stroke-width=\"2.2\"/>\n<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#1f2328\" font-size=\"13\">{}</text>\n<line x1=\"{fx}\" y1=\"{ly}\" x2=\"{:.1}\" y2=\"{ly}\" stroke=\"{c_faults}\" stroke-width=\"2.2\" stroke-dasharray=\"6 3\"/>\n<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#1f2328\" font-size=\"13\">faults found ({})</text>\n",
        left + 26.0,
        left + 34.0,
        ly + 4.5,
        escape_text(&targets_label),
        fx + 26.0,
        fx + 34.0,
        ly + 4.5,
        found.len()
    );
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_maximum() {
        assert_eq!(ticks(1500.0, 8, true), (200.0, 1600.0));
        assert_eq!(ticks(3.0, 5, true), (1.0, 3.0));
        assert_eq!(ticks(0.0, 5, true), (1.0, 1.0));
        assert_eq!(ticks(97.0, 5, true), (20.0, 100.0));
    }

    #[test]
    fn steps_rise_once_per_event_and_merge_ties() {
        let id = |v: f64| v;
        assert_eq!(
            step_points(&[2.0, 2.0, 5.0], 10.0, &id, &id),
            "0.0,0.0 2.0,0.0 2.0,2.0 5.0,2.0 5.0,3.0 10.0,3.0"
        );
    }

    #[test]
    fn only_plain_relative_paths_become_links() {
        let t = |s: &str| escape_text(s);
        assert!(file_link("reproducers/f1.sh", &t).starts_with("<a href=\"reproducers/f1.sh\">"));
        assert!(!file_link("javascript:alert(1)", &t).contains("<a"));
        assert!(!file_link("/etc/passwd", &t).contains("<a"));
    }
}
