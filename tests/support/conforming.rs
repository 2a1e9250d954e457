//! A purpose-built CONFORMING HTTP server: a small project tracker that
//! answers exactly as its description ([`CONFORMING_SPEC_PATH`]) says, for
//! every request, malformed ones included. A Cartograph run against it should
//! report no fault, so any fault it reports measures a false positive of an
//! oracle.
//!
//! What "exactly" takes:
//!
//! - **Every answer is documented.** axum's `Json`, `Query` and `Path`
//!   extractors reject bad input with their own 400/413/415/422 and
//!   `text/plain` bodies, and its router answers unmatched paths with an empty
//!   404. So nothing of that is used: one fallback handler takes the raw
//!   method, URI and body bytes (without a size limit), routes by hand, and
//!   validates every input itself, answering the documented 400, 404, 409 or
//!   422 with the documented `{"message": …}` body.
//! - **Every body matches its schema**, with `Content-Type: application/json`;
//!   the write-only `webhookSecret` is stored but never sent back; the
//!   nullable `description` and `dueDate` are `null` until set; 204 answers
//!   have neither a body nor a content type.
//! - **REST semantics hold**: a creation answers 201 with the new item and a
//!   `Location` that resolves; PUT replaces the whole item (fields left out
//!   take their defaults), so repeating it answers the same; DELETE answers
//!   204 and then 404, and deleting a project deletes its tasks.
//!
//! Validation order, for every operation: path ids (400), the resources they
//! name (404), the body's syntax, types and bounds (400), business rules
//! (422), then the store's state (409).

use std::collections::{BTreeMap, HashMap};
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use percent_encoding::percent_decode_str;
use serde_json::{Map, Number, Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// Path of the OpenAPI 3.0 description the server implements, from the
/// crate's root, for the command line.
pub const CONFORMING_SPEC_PATH: &str = "fixtures/servers/conforming.yaml";

/// The running server; dropping it stops it.
pub struct Conforming {
    /// Base URL, e.g. "http://127.0.0.1:41234" (no trailing slash).
    pub base_url: String,
    app: Arc<App>,
    task: JoinHandle<()>,
}

impl Conforming {
    /// Starts the server, with an empty store, on a free port of 127.0.0.1.
    ///
    /// Panics when the port cannot be bound: a test cannot run without it.
    pub async fn start() -> Conforming {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("bind the conforming server on 127.0.0.1");
        let addr = listener.local_addr().expect("conforming local address");
        let app = Arc::new(App::default());
        let router = Router::new().fallback(handle).with_state(Arc::clone(&app));
        let task = tokio::spawn(async move {
            // Serving only ends with an I/O error on the listener, which the
            // test would notice as failed requests anyway.
            let _ = axum::serve(listener, router).await;
        });
        Conforming {
            base_url: format!("http://{addr}"),
            app,
            task,
        }
    }

    /// How many requests the server has answered.
    pub fn requests(&self) -> u64 {
        self.app.requests.load(Ordering::Relaxed)
    }

    /// How many projects and tasks exist now.
    pub fn sizes(&self) -> (usize, usize) {
        let store = lock(&self.app.store);
        let tasks = store.projects.values().map(|e| e.tasks.len()).sum();
        (store.projects.len(), tasks)
    }
}

impl Drop for Conforming {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[derive(Default)]
struct App {
    requests: AtomicU64,
    store: Mutex<Store>,
}

/// Locks `mutex` even if a panicking thread poisoned it: every handler
/// leaves the store consistent before it can panic, and one failed test
/// should not cascade.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[derive(Default)]
struct Store {
    /// Ids are never reused, so an id deleted stays 404 for good.
    last_project: i64,
    last_task: i64,
    projects: BTreeMap<i64, Entry>,
}

/// A project with its tasks: deleting the entry deletes them too.
struct Entry {
    project: Project,
    tasks: BTreeMap<i64, Task>,
}

const PROJECT_STATUSES: [&str; 3] = ["draft", "active", "archived"];

#[derive(Clone)]
struct Project {
    id: i64,
    name: String,
    description: Option<String>,
    status: &'static str,
    /// Kept as the client's JSON number, so it comes back as it was sent.
    budget: Option<Number>,
    tags: Vec<String>,
    /// Write-only: validated and kept, never sent back.
    #[allow(dead_code)]
    webhook_secret: String,
    created_at: String,
}

#[derive(Clone)]
struct Task {
    id: i64,
    project_id: i64,
    title: String,
    done: bool,
    priority: i64,
    estimate_hours: Option<Number>,
    due_date: Option<String>,
    assignee: Option<Assignee>,
}

/// An e-mail address, and the user's id when the client gave it: then the
/// assignee matches both `UserAssignee` and `EmailAssignee`.
#[derive(Clone)]
struct Assignee {
    user_id: Option<i64>,
    email: String,
}

/// A documented error answer: its status and `{"message": …}`.
struct Fail(StatusCode, String);

impl IntoResponse for Fail {
    fn into_response(self) -> Response {
        (self.0, Json(json!({ "message": self.1 }))).into_response()
    }
}

fn bad(message: impl Into<String>) -> Fail {
    Fail(StatusCode::BAD_REQUEST, message.into())
}

fn not_found(message: impl Into<String>) -> Fail {
    Fail(StatusCode::NOT_FOUND, message.into())
}

fn conflict(message: impl Into<String>) -> Fail {
    Fail(StatusCode::CONFLICT, message.into())
}

type Answer = Result<Response, Fail>;

fn ok(value: Value) -> Answer {
    Ok((StatusCode::OK, Json(value)).into_response())
}

fn created(location: String, value: Value) -> Answer {
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(value),
    )
        .into_response())
}

