//! Confirming and shrinking faults against the target: each fault's script is
//! replayed (twice at most) to confirm it, then steps are removed one at a
//! time (never one that feeds a later step a value, never the last, never
//! one that plants what the fault needs: [`Script::planted`]), then
//! query parameters and top-level body fields (never the input a negative
//! test breaches, never a field of a GraphQL request: its `variables` are
//! part of the query), keeping each removal after which the last step still
//! shows the same fault for the same reason: the same signature, the same
//! cause (`faults::causes`), and the breach it notes still carried.

use std::collections::VecDeque;
use std::sync::Arc;

use serde_json::Value;

use super::Script;
use super::script_run::ScriptRun;
use crate::execution::{Driver, Exchange, TestRun};
use crate::faults::Confirmation;
use crate::model::Api;
use crate::oracles::Checker;

/// Replays of one fault's script, at most (confirmation included).
pub const MAX_RUNS: usize = 40;

/// A fault to confirm and shrink.
#[derive(Debug, Clone)]
pub struct Job {
    /// Its signature.
    pub signature: String,
    /// Its script (the completed smallest witness).
    pub script: Script,
    /// Scripts to confirm with when `script` does not show it (the first witness).
    pub alternates: Vec<Script>,
    /// Whether to shrink it once confirmed: not when it calls an operation
    /// the search found slow (each of the dozens of tries would wait on it).
    pub shrink: bool,
}

/// What became of a job.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The fault's signature.
    pub signature: String,
    /// Whether it showed again.
    pub confirmation: Confirmation,
    /// The smallest script that still showed it (statuses from its last replay).
    pub script: Script,
    /// Requests spent on it.
    pub requests: u64,
    /// What its script did when run after a reset (with a reset only).
    pub fresh: Option<crate::faults::Fresh>,
}

/// A removal tried on the best script so far.
#[derive(Debug, Clone)]
enum Cut {
    Step(usize),
    /// Steps `start..start + len`, removed last first (a step feeding only
    /// steps of the span may go with them).
    Span(usize, usize),
    Query(usize, String),
    Field(usize, String),
}

struct Current {
    job: Job,
    best: Script,
    confirmed: bool,
    /// Why the confirming replay showed the fault (its cause's key): every
    /// shrunk script must show it for the same reason.
    reason: Option<String>,
    tries: usize,
    /// Replays whose last request got an answer.
    answered: usize,
    runs: usize,
    requests: u64,
    cuts: VecDeque<Cut>,
    values_queued: bool,
    /// Steps removed at once by the cuts under way (1: one at a time).
    span: usize,
    trying: Option<Script>,
}

/// The driver of the confirmation phase.
pub struct ShrinkDriver {
    api: Arc<Api>,
    checker: Checker,
    jobs: VecDeque<Job>,
    current: Option<Current>,
    outcomes: Vec<Outcome>,
    /// Whether step removals start with halves, then quarters… (each try
    /// after a reset is dear, and a prefix of the run's writes is long).
    spans: bool,
}

/// Whether a step's variables are used by a later step.
fn feeds(script: &Script, i: usize) -> bool {
    script.steps[i].captures.iter().any(|c| {
        let mark = format!("{{{{{}}}}}", c.var);
        script.steps[i + 1..].iter().any(|s| {
            s.path.contains(&mark)
                || s.body.as_deref().is_some_and(|b| b.contains(&mark))
                || s.headers.iter().any(|(_, v)| v.contains(&mark))
        })
    })
}

/// A JSON body with `{{var}}` markers as a value (bare markers become marked strings).
fn parse_marked(body: &str) -> Option<Value> {
    let mut text = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(start) = rest.find("{{") {
        let end = rest[start..].find("}}")? + start;
        let name = &rest[start + 2..end];
        let quoted = rest[..start].ends_with('"');
        text.push_str(&rest[..start]);
        if quoted {
            text.push_str(&rest[start..end + 2]);
        } else {
            text.push_str(&format!("\"\\u0002{name}\""));
        }
        rest = &rest[end + 2..];
    }
    text.push_str(rest);
    crate::execution::wire::parse_json_exact(&text).ok()
}

fn unparse_marked(v: &Value) -> String {
    let text = crate::execution::wire::json_text(v);
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(start) = rest.find("\"\\u0002") {
        let Some(len) = rest[start + 7..].find('"') else {
            break;
        };
        out.push_str(&rest[..start]);
        out.push_str(&format!("{{{{{}}}}}", &rest[start + 7..start + 7 + len]));
        rest = &rest[start + 7 + len + 1..];
    }
    out.push_str(rest);
    out
}

