//! A purpose-built misbehaving HTTP server for testing Cartograph's HTTP engine.
//!
//! [`Misbehaving::start`] runs two servers on free ports of 127.0.0.1 in the
//! current tokio runtime:
//!
//! - the main server, described by [`MISBEHAVING_SPEC`], whose endpoints are
//!   slow, endless, huge, invalid (JSON that is not, a bad status line, a
//!   negative `Content-Length`, a reset in the middle of the answer), dropped
//!   or reset before answering, rate limited (for a while, or far past any
//!   budget), redirecting or demanding fresh credentials;
//! - an "other origin" that answers 200 to anything, so tests can check that
//!   an off-origin redirect never carries credentials there.
//!
//! Both record every request they receive, for tests to assert on.
//!
//! ## How `/drop` drops
//!
//! A handler inside axum cannot abort its connection: hyper always answers
//! something (at worst a 500). So the main server's TCP listener is not given
//! to axum directly. A front task accepts each connection and reads its request
//! head; a `/drop` request is recorded and its socket closed without a byte
//! written, every other connection is handed to axum together with the bytes
//! already read (`/reset`, `/bad-status`, `/negative-length` and `/reset-mid`
//! are answered by the front door itself, with raw bytes no HTTP library
//! would write). That only sees the first request of a connection, so every
//! response carries `Connection: close`: each connection then holds exactly one
//! request, and a `/drop` can never arrive on a reused connection.

use std::convert::Infallible;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

// `futures_util` through async-graphql (already a dependency) rather than a new
// dev-dependency: only its stream constructors are needed, for streamed bodies.
use async_graphql::futures_util::stream;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::Listener;
use axum::{Json, Router};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The OpenAPI 3.0 description of the main server.
pub const MISBEHAVING_SPEC: &str = include_str!("../../fixtures/servers/misbehaving.yaml");

/// How many calls to `/storm` (and, separately, to `/storm-date`) answer 429.
pub const STORM_FAILURES: u32 = 3;
/// Requests allowed per window on `/limited` (and, separately, `/limited-x`).
pub const RATE_LIMIT: u32 = 5;
/// Length of the fixed rate-limit window.
pub const RATE_WINDOW: Duration = Duration::from_secs(2);
/// How long `/slow` waits before answering.
pub const SLOW_DELAY: Duration = Duration::from_secs(10);
/// Exact size of the `/big` body (20 MiB), also sent as its Content-Length.
pub const BIG_BODY_BYTES: usize = 20 * 1024 * 1024;
/// Body of `/invalid-json`: JSON cut off in the middle of an object.
pub const INVALID_JSON_BODY: &str = r#"{"id": 1, "name": "#;
/// What `/bad-status` sends: a status that is not three digits.
pub const BAD_STATUS_ANSWER: &[u8] =
    b"HTTP/1.1 abc OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
/// What `/negative-length` sends: a negative `Content-Length`.
pub const NEGATIVE_LENGTH_ANSWER: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: -5\r\n\r\n{}";
/// What `/reset-mid` sends before it resets the connection: a head that
/// promises 100 bytes, and 14 of them.
pub const RESET_MID_ANSWER: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"id\": 1, \"nam";
/// The `Retry-After` (seconds) of `/rate-long` and `/rate-long-2`: longer
/// than any test's budget.
pub const LONG_RETRY_AFTER: u64 = 120;

/// Size of each `/endless` chunk and the pause between chunks: about 4 MB/s,
/// fast enough to hit a body cap quickly, slow enough not to hog a test's CPU.
const ENDLESS_CHUNK_BYTES: usize = 16 * 1024;
const ENDLESS_PAUSE: Duration = Duration::from_millis(4);
/// `/big` is sent in chunks of this many bytes (even, so it holds whole "0," pairs).
const BIG_CHUNK_BYTES: usize = 64 * 1024;
/// Request heads larger than this are handed to axum unexamined (it rejects them).
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// A connection that sends no complete request head in this time is closed,
/// so half-open connections do not keep a task alive for the rest of the test.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);

