//! Checks that the slow tracker (tests/support/slow_edges.rs) is what its
//! documentation says, with a plain reqwest client and no Cartograph: each
//! planted crash answers 500 on its trigger, every near miss is refused with
//! a 4xx and fires nothing, only bare listings give the ids, the description
//! matches the routes, and the server keeps to 50 requests a second. So the
//! edge pass's test (tests/edge_pass.rs) failing is the engine's doing.

use crate::support;

use std::path::Path;
use std::time::{Duration, Instant};

use reqwest::{Client, Method, StatusCode};
use serde_json::{Value, json};
use support::slow_edges::{self, BOARD, Crash, PROJECT, ROUTES, TASK};

/// 2^64 and 2^63, written digit for digit: past what a signed 64-bit
/// column holds.
const PAST_64: &str = "18446744073709551616";
const PAST_63: &str = "9223372036854775808";

fn client() -> Client {
    Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(10))
        .build()
        .expect("a reqwest client")
}

/// Sends `method path` with `body` (raw JSON text, when given) and returns
/// the status and the body's text.
async fn send(
    client: &Client,
    base: &str,
    method: Method,
    path: &str,
    body: Option<&str>,
) -> (StatusCode, String) {
    let mut request = client.request(method, format!("{base}{path}"));
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    let response = request.send().await.expect("the server answers");
    let status = response.status();
    (status, response.text().await.unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_description_names_every_route() {
    let loaded = cartograph::load::load_text(slow_edges::SPEC, Path::new("tracker.yaml"))
        .expect("the description loads");
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let mut described: Vec<(String, String, String)> = loaded
        .api
        .operations
        .iter()
        .map(|o| {
            (
                o.method.as_str().to_string(),
                o.path.clone(),
                o.name.clone(),
            )
        })
        .collect();
    let mut routed: Vec<(String, String, String)> = ROUTES
        .iter()
        .map(|(m, p, o)| (m.to_string(), p.to_string(), o.to_string()))
        .collect();
    described.sort();
    routed.sort();
    assert_eq!(described, routed);
    for crash in Crash::ALL {
        assert!(ROUTES.iter().any(|(_, _, op)| *op == crash.operation()));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn each_planted_crash_answers_500_on_its_trigger_alone() {
    let (addr, tracker, server) = slow_edges::start().await;
    let base = format!("http://{addr}");
    let c = client();
    let board = format!("/projects/{PROJECT}/boards/{BOARD}");
    let other_board = format!("/projects/{PROJECT}/boards/brd-0d9e44");
    let unknown_project = format!("/projects/prj-000000/boards/{BOARD}");
    let crashes = |expected: &[(Crash, u64)]| {
        for crash in Crash::ALL {
            let want = expected
                .iter()
                .find(|(c, _)| *c == crash)
                .map_or(0, |(_, n)| *n);
            assert_eq!(
                tracker.fired(crash),
                want,
                "{crash:?}\n{}",
                tracker.summary()
            );
        }
    };

    // The near misses first: every one refused, none fires anything.
    let near_misses: Vec<(Method, String, Option<&str>, u16)> = vec![
        // 1: listTasks' offset.
        (Method::GET, format!("{board}/tasks?offset=-1"), None, 400),
        (Method::GET, format!("{board}/tasks?offset=abc"), None, 400),
        (Method::GET, format!("{board}/tasks?offset=1.5"), None, 400),
        (
            Method::GET,
            format!("{board}/tasks?limit={PAST_64}"),
            None,
            400,
        ),
        (Method::GET, format!("{board}/tasks?status=wip"), None, 400),
        (
            Method::GET,
            format!("{unknown_project}/tasks?offset={PAST_64}"),
            None,
            404,
        ),
        (
            Method::GET,
            format!("{other_board}/tasks?offset={PAST_64}"),
            None,
            404,
        ),
        // 2: getTask's id.
        (Method::GET, format!("{board}/tasks/999"), None, 404),
        (Method::GET, format!("{board}/tasks/abc"), None, 400),
        (
            Method::GET,
            format!("{unknown_project}/tasks/{PAST_64}"),
            None,
            404,
        ),
        (
            Method::GET,
            format!("{board}/tasks/{PAST_64}/comments"),
            None,
            404,
        ),
        (
            Method::DELETE,
            format!("{board}/tasks/{PAST_64}"),
            None,
            404,
        ),
        // 3: updateBoard's page_limit.
        (
            Method::PATCH,
            board.clone(),
            Some(r#"{"page_limit": 1.5}"#),
            422,
        ),
        (
            Method::PATCH,
            board.clone(),
            Some(r#"{"page_limit": 1e30}"#),
            422,
        ),
        (
            Method::PATCH,
            board.clone(),
            Some(r#"{"page_limit": "9"}"#),
            422,
        ),
        (
            Method::PATCH,
            board.clone(),
            Some(r#"{"page_limit": 0}"#),
            422,
        ),
        (Method::PATCH, board.clone(), Some("[]"), 400),
        (Method::PATCH, board.clone(), Some("{"), 400),
        (
            Method::PATCH,
            format!("/projects/{PROJECT}/boards/brd-nope"),
            Some(r#"{"page_limit": 18446744073709551616}"#),
            404,
        ),
        // 4: updateProjectSettings' body.
        (
            Method::PUT,
            format!("/projects/{PROJECT}/settings"),
            Some("{}"),
            422,
        ),
        (
            Method::PUT,
            format!("/projects/{PROJECT}/settings"),
            Some(r#"{"theme": "neon", "default_view": "list"}"#),
            422,
        ),
        (
            Method::PUT,
            format!("/projects/{PROJECT}/settings"),
            Some("{"),
            400,
        ),
        (
            Method::PUT,
            "/projects/prj-000000/settings".into(),
            Some("null"),
            404,
        ),
        (Method::PUT, "/settings".into(), Some("null"), 400),
        // 5: createLabel's name.
        (
            Method::POST,
            format!("/projects/{PROJECT}/labels"),
            Some(r#"{"name": 5}"#),
            422,
        ),
        (
            Method::POST,
            format!("/projects/{PROJECT}/labels"),
            Some(r#"{"name": null}"#),
            422,
        ),
        (
            Method::POST,
            format!("/projects/{PROJECT}/labels"),
            Some(r#"{"name": true}"#),
            422,
        ),
        (
            Method::POST,
            format!("/projects/{PROJECT}/labels"),
            Some(r#"{"name": ""}"#),
            422,
        ),
        (
            Method::POST,
            format!("/projects/{PROJECT}/labels"),
            Some("{}"),
            422,
        ),
        (
            Method::POST,
            format!("/projects/{PROJECT}/labels"),
            Some("[]"),
            400,
        ),
        (
            Method::PATCH,
            format!("/projects/{PROJECT}"),
            Some(r#"{"name": {}}"#),
            422,
        ),
        // 6: bulkCreateTasks' status.
        (
            Method::POST,
            format!("{board}/tasks/bulk"),
            Some(r#"[{"title": "a", "status": "wip"}]"#),
            422,
        ),
        (
            Method::POST,
            format!("{board}/tasks/bulk"),
            Some(r#"[{"title": "a", "status": null}]"#),
            422,
        ),
        (
            Method::POST,
            format!("{board}/tasks/bulk"),
            Some(r#"[{"title": "a"}]"#),
            422,
        ),
        (Method::POST, format!("{board}/tasks/bulk"), Some("[]"), 422),
        (
            Method::POST,
            format!("{board}/tasks/bulk"),
            Some(r#"{"status": 1}"#),
            422,
        ),
        (
            Method::POST,
            format!("{board}/tasks"),
            Some(r#"{"title": "a", "status": 1}"#),
            422,
        ),
        // 7: listUsers' limit.
        (Method::GET, "/users?limit=101".into(), None, 400),
        (Method::GET, "/users?limit=0".into(), None, 400),
        (Method::GET, "/users?limit=abc".into(), None, 400),
        (Method::GET, format!("/users?offset={PAST_64}"), None, 400),
        (Method::GET, format!("/projects?limit={PAST_64}"), None, 400),
        // 8: createAutomation's trigger integers: past 64 bits outside the
        // trigger, in a body refused for another field, or rounded.
        (
            Method::POST,
            "/automations".into(),
            Some(
                r#"{"name": "", "trigger": {"type": "schedule", "schedule": {"cron": "* * * * *", "retries": 18446744073709551616}}}"#,
            ),
            422,
        ),
        (
            Method::POST,
            "/automations".into(),
            Some(
                r#"{"name": "a", "trigger": {"type": "webhook", "schedule": {"cron": "x", "retries": 18446744073709551616}}}"#,
            ),
            422,
        ),
        (
            Method::POST,
            "/automations".into(),
            Some(
                r#"{"name": "a", "trigger": {"type": "webhook", "webhook": {"path": "/x", "timeout_ms": 1e30}}}"#,
            ),
            422,
        ),
        (
            Method::POST,
            "/automations".into(),
            Some(
                r#"{"name": "a", "trigger": {"type": "webhook", "webhook": {"path": "/x", "timeout_ms": 0}}}"#,
            ),
            422,
        ),
        (
            Method::POST,
            "/automations".into(),
            Some(r#"{"name": "a", "trigger": 18446744073709551616}"#),
            422,
        ),
        // 9: searchActivity's query: without an exclusion, or refused.
        (
            Method::POST,
            "/activity/search".into(),
            Some(r#"{"filter": {"text": {"query": ""}}}"#),
            422,
        ),
        (
            Method::POST,
            "/activity/search".into(),
            Some(r#"{"filter": {"text": "deploy -staging"}}"#),
            422,
        ),
        (
            Method::POST,
            "/activity/search".into(),
            Some(r#"{"filter": {"actor": "-staging"}, "limit": 3}"#),
            200,
        ),
        (
            Method::POST,
            "/activity/search".into(),
            Some(r#"{"filter": {"text": {"query": "deploy - staging-x"}}}"#),
            200,
        ),
        // 10: createLink's board: malformed, or real, or under a name the
        // server refuses first (in Prefect's shape).
        (
            Method::POST,
            format!("/projects/{PROJECT}/links"),
            Some(r#"{"name": "docs", "board_id": "6jmHsi"}"#),
            422,
        ),
        (
            Method::POST,
            format!("/projects/{PROJECT}/links"),
            Some(r#"{"name": "Docs", "board_id": "brd-000000"}"#),
            422,
        ),
        (
            Method::POST,
            format!("/projects/{PROJECT}/links"),
            Some(r#"{"name": "docs", "board_id": "brd-0b5f2"}"#),
            422,
        ),
        (
            Method::POST,
            "/projects/prj-000000/links".into(),
            Some(r#"{"name": "docs", "board_id": "brd-000000"}"#),
            404,
        ),
    ];
    for (method, path, body, want) in &near_misses {
        let (status, text) = send(&c, &base, method.clone(), path, *body).await;
        assert_eq!(status.as_u16(), *want, "{method} {path} {body:?}: {text}");
    }
    crashes(&[]);

    // The largest values that fit are served.
    let fits: Vec<(Method, String, Option<&str>)> = vec![
        (
            Method::GET,
            format!("{board}/tasks?offset=9223372036854775807"),
            None,
        ),
        (
            Method::PATCH,
            board.clone(),
            Some(r#"{"page_limit": 9223372036854775807}"#),
        ),
        (Method::GET, "/users?limit=100".into(), None),
    ];
    for (method, path, body) in &fits {
        let (status, text) = send(&c, &base, method.clone(), path, *body).await;
        assert_eq!(status, StatusCode::OK, "{method} {path}: {text}");
    }
    crashes(&[]);

    // The triggers.
    let triggers: Vec<(Crash, Method, String, Option<&str>)> = vec![
        (
            Crash::TasksOffset,
            Method::GET,
            format!("{board}/tasks?offset={PAST_64}"),
            None,
        ),
        (
            Crash::TasksOffset,
            Method::GET,
            format!("{board}/tasks?offset={PAST_63}"),
            None,
        ),
        (
            Crash::TaskId,
            Method::GET,
            format!("{board}/tasks/{PAST_64}"),
            None,
        ),
        (
            Crash::TaskId,
            Method::GET,
            format!("{board}/tasks/-{PAST_64}"),
            None,
        ),
        (
            Crash::BoardPageLimit,
            Method::PATCH,
            board.clone(),
            Some(r#"{"page_limit": 18446744073709551616}"#),
        ),
        (
            Crash::BoardPageLimit,
            Method::PATCH,
            board.clone(),
            Some(r#"{"name": "x", "page_limit": 9223372036854775808}"#),
        ),
        (
            Crash::BoardPageLimit,
            Method::PATCH,
            board.clone(),
            Some(r#"{"page_limit": 100000000000000000000000000000}"#),
        ),
    ];
    let mut triggers = triggers;
    for body in ["null", "[]", "[null, null]", "\"x\"", "1", "true"] {
        triggers.push((
            Crash::SettingsNotObject,
            Method::PUT,
            format!("/projects/{PROJECT}/settings"),
            Some(body),
        ));
    }
    for body in [r#"{"name": {}}"#, r#"{"name": ["a"]}"#] {
        triggers.push((
            Crash::LabelNameObject,
            Method::POST,
            format!("/projects/{PROJECT}/labels"),
            Some(body),
        ));
    }
    for body in [
        r#"[{"title": "a", "status": 1}]"#,
        r#"[{"title": "a", "status": {}}]"#,
        r#"[{"title": "a", "status": "open"}, {"title": "b", "status": false}]"#,
    ] {
        triggers.push((
            Crash::BulkStatusNotString,
            Method::POST,
            format!("{board}/tasks/bulk"),
            Some(body),
        ));
    }
    triggers.push((
        Crash::UsersLimit,
        Method::GET,
        format!("/users?limit={PAST_64}"),
        None,
    ));
    triggers.push((
        Crash::UsersLimit,
        Method::GET,
        format!("/users?limit=-{PAST_63}1"),
        None,
    ));
    for body in [
        r#"{"name": "a", "trigger": {"type": "schedule", "schedule": {"cron": "x", "retries": 18446744073709551616}}}"#,
        r#"{"name": "a", "trigger": {"type": "webhook", "webhook": {"path": "/x", "timeout_ms": -9223372036854775809}}}"#,
    ] {
        triggers.push((
            Crash::AutomationTriggerInteger,
            Method::POST,
            "/automations".into(),
            Some(body),
        ));
    }
    for body in [
        r#"{"filter": {"text": {"query": "deploy -staging"}}}"#,
        r#"{"limit": 5, "filter": {"actor": null, "text": {"query": "-x"}}}"#,
    ] {
        triggers.push((
            Crash::ActivityExclusion,
            Method::POST,
            "/activity/search".into(),
            Some(body),
        ));
    }
    triggers.push((
        Crash::LinkDanglingBoard,
        Method::POST,
        format!("/projects/{PROJECT}/links"),
        Some(r#"{"name": "docs-2", "board_id": "brd-0b5f26"}"#),
    ));
    for (crash, method, path, body) in &triggers {
        let (status, text) = send(&c, &base, method.clone(), path, *body).await;
        assert_eq!(
            status,
            StatusCode::INTERNAL_SERVER_ERROR,
            "{crash:?}: {method} {path} {body:?}: {text}"
        );
        assert!(text.contains("Error"), "{crash:?}: {text}");
    }
    let count = |c: Crash| triggers.iter().filter(|t| t.0 == c).count() as u64;
    crashes(&Crash::ALL.map(|c| (c, count(c))));

    // What a correct request gets: the documented answers.
    let link = format!(r#"{{"name": "docs-1", "board_id": "{BOARD}"}}"#);
    let corrects: Vec<(Method, String, Option<&str>, u16)> = vec![
        (Method::GET, format!("{board}/tasks/{TASK}"), None, 200),
        (
            Method::GET,
            format!("{board}/tasks/{TASK}/comments"),
            None,
            200,
        ),
        (
            Method::PUT,
            format!("/projects/{PROJECT}/settings"),
            Some(r#"{"theme": "dark", "default_view": "list"}"#),
            200,
        ),
        (
            Method::POST,
            format!("/projects/{PROJECT}/labels"),
            Some(r#"{"name": "ux"}"#),
            201,
        ),
        (
            Method::POST,
            format!("{board}/tasks/bulk"),
            Some(r#"[{"title": "a", "status": "open"}, {"title": "b", "status": "done"}]"#),
            201,
        ),
        (
            Method::POST,
            "/automations".into(),
            Some(
                r#"{"name": "a", "trigger": {"type": "webhook", "webhook": {"path": "/x", "timeout_ms": 9223372036854775807}}}"#,
            ),
            201,
        ),
        (
            Method::POST,
            "/activity/search".into(),
            Some(r#"{"filter": {"text": {"query": "login"}}}"#),
            200,
        ),
        (
            Method::POST,
            format!("/projects/{PROJECT}/links"),
            Some(&link),
            201,
        ),
        (Method::GET, "/health".into(), None, 200),
        (Method::GET, "/nowhere".into(), None, 404),
        (Method::POST, "/health".into(), None, 405),
    ];
    for (method, path, body, want) in &corrects {
        let (status, text) = send(&c, &base, method.clone(), path, *body).await;
        assert_eq!(status.as_u16(), *want, "{method} {path} {body:?}: {text}");
    }
    let requests = tracker.requests();
    // A method the path does not take is no operation's request.
    assert_eq!(requests["healthCheck"], 1, "{requests:?}");
    assert_eq!(requests["unrouted"], 2, "{requests:?}");
    server.abort();
}

#[tokio::test(flavor = "multi_thread")]
async fn only_bare_listings_give_the_ids() {
    let (addr, _tracker, server) = slow_edges::start().await;
    let base = format!("http://{addr}");
    let c = client();
    let ids = |text: &str| -> Vec<String> {
        serde_json::from_str::<Value>(text)
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["id"].as_str().unwrap().to_string())
            .collect()
    };
    let (status, text) = send(&c, &base, Method::GET, "/projects", None).await;
    assert_eq!(status, StatusCode::OK);
    let projects = ids(&text);
    assert_eq!(projects.len(), 3, "{text}");
    assert!(projects.contains(&PROJECT.to_string()));
    for filter in [
        "owner=string",
        "tag=a",
        "name_pattern=",
        "name_pattern=Apollo",
        "offset=3",
    ] {
        let (status, text) =
            send(&c, &base, Method::GET, &format!("/projects?{filter}"), None).await;
        assert_eq!((status, text.as_str()), (StatusCode::OK, "[]"), "{filter}");
    }
    // Each project's boards, by a bare listing of that project.
    let mut boards = Vec::new();
    for project in &projects {
        let path = format!("/projects/{project}/boards");
        let (status, text) = send(&c, &base, Method::GET, &path, None).await;
        assert_eq!(status, StatusCode::OK);
        let listed = ids(&text);
        assert_eq!(listed.len(), 2, "{text}");
        let (_, filtered) = send(&c, &base, Method::GET, &format!("{path}?owner=x"), None).await;
        assert_eq!(filtered, "[]");
        boards.extend(listed.into_iter().map(|b| (project.clone(), b)));
    }
    assert!(boards.contains(&(PROJECT.to_string(), BOARD.to_string())));
    // A board is found under its own project only.
    let (status, _) = send(
        &c,
        &base,
        Method::GET,
        &format!("/projects/prj-2f9b03/boards/{BOARD}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, text) = send(
        &c,
        &base,
        Method::GET,
        &format!("/projects/{PROJECT}/boards/{BOARD}/tasks"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap()[0]["id"],
        json!(TASK)
    );
    server.abort();
}

#[tokio::test(flavor = "multi_thread")]
async fn it_answers_at_most_fifty_requests_a_second_however_many_arrive() {
    let (addr, tracker, server) = slow_edges::start().await;
    let url = format!("http://{addr}/health");
    let c = client();
    let started = Instant::now();
    let all: Vec<_> = (0..40)
        .map(|_| {
            let (c, url) = (c.clone(), url.clone());
            tokio::spawn(async move { c.get(url).send().await.map(|r| r.status()) })
        })
        .collect();
    for one in all {
        assert_eq!(one.await.unwrap().unwrap(), StatusCode::OK);
    }
    let took = started.elapsed();
    // 40 requests one at a time, 20 ms each.
    assert!(took >= Duration::from_millis(780), "{took:?}");
    assert_eq!(tracker.total(), 40);
    assert!(tracker.busiest_second() <= 50, "{}", tracker.summary());
    server.abort();
}
