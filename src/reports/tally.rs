//! The run's counts as exchanges arrive: per operation, its answers and
//! the requests that got none, which operations were reached, and what the
//! counts say about the run itself (most answers 404, refusals that ask
//! for credentials, credentials that stopped working).

use std::collections::BTreeMap;

use super::credentials::{AuthWatch, OpWatch, REFUSED_STREAK};
use super::{OperationReport, Report, Settings};
use crate::execution::{Exchange, RunOutcome};
use crate::faults::Fault;
use crate::model::Api;

/// Answers looked at before deciding that most of them are 404.
const EARLY_ANSWERS: u64 = 40;

/// Operations that must turn so before the run's credentials count as lost
/// (and at least a quarter of those that had worked): a few may just need
/// more rights on one resource after a change the run made to it.
const TURNED: usize = 3;

/// Accumulates per-operation counts as exchanges arrive.
pub struct Tally {
    operations: Vec<OperationReport>,
    positions: std::collections::HashMap<String, usize>,
    reached: usize,
    /// Answers and 404s among the first [`EARLY_ANSWERS`] answers.
    early: (u64, u64),
    warned_early: bool,
    /// Warnings given during the run, for the report.
    warnings: Vec<String>,
    auth: AuthWatch,
    /// Whether the run sends credentials (`-H`, `--auth-command`, a user in
    /// the target): the advice for refusals differs.
    credentials_given: bool,
    /// Whether the API is a GraphQL endpoint: its answers are read as
    /// GraphQL's.
    graphql: bool,
    /// What the answers were, until one could be read.
    readable: Readable,
}

/// The answers of a run until the first one it could read: a run none of
/// whose answers could be read tested nothing, and these say why.
#[derive(Debug, Default)]
struct Readable {
    /// Answers seen (a status came).
    answers: u64,
    /// Whether one could be read: counting stops there.
    read: bool,
    /// Answers longer than `--max-body`.
    over_max_body: u64,
    /// Answers cut short mid-body (a reset, a timeout).
    cut: u64,
    /// JSON nested deeper than the parser reads.
    too_deep: u64,
    /// 404 or 405 (before any answer could be read): GraphQL's endpoint,
    /// or, when no answer but these ever comes, a wrong base URL.
    not_found: u64,
    /// GraphQL answers below 500 with neither `data` nor `errors`.
    not_graphql: u64,
}

impl Readable {
    /// Counts one answer (`ex` has a status).
    fn see(&mut self, ex: &Exchange, graphql: bool) {
        let Some(status) = ex.status else {
            return;
        };
        self.answers += 1;
        let shaped = || {
            ex.json()
                .and_then(|v| v.as_object())
                .is_some_and(|o| o.contains_key("data") || o.contains_key("errors"))
        };
        if ex.failure.is_some() {
            self.cut += 1;
        } else if ex.truncated {
            self.over_max_body += 1;
        } else if ex.too_deep() {
            self.too_deep += 1;
        } else if matches!(status, 404 | 405) {
            self.not_found += 1;
        } else if graphql && status < 500 && !shaped() {
            self.not_graphql += 1;
        } else {
            self.read = true;
        }
    }