/// One request as a server received it.
#[derive(Debug, Clone)]
pub struct Received {
    /// Method, e.g. "GET".
    pub method: String,
    /// Path with the query string, e.g. "/ok?x=1".
    pub path: String,
    /// Headers in arrival order, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// When the request arrived.
    pub at: Instant,
}

impl Received {
    /// The first value of header `name` (any case), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn from_parts(method: &Method, uri: &Uri, headers: &HeaderMap) -> Received {
        let path = uri
            .path_and_query()
            .map(|pq| pq.as_str().to_string())
            .unwrap_or_else(|| uri.path().to_string());
        let headers = headers
            .iter()
            .map(|(name, value)| {
                let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                // `HeaderName`s are stored lower-case already.
                (name.as_str().to_string(), value)
            })
            .collect();
        Received {
            method: method.as_str().to_string(),
            path,
            headers,
            at: Instant::now(),
        }
    }
}

/// The two running servers; dropping it stops them too.
pub struct Misbehaving {
    /// Base URL of the main server, e.g. "http://127.0.0.1:41234" (no trailing slash).
    pub base_url: String,
    /// Base URL of the other-origin server (a different port).
    pub other_origin_url: String,
    main: Arc<MainState>,
    other: Arc<Log>,
    tasks: Vec<JoinHandle<()>>,
}

impl Misbehaving {
    /// Starts the main server and the other-origin server on free ports of 127.0.0.1.
    ///
    /// Panics when a port cannot be bound: a test cannot run without its server.
    pub async fn start() -> Misbehaving {
        let other_listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("bind the other-origin server on 127.0.0.1");
        let other_addr = other_listener
            .local_addr()
            .expect("other-origin local address");
        let other_origin_url = format!("http://{other_addr}");

        let main_listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("bind the misbehaving server on 127.0.0.1");
        let main_addr = main_listener.local_addr().expect("main local address");
        let base_url = format!("http://{main_addr}");

        let main = Arc::new(MainState {
            log: Log::default(),
            other_origin_url: other_origin_url.clone(),
            storm_calls: AtomicU32::new(0),
            storm_date_calls: AtomicU32::new(0),
            limited: Mutex::new(Window::default()),
            limited_x: Mutex::new(Window::default()),
        });
        let other = Arc::new(Log::default());

        let (to_axum, from_front) = mpsc::unbounded_channel();
        let front = tokio::spawn(front_door(main_listener, to_axum, Arc::clone(&main)));
        let handed = Handed {
            connections: from_front,
            addr: main_addr,
        };
        let main_app = main_router(Arc::clone(&main));
        let main_task = tokio::spawn(async move {
            // Serving only ends with an I/O error on the listener, which the
            // tests would notice as failed requests anyway.
            let _ = axum::serve(handed, main_app).await;
        });

        let other_app = Router::new()
            .fallback(collect)
            .with_state(Arc::clone(&other));
        let other_task = tokio::spawn(async move {
            let _ = axum::serve(other_listener, other_app).await;
        });

        Misbehaving {
            base_url,
            other_origin_url,
            main,
            other,
            tasks: vec![front, main_task, other_task],
        }
    }

    /// Every request the main server received, in arrival order.
    pub fn requests(&self) -> Vec<Received> {
        self.main.log.snapshot()
    }

    /// Every request the other-origin server received, in arrival order.
    pub fn other_origin_requests(&self) -> Vec<Received> {
        self.other.snapshot()
    }

    /// Stops accepting connections on both servers.
    ///
    /// Connections already open (an `/endless` body, a `/slow` wait) end when
    /// their client goes away or the test's runtime shuts down.
    pub async fn shutdown(mut self) {
        for task in &self.tasks {
            task.abort();
        }
        for task in &mut self.tasks {
            // A cancelled task reports `Err(cancelled)`, which is the point.
            let _ = task.await;
        }
    }
}

