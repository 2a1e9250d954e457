//! Checks that the misbehaving test server (tests/support/misbehaving.rs)
//! misbehaves exactly as documented, with a plain reqwest client, so failures
//! in the HTTP engine's tests can be trusted to be the engine's.
//!
//! Every test starts its own servers on free ports of 127.0.0.1 and is bounded
//! to a few seconds.

use crate::support;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use reqwest::{Client, StatusCode, redirect};
use serde_json::{Value, json};
use support::misbehaving::*;

const ALL_OPERATIONS: [&str; 21] = [
    "ok",
    "deleteOk",
    "slow",
    "endless",
    "big",
    "invalidJson",
    "drop",
    "reset",
    "badStatus",
    "negativeLength",
    "resetMid",
    "rateLong",
    "rateLong2",
    "storm",
    "stormDate",
    "limited",
    "limitedX",
    "redirectAway",
    "redirectSame",
    "unauthorized",
    "echo",
];

/// A client that never follows redirects, never uses a proxy (tests only talk
/// to 127.0.0.1) and gives up on any request after 5 s.
fn client() -> Client {
    Client::builder()
        .redirect(redirect::Policy::none())
        .no_proxy()
        .timeout(Duration::from_secs(5))
        .build()
        .expect("build reqwest client")
}

fn header<'a>(response: &'a reqwest::Response, name: &str) -> Option<&'a str> {
    response.headers().get(name).and_then(|v| v.to_str().ok())
}

fn number_header(response: &reqwest::Response, name: &str) -> u64 {
    header(response, name)
        .unwrap_or_else(|| panic!("{name} header present"))
        .parse()
        .unwrap_or_else(|e| panic!("{name} is a number: {e}"))
}

/// Parses an RFC 7231 IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT").
fn parse_http_date(text: &str) -> Option<SystemTime> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let parts: Vec<&str> = text.split(' ').collect();
    let [weekday, day, month, year, time, "GMT"] = parts[..] else {
        return None;
    };
    if weekday.len() != 4 || !weekday.ends_with(',') || day.len() != 2 {
        return None;
    }
    let day: i64 = day.parse().ok()?;
    let month = MONTHS.iter().position(|m| *m == month)? as i64 + 1;
    let year: i64 = year.parse().ok()?;
    let hms: Vec<i64> = time
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let [h, m, s] = hms[..] else { return None };
    // Howard Hinnant's days_from_civil.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = u64::try_from(days * 86_400 + h * 3600 + m * 60 + s).ok()?;
    Some(UNIX_EPOCH + Duration::from_secs(secs))
}

#[test]
fn spec_parses_and_lists_every_operation() {
    let document = cartograph::load::parse_text(MISBEHAVING_SPEC, Path::new("misbehaving.yaml"))
        .expect("misbehaving.yaml parses");
    assert_eq!(document["openapi"], "3.0.3");

    let loaded = cartograph::load::load_text(MISBEHAVING_SPEC, Path::new("misbehaving.yaml"))
        .expect("misbehaving.yaml loads");
    assert!(loaded.is_complete(), "warnings: {:?}", loaded.warnings);
    let names: BTreeSet<&str> = loaded
        .api
        .operations
        .iter()
        .map(|o| o.name.as_str())
        .collect();
    assert_eq!(names, ALL_OPERATIONS.into_iter().collect());
    for operation in &loaded.api.operations {
        assert!(
            operation.responses.keys().any(|code| code.starts_with('2')),
            "{} documents a success response",
            operation.name
        );
    }
}

#[test]
fn http_date_matches_the_rfc_example() {
    let example = UNIX_EPOCH + Duration::from_secs(784_111_777);
    assert_eq!(http_date(example), "Sun, 06 Nov 1994 08:49:37 GMT");
    assert_eq!(
        parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
        Some(example)
    );
    // A leap day, to exercise the month arithmetic.
    let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
    assert_eq!(http_date(leap), "Tue, 29 Feb 2000 00:00:00 GMT");
}

