//! `junit.xml`: the run as JUnit XML, the test-report format CI systems read
//! (Jenkins, GitLab, GitHub test reporters). It validates against the Apache Ant
//! schema (`fixtures/junit/JUnit.xsd`), the strictest of the common ones, so
//! lenient readers accept it too.
//!
//! The document is a `<testsuites>` with two suites:
//!
//! - **`operations`**: one `<testcase>` per operation, classname `operations`,
//!   name `METHOD /path (operationName)`. It *passes* when the server answered
//!   it 2xx at least once. An operation never answered 2xx is **skipped**, not
//!   failed: a server may rightly refuse every request a black-box tester can
//!   build (missing credentials, data it cannot guess), and the faults are
//!   counted once, in their own suite. The `<skipped>` message says why:
//!   `never called` (read-only mode, or the budget ran out first) or
//!   `never answered 2xx (answers: 400×12, 404×3)`. An operation whose requests
//!   all went unanswered (timeouts, refused connections) is an **error**: the
//!   test could not run, which CI should show.
//! - **`causes`**: one failing `<testcase>` per cause (the faults one check
//!   reported for one reason), defects first, then conformance, each by
//!   severity; classname `causes.<class>.<code>`, name the cause's id and
//!   title, whose `<failure>` carries the title and, in its text, where it
//!   was seen, its faults' signatures and its representative fault in full
//!   (count, confirmation, witness, minimised reproducer with its script's
//!   path). A flaky cause fails too (its faults were seen; the message says
//!   the replay did not show it again). Every fault is in `report.json`.

use std::fmt::Write;
use std::time::SystemTime;

use super::{Report, escape_attr, escape_text, utc_timestamp};
use crate::execution::secrets::Secrets;
use crate::faults::{Confirmation, Fault};

use super::OperationReport;

/// What one operation's test case shows.
enum Verdict {
    Passed,
    Skipped(String),
    Error(String),
}

fn verdict(op: &OperationReport) -> Verdict {
    if op.status_counts.keys().any(|k| k.starts_with('2')) {
        return Verdict::Passed;
    }
    let failures = counts(&op.failures);
    if op.status_counts.is_empty() {
        if op.failures.is_empty() {
            return Verdict::Skipped("never called".to_string());
        }
        return Verdict::Error(format!("no response: {failures}"));
    }
    let mut why = format!(
        "never answered 2xx (answers: {})",
        counts(&op.status_counts)
    );
    if !op.failures.is_empty() {
        let _ = write!(why, "; no response: {failures}");
    }
    Verdict::Skipped(why)
}