fn no_content() -> Answer {
    // No body, and therefore no Content-Type.
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// The only handler: routes by hand so that no request meets one of axum's
/// own rejections.
async fn handle(State(app): State<Arc<App>>, request: Request) -> Response {
    app.requests.fetch_add(1, Ordering::Relaxed);
    let (parts, body) = request.into_parts();
    // No size limit: whatever the client sends is read and judged.
    let body = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(bytes) => bytes,
        Err(_) => return bad("the request body could not be read").into_response(),
    };
    let segments: Vec<String> = parts
        .uri
        .path()
        .trim_start_matches('/')
        .split('/')
        .map(|s| percent_decode_str(s).decode_utf8_lossy().into_owned())
        .collect();
    let query = parts.uri.query().unwrap_or("");
    let mut store = lock(&app.store);
    match route(&mut store, &parts.method, &segments, query, &body) {
        Ok(response) => response,
        Err(fail) => fail.into_response(),
    }
}

fn route(
    store: &mut Store,
    method: &Method,
    segments: &[String],
    query: &str,
    body: &Bytes,
) -> Answer {
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    match (segments.as_slice(), method.as_str()) {
        (["projects"], "GET") => list_projects(store, query),
        (["projects"], "POST") => create_project(store, body),
        (["projects"], _) => not_allowed("GET, POST"),
        (["projects", project], "GET" | "PUT" | "PATCH" | "DELETE") => {
            let project = path_id(project, "projectId")?;
            match method.as_str() {
                "GET" => get_project(store, project),
                "PUT" => replace_project(store, project, body),
                "PATCH" => update_project(store, project, body),
                _ => delete_project(store, project),
            }
        }
        (["projects", _], _) => not_allowed("GET, PUT, PATCH, DELETE"),
        (["projects", project, "tasks"], "GET" | "POST") => {
            let project = path_id(project, "projectId")?;
            if method == Method::GET {
                list_tasks(store, project, query)
            } else {
                create_task(store, project, body)
            }
        }
        (["projects", _, "tasks"], _) => not_allowed("GET, POST"),
        (["projects", project, "tasks", task], "GET" | "PUT" | "PATCH" | "DELETE") => {
            let project = path_id(project, "projectId")?;
            let task = path_id(task, "taskId")?;
            match method.as_str() {
                "GET" => get_task(store, project, task),
                "PUT" => replace_task(store, project, task, body),
                "PATCH" => update_task(store, project, task, body),
                _ => delete_task(store, project, task),
            }
        }
        (["projects", _, "tasks", _], _) => not_allowed("GET, PUT, PATCH, DELETE"),
        // Not a path of the description: Cartograph never calls one.
        _ => Err(not_found("no such route")),
    }
}

