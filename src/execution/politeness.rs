//! Politeness: a global rate limit with bursts, and obedience to what the server
//! says about load (`Retry-After` on 429/503, `RateLimit-*` and `X-RateLimit-*`).

use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};

/// A request rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    /// Requests per second (may be below 1: `2/m`).
    pub per_second: f64,
}

impl std::fmt::Display for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/s", self.per_second)
    }
}

/// Parses `10/s`, `120/m`, `1000/h` (or a bare number, per second).
pub fn parse_rate(text: &str) -> Result<Rate, String> {
    let (n, unit) = text.split_once('/').unwrap_or((text, "s"));
    let n: f64 = n
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a rate; write it as 10/s, 120/m or 1000/h"))?;
    let per = match unit.trim() {
        "s" | "sec" | "second" => 1.0,
        "m" | "min" | "minute" => 60.0,
        "h" | "hour" => 3600.0,
        other => return Err(format!("unknown rate unit {other:?}; use s, m or h")),
    };
    if !(n > 0.0 && n.is_finite()) {
        return Err(format!("{text:?}: the rate must be above zero"));
    }
    Ok(Rate {
        per_second: n / per,
    })
}

/// The longest `Retry-After` a run without a deadline (no `--budget`)
/// waits: a longer one sets its operation aside, as one past the budget.
pub(super) const LONGEST_WAIT: Duration = Duration::from_secs(60);

/// Shared state deciding when the next request may go: one per run, for
/// every phase (search, replays, suite), so that the rate holds from the
/// server's point of view whatever phase sends.
pub struct Politeness {
    limiter: Option<DefaultDirectRateLimiter>,
    /// Limits of some operations only (`--rate-for`), with the operations
    /// each applies to (by name).
    per_operation: Vec<(DefaultDirectRateLimiter, std::collections::HashSet<String>)>,
    state: Mutex<State>,
    reserve: u64,
}

/// A token bucket for `rate` with bursts of `burst`.
fn bucket(rate: Rate, burst: u32) -> DefaultDirectRateLimiter {
    let period = Duration::from_secs_f64(1.0 / rate.per_second);
    let burst = NonZeroU32::new(burst.max(1)).unwrap_or(NonZeroU32::MIN);
    let quota = Quota::with_period(period)
        .unwrap_or_else(|| Quota::per_second(NonZeroU32::MAX))
        .allow_burst(burst);
    RateLimiter::direct(quota)
}

#[derive(Default)]
struct State {
    /// Nobody sends before this (Retry-After, a quota at zero).
    paused_until: Option<Instant>,
    /// Operations the server asked to wait on past the deadline of the
    /// phase that asked, and until when: the others go on meanwhile.
    blocked: std::collections::HashMap<String, Instant>,
    /// Spacing the server's remaining quota asks for, until the quota resets.
    spacing: Option<(Duration, Instant)>,
    last_send: Option<Instant>,
    /// Consecutive 429/503 answers, for exponential backoff.
    strikes: u32,
}

/// What the server said about a response.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Signal {
    /// Nothing to act on.
    None,
    /// The request was refused for load: retry it after this long.
    RetryAfter(Duration),
    /// The request was refused for load, with a wait past the deadline:
    /// its operation is not sent again before the wait is over; the
    /// others go on.
    PastDeadline(Duration),
}

/// Whether a request may go now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Admission {
    /// It may.
    Go,
    /// The wait for the rate or the server's pause would pass the deadline.
    PastDeadline,
    /// The server asked to wait on this operation past the deadline.
    Blocked,
}

impl Politeness {
    /// Politeness for a rate (none: unlimited), burst size and concurrency (the
    /// number of requests that may already be in flight when a quota runs low).
    pub fn new(rate: Option<Rate>, burst: u32, concurrency: usize) -> Politeness {
        Politeness {
            limiter: rate.map(|r| bucket(r, burst)),
            per_operation: Vec::new(),
            state: Mutex::new(State::default()),
            reserve: concurrency as u64,
        }
    }

    /// Adds a limit of `rate` (no bursts) on the requests of `operations`,
    /// besides the global one.
    pub fn limit_operations(&mut self, rate: Rate, operations: impl IntoIterator<Item = String>) {
        self.per_operation
            .push((bucket(rate, 1), operations.into_iter().collect()));
    }

    /// Waits until a request of `operation` may be sent. Returns at once,
    /// without waiting, when the wait would pass `deadline` (waits never
    /// exceed the budget), or when the server asked to wait on this very
    /// operation past it.
    pub async fn admit(&self, operation: &str, deadline: Option<Instant>) -> Admission {
        {
            let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(&until) = st.blocked.get(operation) {
                if until > deadline.unwrap_or_else(|| Instant::now() + LONGEST_WAIT) {
                    return Admission::Blocked;
                }
                // The wait is over before this phase ends: wait it out.
                st.blocked.remove(operation);
                st.paused_until = Some(st.paused_until.map_or(until, |p| p.max(until)));
            }
        }
        self.wait_and_take(operation, deadline).await
    }

