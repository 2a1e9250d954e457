//! Answers the request itself explains: a server that refuses a
//! 10,000-character URI (414) or header (431) or an oversized body (413),
//! that routes a value holding an encoded `/` elsewhere (404, 405), that
//! answers the status an echo endpoint was asked for (`/status/563`,
//! `?code=503`), or that takes as long as it was asked to (`/delay/5`),
//! does what the request asked. None of that is a fault of the server,
//! nor a gap in its description.

use crate::execution::Exchange;
use crate::model::{Location, Operation};

/// A request target (path and query) this long or longer may be refused
/// with 414: servers commonly allow 2 to 16 KiB, and 2,000 characters is
/// the usual advice for the safe length.
const LONG_URI: usize = 2_000;

/// Header bytes (names and values) past which a 431 is the request's own.
const LONG_HEADERS: usize = 2_000;

/// A body this large may be refused with 413.
const LARGE_BODY: usize = 8 * 1024;

/// Words of a parameter name that ask for a status.
const STATUS_WORDS: &[&str] = &["status", "code", "codes", "statuses"];

/// Words of a parameter name that ask for a delay.
const DELAY_WORDS: &[&str] = &[
    "delay", "sleep", "wait", "seconds", "secs", "duration", "latency", "ms", "millis",
];

/// Why the request itself explains answering `status`, if it does: an
/// oversized or route-changing value of its own, or a status it asked for.
pub fn status(op: Option<&Operation>, ex: &Exchange, status: u16) -> Option<String> {
    let request = &ex.request;
    match status {
        414 if request.path.len() >= LONG_URI => {
            return Some(format!("its URI is {} characters long", request.path.len()));
        }
        431 => {
            let bytes: usize = request.headers.iter().map(|(n, v)| n.len() + v.len()).sum();
            if bytes >= LONG_HEADERS {
                return Some(format!("its headers take {bytes} bytes"));
            }
        }
        413 if request.body.as_ref().is_some_and(|b| b.len() >= LARGE_BODY) => {
            return Some("its body is large".into());
        }
        404 | 405 => {
            if let Some(seg) = route_changing(&request.path) {
                return Some(format!("its path segment {seg:?} changes the route"));
            }
        }
        _ => {}
    }
    asked(op?, ex, STATUS_WORDS, |v| {
        v.split(',').any(|s| s.trim() == status.to_string())
    })
    .map(|name| format!("it asked for status {status} with {name}"))
}

/// Why the request itself explains a timeout, if it does: it asked the
/// server to wait (`/delay/5`, `?sleep=3`).
pub fn delay(op: Option<&Operation>, ex: &Exchange) -> Option<String> {
    asked(op?, ex, DELAY_WORDS, |v| {
        v.trim().parse::<f64>().is_ok_and(|n| n > 0.0)
    })
    .map(|name| format!("it asked for a delay with {name}"))
}

/// A path segment whose value changes the route once the server decodes
/// it: an encoded `/` or `\`, or a decoded `.` or `..`.
fn route_changing(path: &str) -> Option<&str> {
    let path = path.split('?').next().unwrap_or("");
    path.split('/').find(|seg| {
        let lower = seg.to_ascii_lowercase();
        let decoded = percent_encoding::percent_decode_str(seg).decode_utf8_lossy();
        lower.contains("%2f")
            || lower.contains("%5c")
            || (seg.contains('%') && matches!(decoded.as_ref(), "." | ".."))
    })
}

/// The name of a path or query parameter of `op` whose name has one of
/// `words` (or, for a path parameter, whose template's words do: `/status/
/// {n}`) and whose value in `ex` passes `test`.
fn asked(
    op: &Operation,
    ex: &Exchange,
    words: &[&str],
    test: impl Fn(&str) -> bool,
) -> Option<String> {
    let named = |name: &str| {
        crate::model::names::words(name)
            .iter()
            .any(|w| words.contains(&w.as_str()))
    };
    let (path, query) = ex
        .request
        .path
        .split_once('?')
        .unwrap_or((ex.request.path.as_str(), ""));
    let sent: Vec<&str> = path.split('/').collect();
    let template: Vec<&str> = op.path.split('/').collect();
    for p in &op.parameters {
        // `statusId` names a status, it does not ask for one.
        if crate::model::names::is_id_name(&p.name) {
            continue;
        }
        match p.location {
            Location::Path if template.len() == sent.len() => {
                let marker = format!("{{{}}}", p.name);
                let Some(at) = template.iter().position(|t| *t == marker) else {
                    continue;
                };
                let before = template[..at].join("/");
                if !named(&p.name) && !named(&before) {
                    continue;
                }
                let value = percent_encoding::percent_decode_str(sent[at]).decode_utf8_lossy();
                if test(&value) {
                    return Some(format!("path {}", p.name));
                }
            }
            Location::Query if named(&p.name) => {
                let found = url::form_urlencoded::parse(query.as_bytes())
                    .any(|(k, v)| k == p.name.as_str() && test(&v));
                if found {
                    return Some(format!("query {}", p.name));
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execution::RequestSpec;

    fn api() -> crate::model::Api {
        crate::load::load_text(
            "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /status/{n}:\n    get:\n      operationId: status\n      parameters: [{name: n, in: path, required: true, schema: {type: integer}}]\n      responses: {'200': {description: ok}}\n  /echo:\n    get:\n      operationId: echo\n      parameters: [{name: code, in: query, schema: {type: integer}}, {name: id, in: query, schema: {type: integer}}]\n      responses: {'200': {description: ok}}\n  /delay/{seconds}:\n    get:\n      operationId: delay\n      parameters: [{name: seconds, in: path, required: true, schema: {type: integer}}]\n      responses: {'200': {description: ok}}\n",
            std::path::Path::new("t.yaml"),
        )
        .unwrap()
        .api
    }

    fn ex(path: &str) -> Exchange {
        Exchange {
            request: RequestSpec {
                path: path.into(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn what_the_request_asked_for_explains_the_answer() {
        let api = api();
        let (status_op, echo, delay_op) =
            (&api.operations[0], &api.operations[1], &api.operations[2]);
        assert!(status(Some(status_op), &ex("/status/563"), 563).is_some());
        assert!(status(Some(status_op), &ex("/status/563"), 500).is_none());
        assert!(status(Some(echo), &ex("/echo?code=503"), 503).is_some());
        // An id that happens to equal the status asks for nothing.
        assert!(status(Some(echo), &ex("/echo?id=500"), 500).is_none());
        assert!(delay(Some(delay_op), &ex("/delay/5")).is_some());
        assert!(delay(Some(delay_op), &ex("/delay/0")).is_none());
        assert!(delay(Some(echo), &ex("/echo?code=5")).is_none());
    }

    #[test]
    fn oversized_and_route_changing_values_explain_refusals() {
        let long = format!("/echo?q={}", "a".repeat(LONG_URI));
        assert!(status(None, &ex(&long), 414).is_some());
        assert!(status(None, &ex("/echo?q=a"), 414).is_none());
        assert!(status(None, &ex("/files/a%2Fb"), 404).is_some());
        assert!(status(None, &ex("/files/%2e%2E"), 404).is_some());
        assert!(status(None, &ex("/files/a.b"), 404).is_none());
        assert!(status(None, &ex("/files/a%2Fb"), 500).is_none());
        let mut big = ex("/");
        big.request
            .headers
            .push(("X-Trace".into(), "x".repeat(LONG_HEADERS)));
        assert!(status(None, &big, 431).is_some());
        assert!(status(None, &ex("/"), 431).is_none());
    }
}
