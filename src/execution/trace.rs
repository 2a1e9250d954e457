//! `trace.ndjson`: every exchange of a run, one JSON object per line, bodies cut
//! to a few kilobytes (and marked so), request headers with the credentials'
//! values replaced, secrets replaced everywhere. Each file stops at a size
//! limit (`--trace-limit`): past it, exchanges are counted, not written.

use std::borrow::Cow;
use std::io::Write;

use serde::Serialize;

use super::secrets::{PLACEHOLDER, Secrets};
use super::{Exchange, Failure, OutDir};

/// Body characters kept per exchange in the trace.
const BODY_CHARS: usize = 4096;

/// Writes the trace file.
pub struct TraceWriter {
    out: std::io::BufWriter<std::fs::File>,
    secrets: Secrets,
    /// The line being written, kept between lines for its capacity.
    line: Vec<u8>,
    /// Bytes the file may hold (`usize::MAX`: no limit).
    limit: usize,
    /// Bytes written so far.
    written: usize,
    /// Exchanges written, and those left out past the limit.
    counts: TraceCounts,
}

/// What a trace file holds: exchanges written, and those left out past its
/// size limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TraceCounts {
    /// Exchanges written.
    pub written: u64,
    /// Exchanges left out because the file had reached its limit.
    pub left_out: u64,
}

#[derive(Serialize)]
struct Line<'a> {
    seq: u64,
    operation: &'a str,
    method: &'a str,
    path: &'a str,
    request_headers: Vec<(&'a str, &'a str)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_body: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    request_body_truncated: bool,
    /// What a negative test's request deliberately gets wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    breach: Option<&'a super::Breach>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    failure: Option<&'a Failure>,
    elapsed_ms: f64,
    response_headers: &'a [(String, String)],
    response_body: Cow<'a, str>,
    /// The response body is not whole: the transport's cap or timeout cut
    /// it, or the trace kept only its first [`BODY_CHARS`] characters.
    truncated: bool,
}

/// The first [`BODY_CHARS`] characters, and whether that is not all
/// (a body that short is not copied: nearly every one).
fn cut(s: &str) -> (Cow<'_, str>, bool) {
    if s.len() <= BODY_CHARS {
        return (Cow::Borrowed(s), false);
    }
    match s.char_indices().nth(BODY_CHARS) {
        Some((i, _)) => (Cow::Owned(format!("{}…", &s[..i])), true),
        None => (Cow::Borrowed(s), false),
    }
}

impl TraceWriter {
    /// Creates the file `name` in the output folder (anew, in place of
    /// the run's own file of that name).
    pub fn create(out: &OutDir, name: &str, secrets: Secrets) -> std::io::Result<TraceWriter> {
        Ok(TraceWriter {
            out: std::io::BufWriter::new(out.create(name)?),
            secrets,
            line: Vec::new(),
            limit: usize::MAX,
            written: 0,
            counts: TraceCounts::default(),
        })
    }

    /// The same writer, stopping at `bytes` (0: no limit). A line that
    /// would cross the limit is not written, so the file holds whole lines.
    pub fn limited(mut self, bytes: usize) -> TraceWriter {
        self.limit = if bytes == 0 { usize::MAX } else { bytes };
        self
    }

    /// Appends one exchange, or counts it when the file is full.
    pub fn write(&mut self, ex: &Exchange) -> std::io::Result<()> {
        // Once full, the file stays full: no serialising of later lines.
        if self.counts.left_out > 0 {
            self.counts.left_out += 1;
            return Ok(());
        }
        let request_body = ex.request.body.as_deref().map(cut);
        let (response_body, cut_here) = cut(&ex.body);
        let secret_names = self.secrets.secret_headers();
        let line = Line {
            seq: ex.seq,
            operation: &ex.request.operation,
            method: &ex.request.method,
            path: &ex.request.path,
            request_headers: self.request_headers(ex, &secret_names),
            request_body_truncated: request_body.as_ref().is_some_and(|(_, c)| *c),
            request_body: request_body.map(|(b, _)| b),
            breach: ex.request.breach.as_ref(),
            status: ex.status,
            failure: ex.failure.as_ref(),
            elapsed_ms: (ex.elapsed.as_secs_f64() * 1e6).round() / 1e3,
            response_headers: &ex.headers,
            response_body,
            truncated: ex.truncated || cut_here,
        };
        self.line.clear();
        serde_json::to_writer(&mut self.line, &line).map_err(std::io::Error::other)?;
        // serde_json writes UTF-8 only.
        let text = std::str::from_utf8(&self.line).map_err(std::io::Error::other)?;
        let text = self.secrets.redact(text);
        if self.written.saturating_add(text.len() + 1) > self.limit {
            self.counts.left_out += 1;
            return Ok(());
        }
        self.out.write_all(text.as_bytes())?;
        self.out.write_all(b"\n")?;
        self.written += text.len() + 1;
        self.counts.written += 1;
        Ok(())
    }