#[tokio::test]
async fn plain_endpoints_answer_and_are_recorded() {
    let server = Misbehaving::start().await;
    let client = client();
    let base = &server.base_url;

    let ok = client
        .get(format!("{base}/ok?x=1"))
        .header("X-Probe", "yes")
        .send()
        .await
        .expect("GET /ok");
    assert_eq!(ok.status(), StatusCode::OK);
    assert_eq!(header(&ok, "connection"), Some("close"));
    let body: Value = ok.json().await.expect("/ok is JSON");
    assert_eq!(body, json!({ "id": 1, "name": "fine" }));

    let deleted = client
        .delete(format!("{base}/ok"))
        .send()
        .await
        .expect("DELETE /ok");
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);

    let sent = json!({ "a": [1, 2], "b": "x" });
    let echoed = client
        .post(format!("{base}/echo"))
        .json(&sent)
        .send()
        .await
        .expect("POST /echo");
    assert_eq!(echoed.status(), StatusCode::CREATED);
    assert_eq!(echoed.json::<Value>().await.expect("echo is JSON"), sent);

    let not_json = client
        .post(format!("{base}/echo"))
        .body("nope")
        .send()
        .await
        .expect("POST /echo with a non-JSON body");
    assert_eq!(not_json.status(), StatusCode::BAD_REQUEST);

    for (method, path) in [("GET", "/nowhere"), ("POST", "/ok")] {
        let response = client
            .request(method.parse().expect("method"), format!("{base}{path}"))
            .send()
            .await
            .expect("unknown route");
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{method} {path}");
        let body: Value = response.json().await.expect("404 is JSON");
        assert_eq!(body["error"], "not found");
    }

    let requests = server.requests();
    let seen: Vec<(&str, &str)> = requests
        .iter()
        .map(|r| (r.method.as_str(), r.path.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            ("GET", "/ok?x=1"),
            ("DELETE", "/ok"),
            ("POST", "/echo"),
            ("POST", "/echo"),
            ("GET", "/nowhere"),
            ("POST", "/ok"),
        ]
    );
    assert_eq!(requests[0].header("x-probe"), Some("yes"));
    assert!(
        requests[0]
            .headers
            .iter()
            .any(|(n, v)| n == "x-probe" && v == "yes")
    );
    assert!(requests.windows(2).all(|w| w[0].at <= w[1].at));
    assert!(server.other_origin_requests().is_empty());
    server.shutdown().await;
}

