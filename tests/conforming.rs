//! The false-positive rate of the oracles: full searches against a server
//! that conforms to its description (`tests/support/conforming.rs`) must
//! report no fault at all. The run must also really exercise the API (every
//! operation called and answered 2xx, the documented error statuses
//! reached), so a server that answers 404 to everything cannot pass.

use crate::support;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use support::cli::cartograph;
use support::conforming::{CONFORMING_SPEC_PATH, Conforming};

/// Seeds of the runs; each gets a fresh server, so each run repeats exactly.
const SEEDS: [u64; 3] = [1, 2, 3];
/// Requests per run: enough for the search to reach deep states (archived
/// projects, cascaded deletions) while three runs stay well under a minute.
const MAX_REQUESTS: u64 = 4000;

/// Every operationId of the description.
const OPERATIONS: [&str; 12] = [
    "listProjects",
    "createProject",
    "getProject",
    "replaceProject",
    "updateProject",
    "deleteProject",
    "listTasks",
    "createTask",
    "getTask",
    "replaceTask",
    "updateTask",
    "deleteTask",
];

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// The trace line of exchange `seq`, to show a fault's exact exchange.
fn trace_line(dir: &Path, seq: &Value) -> Option<String> {
    let trace = std::fs::read_to_string(dir.join("trace.ndjson")).ok()?;
    trace
        .lines()
        .find(|l| serde_json::from_str::<Value>(l).is_ok_and(|v| v["seq"] == *seq))
        .map(str::to_string)
}

/// What one seeded run found and reached.
struct Run {
    seed: u64,
    requests: u64,
    reached: u64,
    faults: Vec<String>,
    /// operation → status → count.
    statuses: BTreeMap<String, BTreeMap<u16, u64>>,
}

async fn run(seed: u64, max_requests: u64) -> Run {
    let server = Conforming::start().await;
    // CONFORMING_OUT=DIR keeps each run's output in DIR/seed-N, to read the
    // trace of a fault; by default it goes to a temporary folder.
    let temp = tempfile::tempdir().unwrap();
    let out = match std::env::var_os("CONFORMING_OUT") {
        Some(dir) => Path::new(&dir).join(format!("seed-{seed}")),
        None => temp.path().to_path_buf(),
    };
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join(CONFORMING_SPEC_PATH);
    let args: Vec<String> = vec![
        "run".into(),
        spec.to_string_lossy().into_owned(),
        "--target".into(),
        server.base_url.clone(),
        "--seed".into(),
        seed.to_string(),
        "--max-requests".into(),
        max_requests.to_string(),
        "--out".into(),
        out.to_string_lossy().into_owned(),
    ];
    let output = cartograph(args).await;
    // Any other exit than 0 (no fault) or 1 (faults) is a broken run; faults
    // are asserted on by the caller, with every seed's faults listed.
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "seed {seed}: exit {:?}\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stderr)
    );
    let report = read_json(&out.join("report.json"));
    let faults: Vec<String> = report["faults"]
        .as_array()
        .expect("faults is an array")
        .iter()
        .map(|f| {
            let exchange = trace_line(&out, &f["first_seq"]).unwrap_or_default();
            format!(
                "seed {seed}: {} on {} (status {}, seen {} times): {}\n  witness: {}\n  first exchange: {exchange}",
                f["code"], f["operation"], f["status"], f["count"], f["message"], f["witness"]
            )
        })
        .collect();
    assert_eq!(
        output.status.code() == Some(0),
        faults.is_empty(),
        "seed {seed}: the exit status disagrees with the report"
    );
    assert_eq!(
        report["stop"], "max_requests",
        "seed {seed}: {}",
        report["stop"]
    );
    let requests = report["requests"].as_u64().unwrap();
    assert!(requests >= max_requests, "seed {seed}: {requests} requests");
    assert!(
        server.requests() >= requests,
        "seed {seed}: the server answered {} of {requests} requests",
        server.requests()
    );
    let mut statuses: BTreeMap<String, BTreeMap<u16, u64>> = BTreeMap::new();
    for op in report["operations"].as_array().unwrap() {
        let counts = statuses
            .entry(op["operation"].as_str().unwrap().to_string())
            .or_default();
        for (status, n) in op["status_counts"].as_object().unwrap() {
            *counts.entry(status.parse().unwrap()).or_default() += n.as_u64().unwrap();
        }
        assert!(
            op.get("failures")
                .and_then(Value::as_object)
                .is_none_or(|f| f.is_empty()),
            "seed {seed}: {} failed to get answers: {}",
            op["operation"],
            op["failures"]
        );
    }
    let (projects, tasks) = server.sizes();
    eprintln!(
        "seed {seed}: {requests} requests ({} answered by the server), {} operations reached, \
         {} faults; {projects} projects and {tasks} tasks left",
        server.requests(),
        report["operations_reached"],
        faults.len()
    );
    Run {
        seed,
        requests,
        reached: report["operations_reached"].as_u64().unwrap(),
        faults,
        statuses,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conforming_server_shows_no_fault() {
    // CONFORMING_SEEDS=1,2,…,40 and CONFORMING_REQUESTS=N measure on more
    // runs than the suite affords.
    let seeds: Vec<u64> = match std::env::var("CONFORMING_SEEDS") {
        Ok(list) => list.split(',').map(|s| s.trim().parse().unwrap()).collect(),
        Err(_) => SEEDS.to_vec(),
    };
    let max_requests: u64 = std::env::var("CONFORMING_REQUESTS")
        .map(|n| n.parse().unwrap())
        .unwrap_or(MAX_REQUESTS);
    let mut runs = Vec::new();
    for &seed in &seeds {
        runs.push(run(seed, max_requests).await);
    }

    // The run exercised the API: every operation called in every run, and
    // answered 2xx in most runs; the documented errors reached too.
    let mut all: BTreeMap<&str, BTreeMap<u16, u64>> = BTreeMap::new();
    for r in &runs {
        for op in OPERATIONS {
            let counts = r.statuses.get(op);
            assert!(
                counts.is_some_and(|c| !c.is_empty()),
                "seed {}: {op} was never called: {:?}",
                r.seed,
                r.statuses
            );
            for (status, n) in counts.unwrap() {
                *all.entry(op).or_default().entry(*status).or_default() += n;
            }
        }
        assert!(
            r.reached as usize >= OPERATIONS.len() - 2,
            "seed {}: only {} operations answered 2xx: {:?}",
            r.seed,
            r.reached,
            r.statuses
        );
    }
    eprintln!("statuses over all runs:");
    for (op, counts) in &all {
        eprintln!("  {op:<15} {counts:?}");
    }
    for op in OPERATIONS {
        assert!(
            all[op].keys().any(|s| (200..300).contains(s)),
            "{op} never answered 2xx: {:?}",
            all[op]
        );
    }
    // Every kind of answer the description documents came back somewhere.
    for status in [201, 204, 400, 404, 409, 422] {
        assert!(
            all.values().any(|c| c.contains_key(&status)),
            "no operation answered {status}: {all:?}"
        );
    }

    // The measurement.
    let requests: u64 = runs.iter().map(|r| r.requests).sum();
    let faults: Vec<&String> = runs.iter().flat_map(|r| &r.faults).collect();
    eprintln!(
        "false positives: {} faults over {requests} requests checked ({} runs of {max_requests}, seeds {seeds:?})",
        faults.len(),
        runs.len()
    );
    assert!(
        faults.is_empty(),
        "a conforming server got {} faults (each a false positive or a server bug):\n{}",
        faults.len(),
        faults
            .iter()
            .map(|f| f.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}
