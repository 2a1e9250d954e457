//! A notes server with security weaknesses planted, each beside a twin
//! that gets it right ([`SPEC_PATH`] says which is which): an SQL query
//! built by pasting `q` in (a quote breaks it, a tautology lists every
//! note), read-only `id` and `owner` honoured on create, an HTML board that
//! shows titles unescaped, a webhook whose callback the server fetches, and
//! an undocumented DELETE. The twins: parameters used as data, read-only
//! properties ignored, titles escaped, callbacks stored only, 405 for every
//! other method the description does not list; and two that only look
//! weak: a search that matches any word (the tautology's words find a
//! note), a board that answers every method as it answers GET, and a
//! catch-all that answers every other GET with an app shell.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// The description, relative to the crate root.
pub const SPEC_PATH: &str = "fixtures/servers/security.yaml";

/// The running server; dropping it stops it.
pub struct SecurityServer {
    /// Base URL, `http://127.0.0.1:PORT` (no trailing slash).
    pub base_url: String,
    task: JoinHandle<()>,
}

/// One store of notes: the weak side's or the safe side's.
#[derive(Default)]
struct Store {
    next: i64,
    notes: BTreeMap<i64, Value>,
}

impl Store {
    fn seeded() -> Store {
        let mut s = Store::default();
        for title in ["groceries", "ideas", "release 1"] {
            s.next += 1;
            s.notes.insert(
                s.next,
                json!({"id": s.next, "owner": "alice", "title": title, "body": ""}),
            );
        }
        s
    }
}

struct App {
    weak: Mutex<Store>,
    safe: Mutex<Store>,
}

impl SecurityServer {
    /// Starts a fresh server on a free loopback port.
    pub async fn start() -> SecurityServer {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("bind the security server on 127.0.0.1");
        let addr = listener.local_addr().expect("a bound address");
        let app = Arc::new(App {
            weak: Mutex::new(Store::seeded()),
            safe: Mutex::new(Store::seeded()),
        });
        let router = Router::new().fallback(handle).with_state(app);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        SecurityServer {
            base_url: format!("http://{addr}"),
            task,
        }
    }
}

impl Drop for SecurityServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn json_answer(status: StatusCode, v: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        v.to_string(),
    )
        .into_response()
}

fn not_allowed() -> Response {
    StatusCode::METHOD_NOT_ALLOWED.into_response()
}

fn query_q(uri: &Uri) -> Option<String> {
    url::form_urlencoded::parse(uri.query().unwrap_or("").as_bytes())
        .find(|(k, _)| k == "q")
        .map(|(_, v)| v.into_owned())
}

