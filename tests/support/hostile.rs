//! A purpose-built HOSTILE description and server: every name, path, enum
//! value, example, header and answer carries a payload that would do harm if
//! a file Cartograph writes read it as code instead of data. Each payload
//! that could run tries to create a file in a marker folder the test names,
//! so "nothing executed" is "the folder stayed empty".
//!
//! - shell: a newline followed by a command, `$(…)`, backticks, quotes of
//!   both kinds;
//! - Hurl: a newline followed by `[Options]` and `output: FILE` (Hurl then
//!   writes the answer into FILE), ```` ``` ```` that would end a raw body,
//!   `{{…}}` that Hurl reads as a template, `#` that starts a comment;
//! - HTML: `</script>`, `<!--`, `<img onerror>` and `<script>` that set
//!   `data-pwned="1"` on the page's body;
//! - terminals: escape sequences, BEL and CR;
//! - file names: `../`.
//!
//! The server echoes the credentials it gets (the `X-Api-Key` header, the
//! `Authorization` header and the user and password in it) as whole JSON
//! string values, whole header values and a whole query parameter value of a
//! `Location` (where a short one is a secret, not a word), so a test can
//! check that none of them is ever written.

use std::net::Ipv4Addr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// The payloads, each creating `MARKS/NAME` when it runs.
pub struct Payloads {
    /// A newline, a shell command, a newline.
    pub newline: String,
    /// `$(touch …)`.
    pub subst: String,
    /// `` `touch …` ``.
    pub backticks: String,
    /// Closes a single-quoted word, runs a command, opens one again.
    pub single: String,
    /// The same for a double-quoted word.
    pub double: String,
    /// Injects a Hurl `[Options]` section that writes the answer to a file.
    pub hurl: String,
    /// Ends a Hurl raw body, then injects the same section.
    pub ticks: String,
    /// Script that marks the page, in every HTML form that could run it.
    pub html: String,
    /// Terminal escape sequences, BEL and CR.
    pub terminal: String,
}

impl Payloads {
    /// The payloads for the marker folder `marks`.
    pub fn new(marks: &Path) -> Payloads {
        let m = marks.display();
        Payloads {
            newline: format!("\ntouch {m}/newline\n"),
            subst: format!("$(touch {m}/subst)"),
            backticks: format!("`touch {m}/backticks`"),
            single: format!("'; touch {m}/single; echo '"),
            double: format!("\"; touch {m}/double; echo \""),
            hurl: format!("\n[Options]\noutput: {m}/hurl-options\n"),
            // Ends the raw body, then adds an entry of its own that writes
            // its answer to a file, whose raw body the writer's own closing
            // ``` ends.
            ticks: format!(
                "x\n```\nHTTP *\n\nGET {{{{base}}}}/run/x/go\n[Options]\noutput: {m}/hurl-ticks\n```\nx"
            ),
            html: "</script><!--<script>document.body.setAttribute('data-pwned','1')</script><img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">".to_string(),
            terminal: "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}[31m\r".to_string(),
        }
    }

    /// Every payload that executes, in one string: for places that take
    /// anything.
    pub fn all(&self) -> String {
        format!(
            "{}{}{}{}{}{}{}{} {{{{base}}}} # {}",
            self.subst,
            self.backticks,
            self.single,
            self.double,
            self.newline,
            self.hurl,
            self.ticks,
            self.html,
            self.terminal
        )
    }

    /// The payloads that fit a header value (no control characters).
    pub fn header_value(&self) -> String {
        format!(
            "{} {} {} {} {{{{base}}}} # ../../x",
            self.subst, self.backticks, self.single, self.double
        )
    }
}

/// A command substitution that needs no space, brace or quote, so it
/// stays whole in a URL's path: for the description's server URL, which a
/// reproducer once put inside double quotes as its default base.
pub fn url_payload(marks: &Path) -> String {
    format!("$(touch$IFS{}/server-url)", marks.display())
}

/// The operationIds of the description, by what they do.
pub struct Names {
    /// `POST /items`: 201 and a `Location`.
    pub create: String,
    /// `GET /items/{itemId}`: 500, a reproducer.
    pub get: String,
    /// `GET /search`: a body that breaks its schema with HTML in it.
    pub search: String,
    /// `POST /notes` (text/plain): 500, a raw body in the suite.
    pub notes: String,
    /// `POST /things`: 201 with a `Location` full of payloads that leads nowhere.
    pub things: String,
    /// `GET /ctl`: excluded by the test, so stderr names it.
    pub ctl: String,
}

