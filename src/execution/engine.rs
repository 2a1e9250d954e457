//! The run loop: workers take tests from the driver, send their requests within
//! the budget, the request cap, the rate and the concurrency, and stream every
//! exchange to one observer.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::auth::Credentials;
use super::politeness::{Admission, Politeness, Signal};
use super::transport::Transport;
use super::{Exchange, RequestSpec, RunConfig};

/// One test: a sequence of requests, each chosen after seeing the earlier ones'
/// exchanges (so values can flow from responses to later requests).
pub trait TestRun: Send + std::any::Any {
    /// The next request, or `None` when the test is over.
    fn next_request(&mut self, done: &[Exchange]) -> Option<RequestSpec>;
}

/// Where tests come from and where finished ones go.
pub trait Driver: Send {
    /// The next test to run; `None` ends the run.
    fn next_test(&mut self) -> Option<Box<dyn TestRun>>;
    /// A test is over; these are its exchanges, in order (the observer
    /// gets them next, without a copy).
    fn finished(&mut self, test: Box<dyn TestRun>, exchanges: &[Exchange]);
    /// The server asked to wait on `operation` past the budget's end: its
    /// requests are not sent any more, so tests that call it are wasted.
    fn set_aside(&mut self, _operation: &str) {}
}

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The time budget ran out.
    Budget,
    /// `--max-requests` were sent.
    MaxRequests,
    /// Ctrl-C or SIGTERM.
    Interrupted,
    /// The driver had nothing more to run.
    Exhausted,
    /// Credentials could not be obtained (the auth command failed).
    AuthFailed,
    /// Requests kept failing before any answer (refused, reset, TLS, DNS).
    Unreachable,
    /// The server asked to wait past the budget's end (`Retry-After` on
    /// 429 or 503): on every operation it was asked, or on some of them
    /// while the others had their turn.
    RateLimited,
    /// Making or judging a test failed inside Cartograph (a panic): the
    /// search could not finish ([`RunOutcome::crash`] says where).
    Crashed,
}

impl StopReason {
    fn code(self) -> u8 {
        self as u8 + 1
    }

    fn from_code(c: u8) -> Option<StopReason> {
        [
            StopReason::Budget,
            StopReason::MaxRequests,
            StopReason::Interrupted,
            StopReason::Exhausted,
            StopReason::AuthFailed,
            StopReason::Unreachable,
            StopReason::RateLimited,
            StopReason::Crashed,
        ]
        .into_iter()
        .find(|r| r.code() == c)
    }
}

/// The result of a run.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// Requests sent (retries included).
    pub requests: u64,
    /// Requests a test asked for that read-only mode refused to send.
    pub refused: u64,
    /// Requests a test asked for that would have reached an excluded operation.
    pub fenced: u64,
    /// Why it ended.
    pub stop: StopReason,
    /// How long it took.
    pub elapsed: Duration,
    /// The auth command's error, when it stopped the run.
    pub auth_error: Option<String>,
    /// Why nothing answered, in plain words, when that stopped the run.
    pub unreachable: Option<String>,
    /// Operations the server asked to wait on past the budget's end, with
    /// the wait asked (they were not called again).
    pub rate_limited: Vec<(String, Duration)>,
    /// What failed inside Cartograph and stopped the search, with the
    /// panic's message, when something did.
    pub crash: Option<String>,
}

impl RunOutcome {
    /// What the server's long waits left untested, for the user; `None`
    /// when it asked none.
    pub fn rate_limit_warning(&self) -> Option<String> {
        if self.rate_limited.is_empty() {
            return None;
        }
        let shown: Vec<String> = self
            .rate_limited
            .iter()
            .take(8)
            .map(|(op, wait)| format!("{op} ({} s)", wait.as_secs()))
            .collect();
        let how = if self.stop == StopReason::RateLimited {
            "the run stopped: the server asks every operation it was sent to wait"
        } else {
            "they were not called again; the other operations were"
        };
        Some(format!(
            "the server answered 429 or 503 with a Retry-After longer than the run can wait (past the end of --budget; over {} s without one) for {} operation(s): {}{}; {how}. Give a longer --budget, a lower --rate, or run again later",
            super::politeness::LONGEST_WAIT.as_secs(),
            self.rate_limited.len(),
            shown.join(", "),
            if self.rate_limited.len() > shown.len() {
                ", …"
            } else {
                ""
            }
        ))
    }
}