    /// Why none of the answers could be read, when there were some and
    /// none could.
    fn verdict(&self, graphql: bool) -> Option<String> {
        if self.read || self.answers == 0 {
            return None;
        }
        let mut why = Vec::new();
        if self.over_max_body > 0 {
            why.push(format!(
                "{} were longer than --max-body (give a larger one, e.g. --max-body 64m)",
                self.over_max_body
            ));
        }
        if self.cut > 0 {
            why.push(format!(
                "{} were cut short mid-body (the connection closed or --timeout ran out)",
                self.cut
            ));
        }
        if self.too_deep > 0 {
            why.push(format!(
                "{} held JSON nested {} levels deep or more, past what the parser reads",
                self.too_deep,
                crate::execution::JSON_DEPTH
            ));
        }
        if self.not_found > 0 {
            why.push(if graphql {
                format!(
                    "{} were 404 or 405: nothing there is a GraphQL endpoint; give --target the endpoint's own path (e.g. http://127.0.0.1:8080/graphql)",
                    self.not_found
                )
            } else {
                format!(
                    "{} were 404 or 405{}: the requests go to the wrong place; check the base URL (--target's path, or the description's servers)",
                    self.not_found,
                    if self.not_found == self.answers {
                        " (every operation answered 404 or 405, none 2xx)"
                    } else {
                        ""
                    }
                )
            });
        }
        if self.not_graphql > 0 {
            why.push(format!(
                "{} were no GraphQL answer (a body with neither `data` nor `errors`): is --target the GraphQL endpoint?",
                self.not_graphql
            ));
        }
        Some(format!(
            "none of the {} answers could be read, so nothing was tested: {}",
            self.answers,
            why.join("; ")
        ))
    }
}

impl Tally {
    /// A tally with every operation of the API at zero.
    pub fn new(api: &Api) -> Tally {
        Tally {
            positions: api.operation_positions(),
            reached: 0,
            early: (0, 0),
            warned_early: false,
            warnings: Vec::new(),
            credentials_given: false,
            graphql: api.format.is_graphql(),
            readable: Readable::default(),
            auth: AuthWatch {
                ops: vec![OpWatch::default(); api.operations.len()],
                ..AuthWatch::default()
            },
            operations: api
                .operations
                .iter()
                .map(|o| OperationReport {
                    operation: o.name.clone(),
                    method: o.method.as_str().to_string(),
                    path: o.path.clone(),
                    line: None,
                    spec: None,
                    status_counts: BTreeMap::new(),
                    failures: BTreeMap::new(),
                })
                .collect(),
        }
    }

    /// Records where the description writes each operation (operation name →
    /// line, as [`crate::load::operation_lines`] finds them).
    pub fn with_lines(mut self, lines: &std::collections::HashMap<String, u32>) -> Tally {
        for op in &mut self.operations {
            op.line = lines.get(&op.operation).copied();
        }
        self
    }

    /// Records that the run sends credentials.
    pub fn with_credentials(mut self, given: bool) -> Tally {
        self.credentials_given = given;
        self
    }

    /// Counts one exchange.
    pub fn add(&mut self, ex: &Exchange) {
        let Some(&i) = self.positions.get(&ex.request.operation) else {
            return;
        };
        let op = &mut self.operations[i];
        if !self.readable.read {
            self.readable.see(ex, self.graphql);
        }
        if let Some(s) = ex.status {
            if self.early.0 < EARLY_ANSWERS {
                self.early.0 += 1;
                self.early.1 += u64::from(s == 404);
            }
            let worked = op.status_counts.keys().any(|k| k.starts_with('2'));
            self.auth.see(i, worked, ex, s);
        }
        match (ex.status, &ex.failure) {
            // A head, then a reset or close mid-body: no answer a client
            // could read, and no status to count as reached.
            (Some(_), Some(f)) if f.kind == crate::execution::FailureKind::InvalidHttp => {
                *op.failures.entry(f.kind.as_str().to_string()).or_default() += 1;
            }
            (Some(s), _) => {
                let first_2xx =
                    (200..300).contains(&s) && !op.status_counts.keys().any(|k| k.starts_with('2'));
                // Counted without making the key's text, but the first time.
                let mut digits = [0u8; 5];
                let key = status_text(s, &mut digits);
                match op.status_counts.get_mut(key) {
                    Some(n) => *n += 1,
                    None => {
                        op.status_counts.insert(key.to_string(), 1);
                    }
                }
                if first_2xx {
                    self.reached += 1;
                }
            }
            (None, Some(f)) => {
                *op.failures.entry(f.kind.as_str().to_string()).or_default() += 1;
            }
            (None, None) => {}
        }
    }