    /// The headers the request carried: its own, its media type, and the
    /// credentials (`-H`, the auth command), whose values are never written.
    /// `secret_names`: the headers that carry credentials.
    fn request_headers<'a>(
        &self,
        ex: &'a Exchange,
        secret_names: &'a [String],
    ) -> Vec<(&'a str, &'a str)> {
        let sent_credentials = !ex.request.without_credentials();
        let mut out: Vec<(&str, &str)> = ex
            .request
            .headers
            .iter()
            .map(|(n, v)| {
                // Without the run's credentials, a request's own header is a
                // generated (malformed) value, not a secret; `redact` still
                // guards the whole line.
                if sent_credentials && secret_names.iter().any(|h| h.eq_ignore_ascii_case(n)) {
                    (n.as_str(), PLACEHOLDER)
                } else {
                    (n.as_str(), v.as_str())
                }
            })
            .collect();
        if let (Some(ct), Some(_)) = (&ex.request.content_type, &ex.request.body) {
            out.push(("content-type", ct.as_str()));
        }
        for name in secret_names.iter().filter(|_| sent_credentials) {
            if !out.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
                out.push((name.as_str(), PLACEHOLDER));
            }
        }
        out
    }

    /// Flushes to disk; what the file holds.
    pub fn finish(mut self) -> std::io::Result<TraceCounts> {
        self.out.flush()?;
        Ok(self.counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execution::RequestSpec;

    #[test]
    fn cut_bodies_say_so_and_credentials_stay_out() {
        let secrets = Secrets::new();
        secrets.add_header("Authorization", "token test");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trace.ndjson");
        let out = OutDir::open(dir.path()).unwrap();
        let mut trace = TraceWriter::create(&out, "trace.ndjson", secrets).unwrap();
        let long = "x".repeat(BODY_CHARS + 10);
        let ex = |body: &str| Exchange {
            request: RequestSpec {
                operation: "op".into(),
                method: "POST".into(),
                path: "/a".into(),
                headers: vec![("If-Match".into(), "\"3\"".into())],
                body: Some("{}".into()),
                content_type: Some("application/json".into()),
                graphql_query: false,
                breach: None,
                identity: None,
            },
            status: Some(200),
            body: body.into(),
            ..Default::default()
        };
        trace.write(&ex(&long)).unwrap();
        trace.write(&ex("short")).unwrap();
        trace.finish().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[0]["truncated"], true);
        assert_eq!(lines[1]["truncated"], false);
        let headers = &lines[1]["request_headers"];
        assert_eq!(headers[0], serde_json::json!(["If-Match", "\"3\""]));
        assert_eq!(
            headers[1],
            serde_json::json!(["content-type", "application/json"])
        );
        assert_eq!(
            headers[2],
            serde_json::json!(["Authorization", PLACEHOLDER])
        );
        assert!(!text.contains("token test"));
    }

    #[test]
    fn a_limited_trace_holds_whole_lines_up_to_its_limit_and_counts_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let out = OutDir::open(dir.path()).unwrap();
        let ex = |seq: u64| Exchange {
            seq,
            request: RequestSpec {
                operation: "op".into(),
                method: "GET".into(),
                path: "/a".into(),
                ..Default::default()
            },
            status: Some(200),
            body: "x".repeat(100),
            ..Default::default()
        };
        let mut trace = TraceWriter::create(&out, "trace.ndjson", Secrets::new())
            .unwrap()
            .limited(1000);
        for seq in 0..50 {
            trace.write(&ex(seq)).unwrap();
        }
        let counts = trace.finish().unwrap();
        let text = std::fs::read_to_string(dir.path().join("trace.ndjson")).unwrap();
        assert!(text.len() <= 1000, "{} bytes", text.len());
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(!lines.is_empty());
        assert_eq!(lines.len() as u64, counts.written);
        assert_eq!(counts.written + counts.left_out, 50);
        // The first exchanges are the ones kept, in order.
        for (i, line) in lines.iter().enumerate() {
            assert_eq!(line["seq"], i as u64);
        }
        // No limit keeps everything.
        let mut all = TraceWriter::create(&out, "replay.ndjson", Secrets::new())
            .unwrap()
            .limited(0);
        for seq in 0..50 {
            all.write(&ex(seq)).unwrap();
        }
        assert_eq!(
            all.finish().unwrap(),
            TraceCounts {
                written: 50,
                left_out: 0
            }
        );
    }
}