/// Operations set aside for a wait past the budget's end.
#[derive(Default)]
struct Limited {
    /// Each operation set aside, with the wait asked, in order.
    ops: Vec<(String, Duration)>,
    /// Operations set aside since the last other answer: [`SERVER_WIDE`]
    /// of them mean the limit is the whole server's.
    streak: std::collections::HashSet<String>,
    /// Tests in a row that could send nothing (all set aside).
    skipped: u64,
}

/// Tests in a row whose requests were all set aside after which the run
/// stops: the driver offers nothing else.
const SKIPPED_TESTS: u64 = 10_000;

/// Operations in a row asked to wait past the budget, with no other answer
/// in between, that show the limit is the whole server's. Two may just be
/// neighbours with limits of their own.
const SERVER_WIDE: usize = 3;

/// Shared stop flag: the first reason set wins.
#[derive(Default)]
struct Stop(AtomicU8);

impl Stop {
    fn set(&self, reason: StopReason) {
        let _ = self
            .0
            .compare_exchange(0, reason.code(), Ordering::SeqCst, Ordering::SeqCst);
    }

    fn get(&self) -> Option<StopReason> {
        StopReason::from_code(self.0.load(Ordering::SeqCst))
    }
}

struct Shared {
    config: RunConfig,
    transport: Transport,
    credentials: Credentials,
    politeness: Arc<Politeness>,
    driver: Arc<Mutex<dyn Driver>>,
    stop: Stop,
    sent: AtomicU64,
    refused: AtomicU64,
    fenced: AtomicU64,
    deadline: Option<Instant>,
    auth_error: Mutex<Option<String>>,
    /// The first panic caught in a worker, said in words.
    crash: Mutex<Option<String>>,
    /// Requests answered, and requests that failed before any answer.
    reach: Mutex<Reach>,
    /// Operations the server asked to wait on past the deadline.
    limited: Mutex<Limited>,
    /// Requests being served, for telling whose time a timeout was.
    queue: Mutex<Queue>,
}

/// Requests in flight, and the latest one given up on at its timeout (the
/// server may still be working on it: a threaded server does not notice
/// that the client left). A request sent meanwhile may only wait behind
/// that work; its timeout is not its own, unless a request sent after it
/// was answered while it waited (the server was free to answer).
#[derive(Default)]
struct Queue {
    next: u64,
    in_flight: Vec<u64>,
    abandoned: Option<Instant>,
    /// The latest-sent request answered so far.
    answered: Option<u64>,
}

impl Queue {
    /// Notes a request sent now; its id, and whether another could hold
    /// the server: one in flight, or one given up on less than two
    /// timeouts ago.
    fn send(&mut self, timeout: Duration) -> (u64, bool) {
        let id = self.next;
        self.next += 1;
        let busy = !self.in_flight.is_empty()
            || self
                .abandoned
                .is_some_and(|at| at.elapsed() < timeout.saturating_mul(2));
        self.in_flight.push(id);
        (id, busy)
    }

    /// Notes the end of request `id`; whether a request sent after it was
    /// answered first.
    fn done(&mut self, id: u64, answered: bool, timed_out: bool) -> bool {
        self.in_flight.retain(|&i| i != id);
        let overtaken = self.answered.is_some_and(|a| a > id);
        if answered {
            self.answered = Some(self.answered.map_or(id, |a| a.max(id)));
        }
        if timed_out {
            self.abandoned = Some(Instant::now());
        }
        overtaken
    }
}

/// Requests that failed before any answer (connection refused or reset,
/// TLS, DNS, invalid HTTP), to stop a run in which nothing answers.
#[derive(Default)]
struct Reach {
    answered: u64,
    failed: u64,
    /// The latest outcomes, true for a failure before any answer.
    recent: std::collections::VecDeque<bool>,
    first_error: Option<super::Failure>,
    /// Requests that got no answer in their time (a timeout, the end of
    /// the budget), and the first of them: a server that accepts
    /// connections and never answers answered nothing either.
    silent: u64,
    first_silence: Option<super::Failure>,
}

/// Requests looked at to decide that the server has gone away.
const RECENT: usize = 50;

