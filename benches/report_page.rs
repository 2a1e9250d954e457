//! Writing report.html for the Kubernetes description's graph (945
//! operations, 5,433 edges): the page embeds the whole graph and the browser
//! lays it out, so Rust only compacts and escapes it.
//!
//! Target (explorer issue): a few seconds at most; Graphviz took over 60 s
//! and gave up. Run with `cargo bench --bench report_page`; skipped when the
//! corpus is not beside the checkout (or `CARTOGRAPH_K8S_SPEC` names the file).

// A bench prints what it measured.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use cartograph::execution::{RunOutcome, StopReason, secrets::Secrets};
use cartograph::graph::{self, export};
use cartograph::reports::{Settings, Tally, render_html};
use criterion::{Criterion, criterion_group, criterion_main};

fn settings() -> Settings {
    Settings {
        target: "http://127.0.0.1:8080".into(),
        spec: None,
        seed: 1,
        budget_s: None,
        max_requests: None,
        rate_per_s: None,
        burst: 1,
        concurrency: 1,
        read_only: false,
        timeout_s: 10.0,
        headers: vec![],
        auth_command: false,
        skipped_checks: vec![],
        graph: true,
        feedback: true,
        include: vec![],
        exclude: vec![],
        excluded_operations: vec![],
        rate_for: Default::default(),
        insecure: false,
    }
}

fn outcome() -> RunOutcome {
    RunOutcome {
        requests: 0,
        refused: 0,
        fenced: 0,
        stop: StopReason::Budget,
        elapsed: Duration::ZERO,
        auth_error: None,
        unreachable: None,
        rate_limited: Vec::new(),
        crash: None,
    }
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("report_page");
    group.sample_size(10);
    // The demo's page: its REST and GraphQL graphs.
    let rest = cartograph::load::load_text(
        cartograph::testing::OPENAPI_YAML,
        Path::new("models/demo/openapi.yaml"),
    )
    .expect("demo description loads")
    .api;
    let graphql = cartograph::load::load_text(
        cartograph::testing::GRAPHQL_SDL,
        Path::new("models/demo/schema.graphql"),
    )
    .expect("demo schema loads")
    .api;
    let demo_graphs = [
        export::to_document(&graph::build(&rest)),
        export::to_document(&graph::build(&graphql)),
    ];
    let demo_report = Tally::new(&rest).report(settings(), &outcome(), vec![]);
    let secrets = Secrets::new();
    group.bench_function("demo", |b| {
        b.iter(|| render_html(&demo_report, &demo_graphs, &secrets).len())
    });

    // The corpus beside the checkout, or wherever CARTOGRAPH_K8S_SPEC says.
    let spec = std::env::var_os("CARTOGRAPH_K8S_SPEC").map_or_else(
        || {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../shared/corpus/openapi/kubernetes.io__main__v1.10.0.json")
        },
        PathBuf::from,
    );
    if !spec.exists() {
        eprintln!(
            "skipped Kubernetes: {} is not beside the checkout",
            spec.display()
        );
        group.finish();
        return;
    }
    let api = cartograph::load::load(&spec)
        .expect("corpus document loads")
        .api;
    let doc = export::to_document(&graph::build(&api));
    let report = Tally::new(&api).report(settings(), &outcome(), vec![]);
    // A secret the redaction has to look for in every string.
    secrets.add("Bearer not-in-the-graph-1234");
    let bytes = render_html(&report, std::slice::from_ref(&doc), &secrets).len();
    eprintln!("report.html for Kubernetes: {bytes} bytes");
    group.bench_function("kubernetes", |b| {
        b.iter(|| render_html(&report, std::slice::from_ref(&doc), &secrets).len())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