/// `400×12, 404×3`.
fn counts(map: &std::collections::BTreeMap<String, u64>) -> String {
    map.iter()
        .map(|(k, n)| format!("{k}×{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The test-case name of an operation: `METHOD /path (operationName)`.
pub(super) fn operation_case_name(op: &OperationReport) -> String {
    format!("{} {} ({})", op.method, op.path, op.operation)
}

/// Words for a confirmation, as both reports print it.
pub(super) fn confirmation_text(c: Confirmation) -> &'static str {
    match c {
        Confirmation::Confirmed => "confirmed: replaying the witness showed it again",
        Confirmation::Flaky => "flaky: replaying the witness did not show it again",
        Confirmation::NotReplayed => "not replayed",
        Confirmation::NoAnswer => {
            "unconfirmed: no answer: the server did not answer the replays (timeouts, dropped connections)"
        }
    }
}

/// The failure's text: everything a reader needs to act on the fault.
fn fault_body(f: &Fault) -> String {
    let mut b = String::new();
    let _ = writeln!(b, "{}", f.message);
    let _ = writeln!(
        b,
        "operation: {}; status: {}",
        f.operation,
        f.status.map_or("none".to_string(), |s| s.to_string())
    );
    let _ = writeln!(
        b,
        "seen {} time(s), first at request #{}",
        f.count, f.first_seq
    );
    let _ = writeln!(b, "confirmation: {}", confirmation_text(f.confirmation));
    if !f.witness.is_empty() {
        let _ = writeln!(b, "witness (the requests as sent):");
        for s in &f.witness {
            let _ = writeln!(b, "  #{} {}", s.seq, super::step_text(s));
        }
    }
    if let Some(r) = &f.reproducer {
        let _ = writeln!(
            b,
            "reproducer (minimised, {} request(s) spent on it): sh {} (JSON: {})",
            r.requests, r.shell, r.json
        );
        for (i, s) in r.steps.iter().enumerate() {
            let _ = writeln!(b, "  {}. {}", i + 1, super::step_text(s));
        }
    }
    b
}

/// The failure's text of a cause: what it is, where it was seen, and its
/// representative fault in full.
fn cause_body(c: &crate::faults::causes::Cause, report: &Report) -> String {
    let mut b = String::new();
    let _ = writeln!(b, "{}", c.title);
    let _ = writeln!(
        b,
        "class: {}; severity: {}; check: {}; cause: {}",
        c.class.as_str(),
        c.severity.as_str(),
        c.code,
        c.id
    );
    let _ = writeln!(
        b,
        "{} fault(s), seen {} time(s), on {} operation(s): {}",
        c.faults.len(),
        c.count,
        c.operations.len(),
        c.operations.join(", ")
    );
    let _ = writeln!(b, "faults: {}", c.faults.join(", "));
    if let Some(f) = report
        .faults
        .iter()
        .find(|f| f.signature == c.representative)
    {
        let _ = writeln!(b, "\nrepresentative fault {}:", f.signature);
        b.push_str(&fault_body(f));
    }
    b
}

/// Renders `junit.xml`. `started` is when the run began (the suites'
/// timestamp, in UTC); every text taken from the run passes through
/// `secrets.redact` before it is escaped, so a secret holding `&` or `<` is
/// still found.
pub fn render_junit(report: &Report, started: SystemTime, secrets: &Secrets) -> String {
    let suites = Suites::new(report, started, secrets);
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    suites.operations(&mut out);
    suites.causes(&mut out);
    out.push_str("</testsuites>\n");
    out
}

/// What both suites of the document share: the run they report, how its
/// texts are redacted, and the attributes and properties every suite opens
/// with.
struct Suites<'a> {
    report: &'a Report,
    secrets: &'a Secrets,
    /// When the run began, in UTC.
    timestamp: String,
    /// The server under test's host.
    hostname: String,
    /// The run's duration in seconds, to the millisecond.
    time: String,
    /// The `<properties>` element, the run's settings and totals.
    properties: String,
}

impl<'a> Suites<'a> {
    fn new(report: &'a Report, started: SystemTime, secrets: &'a Secrets) -> Suites<'a> {
        // The schema wants the host the tests ran on; for a black-box tester that
        // is the server under test, which is also what a CI reader wants to see.
        let hostname = url::Url::parse(&report.settings.target)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "localhost".to_string());
        let mut suites = Suites {
            report,
            secrets,
            timestamp: utc_timestamp(started),
            hostname,
            time: format!("{:.3}", report.elapsed_s.max(0.0)),
            properties: String::new(),
        };
        suites.properties = suites.properties();
        suites
    }

    /// Text from the run for an element, redacted and escaped.
    fn text(&self, s: &str) -> String {
        escape_text(&self.secrets.redact(s))
    }

    /// Text from the run for an attribute, redacted and escaped.
    fn attr(&self, s: &str) -> String {
        escape_attr(&self.secrets.redact(s))
    }

    /// The `<properties>` element: the tool, the run's settings and totals.
    fn properties(&self) -> String {
        let report = self.report;
        let mut properties = String::from("    <properties>\n");
        let mut prop = |name: &str, value: String| {
            let _ = writeln!(
                properties,
                "      <property name=\"{}\" value=\"{}\"/>",
                name,
                self.attr(&value)
            );
        };
        let s = &report.settings;
        prop(
            "tool",
            format!(
                "cartograph {}",
                report
                    .tool
                    .get("version")
                    .copied()
                    .unwrap_or(env!("CARGO_PKG_VERSION"))
            ),
        );
        prop("target", s.target.clone());
        prop("seed", s.seed.to_string());
        prop("requests", report.requests.to_string());
        prop("stop", report.stop.clone());
        prop("elapsed_s", report.elapsed_s.to_string());
        if let Some(b) = s.budget_s {
            prop("budget_s", b.to_string());
        }
        if let Some(m) = s.max_requests {
            prop("max_requests", m.to_string());
        }
        if let Some(r) = s.rate_per_s {
            prop("rate_per_s", r.to_string());
        }
        prop("concurrency", s.concurrency.to_string());
        prop("read_only", s.read_only.to_string());
        prop(
            "operations_reached",
            format!(
                "{} of {}",
                report.operations_reached,
                report.operations.len()
            ),
        );
        if report.refused_mutations > 0 {
            prop("refused_mutations", report.refused_mutations.to_string());
        }
        properties.push_str("    </properties>\n");
        properties
    }

    /// Opens a suite, with its counts and the properties.
    fn open(&self, out: &mut String, name: &str, id: usize, counts: SuiteCounts) {
        let SuiteCounts {
            tests,
            failures,
            errors,
            skipped,
        } = counts;
        let (timestamp, time) = (&self.timestamp, &self.time);
        let _ = writeln!(
            out,
            "  <testsuite name=\"{name}\" package=\"cartograph\" id=\"{id}\" timestamp=\"{timestamp}\" hostname=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{time}\">",
            self.attr(&self.hostname)
        );
        out.push_str(&self.properties);
    }

    /// Closes a suite after its `summary`.
    fn close(&self, out: &mut String, summary: &str) {
        let _ = writeln!(out, "    <system-out>{}</system-out>", self.text(summary));
        out.push_str("    <system-err></system-err>\n  </testsuite>\n");
    }

    /// The `operations` suite: one test case per operation.
    fn operations(&self, out: &mut String) {
        let report = self.report;
        let verdicts: Vec<Verdict> = report.operations.iter().map(verdict).collect();
        let skipped = verdicts
            .iter()
            .filter(|v| matches!(v, Verdict::Skipped(_)))
            .count();
        let errors = verdicts
            .iter()
            .filter(|v| matches!(v, Verdict::Error(_)))
            .count();
        let counts = SuiteCounts {
            tests: report.operations.len(),
            failures: 0,
            errors,
            skipped,
        };
        self.open(out, "operations", 0, counts);
        for (op, v) in report.operations.iter().zip(&verdicts) {
            let name = self.attr(&operation_case_name(op));
            match v {
                Verdict::Passed => {
                    let _ = writeln!(
                        out,
                        "    <testcase classname=\"operations\" name=\"{name}\" time=\"0\"/>"
                    );
                }
                Verdict::Skipped(why) => {
                    let _ = writeln!(
                        out,
                        "    <testcase classname=\"operations\" name=\"{name}\" time=\"0\">\n      <skipped message=\"{}\"/>\n    </testcase>",
                        self.attr(why)
                    );
                }
                Verdict::Error(why) => {
                    let _ = writeln!(
                        out,
                        "    <testcase classname=\"operations\" name=\"{name}\" time=\"0\">\n      <error message=\"{}\" type=\"no_response\">{}</error>\n    </testcase>",
                        self.attr(why),
                        self.text(why)
                    );
                }
            }
        }
        self.close(out, &operations_summary(report));
    }

    /// The `causes` suite: what a person fixes, most important first, one
    /// failing test case each.
    fn causes(&self, out: &mut String) {
        let report = self.report;
        let counts = SuiteCounts {
            tests: report.causes.len(),
            failures: report.causes.len(),
            errors: 0,
            skipped: 0,
        };
        self.open(out, "causes", 1, counts);
        for c in &report.causes {
            let message = match c.confirmation {
                Confirmation::Flaky => format!("{} (flaky)", c.title),
                _ => c.title.clone(),
            };
            let _ = writeln!(
                out,
                "    <testcase classname=\"causes.{}.{}\" name=\"{} {}\" time=\"0\">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>",
                c.class.as_str(),
                self.attr(c.code.as_str()),
                self.attr(&c.id),
                self.attr(&c.title),
                self.attr(&message),
                self.attr(c.code.as_str()),
                self.text(&cause_body(c, report))
            );
        }
        let defects = report
            .causes
            .iter()
            .filter(|c| c.class == crate::oracles::registry::Class::Defect)
            .count();
        let summary = format!(
            "{} cause(s) ({defects} defect(s), {} conformance) from {} fault(s)\n",
            report.causes.len(),
            report.causes.len() - defects,
            report.faults.len()
        );
        self.close(out, &summary);
    }
}

/// The counts a suite opens with.
struct SuiteCounts {
    tests: usize,
    failures: usize,
    errors: usize,
    skipped: usize,
}

/// The `operations` suite's output: how many operations answered 2xx, and
/// what each was answered.
fn operations_summary(report: &Report) -> String {
    let mut summary = format!(
        "{} of {} operations answered 2xx in {} requests ({} s, stopped: {})\n",
        report.operations_reached,
        report.operations.len(),
        report.requests,
        report.elapsed_s,
        report.stop
    );
    for op in &report.operations {
        let _ = writeln!(
            summary,
            "{}: {}",
            operation_case_name(op),
            if op.status_counts.is_empty() && op.failures.is_empty() {
                "never called".to_string()
            } else {
                let mut c = counts(&op.status_counts);
                if !op.failures.is_empty() {
                    if !c.is_empty() {
                        c.push_str(", ");
                    }
                    c.push_str(&counts(&op.failures));
                }
                c
            }
        );
    }
    summary
}
