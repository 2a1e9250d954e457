//! `cartograph replay`: re-run a fault's reproducer against a target.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Args;

use crate::execution::{self, Credentials, RunConfig, Transport, secrets::Secrets};
use crate::model::text::one_line;
use crate::reproduce::Script;
use crate::reproduce::channel::Recorder;
use crate::reproduce::script_run::{ScriptRun, shows, unavailable};
use crate::run::{EXIT_FAULTS, EXIT_UNREACHABLE};

/// Arguments of `cartograph replay`.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 1 the fault showed, 0 it did not, 2 usage error (or the sequence could not run: a response lacked a value a later request needs, or the server answered 502-504 where the run had its answer), 3 target unreachable.\n\nExamples:\n  cartograph replay cartograph-out/reproducers/01-server_error-placeOrder.sh\n  cartograph replay cartograph-out/reproducers/01-server_error-placeOrder.json --target http://127.0.0.1:8080"
)]
pub(super) struct ReplayArgs {
    /// A reproducer from a run's output folder: `reproducers/NAME.json`, or
    /// `reproducers/NAME.sh` (its `.json` twin is read).
    pub reproducer: PathBuf,
    /// Base URL to replay against (default: the run's target); a user and
    /// password in it are sent as Basic auth.
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,
    /// A header sent with every request, `Name: value` (repeatable; a secret).
    #[arg(long = "header", short = 'H', value_name = "'NAME: VALUE'")]
    pub headers: Vec<String>,
    /// An API key sent in the query of every request, `NAME=VALUE`
    /// (repeatable; a secret, as in `run`).
    #[arg(long = "query-key", value_name = "'NAME=VALUE'")]
    pub query_keys: Vec<String>,
    /// Give up on a request after this long.
    #[arg(long, value_parser = super::values::parse_timeout, default_value = "10s", value_name = "DURATION")]
    pub timeout: Duration,
}

/// The identities a reproducer's steps go as (not the anonymous caller).
fn identities_of(script: &Script) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in script.steps.iter().filter_map(|s| s.identity.as_ref()) {
        if name != execution::identities::ANONYMOUS && !out.contains(name) {
            out.push(name.clone());
        }
    }
    out
}

