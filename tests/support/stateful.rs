//! A purpose-built server whose faults show only after requests changed its
//! state, with `POST /__reset` to put it back in its start state (empty,
//! ids from 1): the REST API of [`SPEC_PATH`] (its header says each fault).
//! A run with `--reset-command` must write, for each fault, a reproducer
//! that shows it after a reset (`tests/reset_proof.rs`).
//!
//! - `POST /notes` with `pinned: true` stores the note and answers 500;
//!   `GET /notes` then answers 500 while it is stored.
//! - A closed project's `closedAt` is a number, not a date-time string.
//! - `POST /projects/{id}/tasks` answers `Location: /projects/{id}/task/{t}`,
//!   which leads nowhere.
//! - `DELETE /projects/{id}` answers 204, yet `GET` still finds it.
//! - `GET /projects` answers 500 while a closed project has no task.
//! - `PUT /parse/{file_token}` answers 409, undocumented, for a file parsed
//!   before; the token `GET /files` gives is signed with a key each start
//!   (and reset) draws anew, as Airflow's are, so a script that sends a
//!   token it did not fetch cannot show the fault on a fresh server.
//!
//! Every input is checked as described (400 otherwise), so that the only
//! faults are these.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// The REST description, relative to the crate root.
pub const SPEC_PATH: &str = "fixtures/servers/stateful.yaml";

/// The description of its signed files alone (`GET /files`, `PUT
/// /parse/{file_token}`), relative to the crate root.
pub const SIGNED_SPEC_PATH: &str = "fixtures/servers/signed-files.yaml";

/// The running server; dropping it stops it.
pub struct Stateful {
    /// Base URL, `http://127.0.0.1:PORT` (no trailing slash).
    pub base_url: String,
    app: Arc<App>,
    task: JoinHandle<()>,
}

#[derive(Default)]
struct Data {
    next_id: i64,
    notes: BTreeMap<i64, (String, bool)>,
    /// Per project: name, closed, deleted.
    projects: BTreeMap<i64, (String, bool, bool)>,
    /// Per task: its project and title.
    tasks: BTreeMap<i64, (i64, String)>,
    /// What signs this start's file tokens.
    key: u64,
    /// The tokens parsed.
    parsed: std::collections::BTreeSet<String>,
}

/// Starts and resets so far: each draws another key.
static STARTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Data {
    fn fresh() -> Data {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let start = STARTS.fetch_add(1, Ordering::SeqCst);
        Data {
            next_id: 1,
            key: nanos ^ start.wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ..Data::default()
        }
    }

    fn id(&mut self) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// This start's token for the file `name`.
    fn token(&self, name: &str) -> String {
        format!("{name}.{:016x}", self.key)
    }

    fn project(&self, id: i64) -> Value {
        let (name, closed, _) = &self.projects[&id];
        // The fault: seconds with a fraction, where a date-time is documented.
        let closed_at = if *closed {
            json!(1_700_000_000.25)
        } else {
            Value::Null
        };
        json!({"id": id, "name": name, "closed": closed, "closedAt": closed_at})
    }
}

struct App {
    data: Mutex<Data>,
    resets: AtomicUsize,
}

