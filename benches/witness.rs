//! Completing a fault's witness after a long run: the ledger then remembers
//! thousands of made and deleted resources, and every fault's candidate
//! scripts are completed between the search and the replays, on the clock.
//!
//! What it guards: a read of a deleted book is completed with a stand-in of
//! the same kind. That once scanned every deleted path for each remembered
//! resource (0.1 to 0.2 s per witness after a 30,000-request run, 1.5 s
//! before the replays on the demo), which left an 8 s run no time to
//! confirm anything. Run with `cargo bench --bench witness`.

use cartograph::execution::{Exchange, RequestSpec};
use cartograph::faults::witness::Ledger;
use criterion::{Criterion, criterion_group, criterion_main};

fn exchange(seq: u64, method: &str, path: &str, status: u16, body: String) -> Exchange {
    Exchange {
        seq,
        request: RequestSpec {
            operation: format!("{method} {path}"),
            method: method.into(),
            path: path.into(),
            ..Default::default()
        },
        status: Some(status),
        body,
        ..Default::default()
    }
}

/// A ledger after `authors` authors with 4 books each, 3 of every 4 books
/// deleted: the shape of a long search on the demo's bookshop.
fn long_run(authors: u64) -> (Ledger, u64) {
    let mut ledger = Ledger::default();
    let mut seq = 0;
    let mut book = 0;
    for a in 1..=authors {
        let ex = exchange(seq, "POST", "/authors", 201, format!("{{\"id\":{a}}}"));
        ledger.note(&ex);
        seq += 1;
        for k in 0..4 {
            book += 1;
            let path = format!("/authors/{a}/books");
            let ex = exchange(seq, "POST", &path, 201, format!("{{\"id\":{book}}}"));
            ledger.note(&ex);
            seq += 1;
            if k < 3 {
                let ex = exchange(seq, "DELETE", &format!("{path}/{book}"), 204, String::new());
                ledger.note(&ex);
                seq += 1;
            }
        }
    }
    (ledger, seq)
}

fn bench(c: &mut Criterion) {
    let (ledger, seq) = long_run(6_000);
    // A read of a book the run deleted: completed with a stand-in.
    let witness = [exchange(
        seq,
        "GET",
        "/authors/7/books/25",
        200,
        "{}".into(),
    )];
    c.bench_function("complete a witness after a 30,000-request run", |b| {
        b.iter(|| ledger.complete_standing_in(&witness).len())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
