//! `trace.ndjson`: every exchange of a run, one JSON object per line, bodies cut
//! to a few kilobytes, secrets replaced.

use std::io::Write;
use std::path::Path;

use serde::Serialize;

use super::secrets::Secrets;
use super::{Exchange, Failure};

/// Body characters kept per exchange in the trace.
const BODY_CHARS: usize = 4096;

/// Writes the trace file.
pub struct TraceWriter {
    out: std::io::BufWriter<std::fs::File>,
    secrets: Secrets,
}

#[derive(Serialize)]
struct Line<'a> {
    seq: u64,
    operation: &'a str,
    method: &'a str,
    path: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_body: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    failure: Option<&'a Failure>,
    elapsed_ms: f64,
    response_headers: &'a [(String, String)],
    response_body: String,
    truncated: bool,
}

fn cut(s: &str) -> String {
    match s.char_indices().nth(BODY_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

impl TraceWriter {
    /// Creates (or truncates) the file.
    pub fn create(path: &Path, secrets: Secrets) -> std::io::Result<TraceWriter> {
        Ok(TraceWriter {
            out: std::io::BufWriter::new(std::fs::File::create(path)?),
            secrets,
        })
    }

    /// Appends one exchange.
    pub fn write(&mut self, ex: &Exchange) -> std::io::Result<()> {
        let line = Line {
            seq: ex.seq,
            operation: &ex.request.operation,
            method: &ex.request.method,
            path: &ex.request.path,
            request_body: ex.request.body.as_deref().map(cut),
            status: ex.status,
            failure: ex.failure.as_ref(),
            elapsed_ms: (ex.elapsed.as_secs_f64() * 1e6).round() / 1e3,
            response_headers: &ex.headers,
            response_body: cut(&ex.body),
            truncated: ex.truncated,
        };
        let text = serde_json::to_string(&line).map_err(std::io::Error::other)?;
        writeln!(self.out, "{}", self.secrets.redact(&text))
    }

    /// Flushes to disk.
    pub fn finish(mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}