    /// Once, as soon as it shows: most of the first answers were 404, which
    /// usually means the requests go to the wrong place (`base` is the path
    /// the description's paths are relative to, as the run uses it).
    pub fn early_warning(&mut self, base: &str) -> Option<String> {
        let (answers, not_found) = self.early;
        if self.warned_early || answers < EARLY_ANSWERS || not_found * 5 < answers * 4 {
            return None;
        }
        self.warned_early = true;
        let w = format!(
            "{not_found} of the first {answers} answers were 404: the requests may go to the wrong place; the description's paths are sent under {base}: check --target's path (or the description's base path)"
        );
        self.warnings.push(w.clone());
        Some(w)
    }

    /// What the counts say about the run as a whole, for the user: the early
    /// 404s, and the operations the server only ever refused (401/403).
    pub fn diagnose(&self) -> Vec<String> {
        let mut out = Vec::new();
        // Out of the operations that answered at all: a short run over a
        // large API calls many only once or never.
        let answered = self
            .operations
            .iter()
            .filter(|op| op.status_counts.values().sum::<u64>() > 0)
            .count();
        // Only refusals that speak of credentials (a 401, a challenge)
        // earn the advice: a 403 alone often means "no such id".
        let refused: Vec<(&str, &str)> = self
            .operations
            .iter()
            .zip(&self.auth.ops)
            .filter(|(op, _)| {
                let total: u64 = op.status_counts.values().sum();
                let denied: u64 = op
                    .status_counts
                    .iter()
                    .filter(|(s, _)| *s == "401" || *s == "403")
                    .map(|(_, n)| n)
                    .sum();
                total > 0 && denied == total
            })
            .filter_map(|(op, watch)| {
                watch
                    .evidence
                    .as_deref()
                    .map(|e| (op.operation.as_str(), e))
            })
            .collect();
        if !refused.is_empty() {
            let shown: Vec<&str> = refused.iter().take(8).map(|(op, _)| *op).collect();
            let advice = if self.credentials_given {
                "the credentials the run sends are refused there: check that they are the ones these operations take (or --exclude them)"
            } else {
                "pass them with -H 'Authorization: …' or --auth-command"
            };
            out.push(format!(
                "{} of the {} operations called got only 401 or 403 answers ({}{}), and the server asked for credentials ({}): {advice}",
                refused.len(),
                answered,
                shown.join(", "),
                if refused.len() > shown.len() { ", …" } else { "" },
                refused[0].1
            ));
        }
        // Operations with a 2xx: those whose credentials could stop working.
        let worked = self.reached;
        if let Some((ops, before, evidence)) = self
            .auth
            .lost
            .as_ref()
            .filter(|(ops, _, _)| ops.len() >= TURNED && ops.len() * 4 >= worked)
        {
            let turned = ops.len();
            let cause = match before {
                Some((op, request)) => format!(
                    "; the last request that got past the credentials before the refusals began was {request}: if it ended the session (a logout) or removed or changed the account the run uses, leave it out with --exclude '{op}', or run with a throwaway account"
                ),
                None => String::new(),
            };
            let shown: Vec<&str> = ops.iter().take(4).map(String::as_str).collect();
            out.push(format!(
                "the credentials stopped working during the run: {turned} of the {worked} operations that had answered 2xx then answered 401 or 403 {REFUSED_STREAK} times in a row on what the run had not deleted ({}{}; first: {evidence}){cause}",
                shown.join(", "),
                if ops.len() > shown.len() { ", …" } else { "" }
            ));
        }
        out
    }

    /// Why the run tested nothing although answers came: none of them
    /// could be read (each longer than `--max-body`, nested too deep, a 404
    /// where no operation answered, no GraphQL answer); `None` when one
    /// could, or none came.
    pub fn unreadable(&self) -> Option<String> {
        self.readable.verdict(self.graphql)
    }

    /// Operations with at least one 2xx.
    pub fn reached(&self) -> usize {
        self.reached
    }