impl Names {
    /// The names for `p`.
    pub fn new(p: &Payloads) -> Names {
        Names {
            create: format!("createItem{}", p.newline),
            get: format!("getItem{}{}", p.subst, p.backticks),
            search: format!("search{}", p.html),
            notes: format!("../../notes{}{}", p.single, p.hurl),
            things: format!("things{}", p.double),
            ctl: format!("ctl{}", p.terminal),
        }
    }
}

/// The OpenAPI 3.0 description (JSON) of the server, payloads for `marks`;
/// `server`, when given, is its `servers` entry.
pub fn spec(marks: &Path, server: Option<&str>) -> String {
    let p = Payloads::new(marks);
    let n = Names::new(&p);
    let item = json!({
        "type": "object",
        "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
    });
    let doc = json!({
        "openapi": "3.0.3",
        "info": {"title": format!("Hostile {}", p.all()), "version": "1"},
        "paths": {
            "/items": {"post": {
                "operationId": n.create,
                "summary": p.all(),
                "requestBody": {"required": true, "content": {"application/json": {"schema": {
                    "type": "object",
                    "required": ["name"],
                    "properties": {
                        "name": {"type": "string", "enum": [p.subst, p.backticks, p.single, p.double, p.ticks, "{{base}}"]},
                        "note": {"type": "string", "enum": [p.all()]},
                    },
                }}}},
                "responses": {"201": {"description": "made", "content": {"application/json": {"schema": item}}}},
            }},
            "/items/{itemId}": {"get": {
                "operationId": n.get,
                "parameters": [
                    {"name": "itemId", "in": "path", "required": true, "schema": {"type": "integer"}},
                    {"name": format!("q{}{}", p.single, p.double), "in": "query", "required": true,
                     "schema": {"type": "string", "enum": [p.subst, p.hurl, p.html, "{{base}}#x"]}},
                    {"name": "X-Evil", "in": "header", "required": true,
                     "schema": {"type": "string", "enum": [p.header_value()]}},
                ],
                "responses": {"200": {"description": "the item", "content": {"application/json": {"schema": item}}}},
            }},
            "/search": {"get": {
                "operationId": n.search,
                "parameters": [
                    {"name": "term", "in": "query", "schema": {"type": "string", "example": p.html}},
                ],
                "responses": {"200": {"description": "found", "content": {"application/json": {"schema": {
                    "type": "object", "properties": {"count": {"type": "integer"}},
                }}}}},
            }},
            "/notes": {"post": {
                "operationId": n.notes,
                "requestBody": {"required": true, "content": {"text/plain": {"schema": {
                    "type": "string", "enum": [p.ticks, p.all()],
                }}}},
                "responses": {"201": {"description": "noted"}},
            }},
            "/things": {"post": {
                "operationId": n.things,
                "responses": {"201": {"description": "made"}},
            }},
            "/whoami": {"get": {
                "operationId": "whoami",
                "responses": {"200": {"description": "who", "content": {"application/json": {"schema": {
                    "type": "object", "properties": {"key": {"type": "integer"}, "user": {"type": "integer"}},
                }}}}},
            }},
            format!("/run/{}/go", p.subst): {"get": {
                "operationId": format!("run{}", p.hurl),
                "responses": {"200": {"description": "ran"}},
            }},
            "/ctl": {"get": {
                "operationId": n.ctl,
                "responses": {"200": {"description": "ok"}},
            }},
        },
    });
    let mut doc = doc;
    if let Some(url) = server {
        doc["servers"] = json!([{"url": url}]);
    }
    serde_json::to_string_pretty(&doc).unwrap()
}

/// The running server; dropping it stops it.
pub struct Hostile {
    /// Base URL, e.g. "http://127.0.0.1:41234".
    pub base_url: String,
    requests: Arc<AtomicU64>,
    task: JoinHandle<()>,
}

impl Hostile {
    /// Starts the server on a free port of 127.0.0.1; payloads for `marks`.
    /// It serves its own description (no `servers`) at `/openapi.json`.
    pub async fn start(marks: &Path) -> Hostile {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("bind the hostile server on 127.0.0.1");
        let addr = listener.local_addr().unwrap();
        let app = Arc::new(App {
            spec: spec(marks, None),
            payloads: Payloads::new(marks),
            requests: Arc::new(AtomicU64::new(0)),
            made: AtomicU64::new(0),
        });
        let requests = app.requests.clone();
        let router = Router::new().fallback(handle).with_state(app);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Hostile {
            base_url: format!("http://{addr}"),
            requests,
            task,
        }
    }

