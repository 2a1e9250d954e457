//! A purpose-built server whose answers look like faults to a careless
//! oracle and are not ([`SPEC_PATH`] says each case): ids put where slugs
//! and names go, a request that only waited behind a slow one, a
//! documented redirect with an HTML body, answers the request's own
//! oversized or route-changing value explains, statuses and delays an echo
//! endpoint was asked for, 403s that mean "no such id". One real fault: a
//! stack trace that depends on the `Accept` header.

use std::collections::{HashMap, HashSet};
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use percent_encoding::percent_decode_str;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// The description, relative to the crate root.
pub const SPEC_PATH: &str = "fixtures/servers/false-alarms.yaml";

/// How long getSlow keeps the server's one worker busy, even after the
/// client gave up on it (as a threaded server does).
pub const SLOW: Duration = Duration::from_millis(2500);

/// The running server; dropping it stops it.
pub struct FalseAlarms {
    /// Base URL, `http://127.0.0.1:PORT` (no trailing slash).
    pub base_url: String,
    task: JoinHandle<()>,
}

#[derive(Default)]
struct App {
    next_id: AtomicI64,
    /// slug → article.
    articles: Mutex<HashMap<String, Value>>,
    deleted: Mutex<HashSet<String>>,
    /// name → tenant.
    tenants: Mutex<HashMap<String, Value>>,
    /// The one worker getSlow and getQuick share.
    worker: Arc<tokio::sync::Mutex<()>>,
}

impl FalseAlarms {
    /// Starts a fresh server on a free loopback port.
    pub async fn start() -> FalseAlarms {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("bind the false-alarms server on 127.0.0.1");
        let addr = listener.local_addr().expect("a bound address");
        let app = Arc::new(App::default());
        let router = Router::new().fallback(handle).with_state(app);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        FalseAlarms {
            base_url: format!("http://{addr}"),
            task,
        }
    }
}

impl Drop for FalseAlarms {
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

fn text(status: u16, body: &str) -> Response {
    (
        StatusCode::from_u16(status).unwrap(),
        [(header::CONTENT_TYPE, "text/plain")],
        body.to_string(),
    )
        .into_response()
}

/// The status asked for, when it is one a server may send as an answer;
/// the documented 400 otherwise.
fn echo(code: Option<u16>) -> Response {
    match code {
        Some(c) if (200..=599).contains(&c) => status_only(c),
        _ => json_answer(400, json!({"error": "no such status"})),
    }
}

fn status_only(status: u16) -> Response {
    StatusCode::from_u16(status)
        .unwrap_or(StatusCode::IM_A_TEAPOT)
        .into_response()
}

async fn handle(State(app): State<Arc<App>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let raw_path = parts.uri.path().to_string();
    // As many servers do, the path is decoded before it is routed: an
    // encoded `/` in a value changes the route.
    let path = percent_decode_str(&raw_path)
        .decode_utf8_lossy()
        .into_owned();
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let query = parts.uri.query().unwrap_or("");
    let param = |name: &str| {
        url::form_urlencoded::parse(query.as_bytes())
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    // Limits of the HTTP layer, before any route.
    if parts.uri.to_string().len() > 2048 {
        return text(414, "URI Too Long");
    }
    let header_bytes: usize = parts
        .headers
        .iter()
        .map(|(n, v)| n.as_str().len() + v.len())
        .sum();
    if header_bytes > 4096 {
        return text(431, "Request Header Fields Too Large");
    }
    match (parts.method.as_str(), segments.as_slice()) {
        ("POST", ["articles"]) => {
            let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(&body) else {
                return json_answer(400, json!({"error": "not JSON"}));
            };
            let id = app.next_id.fetch_add(1, Ordering::SeqCst) + 1;
            let slug = format!("article-{id}");
            let article = json!({"id": id, "slug": slug, "title": fields.get("title").cloned().unwrap_or(Value::Null)});
            app.articles.lock().unwrap().insert(slug, article.clone());
            json_answer(201, article)
        }
        ("GET", ["articles", slug]) => {
            if let Some(a) = app.articles.lock().unwrap().get(*slug) {
                return json_answer(200, a.clone());
            }
            if app.deleted.lock().unwrap().contains(*slug) {
                return status_only(404);
            }
            // Any slug never seen reads as an empty article.
            json_answer(200, json!({}))
        }
        ("DELETE", ["articles", slug]) => {
            if app.articles.lock().unwrap().remove(*slug).is_some() {
                app.deleted.lock().unwrap().insert(slug.to_string());
            }
            status_only(204)
        }
        ("POST", ["tenants"]) => {
            let name = serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|v| v.get("name").and_then(Value::as_str).map(str::to_string))
                .unwrap_or_else(|| "tenant".into());
            let mut tenants = app.tenants.lock().unwrap();
            if tenants.contains_key(&name) {
                return status_only(409);
            }
            let id = 700 + app.next_id.fetch_add(1, Ordering::SeqCst);
            let tenant = json!({"id": id, "name": name});
            tenants.insert(name, tenant.clone());
            json_answer(201, tenant)
        }
        ("GET", ["tenants", name]) => match app.tenants.lock().unwrap().get(*name) {
            Some(t) => json_answer(200, t.clone()),
            None => status_only(404),
        },
        ("GET", ["slow"]) => {
            // The worker stays busy even when the client has gone.
            let worker = app.worker.clone();
            let work = tokio::spawn(async move {
                let _busy = worker.lock().await;
                tokio::time::sleep(SLOW).await;
            });
            let _ = work.await;
            status_only(200)
        }
        ("GET", ["quick"]) => {
            let _busy = app.worker.lock().await;
            status_only(200)
        }
        ("GET", ["go"]) => (
            StatusCode::TEMPORARY_REDIRECT,
            [
                (header::LOCATION, "/quick"),
                (header::CONTENT_TYPE, "text/html"),
            ],
            "<!DOCTYPE html><html><body>Moved to <a href=\"/quick\">/quick</a></body></html>",
        )
            .into_response(),
        ("GET", ["search"]) => json_answer(200, json!([])),
        ("GET", ["files", _name]) => json_answer(200, json!({})),
        ("GET", ["status", code]) => echo(code.parse().ok()),
        ("GET", ["echo"]) => echo(param("code").and_then(|c| c.parse().ok())),
        ("GET", ["delay", seconds]) => {
            let s: u64 = seconds.parse().unwrap_or(0).min(10);
            tokio::time::sleep(Duration::from_secs(s)).await;
            status_only(200)
        }
        ("GET", ["report"]) => {
            let accept = parts
                .headers
                .get(header::ACCEPT)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            if accept == "text/csv" {
                return text(
                    500,
                    "java.lang.IllegalStateException: no CSV writer\n\tat com.example.Report.csv(Report.java:42)\n\tat java.base/java.lang.Thread.run(Thread.java:829)",
                );
            }
            json_answer(200, json!({}))
        }
        ("GET", ["vaults", _]) => json_answer(403, json!({"error": "no such vault"})),
        ("GET", ["admin"]) => (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer realm=\"admin\"")],
        )
            .into_response(),
        _ => status_only(404),
    }
}