impl Reach {
    /// Counts one attempt; true when the run should stop because nothing
    /// answers at all: the first ten requests all failed before any
    /// answer, or every one of the latest [`RECENT`] did. One broken
    /// operation among answering ones never stops the run (it is called
    /// less instead, and its failures are findings).
    fn note(&mut self, status: Option<u16>, failure: Option<&super::Failure>) -> bool {
        let failed = status.is_none()
            && failure.is_some_and(|f| {
                matches!(
                    f.kind,
                    super::FailureKind::Connection
                        | super::FailureKind::NoAnswer
                        | super::FailureKind::InvalidHttp
                        | super::FailureKind::Other
                )
            });
        if failed {
            self.failed += 1;
            if self.first_error.is_none() {
                self.first_error = failure.cloned();
            }
        } else if status.is_some() {
            self.answered += 1;
        } else if let Some(f) = failure.filter(|f| {
            matches!(
                f.kind,
                super::FailureKind::Timeout | super::FailureKind::Interrupted
            )
        }) {
            self.silent += 1;
            self.first_silence.get_or_insert_with(|| f.clone());
        }
        self.recent.push_back(failed);
        if self.recent.len() > RECENT {
            self.recent.pop_front();
        }
        (self.answered == 0 && self.failed >= 10)
            || (self.recent.len() == RECENT && self.recent.iter().all(|f| *f))
    }
}

/// Why a request got no answer, in words a user can act on, with the fix
/// when there is one; told by the failure's kind and cause, never by the
/// wording of the HTTP stack's message. `cacert`: whether `--cacert` was
/// given (then passing it is no advice).
pub fn plain_words(failure: &super::Failure, target: &url::Url, cacert: bool) -> String {
    use super::{Cause, FailureKind};
    let plain = {
        let mut http = target.clone();
        let _ = http.set_scheme("http");
        format!(
            "the server answered the TLS handshake in plain HTTP: this port speaks http://, not https:// (no certificate setting helps), so the target is {http}"
        )
    };
    let hint = match (failure.kind, failure.cause) {
        (FailureKind::Connection, Cause::PlainHttp) => plain.as_str(),
        (FailureKind::Connection, Cause::Refused) => {
            "the connection was refused: is the server running and listening there?"
        }
        (FailureKind::Connection, Cause::Dns) => "the host name does not resolve",
        (FailureKind::Connection, Cause::Unreachable) => "there is no route to the host",
        (FailureKind::Connection, Cause::Tls) if cacert => {
            "the TLS handshake failed although --cacert was given: the server's certificate is neither signed by a CA of that file nor one of its certificates made for this host name (check the names it was made for, or the file)"
        }
        (FailureKind::Connection, Cause::Tls) => {
            "the TLS handshake failed: if the server's certificate is not trusted, pass --cacert FILE (the CA that signed it, or the certificate itself when it is self-signed) or --insecure"
        }
        (FailureKind::Connection, Cause::Unknown) => "no connection could be made",
        (FailureKind::NoAnswer, _) => "the server closed the connection before answering",
        (FailureKind::InvalidHttp, _) => "the server answers, but not with valid HTTP",
        (FailureKind::Timeout, _) => "no answer came within --timeout",
        (FailureKind::Interrupted, _) => {
            "no answer came before the run stopped (the end of --budget, or an interrupt)"
        }
        _ => "no answer came back",
    };
    format!("{hint} ({target}: {})", failure.message)
}

/// The runtime a run is driven on: one thread. The search judges one test
/// at a time under its lock and the observer writes the trace in order, so
/// a second thread gained little and cost a cross-thread wake-up (a futex
/// call each way) and a contended lock for every answer: about a fifth of
/// the CPU per request against a fast server.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

