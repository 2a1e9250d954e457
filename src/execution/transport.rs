//! The HTTP transport: one reqwest client, a per-request timeout, a cap on the
//! body read, and redirects followed only within the target's origin, so that
//! credentials never reach another host.

use std::time::{Duration, Instant};

use futures_util::StreamExt;

use super::{Cause, Failure, FailureKind, RequestSpec};

/// A response as read: status, headers, body (capped), or the failure.
#[derive(Debug, Clone)]
pub struct Received {
    /// Status, when a response came.
    pub status: Option<u16>,
    /// Headers, lower-case names.
    pub headers: Vec<(String, String)>,
    /// Body bytes read, at most the cap; decoded when the server sent them
    /// compressed (its headers are kept as it sent them).
    pub body: Vec<u8>,
    /// Whether the body was cut short (cap or timeout).
    pub truncated: bool,
    /// Why no response came.
    pub failure: Option<Failure>,
    /// How long it took.
    pub elapsed: Duration,
}

/// Sends requests to one target.
#[derive(Debug, Clone)]
pub struct Transport {
    client: reqwest::Client,
    /// The same, never following a redirect: for operations that document
    /// a 3xx, whose first answer is the one to judge.
    direct: reqwest::Client,
    /// The same two on connections of their own (never a pooled one): a
    /// request that got no answer on a reused connection is sent once more
    /// on one, since a server may close a kept-alive connection (after a
    /// 500, say) just as the next request goes out on it.
    fresh: reqwest::Client,
    fresh_direct: reqwest::Client,
    /// Operations (by name) sent through `direct`.
    no_follow: std::sync::Arc<std::collections::HashSet<String>>,
    base: url::Url,
    max_body: usize,
    /// Operations whose invalid answer's first bytes were read already.
    probed: std::sync::Arc<std::sync::Mutex<std::collections::HashSet<String>>>,
    /// hyper's client, for a plain-HTTP target on this machine.
    plain: Option<super::plain::Plain>,
}

/// An answer's head, from either client.
enum Answer {
    Reqwest(reqwest::Response),
    Plain(hyper::Response<hyper::body::Incoming>),
}

/// A failure to get an answer, from either client.
enum SendError {
    Reqwest(reqwest::Error),
    Plain(super::plain::PlainError),
}

/// An answer's body as it comes, each failure in words.
type BodyStream =
    std::pin::Pin<Box<dyn futures_util::Stream<Item = Result<bytes::Bytes, String>> + Send>>;

