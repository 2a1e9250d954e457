//! The run loop: workers take tests from the driver, send their requests within
//! the budget, the request cap, the rate and the concurrency, and stream every
//! exchange to one observer.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::auth::Credentials;
use super::politeness::{Politeness, Signal};
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
    /// A test is over; these are its exchanges, in order.
    fn finished(&mut self, test: Box<dyn TestRun>, exchanges: Vec<Exchange>);
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
}

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
    /// Requests answered, and requests that failed before any answer.
    reach: Mutex<Reach>,
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
/// TLS, DNS), to stop a run that cannot reach the server.
#[derive(Default)]
struct Reach {
    answered: u64,
    failed: u64,
    /// The latest outcomes, true for a failure before any answer.
    recent: std::collections::VecDeque<bool>,
    first_error: Option<String>,
}

/// Requests looked at to decide that the server has gone away.
const RECENT: usize = 50;

impl Reach {
    /// Counts one attempt; true when the run should stop: the first ten
    /// requests all failed before any answer, or nine in ten of the latest
    /// [`RECENT`] did.
    fn note(&mut self, failure: Option<&super::Failure>) -> bool {
        let failed = failure.is_some_and(|f| {
            matches!(
                f.kind,
                super::FailureKind::Connection | super::FailureKind::Other
            )
        });
        if failed {
            self.failed += 1;
            if self.first_error.is_none() {
                self.first_error = failure.map(|f| f.message.clone());
            }
        } else if failure.is_none() {
            self.answered += 1;
        }
        self.recent.push_back(failed);
        if self.recent.len() > RECENT {
            self.recent.pop_front();
        }
        let recent_failed = self.recent.iter().filter(|f| **f).count();
        (self.answered == 0 && self.failed >= 10)
            || (self.recent.len() == RECENT && recent_failed * 10 >= RECENT * 9)
    }
}

/// A transport error in words a user can act on, with the fix when there is
/// one.
pub fn plain_words(error: &str, target: &url::Url) -> String {
    let e = error.to_ascii_lowercase();
    let hint = if e.contains("certificate") || e.contains("unknownissuer") || e.contains("tls") {
        "the server's certificate is not trusted: pass --cacert FILE (the CA that signed it) or --insecure"
    } else if e.contains("refused") {
        "the connection was refused: is the server running and listening there?"
    } else if e.contains("dns") || e.contains("lookup") || e.contains("resolve") {
        "the host name does not resolve"
    } else if e.contains("reset") || e.contains("closed") || e.contains("broken pipe") {
        "the server closed the connection before answering"
    } else {
        "no answer came back"
    };
    format!("{hint} ({target}: {error})")
}

/// Runs tests from `driver` against the transport's target until the budget,
/// the request cap, an interrupt (Ctrl-C, SIGTERM) or the driver ends it.
/// `observe` sees every exchange as it completes, on the calling task.
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
    });

    let interrupts = {
        let shared = shared.clone();
        tokio::spawn(async move {
            wait_for_interrupt().await;
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
        let _ = w.await;
    }
    interrupts.abort();

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
        let nothing = reach.answered == 0 && reach.failed > 0;
        (stop == StopReason::Unreachable || nothing)
            .then(|| reach.first_error.clone())
            .flatten()
            .map(|e| plain_words(&e, &shared.config.target))
    };
    RunOutcome {
        requests: shared.sent.load(Ordering::SeqCst),
        refused: shared.refused.load(Ordering::SeqCst),
        fenced: shared.fenced.load(Ordering::SeqCst),
        stop,
        elapsed: started.elapsed(),
        auth_error,
        unreachable,
    }
}

async fn wait_for_interrupt() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

async fn worker(shared: Arc<Shared>, tx: mpsc::UnboundedSender<Exchange>, seq: Arc<AtomicU64>) {
    loop {
        if shared.stop.get().is_some() {
            return;
        }
        if shared.deadline.is_some_and(|d| Instant::now() >= d) {
            shared.stop.set(StopReason::Budget);
            return;
        }
        let next = shared
            .driver
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .next_test();
        let Some(mut test) = next else {
            shared.stop.set(StopReason::Exhausted);
            return;
        };
        let mut exchanges: Vec<Exchange> = Vec::new();
        while let Some(request) = test.next_request(&exchanges) {
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
            match send_with_retries(&shared, &request, &seq).await {
                Some(sent) => {
                    for ex in &sent {
                        let _ = tx.send(ex.clone());
                    }
                    if let Some(last) = sent.into_iter().last() {
                        exchanges.push(last);
                    }
                }
                None => break,
            }
            if shared.stop.get().is_some() {
                break;
            }
        }
        // Parsed here, in parallel, rather than by the driver under its lock.
        for ex in &exchanges {
            ex.json();
        }
        shared
            .driver
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .finished(test, exchanges);
    }
}

/// Sends one request, retrying after a 429/503 (when the server's wait fits the
/// budget) and once after a 401 when credentials can be renewed. Returns every
/// attempt's exchange, or `None` when the run stopped before the first attempt.
async fn send_with_retries(
    shared: &Shared,
    request: &RequestSpec,
    seq: &AtomicU64,
) -> Option<Vec<Exchange>> {
    let mut out = Vec::new();
    let mut renewed = false;
    let mut retries = 0;
    loop {
        if let Some(max) = shared.config.max_requests {
            let n = shared.sent.fetch_add(1, Ordering::SeqCst);
            if n >= max {
                shared.sent.fetch_sub(1, Ordering::SeqCst);
                shared.stop.set(StopReason::MaxRequests);
                return (!out.is_empty()).then_some(out);
            }
        } else {
            shared.sent.fetch_add(1, Ordering::SeqCst);
        }
        let unsend = || {
            shared.sent.fetch_sub(1, Ordering::SeqCst);
        };
        if shared.stop.get().is_some() {
            unsend();
            return (!out.is_empty()).then_some(out);
        }
        if !shared
            .politeness
            .admit(&request.operation, shared.deadline)
            .await
        {
            unsend();
            shared.stop.set(StopReason::Budget);
            return (!out.is_empty()).then_some(out);
        }
        let credentials = match shared.credentials.headers().await {
            Ok(h) => h,
            Err(e) => {
                unsend();
                *shared.auth_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                shared.stop.set(StopReason::AuthFailed);
                return (!out.is_empty()).then_some(out);
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
        let credentials: &[(String, String)] = if request.without_credentials() {
            &[]
        } else {
            &credentials
        };
        let (id, busy) = shared
            .queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(shared.config.timeout);
        let mut received = shared.transport.send(request, credentials, timeout).await;
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
            }
        }
        let give_up = shared
            .reach
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .note(received.failure.as_ref());
        if give_up {
            shared.stop.set(StopReason::Unreachable);
        }
        let exchange = Exchange {
            seq: seq.fetch_add(1, Ordering::SeqCst),
            request: request.clone(),
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
        let signal = status.map(|s| shared.politeness.observe(s, &exchange.headers));
        out.push(exchange);
        match (status, signal) {
            (Some(401), _)
                if shared.credentials.renewable() && !renewed && !request.without_credentials() =>
            {
                renewed = true;
                shared.credentials.invalidate().await;
            }
            (_, Some(Signal::RetryAfter(_))) if retries < shared.config.max_retries => {
                retries += 1;
            }
            _ => return Some(out),
        }
    }
}
