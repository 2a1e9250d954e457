//! A purpose-built server whose faults can be switched off: the REST API of
//! [`SPEC_PATH`] and the GraphQL endpoint of [`SCHEMA_PATH`] (at `/graphql`).
//! Started with its faults on, each operation shows one fault; started with
//! them off, the same requests show none. A reproducer written against the
//! faulty server must say "did not show" against the other
//! (`tests/reproducers_truth.rs`).
//!
//! REST (see the description's header for each operation's fault):
//! `/flow_runs/` answers 500 (307 without its slash); `/stats` gives a
//! float where an integer is documented; `/entries` and `/items` accept
//! inputs the description forbids (an entry is stored as sent and served
//! back by `GET /entries`: the wrong value is the accepted input's fault,
//! not a schema violation of the answers).
//!
//! GraphQL: `book(id:)` answers a book whose non-null `author` is null
//! (faults off: no book at all, `book: null`, which the schema allows);
//! `count(n:)` fails with a 500 (faults off: it answers `n`). A query that
//! uses a variable the request does not define fails with a 500 either way,
//! as some servers do: a reproducer that lost its `variables` would show a
//! 500 of its own making.

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use apollo_compiler::ast as q;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// The REST description, relative to the crate root.
pub const SPEC_PATH: &str = "fixtures/servers/truthful.yaml";

/// The GraphQL schema, relative to the crate root.
pub const SCHEMA_PATH: &str = "fixtures/servers/truthful.graphql";

/// The running server; dropping it stops it.
pub struct Truthful {
    /// Base URL, `http://127.0.0.1:PORT` (no trailing slash).
    pub base_url: String,
    task: JoinHandle<()>,
}

struct App {
    faulty: bool,
    next_id: AtomicI64,
    /// The entries made, as stored and served back.
    entries: std::sync::Mutex<Vec<Value>>,
}

impl Truthful {
    /// Starts a fresh server on a free loopback port, its faults on or off.
    pub async fn start(faulty: bool) -> Truthful {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("bind the truthful server on 127.0.0.1");
        let addr = listener.local_addr().expect("a bound address");
        let app = Arc::new(App {
            faulty,
            next_id: AtomicI64::new(1),
            entries: std::sync::Mutex::new(Vec::new()),
        });
        let router = Router::new().fallback(handle).with_state(app);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Truthful {
            base_url: format!("http://{addr}"),
            task,
        }
    }
}