impl Transport {
    /// A transport for `base`, reading at most `max_body` bytes of each body.
    pub fn new(
        base: url::Url,
        max_body: usize,
        concurrency: usize,
        tls: &super::tls::Tls,
    ) -> Result<Transport, super::tls::ClientError> {
        // Every request goes to `base`'s origin, so the first URL's origin
        // is the target's.
        let policy = same_origin_redirects();
        // A plain-HTTP target's clients never speak TLS (see `never_used`).
        let plain = match base.scheme() {
            "http" => Some(super::tls::never_used().map_err(super::tls::ClientError::Tls)?),
            _ => None,
        };
        let builder = || {
            let builder = reqwest::Client::builder()
                .user_agent(concat!("cartograph/", env!("CARGO_PKG_VERSION")))
                .pool_max_idle_per_host(concurrency.max(1))
                .connect_timeout(Duration::from_secs(10))
                .tcp_nodelay(true);
            match &plain {
                Some(config) => Ok(builder.tls_backend_preconfigured(config.clone())),
                None => tls.apply(builder),
            }
        };
        let client = builder()?.redirect(policy).build()?;
        let direct = builder()?
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        let fresh = builder()?
            .pool_max_idle_per_host(0)
            .redirect(same_origin_redirects())
            .build()?;
        let fresh_direct = builder()?
            .pool_max_idle_per_host(0)
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Transport {
            client,
            direct,
            fresh,
            fresh_direct,
            no_follow: Default::default(),
            max_body,
            probed: Default::default(),
            plain: super::plain::Plain::for_target(&base, concurrency),
            base,
        })
    }

    /// Sends the requests of these operations without following redirects:
    /// they document a 3xx, and the redirect itself is their answer.
    pub fn without_redirects_for(mut self, operations: impl IntoIterator<Item = String>) -> Self {
        self.no_follow = std::sync::Arc::new(operations.into_iter().collect());
        self
    }

    /// The target's base URL.
    pub fn base(&self) -> &url::Url {
        &self.base
    }

    /// The absolute URL of a request path.
    pub fn url_for(&self, path: &str) -> String {
        if path.is_empty() {
            // The target itself (a GraphQL endpoint), exactly as given.
            return self.base.as_str().to_string();
        }
        let base = self.base.as_str().trim_end_matches('/');
        if path.starts_with('/') {
            format!("{base}{path}")
        } else {
            format!("{base}/{path}")
        }
    }

    /// The URL a request path is sent to, with the API keys of `query`
    /// added to its query (they are in no request path, so in no file).
    fn url_with(&self, path: &str, query: &[(String, String)]) -> String {
        let mut url = self.url_for(path);
        if !query.is_empty() {
            url.push(if url.contains('?') { '&' } else { '?' });
            url.push_str(
                &url::form_urlencoded::Serializer::new(String::new())
                    .extend_pairs(query)
                    .finish(),
            );
        }
        url
    }

    /// [`Transport::url_with`] as the URL it parses to, made from the
    /// target's without parsing its host again (the host's parse, with its
    /// IDNA pass, cost about 4% of each request); `Err` with the text to
    /// parse when the path is not plain printable ASCII, or holds a
    /// fragment, or the target has a query or a fragment of its own (the
    /// text then goes to the HTTP stack as before).
    fn target(&self, path: &str, query: &[(String, String)]) -> Result<url::Url, String> {
        let plain = !path.is_empty()
            && path.bytes().all(|b| b.is_ascii_graphic() && b != b'#')
            && self.base.query().is_none()
            && self.base.fragment().is_none()
            && !self.base.cannot_be_a_base();
        if !plain {
            return Err(self.url_with(path, query));
        }
        let (path, own) = match path.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (path, None),
        };
        let mut full = self.base.path().trim_end_matches('/').to_string();
        if !path.starts_with('/') {
            full.push('/');
        }
        full.push_str(path);
        let mut url = self.base.clone();
        url.set_path(&full);
        let keys = (!query.is_empty()).then(|| {
            url::form_urlencoded::Serializer::new(String::new())
                .extend_pairs(query)
                .finish()
        });
        match (own, keys) {
            (None, None) => {}
            (Some(q), None) => url.set_query(Some(q)),
            (None, Some(k)) => url.set_query(Some(&k)),
            (Some(q), Some(k)) => url.set_query(Some(&format!("{q}&{k}"))),
        }
        Ok(url)
    }

    /// Sends one request with extra (credential) headers and query API
    /// keys, waiting at most `timeout` for the whole exchange, body included.
    pub async fn send(
        &self,
        req: &RequestSpec,
        credentials: &[(String, String)],
        query: &[(String, String)],
        timeout: Duration,
    ) -> Received {
        let started = Instant::now();
        let deadline = started + timeout;
        let method = match reqwest::Method::from_bytes(req.method.as_bytes()) {
            Ok(m) => m,
            Err(_) => {
                return failed(
                    started,
                    FailureKind::Other,
                    format!("bad method {}", escape_bytes(req.method.as_bytes())),
                );
            }
        };
        let direct = self.no_follow.contains(&req.operation);
        let (client, fresh) = if direct {
            (&self.direct, &self.fresh_direct)
        } else {
            (&self.client, &self.fresh)
        };
        let request = |client: &reqwest::Client| {
            let mut builder = match self.target(&req.path, query) {
                Ok(url) => client.request(method.clone(), url),
                Err(text) => client.request(method.clone(), text),
            };
            for (name, value) in req.headers.iter().chain(credentials) {
                builder = builder.header(name.as_str(), value.as_str());
            }
            if let Some(body) = &req.body {
                if let Some(ct) = &req.content_type {
                    builder = builder.header(reqwest::header::CONTENT_TYPE, ct.as_str());
                }
                builder = builder.body(body.clone());
            }
            builder.send()
        };
        let reqwest_answer = |client: &reqwest::Client| {
            let sent = request(client);
            async move { sent.await.map(Answer::Reqwest).map_err(SendError::Reqwest) }
        };
        let mut sent = match (&self.plain, self.target(&req.path, query)) {
            (Some(plain), Ok(url)) => {
                let mut headers: Vec<(&str, &str)> = req
                    .headers
                    .iter()
                    .chain(credentials)
                    .map(|(n, v)| (n.as_str(), v.as_str()))
                    .collect();
                if req.body.is_some()
                    && let Some(ct) = &req.content_type
                {
                    headers.push(("content-type", ct.as_str()));
                }
                let out = super::plain::Outgoing {
                    method: method.clone(),
                    url,
                    headers: &headers,
                    body: req.body.as_deref(),
                    follow: !direct,
                };
                tokio::time::timeout(timeout, async {
                    plain
                        .send(out)
                        .await
                        .map(Answer::Plain)
                        .map_err(SendError::Plain)
                })
                .await
            }
            _ => tokio::time::timeout(timeout, reqwest_answer(client)).await,
        };
        if let Ok(Err(e)) = &sent
            && classify_any(e).0 == FailureKind::NoAnswer
        {
            // Perhaps a kept-alive connection the server had just closed:
            // the request goes once more on a connection of its own, and
            // only a second silence is the server's.
            let left = deadline.saturating_duration_since(Instant::now());
            sent = tokio::time::timeout(left, reqwest_answer(fresh)).await;
        }
        let response = match sent {
            Err(_) => return timed_out(started, timeout),
            Ok(Err(e)) => {
                let (kind, cause) = classify_any(&e);
                if kind == FailureKind::Timeout {
                    return timed_out(started, timeout);
                }
                let mut message = match e {
                    // The URL holds the query API keys: the message goes without.
                    SendError::Reqwest(e) if !query.is_empty() => error_chain(&e.without_url()),
                    SendError::Reqwest(e) => error_chain(&e),
                    SendError::Plain(e) => error_chain(&e),
                };
                if kind == FailureKind::InvalidHttp {
                    let left = deadline.saturating_duration_since(Instant::now());
                    message = match self.first_bytes(req, credentials, query, left).await {
                        Some(raw) => {
                            format!("{message}; the answer began \"{}\"", escape_bytes(&raw))
                        }
                        None => format!(
                            "{message} (its first bytes are recorded for the first such answer of an operation, over plain HTTP)"
                        ),
                    };
                }
                let mut received = failed(started, kind, message);
                if let Some(f) = &mut received.failure {
                    f.cause = cause;
                }
                return received;
            }
            Ok(Ok(r)) => r,
        };
        let status = match &response {
            Answer::Reqwest(r) => r.status().as_u16(),
            Answer::Plain(r) => r.status().as_u16(),
        };
        let head = match &response {
            Answer::Reqwest(r) => r.headers(),
            Answer::Plain(r) => r.headers(),
        };
        let headers: Vec<(String, String)> = head
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let mut body = Vec::new();
        let mut truncated = false;
        let mut failure = None;
        // A body sent compressed is decoded as it comes, and --max-body
        // counts what it decodes to; its bytes as sent may run a little
        // past that (incompressible data grows a little).
        let mut decoder = headers
            .iter()
            .find(|(n, _)| n == "content-encoding")
            .and_then(|(_, v)| super::decode::Decoder::for_encoding(v, self.max_body));
        let max_raw = if decoder.is_some() {
            self.max_body.saturating_add(self.max_body / 8 + 4096)
        } else {
            self.max_body
        };
        let mut stream: BodyStream = match response {
            Answer::Reqwest(r) => {
                let keys = !query.is_empty();
                Box::pin(r.bytes_stream().map(move |c| {
                    c.map_err(|e| {
                        let e = if keys { e.without_url() } else { e };
                        error_chain(&e)
                    })
                }))
            }
            Answer::Plain(r) => Box::pin(
                http_body_util::BodyDataStream::new(r.into_body())
                    .map(|c| c.map_err(|e| error_chain(&e))),
            ),
        };
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, stream.next()).await {
                Err(_) => {
                    truncated = true;
                    break;
                }
                Ok(None) => break,
                Ok(Some(Ok(chunk))) => {
                    let room = max_raw - body.len();
                    let whole = chunk.len() <= room;
                    let chunk = &chunk[..chunk.len().min(room)];
                    body.extend_from_slice(chunk);
                    if let Some(d) = &mut decoder
                        && d.feed(chunk) == super::decode::Fed::Full
                    {
                        truncated = true;
                        break;
                    }
                    if !whole {
                        truncated = true;
                        break;
                    }
                }
                Ok(Some(Err(e))) => {
                    // A reset or close in the middle of the body: the answer
                    // as a whole is not one a client can read.
                    truncated = true;
                    failure = Some(Failure::new(
                        FailureKind::InvalidHttp,
                        format!(
                            "status {status}, then the answer was cut off after {} byte(s) of its body ({}); the body began \"{}\"",
                            body.len(),
                            e,
                            escape_bytes(&body[..body.len().min(FIRST_BYTES)])
                        ),
                    ));
                    break;
                }
            }
        }
        if let Some(d) = decoder {
            (body, truncated) = d.finish(body, truncated);
            // A body kept as sent (not in its coding) may be longer.
            if body.len() > self.max_body {
                body.truncate(self.max_body);
                truncated = true;
            }
        }
        Received {
            status: Some(status),
            headers,
            body,
            truncated,
            failure,
            elapsed: started.elapsed(),
        }
    }

    /// The first bytes the server sends back to `req`, read from a plain
    /// socket: the HTTP stack keeps nothing of an answer it cannot parse.
    /// The request is sent again for this, so only once per operation, and
    /// only over plain HTTP (`None` otherwise).
    async fn first_bytes(
        &self,
        req: &RequestSpec,
        credentials: &[(String, String)],
        query: &[(String, String)],
        limit: Duration,
    ) -> Option<Vec<u8>> {
        if self.base.scheme() != "http" {
            return None;
        }
        if !self
            .probed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(req.operation.clone())
        {
            return None;
        }
        let url = url::Url::parse(&self.url_with(&req.path, query)).ok()?;
        let host = url.host_str()?.to_string();
        let port = url.port_or_known_default()?;
        let mut target = url.path().to_string();
        if let Some(q) = url.query() {
            target.push('?');
            target.push_str(q);
        }
        let mut head = format!(
            "{} {target} HTTP/1.1\r\nHost: {}\r\nUser-Agent: cartograph/{}\r\nConnection: close\r\n",
            req.method,
            url.authority(),
            env!("CARGO_PKG_VERSION")
        );
        for (name, value) in req.headers.iter().chain(credentials) {
            // A value that would break the head is left out, not sent raw.
            if !value.contains(['\r', '\n']) {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
        }
        let body = req.body.as_deref().unwrap_or("");
        if let Some(ct) = &req.content_type {
            head.push_str(&format!("Content-Type: {ct}\r\n"));
        }
        if req.body.is_some() {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        let exchange = async {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let host = host.trim_start_matches('[').trim_end_matches(']');
            let mut stream = tokio::net::TcpStream::connect((host, port)).await.ok()?;
            stream.write_all(head.as_bytes()).await.ok()?;
            stream.write_all(body.as_bytes()).await.ok()?;
            let mut got = Vec::new();
            let mut buf = [0u8; 512];
            while got.len() < FIRST_BYTES {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                }
            }
            got.truncate(FIRST_BYTES);
            Some(got)
        };
        tokio::time::timeout(limit.min(Duration::from_secs(5)), exchange)
            .await
            .ok()
            .flatten()
            .filter(|b| !b.is_empty())
    }
}

