//! A log of production GraphQL requests (AutoGraphQL) as a run's source of
//! tests: each logged request sent once, in log order, through the run's
//! one pipeline; every answer checked by the GraphQL oracles, schema
//! coverage measured, faults confirmed, and each request kept as a
//! regression test.

use std::sync::{Arc, Mutex};

use super::RunSummary;
use super::options::RunOptions;
use super::source::{Collected, Ended, Source};
use crate::execution::{Driver, Exchange, RequestSpec, RunConfig, TestRun};
use crate::faults::{Faults, witness::Ledger};
use crate::generation::graphql::coverage::CoverageTally;
use crate::load::SpecSource;
use crate::load::query_log::{LoggedQuery, OpKind, QueryLog};
use crate::model::Api;
use crate::model::graphql::TypeSystem;
use crate::oracles::Checker;
use crate::reports;
use crate::reproduce::phase::{Replays, Suite};
use crate::reproduce::{self, Script, Step, channel::Recorder};

/// One logged request, sent once.
struct Once(Option<RequestSpec>);

impl TestRun for Once {
    fn next_request(&mut self, _done: &[Exchange]) -> Option<RequestSpec> {
        self.0.take()
    }
}

fn request(q: &LoggedQuery) -> RequestSpec {
    RequestSpec {
        operation: q.root_fields.first().cloned().unwrap_or_default(),
        method: "POST".into(),
        // The target is the endpoint itself.
        path: String::new(),
        headers: Vec::new(),
        body: Some(q.body().to_string()),
        content_type: Some("application/json".into()),
        graphql_query: q.kind == OpKind::Query,
        breach: None,
        identity: None,
    }
}

/// Sends the log's requests, checks every answer, confirms the faults and
/// writes the output folder, through the run's one pipeline.
pub(crate) async fn execute(
    api: Arc<Api>,
    source: &SpecSource,
    log: QueryLog,
    log_name: &str,
    target: &str,
    options: &RunOptions,
) -> anyhow::Result<RunSummary> {
    if api.graphql.is_none() {
        anyhow::bail!("the schema is not a GraphQL schema");
    }
    let session = match super::open_session(&api, source, target, options).await? {
        Ok(session) => session,
        Err(unreachable) => return Ok(unreachable),
    };
    let logged = Logged::new(&api, log, options.read_only);
    logged.say(log_name);
    super::drive(api, logged, session, options).await
}

/// A log of GraphQL requests as a source of tests: the requests sent, and
/// what was left out of it.
struct Logged {
    log: QueryLog,
    read_only: bool,
    sent: Vec<LoggedQuery>,
    skipped_mutations: usize,
    subscriptions: usize,
    fenced: usize,
    recorder: Arc<Mutex<Recorder>>,
}

impl Logged {
    /// The requests of `log` this run sends: not those calling an excluded
    /// root field, no subscription, and no mutation when `read_only`.
    fn new(api: &Api, log: QueryLog, read_only: bool) -> Logged {
        let (mut sent, mut skipped_mutations, mut subscriptions, mut fenced) =
            (Vec::new(), 0, 0, 0);
        let excluded = |q: &LoggedQuery| {
            q.root_fields
                .iter()
                .any(|f| api.left_out.iter().any(|op| op.name == *f))
        };
        for q in &log.queries {
            match q.kind {
                _ if excluded(q) => fenced += q.count,
                OpKind::Subscription => subscriptions += 1,
                OpKind::Mutation if read_only => skipped_mutations += q.count,
                _ => sent.push(q.clone()),
            }
        }
        let tests: Vec<Box<dyn TestRun>> = sent
            .iter()
            .map(|q| Box::new(Once(Some(request(q)))) as Box<dyn TestRun>)
            .collect();
        Logged {
            log,
            read_only,
            sent,
            skipped_mutations,
            subscriptions,
            fenced,
            recorder: Arc::new(Mutex::new(Recorder::new(tests))),
        }
    }

    /// Says what of the log is sent, and what is not.
    fn say(&self, log_name: &str) {
        if self.fenced > 0 {
            eprintln!(
                "cartograph: {} logged request(s) left out: they call an excluded root field",
                self.fenced
            );
        }
        if self.subscriptions > 0 {
            eprintln!(
                "warning: {} subscription(s) left out: they need a streaming transport",
                self.subscriptions
            );
        }
        eprintln!(
            "cartograph: {} GraphQL request(s) in {}: {} distinct, {} duplicate(s); sending {}{}",
            self.log.requests,
            log_name,
            self.log.queries.len(),
            self.log.duplicates(),
            self.sent.len(),
            if self.skipped_mutations > 0 {
                format!(
                    " (read-only: {} mutation request(s) skipped)",
                    self.skipped_mutations
                )
            } else {
                String::new()
            }
        );
    }

