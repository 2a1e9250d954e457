//! Every response schema of every REST description in the shared corpus converts
//! to JSON Schema and compiles (or is given up on with a warning) without a panic.
//! Skipped, with a message, when the corpus is not beside the checkout.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use cartograph::oracles::schema::{MAX_VIOLATIONS, ResponseSchemas};
use serde_json::json;

fn corpus_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    dir.join("MANIFEST.tsv").exists().then_some(dir)
}

/// The REST documents the manifest lists (multi-file bundles by their entry document).
fn rest_documents(dir: &Path) -> Vec<PathBuf> {
    let manifest = std::fs::read_to_string(dir.join("MANIFEST.tsv")).unwrap();
    manifest
        .lines()
        .skip(1)
        .filter_map(|line| {
            let mut cols = line.split('\t');
            let file = cols.next()?;
            let format = cols.next()?;
            (!format.starts_with("graphql")).then(|| dir.join(file))
        })
        .collect()
}

#[derive(Default)]
struct Totals {
    documents: usize,
    not_loaded: usize,
    compiled: usize,
    failed: usize,
    /// Distinct patterns per document the regex engine rejected (dropped).
    patterns_dropped: usize,
    /// First words of each warning → how many.
    reasons: BTreeMap<String, usize>,
    panics: Vec<String>,
    slowest: Vec<(f64, String, usize)>,
}

#[test]
fn every_corpus_response_schema_compiles_or_is_given_up_cleanly() {
    let Some(dir) = corpus_dir() else {
        eprintln!("skipped: ../shared/corpus is not beside the checkout");
        return;
    };
    let docs = rest_documents(&dir);
    assert!(
        docs.len() >= 150,
        "manifest lists {} REST documents",
        docs.len()
    );
    let started = Instant::now();
    let totals = Mutex::new(Totals::default());
    let next = Mutex::new(0usize);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let i = {
                        let mut n = next.lock().unwrap();
                        *n += 1;
                        *n - 1
                    };
                    let Some(path) = docs.get(i) else { break };
                    let name = path
                        .strip_prefix(&dir)
                        .unwrap_or(path)
                        .display()
                        .to_string();
                    let Ok(loaded) = cartograph::load::load(path) else {
                        // Load failures are tests/corpus.rs's business.
                        totals.lock().unwrap().not_loaded += 1;
                        continue;
                    };
                    let t = Instant::now();
                    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        let rs = ResponseSchemas::new(&loaded.api);
                        let counts = rs.compile_all(&loaded.api);
                        // The checking path too, on an arbitrary body: no panic, bounded output.
                        for (o, op) in loaded.api.operations.iter().enumerate() {
                            for key in op.responses.keys() {
                                let status = key.parse().unwrap_or(200);
                                let found =
                                    rs.check(&loaded.api, o, status, None, &json!({"id": [1]}));
                                assert!(found.len() <= MAX_VIOLATIONS);
                            }
                        }
                        (counts, rs.warnings())
                    }));
                    let secs = t.elapsed().as_secs_f64();
                    let mut tot = totals.lock().unwrap();
                    tot.documents += 1;
                    match outcome {
                        Ok(((ok, failed), warnings)) => {
                            tot.compiled += ok;
                            tot.failed += failed;
                            for w in warnings {
                                if w.starts_with("pattern ") {
                                    tot.patterns_dropped += 1;
                                    continue;
                                }
                                eprintln!("not compiled: {name}: {w}");
                                let reason = w
                                    .split(": response schema not checked: ")
                                    .nth(1)
                                    .unwrap_or(&w)
                                    .chars()
                                    .take(60)
                                    .collect::<String>();
                                *tot.reasons.entry(reason).or_default() += 1;
                            }
                            tot.slowest.push((secs, name, ok));
                        }
                        Err(_) => tot.panics.push(name),
                    }
                }
            });
        }
    });
    let mut tot = totals.into_inner().unwrap();
    tot.slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (secs, name, n) in tot.slowest.iter().take(5) {
        eprintln!("slowest: {secs:.2}s {n} schemas {name}");
    }
    for (reason, n) in &tot.reasons {
        eprintln!("failed {n}x: {reason}");
    }
    eprintln!(
        "documents: {} (+{} not loadable); response schemas compiled: {}, failed to compile: {}; patterns dropped: {}; elapsed {:.1}s",
        tot.documents,
        tot.not_loaded,
        tot.compiled,
        tot.failed,
        tot.patterns_dropped,
        started.elapsed().as_secs_f64()
    );
    assert!(tot.panics.is_empty(), "panicked on {:?}", tot.panics);
    assert!(tot.compiled > 0);
}