/// How many bytes of an invalid answer are kept for the report.
const FIRST_BYTES: usize = 96;

/// Bytes as printable ASCII: `\r`, `\n`, `\"`, `\\` and `\xNN` for the rest,
/// so that what a hostile server sends stays inert in every file.
pub(super) fn escape_bytes(bytes: &[u8]) -> String {
    bytes
        .iter()
        .flat_map(|b| std::ascii::escape_default(*b))
        .map(char::from)
        .collect()
}

/// The failure of an error of the HTTP stack, from its kind and the kinds
/// of its sources (hyper's, the operating system's), not from its wording.
/// What kind of failure `e` is, from either client.
fn classify_any(e: &SendError) -> (FailureKind, Cause) {
    match e {
        SendError::Reqwest(e) => classify(e),
        SendError::Plain(e) => super::plain::classify(e),
    }
}

fn classify(e: &reqwest::Error) -> (FailureKind, Cause) {
    use super::plain::{after_connect, causes, connect_cause};
    let (io, hyper) = causes(e);
    if e.is_timeout() {
        return (FailureKind::Timeout, Cause::Unknown);
    }
    if e.is_connect() {
        let cause = if e.is_dns() {
            Cause::Dns
        } else {
            match connect_cause(io) {
                Cause::Unknown if super::tls::answered_in_plain_http(e) => Cause::PlainHttp,
                // What is left of a failed connection over TLS is its
                // handshake (the certificate).
                Cause::Unknown if e.url().is_some_and(|u| u.scheme() == "https") => Cause::Tls,
                cause => cause,
            }
        };
        return (FailureKind::Connection, cause);
    }
    (after_connect(io, hyper), Cause::Unknown)
}