    async fn wait_and_take(&self, operation: &str, deadline: Option<Instant>) -> Admission {
        loop {
            let wait = self.wait_needed();
            if let Some(wait) = wait {
                if deadline.is_some_and(|d| Instant::now() + wait > d) {
                    return Admission::PastDeadline;
                }
                tokio::time::sleep(wait).await;
                continue;
            }
            // The operation's own limits first: a token of the global bucket
            // is then not spent on a request that must wait anyway.
            let buckets = self
                .per_operation
                .iter()
                .filter(|(_, ops)| ops.contains(operation))
                .map(|(b, _)| b)
                .chain(&self.limiter);
            let mut waited = false;
            for limiter in buckets {
                if let Err(not_until) = limiter.check() {
                    let wait = not_until.wait_time_from(governor::clock::Clock::now(
                        &governor::clock::DefaultClock::default(),
                    ));
                    if deadline.is_some_and(|d| Instant::now() + wait > d) {
                        return Admission::PastDeadline;
                    }
                    tokio::time::sleep(wait).await;
                    waited = true;
                    break;
                }
            }
            if waited {
                continue;
            }
            let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
            st.last_send = Some(Instant::now());
            return Admission::Go;
        }
    }

    fn wait_needed(&self) -> Option<Duration> {
        let now = Instant::now();
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut wait = Duration::ZERO;
        if let Some(until) = st.paused_until {
            wait = wait.max(until.saturating_duration_since(now));
        }
        if let (Some((spacing, until)), Some(last)) = (st.spacing, st.last_send)
            && now < until
        {
            wait = wait.max((last + spacing).saturating_duration_since(now));
        }
        (wait > Duration::ZERO).then_some(wait)
    }

    /// Reads a response of `operation`'s: its status and headers; pauses
    /// everyone when the server asks, and says whether the request should
    /// be retried. A wait that would pass `deadline` (or last over
    /// `LONGEST_WAIT`, without one) pauses no one: that operation is set
    /// aside until the wait is over, and the others go on (the limit may be
    /// the operation's own).
    pub fn observe(
        &self,
        operation: &str,
        status: u16,
        headers: &[(String, String)],
        deadline: Option<Instant>,
    ) -> Signal {
        let header = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.trim())
        };
        let now = Instant::now();
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if status == 429 || status == 503 {
            st.strikes += 1;
            let wait = header("retry-after")
                .and_then(parse_retry_after)
                .unwrap_or_else(|| backoff(st.strikes));
            let until = now + wait;
            if until > deadline.unwrap_or(now + LONGEST_WAIT) {
                let entry = st.blocked.entry(operation.to_string()).or_insert(until);
                *entry = (*entry).max(until);
                return Signal::PastDeadline(wait);
            }
            st.paused_until = Some(st.paused_until.map_or(until, |p| p.max(until)));
            return Signal::RetryAfter(wait);
        }
        st.strikes = 0;
        if let Some((remaining, reset)) = quota(&header) {
            if remaining <= self.reserve {
                let until = now + reset;
                st.paused_until = Some(st.paused_until.map_or(until, |p| p.max(until)));
            } else {
                // Spread what is left of the quota over the time until it resets.
                let spacing = reset / (remaining.min(u32::MAX as u64) as u32);
                st.spacing = Some((spacing, now + reset));
            }
        }
        Signal::None
    }
}

/// Exponential backoff with jitter: about 1 s, 2 s, 4 s… capped at 60 s.
fn backoff(strikes: u32) -> Duration {
    let base = 2f64.powi(strikes.saturating_sub(1).min(6) as i32);
    let jitter = 0.75 + rand::random::<f64>() * 0.5;
    Duration::from_secs_f64((base * jitter).min(60.0))
}

