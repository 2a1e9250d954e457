//! A purpose-built server whose faults need values an earlier request made
//! through a body field, with `POST /__reset` to put it back in its start
//! state (no file, no pool): the REST API of [`SPEC_PATH`] (its header
//! says each fault). A reproducer marked standalone must show its fault
//! after a reset (`tests/fresh_truth.rs`).
//!
//! - `PATCH /files/{path} {"path": new}` moves a file to `new` (Jupyter's
//!   rename), once (a renamed file keeps its name, and the old name is
//!   retired: the run's state keeps both as they were); `GET /files/{new}?type=…` accepts any `type` for a renamed file
//!   (400 for one never renamed, 404 for none).
//! - `POST /pools {"name": …}` answers 409 to a name already taken.
//!
//! Every other input is checked as described (400 otherwise).

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// The REST description, relative to the crate root.
pub const SPEC_PATH: &str = "fixtures/servers/renames.yaml";

/// The running server; dropping it stops it.
pub struct Renames {
    /// Base URL, `http://127.0.0.1:PORT` (no trailing slash).
    pub base_url: String,
    app: Arc<App>,
    task: JoinHandle<()>,
}

#[derive(Default)]
struct Data {
    /// Per name: content, and whether it was renamed to it.
    files: BTreeMap<String, (String, bool)>,
    /// Per name: id.
    pools: BTreeMap<String, i64>,
    /// Names a file was renamed away from: retired, never made again (so
    /// the run's first creation of each name is its only one).
    retired: std::collections::BTreeSet<String>,
}

struct App {
    data: Mutex<Data>,
    resets: AtomicUsize,
}

impl Renames {
    /// Starts a fresh server on a free loopback port.
    pub async fn start() -> Renames {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("bind the renames server on 127.0.0.1");
        let addr = listener.local_addr().expect("a bound address");
        let app = Arc::new(App {
            data: Mutex::new(Data::default()),
            resets: AtomicUsize::new(0),
        });
        let router = Router::new().fallback(handle).with_state(app.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Renames {
            base_url: format!("http://{addr}"),
            app,
            task,
        }
    }

    /// Times `POST /__reset` was answered.
    pub fn resets(&self) -> usize {
        self.app.resets.load(Ordering::SeqCst)
    }
}

impl Drop for Renames {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn answer(status: u16, body: Value) -> Response {
    (
        StatusCode::from_u16(status).unwrap(),
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn located(status: u16, location: String, body: Value) -> Response {
    (
        StatusCode::from_u16(status).unwrap(),
        [
            (header::CONTENT_TYPE, "application/json".to_string()),
            (header::LOCATION, location),
        ],
        body.to_string(),
    )
        .into_response()
}

fn refuse(why: &str) -> Response {
    answer(400, json!({ "error": why }))
}

fn missing() -> Response {
    answer(404, json!({"error": "not found"}))
}

/// A name as described: 1 to 20 ASCII letters or digits.
fn name_ok(s: &str) -> bool {
    (1..=20).contains(&s.len()) && s.chars().all(|c| c.is_ascii_alphanumeric())
}

/// The JSON object body with exactly one member, `key`, a string.
fn only(body: &[u8], key: &str) -> Option<String> {
    let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(body) else {
        return None;
    };
    if fields.len() != 1 {
        return None;
    }
    fields.get(key)?.as_str().map(str::to_string)
}

fn file(name: &str, content: &str) -> Value {
    json!({"path": name, "name": name, "content": content})
}

async fn handle(State(app): State<Arc<App>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, 1 << 20)
        .await
        .unwrap_or_default();
    let path = parts.uri.path().to_string();
    let query = parts.uri.query().unwrap_or("").to_string();
    let method = parts.method.as_str().to_string();
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let mut data = app.data.lock().unwrap_or_else(|e| e.into_inner());
    match (method.as_str(), segments.as_slice()) {
        ("POST", ["__reset"]) => {
            *data = Data::default();
            app.resets.fetch_add(1, Ordering::SeqCst);
            StatusCode::NO_CONTENT.into_response()
        }
        (_, ["files", name]) if !name_ok(name) => refuse("a bad name"),
        ("GET", ["files", name]) => {
            let Some((content, renamed)) = data.files.get(*name) else {
                return missing();
            };
            let types: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
                .into_owned()
                .collect();
            if types.iter().any(|(k, _)| k != "type") {
                return refuse("unknown query parameter");
            }
            let bad = types.iter().any(|(_, v)| v != "file" && v != "directory");
            // The fault: a renamed file's type is not checked.
            if bad && !renamed {
                return refuse("type must be file or directory");
            }
            answer(200, file(name, content))
        }
        ("PUT", ["files", name]) => {
            let Some(content) = only(&body, "content").filter(|c| (1..=40).contains(&c.len()))
            else {
                return refuse("the body must be {\"content\": text}");
            };
            if data.retired.contains(*name) {
                return refuse("that name was renamed away, and is retired");
            }
            // A file keeps whether it was renamed when its content is replaced.
            let renamed = data.files.get(*name).map(|(_, r)| *r);
            data.files.insert(
                name.to_string(),
                (content.clone(), renamed.unwrap_or(false)),
            );
            if renamed.is_some() {
                answer(200, file(name, &content))
            } else {
                located(201, format!("/files/{name}"), file(name, &content))
            }
        }
        ("PATCH", ["files", name]) => {
            let Some(to) = only(&body, "path").filter(|p| name_ok(p)) else {
                return refuse("the body must be {\"path\": name}");
            };
            match data.files.get(*name) {
                None => return missing(),
                // Renamed once, for good: what a run renamed stays there.
                Some((_, true)) => return refuse("a renamed file keeps its name"),
                Some(_) => {}
            }
            if data.retired.contains(&to) {
                return refuse("that name was renamed away, and is retired");
            }
            let Some((content, _)) = data.files.remove(*name) else {
                return missing();
            };
            data.retired.insert(name.to_string());
            data.files.insert(to.clone(), (content.clone(), true));
            located(200, format!("/files/{to}"), file(&to, &content))
        }
        ("POST", ["pools"]) => {
            let Some(name) =
                only(&body, "name").filter(|n| n == "default-pool" || n == "spare-pool")
            else {
                return refuse("the body must be {\"name\": a pool name}");
            };
            if data.pools.contains_key(&name) {
                // The fault: 409 is not documented.
                return answer(409, json!({"error": "that pool exists"}));
            }
            let id = data.pools.len() as i64 + 1;
            data.pools.insert(name.clone(), id);
            answer(201, json!({"id": id, "name": name}))
        }
        ("GET", ["pools", name]) => match data.pools.get(*name) {
            Some(id) => answer(200, json!({"id": id, "name": name})),
            None => missing(),
        },
        _ => missing(),
    }
}
