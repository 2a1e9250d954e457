//! Load + graph build + JSON export of the largest corpus documents, and of the
//! pointer-`$ref` mesh fixture.
//!
//! Target (graph issue): every corpus document under 1 s on one core in release
//! mode. Run with `cargo bench --bench graph_build`; skipped when the corpus is not
//! beside the checkout.

// A bench prints what it measured.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::Path;

use cartograph::graph::{self, export};
use criterion::{Criterion, criterion_group, criterion_main};

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
    let loaded = cartograph::load::load(path).expect("corpus document loads");
    let g = graph::build(&loaded.api);
    export::render(&g, export::Format::Json).len()
}

fn bench(c: &mut Criterion) {
    // A 5 KB mesh of schemas that `$ref` each other's properties by pointer: one
    // copy per path through the mesh (11 s of CPU, 6.7 GB) until pointer targets were
    // converted once, under a name.
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/specs");
    let mut group = c.benchmark_group("ref_mesh");
    for file in ["ref-mesh.yaml", "ref-mesh-named.yaml"] {
        let path = fixtures.join(file);
        group.bench_function(file, |b| b.iter(|| load_build_export(&path)));
    }
    group.finish();

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