/// Only for methods the description does not list on a path it does.
fn not_allowed(allow: &'static str) -> Answer {
    let mut response =
        Fail(StatusCode::METHOD_NOT_ALLOWED, "method not allowed".into()).into_response();
    response
        .headers_mut()
        .insert(header::ALLOW, header::HeaderValue::from_static(allow));
    Ok(response)
}

// ----- projects -----

fn list_projects(store: &Store, query: &str) -> Answer {
    let params = query_params(query, &["limit", "offset", "status"])?;
    let limit = int_param(&params, "limit", 1, Some(50))?.unwrap_or(20);
    let offset = int_param(&params, "offset", 0, None)?.unwrap_or(0);
    let status = match params.get("status") {
        Some(s) => Some(
            project_status(s)
                .ok_or_else(|| bad("status must be one of draft, active, archived"))?,
        ),
        None => None,
    };
    let matching: Vec<&Entry> = store
        .projects
        .values()
        .filter(|e| status.is_none_or(|s| e.project.status == s))
        .collect();
    let items: Vec<Value> = matching
        .iter()
        .skip(usize::try_from(offset).unwrap_or(usize::MAX))
        .take(limit as usize)
        .map(|e| project_json(e))
        .collect();
    ok(json!({
        "items": items,
        "total": matching.len(),
        "limit": limit,
        "offset": offset,
    }))
}

fn create_project(store: &mut Store, body: &Bytes) -> Answer {
    let fields = ProjectFields::parse(&object(body)?, false)?;
    let mut project = fields.into_new(0, now_rfc3339())?;
    name_free(store, &project.name, None)?;
    store.last_project += 1;
    project.id = store.last_project;
    let location = format!("/projects/{}", project.id);
    let entry = Entry {
        project,
        tasks: BTreeMap::new(),
    };
    let value = project_json(&entry);
    store.projects.insert(entry.project.id, entry);
    created(location, value)
}

fn get_project(store: &Store, id: i64) -> Answer {
    ok(project_json(entry(store, id)?))
}

fn replace_project(store: &mut Store, id: i64, body: &Bytes) -> Answer {
    let created_at = entry(store, id)?.project.created_at.clone();
    let fields = ProjectFields::parse(&object(body)?, false)?;
    let project = fields.into_new(id, created_at)?;
    name_free(store, &project.name, Some(id))?;
    let entry = entry_mut(store, id)?;
    entry.project = project;
    ok(project_json(entry))
}

fn update_project(store: &mut Store, id: i64, body: &Bytes) -> Answer {
    entry(store, id)?;
    let fields = ProjectFields::parse(&object(body)?, true)?;
    if let Some(name) = &fields.name {
        name_free(store, name, Some(id))?;
    }
    let entry = entry_mut(store, id)?;
    fields.apply(&mut entry.project);
    ok(project_json(entry))
}

fn delete_project(store: &mut Store, id: i64) -> Answer {
    entry(store, id)?;
    store.projects.remove(&id);
    no_content()
}

/// 409 when another project than `except` is named `name`.
fn name_free(store: &Store, name: &str, except: Option<i64>) -> Result<(), Fail> {
    let taken = store
        .projects
        .values()
        .any(|e| e.project.name == name && Some(e.project.id) != except);
    if taken {
        Err(conflict("another project has that name"))
    } else {
        Ok(())
    }
}

fn entry(store: &Store, id: i64) -> Result<&Entry, Fail> {
    store
        .projects
        .get(&id)
        .ok_or_else(|| not_found(format!("no project {id}")))
}

fn entry_mut(store: &mut Store, id: i64) -> Result<&mut Entry, Fail> {
    store
        .projects
        .get_mut(&id)
        .ok_or_else(|| not_found(format!("no project {id}")))
}

fn project_status(s: &str) -> Option<&'static str> {
    PROJECT_STATUSES.iter().copied().find(|v| *v == s)
}

