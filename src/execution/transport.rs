//! The HTTP transport: one reqwest client, a per-request timeout, a cap on the
//! body read, and redirects followed only within the target's origin, so that
//! credentials never reach another host.

use std::time::{Duration, Instant};

use futures_util::StreamExt;

use super::{Failure, FailureKind, RequestSpec};

/// A response as read: status, headers, body (capped), or the failure.
#[derive(Debug, Clone)]
pub struct Received {
    /// Status, when a response came.
    pub status: Option<u16>,
    /// Headers, lower-case names.
    pub headers: Vec<(String, String)>,
    /// Body bytes read, at most the cap.
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
    /// Operations (by name) sent through `direct`.
    no_follow: std::sync::Arc<std::collections::HashSet<String>>,
    base: url::Url,
    max_body: usize,
}

impl Transport {
    /// A transport for `base`, reading at most `max_body` bytes of each body.
    pub fn new(
        base: url::Url,
        max_body: usize,
        concurrency: usize,
        tls: &super::tls::Tls,
    ) -> Result<Transport, String> {
        // Every request goes to `base`'s origin, so the first URL's origin
        // is the target's.
        let policy = same_origin_redirects();
        let builder = || {
            tls.apply(
                reqwest::Client::builder()
                    .user_agent(concat!("cartograph/", env!("CARGO_PKG_VERSION")))
                    .pool_max_idle_per_host(concurrency.max(1))
                    .connect_timeout(Duration::from_secs(10))
                    .tcp_nodelay(true),
            )
        };
        let client = builder()?
            .redirect(policy)
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        let direct = builder()?
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Transport {
            client,
            direct,
            no_follow: Default::default(),
            base,
            max_body,
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

    /// Sends one request with extra (credential) headers, waiting at most `timeout`
    /// for the whole exchange, body included.
    pub async fn send(
        &self,
        req: &RequestSpec,
        credentials: &[(String, String)],
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
                    format!("bad method {}", req.method),
                )
            }
        };
        let client = if self.no_follow.contains(&req.operation) {
            &self.direct
        } else {
            &self.client
        };
        let mut builder = client.request(method, self.url_for(&req.path));
        for (name, value) in req.headers.iter().chain(credentials) {
            builder = builder.header(name.as_str(), value.as_str());
        }
        if let Some(body) = &req.body {
            if let Some(ct) = &req.content_type {
                builder = builder.header(reqwest::header::CONTENT_TYPE, ct.as_str());
            }
            builder = builder.body(body.clone());
        }
        let response = match tokio::time::timeout(timeout, builder.send()).await {
            Err(_) => {
                return failed(
                    started,
                    FailureKind::Timeout,
                    "no response before the timeout".into(),
                )
            }
            Ok(Err(e)) => {
                let kind = if e.is_timeout() {
                    FailureKind::Timeout
                } else if e.is_connect() || e.is_request() {
                    FailureKind::Connection
                } else {
                    FailureKind::Other
                };
                return failed(started, kind, error_chain(&e));
            }
            Ok(Ok(r)) => r,
        };
        let status = response.status().as_u16();
        let headers: Vec<(String, String)> = response
            .headers()
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
        let mut stream = response.bytes_stream();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, stream.next()).await {
                Err(_) => {
                    truncated = true;
                    break;
                }
                Ok(None) => break,
                Ok(Some(Ok(chunk))) => {
                    let room = self.max_body - body.len();
                    if chunk.len() > room {
                        body.extend_from_slice(&chunk[..room]);
                        truncated = true;
                        break;
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(Some(Err(e))) => {
                    truncated = true;
                    failure = Some(Failure {
                        kind: FailureKind::Connection,
                        message: format!("body cut off: {}", error_chain(&e)),
                    });
                    break;
                }
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
}

fn failed(started: Instant, kind: FailureKind, message: String) -> Received {
    Received {
        status: None,
        headers: Vec::new(),
        body: Vec::new(),
        truncated: false,
        failure: Some(Failure { kind, message }),
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
pub fn fetch_client(tls: &super::tls::Tls, timeout: Duration) -> Result<reqwest::Client, String> {
    tls.apply(
        reqwest::Client::builder()
            .user_agent(concat!("cartograph/", env!("CARGO_PKG_VERSION")))
            .timeout(timeout)
            .redirect(same_origin_redirects()),
    )?
    .build()
    .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

/// Follows at most 5 redirects, and only within the first request's
/// origin: another host never receives the run's headers (`-H` values
/// included); its 3xx is the answer.
pub fn same_origin_redirects() -> reqwest::redirect::Policy {
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