/// Runs tests from `driver` against the transport's target until the budget,
/// the request cap, an interrupt (Ctrl-C, SIGTERM) or the driver ends it.
/// `observe` sees every exchange on the calling task: a retried attempt as
/// it completes, the others once their test is over and the driver has read
/// them.
pub async fn run(
    config: RunConfig,
    transport: Transport,
    credentials: Credentials,
    politeness: Arc<Politeness>,
    driver: Arc<Mutex<dyn Driver>>,
    mut observe: impl FnMut(&Exchange),
) -> RunOutcome {
    let started = Instant::now();
    let shared = Arc::new(Shared {
        politeness,
        reach: Mutex::new(Reach::default()),
        limited: Mutex::new(Limited::default()),
        queue: Mutex::new(Queue::default()),
        deadline: config.budget.map(|b| started + b),
        config,
        transport,
        credentials,
        driver,
        stop: Stop::default(),
        sent: AtomicU64::new(0),
        refused: AtomicU64::new(0),
        fenced: AtomicU64::new(0),
        auth_error: Mutex::new(None),
        crash: Mutex::new(None),
    });

    super::interrupt::watch();
    if super::interrupt::received().is_some() {
        // Interrupted between phases: this one sends nothing.
        shared.stop.set(StopReason::Interrupted);
    }
    let interrupts = {
        let shared = shared.clone();
        tokio::spawn(async move {
            super::interrupt::wait().await;
            shared.stop.set(StopReason::Interrupted);
        })
    };

    let (tx, mut rx) = mpsc::unbounded_channel::<Exchange>();
    let seq = Arc::new(AtomicU64::new(0));
    let mut workers = Vec::new();
    for _ in 0..shared.config.concurrency.max(1) {
        let shared = shared.clone();
        let tx = tx.clone();
        let seq = seq.clone();
        workers.push(tokio::spawn(async move { worker(shared, tx, seq).await }));
    }
    drop(tx);
    // The channel closes when every worker has finished its in-flight request.
    while let Some(exchange) = rx.recv().await {
        observe(&exchange);
    }
    for w in workers {
        // A panic outside the guarded steps still stops the run as a crash.
        if let Err(e) = w.await
            && e.is_panic()
        {
            let message = panic_message(e.into_panic().as_ref());
            shared
                .crash
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_or_insert(format!("a search worker failed: {message}"));
            shared.stop.set(StopReason::Crashed);
        }
    }
    interrupts.abort();
    let crash = shared
        .crash
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();

    let auth_error = shared
        .auth_error
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    let stop = shared.stop.get().unwrap_or(StopReason::Exhausted);
    let unreachable = {
        let reach = shared.reach.lock().unwrap_or_else(|e| e.into_inner());
        // A run in which nothing ever answered could not reach the server,
        // whatever stopped it.
        let nothing = reach.answered == 0 && (reach.failed > 0 || reach.silent > 0);
        (stop == StopReason::Unreachable || nothing)
            .then(|| reach.first_error.clone().or(reach.first_silence.clone()))
            .flatten()
            .map(|e| {
                plain_words(
                    &e,
                    &shared.config.target,
                    shared.config.tls.cacert.is_some(),
                )
            })
    };
    let rate_limited =
        std::mem::take(&mut shared.limited.lock().unwrap_or_else(|e| e.into_inner()).ops);
    RunOutcome {
        requests: shared.sent.load(Ordering::SeqCst),
        refused: shared.refused.load(Ordering::SeqCst),
        fenced: shared.fenced.load(Ordering::SeqCst),
        stop,
        elapsed: started.elapsed(),
        auth_error,
        unreachable,
        rate_limited,
        crash,
    }
}

/// A panic's message (`panic!` gives a `&str` or a `String`).
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into())
}

/// Runs `step` (`what` names it), catching a panic: it is kept as the run's
/// crash and stops the run, so that an authoring slip no generator foresaw
/// ends the search as a failure, not as "exhausted".
fn guarded<T>(shared: &Shared, what: &str, step: impl FnOnce() -> T) -> Option<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(step)) {
        Ok(v) => Some(v),
        Err(payload) => {
            let message = panic_message(payload.as_ref());
            shared
                .crash
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_or_insert(format!("{what} failed: {message}"));
            shared.stop.set(StopReason::Crashed);
            None
        }
    }
}