fn project_json(entry: &Entry) -> Value {
    let p = &entry.project;
    let mut out = json!({
        "id": p.id,
        "name": p.name,
        "description": p.description,
        "status": p.status,
        "tags": p.tags,
        "createdAt": p.created_at,
        "taskCount": entry.tasks.len(),
    });
    if let Some(budget) = &p.budget {
        out["budget"] = Value::Number(budget.clone());
    }
    out
}

/// The writable fields of `Project` (all of them for POST and PUT) or
/// `ProjectPatch` (those given), validated.
#[derive(Default)]
struct ProjectFields {
    name: Option<String>,
    /// `Some(None)`: given as null.
    description: Option<Option<String>>,
    status: Option<&'static str>,
    budget: Option<Number>,
    tags: Option<Vec<String>>,
    webhook_secret: Option<String>,
}

impl ProjectFields {
    /// Read-only (`id`, `createdAt`, `taskCount`) and unknown fields are
    /// ignored, as OpenAPI says of read-only ones in requests.
    fn parse(body: &Map<String, Value>, patch: bool) -> Result<ProjectFields, Fail> {
        let mut out = ProjectFields::default();
        if let Some(v) = body.get("name") {
            out.name = Some(string(v, "name", 1, 64)?);
        }
        if let Some(v) = body.get("description") {
            out.description = Some(match v {
                Value::Null => None,
                v => Some(string(v, "description", 0, 500)?),
            });
        }
        if let Some(v) = body.get("status") {
            let s = v.as_str().and_then(project_status);
            out.status =
                Some(s.ok_or_else(|| bad("status must be one of draft, active, archived"))?);
        }
        if let Some(v) = body.get("budget") {
            out.budget = Some(number(v, "budget", 0.0, false, 1_000_000.0)?);
        }
        if let Some(v) = body.get("tags") {
            out.tags = Some(tags(v)?);
        }
        if let Some(v) = body.get("webhookSecret") {
            out.webhook_secret = Some(string(v, "webhookSecret", 8, 64)?);
        }
        if !patch {
            if out.name.is_none() {
                return Err(bad("name is required"));
            }
            if out.webhook_secret.is_none() {
                return Err(bad("webhookSecret is required"));
            }
        }
        Ok(out)
    }

    /// A whole project from POST or PUT fields: what is left out takes its default.
    fn into_new(self, id: i64, created_at: String) -> Result<Project, Fail> {
        Ok(Project {
            id,
            name: self.name.ok_or_else(|| bad("name is required"))?,
            description: self.description.flatten(),
            status: self.status.unwrap_or("draft"),
            budget: self.budget,
            tags: self.tags.unwrap_or_default(),
            webhook_secret: self
                .webhook_secret
                .ok_or_else(|| bad("webhookSecret is required"))?,
            created_at,
        })
    }

    fn apply(self, project: &mut Project) {
        if let Some(name) = self.name {
            project.name = name;
        }
        if let Some(description) = self.description {
            project.description = description;
        }
        if let Some(status) = self.status {
            project.status = status;
        }
        if let Some(budget) = self.budget {
            project.budget = Some(budget);
        }
        if let Some(tags) = self.tags {
            project.tags = tags;
        }
        if let Some(secret) = self.webhook_secret {
            project.webhook_secret = secret;
        }
    }
}

fn tags(v: &Value) -> Result<Vec<String>, Fail> {
    let items = v.as_array().ok_or_else(|| bad("tags must be an array"))?;
    if items.len() > 5 {
        return Err(bad("tags holds at most 5 items"));
    }
    let mut out: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        let tag = string(item, "each tag", 1, 20)?;
        if out.contains(&tag) {
            return Err(bad("tags must be unique"));
        }
        out.push(tag);
    }
    Ok(out)
}

// ----- tasks -----

fn list_tasks(store: &Store, project: i64, query: &str) -> Answer {
    let entry = entry(store, project)?;
    let params = query_params(query, &["done", "priority"])?;
    let done = match params.get("done").map(String::as_str) {
        None => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(_) => return Err(bad("done must be true or false")),
    };
    let priority = int_param(&params, "priority", 1, Some(5))?;
    let items: Vec<Value> = entry
        .tasks
        .values()
        .filter(|t| done.is_none_or(|d| t.done == d))
        .filter(|t| priority.is_none_or(|p| t.priority == p))
        .map(task_json)
        .collect();
    ok(Value::Array(items))
}

