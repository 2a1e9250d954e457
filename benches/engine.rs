//! Throughput and tool-side CPU cost of the HTTP engine against the demo API on
//! loopback: no rate limit, concurrency 16, the MIO search driver choosing requests.
//!
//! Run with `cargo bench --bench engine`. The demo server runs in a child process
//! (`cartograph demo --serve --port N`) so that the CPU measured here, this
//! process's user + system time from `/proc/self/stat`, is the tool's alone. When
//! the binary cannot be found, the server runs in this process on its own
//! runtime and only the engine runtime's threads are counted
//! (`/proc/self/task/<tid>/schedstat`).
//!
//! First, the guard (`scripts/bench-guard.sh` runs this part alone, with
//! `ENGINE_BENCH_TRIVIAL_ONLY=1`): the tool's CPU per request with every
//! oracle on, the whole of `cartograph run --no-replay` (search, trace,
//! tally, report) on `benches/five.yaml` against a trivial server in this
//! process (its own thread, the only one not counted), at concurrency 16
//! and 1, the least of three runs of 20,000 requests each, with the cores
//! kept from idling by spinners at nice 19 (see `KeepBusy`); it fails when
//! either is more than 15% above `benches/baseline.json`, or when no
//! figure is kept there.
//!
//! Then, against the demo API: one summary line over a dedicated
//! 50,000-request run, then lets
//! criterion time runs of 20,000 requests. With `ENGINE_BENCH_DIAG=1`, every run
//! also prints per-5,000-request windows (rate, body size, latency, CPU) and
//! per-operation figures.

// A bench prints what it measured.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cartograph::execution::{self, Credentials, RunConfig, Transport};
use cartograph::generation::{MioConfig, Search, SearchConfig};
use cartograph::graph::PropertyGraph;
use cartograph::model::Api;
use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};

/// The binary's allocator, so that the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const CONCURRENCY: usize = 16;
const BENCH_REQUESTS: u64 = 20_000;
const SUMMARY_REQUESTS: u64 = 50_000;
const MAX_BODY: usize = 4 << 20;
const SEED: u64 = 1;

/// The demo server in a child process, killed when dropped.
struct ChildServer(Child);

impl Drop for ChildServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Where the demo API runs; the fields are held only to be dropped at the end.
#[allow(dead_code)]
enum Server {
    /// A separate process: all of this process's CPU is the tool's.
    Process(ChildServer),
    /// This process, on its own runtime.
    InProcess(tokio::runtime::Runtime),
}

/// CPU time: the whole process (child-server mode) or the engine threads only.
enum CpuMeter {
    Process { tick_ns: f64 },
    Threads(Arc<Mutex<Vec<u32>>>),
}

impl CpuMeter {
    /// CPU consumed so far, in nanoseconds.
    fn now_ns(&self) -> f64 {
        match self {
            CpuMeter::Process { tick_ns } => process_ticks() as f64 * tick_ns,
            CpuMeter::Threads(tids) => {
                let tids = tids.lock().unwrap().clone();
                // The main thread drives `block_on`, so it counts too.
                std::iter::once(std::process::id())
                    .chain(tids)
                    .map(thread_cpu_ns)
                    .sum::<u64>() as f64
            }
        }
    }

    fn describe(&self) -> &'static str {
        match self {
            CpuMeter::Process { .. } => {
                "bench process utime+stime from /proc/self/stat; server in a child process"
            }
            CpuMeter::Threads(_) => {
                "engine runtime threads from /proc/self/task/<tid>/schedstat; server in-process on its own runtime"
            }
        }
    }
}

/// utime + stime of this process (all threads, dead ones included), in clock ticks.
fn process_ticks() -> u64 {
    stat_ticks("self").expect("/proc/self/stat")
}

/// utime + stime of a process (`self` or a pid), in clock ticks.
fn stat_ticks(pid: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state); utime is field 14, stime field 15.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// Nanoseconds on CPU of one thread of this process (0 when it is gone).
fn thread_cpu_ns(tid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat"))
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The calling thread's id, as in /proc/self/task.
fn current_tid() -> Option<u32> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

fn clock_tick_ns() -> f64 {
    let hz = Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|&hz| hz > 0.0)
        .unwrap_or(100.0);
    1e9 / hz
}

fn binary() -> Option<PathBuf> {
    let candidates = [
        option_env!("CARGO_BIN_EXE_cartograph").map(PathBuf::from),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/cartograph")),
    ];
    candidates.into_iter().flatten().find(|p| p.is_file())
}

fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().expect("local addr").port()
}