/// The step removals of a script of `n` steps, `span` at a time, last
/// first (so that a removal leaves the steps of those still queued where
/// they were); never the last step, nor the `planted` first ones.
fn step_cuts(n: usize, planted: usize, span: usize) -> VecDeque<Cut> {
    let removable = planted..n.saturating_sub(1);
    if span <= 1 {
        return removable.rev().map(Cut::Step).collect();
    }
    let mut cuts = VecDeque::new();
    let mut end = removable.end;
    while end > removable.start {
        let start = end.saturating_sub(span).max(removable.start);
        cuts.push_back(Cut::Span(start, end - start));
        end = start;
    }
    cuts
}

fn apply(script: &Script, cut: &Cut) -> Option<Script> {
    let mut s = script.clone();
    match cut {
        Cut::Span(start, len) => {
            for i in (*start..start + len).rev() {
                if i + 1 >= s.steps.len() || s.kept_by_shrinking(i) || feeds(&s, i) {
                    return None;
                }
                s.steps.remove(i);
            }
        }
        Cut::Step(i) => {
            // The planting steps stay: the fault began after them, and once
            // replayed they are on the server, so every later replay would
            // show it whether the script still planted or not.
            if *i + 1 >= s.steps.len() || s.kept_by_shrinking(*i) || feeds(&s, *i) {
                return None;
            }
            s.steps.remove(*i);
        }
        Cut::Query(i, key) => {
            let step = s.steps.get_mut(*i)?;
            let (path, query) = step.path.split_once('?')?;
            let kept: Vec<&str> = query
                .split('&')
                .filter(|p| p.split('=').next() != Some(key.as_str()))
                .collect();
            if kept.len() == query.split('&').count() {
                return None;
            }
            step.path = if kept.is_empty() {
                path.to_string()
            } else {
                format!("{path}?{}", kept.join("&"))
            };
        }
        Cut::Field(i, key) => {
            let step = s.steps.get_mut(*i)?;
            let mut body = parse_marked(step.body.as_deref()?)?;
            body.as_object_mut()?.shift_remove(key)?;
            step.body = Some(unparse_marked(&body));
        }
    }
    Some(s)
}

/// The value removals to try on a script, last step first. A step's
/// breached input is never cut (the request would no longer be the
/// negative test it notes), nor any field of a GraphQL request (`graphql`).
fn value_cuts(script: &Script, graphql: bool) -> Vec<Cut> {
    let mut cuts = Vec::new();
    for (i, step) in script.steps.iter().enumerate().rev() {
        if script.kept_by_shrinking(i) {
            continue;
        }
        let breached = step.breach.as_ref().map(|b| b.input.as_str());
        if let Some((_, query)) = step.path.split_once('?') {
            for pair in query.split('&') {
                let key = pair.split('=').next().unwrap_or("");
                let name = url::form_urlencoded::parse(key.as_bytes())
                    .next()
                    .map(|(k, _)| k.into_owned())
                    .unwrap_or_default();
                let kept = breached == Some(format!("query {name}").as_str());
                if !pair.contains("{{") && !key.is_empty() && !kept {
                    cuts.push(Cut::Query(i, key.to_string()));
                }
            }
        }
        if graphql {
            continue;
        }
        if let Some(Value::Object(fields)) = step.body.as_deref().and_then(parse_marked) {
            for (k, v) in fields {
                let kept = breached
                    .and_then(|b| b.strip_prefix("body /"))
                    .is_some_and(|p| p.split('/').next() == Some(k.as_str()));
                if !kept
                    && !v
                        .as_str()
                        .is_some_and(|s| s.contains("{{") || s.starts_with('\u{2}'))
                {
                    cuts.push(Cut::Field(i, k));
                }
            }
        }
    }
    cuts
}

impl ShrinkDriver {
    /// A driver for `jobs`, judged by `checker`.
    pub fn new(api: Arc<Api>, checker: Checker, jobs: Vec<Job>) -> ShrinkDriver {
        ShrinkDriver {
            api,
            checker,
            jobs: jobs.into(),
            current: None,
            outcomes: Vec::new(),
            spans: false,
        }
    }

    /// The same, removing steps by halves, quarters… before one by one.
    pub fn by_spans(mut self) -> ShrinkDriver {
        self.spans = true;
        self
    }

    fn run(&self, script: Script) -> Box<dyn TestRun> {
        let checker = self.checker.clone();
        Box::new(ScriptRun::new(
            script,
            Box::new(move |l: &str| checker.location_path(l)),
        ))
    }

