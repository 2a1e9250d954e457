//! The fast path of the transport: a plain-HTTP target on this machine
//! (an IP address or `localhost`, no proxy set) is asked through hyper's
//! pooled client directly, without reqwest's layers, which re-parse the
//! URL twice per request (for the redirect policy and the response's URL):
//! about a sixth of a request's CPU against a fast local server.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use super::{Cause, FailureKind};

/// Redirects followed within the target's origin, as the reqwest clients do.
const HOPS: usize = 5;

/// hyper's pooled HTTP/1 client for one plain-HTTP local target.
#[derive(Debug, Clone)]
pub(super) struct Plain {
    client: Client<HttpConnector, Full<Bytes>>,
}

/// Why a request got no answer on the fast path.
#[derive(Debug)]
pub(super) enum PlainError {
    /// The request could not be made (a header that is not valid HTTP).
    Build(String),
    /// hyper's client failed.
    Client(hyper_util::client::legacy::Error),
}

impl std::fmt::Display for PlainError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlainError::Build(m) => write!(f, "the request could not be made: {m}"),
            PlainError::Client(e) => write!(f, "error sending request: {e}"),
        }
    }
}

impl std::error::Error for PlainError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PlainError::Build(_) => None,
            PlainError::Client(e) => std::error::Error::source(e),
        }
    }
}

/// One request, as the fast path sends it.
pub(super) struct Outgoing<'a> {
    pub method: hyper::Method,
    pub url: url::Url,
    pub headers: &'a [(&'a str, &'a str)],
    pub body: Option<&'a str>,
    /// Whether redirects within the origin are followed.
    pub follow: bool,
}

impl Plain {
    /// The fast path for `base`, when it is a plain-HTTP target on this
    /// machine and no proxy is set (reqwest would send through it).
    pub(super) fn for_target(base: &url::Url, concurrency: usize) -> Option<Plain> {
        let local = match base.host()? {
            url::Host::Ipv4(_) | url::Host::Ipv6(_) => true,
            url::Host::Domain(d) => d.eq_ignore_ascii_case("localhost"),
        };
        let proxied = ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"]
            .iter()
            .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()));
        // Userinfo is taken out before (sent as Basic auth); should one be
        // left, reqwest's handling of it stands.
        let userinfo = !base.username().is_empty() || base.password().is_some();
        if base.scheme() != "http" || !local || proxied || userinfo {
            return None;
        }
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(Duration::from_secs(10)));
        let client = Client::builder(TokioExecutor::new())
            .pool_max_idle_per_host(concurrency.max(1))
            .build(connector);
        Some(Plain { client })
    }

    /// Sends `out`, following redirects within its origin when asked (a
    /// 303, or a 301 or 302 to anything but GET and HEAD, goes on as a GET
    /// without its body, as browsers and reqwest do).
    pub(super) async fn send(
        &self,
        out: Outgoing<'_>,
    ) -> Result<hyper::Response<Incoming>, PlainError> {
        let Outgoing {
            mut method,
            mut url,
            headers,
            mut body,
            follow,
        } = out;
        let mut hops = 0;
        loop {
            let request = build(&method, &url, headers, body)?;
            let response = self
                .client
                .request(request)
                .await
                .map_err(PlainError::Client)?;
            let status = response.status().as_u16();
            if !follow || hops >= HOPS || !matches!(status, 301 | 302 | 303 | 307 | 308) {
                return Ok(response);
            }
            let Some(next) = response
                .headers()
                .get(hyper::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .and_then(|l| url.join(l).ok())
                .filter(|n| n.origin() == url.origin())
            else {
                return Ok(response);
            };
            let to_get =
                status == 303 || (matches!(status, 301 | 302) && method == hyper::Method::POST);
            if to_get && method != hyper::Method::HEAD {
                method = hyper::Method::GET;
                body = None;
            }
            url = next;
            hops += 1;
        }
    }
}

