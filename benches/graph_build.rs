//! Load + graph build + JSON export of the largest corpus documents.
//!
//! Target (graph issue): every corpus document under 1 s on one core in release
//! mode. Run with `cargo bench --bench graph_build`; skipped when the corpus is not
//! beside the checkout.

use std::path::Path;

use cartograph::graph::{self, export};
use criterion::{criterion_group, criterion_main, Criterion};

const LARGEST: [&str; 7] = [
    "openapi/kubernetes.io__main__v1.10.0.json",
    "openapi/kubernetes.io__main__unversioned.yaml",
    "openapi/github.com__ghes-3.1__1.1.4.json",
    "openapi/stripe.com__main__2020-08-27.yaml",
    "openapi/docusign.net__main__v2.1.yaml",
    "openapi/openai.com__main__2.3.0.yaml",
    "graphql/aws-sdk-2.308.0__generated-wrapper.graphql",
];

fn load_build_export(path: &Path) -> usize {
    let loaded = cartograph::spec::load(path).expect("corpus document loads");
    let g = graph::build(&loaded.api);
    export::render(&g, export::Format::Json).len()
}

fn bench(c: &mut Criterion) {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    if !corpus.exists() {
        eprintln!("skipped: ../shared/corpus is not beside the checkout");
        return;
    }
    let mut group = c.benchmark_group("load_build_export");
    group.sample_size(10);
    for file in LARGEST {
        let path = corpus.join(file);
        let name = file.rsplit('/').next().unwrap_or(file);
        group.bench_function(name, |b| b.iter(|| load_build_export(&path)));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