#[tokio::test]
async fn slow_exceeds_a_short_timeout_without_blocking_others() {
    let server = Misbehaving::start().await;
    let client = client();
    let slow_url = format!("{}/slow", server.base_url);
    let slow_client = client.clone();
    let started = Instant::now();
    let slow = tokio::spawn(async move {
        slow_client
            .get(slow_url)
            .timeout(Duration::from_millis(500))
            .send()
            .await
    });

    // While /slow waits, the server still answers quickly.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let ok = client
        .get(format!("{}/ok", server.base_url))
        .send()
        .await
        .expect("GET /ok during /slow");
    assert_eq!(ok.status(), StatusCode::OK);
    assert!(started.elapsed() < Duration::from_millis(500));

    let error = slow
        .await
        .expect("join")
        .expect_err("/slow must not answer within 500 ms");
    assert!(error.is_timeout(), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
    server.shutdown().await;
}

#[tokio::test]
async fn drop_closes_the_connection_without_a_response() {
    let server = Misbehaving::start().await;
    let client = client();
    // A pooled connection first, to show /drop still fails on a fresh one.
    client
        .get(format!("{}/ok", server.base_url))
        .send()
        .await
        .expect("GET /ok");

    let result = client
        .get(format!("{}/drop", server.base_url))
        .header("Authorization", "Bearer dropped")
        .send()
        .await;
    let error = match result {
        Ok(response) => panic!("/drop answered {}", response.status()),
        Err(error) => error,
    };
    assert!(error.status().is_none());
    assert!(
        error.is_request() || error.is_connect() || error.is_body(),
        "{error:?}"
    );
    assert!(!error.is_timeout(), "{error:?}");

    let dropped: Vec<Received> = server
        .requests()
        .into_iter()
        .filter(|r| r.path == "/drop")
        .collect();
    assert_eq!(dropped.len(), 1, "the dropped request is recorded once");
    assert_eq!(dropped[0].method, "GET");
    assert_eq!(dropped[0].header("authorization"), Some("Bearer dropped"));
    server.shutdown().await;
}

#[tokio::test]
async fn storm_answers_429_three_times_then_200() {
    let server = Misbehaving::start().await;
    let client = client();
    let url = format!("{}/storm", server.base_url);
    for call in 1..=STORM_FAILURES {
        let response = client.get(&url).send().await.expect("GET /storm");
        assert_eq!(
            response.status(),
            StatusCode::TOO_MANY_REQUESTS,
            "call {call}"
        );
        assert_eq!(header(&response, "retry-after"), Some("1"));
    }
    let calm = client.get(&url).send().await.expect("GET /storm");
    assert_eq!(calm.status(), StatusCode::OK);
    assert!(header(&calm, "retry-after").is_none());
    assert_eq!(
        calm.json::<Value>().await.expect("JSON"),
        json!({ "ok": true })
    );
    server.shutdown().await;
}

#[tokio::test]
async fn storm_date_sends_an_http_date_one_to_two_seconds_ahead() {
    let server = Misbehaving::start().await;
    let client = client();
    let url = format!("{}/storm-date", server.base_url);
    for call in 1..=STORM_FAILURES {
        let response = client.get(&url).send().await.expect("GET /storm-date");
        assert_eq!(
            response.status(),
            StatusCode::TOO_MANY_REQUESTS,
            "call {call}"
        );
        let text = header(&response, "retry-after").expect("Retry-After");
        let at = parse_http_date(text).unwrap_or_else(|| panic!("HTTP date: {text:?}"));
        let ahead = at
            .duration_since(SystemTime::now())
            .unwrap_or_else(|_| panic!("{text} is in the future"));
        // 1–2 s ahead when sent; a little less by the time it is read here.
        assert!(ahead <= Duration::from_secs(2), "{ahead:?}");
        assert!(ahead >= Duration::from_millis(500), "{ahead:?}");
    }
    let calm = client.get(&url).send().await.expect("GET /storm-date");
    assert_eq!(calm.status(), StatusCode::OK);
    server.shutdown().await;
}

#[tokio::test]
async fn limited_counts_down_then_429_then_resets() {
    let server = Misbehaving::start().await;
    let client = client();
    let url = format!("{}/limited", server.base_url);
    let mut reset = 0;
    for expected in (0..RATE_LIMIT).rev() {
        let response = client.get(&url).send().await.expect("GET /limited");
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(number_header(&response, "ratelimit-limit"), 5);
        assert_eq!(
            number_header(&response, "ratelimit-remaining"),
            u64::from(expected)
        );
        reset = number_header(&response, "ratelimit-reset");
        assert!((1..=2).contains(&reset), "reset {reset}");
    }
    let over = client.get(&url).send().await.expect("GET /limited");
    assert_eq!(over.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(number_header(&over, "ratelimit-remaining"), 0);
    assert!(header(&over, "retry-after").is_none());

    tokio::time::sleep(Duration::from_secs(reset)).await;
    let fresh = client.get(&url).send().await.expect("GET /limited");
    assert_eq!(fresh.status(), StatusCode::OK);
    assert_eq!(number_header(&fresh, "ratelimit-remaining"), 4);
    server.shutdown().await;
}

#[tokio::test]
async fn limited_x_sends_a_unix_reset_time() {
    let server = Misbehaving::start().await;
    let client = client();
    let url = format!("{}/limited-x", server.base_url);
    let now = || {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("clock after 1970")
            .as_secs()
    };
    let mut reset_at = 0;
    for expected in (0..RATE_LIMIT).rev() {
        let response = client.get(&url).send().await.expect("GET /limited-x");
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(number_header(&response, "x-ratelimit-limit"), 5);
        assert_eq!(
            number_header(&response, "x-ratelimit-remaining"),
            u64::from(expected)
        );
        reset_at = number_header(&response, "x-ratelimit-reset");
        let now = now();
        assert!(reset_at > now && reset_at <= now + 3, "{reset_at} vs {now}");
    }
    let over = client.get(&url).send().await.expect("GET /limited-x");
    assert_eq!(over.status(), StatusCode::TOO_MANY_REQUESTS);

    // The window has ended once the wall clock passes the announced reset.
    while now() < reset_at {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let fresh = client.get(&url).send().await.expect("GET /limited-x");
    assert_eq!(fresh.status(), StatusCode::OK);
    assert_eq!(number_header(&fresh, "x-ratelimit-remaining"), 4);

    // /limited keeps its own window.
    let other = client
        .get(format!("{}/limited", server.base_url))
        .send()
        .await
        .expect("GET /limited");
    assert_eq!(number_header(&other, "ratelimit-remaining"), 4);
    server.shutdown().await;
}

#[tokio::test]
async fn redirects_point_off_origin_and_same_origin() {
    let server = Misbehaving::start().await;
    let client = client();

    let away = client
        .get(format!("{}/redirect-away", server.base_url))
        .header("Authorization", "Bearer secret")
        .send()
        .await
        .expect("GET /redirect-away");
    assert_eq!(away.status(), StatusCode::FOUND);
    let location = header(&away, "location").expect("Location").to_string();
    assert_eq!(location, format!("{}/collect", server.other_origin_url));
    assert_ne!(server.other_origin_url, server.base_url);
    assert!(server.other_origin_requests().is_empty());

    // Following it by hand reaches the other origin, which records headers.
    let collected = client
        .get(&location)
        .header("X-Followed", "1")
        .send()
        .await
        .expect("GET other origin");
    assert_eq!(collected.status(), StatusCode::OK);
    let seen = server.other_origin_requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].path, "/collect");
    assert_eq!(seen[0].header("x-followed"), Some("1"));
    assert_eq!(seen[0].header("authorization"), None);

    let same = client
        .get(format!("{}/redirect-same", server.base_url))
        .send()
        .await
        .expect("GET /redirect-same");
    assert_eq!(same.status(), StatusCode::FOUND);
    assert_eq!(header(&same, "location"), Some("/ok"));
    server.shutdown().await;
}

#[tokio::test]
async fn unauthorized_wants_a_fresh_token() {
    let server = Misbehaving::start().await;
    let client = client();
    let url = format!("{}/unauthorized", server.base_url);

    let missing = client.get(&url).send().await.expect("no credentials");
    assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
    let stale = client
        .get(&url)
        .header("Authorization", "Bearer stale")
        .send()
        .await
        .expect("stale credentials");
    assert_eq!(stale.status(), StatusCode::UNAUTHORIZED);
    let fresh = client
        .get(&url)
        .header("Authorization", "Bearer fresh-token")
        .send()
        .await
        .expect("fresh credentials");
    assert_eq!(fresh.status(), StatusCode::OK);
    server.shutdown().await;
}

#[tokio::test]
async fn endless_streams_json_forever() {
    let server = Misbehaving::start().await;
    let mut response = client()
        .get(format!("{}/endless", server.base_url))
        .send()
        .await
        .expect("GET /endless");
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(header(&response, "content-type"), Some("application/json"));
    assert!(header(&response, "content-length").is_none());

    let started = Instant::now();
    let mut read = Vec::new();
    while read.len() < 1024 * 1024 {
        let chunk = response
            .chunk()
            .await
            .expect("read /endless")
            .expect("/endless must not end");
        read.extend_from_slice(&chunk);
    }
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(read.starts_with(b"[1,1,1,"));

    // It is still going a second later.
    let drained = tokio::time::timeout(Duration::from_secs(1), async {
        while let Some(chunk) = response.chunk().await.expect("read /endless") {
            assert!(!chunk.is_empty());
        }
    })
    .await;
    assert!(drained.is_err(), "/endless ended");
    server.shutdown().await;
}

#[tokio::test]
async fn big_is_twenty_mebibytes_of_valid_json() {
    let server = Misbehaving::start().await;
    let response = client()
        .get(format!("{}/big", server.base_url))
        .send()
        .await
        .expect("GET /big");
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        number_header(&response, "content-length"),
        BIG_BODY_BYTES as u64
    );
    let body = response.bytes().await.expect("read /big");
    assert_eq!(body.len(), BIG_BODY_BYTES);
    let value: Value = serde_json::from_slice(&body).expect("/big is JSON");
    assert!(value.as_array().is_some_and(|a| a.len() > 10_000_000));
    server.shutdown().await;
}