fn create_task(store: &mut Store, project: i64, body: &Bytes) -> Answer {
    entry(store, project)?;
    let fields = TaskFields::parse(&object(body)?, false)?;
    let mut task = fields.into_new(0, project)?;
    rules(&task)?;
    writable(entry(store, project)?)?;
    store.last_task += 1;
    let id = store.last_task;
    task.id = id;
    let value = task_json(&task);
    entry_mut(store, project)?.tasks.insert(id, task);
    created(format!("/projects/{project}/tasks/{id}"), value)
}

fn get_task(store: &Store, project: i64, task: i64) -> Answer {
    ok(task_json(find_task(entry(store, project)?, task)?))
}

fn replace_task(store: &mut Store, project: i64, task: i64, body: &Bytes) -> Answer {
    find_task(entry(store, project)?, task)?;
    let replaced = TaskFields::parse(&object(body)?, false)?.into_new(task, project)?;
    rules(&replaced)?;
    writable(entry(store, project)?)?;
    let value = task_json(&replaced);
    entry_mut(store, project)?.tasks.insert(task, replaced);
    ok(value)
}

fn update_task(store: &mut Store, project: i64, task: i64, body: &Bytes) -> Answer {
    let mut updated = find_task(entry(store, project)?, task)?.clone();
    TaskFields::parse(&object(body)?, true)?.apply(&mut updated);
    rules(&updated)?;
    writable(entry(store, project)?)?;
    let value = task_json(&updated);
    entry_mut(store, project)?.tasks.insert(task, updated);
    ok(value)
}

fn delete_task(store: &mut Store, project: i64, task: i64) -> Answer {
    find_task(entry(store, project)?, task)?;
    writable(entry(store, project)?)?;
    entry_mut(store, project)?.tasks.remove(&task);
    no_content()
}

fn find_task(entry: &Entry, task: i64) -> Result<&Task, Fail> {
    entry
        .tasks
        .get(&task)
        .ok_or_else(|| not_found(format!("no task {task} in project {}", entry.project.id)))
}

/// 422 when a task, as it would be stored, breaks a business rule: a due
/// date that is no calendar day (2024-02-30), or an urgent task (priority 5)
/// without a due date.
fn rules(task: &Task) -> Result<(), Fail> {
    let unprocessable = |message: &str| Err(Fail(StatusCode::UNPROCESSABLE_ENTITY, message.into()));
    match &task.due_date {
        Some(date) if !calendar_day(date) => unprocessable("dueDate is not a day of the calendar"),
        None if task.priority == 5 => unprocessable("an urgent task (priority 5) needs a dueDate"),
        _ => Ok(()),
    }
}

/// 409 when the project is archived: its tasks are frozen.
fn writable(entry: &Entry) -> Result<(), Fail> {
    if entry.project.status == "archived" {
        Err(conflict("the project is archived; its tasks cannot change"))
    } else {
        Ok(())
    }
}

fn task_json(t: &Task) -> Value {
    let mut out = json!({
        "id": t.id,
        "projectId": t.project_id,
        "title": t.title,
        "done": t.done,
        "priority": t.priority,
        "dueDate": t.due_date,
    });
    if let Some(hours) = &t.estimate_hours {
        out["estimateHours"] = Value::Number(hours.clone());
    }
    if let Some(a) = &t.assignee {
        let mut assignee = Map::new();
        if let Some(user) = a.user_id {
            assignee.insert("userId".into(), json!(user));
        }
        assignee.insert("email".into(), json!(a.email));
        out["assignee"] = Value::Object(assignee);
    }
    out
}

/// The writable fields of `Task` (all of them for POST and PUT) or
/// `TaskPatch` (those given), validated but for the business rules (a 422,
/// see [`rules`]).
#[derive(Default)]
struct TaskFields {
    title: Option<String>,
    done: Option<bool>,
    priority: Option<i64>,
    estimate_hours: Option<Number>,
    /// `Some(None)`: given as null.
    due_date: Option<Option<String>>,
    assignee: Option<Assignee>,
}