    fn close(&mut self) {
        if let Some(c) = self.current.take() {
            self.outcomes.push(Outcome {
                signature: c.job.signature,
                confirmation: if c.confirmed {
                    Confirmation::Confirmed
                } else if c.tries > 0 && c.answered == 0 {
                    // Every replay went unanswered: nothing says the fault
                    // is gone.
                    Confirmation::NoAnswer
                } else if c.tries > 0 {
                    Confirmation::Flaky
                } else {
                    Confirmation::NotReplayed
                },
                script: c.best,
                requests: c.requests,
                fresh: None,
            });
        }
    }

    /// Every job's outcome, including those the run did not get to.
    pub fn outcomes(&mut self) -> Vec<Outcome> {
        self.close();
        for job in std::mem::take(&mut self.jobs) {
            self.outcomes.push(Outcome {
                signature: job.signature,
                confirmation: Confirmation::NotReplayed,
                script: job.script,
                requests: 0,
                fresh: None,
            });
        }
        std::mem::take(&mut self.outcomes)
    }

    /// Whether the last exchange shows fault `signature` ([`judge`]).
    fn shows(
        &self,
        signature: &str,
        exchanges: &[Exchange],
    ) -> Option<(String, crate::oracles::FaultCheck)> {
        judge(&self.api, &self.checker, signature, exchanges)
    }
}

/// Whether the last exchange shows fault `signature`: its cause's key and
/// the script check it gives, when it does. A finding on a request whose
/// breach the request no longer carries does not count.
pub fn judge(
    api: &Api,
    checker: &Checker,
    signature: &str,
    exchanges: &[Exchange],
) -> Option<(String, crate::oracles::FaultCheck)> {
    let last = exchanges.last()?;
    if last
        .request
        .breach
        .as_ref()
        .is_some_and(|b| !b.carried_by(&last.request))
    {
        return None;
    }
    checker
        .test(api, exchanges)
        .pop()?
        .into_iter()
        .find(|f| f.signature(last.status) == signature)
        .map(|f| {
            (
                crate::faults::causes::reason(&f, last).key,
                f.script_check(last.status),
            )
        })
}

impl Driver for ShrinkDriver {
    fn next_test(&mut self) -> Option<Box<dyn TestRun>> {
        loop {
            if self.current.is_none() {
                let job = self.jobs.pop_front()?;
                self.current = Some(Current {
                    best: job.script.clone(),
                    job,
                    confirmed: false,
                    reason: None,
                    tries: 0,
                    answered: 0,
                    runs: 0,
                    requests: 0,
                    cuts: VecDeque::new(),
                    values_queued: false,
                    span: 1,
                    trying: None,
                });
            }
            let c = self.current.as_mut()?;
            if c.runs >= MAX_RUNS {
                self.close();
                continue;
            }
            if !c.confirmed {
                // The smallest witness, then the alternates, then the smallest again.
                let attempts: Vec<&Script> = std::iter::once(&c.job.script)
                    .chain(&c.job.alternates)
                    .chain(std::iter::once(&c.job.script))
                    .collect();
                let Some(script) = attempts.get(c.tries).map(|s| (*s).clone()) else {
                    self.close();
                    continue;
                };
                c.trying = Some(script.clone());
                return Some(self.run(script));
            }
            if c.cuts.is_empty() && !c.values_queued {
                // The cuts left could not apply (a span holding a step a
                // later one feeds on): smaller spans, then the values, as
                // after a try that did not show the fault.
                if c.span > 1 {
                    c.span /= 2;
                    c.cuts = step_cuts(c.best.steps.len(), c.best.planted, c.span);
                } else {
                    c.values_queued = true;
                    c.cuts = value_cuts(&c.best, self.api.graphql.is_some()).into();
                }
                continue;
            }
            let Some(cut) = c.cuts.pop_front() else {
                self.close();
                continue;
            };
            if let Some(candidate) = apply(&c.best, &cut) {
                c.trying = Some(candidate.clone());
                return Some(self.run(candidate));
            }
        }
    }