/// The request for `url`, with reqwest's default headers (its user agent
/// and `Accept: */*`) unless `headers` give their own.
fn build(
    method: &hyper::Method,
    url: &url::Url,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Result<hyper::Request<Full<Bytes>>, PlainError> {
    let uri: hyper::Uri = url
        .as_str()
        .parse()
        .map_err(|e: hyper::http::uri::InvalidUri| PlainError::Build(e.to_string()))?;
    let mut request = hyper::Request::builder().method(method.clone()).uri(uri);
    let map = request
        .headers_mut()
        .ok_or_else(|| PlainError::Build("the request's method or URL".into()))?;
    for (name, value) in headers {
        let name = hyper::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| PlainError::Build(format!("header name {name:?}: {e}")))?;
        let value = hyper::header::HeaderValue::from_str(value)
            .map_err(|e| PlainError::Build(format!("header {name}: {e}")))?;
        map.append(name, value);
    }
    if !map.contains_key(hyper::header::USER_AGENT) {
        map.insert(
            hyper::header::USER_AGENT,
            hyper::header::HeaderValue::from_static(concat!(
                "cartograph/",
                env!("CARGO_PKG_VERSION")
            )),
        );
    }
    if !map.contains_key(hyper::header::ACCEPT) {
        map.insert(
            hyper::header::ACCEPT,
            hyper::header::HeaderValue::from_static("*/*"),
        );
    }
    let body = body.map_or_else(Bytes::new, |b| Bytes::copy_from_slice(b.as_bytes()));
    request
        .body(Full::new(body))
        .map_err(|e| PlainError::Build(e.to_string()))
}

/// What kind of failure `e` is, told by its kind as `classify` tells
/// reqwest's (no name resolution here: the host is an address or
/// `localhost`).
pub(super) fn classify(e: &PlainError) -> (FailureKind, Cause) {
    let PlainError::Client(client) = e else {
        return (FailureKind::Other, Cause::Unknown);
    };
    let (io, hyper) = causes(client);
    if client.is_connect() {
        return (FailureKind::Connection, connect_cause(io));
    }
    (after_connect(io, hyper), Cause::Unknown)
}

/// What the causes under `e` say: the first I/O error's kind, and the
/// first error of hyper's.
pub(super) fn causes<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> (Option<std::io::ErrorKind>, Option<&'a hyper::Error>) {
    let mut io = None;
    let mut hyper = None;
    let mut source = e.source();
    while let Some(s) = source {
        if let Some(i) = s.downcast_ref::<std::io::Error>() {
            io.get_or_insert(i.kind());
        }
        if let Some(h) = s.downcast_ref::<hyper::Error>() {
            hyper.get_or_insert(h);
        }
        source = s.source();
    }
    (io, hyper)
}

/// Why a connection could not be made, told by the I/O error under it.
pub(super) fn connect_cause(io: Option<std::io::ErrorKind>) -> Cause {
    use std::io::ErrorKind as Io;
    match io {
        Some(Io::ConnectionRefused) => Cause::Refused,
        Some(Io::HostUnreachable | Io::NetworkUnreachable | Io::AddrNotAvailable) => {
            Cause::Unreachable
        }
        _ => Cause::Unknown,
    }
}

/// What went wrong once connected, told by hyper's error and the I/O
/// error under it, never by words.
pub(super) fn after_connect(
    io: Option<std::io::ErrorKind>,
    hyper: Option<&hyper::Error>,
) -> FailureKind {
    use std::io::ErrorKind as Io;
    if let Some(h) = hyper {
        if h.is_parse() || h.is_parse_status() {
            return FailureKind::InvalidHttp;
        }
        if h.is_incomplete_message() || h.is_closed() || h.is_canceled() {
            return FailureKind::NoAnswer;
        }
    }
    match io {
        Some(Io::ConnectionReset | Io::ConnectionAborted | Io::BrokenPipe | Io::UnexpectedEof) => {
            FailureKind::NoAnswer
        }
        _ => FailureKind::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a plain-HTTP target on this machine takes the fast path: TLS,
    /// and a host name that must be resolved (its failures told apart),
    /// stay with reqwest.
    #[test]
    fn only_a_local_plain_http_target_takes_the_fast_path() {
        let proxied = ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"]
            .iter()
            .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()));
        let fast = |u: &str| Plain::for_target(&url::Url::parse(u).unwrap(), 4).is_some();
        for local in [
            "http://127.0.0.1:8080",
            "http://[::1]:8080/api",
            "http://localhost:3000",
            "http://LOCALHOST/",
        ] {
            assert_eq!(fast(local), !proxied, "{local}");
        }
        for other in [
            "https://127.0.0.1:8443",
            "http://staging.example:8080",
            "https://localhost/",
            "http://user:pw@127.0.0.1:8080",
        ] {
            assert!(!fast(other), "{other}");
        }
    }
}