async fn worker(shared: Arc<Shared>, tx: mpsc::UnboundedSender<Exchange>, seq: Arc<AtomicU64>) {
    loop {
        // Read here, not only from the task that waits for a signal: on a
        // runtime of one thread that task runs only when a worker yields,
        // and an interrupted worker sends nothing, so it never does (it
        // went on choosing tests until the budget's end).
        if super::interrupt::received().is_some() {
            shared.stop.set(StopReason::Interrupted);
        }
        if shared.stop.get().is_some() {
            return;
        }
        if shared.deadline.is_some_and(|d| Instant::now() >= d) {
            shared.stop.set(StopReason::Budget);
            return;
        }
        let next = guarded(&shared, "choosing the next test", || {
            shared
                .driver
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .next_test()
        });
        let Some(next) = next else { return };
        let Some(mut test) = next else {
            shared.stop.set(StopReason::Exhausted);
            return;
        };
        let mut exchanges: Vec<Exchange> = Vec::new();
        let mut set_aside = false;
        loop {
            let request = guarded(&shared, "making the next request of a test", || {
                test.next_request(&exchanges)
            });
            let Some(request) = request else { return };
            let Some(request) = request else { break };
            if shared.config.read_only && request.is_mutation() {
                // Never sent; the rest of the test depends on it, so it ends here.
                shared.refused.fetch_add(1, Ordering::SeqCst);
                break;
            }
            if shared
                .config
                .fence
                .refuses(&request.operation, &request.method, &request.path)
            {
                // Excluded by the user: never sent, whatever asked for it.
                shared.fenced.fetch_add(1, Ordering::SeqCst);
                break;
            }
            match send_with_retries(&shared, request, &seq).await {
                Err(SetAside) => {
                    set_aside = true;
                    break;
                }
                Ok(None) => break,
                Ok(Some(mut sent)) => {
                    // The attempts before the last (retried ones) go to
                    // the observer now; the last is the test's, and goes
                    // after the driver has read it: no copy of any.
                    let last = sent.pop();
                    for ex in sent {
                        let _ = tx.send(ex);
                    }
                    exchanges.extend(last);
                }
            }
            if shared.stop.get().is_some() {
                break;
            }
        }
        if set_aside && exchanges.is_empty() {
            let mut limited = shared.limited.lock().unwrap_or_else(|e| e.into_inner());
            limited.skipped += 1;
            if limited.skipped >= SKIPPED_TESTS {
                shared.stop.set(StopReason::RateLimited);
            }
        }
        // Parsed here, in parallel, rather than by the driver under its lock.
        for ex in &exchanges {
            ex.json();
        }
        let judged = guarded(&shared, "judging a test's answers", || {
            shared
                .driver
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .finished(test, &exchanges);
        });
        // Recorded whether or not judging them failed: nothing gathered is lost.
        for ex in exchanges {
            let _ = tx.send(ex);
        }
        if judged.is_none() {
            return;
        }
    }
}

/// A request not sent: the server asked to wait on its operation past the
/// budget's end.
struct SetAside;

/// The credentials to send now: an auth command still running when the
/// budget ends has failed (the run cannot wait for it).
async fn credentials(shared: &Shared) -> Result<Vec<(String, String)>, String> {
    let work = shared.credentials.headers();
    match shared.deadline {
        Some(deadline) => tokio::time::timeout_at(deadline.into(), work)
            .await
            .unwrap_or_else(|_| {
                Err("the auth command had not finished when the budget ended".to_string())
            }),
        None => work.await,
    }
}

/// Sends one request, retrying after a 429/503 (when the server's wait fits the
/// budget) and once after a 401 when credentials can be renewed. Returns every
/// attempt's exchange, `None` when the run stopped before the first attempt,
/// or [`SetAside`] when its operation waits past the budget.
async fn send_with_retries(
    shared: &Shared,
    request: RequestSpec,
    seq: &AtomicU64,
) -> Result<Option<Vec<Exchange>>, SetAside> {
    let mut out = Vec::new();
    let outcome = attempts(shared, &request, seq, &mut out).await;
    // The request goes into its last attempt's exchange; only the attempts
    // before it (retries, rare) get a copy.
    if let Some((last, earlier)) = out.split_last_mut() {
        for ex in earlier {
            ex.request = request.clone();
        }
        last.request = request;
    }
    match outcome {
        Err(SetAside) => Err(SetAside),
        Ok(()) => Ok((!out.is_empty()).then_some(out)),
    }
}