    fn finished(&mut self, test: Box<dyn TestRun>, exchanges: &[Exchange]) {
        let Some(signature) = self.current.as_ref().map(|c| c.job.signature.clone()) else {
            return;
        };
        let any: Box<dyn std::any::Any> = test;
        let complete = any
            .downcast::<ScriptRun>()
            .is_ok_and(|r| r.missing.is_empty() && exchanges.len() == r.script.steps.len());
        let shown = if complete {
            self.shows(&signature, exchanges)
        } else {
            None
        };
        let graphql = self.api.graphql.is_some();
        let spans = self.spans;
        let Some(c) = self.current.as_mut() else {
            return;
        };
        // Once confirmed, the fault must show for the reason it showed then.
        let shown =
            shown.filter(|(reason, _)| c.reason.is_none() || c.reason.as_ref() == Some(reason));
        c.runs += 1;
        c.requests += exchanges.len() as u64;
        if exchanges.last().is_some_and(|e| e.status.is_some()) {
            c.answered += 1;
        }
        let Some(mut tried) = c.trying.take() else {
            return;
        };
        if let Some((reason, check)) = shown {
            for (step, ex) in tried.steps.iter_mut().zip(exchanges) {
                step.status = ex.status;
            }
            // The check as this very run showed it: a shorter sequence
            // may show the fault elsewhere in the body.
            if let Some(f) = tried.fault.as_mut() {
                f.check = check;
            }
            c.best = tried;
            if !c.confirmed {
                c.confirmed = true;
                c.reason = Some(reason);
                if spans {
                    // After a reset every try starts from a fresh server, so
                    // the planting steps may go too: a step stays only when
                    // the fault needs it (the demo's price PATCH was kept
                    // behind a DELETE the run had made before it).
                    c.best.planted = 0;
                }
                let n = c.best.steps.len();
                c.span = if spans {
                    (n.saturating_sub(1) / 2).max(1)
                } else {
                    1
                };
                c.cuts = step_cuts(n, c.best.planted, c.span);
                if !c.job.shrink {
                    c.cuts.clear();
                    c.values_queued = true;
                }
            }
        } else if !c.confirmed {
            c.tries += 1;
        }
        while c.confirmed && c.cuts.is_empty() && c.span > 1 && !c.values_queued {
            c.span /= 2;
            c.cuts = step_cuts(c.best.steps.len(), c.best.planted, c.span);
        }
        if c.confirmed && c.cuts.is_empty() && !c.values_queued {
            // Step removals are done: the values' turn, once.
            c.values_queued = true;
            c.cuts = value_cuts(&c.best, graphql).into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracles::registry::Code;

    #[test]
    fn marked_bodies_survive_a_field_cut() {
        let body = r#"{"bookId":{{book_id}},"note":"{{x}}","quantity":1}"#;
        let v = parse_marked(body).unwrap();
        assert_eq!(unparse_marked(&v), body);
        let script = Script {
            target: "http://127.0.0.1:1".into(),
            fault: None,
            steps: vec![crate::reproduce::Step {
                operation: "placeOrder".into(),
                method: "POST".into(),
                path: "/orders?dry=1&x={{a}}".into(),
                headers: vec![],
                content_type: Some("application/json".into()),
                body: Some(body.into()),
                graphql_query: false,
                breach: None,
                identity: None,
                captures: vec![],
                status: Some(201),
                graphql_clean: false,
            }],
            standalone: true,
            unmade: Vec::new(),
            not_standalone: Vec::new(),
            direct: Vec::new(),
            planted: 0,
            fresh: None,
        };
        let cuts = value_cuts(&script, false);
        assert_eq!(cuts.len(), 2, "{cuts:?}");
        let cut = apply(&script, &cuts[1]).unwrap();
        assert_eq!(
            cut.steps[0].body.as_deref(),
            Some(r#"{"bookId":{{book_id}},"note":"{{x}}"}"#)
        );
        let cut = apply(&script, &cuts[0]).unwrap();
        assert_eq!(cut.steps[0].path, "/orders?x={{a}}");
    }

    fn step(path: &str, body: &str, breach: Option<&str>) -> crate::reproduce::Step {
        crate::reproduce::Step {
            operation: "op".into(),
            method: "POST".into(),
            path: path.into(),
            headers: vec![],
            content_type: Some("application/json".into()),
            body: Some(body.into()),
            graphql_query: false,
            breach: breach.map(|input| crate::execution::Breach {
                input: input.into(),
                kind: crate::execution::BreachKind::WrongType,
                class: None,
            }),
            identity: None,
            captures: vec![],
            status: Some(201),
            graphql_clean: false,
        }
    }

    fn script(steps: Vec<crate::reproduce::Step>) -> Script {
        Script {
            target: "http://127.0.0.1:1".into(),
            fault: None,
            steps,
            standalone: true,
            unmade: Vec::new(),
            not_standalone: Vec::new(),
            direct: Vec::new(),
            planted: 0,
            fresh: None,
        }
    }

    #[test]
    fn the_breached_input_is_never_cut() {
        let s = script(vec![step(
            "/entries?limit=abc&x=1",
            r#"{"index":"abc","note":"n"}"#,
            Some("body /index"),
        )]);
        let cuts = value_cuts(&s, false);
        assert!(
            !cuts
                .iter()
                .any(|c| matches!(c, Cut::Field(_, k) if k == "index")),
            "{cuts:?}"
        );
        assert_eq!(cuts.len(), 3, "{cuts:?}");
        let s = script(vec![step(
            "/items?limit=abc&x=1",
            "{}",
            Some("query limit"),
        )]);
        let cuts = value_cuts(&s, false);
        assert!(
            !cuts
                .iter()
                .any(|c| matches!(c, Cut::Query(_, k) if k == "limit")),
            "{cuts:?}"
        );
    }

    #[test]
    fn a_graphql_request_keeps_its_variables() {
        let s = script(vec![step(
            "",
            r#"{"query":"query Q($n: Int!) { count(n: $n) }","variables":{"n":1}}"#,
            None,
        )]);
        assert!(value_cuts(&s, true).is_empty());
    }

    #[test]
    fn spans_are_cut_last_first_and_a_feeder_goes_with_what_it_feeds() {
        // Nine steps: eight removable; halves of four, last first.
        let cuts: Vec<String> = step_cuts(9, 0, 4)
            .iter()
            .map(|c| format!("{c:?}"))
            .collect();
        assert_eq!(cuts, ["Span(4, 4)", "Span(0, 4)"]);
        // Planted steps stay out of every span.
        let cuts: Vec<String> = step_cuts(9, 2, 4)
            .iter()
            .map(|c| format!("{c:?}"))
            .collect();
        assert_eq!(cuts, ["Span(4, 4)", "Span(2, 2)"]);
        assert_eq!(step_cuts(3, 0, 1).len(), 2);
        // A creation feeding a step of the same span goes with it; one
        // feeding a step after the span does not.
        let mut make = step("/things", "{}", None);
        make.captures.push(crate::reproduce::Capture {
            var: "id".into(),
            from: crate::reproduce::Source::LocationId,
        });
        let s = script(vec![
            make,
            step("/things/{{id}}", "{}", None),
            step("/other", "{}", None),
        ]);
        let cut = apply(&s, &Cut::Span(0, 2)).unwrap();
        assert_eq!(cut.steps.len(), 1);
        assert!(apply(&s, &Cut::Span(0, 1)).is_none());
    }

    #[test]
    fn planting_steps_are_never_cut() {
        let mut s = script(vec![
            step(
                "/comments",
                r#"{"postId":null,"body":"b"}"#,
                Some("body /postId"),
            ),
            step("/posts", r#"{"title":"t"}"#, None),
            step("/posts/1", r#"{"x":1}"#, None),
        ]);
        s.planted = 1;
        assert!(apply(&s, &Cut::Step(0)).is_none());
        assert!(apply(&s, &Cut::Step(1)).is_some());
        let cuts = value_cuts(&s, false);
        assert!(
            cuts.iter()
                .all(|c| !matches!(c, Cut::Field(0, _) | Cut::Query(0, _))),
            "{cuts:?}"
        );
        let kept = apply(&s, &Cut::Step(1)).unwrap();
        assert_eq!(kept.planted, 1);
        assert_eq!(kept.steps.len(), 2);
    }

    /// A 409 conflict's script makes what it conflicts with: the same
    /// creation just before the last step. On the run's state both answer
    /// 409, so shrinking there would cut it, and on a fresh server the
    /// last one would then be created.
    #[test]
    fn the_creation_a_conflict_needs_is_never_cut() {
        let pool = r#"{"name":"FE5xmh2","description":null}"#;
        let mut s = script(vec![
            step("/block_schemas/filter", "{}", None),
            step("/work_pools/", pool, None),
            step("/work_pools/", pool, None),
        ]);
        s.fault = Some(crate::reproduce::ScriptFault {
            code: Code::UndocumentedStatus,
            signature: "undocumented_status:create_work_pool:409".into(),
            message: "status 409 is not documented".into(),
            check: crate::oracles::FaultCheck::Status { status: 409 },
        });
        assert!(s.makes_its_conflict());
        assert!(apply(&s, &Cut::Step(1)).is_none());
        assert!(apply(&s, &Cut::Span(0, 2)).is_none());
        assert!(apply(&s, &Cut::Step(0)).is_some());
        let cuts = value_cuts(&s, false);
        assert!(
            cuts.iter().all(|c| !matches!(c, Cut::Field(1, _))),
            "{cuts:?}"
        );
        // Another fault of the same steps keeps no such step.
        s.fault.as_mut().unwrap().signature = "server_error:create_work_pool:500".into();
        assert!(!s.makes_its_conflict());
        assert!(apply(&s, &Cut::Step(1)).is_some());
    }
}