#[tokio::test]
async fn invalid_json_claims_json_but_does_not_parse() {
    let server = Misbehaving::start().await;
    let response = client()
        .get(format!("{}/invalid-json", server.base_url))
        .send()
        .await
        .expect("GET /invalid-json");
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(header(&response, "content-type"), Some("application/json"));
    let body = response.bytes().await.expect("read body");
    assert_eq!(&body[..], INVALID_JSON_BODY.as_bytes());
    assert!(serde_json::from_slice::<Value>(&body).is_err());
    server.shutdown().await;
}

#[tokio::test]
async fn raw_endpoints_send_what_no_http_library_would() {
    let server = Misbehaving::start().await;
    let port: u16 = server.base_url.rsplit(':').next().unwrap().parse().unwrap();
    let raw = |path: &'static str| async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 256];
        let end = loop {
            match s.read(&mut buf).await {
                Ok(0) => break None,
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) => break Some(e.kind()),
            }
        };
        (got, end)
    };
    assert_eq!(raw("/bad-status").await, (BAD_STATUS_ANSWER.to_vec(), None));
    assert_eq!(
        raw("/negative-length").await,
        (NEGATIVE_LENGTH_ANSWER.to_vec(), None)
    );
    let (got, end) = raw("/reset-mid").await;
    assert_eq!(got, RESET_MID_ANSWER);
    assert_eq!(end, Some(std::io::ErrorKind::ConnectionReset));
    let (got, end) = raw("/reset").await;
    assert!(got.is_empty());
    assert_eq!(end, Some(std::io::ErrorKind::ConnectionReset));
    let response = client()
        .get(format!("{}/rate-long", server.base_url))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(number_header(&response, "retry-after"), LONG_RETRY_AFTER);
    server.shutdown().await;
}

#[tokio::test]
async fn shutdown_stops_accepting() {
    let server = Misbehaving::start().await;
    let base = server.base_url.clone();
    let other = server.other_origin_url.clone();
    server.shutdown().await;
    let client = client();
    for url in [format!("{base}/ok"), format!("{other}/collect")] {
        let error = client
            .get(&url)
            .send()
            .await
            .expect_err("nothing listens any more");
        assert!(error.is_connect(), "{error:?}");
    }
}