/// Waits until GET /__health answers 200.
async fn wait_healthy(client: &reqwest::Client, base: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if let Ok(r) = client.get(format!("{base}/__health")).send().await
            && r.status().is_success()
        {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// Starts the demo API: a child process when the binary is there, else in-process.
fn start_server(rt: &tokio::runtime::Runtime, client: &reqwest::Client) -> (Server, String) {
    if let Some(bin) = binary() {
        let port = free_port();
        let base = format!("http://127.0.0.1:{port}");
        match Command::new(&bin)
            .args(["demo", "--serve", "--port", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        {
            Ok(child) => {
                let child = ChildServer(child);
                if rt.block_on(wait_healthy(client, &base)) {
                    eprintln!(
                        "engine bench: demo server is {} (pid {})",
                        bin.display(),
                        child.0.id()
                    );
                    return (Server::Process(child), base);
                }
                eprintln!(
                    "engine bench: {} did not answer /__health; serving in-process",
                    bin.display()
                );
            }
            Err(e) => eprintln!(
                "engine bench: cannot start {}: {e}; serving in-process",
                bin.display()
            ),
        }
    } else {
        eprintln!("engine bench: no cartograph binary; serving the demo API in-process");
    }
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("demo-server")
        .enable_all()
        .build()
        .expect("server runtime");
    let server = server_rt
        .block_on(cartograph::testing::DemoServer::start(0))
        .expect("demo server starts");
    let base = server.base_url();
    // Dropping the handle stops serving, so keep it alive on the server runtime.
    server_rt.spawn(async move {
        let _server = server;
        std::future::pending::<()>().await;
    });
    assert!(
        rt.block_on(wait_healthy(client, &base)),
        "in-process demo server answers"
    );
    (Server::InProcess(server_rt), base)
}

struct Bench {
    api: Arc<Api>,
    graph: PropertyGraph,
    base: String,
    url: url::Url,
    client: reqwest::Client,
}

impl Bench {
    async fn reset(&self) {
        let r = self
            .client
            .post(format!("{}/__reset", self.base))
            .send()
            .await
            .expect("POST /__reset");
        assert!(r.status().is_success(), "reset answered {}", r.status());
    }

    /// One run of `n` requests (the reset before it is not timed); returns
    /// (requests sent, elapsed, responses with a status).
    async fn run(&self, n: u64) -> (u64, Duration, u64) {
        self.reset().await;
        let driver = Arc::new(Mutex::new(Search::rest(
            self.api.clone(),
            self.graph.clone(),
            // The feedback loop runs as in `cartograph run`.
            Some(cartograph::graph::feedback::Feedback::default()),
            SearchConfig {
                mio: MioConfig::default(),
                seed: SEED,
                read_only: false,
                use_graph: true,
                max_requests: Some(n),
                budget: None,
                skip_checks: Vec::new(),
                target: None,
                identities: Vec::new(),
                main_identity: None,
            },
        )));
        let config = RunConfig {
            target: self.url.clone(),
            budget: None,
            max_requests: Some(n),
            seed: SEED,
            rate: None,
            burst: 1,
            concurrency: CONCURRENCY,
            read_only: false,
            timeout: Duration::from_secs(10),
            max_body: MAX_BODY,
            max_retries: 3,
            fence: Default::default(),
            per_operation: Vec::new(),
            tls: Default::default(),
            trace_limit: cartograph::execution::TRACE_LIMIT,
        };
        let transport =
            Transport::new(self.url.clone(), MAX_BODY, CONCURRENCY, &Default::default())
                .expect("transport");
        let mut answered = 0u64;
        let diag = std::env::var_os("ENGINE_BENCH_DIAG").is_some();
        let mut seen: Vec<(Duration, String, u16, usize, Duration)> = Vec::new();
        let mut window_cpu: Vec<u64> = vec![process_ticks()];
        let started = Instant::now();
        let politeness = Arc::new(config.politeness());
        let outcome = execution::run(
            config,
            transport,
            Credentials::none(),
            politeness,
            driver,
            |ex| {
                if ex.status.is_some() {
                    answered += 1;
                }
                if diag {
                    seen.push((
                        started.elapsed(),
                        format!("{} {}", ex.request.method, ex.request.operation),
                        ex.status.unwrap_or(0),
                        ex.body.len(),
                        ex.elapsed,
                    ));
                    if seen.len().is_multiple_of(5_000) {
                        window_cpu.push(process_ticks());
                    }
                }
            },
        )
        .await;
        if diag {
            diagnose(&seen, &window_cpu);
        }
        let elapsed = started.elapsed();
        assert_eq!(
            outcome.stop,
            execution::StopReason::MaxRequests,
            "run stopped early"
        );
        (outcome.requests, elapsed, answered)
    }
}

/// Per operation: exchanges, body bytes, total latency, statuses.
type OpStats = (
    usize,
    usize,
    Duration,
    std::collections::BTreeMap<u16, usize>,
);

/// Per window of 5,000 exchanges: rate, body size, latency; then per operation.
/// `cpu`: process CPU ticks at the start and after each full window (only the
/// tool's when the server is a child process).
fn diagnose(seen: &[(Duration, String, u16, usize, Duration)], cpu: &[u64]) {
    let tick_ns = clock_tick_ns();
    let mut prev = Duration::ZERO;
    for (i, w) in seen.chunks(5_000).enumerate() {
        let cpu_us = match (cpu.get(i), cpu.get(i + 1)) {
            (Some(a), Some(b)) => format!(
                ", process CPU {:.0} µs/req",
                (b - a) as f64 * tick_ns / 1e3 / w.len() as f64
            ),
            _ => String::new(),
        };
        let end = w.last().unwrap().0;
        let bytes: usize = w.iter().map(|e| e.3).sum();
        let lat: Duration = w.iter().map(|e| e.4).sum();
        eprintln!(
            "  window: {:.0} req/s, mean body {} B, mean latency {:.0} µs{cpu_us}",
            w.len() as f64 / (end - prev).as_secs_f64(),
            bytes / w.len(),
            lat.as_micros() as f64 / w.len() as f64
        );
        prev = end;
    }
    let mut ops: std::collections::BTreeMap<&str, OpStats> = Default::default();
    for e in seen {
        let o = ops.entry(e.1.as_str()).or_default();
        o.0 += 1;
        o.1 += e.3;
        o.2 += e.4;
        *o.3.entry(e.2).or_default() += 1;
    }
    for (op, (n, bytes, lat, statuses)) in ops {
        eprintln!(
            "  {op:<40} n={n:<6} mean body {:<7} B mean latency {:<6.0} µs statuses {statuses:?}",
            bytes / n,
            lat.as_micros() as f64 / n as f64
        );
    }
}

fn bench(c: &mut Criterion) {
    if std::env::var_os("ENGINE_BENCH_TRIVIAL_ONLY").is_some() {
        return;
    }
    let tids: Arc<Mutex<Vec<u32>>> = Arc::default();
    let rt = {
        let tids = tids.clone();
        // The CLI's runtime: multi-threaded, one worker per core.
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("engine")
            .on_thread_start(move || {
                if let Some(t) = current_tid() {
                    tids.lock().unwrap().push(t);
                }
            })
            .build()
            .expect("engine runtime")
    };
    let client = reqwest::Client::new();
    let (server, base) = start_server(&rt, &client);
    let meter = match &server {
        Server::Process(_) => CpuMeter::Process {
            tick_ns: clock_tick_ns(),
        },
        Server::InProcess(_) => CpuMeter::Threads(tids.clone()),
    };

    let loaded =
        cartograph::load::load_text(cartograph::testing::OPENAPI_YAML, Path::new("openapi.yaml"))
            .expect("demo description loads");
    let api = Arc::new(loaded.api);
    let graph = cartograph::graph::build(&api);
    let b = Bench {
        api,
        graph,
        url: url::Url::parse(&base).expect("base url"),
        base,
        client,
    };

    // Warm up once (connections, allocator), then the dedicated summary run.
    rt.block_on(b.run(2_000));
    let server_pid = match &server {
        Server::Process(child) => Some(child.0.id().to_string()),
        Server::InProcess(_) => None,
    };
    let server_ticks = || server_pid.as_deref().and_then(stat_ticks);
    let server0 = server_ticks();
    let cpu0 = meter.now_ns();
    let (sent, elapsed, answered) = rt.block_on(b.run(SUMMARY_REQUESTS));
    let cpu = meter.now_ns() - cpu0;
    let server_cpu = match (server0, server_ticks()) {
        (Some(a), Some(b)) => format!(
            "; server CPU {:.1} µs per request",
            (b - a) as f64 * clock_tick_ns() / 1e3 / SUMMARY_REQUESTS as f64
        ),
        _ => String::new(),
    };
    // The reset before the run is inside the CPU window; one request, negligible.
    let rps = sent as f64 / elapsed.as_secs_f64();
    let us_per_req = cpu / 1e3 / sent as f64;
    println!(
        "engine: {rps:.0} requests/s, {us_per_req:.1} µs CPU per request (tool side), concurrency {CONCURRENCY}"
    );
    println!(
        "  ({sent} requests, {answered} answered, in {:.2} s; tool CPU {:.2} s = {:.0}% of one core{server_cpu}; CPU: {})",
        elapsed.as_secs_f64(),
        cpu / 1e9,
        cpu / elapsed.as_nanos() as f64 * 100.0,
        meter.describe()
    );

    if std::env::var_os("ENGINE_BENCH_DIAG").is_some() {
        // Floor for comparison: bare reqwest GET /__health, 16 tasks, same client setup.
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(CONCURRENCY)
            .tcp_nodelay(true)
            .build()
            .expect("client");
        let per_task = SUMMARY_REQUESTS / CONCURRENCY as u64;
        let health = format!("{}/__health", b.base);
        let cpu0 = meter.now_ns();
        let started = Instant::now();
        rt.block_on(async {
            let tasks: Vec<_> = (0..CONCURRENCY)
                .map(|_| {
                    let (client, health) = (client.clone(), health.clone());
                    tokio::spawn(async move {
                        for _ in 0..per_task {
                            let r = client.get(&health).send().await.expect("health");
                            let _ = r.bytes().await;
                        }
                    })
                })
                .collect();
            for t in tasks {
                t.await.expect("task");
            }
        });
        let n = per_task * CONCURRENCY as u64;
        eprintln!(
            "  baseline bare reqwest GET /__health: {:.0} requests/s, {:.1} µs CPU per request",
            n as f64 / started.elapsed().as_secs_f64(),
            (meter.now_ns() - cpu0) / 1e3 / n as f64
        );
    }

    let mut group = c.benchmark_group("engine");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(20))
        .throughput(Throughput::Elements(BENCH_REQUESTS));
    group.bench_function("search_demo_c16_20k", |bencher| {
        bencher.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let (sent, elapsed, _) = rt.block_on(b.run(BENCH_REQUESTS));
                assert_eq!(sent, BENCH_REQUESTS);
                total += elapsed;
            }
            total
        })
    });
    group.finish();
    drop(server);
}

