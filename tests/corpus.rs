//! Every document of the shared corpus of real API descriptions either loads and
//! exports, or fails with a clear error naming the file; nothing panics. At least
//! 95% must load fully (nothing skipped). Skipped, with a message, when the corpus
//! is not beside the checkout.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use cartograph::graph::{self, export};

fn corpus_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    dir.join("MANIFEST.tsv").exists().then_some(dir)
}

/// The documents the manifest lists (multi-file bundles by their entry document).
fn documents(dir: &Path) -> Vec<(PathBuf, String)> {
    let manifest = std::fs::read_to_string(dir.join("MANIFEST.tsv")).unwrap();
    manifest
        .lines()
        .skip(1)
        .filter_map(|line| {
            let mut cols = line.split('\t');
            let file = cols.next()?;
            let format = cols.next()?;
            Some((dir.join(file), format.to_string()))
        })
        .collect()
}

#[derive(Debug)]
enum Outcome {
    Full { ops: usize },
    Partial { ops: usize, warnings: usize },
    Error(String),
    Panic(String),
}

fn run_one(path: &Path, validator: &jsonschema::Validator) -> Outcome {
    let result =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(
            || match cartograph::load::load(path) {
                Ok(loaded) => {
                    let g = graph::build(&loaded.api);
                    let json = export::render(&g, export::Format::Json);
                    let value: serde_json::Value =
                        serde_json::from_str(&json).expect("export is JSON");
                    if let Some(err) = validator.iter_errors(&value).next() {
                        return Outcome::Error(format!(
                            "export breaks graph.schema.json: {err} at {}",
                            err.instance_path()
                        ));
                    }
                    // The other formats must render too (no panic on odd names).
                    for f in [
                        export::Format::Dot,
                        export::Format::Mermaid,
                        export::Format::Graphml,
                    ] {
                        let _ = export::render(&g, f);
                    }
                    let ops = loaded.api.operations.len();
                    if loaded.warnings.is_empty() {
                        Outcome::Full { ops }
                    } else {
                        Outcome::Partial {
                            ops,
                            warnings: loaded.warnings.len(),
                        }
                    }
                }
                Err(e) => {
                    let text = e.to_string();
                    let name = path.file_name().unwrap().to_string_lossy();
                    assert!(
                        text.contains(name.as_ref()),
                        "error does not name the file: {text}"
                    );
                    Outcome::Error(text)
                }
            },
        ));
    result.unwrap_or_else(|p| {
        Outcome::Panic(
            p.downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default(),
        )
    })
}

#[test]
fn every_corpus_document_loads_or_fails_cleanly() {
    let Some(dir) = corpus_dir() else {
        eprintln!("skipped: ../shared/corpus is not beside the checkout");
        return;
    };
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("models/graph.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let validator =
        jsonschema::validator_for(&schema).expect("graph.schema.json is a valid JSON Schema");
    let docs = documents(&dir);
    assert!(docs.len() >= 190, "manifest lists {} documents", docs.len());

    let results: Mutex<Vec<(PathBuf, String, Outcome)>> = Mutex::new(Vec::new());
    let next = Mutex::new(0usize);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let i = {
                        let mut n = next.lock().unwrap();
                        let i = *n;
                        *n += 1;
                        i
                    };
                    let Some((path, format)) = docs.get(i) else {
                        break;
                    };
                    let outcome = run_one(path, &validator);
                    results
                        .lock()
                        .unwrap()
                        .push((path.clone(), format.clone(), outcome));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by(|a, b| a.0.cmp(&b.0));

    let mut full = 0;
    let mut panics = Vec::new();
    for (path, format, outcome) in &results {
        let name = path.strip_prefix(&dir).unwrap_or(path).display();
        match outcome {
            Outcome::Full { ops } => {
                full += 1;
                println!("full     {format:<22} {ops:>5} ops  {name}");
            }
            Outcome::Partial { ops, warnings } => {
                println!("partial  {format:<22} {ops:>5} ops  {warnings} skipped  {name}")
            }
            Outcome::Error(e) => println!(
                "error    {format:<22} {name}: {}",
                e.lines().next().unwrap_or("")
            ),
            Outcome::Panic(p) => {
                println!("PANIC    {format:<22} {name}: {p}");
                panics.push(name.to_string());
            }
        }
    }
    let total = results.len();
    println!(
        "loaded fully: {full} of {total} ({:.1}%)",
        100.0 * full as f64 / total as f64
    );
    assert!(panics.is_empty(), "panicked on {panics:?}");
    let exports_broken: Vec<_> = results
        .iter()
        .filter(|(_, _, o)| matches!(o, Outcome::Error(e) if e.starts_with("export breaks")))
        .collect();
    assert!(exports_broken.is_empty(), "{exports_broken:#?}");
    assert!(
        full * 100 >= total * 95,
        "only {full} of {total} loaded fully"
    );
}

/// A published description whose answers and bodies are all inline (Hetzner
/// Cloud: 135 operations, not one named response schema) gets a graph as
/// its `definitions` would give it: inline bodies are schema nodes.
#[test]
fn a_description_written_inline_gets_produces_and_consumes_edges() {
    let Some(dir) = corpus_dir() else {
        eprintln!("skipped: ../shared/corpus is not here");
        return;
    };
    let path = dir.join("openapi/hetzner.cloud__main__1.0.0.yaml");
    if !path.exists() {
        eprintln!("skipped: {} is not in this corpus", path.display());
        return;
    }
    let loaded = cartograph::load::load(&path).unwrap();
    let g = cartograph::graph::build(&loaded.api);
    let count = |kind: cartograph::graph::EdgeKind| {
        g.graph.edge_weights().filter(|e| e.kind == kind).count()
    };
    let (produces, consumes) = (
        count(cartograph::graph::EdgeKind::Produces),
        count(cartograph::graph::EdgeKind::Consumes),
    );
    assert!(produces > 135, "{produces} produces edges");
    assert!(consumes > 135, "{consumes} consumes edges");
    // A server's id comes from the servers a listing answers (the items
    // of its `servers` envelope), which creating a server also returns.
    let op = g.operation("GET /servers/{id}").expect("GET /servers/{id}");
    let inputs = cartograph::graph::query::input_sources(&g, op);
    let id = inputs.iter().find(|i| i.name == "id").expect("input id");
    assert!(
        id.sources
            .iter()
            .any(|s| s.schema == "GET /servers.200.servers[]"
                && s.property == "id"
                && s.producers.iter().any(|p| p == "POST /servers")),
        "{id:?}"
    );
    let unproduced = cartograph::graph::query::unproduced_required(&g).len();
    assert!(
        unproduced < 60,
        "{unproduced} required parameters no operation produces"
    );
}