impl Stateful {
    /// Starts a fresh server on a free loopback port.
    pub async fn start() -> Stateful {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("bind the stateful server on 127.0.0.1");
        let addr = listener.local_addr().expect("a bound address");
        let app = Arc::new(App {
            data: Mutex::new(Data::fresh()),
            resets: AtomicUsize::new(0),
        });
        let router = Router::new().fallback(handle).with_state(app.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Stateful {
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

impl Drop for Stateful {
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

fn refuse(why: &str) -> Response {
    answer(400, json!({ "error": why }))
}

fn missing() -> Response {
    answer(404, json!({"error": "not found"}))
}

fn created(location: String, body: Value) -> Response {
    (
        StatusCode::CREATED,
        [
            (header::CONTENT_TYPE, "application/json".to_string()),
            (header::LOCATION, location),
        ],
        body.to_string(),
    )
        .into_response()
}

/// A body that is a JSON object with only `allowed` members, each of the
/// kind described (text: 1 to 40 characters), with every `required` one.
fn object(
    body: &[u8],
    allowed: &[(&str, bool)],
    required: &[&str],
) -> Result<Map<String, Value>, &'static str> {
    let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(body) else {
        return Err("the body must be a JSON object");
    };
    for (k, v) in &fields {
        let Some((_, text)) = allowed.iter().find(|(name, _)| name == k) else {
            return Err("unknown member");
        };
        let fits = if *text {
            v.as_str()
                .is_some_and(|s| (1..=40).contains(&s.chars().count()))
        } else {
            v.is_boolean()
        };
        if !fits {
            return Err("a member is not as described");
        }
    }
    if required.iter().any(|r| !fields.contains_key(*r)) {
        return Err("a required member is missing");
    }
    Ok(fields)
}

async fn handle(State(app): State<Arc<App>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, 1 << 20)
        .await
        .unwrap_or_default();
    let path = parts.uri.path().to_string();
    let method = parts.method.as_str().to_string();
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let id = |s: &str| s.parse::<i64>().ok();
    let mut data = app.data.lock().unwrap_or_else(|e| e.into_inner());
    match (method.as_str(), segments.as_slice()) {
        ("POST", ["__reset"]) => {
            *data = Data::fresh();
            app.resets.fetch_add(1, Ordering::SeqCst);
            StatusCode::NO_CONTENT.into_response()
        }
        ("GET", ["notes"]) => {
            if data.notes.values().any(|(_, pinned)| *pinned) {
                return answer(
                    500,
                    json!({"error": "TypeError: pinned.sort is not a function"}),
                );
            }
            let notes: Vec<Value> = data
                .notes
                .iter()
                .map(|(id, (text, pinned))| json!({"id": id, "text": text, "pinned": pinned}))
                .collect();
            answer(200, Value::Array(notes))
        }
        ("POST", ["notes"]) => {
            let fields = match object(&body, &[("text", true), ("pinned", false)], &["text"]) {
                Ok(f) => f,
                Err(why) => return refuse(why),
            };
            let text = fields["text"].as_str().unwrap_or_default().to_string();
            let pinned = fields
                .get("pinned")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let id = data.id();
            // The fault: stored before the failure, and kept.
            data.notes.insert(id, (text.clone(), pinned));
            if pinned {
                return answer(500, json!({"error": "cannot index a pinned note"}));
            }
            created(
                format!("/notes/{id}"),
                json!({"id": id, "text": text, "pinned": pinned}),
            )
        }
        ("GET", ["notes", n]) => match id(n).and_then(|n| data.notes.get(&n).map(|v| (n, v))) {
            Some((n, (text, pinned))) => {
                answer(200, json!({"id": n, "text": text, "pinned": pinned}))
            }
            None => missing(),
        },
        ("GET", ["projects"]) => {
            let live: Vec<i64> = data
                .projects
                .iter()
                .filter(|(_, (_, _, deleted))| !deleted)
                .map(|(id, _)| *id)
                .collect();
            let empty_closed = live
                .iter()
                .any(|p| data.projects[p].1 && !data.tasks.values().any(|(owner, _)| owner == p));
            if empty_closed {
                return answer(
                    500,
                    json!({"error": "Cannot read properties of undefined (reading 'length')"}),
                );
            }
            answer(
                200,
                Value::Array(live.iter().map(|p| data.project(*p)).collect()),
            )
        }
        ("POST", ["projects"]) => {
            let fields = match object(&body, &[("name", true)], &["name"]) {
                Ok(f) => f,
                Err(why) => return refuse(why),
            };
            let id = data.id();
            let name = fields["name"].as_str().unwrap_or_default().to_string();
            data.projects.insert(id, (name, false, false));
            created(format!("/projects/{id}"), data.project(id))
        }
        (_, ["projects", p, ..]) if id(p).is_none_or(|p| !data.projects.contains_key(&p)) => {
            missing()
        }
        ("GET", ["projects", p]) => {
            // The fault: a deleted project is still read.
            answer(200, data.project(id(p).unwrap_or_default()))
        }
        ("PATCH", ["projects", p]) => {
            let p = id(p).unwrap_or_default();
            if data.projects[&p].2 {
                return missing();
            }
            let fields = match object(&body, &[("name", true), ("closed", false)], &[]) {
                Ok(f) => f,
                Err(why) => return refuse(why),
            };
            let project = data.projects.get_mut(&p).expect("checked above");
            if let Some(name) = fields.get("name").and_then(Value::as_str) {
                project.0 = name.to_string();
            }
            if let Some(closed) = fields.get("closed").and_then(Value::as_bool) {
                project.1 = closed;
            }
            answer(200, data.project(p))
        }
        ("DELETE", ["projects", p]) => {
            let p = id(p).unwrap_or_default();
            let project = data.projects.get_mut(&p).expect("checked above");
            if project.2 {
                return missing();
            }
            project.2 = true;
            StatusCode::NO_CONTENT.into_response()
        }
        (_, ["projects", p, ..]) if data.projects[&id(p).unwrap_or_default()].2 => missing(),
        ("GET", ["projects", p, "tasks"]) => {
            let p = id(p).unwrap_or_default();
            let tasks: Vec<Value> = data
                .tasks
                .iter()
                .filter(|(_, (owner, _))| *owner == p)
                .map(|(t, (_, title))| json!({"id": t, "projectId": p, "title": title}))
                .collect();
            answer(200, Value::Array(tasks))
        }
        ("POST", ["projects", p, "tasks"]) => {
            let p = id(p).unwrap_or_default();
            let fields = match object(&body, &[("title", true)], &["title"]) {
                Ok(f) => f,
                Err(why) => return refuse(why),
            };
            let title = fields["title"].as_str().unwrap_or_default().to_string();
            let t = data.id();
            data.tasks.insert(t, (p, title.clone()));
            // The fault: `task`, where the collection is `tasks`.
            created(
                format!("/projects/{p}/task/{t}"),
                json!({"id": t, "projectId": p, "title": title}),
            )
        }
        ("GET", ["projects", p, "tasks", t]) => {
            let p = id(p).unwrap_or_default();
            match id(t).and_then(|t| data.tasks.get(&t).map(|v| (t, v))) {
                Some((t, (owner, title))) if *owner == p => {
                    answer(200, json!({"id": t, "projectId": p, "title": title}))
                }
                _ => missing(),
            }
        }
        ("GET", ["files"]) => answer(
            200,
            json!([{"name": "report", "file_token": data.token("report")}]),
        ),
        ("PUT", ["parse", token]) => {
            if *token != data.token("report") {
                return missing();
            }
            // The fault: 409 for a file parsed before, undocumented.
            if !data.parsed.insert(token.to_string()) {
                return answer(409, json!({"error": "already parsed"}));
            }
            answer(201, json!({"queued": true}))
        }
        _ => missing(),
    }
}