impl Drop for Truthful {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn json_answer(status: u16, body: Value) -> Response {
    (
        StatusCode::from_u16(status).unwrap(),
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn refuse(why: &str) -> Response {
    json_answer(400, json!({ "error": why }))
}

async fn handle(State(app): State<Arc<App>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let path = parts.uri.path();
    let query = parts.uri.query().unwrap_or("");
    match (parts.method.as_str(), path) {
        ("GET", "/flow_runs/") if app.faulty => json_answer(500, json!({"error": "boom"})),
        ("GET", "/flow_runs/") => json_answer(200, json!([{"id": 1}])),
        // As Starlette does: the path without its slash is redirected.
        (_, "/flow_runs") => (
            StatusCode::TEMPORARY_REDIRECT,
            [(header::LOCATION, "/flow_runs/")],
        )
            .into_response(),
        ("GET", "/stats") if app.faulty => json_answer(200, json!({"count": 1.5})),
        ("GET", "/stats") => json_answer(200, json!({"count": 2})),
        ("POST", "/entries") => {
            let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(&body) else {
                return refuse("the body is not a JSON object");
            };
            if !app.faulty {
                if fields.get("index").is_some_and(|v| !v.is_i64()) {
                    return refuse("index must be an integer");
                }
                if fields.get("note").is_some_and(|v| !v.is_string()) {
                    return refuse("note must be a string");
                }
            }
            let id = app.next_id.fetch_add(1, Ordering::SeqCst);
            // Stored as sent, and served back: a wrong `index` accepted
            // comes back in every answer that shows the entry.
            let mut entry = Map::new();
            entry.insert("id".into(), json!(id));
            for key in ["index", "note"] {
                if let Some(v) = fields.get(key) {
                    entry.insert(key.into(), v.clone());
                }
            }
            let entry = Value::Object(entry);
            let mut entries = app.entries.lock().unwrap_or_else(|e| e.into_inner());
            entries.push(entry.clone());
            json_answer(201, entry)
        }
        ("GET", "/entries") => {
            let entries = app.entries.lock().unwrap_or_else(|e| e.into_inner());
            let latest: Vec<Value> = entries.iter().rev().take(10).cloned().collect();
            json_answer(200, Value::Array(latest))
        }
        ("GET", "/items") => {
            let limit = url::form_urlencoded::parse(query.as_bytes())
                .find(|(k, _)| k == "limit")
                .map(|(_, v)| v.into_owned());
            if let Some(limit) = limit {
                let fits = limit.parse::<i64>().is_ok_and(|n| (1..=100).contains(&n));
                if !fits && !app.faulty {
                    return refuse("limit must be an integer of 1 to 100");
                }
            }
            json_answer(200, json!(["a", "b"]))
        }
        ("POST", "/graphql") => graphql(&app, &body),
        _ => json_answer(404, json!({"error": "no such route"})),
    }
}

/// Answers a GraphQL request by walking its selection: every selected field
/// present, aliases and fragments honoured.
fn graphql(app: &App, body: &[u8]) -> Response {
    let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let text = request["query"].as_str().unwrap_or("");
    let variables = request["variables"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let Ok(doc) = q::Document::parse(text, "query.graphql") else {
        return json_answer(200, json!({"errors": [{"message": "syntax error"}]}));
    };
    let mut fragments = HashMap::new();
    let mut operation = None;
    for def in &doc.definitions {
        match def {
            q::Definition::FragmentDefinition(f) => {
                fragments.insert(f.name.to_string(), f.selection_set.clone());
            }
            q::Definition::OperationDefinition(op) if operation.is_none() => {
                operation = Some(op.clone());
            }
            _ => {}
        }
    }
    let selection = match operation {
        Some(op) if op.operation_type == q::OperationType::Query => op.selection_set.clone(),
        _ => return json_answer(200, json!({"errors": [{"message": "queries only"}]})),
    };
    let cx = Cx {
        app,
        variables: &variables,
        fragments: &fragments,
    };
    match cx.object("Query", &Value::Null, &selection) {
        Ok(data) => json_answer(200, json!({ "data": data })),
        Err(Crash(message)) => json_answer(500, json!({"errors": [{ "message": message }]})),
    }
}

/// A failure of the whole request: answered 500.
struct Crash(String);

struct Cx<'a> {
    app: &'a App,
    variables: &'a Map<String, Value>,
    fragments: &'a HashMap<String, Vec<q::Selection>>,
}

impl Cx<'_> {
    fn argument(&self, field: &q::Field, name: &str) -> Result<Value, Crash> {
        let Some(arg) = field.arguments.iter().find(|a| a.name == name) else {
            return Err(Crash(format!("argument {name} is missing")));
        };
        Ok(match &*arg.value {
            q::Value::Variable(var) => self
                .variables
                .get(var.as_str())
                .cloned()
                .ok_or_else(|| Crash(format!("variable ${var} is not defined")))?,
            q::Value::Int(n) => json!(n.as_str().parse::<i64>().ok()),
            q::Value::String(s) => json!(s.as_str()),
            _ => Value::Null,
        })
    }

    fn included(&self, directives: &q::DirectiveList) -> bool {
        directives.iter().all(|d| {
            let condition = d
                .arguments
                .iter()
                .find(|a| a.name == "if")
                .map(|a| match &*a.value {
                    q::Value::Boolean(b) => *b,
                    q::Value::Variable(var) => self
                        .variables
                        .get(var.as_str())
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                    _ => false,
                });
            match d.name.as_str() {
                "skip" => !condition.unwrap_or(false),
                "include" => condition.unwrap_or(true),
                _ => true,
            }
        })
    }

    /// The fields of `selection` on an object of type `ty`.
    fn object(&self, ty: &str, parent: &Value, selection: &[q::Selection]) -> Result<Value, Crash> {
        let mut out = Map::new();
        self.fields(ty, parent, selection, &mut out)?;
        Ok(Value::Object(out))
    }

    fn fields(
        &self,
        ty: &str,
        parent: &Value,
        selection: &[q::Selection],
        out: &mut Map<String, Value>,
    ) -> Result<(), Crash> {
        for item in selection {
            match item {
                q::Selection::Field(f) => {
                    if !self.included(&f.directives) {
                        continue;
                    }
                    let key = f.alias.as_ref().unwrap_or(&f.name).to_string();
                    let value = self.field(ty, parent, f)?;
                    out.insert(key, value);
                }
                q::Selection::InlineFragment(frag) => {
                    if self.included(&frag.directives) {
                        self.fields(ty, parent, &frag.selection_set, out)?;
                    }
                }
                q::Selection::FragmentSpread(spread) => {
                    if let Some(set) = self.fragments.get(spread.fragment_name.as_str()) {
                        self.fields(ty, parent, set, out)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn field(&self, ty: &str, parent: &Value, f: &q::Field) -> Result<Value, Crash> {
        if f.name == "__typename" {
            return Ok(json!(ty));
        }
        match (ty, f.name.as_str()) {
            ("Query", "book") => {
                let id = self.argument(f, "id")?;
                if !self.app.faulty {
                    return Ok(Value::Null);
                }
                let book = json!({"id": id, "title": "Dune"});
                self.object("Book", &book, &f.selection_set)
            }
            ("Query", "count") => {
                let n = self.argument(f, "n")?;
                if self.app.faulty {
                    return Err(Crash("internal error".into()));
                }
                Ok(n)
            }
            ("Book", "author") => Ok(Value::Null),
            ("Book" | "Author", name) => Ok(parent.get(name).cloned().unwrap_or(Value::Null)),
            _ => Ok(Value::Null),
        }
    }
}