impl Drop for Misbehaving {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// A request log shared between a server and the test.
#[derive(Default)]
struct Log(Mutex<Vec<Received>>);

impl Log {
    fn push(&self, received: Received) {
        lock(&self.0).push(received);
    }

    fn snapshot(&self) -> Vec<Received> {
        lock(&self.0).clone()
    }
}

/// Locks `mutex` even if a panicking test thread poisoned it: the data (a log,
/// a counter) stays meaningful, and one failed test should not cascade.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// State of the main server; counters are per server so tests stay independent.
struct MainState {
    log: Log,
    other_origin_url: String,
    storm_calls: AtomicU32,
    storm_date_calls: AtomicU32,
    limited: Mutex<Window>,
    limited_x: Mutex<Window>,
}

type Shared = State<Arc<MainState>>;

fn main_router(state: Arc<MainState>) -> Router {
    Router::new()
        .route("/ok", get(ok).delete(delete_ok))
        .route("/slow", get(slow))
        .route("/endless", get(endless))
        .route("/big", get(big))
        .route("/invalid-json", get(invalid_json))
        // Never reached through the front door; kept so a `/drop` that somehow
        // got past it still fails loudly instead of looking like a 404.
        .route("/drop", get(drop_fallback))
        .route("/storm", get(storm))
        .route("/storm-date", get(storm_date))
        .route("/limited", get(limited))
        .route("/limited-x", get(limited_x))
        .route("/redirect-away", get(redirect_away))
        .route("/redirect-same", get(redirect_same))
        .route("/unauthorized", get(unauthorized))
        .route("/rate-long", get(rate_long))
        .route("/rate-long-2", get(rate_long))
        .route("/echo", axum::routing::post(echo))
        .fallback(not_found)
        // The description promises 404 for anything it does not list, wrong
        // methods on listed paths included.
        .method_not_allowed_fallback(not_found)
        .layer(middleware::from_fn_with_state(
            Arc::clone(&state),
            record_and_close,
        ))
        .with_state(state)
}

/// Records the request, then marks the response `Connection: close` (see the
/// module docs: one request per connection is what lets `/drop` work).
async fn record_and_close(State(state): Shared, request: Request, next: Next) -> Response {
    state.log.push(Received::from_parts(
        request.method(),
        request.uri(),
        request.headers(),
    ));
    let mut response = next.run(request).await;
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({ "error": message }))).into_response()
}

async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "not found")
}

async fn ok() -> Json<Value> {
    Json(json!({ "id": 1, "name": "fine" }))
}

async fn delete_ok() -> StatusCode {
    StatusCode::NO_CONTENT
}

async fn slow() -> Json<Value> {
    // An async sleep: other requests keep being served meanwhile.
    tokio::time::sleep(SLOW_DELAY).await;
    Json(json!({ "id": 1, "name": "slow" }))
}

