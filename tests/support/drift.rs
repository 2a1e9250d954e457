//! A purpose-built library server that departs from its description
//! ([`DRIFT_SPEC`]) in exactly these ways, each the same on every operation
//! it touches, and is otherwise correct:
//!
//! | cause | operations | what the server does |
//! |---|---|---|
//! | `schema_violation` `Author.born` | listAuthors, getAuthor, createAuthor | sends `born: null` (an integer is documented) |
//! | `schema_violation` `Book` required `isbn` | listBooks, getBook, createBook | never sends `isbn` |
//! | `schema_violation` `Loan.state` enum | listLoans, getLoan | sends `"overdue"` (`open`, `closed` documented) |
//! | `schema_violation` `Tag.count` type | listTags | sends the count as a string (`"3"`) |
//! | `content_type_mismatch` `text/plain` | getAuthor, getBook, getLoan | answers 404 in `text/plain` (the shared `NotFound` response says JSON) |
//! | `undocumented_status` 404 | deleteAuthor, deleteBook | answers 404 `{"message": "not found"}` for what does not exist |
//! | `html_instead_of_json` | getHealth | answers an HTML page |
//! | `server_error` (defect) | getStats | always 500 `KeyError: 'totals' in stats.summarise` |
//! | `server_error` (defect) | placeOrder | always 500 `ZeroDivisionError: division by zero in pricing.discount` |
//!
//! Each body breaks its schema in one place only (the schema oracle reports
//! the first break of a body), and bad request bodies are refused with 400
//! (operations that document no client error: no fault), so that the run
//! finds these causes and no other.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// Path of the description, from the crate's root.
pub const DRIFT_SPEC_PATH: &str = "fixtures/servers/drift.yaml";

/// The running server; dropping it stops it.
pub struct Drift {
    /// Base URL, e.g. "http://127.0.0.1:41234".
    pub base_url: String,
    task: JoinHandle<()>,
}

impl Drift {
    /// Starts the server with two authors, two books, two loans.
    pub async fn start() -> Drift {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("bind the drift server on 127.0.0.1");
        let addr = listener.local_addr().expect("local address");
        let mut store = Store::default();
        for name in ["Ursula", "Octavia"] {
            store.last += 1;
            store.authors.insert(store.last, name.to_string());
        }
        for (title, price) in [("Dune", 9.5), ("Kindred", 12.0)] {
            store.last += 1;
            store.books.insert(store.last, (title.to_string(), price));
        }
        let router = Router::new()
            .fallback(handle)
            .with_state(Arc::new(Mutex::new(store)));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Drift {
            base_url: format!("http://{addr}"),
            task,
        }
    }
}