    /// Whether `operation` got an answer other than a request to wait (429
    /// or 503): it was tested, whatever the server asked later.
    pub fn answered_beyond_waits(&self, operation: &str) -> bool {
        self.positions.get(operation).is_some_and(|&i| {
            self.operations[i]
                .status_counts
                .keys()
                .any(|k| k != "429" && k != "503")
        })
    }

    /// Operations counted.
    pub fn operation_count(&self) -> usize {
        self.operations.len()
    }

    /// The finished report.
    pub fn report(self, settings: Settings, outcome: &RunOutcome, faults: Vec<Fault>) -> Report {
        let reached = self.reached();
        let mut warnings = self.warnings.clone();
        warnings.extend(self.diagnose());
        Report {
            tool: BTreeMap::from([
                ("name", "cartograph"),
                ("version", env!("CARGO_PKG_VERSION")),
            ]),
            settings,
            requests: outcome.requests,
            refused_mutations: outcome.refused,
            excluded_requests: outcome.fenced,
            stop: serde_json::to_value(outcome.stop)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            elapsed_s: (outcome.elapsed.as_secs_f64() * 1000.0).round() / 1000.0,
            operations: self.operations,
            operations_reached: reached,
            causes: crate::faults::causes::group(&faults),
            faults,
            search: None,
            schema_coverage: None,
            query_log: None,
            warnings,
            graph_coverage: None,
        }
    }
}