impl TaskFields {
    /// Read-only (`id`, `projectId`) and unknown fields are ignored.
    fn parse(body: &Map<String, Value>, patch: bool) -> Result<TaskFields, Fail> {
        let mut out = TaskFields::default();
        if let Some(v) = body.get("title") {
            out.title = Some(string(v, "title", 1, 120)?);
        }
        if let Some(v) = body.get("done") {
            out.done = Some(v.as_bool().ok_or_else(|| bad("done must be a boolean"))?);
        }
        if let Some(v) = body.get("priority") {
            out.priority = Some(integer(v, "priority", 1, 5)?);
        }
        if let Some(v) = body.get("estimateHours") {
            out.estimate_hours = Some(number(v, "estimateHours", 0.0, true, 1000.0)?);
        }
        if let Some(v) = body.get("dueDate") {
            out.due_date = Some(match v {
                Value::Null => None,
                v => {
                    let date = v
                        .as_str()
                        .filter(|s| date_shaped(s))
                        .ok_or_else(|| bad("dueDate must be a date, YYYY-MM-DD"))?;
                    Some(date.to_string())
                }
            });
        }
        if let Some(v) = body.get("assignee") {
            out.assignee = Some(assignee(v)?);
        }
        if !patch && out.title.is_none() {
            return Err(bad("title is required"));
        }
        Ok(out)
    }

    /// A whole task from POST or PUT fields: what is left out takes its default.
    fn into_new(self, id: i64, project_id: i64) -> Result<Task, Fail> {
        Ok(Task {
            id,
            project_id,
            title: self.title.ok_or_else(|| bad("title is required"))?,
            done: self.done.unwrap_or(false),
            priority: self.priority.unwrap_or(3),
            estimate_hours: self.estimate_hours,
            due_date: self.due_date.flatten(),
            assignee: self.assignee,
        })
    }

    fn apply(self, task: &mut Task) {
        if let Some(title) = self.title {
            task.title = title;
        }
        if let Some(done) = self.done {
            task.done = done;
        }
        if let Some(priority) = self.priority {
            task.priority = priority;
        }
        if let Some(hours) = self.estimate_hours {
            task.estimate_hours = Some(hours);
        }
        if let Some(due) = self.due_date {
            task.due_date = due;
        }
        if let Some(assignee) = self.assignee {
            task.assignee = Some(assignee);
        }
    }
}

/// `UserAssignee` or `EmailAssignee`; other properties are dropped. A user
/// given by id comes back with the e-mail address the (pretend) directory
/// knows for it, so the stored assignee matches BOTH members of the oneOf:
/// the members overlap (neither forbids the other's property), as in many
/// real descriptions, and the schema oracle reads oneOf as anyOf.
fn assignee(v: &Value) -> Result<Assignee, Fail> {
    let o = v
        .as_object()
        .ok_or_else(|| bad("assignee must be an object"))?;
    let user_id = match o.get("userId") {
        Some(v) => Some(integer(v, "assignee.userId", 1, i64::MAX)?),
        None => None,
    };
    let email = match o.get("email") {
        Some(v) => {
            let email = string(v, "assignee.email", 0, 254)?;
            if !email_shaped(&email) {
                return Err(bad("assignee.email must be an e-mail address"));
            }
            Some(email)
        }
        None => None,
    };
    let email = match (user_id, email) {
        (None, None) => return Err(bad("assignee needs a userId or an email")),
        (Some(user), None) => format!("user{user}@example.com"),
        (_, Some(email)) => email,
    };
    Ok(Assignee { user_id, email })
}

// ----- inputs -----

/// The body as a JSON object, or 400.
fn object(body: &Bytes) -> Result<Map<String, Value>, Fail> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(bad("a JSON object body is required"));
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(fields)) => Ok(fields),
        Ok(_) => Err(bad("the body must be a JSON object")),
        Err(_) => Err(bad("the body is not valid JSON")),
    }
}

