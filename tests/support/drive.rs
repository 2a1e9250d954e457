//! Sending hand-written scripts through the library's own engine, as a run
//! sends its requests (same transport, redirects followed as the run
//! follows them), and judging the answers with the run's oracles.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use cartograph::execution::{self, Credentials, Exchange, RunConfig, secrets::Secrets};
use cartograph::model::Api;
use cartograph::oracles::Checker;
use cartograph::reproduce::channel::Recorder;
use cartograph::reproduce::script_run::ScriptRun;
use cartograph::reproduce::{Capture, Script, Source, Step};

/// The API of a description file (relative to the crate root).
pub fn api(path: &str) -> Api {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    cartograph::load::load(&path).unwrap().api
}

/// A step of `operation`: `METHOD path`, with a JSON body when given.
pub fn step(operation: &str, method: &str, path: &str, body: Option<&str>) -> Step {
    Step {
        operation: operation.into(),
        method: method.into(),
        path: path.into(),
        headers: Vec::new(),
        content_type: body.map(|_| "application/json".to_string()),
        body: body.map(str::to_string),
        graphql_query: false,
        breach: None,
        identity: None,
        captures: Vec::new(),
        status: None,
        graphql_clean: false,
    }
}

/// `step` capturing the body's value at `pointer` into `var`.
pub fn capturing(mut step: Step, var: &str, pointer: &str) -> Step {
    step.captures.push(Capture {
        var: var.into(),
        from: Source::Json {
            pointer: pointer.into(),
        },
    });
    step
}

/// Sends `steps` in order to `base` (each waiting at most `timeout`) and
/// returns the exchanges.
pub async fn send(api: &Api, base: &str, steps: Vec<Step>, timeout: Duration) -> Vec<Exchange> {
    let target = url::Url::parse(base).unwrap();
    let config = RunConfig {
        target: target.clone(),
        budget: Some(Duration::from_secs(120)),
        max_requests: Some(steps.len() as u64 * 2 + 2),
        seed: 0,
        rate: None,
        burst: 1,
        concurrency: 1,
        read_only: false,
        timeout,
        max_body: 1 << 20,
        max_retries: 0,
        fence: Default::default(),
        per_operation: Vec::new(),
        tls: Default::default(),
        trace_limit: cartograph::execution::TRACE_LIMIT,
    };
    let script = Script {
        target: base.into(),
        fault: None,
        steps,
        standalone: true,
        unmade: Vec::new(),
        not_standalone: Vec::new(),
        direct: Vec::new(),
        planted: 0,
        fresh: None,
    };
    let resolve = target.clone();
    let run = ScriptRun::new(
        script,
        Box::new(move |l: &str| execution::target_relative(&resolve, l)),
    );
    let driver = Arc::new(Mutex::new(Recorder::new(vec![Box::new(run)])));
    let credentials = Credentials::new(Vec::new(), None, None, Secrets::new());
    let link = cartograph::testing::Link::new(api, config, credentials).unwrap();
    execution::run(
        link.config,
        link.transport,
        link.credentials,
        link.politeness,
        driver.clone(),
        |_| {},
    )
    .await;
    let recorded = std::mem::take(&mut driver.lock().unwrap().recorded);
    recorded.into_iter().next().unwrap_or_default()
}

/// The codes the oracles find in each exchange, judged as one test.
pub fn codes(api: &Api, base: &str, exchanges: &[Exchange]) -> Vec<Vec<&'static str>> {
    let checker = Checker::new(api, Vec::new(), url::Url::parse(base).ok());
    checker
        .test(api, exchanges)
        .into_iter()
        .map(|found| found.into_iter().map(|f| f.code.as_str()).collect())
        .collect()
}