/// No answer within `limit`.
fn timed_out(started: Instant, limit: Duration) -> Received {
    let mut received = failed(
        started,
        FailureKind::Timeout,
        "no response before the timeout".into(),
    );
    if let Some(f) = &mut received.failure {
        f.limit = Some(limit);
    }
    received
}

fn failed(started: Instant, kind: FailureKind, message: String) -> Received {
    Received {
        status: None,
        headers: Vec::new(),
        body: Vec::new(),
        truncated: false,
        failure: Some(Failure::new(kind, message)),
        elapsed: started.elapsed(),
    }
}

/// The error and its causes in one line (reqwest's own message is often just
/// "error sending request").
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut source = e.source();
    while let Some(s) = source {
        parts.push(s.to_string());
        source = s.source();
    }
    parts.dedup();
    parts.join(": ")
}

/// A client for what a run fetches besides its requests (a description,
/// the introspection query): the `tls` settings, `timeout` for the whole
/// exchange, redirects followed within the origin only.
pub fn fetch_client(
    tls: &super::tls::Tls,
    timeout: Duration,
) -> Result<reqwest::Client, super::tls::ClientError> {
    tls.apply(
        reqwest::Client::builder()
            .user_agent(concat!("cartograph/", env!("CARGO_PKG_VERSION")))
            .timeout(timeout)
            .redirect(same_origin_redirects()),
    )?
    .build()
    .map_err(super::tls::ClientError::from)
}