/// `Retry-After` as seconds or as an HTTP date.
pub(super) fn parse_retry_after(value: &str) -> Option<Duration> {
    if let Ok(secs) = value.parse::<f64>() {
        return (secs >= 0.0 && secs.is_finite())
            .then(|| Duration::from_secs_f64(secs.min(3600.0)));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(
        at.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// Remaining requests and time to reset, from the IETF draft headers (also the
/// structured `RateLimit: remaining=…, reset=…`) or the common `X-RateLimit-*`.
fn quota<'a>(header: &impl Fn(&str) -> Option<&'a str>) -> Option<(u64, Duration)> {
    if let Some(structured) = header("ratelimit") {
        let field = |key: &str| {
            structured.split([',', ';']).find_map(|part| {
                let (k, v) = part.trim().split_once('=')?;
                (k.trim() == key)
                    .then(|| v.trim().parse::<f64>().ok())
                    .flatten()
            })
        };
        if let (Some(r), Some(t)) = (field("remaining"), field("reset")) {
            return Some((r as u64, Duration::from_secs_f64(t.max(0.0))));
        }
    }
    // Names spelt out, not formatted: every answer is read for them.
    for (remaining, reset) in [
        ("ratelimit-remaining", "ratelimit-reset"),
        ("x-ratelimit-remaining", "x-ratelimit-reset"),
    ] {
        let remaining = header(remaining).and_then(|v| v.parse::<u64>().ok());
        let reset = header(reset).and_then(|v| v.parse::<f64>().ok());
        if let (Some(remaining), Some(reset)) = (remaining, reset) {
            // Large values are UNIX times (GitHub), small ones delays (the draft).
            let delay = if reset > 1e9 {
                let now = SystemTime::now()
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .map(|d| d.as_secs_f64())
                    .unwrap_or(0.0);
                (reset - now).max(0.0)
            } else {
                reset.max(0.0)
            };
            return Some((remaining, Duration::from_secs_f64(delay.min(3600.0))));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse() {
        assert_eq!(parse_rate("10/s").unwrap().per_second, 10.0);
        assert_eq!(parse_rate("120/m").unwrap().per_second, 2.0);
        assert_eq!(parse_rate("3600/h").unwrap().per_second, 1.0);
        assert!(parse_rate("0/s").is_err());
        assert!(parse_rate("ten/s").is_err());
        assert!(parse_rate("1/y").is_err());
    }

    #[test]
    fn retry_after_seconds_and_dates() {
        assert_eq!(parse_retry_after("2"), Some(Duration::from_secs(2)));
        let later = SystemTime::now() + Duration::from_secs(30);
        let d = parse_retry_after(&httpdate::fmt_http_date(later)).unwrap();
        assert!(
            d > Duration::from_secs(25) && d <= Duration::from_secs(30),
            "{d:?}"
        );
        assert_eq!(parse_retry_after("soon"), None);
    }

    #[test]
    fn quota_headers_of_both_styles() {
        let h = |pairs: &'static [(&'static str, &'static str)]| {
            move |n: &str| pairs.iter().find(|(k, _)| *k == n).map(|(_, v)| *v)
        };
        assert_eq!(
            quota(&h(&[
                ("ratelimit-remaining", "5"),
                ("ratelimit-reset", "2")
            ])),
            Some((5, Duration::from_secs(2)))
        );
        assert_eq!(
            quota(&h(&[("ratelimit", "limit=10, remaining=3, reset=4")])),
            Some((3, Duration::from_secs(4)))
        );
        assert!(quota(&h(&[("x-ratelimit-remaining", "1")])).is_none());
    }

    #[test]
    fn a_429_pauses_everyone() {
        let p = Politeness::new(None, 1, 1);
        let headers = vec![("Retry-After".to_string(), "1".to_string())];
        assert_eq!(
            p.observe("op", 429, &headers, None),
            Signal::RetryAfter(Duration::from_secs(1))
        );
        let wait = p.wait_needed().unwrap();
        assert!(wait > Duration::from_millis(900));
    }

    #[tokio::test]
    async fn admit_refuses_a_wait_past_the_deadline() {
        let p = Politeness::new(None, 1, 1);
        p.observe("op", 429, &[("retry-after".into(), "5".into())], None);
        let deadline = Instant::now() + Duration::from_millis(100);
        assert_eq!(p.admit("op", Some(deadline)).await, Admission::PastDeadline);
    }

    #[tokio::test]
    async fn a_wait_past_the_deadline_sets_aside_one_operation_only() {
        let p = Politeness::new(None, 1, 1);
        let deadline = Instant::now() + Duration::from_secs(10);
        assert_eq!(
            p.observe(
                "slowOp",
                429,
                &[("retry-after".into(), "60".into())],
                Some(deadline)
            ),
            Signal::PastDeadline(Duration::from_secs(60))
        );
        assert_eq!(p.admit("slowOp", Some(deadline)).await, Admission::Blocked);
        assert_eq!(p.admit("other", Some(deadline)).await, Admission::Go);
        // A later phase that ends after the wait waits it out.
        let later = Instant::now() + Duration::from_secs(120);
        let p2 = Politeness::new(None, 1, 1);
        p2.observe(
            "op",
            429,
            &[("retry-after".into(), "0.2".into())],
            Some(Instant::now()),
        );
        let started = Instant::now();
        assert_eq!(p2.admit("op", Some(later)).await, Admission::Go);
        assert!(started.elapsed() >= Duration::from_millis(150));
    }
}