/// The trivial local server: every request on a kept-alive connection is
/// answered `{"id":1,"name":"x"}`, on a thread and runtime of its own (not
/// the tool's, whose CPU is measured). Returns its base URL; it serves
/// until the process ends.
fn trivial_server() -> (String, u32) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    const ANSWER: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 19\r\n\r\n{\"id\":1,\"name\":\"x\"}";
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener
        .set_nonblocking(true)
        .expect("non-blocking listener");
    let base = format!("http://{}", listener.local_addr().expect("local addr"));
    let serve = async move {
        let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
        while let Ok((mut conn, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = Vec::with_capacity(4096);
                let mut chunk = [0u8; 4096];
                loop {
                    // Each whole request: its head, then its body by
                    // content-length.
                    while let Some(end) = find(&buf, b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                        let body = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .and_then(|n| n.trim().parse::<usize>().ok())
                            .unwrap_or(0);
                        if buf.len() < end + 4 + body {
                            break;
                        }
                        buf.drain(..end + 4 + body);
                        if conn.write_all(ANSWER).await.is_err() {
                            return;
                        }
                    }
                    match conn.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
            });
        }
    };
    let (tid_tx, tid_rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("trivial-server".into())
        .spawn(move || {
            let _ = tid_tx.send(current_tid().expect("/proc/thread-self/stat"));
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("server runtime")
                .block_on(serve)
        })
        .expect("server thread");
    (base, tid_rx.recv().expect("the server thread's id"))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Requests of each run against the trivial server.
const TRIVIAL_REQUESTS: u64 = 20_000;

/// Above the kept figure by more than this fails the bench.
const TOLERANCE: f64 = 1.15;

/// CPU of every thread of this process but the trivial server's, in
/// nanoseconds: the run's runtime, its signal watcher and any blocking
/// threads (threads that ended are not counted: none does during a run).
fn cpu_but_ns(server: u32) -> f64 {
    std::fs::read_dir("/proc/self/task")
        .map(|tasks| {
            tasks
                .flatten()
                .filter_map(|t| t.file_name().to_str()?.parse::<u32>().ok())
                .filter(|&tid| tid != server)
                .map(thread_cpu_ns)
                .sum::<u64>() as f64
        })
        .unwrap_or(0.0)
}

/// Processes at the lowest priority that keep every core from idling while
/// the guard measures, killed when dropped. At concurrency 1 the tool
/// sleeps between a request and its answer; on idle cores each wake-up
/// pays the cores' way out of their idle state, with cold caches, which
/// more than doubled the figure of one build (85.9 µs against 40.0 µs
/// with the cores kept busy) and made it a measure of the machine's power
/// states. Their CPU is theirs, not this process's. `ENGINE_BENCH_IDLE=1`
/// measures on idle cores.
struct KeepBusy(Vec<Child>);

impl KeepBusy {
    fn start() -> KeepBusy {
        if std::env::var_os("ENGINE_BENCH_IDLE").is_some_and(|v| !v.is_empty()) {
            return KeepBusy(Vec::new());
        }
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let spinners = (0..cores)
            .filter_map(|_| {
                Command::new("nice")
                    .args(["-n", "19", "sh", "-c", "while :; do :; done"])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .ok()
            })
            .collect::<Vec<_>>();
        println!(
            "engine: {} spinner(s) at nice 19 keep the cores from idling while the guard measures (ENGINE_BENCH_IDLE=1 leaves them idle)",
            spinners.len()
        );
        KeepBusy(spinners)
    }
}

impl Drop for KeepBusy {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Tool CPU per request, every oracle on, against the trivial server, at
/// concurrency 16 and 1: the whole of `cartograph run` (the search, the
/// trace, the tally, the report; no replays), on the runtime the command
/// uses, in this process. Printed, and compared with
/// `benches/baseline.json` (the bench fails on a regression of more than
/// 15%).
fn trivial(_: &mut Criterion) {
    let (base, server) = trivial_server();
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/five.yaml");
    let loaded = cartograph::load::load(&spec).expect("benches/five.yaml loads");
    let api = Arc::new(loaded.api);
    let source = cartograph::load::SpecSource::file(&spec, &api);
    let out = tempfile::tempdir().expect("a temporary folder");
    let rt = execution::runtime().expect("the run's runtime");
    let run = |concurrency: usize, n: u64| {
        let options = cartograph::testing::RunOptions {
            max_requests: Some(n),
            seed: Some(SEED),
            concurrency,
            no_replay: true,
            // Every oracle on.
            skip_checks: Vec::new(),
            out: out.path().join(format!("c{concurrency}")),
            ..Default::default()
        };
        let cpu0 = cpu_but_ns(server);
        let started = Instant::now();
        let summary = rt
            .block_on(cartograph::testing::execute(
                api.clone(),
                &source,
                &base,
                &options,
            ))
            .expect("the run");
        let requests = summary.report.requests;
        assert!(requests >= n, "the run stopped after {requests} requests");
        let us = (cpu_but_ns(server) - cpu0) / 1e3 / requests as f64;
        (us, requests as f64 / started.elapsed().as_secs_f64())
    };
    let busy = KeepBusy::start();
    run(16, 2_000);
    let mut measured = Vec::new();
    for concurrency in [16, 1] {
        // The least of three runs: what the engine needs, less the noise
        // of other work on the machine.
        let (us, rps) = (0..3)
            .map(|_| run(concurrency, TRIVIAL_REQUESTS))
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .expect("three runs");
        println!(
            "engine, every oracle on, trivial server: {us:.1} µs CPU per request (tool side), {rps:.0} requests/s, concurrency {concurrency}"
        );
        measured.push((concurrency, us));
    }
    drop(busy);
    let kept = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/baseline.json"),
    )
    .ok()
    .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
    let mut worse = Vec::new();
    for (concurrency, us) in measured {
        let key = format!("c{concurrency}_us");
        match kept
            .as_ref()
            .and_then(|k| k[&key].as_f64())
            .filter(|&k| k > 0.0)
        {
            Some(k) if us > k * TOLERANCE => worse.push(format!(
                "concurrency {concurrency}: {us:.1} µs against {k:.1} µs kept (+{:.0}%)",
                (us / k - 1.0) * 100.0
            )),
            Some(k) => println!(
                "  concurrency {concurrency}: within 15% of the {k:.1} µs kept in benches/baseline.json"
            ),
            None => worse.push(format!(
                "concurrency {concurrency}: no figure kept in benches/baseline.json ({key}); measure on an otherwise quiet machine with scripts/bench-guard.sh --update"
            )),
        }
    }
    // `scripts/bench-guard.sh --update` measures to keep new figures.
    let updating = std::env::var_os("ENGINE_BENCH_UPDATE").is_some_and(|v| !v.is_empty());
    assert!(
        worse.is_empty() || updating,
        "tool CPU per request regressed by more than 15% (benches/baseline.json): {}",
        worse.join("; ")
    );
}

criterion_group!(benches, trivial, bench);
criterion_main!(benches);