/// `status` in decimal, written into `buf`.
fn status_text(status: u16, buf: &mut [u8; 5]) -> &str {
    let mut n = status;
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    std::str::from_utf8(&buf[at..]).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn status_text_is_the_decimal_number() {
        for s in [0u16, 7, 42, 200, 404, 599, 999, 1000, 65535] {
            let mut buf = [0u8; 5];
            assert_eq!(status_text(s, &mut buf), s.to_string());
        }
    }

    fn answer(op: &str, method: &str, status: u16) -> Exchange {
        Exchange {
            request: crate::execution::RequestSpec {
                operation: op.into(),
                method: method.into(),
                path: format!("/{op}"),
                ..Default::default()
            },
            status: Some(status),
            ..Default::default()
        }
    }

    fn api_of(ops: &[&str]) -> Api {
        let mut paths = String::new();
        for op in ops {
            paths.push_str(&format!(
                "  /{op}:\n    get:\n      operationId: {op}\n      responses: {{\"200\": {{description: ok}}}}\n"
            ));
        }
        let yaml = format!("openapi: 3.0.0\ninfo: {{title: t, version: '1'}}\npaths:\n{paths}");
        crate::load::load_text(&yaml, Path::new("t.yaml"))
            .unwrap()
            .api
    }

    #[test]
    fn credentials_that_stop_working_are_told_with_the_change_before() {
        let ops = ["a", "b", "c", "d", "health", "drop_accounts"];
        let mut tally = Tally::new(&api_of(&ops));
        for op in ["a", "b", "c", "d", "health"] {
            tally.add(&answer(op, "GET", 200));
        }
        tally.add(&answer("drop_accounts", "DELETE", 204));
        assert!(tally.diagnose().is_empty());
        for _ in 0..REFUSED_STREAK {
            for op in ["a", "b", "c"] {
                tally.add(&answer(op, "GET", 401));
                // An endpoint open to all goes on answering.
                tally.add(&answer("health", "GET", 200));
            }
        }
        let said = tally.diagnose().join("\n");
        assert!(said.contains("credentials stopped working"), "{said}");
        assert!(said.contains("3 of the 6"), "{said}");
        assert!(said.contains("--exclude 'drop_accounts'"), "{said}");
        assert!(said.contains("first: GET /a answered 401"), "{said}");

        // Two operations refused on one resource whose rights a change
        // took away, among many that still work: no loss.
        let mut tally = Tally::new(&api_of(&ops));
        for op in ops {
            tally.add(&answer(op, "GET", 200));
        }
        for _ in 0..REFUSED_STREAK {
            for op in ["a", "b"] {
                tally.add(&answer(op, "GET", 403));
            }
            tally.add(&answer("c", "GET", 404));
        }
        assert!(tally.diagnose().is_empty(), "{:?}", tally.diagnose());
    }

    #[test]
    fn a_get_that_ends_the_session_is_blamed_not_an_earlier_change() {
        // Airflow 3.3: `GET /auth/logout` answers 307 and revokes the
        // token; every later request is refused 403 while an open
        // endpoint goes on answering.
        let ops = ["a", "b", "c", "d", "health", "create", "logout"];
        let mut tally = Tally::new(&api_of(&ops));
        let mut seq = 0;
        let mut add = |tally: &mut Tally, op: &str, method: &str, status: u16| {
            seq += 1;
            let mut ex = answer(op, method, status);
            ex.seq = seq;
            tally.add(&ex);
        };
        for op in ["a", "b", "c", "d", "health"] {
            add(&mut tally, op, "GET", 200);
        }
        add(&mut tally, "create", "POST", 201);
        add(&mut tally, "logout", "GET", 307);
        for _ in 0..REFUSED_STREAK {
            // The open endpoint answers before each refusal: the
            // operation whose refusals began first tells the culprit.
            for op in ["b", "c", "a"] {
                add(&mut tally, op, "GET", 401);
                add(&mut tally, "health", "GET", 200);
            }
        }
        let said = tally.diagnose().join("\n");
        assert!(said.contains("credentials stopped working"), "{said}");
        assert!(said.contains("GET /logout (answered 307)"), "{said}");
        assert!(said.contains("--exclude 'logout'"), "{said}");
        assert!(!said.contains("'create'"), "{said}");
    }

    fn at(op: &str, method: &str, path: &str, status: u16) -> Exchange {
        let mut ex = answer(op, method, status);
        ex.request.path = path.into();
        ex
    }

    #[test]
    fn refusals_of_what_the_run_deleted_are_not_lost_credentials() {
        let ops = ["a", "b", "c", "d", "create", "remove"];
        let mut tally = Tally::new(&api_of(&ops));
        for op in ["a", "b", "c", "d"] {
            tally.add(&at(op, "GET", &format!("/{op}/1"), 200));
        }
        for op in ["a", "b", "c"] {
            tally.add(&at("remove", "DELETE", &format!("/{op}/1"), 204));
        }
        for _ in 0..REFUSED_STREAK {
            for op in ["a", "b", "c"] {
                tally.add(&at(op, "GET", &format!("/{op}/1"), 403));
                tally.add(&at(op, "GET", &format!("/{op}/1/items"), 403));
            }
            // Creations keep succeeding.
            tally.add(&at("create", "POST", "/a", 201));
        }
        assert!(tally.diagnose().is_empty(), "{:?}", tally.diagnose());
    }

    #[test]
    fn the_advice_to_pass_credentials_needs_the_server_to_ask_for_them() {
        let mut tally = Tally::new(&api_of(&["vault", "admin"]));
        for _ in 0..5 {
            tally.add(&answer("vault", "GET", 403));
        }
        assert!(tally.diagnose().is_empty(), "{:?}", tally.diagnose());
        let mut asked = answer("admin", "GET", 403);
        asked
            .headers
            .push(("www-authenticate".into(), "Bearer realm=\"admin\"".into()));
        tally.add(&asked);
        let said = tally.diagnose().join("\n");
        assert!(said.contains("(admin)"), "{said}");
        assert!(
            said.contains("WWW-Authenticate: Bearer realm=\"admin\""),
            "{said}"
        );
        assert!(!said.contains("vault"), "{said}");
        assert!(said.contains("pass them with -H"), "{said}");
        // With credentials sent, the advice is about them, not to send some.
        let mut given = Tally::new(&api_of(&["admin"])).with_credentials(true);
        given.add(&asked);
        let said = given.diagnose().join("\n");
        assert!(!said.contains("pass them with -H"), "{said}");
        assert!(
            said.contains("credentials the run sends are refused"),
            "{said}"
        );
    }
}