/// The attempts of [`send_with_retries`], each exchange pushed onto `out`
/// without its request (the caller puts it in).
async fn attempts(
    shared: &Shared,
    request: &RequestSpec,
    seq: &AtomicU64,
    out: &mut Vec<Exchange>,
) -> Result<(), SetAside> {
    let mut renewed = false;
    let mut retries = 0;
    loop {
        if let Some(max) = shared.config.max_requests {
            let n = shared.sent.fetch_add(1, Ordering::SeqCst);
            if n >= max {
                shared.sent.fetch_sub(1, Ordering::SeqCst);
                shared.stop.set(StopReason::MaxRequests);
                return Ok(());
            }
        } else {
            shared.sent.fetch_add(1, Ordering::SeqCst);
        }
        let unsend = || {
            shared.sent.fetch_sub(1, Ordering::SeqCst);
        };
        if shared.stop.get().is_some() {
            unsend();
            return Ok(());
        }
        let admitted = super::interrupt::unless_interrupted(
            shared.politeness.admit(&request.operation, shared.deadline),
        )
        .await;
        let Some(admission) = admitted else {
            unsend();
            return Ok(());
        };
        match admission {
            Admission::Go => {}
            Admission::PastDeadline => {
                unsend();
                shared.stop.set(StopReason::Budget);
                return Ok(());
            }
            Admission::Blocked => {
                unsend();
                return if out.is_empty() {
                    Err(SetAside)
                } else {
                    Ok(())
                };
            }
        }
        let Some(credentials) = super::interrupt::unless_interrupted(credentials(shared)).await
        else {
            unsend();
            return Ok(());
        };
        let credentials = match credentials {
            Ok(h) => h,
            Err(e) => {
                unsend();
                *shared.auth_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                shared.stop.set(StopReason::AuthFailed);
                return Ok(());
            }
        };
        let mut timeout = shared.config.timeout;
        let mut cut_by_budget = false;
        if let Some(d) = shared.deadline {
            let left = d.saturating_duration_since(Instant::now());
            cut_by_budget = left < timeout;
            timeout = timeout.min(left);
        }
        // A negative test of credentials sends its own (or none): the run's
        // would mask what is being tried.
        let none: &[(String, String)] = &[];
        // Another identity sends its own headers (the anonymous caller none),
        // never the run's: they would mask who is asking.
        let theirs = request.identity.as_deref().map(|name| {
            if name == super::identities::ANONYMOUS {
                Vec::new()
            } else {
                shared
                    .credentials
                    .identity_headers(name)
                    .unwrap_or_default()
            }
        });
        let (credentials, query) = if request.without_credentials() {
            (none, none)
        } else if let Some(theirs) = &theirs {
            (&theirs[..], none)
        } else {
            (&credentials[..], shared.credentials.query())
        };
        let (id, busy) = shared
            .queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(shared.config.timeout);
        let mut received = match super::interrupt::unless_interrupted(shared.transport.send(
            request,
            credentials,
            query,
            timeout,
        ))
        .await
        {
            Some(received) => received,
            // Sent, and perhaps acted on: recorded as cut short.
            None => super::transport::Received {
                status: None,
                headers: Vec::new(),
                body: Vec::new(),
                truncated: false,
                failure: Some(super::Failure::new(
                    super::FailureKind::Interrupted,
                    "cut short by an interrupt (Ctrl-C or SIGTERM)",
                )),
                elapsed: Duration::ZERO,
            },
        };
        let timed_out = received
            .failure
            .as_ref()
            .is_some_and(|f| f.kind == super::FailureKind::Timeout);
        let overtaken = shared.queue.lock().unwrap_or_else(|e| e.into_inner()).done(
            id,
            received.status.is_some(),
            timed_out,
        );
        if let Some(f) = &mut received.failure {
            // The budget's end, not the server, cut this one short.
            if cut_by_budget && f.kind == super::FailureKind::Timeout {
                f.kind = super::FailureKind::Interrupted;
                f.message = "cut by the end of the budget".into();
                f.limit = None;
            }
        }
        let give_up = shared
            .reach
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .note(received.status, received.failure.as_ref());
        if give_up {
            shared.stop.set(StopReason::Unreachable);
        }
        let exchange = Exchange {
            seq: seq.fetch_add(1, Ordering::SeqCst),
            // Put in by the caller, without a copy.
            request: RequestSpec::default(),
            status: received.status,
            headers: received.headers,
            // Valid UTF-8 (nearly every body) is taken as it is, without a copy.
            body: String::from_utf8(received.body)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
            truncated: received.truncated,
            failure: received.failure,
            elapsed: received.elapsed,
            behind_another: busy && !overtaken,
            parsed: std::sync::OnceLock::new(),
        };
        let status = exchange.status;
        let signal = status.map(|s| {
            shared
                .politeness
                .observe(&request.operation, s, &exchange.headers, shared.deadline)
        });
        if note_limit(shared, &request.operation, status, signal) {
            shared
                .driver
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .set_aside(&request.operation);
        }
        out.push(exchange);
        match (status, signal) {
            (Some(401), _)
                if shared.credentials.renewable()
                    && !renewed
                    && !request.without_credentials()
                    && request.identity.is_none() =>
            {
                renewed = true;
                shared.credentials.invalidate().await;
            }
            (_, Some(Signal::RetryAfter(_))) if retries < shared.config.max_retries => {
                retries += 1;
            }
            _ => return Ok(()),
        }
    }
}