async fn handle(State(app): State<Arc<App>>, method: Method, uri: Uri, body: Bytes) -> Response {
    let path = uri.path().to_string();
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let weak = segments[0] == "notes";
    match (method.as_str(), segments.as_slice()) {
        ("GET", ["notes" | "safe-notes"]) => {
            let Some(q) = query_q(&uri) else {
                return json_answer(StatusCode::BAD_REQUEST, json!({"error": "q is required"}));
            };
            let store = if weak { &app.weak } else { &app.safe };
            let notes: Vec<Value> = store.lock().unwrap().notes.values().cloned().collect();
            if weak {
                // `SELECT * FROM notes WHERE title LIKE '%<q>%'`, pasted.
                if q.matches('\'').count() % 2 == 1 {
                    return json_answer(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        json!({"error": format!("unrecognized token: \"'{q}%'\"")}),
                    );
                }
                if q.to_ascii_uppercase().contains("' OR '1'='1") {
                    return json_answer(StatusCode::OK, Value::Array(notes));
                }
            }
            let found: Vec<Value> = notes
                .into_iter()
                .filter(|n| n["title"].as_str().unwrap_or("").contains(q.as_str()))
                .collect();
            json_answer(StatusCode::OK, Value::Array(found))
        }
        ("POST", ["notes" | "safe-notes"]) => {
            let Ok(Value::Object(sent)) = serde_json::from_slice::<Value>(&body) else {
                return json_answer(StatusCode::BAD_REQUEST, json!({"error": "a JSON object"}));
            };
            let Some(title) = sent
                .get("title")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
            else {
                return json_answer(StatusCode::BAD_REQUEST, json!({"error": "title"}));
            };
            let store = if weak { &app.weak } else { &app.safe };
            let mut store = store.lock().unwrap();
            store.next += 1;
            let mut id = store.next;
            let mut owner = "alice".to_string();
            if weak {
                // Mass assignment: the client's read-only values win.
                if let Some(i) = sent.get("id").and_then(Value::as_i64) {
                    id = i;
                }
                if let Some(o) = sent.get("owner").and_then(Value::as_str) {
                    owner = o.to_string();
                }
            }
            let note = json!({
                "id": id,
                "owner": owner,
                "title": title,
                "body": sent.get("body").and_then(Value::as_str).unwrap_or(""),
            });
            store.notes.insert(id, note.clone());
            json_answer(StatusCode::CREATED, note)
        }
        ("GET", ["notes" | "safe-notes", id]) => {
            let store = if weak { &app.weak } else { &app.safe };
            match id
                .parse::<i64>()
                .ok()
                .and_then(|i| store.lock().unwrap().notes.get(&i).cloned())
            {
                Some(n) => json_answer(StatusCode::OK, n),
                None => json_answer(StatusCode::NOT_FOUND, json!({"error": "no such note"})),
            }
        }
        // The undocumented DELETE.
        ("DELETE", ["notes", id]) => {
            if let Ok(i) = id.parse::<i64>() {
                app.weak.lock().unwrap().notes.remove(&i);
            }
            StatusCode::NO_CONTENT.into_response()
        }
        // The safe board ignores the method: every one reads the page.
        ("GET", ["board"]) | (_, ["safe-board"]) => {
            let safe = segments[0] == "safe-board";
            let store = if safe { &app.safe } else { &app.weak };
            let items: String = store
                .lock()
                .unwrap()
                .notes
                .values()
                .map(|n| {
                    let title = n["title"].as_str().unwrap_or("");
                    let title = if safe {
                        escape(title)
                    } else {
                        title.to_string()
                    };
                    format!("<li>{title}</li>")
                })
                .collect();
            (
                StatusCode::OK,
                [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
                format!("<!DOCTYPE html><html><body><ul>{items}</ul></body></html>"),
            )
                .into_response()
        }
        ("POST", ["webhooks" | "safe-webhooks"]) => {
            let Ok(sent) = serde_json::from_slice::<Value>(&body) else {
                return json_answer(StatusCode::BAD_REQUEST, json!({"error": "JSON"}));
            };
            let Some(callback) = sent.get("callback_url").and_then(Value::as_str) else {
                return json_answer(StatusCode::BAD_REQUEST, json!({"error": "callback_url"}));
            };
            if segments[0] == "webhooks" {
                // SSRF: the server checks the callback by fetching it.
                ping(callback).await;
            }
            json_answer(
                StatusCode::CREATED,
                json!({"id": 1, "callback_url": callback}),
            )
        }
        // A search that matches any word: the tautology's words find
        // "release 1", as the same words without quotes do.
        ("GET", ["search"]) => {
            let words: Vec<String> = query_q(&uri)
                .unwrap_or_default()
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_lowercase)
                .collect();
            let found: Vec<Value> = app
                .safe
                .lock()
                .unwrap()
                .notes
                .values()
                .filter(|n| {
                    let title = n["title"].as_str().unwrap_or("").to_lowercase();
                    title.split(' ').any(|t| words.iter().any(|w| w == t))
                })
                .cloned()
                .collect();
            json_answer(StatusCode::OK, Value::Array(found))
        }
        // A single-page app's catch-all: every other GET is the app's
        // shell, so a GET on a path that lists none says nothing.
        ("GET", _) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            "<!DOCTYPE html><html><body><div id=\"app\"></div></body></html>",
        )
            .into_response(),
        _ => not_allowed(),
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Fetches `url` with a bare GET, when it names this machine's loopback
/// interface: the test server never sends traffic anywhere else.
async fn ping(url: &str) {
    let Ok(url) = url::Url::parse(url) else {
        return;
    };
    let loopback = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d == "localhost",
        _ => false,
    };
    let (Some(port), true) = (
        url.port_or_known_default(),
        loopback && url.scheme() == "http",
    ) else {
        return;
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        let mut s = tokio::net::TcpStream::connect((Ipv4Addr::LOCALHOST, port)).await?;
        let target = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_string(),
        };
        s.write_all(
            format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .await?;
        let mut sink = Vec::new();
        s.read_to_end(&mut sink).await?;
        Ok::<_, std::io::Error>(())
    })
    .await;
}