/// A string of `min..=max` characters (JSON Schema counts code points).
fn string(v: &Value, name: &str, min: usize, max: usize) -> Result<String, Fail> {
    let s = v
        .as_str()
        .ok_or_else(|| bad(format!("{name} must be a string")))?;
    let n = s.chars().count();
    if n < min || n > max {
        return Err(bad(format!("{name} must have {min} to {max} characters")));
    }
    Ok(s.to_string())
}

/// An integer in `min..=max`; like JSON Schema, `3.0` is the integer 3.
fn integer(v: &Value, name: &str, min: i64, max: i64) -> Result<i64, Fail> {
    let n = match v {
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                .map(|f| f as i64)
        }),
        _ => None,
    };
    let n = n.ok_or_else(|| bad(format!("{name} must be an integer")))?;
    if n < min || n > max {
        return Err(bad(format!("{name} must be between {min} and {max}")));
    }
    Ok(n)
}

/// A number in `min..=max` (above `min` when `exclusive_min`), kept as sent.
fn number(v: &Value, name: &str, min: f64, exclusive_min: bool, max: f64) -> Result<Number, Fail> {
    let Value::Number(n) = v else {
        return Err(bad(format!("{name} must be a number")));
    };
    // Every JSON number serde_json accepts converts to a finite f64.
    let x = n.as_f64().unwrap_or(f64::NAN);
    let above_min = if exclusive_min { x > min } else { x >= min };
    if !(above_min && x <= max) {
        return Err(bad(format!("{name} is out of range")));
    }
    Ok(n.clone())
}

/// `YYYY-MM-DD` in ASCII digits (format `date`'s shape).
fn date_shaped(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

/// Whether a `date_shaped` string names a real day (leap years included).
fn calendar_day(s: &str) -> bool {
    let year: u32 = s[0..4].parse().unwrap_or(0);
    let month: u32 = s[5..7].parse().unwrap_or(0);
    let day: u32 = s[8..10].parse().unwrap_or(0);
    let leap = year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// A plausible e-mail address: one `@` with something on both sides, no spaces.
fn email_shaped(s: &str) -> bool {
    let mut parts = s.split('@');
    matches!(
        (parts.next(), parts.next(), parts.next()),
        (Some(local), Some(domain), None) if !local.is_empty() && !domain.is_empty()
    ) && !s.chars().any(char::is_whitespace)
}

/// A path id: an integer of at least 1, else 400; digits too many for any
/// id name nothing, so 404.
fn path_id(raw: &str, name: &str) -> Result<i64, Fail> {
    if raw.is_empty() || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad(format!("{name} must be a positive integer")));
    }
    match raw.parse::<i64>() {
        Ok(0) => Err(bad(format!("{name} must be at least 1"))),
        Ok(id) => Ok(id),
        Err(_) => Err(not_found(format!("no resource has {name} {raw}"))),
    }
}

/// The query's parameters among `known` (others are ignored); one given
/// twice is a 400, since none of them is an array.
fn query_params(query: &str, known: &[&str]) -> Result<HashMap<String, String>, Fail> {
    let mut out = HashMap::new();
    for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
        if !known.contains(&name.as_ref()) {
            continue;
        }
        if out.insert(name.to_string(), value.into_owned()).is_some() {
            return Err(bad(format!("{name} is given more than once")));
        }
    }
    Ok(out)
}

/// An integer query parameter in `min..=max`, or 400.
fn int_param(
    params: &HashMap<String, String>,
    name: &str,
    min: i64,
    max: Option<i64>,
) -> Result<Option<i64>, Fail> {
    let Some(raw) = params.get(name) else {
        return Ok(None);
    };
    let n: i64 = raw
        .parse()
        .map_err(|_| bad(format!("{name} must be an integer")))?;
    if n < min || max.is_some_and(|m| n > m) {
        return Err(bad(format!("{name} is out of range")));
    }
    Ok(Some(n))
}

/// Now as an RFC 3339 date-time in UTC, e.g. "2025-01-31T08:49:37Z".
fn now_rfc3339() -> String {
    // The clock is never before 1970 here; clamping keeps the function total.
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, of_day) = (secs / 86_400, secs % 86_400);
    // Howard Hinnant's civil_from_days (no date crate is a dependency).
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60
    )
}