/// Keeps count of the operations the server asks to wait past the budget;
/// stops the run when [`SERVER_WIDE`] in a row are (the limit is the whole
/// server's: the others have had their turn, and hammering it helps no one).
/// True when `operation` was just set aside.
fn note_limit(
    shared: &Shared,
    operation: &str,
    status: Option<u16>,
    signal: Option<Signal>,
) -> bool {
    let mut limited = shared.limited.lock().unwrap_or_else(|e| e.into_inner());
    limited.skipped = 0;
    match signal {
        Some(Signal::PastDeadline(wait)) => {
            let new = !limited.ops.iter().any(|(op, _)| op == operation);
            if new {
                limited.ops.push((operation.to_string(), wait));
            }
            limited.streak.insert(operation.to_string());
            if limited.streak.len() >= SERVER_WIDE {
                shared.stop.set(StopReason::RateLimited);
            }
            new
        }
        _ => {
            if status.is_some() {
                limited.streak.clear();
            }
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execution::{Cause, Failure, FailureKind};

    #[test]
    fn plain_words_fit_the_failure() {
        let target = url::Url::parse("http://127.0.0.1:9/").unwrap();
        let refused = Failure {
            cause: Cause::Refused,
            // Words of the HTTP stack that once misled the hint.
            ..Failure::new(
                FailureKind::Connection,
                "client error (Connect): tcp connect error",
            )
        };
        let said = plain_words(&refused, &target, false);
        assert!(said.starts_with("the connection was refused"), "{said}");
        assert!(!said.contains("--cacert"), "{said}");
        let tls = Failure {
            cause: Cause::Tls,
            ..Failure::new(FailureKind::Connection, "invalid peer certificate")
        };
        assert!(plain_words(&tls, &target, false).contains("pass --cacert"));
        assert!(!plain_words(&tls, &target, true).contains("pass --cacert"));
        let plain = Failure {
            cause: Cause::PlainHttp,
            ..Failure::new(FailureKind::Connection, "received corrupt message")
        };
        let https = url::Url::parse("https://127.0.0.1:9/api").unwrap();
        let said = plain_words(&plain, &https, false);
        assert!(
            said.contains("plain HTTP") && said.contains("the target is http://127.0.0.1:9/api"),
            "{said}"
        );
        assert!(
            !said.contains("--insecure") && !said.contains("pass --cacert"),
            "{said}"
        );
        let closed = Failure::new(FailureKind::NoAnswer, "connection closed");
        assert!(plain_words(&closed, &target, false).contains("closed the connection"));
    }

    #[test]
    fn one_broken_operation_among_answering_ones_never_stops_the_run() {
        let mut reach = Reach::default();
        let broken = Failure::new(FailureKind::NoAnswer, "closed");
        assert!(!reach.note(Some(200), None));
        // Mostly broken answers, one good one in each fifty.
        for i in 0..500 {
            let stop = if i % 49 == 0 {
                reach.note(Some(200), None)
            } else {
                reach.note(None, Some(&broken))
            };
            assert!(!stop, "stopped at {i}");
        }
        // Nothing answers any more: it stops.
        let stopped = (0..RECENT).any(|_| reach.note(None, Some(&broken)));
        assert!(stopped);
        // Nothing ever answered: it stops after ten.
        let mut reach = Reach::default();
        let refused = Failure::new(FailureKind::Connection, "refused");
        let n = (1..=20).find(|_| reach.note(None, Some(&refused))).unwrap();
        assert_eq!(n, 10);
    }
}