/// Runs the command.
pub(super) fn run(args: &ReplayArgs) -> anyhow::Result<ExitCode> {
    let path = if args.reproducer.extension().is_some_and(|e| e == "sh") {
        args.reproducer.with_extension("json")
    } else {
        args.reproducer.clone()
    };
    let text = std::fs::read_to_string(&path).map_err(|e| {
        anyhow::anyhow!(
            "cannot read {}: {e} (give a reproducer from a run's reproducers/ folder)",
            path.display()
        )
    })?;
    let script: Script = serde_json::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{}: line {}, column {}: not a Cartograph reproducer: {e}",
            path.display(),
            e.line(),
            e.column()
        )
    })?;
    let target = args.target.clone().unwrap_or_else(|| script.target.clone());
    let mut target = crate::run::session::parse_target(&target)?;
    let userinfo = execution::take_userinfo(&mut target);
    let secrets = Secrets::new();
    let mut headers = Vec::new();
    for h in &args.headers {
        headers.push(execution::parse_header(h).map_err(|e| anyhow::anyhow!("--header: {e}"))?);
    }
    // The target's user and password go as Basic auth, as in `run`.
    if let Some(info) = userinfo
        && !headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(&info.header.0))
    {
        headers.push(info.header);
    }
    let query_keys = crate::run::session::parse_query_keys(&args.query_keys)?;
    let credentials = Credentials::new(headers, None, None, secrets).with_query(query_keys);
    // Steps sent as another identity take its headers from the environment,
    // as the shell reproducer does; never from the file.
    for name in identities_of(&script) {
        let var = execution::identities::env_var(&name);
        let mut headers = Vec::new();
        for suffix in ["", "_2", "_3", "_4"] {
            if let Ok(text) = std::env::var(format!("{var}{suffix}"))
                && !text.is_empty()
            {
                headers.push(
                    execution::parse_header(&text)
                        .map_err(|e| anyhow::anyhow!("{var}{suffix}: {e}"))?,
                );
            }
        }
        if headers.is_empty() {
            anyhow::bail!(
                "{}: some steps go as identity {name}: set {var}='Header: value' to its credentials",
                path.display()
            );
        }
        credentials.add_identity(&name, headers);
    }
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        if tokio::net::TcpStream::connect((
            target.host_str().unwrap_or("").trim_matches(['[', ']']),
            target.port_or_known_default().unwrap_or(80),
        ))
        .await
        .is_err()
        {
            eprintln!("error: the target {target} cannot be reached (no TCP connection)");
            return Ok(ExitCode::from(EXIT_UNREACHABLE));
        }
        let config = RunConfig {
            target: target.clone(),
            budget: Some(Duration::from_secs(300)),
            max_requests: Some(script.steps.len() as u64 * 4 + 4),
            seed: 0,
            rate: None,
            burst: 1,
            concurrency: 1,
            read_only: false,
            timeout: args.timeout,
            max_body: 4 * 1024 * 1024,
            max_retries: 3,
            fence: Default::default(),
            per_operation: Vec::new(),
            tls: Default::default(),
            trace_limit: crate::execution::TRACE_LIMIT,
        };
        // Redirects followed as the run followed them.
        let transport =
            Transport::new(target.clone(), config.max_body, 1, &config.tls)
                .map_err(|e| anyhow::anyhow!(e))?
                .without_redirects_for(script.direct.clone());
        let resolve_target = target.clone();
        let run = ScriptRun::new(
            script.clone(),
            Box::new(move |l: &str| execution::target_relative(&resolve_target, l)),
        );
        let driver = Arc::new(Mutex::new(Recorder::new(vec![Box::new(run)])));
        let politeness = Arc::new(config.politeness());
        execution::run(config, transport, credentials, politeness, driver.clone(), |ex| {
            println!(
                "{} {} -> {}",
                one_line(&ex.request.method),
                one_line(&ex.request.path),
                ex.status
                    .map_or_else(|| "no response".to_string(), |s| s.to_string())
            );
        })
        .await;
        if let Some(signal) = execution::interrupt::received() {
            // Cut short by the user: whether the fault shows is not known.
            eprintln!("interrupted ({}): the replay stopped", signal.name());
            return Ok(ExitCode::from(signal.exit_status()));
        }
        let recorded = std::mem::take(&mut driver.lock().unwrap_or_else(|e| e.into_inner()).recorded);
        let exchanges = recorded.into_iter().next().unwrap_or_default();
        if exchanges.len() < script.steps.len() {
            eprintln!(
                "the sequence stopped after {} of {} requests: a response did not give a value a later request needs",
                exchanges.len(),
                script.steps.len()
            );
            return Ok(ExitCode::from(super::EXIT_USAGE));
        }
        let down = script
            .steps
            .iter()
            .zip(&exchanges)
            .find(|(s, e)| unavailable(s.status, e.status));
        match (&script.fault, exchanges.last(), down) {
            (Some(fault), Some(last), _) if shows(&fault.check, last) => {
                println!(
                    "FAULT SHOWS: {} ({})",
                    one_line(&fault.message),
                    fault.code
                );
                Ok(ExitCode::from(EXIT_FAULTS))
            }
            (_, _, Some((step, got))) => {
                eprintln!(
                    "cannot run: {} {} was answered {} where the run was answered {}: the server could not be asked (down, starting, or behind a proxy that lost it); try again when it is up",
                    one_line(&step.method),
                    one_line(&got.request.path),
                    got.status.unwrap_or_default(),
                    step.status.unwrap_or_default()
                );
                Ok(ExitCode::from(super::EXIT_USAGE))
            }
            (Some(fault), _, None) => {
                println!(
                    "the fault did not show: {} ({})",
                    one_line(&fault.signature),
                    fault.code
                );
                Ok(ExitCode::SUCCESS)
            }
            (None, _, None) => Ok(ExitCode::SUCCESS),
        }
    })
}
