//! `report.html`: one self-contained page for people (inline CSS, SVG and
//! script, nothing fetched), so it can be attached to a CI run or mailed and
//! still open: the summary, the faults with their witnesses and reproducers,
//! the operations coloured by what was reached, a plot of targets covered and
//! faults found over the requests, and the property graph in an explorer the
//! browser draws (see [`super::explorer`]).

use std::collections::BTreeMap;
use std::fmt::Write;

mod plot;

use super::junit::{confirmation_text, operation_case_name};
use super::{OperationReport, Report, escape_attr, escape_text, explorer};
use crate::execution::secrets::Secrets;
use crate::faults::{Confirmation, WitnessStep};
use crate::graph::export::GraphDocument;
use crate::oracles::registry::Class;

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

/// The page's own style (the explorer's is in `explorer.css`).
const STYLE: &str = include_str!("report.css");

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
        t(report
            .tool
            .get("version")
            .copied()
            .unwrap_or(env!("CARGO_PKG_VERSION"))),
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
        plot::plot(report)
    );
    explorer::section(&mut out, report, graphs, secrets, &t);
    let _ = write!(
        out,
        "<footer>Written by cartograph {}. report.json holds every number on this page; junit.xml the same verdicts for CI.</footer>\n</main>\n</body>\n</html>\n",
        t(report
            .tool
            .get("version")
            .copied()
            .unwrap_or(env!("CARGO_PKG_VERSION")))
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

/// The summary: the run in numbers, then how it ran and what it covered.
fn summary(out: &mut String, report: &Report, t: &dyn Fn(&str) -> String) {
    out.push_str("<h2 id=\"summary\">Summary</h2>\n<div class=\"cards\">\n");
    cards(out, report);
    out.push_str("</div>\n<dl class=\"kv\">\n");
    facts(out, report, t);
    coverage_facts(out, report, t);
    let s = &report.settings;
    if !s.skipped_checks.is_empty() {
        kv(
            out,
            "Checks off",
            t(&s.skipped_checks
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(", ")),
        );
    }
    out.push_str("</dl>\n");
}

/// The summary's cards: requests, time, reach, causes and faults.
fn cards(out: &mut String, report: &Report) {
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
}

/// One entry of the summary's list.
fn kv(out: &mut String, k: &str, v: String) {
    let _ = writeln!(out, "<dt>{k}</dt><dd>{v}</dd>");
}

/// The summary's list of how the run ran: target, seed, why it stopped,
/// its limits, and the faults by code and by confirmation.
fn facts(out: &mut String, report: &Report, t: &dyn Fn(&str) -> String) {
    let s = &report.settings;
    let confirmed = count_confirmation(report, Confirmation::Confirmed);
    let flaky = count_confirmation(report, Confirmation::Flaky);
    kv(out, "Target", format!("<code>{}</code>", t(&s.target)));
    kv(out, "Seed", s.seed.to_string());
    kv(out, "Stop reason", t(&report.stop));
    kv(out, "Limits", t(&limits(s)));
    if report.refused_mutations > 0 {
        kv(
            out,
            "Refused (read-only)",
            report.refused_mutations.to_string(),
        );
    }
    let mut by_code: BTreeMap<&str, usize> = BTreeMap::new();
    for f in &report.faults {
        *by_code.entry(f.code.as_str()).or_default() += 1;
    }
    kv(
        out,
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
        out,
        "Confirmation",
        format!(
            "{confirmed} confirmed, {flaky} flaky, {} not replayed",
            count_confirmation(report, Confirmation::NotReplayed)
        ),
    );
}

/// The run's limits in words: `budget 30.0 s, concurrency 4, read-only`.
fn limits(s: &super::Settings) -> String {
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
    limits.join(", ")
}

/// The summary's list of what the run covered: the search's targets, the
/// GraphQL schema, the graph's links (and why some were not exercised).
fn coverage_facts(out: &mut String, report: &Report, t: &dyn Fn(&str) -> String) {
    if let Some(search) = &report.search {
        kv(
            out,
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
            out,
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
            out,
            "Graph links",
            t(&format!(
                "links exercised: {} of {} (consumes links of the graph; {flows} values passed along them)",
                c.links_exercised, c.links
            )),
        );
        // Why the others were not: the step of the chain that never happened.
        if let Some(list) = missed_links(c, t) {
            kv(out, "Links not exercised", list);
        }
    }
}

/// The graph links not exercised, with why, as a list (the first
/// [`MISSED_LINKS`]); `None` when every link was.
fn missed_links(c: &super::GraphCoverage, t: &dyn Fn(&str) -> String) -> Option<String> {
    let missed: Vec<&super::LinkCoverage> = c.edges.iter().filter(|l| !l.exercised).collect();
    if missed.is_empty() {
        return None;
    }
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
    Some(list)
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
            t(c.code.as_str()),
            t(&c.title),
            c.faults.len(),
            c.count,
            c.operations.len(),
            t(&c.operations.join(", ")),
        );
        // A cause through the whole description lists where it runs.
        if !c.places.is_empty() {
            let _ = writeln!(
                out,
                "<details class=\"places\"><summary>Its places ({})</summary><ul>",
                c.places.len()
            );
            for place in &c.places {
                let _ = writeln!(out, "<li><code>{}</code></li>", t(place));
            }
            out.push_str("</ul></details>\n");
        }
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
            if f.confirmation == Confirmation::Flaky {
                " flaky"
            } else {
                ""
            },
            t(f.code.as_str()),
            t(&f.operation),
            match f.status {
                Some(code) => {
                    let code = code.to_string();
                    format!(
                        "<span class=\"badge {}\">{code}</span>",
                        status_class(&code)
                    )
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
fn standalone_note(r: &crate::faults::Reproducer, t: &dyn Fn(&str) -> String) -> String {
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
    // Counted once: per operation, a pass over the faults would cost
    // operations × faults.
    let mut fault_counts: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for f in &report.faults {
        *fault_counts.entry(f.operation.as_str()).or_default() += 1;
    }
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
        let faults = fault_counts
            .get(op.operation.as_str())
            .copied()
            .unwrap_or(0);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_relative_paths_become_links() {
        let t = |s: &str| escape_text(s);
        assert!(file_link("reproducers/f1.sh", &t).starts_with("<a href=\"reproducers/f1.sh\">"));
        assert!(!file_link("javascript:alert(1)", &t).contains("<a"));
        assert!(!file_link("/etc/passwd", &t).contains("<a"));
    }
}