/// Follows at most 5 redirects, and only within the first request's
/// origin: another host never receives the run's headers (`-H` values
/// included); its 3xx is the answer.
pub(super) fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let same = attempt
            .previous()
            .first()
            .is_none_or(|first| first.origin() == attempt.url().origin());
        if attempt.previous().len() >= 5 || !same {
            attempt.stop()
        } else {
            attempt.follow()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The URL made without parsing the host is the one the text parses
    /// to, for every shape of path and target; the others go as text.
    #[test]
    fn a_request_url_is_the_one_its_text_parses_to() {
        let paths = [
            "/items",
            "/items/1",
            "items/1",
            "/",
            "//other.example/x",
            "/a/../b/./c",
            "/a\\b",
            "/%zz/%41",
            "/items?",
            "/items?q='x'&r=%20",
            "?only=query",
            "/items?a=1?b=2",
            "/x%2F..%2Fy",
            "/a/b/",
            "/[::1]/x",
            "/x#frag",
            "/ü",
            "/a b",
            "/tab\there",
            "/end ",
            "",
        ];
        let bases = [
            "http://127.0.0.1:8080",
            "http://127.0.0.1:8080/",
            "http://localhost:1/api",
            "http://localhost:1/api/v1/",
            "https://user:pw@example.test/base%20dir/",
            "http://[::1]:9/",
            "http://localhost:1/api?fixed=1",
        ];
        let keys = [
            Vec::new(),
            vec![("api_key".to_string(), "a b&c=d".to_string())],
        ];
        let mut fast = 0;
        for base in bases {
            let transport =
                Transport::new(url::Url::parse(base).unwrap(), 1024, 1, &Default::default())
                    .unwrap();
            for path in paths {
                for query in &keys {
                    let text = transport.url_with(path, query);
                    match transport.target(path, query) {
                        Ok(url) => {
                            fast += 1;
                            assert_eq!(
                                url,
                                url::Url::parse(&text).unwrap(),
                                "{base} + {path:?} + {query:?}"
                            );
                        }
                        Err(t) => assert_eq!(t, text),
                    }
                }
            }
        }
        // Most requests take the quick way.
        assert!(fast > 150, "{fast}");
    }
}