    /// How many requests it answered.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct App {
    /// Served at `/openapi.json`.
    spec: String,
    payloads: Payloads,
    requests: Arc<AtomicU64>,
    made: AtomicU64,
}

/// The user and password of a Basic `Authorization` header.
fn basic(headers: &HeaderMap) -> (String, String) {
    use base64::Engine;
    let value = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let Some(token) = value.strip_prefix("Basic ") else {
        return (String::new(), String::new());
    };
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(token.trim())
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .unwrap_or_default();
    let (user, password) = decoded.split_once(':').unwrap_or((&decoded, ""));
    (user.to_string(), password.to_string())
}

fn answer(
    status: StatusCode,
    headers: &[(&str, String)],
    body: Option<(&str, String)>,
) -> Response {
    let mut builder = Response::builder().status(status);
    for (name, value) in headers {
        // A value a header cannot hold is left out (the payloads with
        // control characters go into bodies).
        if let Ok(v) = HeaderValue::from_str(value) {
            builder = builder.header(*name, v);
        }
    }
    let body = match body {
        Some((media, text)) => {
            builder = builder.header("content-type", media);
            Body::from(text)
        }
        None => Body::empty(),
    };
    builder.body(body).unwrap()
}

fn json_answer(status: StatusCode, headers: &[(&str, String)], body: Value) -> Response {
    answer(
        status,
        headers,
        Some(("application/json", body.to_string())),
    )
}

async fn handle(State(app): State<Arc<App>>, request: Request) -> Response {
    app.requests.fetch_add(1, Ordering::Relaxed);
    let p = &app.payloads;
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let headers = request.headers().clone();
    let key = headers
        .get("x-api-key")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let (user, password) = basic(&headers);
    let _body: Bytes = axum::body::to_bytes(request.into_body(), 1 << 20)
        .await
        .unwrap_or_default();
    // Every answer echoes the credentials in its headers, whole.
    let echo = vec![
        ("x-echo-key", key.clone()),
        ("x-echo-auth", auth.clone()),
        ("x-echo-user", user.clone()),
        ("x-payload", p.header_value()),
    ];
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    // Under a base path of any name (the description's server may have one).
    let known = [
        "items",
        "search",
        "notes",
        "things",
        "whoami",
        "run",
        "ctl",
        "openapi.json",
    ];
    let from = segments.iter().position(|s| known.contains(s)).unwrap_or(0);
    let segments = &segments[from..];
    match (&method, segments) {
        (&Method::GET, ["openapi.json"]) => answer(
            StatusCode::OK,
            &[],
            Some(("application/json", app.spec.clone())),
        ),
        (&Method::POST, ["items"]) => {
            let id = app.made.fetch_add(1, Ordering::Relaxed) + 1;
            let mut h = echo.clone();
            h.push(("location", format!("/items/{id}")));
            json_answer(
                StatusCode::CREATED,
                &h,
                json!({"id": id, "name": p.all(), "key": key, "auth": auth}),
            )
        }
        (&Method::GET, ["items", _]) => json_answer(
            StatusCode::INTERNAL_SERVER_ERROR,
            &echo,
            json!({"error": p.all(), "key": key, "user": user, "password": password}),
        ),
        (&Method::GET, ["search"]) => json_answer(
            StatusCode::OK,
            &echo,
            json!({"count": p.html, "note": p.all()}),
        ),
        (&Method::POST, ["notes"]) => answer(
            StatusCode::INTERNAL_SERVER_ERROR,
            &echo,
            Some(("text/plain", p.all())),
        ),
        (&Method::POST, ["things"]) => {
            let mut h = echo.clone();
            h.push((
                "location",
                format!("/things/{}{}{}", p.subst, p.backticks, p.single).replace(' ', "%20"),
            ));
            answer(StatusCode::CREATED, &h, None)
        }
        (&Method::GET, ["whoami"]) => {
            let mut h = echo.clone();
            h.push(("location", format!("/whoami?key={key}")));
            json_answer(
                StatusCode::OK,
                &h,
                json!({"key": key, "user": user, "password": password, "auth": auth}),
            )
        }
        (&Method::GET, ["run", ..]) => json_answer(
            StatusCode::INTERNAL_SERVER_ERROR,
            &echo,
            json!({"error": p.all()}),
        ),
        _ => json_answer(StatusCode::NOT_FOUND, &echo, json!({"error": p.all()})),
    }
}