impl Drop for Drift {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[derive(Default)]
struct Store {
    last: i64,
    authors: BTreeMap<i64, String>,
    books: BTreeMap<i64, (String, f64)>,
}

type Shared = Arc<Mutex<Store>>;

fn json_answer(status: StatusCode, body: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn text(status: StatusCode, body: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body.to_string(),
    )
        .into_response()
}

fn author(id: i64, name: &str) -> Value {
    json!({"id": id, "name": name, "born": null})
}

fn book(id: i64, (title, price): &(String, f64)) -> Value {
    json!({"id": id, "title": title, "price": price})
}

const LOANS: [(i64, i64); 2] = [(1, 3), (2, 4)];

fn loan((id, book): (i64, i64)) -> Value {
    json!({"id": id, "bookId": book, "state": "overdue"})
}

/// The body as a JSON object whose `key` is a string and whose other
/// `numbers` are numbers when present; else `None` (a 400).
fn body_with(bytes: &Bytes, key: &str, numbers: &[&str]) -> Option<Value> {
    let v: Value = serde_json::from_slice(bytes).ok()?;
    let obj = v.as_object()?;
    obj.get(key)?.as_str()?;
    for n in numbers {
        if let Some(x) = obj.get(*n) {
            x.as_f64()?;
        }
    }
    Some(v)
}

async fn handle(State(store): State<Shared>, request: Request) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let bytes = axum::body::to_bytes(request.into_body(), usize::MAX)
        .await
        .unwrap_or_default();
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let mut store = store.lock().unwrap_or_else(|e| e.into_inner());
    let id = |s: &str| s.parse::<i64>().ok();
    match (&method, segments.as_slice()) {
        (&Method::GET, ["authors", ""]) => json_answer(
            StatusCode::OK,
            Value::Array(store.authors.iter().map(|(i, n)| author(*i, n)).collect()),
        ),
        (&Method::POST, ["authors", ""]) => match body_with(&bytes, "name", &[]) {
            Some(v) => {
                store.last += 1;
                let (i, name) = (store.last, v["name"].as_str().unwrap_or("").to_string());
                store.authors.insert(i, name.clone());
                json_answer(StatusCode::CREATED, author(i, &name))
            }
            None => text(StatusCode::BAD_REQUEST, "bad request"),
        },
        (&Method::GET, ["authors", a]) => {
            match id(a).and_then(|i| store.authors.get(&i).map(|n| (i, n))) {
                Some((i, n)) => json_answer(StatusCode::OK, author(i, n)),
                None => text(StatusCode::NOT_FOUND, "not found"),
            }
        }
        (&Method::DELETE, ["authors", a]) => match id(a).and_then(|i| store.authors.remove(&i)) {
            Some(_) => StatusCode::NO_CONTENT.into_response(),
            None => json_answer(StatusCode::NOT_FOUND, json!({"message": "not found"})),
        },
        (&Method::GET, ["books"]) => json_answer(
            StatusCode::OK,
            Value::Array(store.books.iter().map(|(i, b)| book(*i, b)).collect()),
        ),
        (&Method::POST, ["books"]) => match body_with(&bytes, "title", &["price"]) {
            Some(v) => {
                store.last += 1;
                let i = store.last;
                let b = (
                    v["title"].as_str().unwrap_or("").to_string(),
                    v["price"].as_f64().unwrap_or(10.0),
                );
                let answer = book(i, &b);
                store.books.insert(i, b);
                json_answer(StatusCode::CREATED, answer)
            }
            None => text(StatusCode::BAD_REQUEST, "bad request"),
        },
        (&Method::GET, ["books", b]) => {
            match id(b).and_then(|i| store.books.get(&i).map(|x| (i, x))) {
                Some((i, x)) => json_answer(StatusCode::OK, book(i, x)),
                None => text(StatusCode::NOT_FOUND, "not found"),
            }
        }
        (&Method::DELETE, ["books", b]) => match id(b).and_then(|i| store.books.remove(&i)) {
            Some(_) => StatusCode::NO_CONTENT.into_response(),
            None => json_answer(StatusCode::NOT_FOUND, json!({"message": "not found"})),
        },
        (&Method::GET, ["loans"]) => json_answer(
            StatusCode::OK,
            Value::Array(LOANS.into_iter().map(loan).collect()),
        ),
        (&Method::GET, ["loans", l]) => {
            match id(l).and_then(|i| LOANS.into_iter().find(|x| x.0 == i)) {
                Some(x) => json_answer(StatusCode::OK, loan(x)),
                None => text(StatusCode::NOT_FOUND, "not found"),
            }
        }
        (&Method::GET, ["tags"]) => json_answer(
            StatusCode::OK,
            json!([{"name": "sf", "count": "3"}, {"name": "poetry", "count": "1"}]),
        ),
        (&Method::GET, ["health"]) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            "<!DOCTYPE html><html><body><p>all good</p></body></html>",
        )
            .into_response(),
        (&Method::GET, ["stats"]) => json_answer(
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({"message": "KeyError: 'totals' in stats.summarise"}),
        ),
        (&Method::POST, ["orders"]) => json_answer(
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({"message": "ZeroDivisionError: division by zero in pricing.discount"}),
        ),
        _ => text(StatusCode::NOT_FOUND, "no such route"),
    }
}
