//! The run's records: `report.json` (shape in `models/report.schema.json`),
//! built from the exchanges as they come, written with secrets redacted; and
//! for people and CI, `junit.xml` ([`render_junit`]), `report.sarif`
//! ([`render_sarif`], for code-scanning uploads) and the self-contained
//! `report.html` ([`render_html`]), and for other tools `wfc-report.json`
//! ([`wfc`]), written by [`write_extras`]; for the description's authors,
//! `spec-fixes.overlay.yaml` ([`overlay`]).

mod coverage;
mod credentials;
pub mod events;
mod explorer;
mod html;
mod junit;
pub mod overlay;
pub mod planted;
mod report;
mod sarif;
mod tally;
pub mod wfc;

pub use explorer::{GRAPH_DATA_ID, NOSCRIPT_EDGES};
pub use html::render_html;
pub use junit::render_junit;
pub use report::{GraphCoverage, LinkCoverage, OperationReport, QueryLogSummary, Report, Settings};
pub use sarif::render_sarif;
pub use tally::Tally;

use std::borrow::Cow;
use std::time::{Duration, SystemTime};

use crate::execution::OutDir;
use crate::execution::secrets::Secrets;
use crate::graph::export::GraphDocument;

/// Writes `report.json` into the output folder, secrets redacted.
pub fn write_report(out: &OutDir, report: &Report, secrets: &Secrets) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(report).map_err(std::io::Error::other)?;
    out.write(
        "report.json",
        format!("{}\n", secrets.redact(&text)).as_bytes(),
    )
}

/// Writes `junit.xml`, `report.sarif` and `report.html` into `out`, secrets
/// redacted, and returns warnings for the user. `graphs` are the final graphs
/// of the APIs the run tested (`graph::export::to_document`), which the
/// page's explorer draws; empty when there is none.
pub fn write_extras(
    out: &OutDir,
    report: &Report,
    graphs: &[GraphDocument],
    secrets: &Secrets,
) -> std::io::Result<Vec<String>> {
    let mut warnings = Vec::new();
    // The run is just over: now minus its length is when it began.
    let ended = SystemTime::now();
    let started = ended
        .checked_sub(Duration::from_secs_f64(report.elapsed_s.max(0.0)))
        .unwrap_or(ended);
    let junit = render_junit(report, started, secrets);
    out.write("junit.xml", secrets.redact(&junit).as_bytes())?;
    let sarif = render_sarif(report, ended, secrets);
    out.write("report.sarif", secrets.redact(&sarif).as_bytes())?;

    let unmatched = explorer::unmatched_coverage(report, graphs);
    if unmatched > 0 {
        warnings.push(format!(
            "{unmatched} graph_coverage link(s) name no edge of the graph; report.html cannot mark them"
        ));
    }
    let html = render_html(report, graphs, secrets);
    out.write("report.html", secrets.redact(&html).as_bytes())?;
    let wfc = serde_json::to_string_pretty(&wfc::render_wfc(report, ended))
        .map_err(std::io::Error::other)?;
    out.write(
        "wfc-report.json",
        format!("{}\n", secrets.redact(&wfc)).as_bytes(),
    )?;
    Ok(warnings)
}

/// Whether XML 1.0 allows the character (HTML parsers accept the same set).
fn xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
}

/// The text without the characters XML 1.0 forbids (control characters other
/// than tab, newline and carriage return; U+FFFE, U+FFFF): one of them makes
/// the whole file unreadable to a CI system.
fn legal(s: &str) -> Cow<'_, str> {
    if s.chars().all(xml_char) {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(s.chars().filter(|&c| xml_char(c)).collect())
    }
}

/// Text for an XML or HTML element: illegal characters dropped, markup escaped.
fn escape_text(s: &str) -> String {
    quick_xml::escape::escape(legal(s)).into_owned()
}

/// Text for an attribute value: as [`escape_text`], with line breaks and tabs
/// as character references, which attribute-value normalisation would
/// otherwise turn into spaces.
fn escape_attr(s: &str) -> String {
    escape_text(s)
        .replace('\n', "&#10;")
        .replace('\r', "&#13;")
        .replace('\t', "&#9;")
}

/// A witness step in words: `POST /orders -> 500`.
fn step_text(s: &crate::faults::WitnessStep) -> String {
    format!(
        "{} {} -> {}",
        s.method,
        s.path,
        s.status
            .map_or("no response".to_string(), |s| s.to_string())
    )
}

/// `2024-05-01T12:34:56`, in UTC: the form the JUnit schema's timestamp takes
/// (no zone).
fn utc_timestamp(t: SystemTime) -> String {
    // humantime writes `2024-05-01T12:34:56Z`; the schema takes no zone.
    let text = humantime::format_rfc3339_seconds(t).to_string();
    text.trim_end_matches('Z').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_utc_civil_dates() {
        let at = |s: u64| utc_timestamp(SystemTime::UNIX_EPOCH + Duration::from_secs(s));
        assert_eq!(at(0), "1970-01-01T00:00:00");
        // 2000-02-29 (a leap day of a century leap year) 23:59:59.
        assert_eq!(at(951_868_799), "2000-02-29T23:59:59");
        assert_eq!(at(1_709_251_200), "2024-03-01T00:00:00");
    }

    #[test]
    fn text_loses_characters_xml_forbids_and_escapes_markup() {
        assert_eq!(
            escape_text("a\u{0}b\u{1b}c\td<e>&\"'\u{FFFE}"),
            "abc\td&lt;e&gt;&amp;&quot;&apos;"
        );
        assert_eq!(escape_attr("x\ny"), "x&#10;y");
    }
}