/// `[1,1,1,...` forever, one chunk every few milliseconds.
async fn endless() -> Response {
    let chunk = Bytes::from("1,".repeat(ENDLESS_CHUNK_BYTES / 2));
    let body = stream::unfold(true, move |first| {
        let chunk = chunk.clone();
        async move {
            if first {
                return Some((Ok::<_, Infallible>(Bytes::from_static(b"[")), false));
            }
            tokio::time::sleep(ENDLESS_PAUSE).await;
            Some((Ok(chunk), false))
        }
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        Body::from_stream(body),
    )
        .into_response()
}

/// Where the `/big` stream is: the body is `[` + `0,` × pairs + padding + `0]`.
enum BigPart {
    Open,
    /// This many "0," pairs are still to be sent, then the closing bytes.
    Pairs(usize),
    Done,
}

/// A valid JSON array of exactly [`BIG_BODY_BYTES`] bytes, generated while
/// being sent so the server never holds 20 MiB. The Content-Length is
/// announced, so clients can refuse it before reading (`/endless` covers the
/// case without a length).
async fn big() -> Response {
    // `[` and `0]` take 3 bytes; "0," pairs fill the rest, and one space pads
    // an odd remainder (whitespace is valid JSON between tokens).
    let pairs = (BIG_BODY_BYTES - 3) / 2;
    let close = Bytes::from(format!("{}0]", " ".repeat((BIG_BODY_BYTES - 3) % 2)));
    let full_chunk = Bytes::from("0,".repeat(BIG_CHUNK_BYTES / 2));
    let body = stream::unfold(BigPart::Open, move |part| {
        let next = match part {
            BigPart::Open => Some((Bytes::from_static(b"["), BigPart::Pairs(pairs))),
            BigPart::Pairs(0) => Some((close.clone(), BigPart::Done)),
            BigPart::Pairs(left) => {
                let now = left.min(BIG_CHUNK_BYTES / 2);
                Some((full_chunk.slice(..now * 2), BigPart::Pairs(left - now)))
            }
            BigPart::Done => None,
        };
        std::future::ready(next.map(|(bytes, part)| (Ok::<_, Infallible>(bytes), part)))
    });
    (
        [
            (header::CONTENT_TYPE, "application/json".to_string()),
            (header::CONTENT_LENGTH, BIG_BODY_BYTES.to_string()),
        ],
        Body::from_stream(body),
    )
        .into_response()
}

async fn invalid_json() -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        INVALID_JSON_BODY,
    )
        .into_response()
}

async fn drop_fallback() -> Response {
    error(
        StatusCode::INTERNAL_SERVER_ERROR,
        "/drop reached axum: the front door should have closed the connection",
    )
}

