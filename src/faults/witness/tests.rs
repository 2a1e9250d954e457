use super::*;

fn ex(
    seq: u64,
    method: &str,
    path: &str,
    body: Option<&str>,
    status: u16,
    answer: &str,
) -> Exchange {
    let location = (status == 201)
        .then(|| serde_json::from_str::<Value>(answer).ok())
        .flatten()
        .and_then(|v| v.get("id").and_then(text))
        .map(|id| format!("{}/{id}", path.trim_end_matches('/')));
    Exchange {
        seq,
        request: crate::execution::RequestSpec {
            operation: format!("{method} {path}"),
            method: method.into(),
            path: path.into(),
            headers: vec![],
            body: body.map(str::to_string),
            content_type: body.map(|_| "application/json".to_string()),
            graphql_query: false,
            breach: None,
            identity: None,
        },
        status: Some(status),
        headers: location
            .map(|l| vec![("location".to_string(), l)])
            .unwrap_or_default(),
        body: answer.into(),
        ..Default::default()
    }
}

fn seqs(v: &[Exchange]) -> Vec<u64> {
    v.iter().map(|e| e.seq).collect()
}

/// The run of an order cancelled twice: author 3, their book 4 (whose
/// stock a PATCH changed), order 3 for it, its first cancel.
fn order_history() -> (Ledger, Vec<Exchange>) {
    let history = vec![
        ex(
            0,
            "POST",
            "/authors",
            Some(r#"{"name":"a"}"#),
            201,
            r#"{"id":3}"#,
        ),
        ex(
            2,
            "POST",
            "/authors/3/books",
            Some(r#"{"title":"t"}"#),
            201,
            r#"{"id":4}"#,
        ),
        ex(
            12,
            "PATCH",
            "/authors/3/books/4",
            Some(r#"{"stock":0}"#),
            200,
            r#"{"id":4}"#,
        ),
        ex(
            31,
            "POST",
            "/orders",
            Some(r#"{"bookId":4}"#),
            201,
            r#"{"id":3}"#,
        ),
        ex(33, "POST", "/orders/3/cancel", None, 200, r#"{"id":3}"#),
    ];
    let mut ledger = Ledger::new();
    for e in &history {
        ledger.note(e);
    }
    (ledger, history)
}

#[test]
fn an_action_on_a_resource_changes_it_and_a_child_sharing_its_parents_id_is_made() {
    let (ledger, _) = order_history();
    // The cancel answered order 3: a change, not a new order.
    let order = &ledger.by_id["3"]["/orders/3"];
    assert_eq!(order.creator.as_ref().map(|c| c.seq), Some(31));
    assert_eq!(
        seqs(
            &order
                .changes
                .iter()
                .map(|c| (**c).clone())
                .collect::<Vec<_>>()
        ),
        [33]
    );
    // Book 11 of author 11 is still a creation.
    let mut ledger = Ledger::new();
    ledger.note(&ex(
        0,
        "POST",
        "/authors/11/books",
        Some("{}"),
        201,
        r#"{"id":11}"#,
    ));
    assert!(ledger.by_id["11"]["/authors/11/books/11"].creator.is_some());
}

#[test]
fn a_name_the_client_chose_is_the_identity_of_what_an_empty_answer_made() {
    let mut ledger = Ledger::new();
    let tenant = ex(
        4,
        "POST",
        "/api/v2/tenants",
        Some(r#"{"name":"t-9x"}"#),
        200,
        "{}",
    );
    ledger.note(&tenant);
    assert!(ledger.run_made("t-9x"));
    let read = [ex(9, "GET", "/api/v2/tenants/t-9x", None, 200, "{}")];
    assert_eq!(seqs(&ledger.complete(&read)), [4, 9]);
    // An answer with an id of its own names the resource by it, and a
    // refused creation made nothing.
    let mut ledger = Ledger::new();
    ledger.note(&ex(
        5,
        "POST",
        "/authors",
        Some(r#"{"name":"ann"}"#),
        200,
        r#"{"id":7}"#,
    ));
    ledger.note(&ex(6, "POST", "/tags", Some(r#"{"name":"x1"}"#), 400, "{}"));
    assert!(ledger.run_made("7"));
    assert!(!ledger.run_made("ann"));
    assert!(!ledger.run_made("x1"));
}

/// Jupyter's rename: `PATCH /api/contents/p {"path": "n"}` moves the file
/// the run made to `n`, which a later read names; a fresh server has no
/// `n`, so a witness of the read needs the rename, and the file's creation.
#[test]
fn a_rename_makes_the_resource_at_its_new_name() {
    for located in [true, false] {
        let mut ledger = Ledger::new();
        let made = ex(
            3,
            "PUT",
            "/api/contents/p",
            Some("{}"),
            201,
            r#"{"path":"p"}"#,
        );
        let mut made = made;
        made.headers = vec![("location".into(), "/api/contents/p".into())];
        ledger.note(&made);
        let mut rename = ex(
            7,
            "PATCH",
            "/api/contents/p",
            Some(r#"{"path":"IhoLE9Ek1"}"#),
            200,
            r#"{"name":"IhoLE9Ek1","path":"IhoLE9Ek1","type":"file"}"#,
        );
        if located {
            rename.headers = vec![("location".into(), "/api/contents/IhoLE9Ek1".into())];
        }
        ledger.note(&rename);
        assert!(ledger.run_made_at("/api/contents/IhoLE9Ek1"), "{located}");
        assert_eq!(
            ledger.maker_at("/api/contents/IhoLE9Ek1").map(|e| e.seq),
            Some(7)
        );
        let read = [ex(9, "GET", "/api/contents/IhoLE9Ek1", None, 200, "{}")];
        assert_eq!(seqs(&ledger.complete(&read)), [3, 7, 9], "{located}");
    }
    // An update that answers with its own id moved nothing.
    let mut ledger = Ledger::new();
    ledger.note(&ex(
        4,
        "PATCH",
        "/users/5",
        Some(r#"{"name":"Bob"}"#),
        200,
        r#"{"id":5,"name":"Bob"}"#,
    ));
    assert!(!ledger.run_made_at("/users/Bob"));
}

#[test]
fn what_the_run_made_is_known_by_its_place_long_after() {
    let mut ledger = Ledger::new();
    let make = |seq, name: &str| {
        let body = format!(r#"{{"name":"{name}"}}"#);
        ex(seq, "POST", "/tenants", Some(&body), 200, "{}")
    };
    ledger.note(&make(1, "t 1"));
    // More creations than the ledger keeps requests for.
    for i in 0..IDS as u64 + 10 {
        ledger.note(&make(10 + i, &format!("n{i}")));
    }
    assert!(!ledger.run_made("t 1"), "its requests are forgotten");
    assert!(ledger.run_made_at("/tenants/t%201"));
    // Making it again was refused because of the run, not the server.
    let again = |name: &str, status| {
        let body = format!(r#"{{"name":"{name}"}}"#);
        ex(80_000, "POST", "/tenants", Some(&body), status, "{}")
    };
    assert!(ledger.refused_for_what_it_made(&again("t 1", 409)));
    assert!(!ledger.refused_for_what_it_made(&again("fresh", 409)));
    assert!(!ledger.refused_for_what_it_made(&again("t 1", 500)));
    // A collection named like a tenant does not make the tenant.
    ledger.note(&ex(
        90_000,
        "POST",
        "/tenants/default/collections",
        Some(r#"{"name":"shared"}"#),
        200,
        "{}",
    ));
    assert!(ledger.run_made("shared"));
    assert!(!ledger.run_made_at("/tenants/shared"));
    assert!(ledger.run_made_at("/tenants/default/collections/shared"));
    // The server's own, deleted and made again, stays the server's.
    ledger.note(&ex(90_001, "DELETE", "/tenants/seed", None, 204, ""));
    ledger.note(&make(90_002, "seed"));
    assert!(!ledger.run_made_at("/tenants/seed"));
    // What the run made, deleted and made again, is the run's.
    ledger.note(&ex(90_003, "DELETE", "/tenants/n3", None, 204, ""));
    ledger.note(&make(90_004, "n3"));
    assert!(ledger.run_made_at("/tenants/n3"));
}

#[test]
fn a_version_segment_is_no_resource() {
    let mut ledger = Ledger::new();
    ledger.note(&ex(1, "PATCH", "/api/v2/tenants/x", Some("{}"), 200, "{}"));
    let other = [ex(9, "POST", "/api/v2/reset", None, 403, "{}")];
    assert_eq!(seqs(&ledger.complete(&other)), [9]);
    assert!(names::is_version("v2") && names::is_version("V1.1"));
    assert!(!names::is_version("v") && !names::is_version("vat") && !names::is_version("v2x"));
}

#[test]
fn the_resource_a_run_keeps_building_on_is_remembered() {
    let mut ledger = Ledger::new();
    let db = Some(r#"{"name":"hot-db"}"#);
    ledger.note(&ex(1, "POST", "/databases", db, 200, "{}"));
    for i in 0..2 * IDS as u64 {
        let name = format!(r#"{{"name":"c{i}"}}"#);
        let at = "/databases/hot-db/collections";
        ledger.note(&ex(10 + i, "POST", at, Some(&name), 200, "{}"));
        // And as many made once and never used again.
        ledger.note(&ex(10 + i, "POST", "/tags", Some(&name), 200, "{}"));
    }
    let read = [ex(99_999, "GET", "/databases/hot-db", None, 200, "{}")];
    assert_eq!(seqs(&ledger.complete(&read)), [1, 99_999]);
    assert!(ledger.by_id.len() <= IDS);
}

#[test]
fn a_completed_witness_puts_every_maker_before_what_needs_it() {
    let (ledger, _) = order_history();
    let witness = [ex(59, "POST", "/orders/3/cancel", None, 500, "{}")];
    assert_eq!(seqs(&ledger.complete(&witness)), [0, 2, 12, 31, 33, 59]);
}

#[test]
fn a_collection_read_brings_what_was_made_and_changed_in_it() {
    let mut ledger = Ledger::new();
    let author = ex(57, "POST", "/authors", Some("{}"), 201, r#"{"id":11}"#);
    let book = ex(
        59,
        "POST",
        "/authors/11/books",
        Some("{}"),
        201,
        r#"{"id":11}"#,
    );
    let patch = ex(
        60,
        "PATCH",
        "/authors/11/books/11",
        Some(r#"{"price":2}"#),
        200,
        r#"{"id":11}"#,
    );
    for e in [&author, &book, &patch] {
        ledger.note(e);
    }
    let read = ex(805, "GET", "/authors/11/books", None, 200, "[]");
    let witness = [author, book, read];
    assert_eq!(seqs(&ledger.complete_listing(&witness)), [57, 59, 60, 805]);
    // A fault in the read itself (a 500 on its query) needs none of it.
    assert_eq!(seqs(&ledger.complete(&witness)), [57, 59, 805]);
}

#[test]
fn a_deleted_seed_resource_is_stood_in_for_by_one_the_run_made() {
    let mut ledger = Ledger::new();
    let made = ex(3, "POST", "/authors", Some("{}"), 201, r#"{"id":7}"#);
    ledger.note(&made);
    ledger.note(&ex(5, "DELETE", "/authors/1", None, 204, ""));
    let read = ex(9, "GET", "/authors/1/books", None, 200, "[]");
    let done = ledger.complete(&[read]);
    assert_eq!(seqs(&done), [3, 9]);
    assert_eq!(done[1].request.path, "/authors/7/books");
}

#[test]
fn a_numbered_id_the_run_made_is_known_after_its_requests_are_forgotten() {
    let mut ledger = Ledger::new();
    // Authors from 3 on, each with a book (one book counter).
    for i in 0..IDS as u64 + 10 {
        let a = i + 3;
        let body = format!(r#"{{"id":{a}}}"#);
        ledger.note(&ex(2 * i, "POST", "/authors", Some("{}"), 201, &body));
        let at = format!("/authors/{a}/books");
        let body = format!(r#"{{"id":{}}}"#, i + 4);
        ledger.note(&ex(2 * i + 1, "POST", &at, Some("{}"), 201, &body));
    }
    assert!(!ledger.run_made("5"), "its requests are forgotten");
    assert!(ledger.run_made_named("5", "bookId"));
    assert!(ledger.run_made_named("5", "parent/id"));
    // The server's own (below the first the run made of the kind).
    assert!(!ledger.run_made_named("3", "bookId"));
    assert!(!ledger.run_made_named("2", "authorId"));
    assert!(!ledger.run_made_named("abc", "bookId"));
    assert!(ledger.run_made_at("/authors/5/books/6"));
    assert!(ledger.run_made_at("/authors/1/books/9"));
    assert!(!ledger.run_made_at("/authors/1/books/2"));
    assert!(!ledger.run_made_at("/authors/2"));
}

#[test]
fn a_regression_test_makes_a_stand_in_for_what_the_ledger_forgot() {
    let mut ledger = Ledger::new();
    let mut seq = 0;
    let mut make = |ledger: &mut Ledger, path: &str, id: u64| {
        seq += 1;
        let body = format!(r#"{{"id":{id}}}"#);
        ledger.note(&ex(seq, "POST", path, Some("{}"), 201, &body));
    };
    // Author 3 and their book 4, then far more than the ledger keeps.
    make(&mut ledger, "/authors", 3);
    make(&mut ledger, "/authors/3/books", 4);
    for i in 0..IDS as u64 {
        make(&mut ledger, "/authors", 10_000 + i);
    }
    make(&mut ledger, "/authors", 90_000);
    make(&mut ledger, "/authors/90000/books", 90_001);
    assert!(!ledger.run_made("4"), "forgotten");
    let read = ex(u64::MAX / 2, "GET", "/authors/3/books/4", None, 200, "{}");
    // A reproducer keeps the witness as it was.
    assert_eq!(ledger.complete(std::slice::from_ref(&read)).len(), 1);
    let done = ledger.complete_standing_in(&[read]);
    let calls: Vec<String> = done
        .iter()
        .map(|e| format!("{} {}", e.request.method, e.request.path))
        .collect();
    assert_eq!(
        calls,
        [
            "POST /authors",
            "POST /authors/90000/books",
            "GET /authors/90000/books/90001"
        ]
    );
    let order = ex(
        u64::MAX / 2,
        "POST",
        "/orders",
        Some(r#"{"bookId":4,"quantity":1}"#),
        201,
        r#"{"id":7}"#,
    );
    let done = ledger.complete_standing_in(&[order]);
    assert_eq!(done.len(), 3, "{done:#?}");
    assert_eq!(
        done[2].request.body.as_deref(),
        Some(r#"{"bookId":90001,"quantity":1}"#)
    );
    // What the run never made is no one's to stand in for.
    let other = ex(u64::MAX / 2, "GET", "/authors/1/books/5", None, 404, "{}");
    assert_eq!(ledger.complete_standing_in(&[other]).len(), 1);
}

#[test]
fn a_change_to_what_the_server_started_with_after_the_run_changed_it_is_history() {
    let mut ledger = Ledger::new();
    ledger.note(&ex(1, "POST", "/authors", Some("{}"), 201, r#"{"id":3}"#));
    ledger.note(&ex(
        2,
        "POST",
        "/authors/3/books",
        Some("{}"),
        201,
        r#"{"id":4}"#,
    ));
    // The run orders seed book 2 and its own book 4, and re-prices seed book 1.
    let order = |seq, book: u64| {
        let body = format!(r#"{{"bookId":{book},"quantity":1}}"#);
        ex(
            seq,
            "POST",
            "/orders",
            Some(&body),
            201,
            &format!(r#"{{"id":{seq}}}"#),
        )
    };
    ledger.note(&order(3, 2));
    ledger.note(&order(4, 4));
    ledger.note(&ex(5, "PATCH", "/authors/1/books/1", Some("{}"), 200, "{}"));
    // A book created under seed author 1 changes no author.
    ledger.note(&ex(
        6,
        "POST",
        "/authors/1/books",
        Some("{}"),
        201,
        r#"{"id":9}"#,
    ));
    let after = u64::MAX / 2;
    let changed = |e: &Exchange| ledger.acts_on_what_the_run_changed(e);
    assert_eq!(changed(&order(after, 2)).as_deref(), Some("bookId = 2"));
    assert_eq!(changed(&order(after, 1)).as_deref(), Some("bookId = 1"));
    assert_eq!(changed(&order(after, 3)), None, "never touched");
    assert_eq!(changed(&order(after, 4)), None, "the run's own");
    let patch = ex(after, "PATCH", "/authors/1/books/2", Some("{}"), 200, "{}");
    assert_eq!(changed(&patch).as_deref(), Some("/authors/1/books/2"));
    let create = ex(
        after,
        "POST",
        "/authors/1/books",
        Some("{}"),
        201,
        r#"{"id":10}"#,
    );
    assert_eq!(changed(&create), None);
    let read = ex(after, "GET", "/authors/1/books/1", None, 200, "{}");
    assert_eq!(changed(&read), None, "a read changes nothing");
}

#[test]
fn a_body_is_parsed_for_ids_whenever_it_may_name_one() {
    // Every member name that names an id makes its body parsed.
    for name in [
        "id", "ID", "authorId", "book_id", "PetUUID", "apiKey", "KEY", "slug", "Slug", "x-id",
    ] {
        assert!(is_id_name(name), "{name}");
        let body = serde_json::json!({ name: 1 }).to_string();
        assert!(may_name_an_id(&body), "{body}");
    }
    // Escaped or non-ASCII names are parsed to tell.
    assert!(may_name_an_id(r#"{"\u0069d": 1}"#));
    assert!(may_name_an_id("{\"\u{212a}ey\": 1}"));
    // The rest are not parsed.
    assert!(!may_name_an_id(r#"{"name": "PDV5d2", "count": 3}"#));
}
