//! The search on an API of about 1,000 operations (Kubernetes v1.10 and the
//! GitHub REST API from the corpus) against a local stub that answers 404 to
//! everything: requests per second and peak memory (VmHWM of this process,
//! which also holds the stub, so the figure is an upper bound).
//!
//! Targets (generation issue): at least 5,000 requests/s and under 1 GB.
//! Run with `cargo bench --bench large_api`; skipped when the corpus is absent.

// A bench prints what it measured.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cartograph::execution::{self, Credentials, RunConfig, Transport};
use cartograph::generation::{MioConfig, Search, SearchConfig};
use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};

/// The binary's allocator, so that the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const CONCURRENCY: usize = 16;
const SUMMARY_REQUESTS: u64 = 50_000;
const BENCH_REQUESTS: u64 = 20_000;

/// A server that answers 404 with a small JSON body to every request.
fn start_stub() -> (tokio::runtime::Runtime, String) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("stub runtime");
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    rt.spawn(async move {
        let app = axum::Router::new().fallback(|| async {
            (
                axum::http::StatusCode::NOT_FOUND,
                [("content-type", "application/json")],
                r#"{"message":"not found"}"#,
            )
        });
        let _ = axum::serve(listener, app).await;
    });
    (rt, format!("http://{addr}"))
}

fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn run(
    rt: &tokio::runtime::Runtime,
    api: &Arc<cartograph::model::Api>,
    graph: &cartograph::graph::PropertyGraph,
    base: &str,
    n: u64,
) -> (u64, Duration) {
    let url = url::Url::parse(base).expect("url");
    let driver = Arc::new(Mutex::new(Search::rest(
        api.clone(),
        graph.clone(),
        Some(cartograph::graph::feedback::Feedback::default()),
        SearchConfig {
            mio: MioConfig::default(),
            seed: 1,
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
        target: url.clone(),
        budget: None,
        max_requests: Some(n),
        seed: 1,
        rate: None,
        burst: 1,
        concurrency: CONCURRENCY,
        read_only: false,
        timeout: Duration::from_secs(10),
        max_body: 4 << 20,
        max_retries: 3,
        fence: Default::default(),
        per_operation: Vec::new(),
        tls: Default::default(),
        trace_limit: cartograph::execution::TRACE_LIMIT,
    };
    let transport =
        Transport::new(url, 4 << 20, CONCURRENCY, &Default::default()).expect("transport");
    let started = Instant::now();
    let politeness = std::sync::Arc::new(config.politeness());
    let outcome = rt.block_on(execution::run(
        config,
        transport,
        Credentials::none(),
        politeness,
        driver,
        |_| {},
    ));
    (outcome.requests, started.elapsed())
}

fn bench(c: &mut Criterion) {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/openapi");
    let specs = [
        "kubernetes.io__main__v1.10.0.json",
        "github.com__api.github.com__1.1.4.yaml",
    ];
    let (_stub, base) = start_stub();
    let rt = tokio::runtime::Runtime::new().expect("engine runtime");
    let mut group = c.benchmark_group("large_api");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(15))
        .throughput(Throughput::Elements(BENCH_REQUESTS));
    for name in specs {
        let path = corpus.join(name);
        if !path.exists() {
            eprintln!("large_api: {} not found; skipped", path.display());
            continue;
        }
        let loaded = cartograph::load::load(&path).expect("corpus document loads");
        let api = Arc::new(loaded.api);
        let graph = cartograph::graph::build(&api);
        let started = Instant::now();
        let (sent, elapsed) = run(&rt, &api, &graph, &base, SUMMARY_REQUESTS);
        println!(
            "large_api {name}: {} operations, {:.0} requests/s over {sent} requests ({:.2} s with driver setup {:.2} s), peak RSS {:.0} MB",
            api.operations.len(),
            sent as f64 / elapsed.as_secs_f64(),
            elapsed.as_secs_f64(),
            started.elapsed().as_secs_f64() - elapsed.as_secs_f64(),
            peak_rss_mb()
        );
        group.bench_function(name, |bencher| {
            bencher.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    total += run(&rt, &api, &graph, &base, BENCH_REQUESTS).1;
                }
                total
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