/// The `call`-th storm call (1-based): 429 during the storm, 200 after it.
fn storm_answer(call: u32, retry_after: String) -> Response {
    if call <= STORM_FAILURES {
        let mut response = error(StatusCode::TOO_MANY_REQUESTS, "too many requests");
        if let Ok(value) = HeaderValue::from_str(&retry_after) {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        response
    } else {
        Json(json!({ "ok": true })).into_response()
    }
}

async fn storm(State(state): Shared) -> Response {
    let call = state
        .storm_calls
        .fetch_add(1, Ordering::SeqCst)
        .saturating_add(1);
    storm_answer(call, "1".to_string())
}

async fn storm_date(State(state): Shared) -> Response {
    let call = state
        .storm_date_calls
        .fetch_add(1, Ordering::SeqCst)
        .saturating_add(1);
    // HTTP dates drop the fraction of a second, so now + 2 s lands 1–2 s ahead.
    let at = SystemTime::now() + Duration::from_secs(2);
    storm_answer(call, http_date(at))
}

/// A fixed rate-limit window, started by the first request after the previous
/// window ended.
#[derive(Default)]
struct Window {
    started: Option<Instant>,
    used: u32,
}

/// What a request's window looks like once the request is counted.
struct Quota {
    allowed: bool,
    remaining: u32,
    /// Time left until the window resets.
    reset_in: Duration,
}

impl Window {
    fn take(&mut self) -> Quota {
        let now = Instant::now();
        let started = match self.started {
            Some(started) if now.duration_since(started) < RATE_WINDOW => started,
            _ => {
                self.used = 0;
                self.started = Some(now);
                now
            }
        };
        self.used = self.used.saturating_add(1);
        Quota {
            allowed: self.used <= RATE_LIMIT,
            remaining: RATE_LIMIT.saturating_sub(self.used),
            reset_in: RATE_WINDOW.saturating_sub(now.duration_since(started)),
        }
    }
}

/// Whole seconds, rounded up so a client that waits this long is past the reset.
fn ceil_secs(duration: Duration) -> u64 {
    let secs = duration.as_secs();
    if duration.subsec_nanos() > 0 {
        secs + 1
    } else {
        secs
    }
}

fn rate_limited(quota: &Quota, headers: [(&'static str, String); 3]) -> Response {
    let mut response = if quota.allowed {
        Json(json!({ "ok": true })).into_response()
    } else {
        // Deliberately no Retry-After: clients must read the rate-limit headers.
        error(StatusCode::TOO_MANY_REQUESTS, "rate limit exceeded")
    };
    for (name, value) in headers {
        if let Ok(value) = HeaderValue::from_str(&value) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

async fn limited(State(state): Shared) -> Response {
    let quota = lock(&state.limited).take();
    rate_limited(
        &quota,
        [
            ("ratelimit-limit", RATE_LIMIT.to_string()),
            ("ratelimit-remaining", quota.remaining.to_string()),
            ("ratelimit-reset", ceil_secs(quota.reset_in).to_string()),
        ],
    )
}

async fn limited_x(State(state): Shared) -> Response {
    let quota = lock(&state.limited_x).take();
    // GitHub style: the reset is a UNIX timestamp, not a delay.
    let reset_at = SystemTime::now() + quota.reset_in;
    let epoch = reset_at
        .duration_since(UNIX_EPOCH)
        .map(ceil_secs)
        .unwrap_or(0);
    rate_limited(
        &quota,
        [
            ("x-ratelimit-limit", RATE_LIMIT.to_string()),
            ("x-ratelimit-remaining", quota.remaining.to_string()),
            ("x-ratelimit-reset", epoch.to_string()),
        ],
    )
}

fn found(location: &str) -> Response {
    let mut response = StatusCode::FOUND.into_response();
    if let Ok(value) = HeaderValue::from_str(location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
}

async fn redirect_away(State(state): Shared) -> Response {
    found(&format!("{}/collect", state.other_origin_url))
}

async fn redirect_same() -> Response {
    // Relative, as many servers send it: clients must resolve it themselves.
    found("/ok")
}

async fn unauthorized(headers: HeaderMap) -> Response {
    match headers.get(header::AUTHORIZATION) {
        Some(value) if value.as_bytes() != b"Bearer stale" => {
            Json(json!({ "authorized": true })).into_response()
        }
        _ => {
            let mut response = error(StatusCode::UNAUTHORIZED, "missing or stale credentials");
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            response
        }
    }
}

async fn echo(body: Bytes) -> Response {
    match serde_json::from_slice::<Value>(&body) {
        Ok(value) => (StatusCode::CREATED, Json(value)).into_response(),
        Err(_) => error(StatusCode::BAD_REQUEST, "the body is not JSON"),
    }
}

/// 429 with a `Retry-After` past any test's budget, every time.
async fn rate_long() -> Response {
    let mut response = error(StatusCode::TOO_MANY_REQUESTS, "come back much later");
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(LONG_RETRY_AFTER));
    response
}

/// The other origin: records everything and answers 200.
async fn collect(State(log): State<Arc<Log>>, request: Request) -> Json<Value> {
    log.push(Received::from_parts(
        request.method(),
        request.uri(),
        request.headers(),
    ));
    Json(json!({ "collected": true }))
}

/// Formats `time` as an RFC 7231 IMF-fixdate, e.g. "Sun, 06 Nov 1994 08:49:37 GMT".
pub fn http_date(time: SystemTime) -> String {
    const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    // Times before 1970 never occur here; clamping keeps the function total.
    let secs = time
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let days = secs / 86_400;
    let of_day = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{}, {day:02} {} {year:04} {:02}:{:02}:{:02} GMT",
        // 1970-01-01 was a Thursday.
        WEEKDAYS[(days % 7) as usize],
        MONTHS[(month - 1) as usize],
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60
    )
}

/// (year, month 1–12, day 1–31) of a count of days since 1970-01-01, by Howard
/// Hinnant's `civil_from_days` (no date crate is a dependency).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// The main server's front door: accepts connections, closes `/drop` ones
/// unanswered, and hands the rest to axum through `to_axum`.
async fn front_door(
    listener: TcpListener,
    to_axum: mpsc::UnboundedSender<(Replay, SocketAddr)>,
    state: Arc<MainState>,
) {
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                // One task per connection, so a client slow to send its head
                // does not hold up the others.
                tokio::spawn(triage(stream, peer, to_axum.clone(), Arc::clone(&state)));
            }
            // Typically too many open files: back off briefly rather than spin.
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

async fn triage(
    stream: TcpStream,
    peer: SocketAddr,
    to_axum: mpsc::UnboundedSender<(Replay, SocketAddr)>,
    state: Arc<MainState>,
) {
    let Ok(Ok(head)) = tokio::time::timeout(HEAD_TIMEOUT, read_head(&stream)).await else {
        // Silent or broken connection: nothing to serve.
        return;
    };
    if let Some(received) = parse_head(&head) {
        let target = received.path.split('?').next().unwrap_or_default();
        let raw: Option<&[u8]> = match target {
            "/drop" | "/reset" => Some(b""),
            "/bad-status" => Some(BAD_STATUS_ANSWER),
            "/negative-length" => Some(NEGATIVE_LENGTH_ANSWER),
            "/reset-mid" => Some(RESET_MID_ANSWER),
            _ => None,
        };
        if let Some(raw) = raw {
            let reset = target == "/reset" || target == "/reset-mid";
            state.log.push(received);
            answer_raw(stream, raw, reset).await;
            return;
        }
    }
    // The receiver only goes away when the server is shutting down.
    let _ = to_axum.send((
        Replay {
            head,
            read: 0,
            stream,
        },
        peer,
    ));
}

/// Writes `raw` (no HTTP framing of axum's), then closes the connection:
/// with a reset (RST) when `reset`, else normally. Dropping the socket with
/// nothing written is `/drop`: closed without a byte of response.
async fn answer_raw(mut stream: TcpStream, raw: &[u8], reset: bool) {
    use tokio::io::AsyncWriteExt;
    if !raw.is_empty() {
        let _ = stream.write_all(raw).await;
        let _ = stream.flush().await;
        // Let the bytes leave before the reset discards what is unsent.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    if reset {
        // SO_LINGER 0: closing sends RST instead of FIN.
        let _ = stream.set_zero_linger();
    }
    drop(stream);
}

/// Reads until the end of the request head (a blank line), end of stream or
/// [`MAX_HEAD_BYTES`]; whatever was read is replayed to axum afterwards.
async fn read_head(stream: &TcpStream) -> io::Result<Vec<u8>> {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while head.len() < MAX_HEAD_BYTES && !head.windows(4).any(|w| w == b"\r\n\r\n") {
        stream.readable().await?;
        match stream.try_read(&mut buf) {
            Ok(0) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
            // Readiness can be spurious; wait again.
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
    Ok(head)
}

/// The request line and headers of an HTTP/1 head, or `None` if it is not one.
fn parse_head(head: &[u8]) -> Option<Received> {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_string();
    let path = request_line.next()?.to_string();
    let headers = lines
        .take_while(|line| !line.is_empty())
        .filter_map(|line| {
            let (name, value) = line.split_once(':')?;
            Some((name.trim().to_ascii_lowercase(), value.trim().to_string()))
        })
        .collect();
    Some(Received {
        method,
        path,
        headers,
        at: Instant::now(),
    })
}

/// A connection whose first bytes were already read by the front door: reads
/// return those bytes first, then continue from the socket.
struct Replay {
    head: Vec<u8>,
    read: usize,
    stream: TcpStream,
}

impl AsyncRead for Replay {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.read < this.head.len() {
            let rest = &this.head[this.read..];
            let n = rest.len().min(buf.remaining());
            buf.put_slice(&rest[..n]);
            this.read += n;
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Replay {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// The connections the front door lets through, as an axum [`Listener`].
struct Handed {
    connections: mpsc::UnboundedReceiver<(Replay, SocketAddr)>,
    addr: SocketAddr,
}

impl Listener for Handed {
    type Io = Replay;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Replay, SocketAddr) {
        match self.connections.recv().await {
            Some(connection) => connection,
            // The front door stopped (shutdown): no connection will ever come.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.addr)
    }
}