    /// The schema's root fields a replay can reach (read-only replays
    /// cannot reach mutations: they do not count).
    fn roots(&self, ts: &TypeSystem) -> usize {
        let fields_of = |t: &Option<String>| {
            t.as_ref()
                .and_then(|t| ts.get(t))
                .map_or(0, |t| t.fields.len())
        };
        fields_of(&ts.query_type)
            + if self.read_only {
                0
            } else {
                fields_of(&ts.mutation_type)
            }
    }
}

impl Source for Logged {
    fn configure(&self, config: &mut RunConfig) {
        // Recorded as 0: replaying a log draws nothing at random.
        config.seed = 0;
        config.budget = None;
        config.max_requests = None;
        // In log order, one at a time: a production session's mutations come
        // before the queries that read what they made.
        config.concurrency = 1;
    }

    fn driver(&self) -> Arc<Mutex<dyn Driver>> {
        self.recorder.clone()
    }

    fn collect(self, ended: Ended<'_>) -> anyhow::Result<Collected> {
        let Some(ts) = ended.api.graphql.as_ref() else {
            anyhow::bail!("the schema is not a GraphQL schema");
        };
        let recorded = std::mem::take(
            &mut self
                .recorder
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .recorded,
        );
        let checker = Checker::new(
            ended.api,
            ended.options.skip_checks.clone(),
            Some(ended.target.clone()),
        );
        let mut faults = Faults::new();
        let ledger = Ledger::new();
        // A log's GraphQL requests plant no wrong body members.
        let echoes = crate::oracles::echoes::Echoes::new();
        let mut coverage = CoverageTally::new(ts, self.roots(ts));
        let mut scripts = Vec::new();
        for (q, exchanges) in self.sent.iter().zip(&recorded) {
            let Some(ex) = exchanges.last() else { continue };
            let findings = checker.test(ended.api, exchanges);
            faults.record(exchanges, &findings, &ledger);
            coverage.add(&crate::oracles::graphql::inspect(
                ts,
                &q.query,
                q.operation_name.as_deref(),
                &q.variables,
                ex.status,
                ex.json(),
                &ex.body,
            ));
            scripts.push(suite_script(q, ex, ended.target, scripts.len()));
        }
        let mut report = ended
            .tally
            .report(ended.settings, ended.outcome, faults.faults());
        report.schema_coverage = Some(coverage.summary());
        report.query_log = Some(reports::QueryLogSummary {
            requests: self.log.requests as u64,
            distinct: self.log.queries.len() as u64,
            duplicates: self.log.duplicates() as u64,
            sent: self.sent.len() as u64,
            skipped_mutations: self.skipped_mutations as u64,
            unreadable: self.log.warnings.len() as u64,
        });
        // A logged request names what the log's mutations made on this server.
        let mutated = self.sent.iter().any(|q| q.kind == OpKind::Mutation);
        let fault_scripts: Vec<Vec<reproduce::Script>> = faults
            .kept()
            .take_while(|_| super::source::replays_ahead(ended.until))
            .map(|k| {
                let known = reproduce::candidates::Known {
                    ledger: &ledger,
                    echoes: &echoes,
                };
                let mut scripts = reproduce::candidates::fault_script(
                    ended.api,
                    &checker,
                    known,
                    ended.target.as_str(),
                    k,
                );
                for s in scripts.iter_mut().filter(|_| mutated) {
                    s.standalone = false;
                    s.not_standalone
                        .push("the log's mutations made what it names on this server".into());
                }
                scripts
            })
            .collect();
        Ok(Collected {
            report,
            graph: crate::graph::export::to_document(&crate::graph::build(ended.api)),
            replays: Replays {
                api: ended.api.clone(),
                checker,
                ledger,
                echoes,
                first: fault_scripts.len(),
                faults: fault_scripts,
                slow: Vec::new(),
            },
            suite: Suite::Recorded(scripts),
            suite_doc: None,
            answers: Default::default(),
        })
    }
}

/// The regression test of logged request `q`, answered `ex`.
fn suite_script(
    q: &LoggedQuery,
    ex: &Exchange,
    target: &url::Url,
    archived: usize,
) -> reproduce::suite::SuiteScript {
    let errors = reproduce::suite::graphql_errors(ex);
    let seen = if q.count > 1 {
        format!(", {} times", q.count)
    } else {
        String::new()
    };
    reproduce::suite::SuiteScript {
        archived,
        script: Script {
            target: target.to_string(),
            fault: None,
            steps: vec![Step {
                operation: ex.request.operation.clone(),
                method: "POST".into(),
                path: String::new(),
                headers: Vec::new(),
                content_type: Some("application/json".into()),
                body: ex.request.body.clone(),
                graphql_query: q.kind == OpKind::Query,
                breach: None,
                identity: None,
                captures: Vec::new(),
                status: ex.status,
                graphql_clean: ex.status.is_some() && !errors,
            }],
            standalone: true,
            not_standalone: Vec::new(),
            direct: Vec::new(),
            planted: 0,
            fresh: None,
            unmade: Vec::new(),
        },
        title: format!("{}: logged at {}{seen}", q.root_fields.join(", "), q.source),
    }
}
