//! What every run sets up before its first request: the target (with the
//! description's base path), the checks named on the command line, the
//! credentials and the secrets to keep out of files, the seed, the settings
//! the report records, and whether the target answers at all.

use std::time::Duration;

use super::options::RunOptions;
use super::RunSummary;
use crate::execution::{self, secrets::Secrets, Credentials};
use crate::load::SpecSource;
use crate::model::Api;
use crate::reports::{self, Settings, Tally};

/// The schema of the GraphQL endpoint `target`, from the standard
/// introspection query (sent with the flags' headers).
pub async fn introspect(target: &str, flags: &RunOptions) -> anyhow::Result<Api> {
    let endpoint = url::Url::parse(target)
        .map_err(|e| anyhow::anyhow!("--target {target:?} is not a URL: {e}"))?;
    let mut headers = Vec::new();
    for h in &flags.headers {
        headers.push(execution::parse_header(h).map_err(|e| anyhow::anyhow!("--header: {e}"))?);
    }
    let loaded = crate::load::introspection::fetch(&flags.client()?, &endpoint, &headers).await?;
    eprintln!(
        "cartograph: schema from introspection: {} root fields",
        loaded.api.operations.len()
    );
    Ok(loaded.api)
}

/// What every command that talks to a target sets up first.
pub struct Session {
    /// The target, parsed.
    pub target: url::Url,
    /// Secrets to redact from every file.
    pub secrets: Secrets,
    /// Credentials from the flags.
    pub credentials: Credentials,
    /// The seed (given or drawn).
    pub seed: u64,
    /// Settings as the report records them.
    pub settings: Settings,
    /// Per-operation counts, all zero.
    pub tally: Tally,
}

/// Checks the flags, creates the output folder and checks the target answers
/// TCP; when it does not, writes an empty report and returns the summary to
/// end with (exit status 3).
pub async fn open_session(
    api: &Api,
    source: &SpecSource,
    target: &str,
    flags: &RunOptions,
) -> anyhow::Result<Result<Session, RunSummary>> {
    let target_url = url::Url::parse(target)
        .map_err(|e| anyhow::anyhow!("--target {target:?} is not a URL: {e}"))?;
    if !matches!(target_url.scheme(), "http" | "https") {
        anyhow::bail!("--target must be an http:// or https:// URL");
    }
    let target_url = with_base_path(target_url, api);
    for (flag, codes) in [
        ("--skip-check", &flags.skip_checks),
        ("--fail-on", &flags.fail_on),
    ] {
        for code in codes {
            if let Err(e) = crate::oracles::registry::resolve(code) {
                anyhow::bail!("{flag}: {e}");
            }
        }
    }
    let secrets = Secrets::new();
    let mut headers = Vec::new();
    for h in &flags.headers {
        headers.push(execution::parse_header(h).map_err(|e| anyhow::anyhow!("--header: {e}"))?);
    }
    let credentials = Credentials::new(
        headers.clone(),
        flags.auth_command.clone(),
        flags.auth_refresh,
        secrets.clone(),
    );
    let seed = flags.seed.unwrap_or_else(rand::random::<u64>);

    std::fs::create_dir_all(&flags.out)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", flags.out.display()))?;
    let settings = Settings {
        target: target_url.to_string(),
        spec: source.location.clone(),
        seed,
        budget_s: flags.budget.map(|b| b.as_secs_f64()),
        max_requests: flags.max_requests,
        rate_per_s: flags.rate.map(|r| r.per_second),
        burst: flags.burst,
        concurrency: flags.concurrency,
        read_only: flags.read_only,
        timeout_s: flags.timeout.as_secs_f64(),
        headers: headers.iter().map(|(n, _)| n.clone()).collect(),
        auth_command: flags.auth_command.is_some(),
        skipped_checks: flags.skip_checks.clone(),
        graph: !flags.no_graph,
        feedback: !flags.no_feedback && !flags.no_graph,
        include: flags.select.include.clone(),
        exclude: flags.select.exclude.clone(),
        excluded_operations: api.left_out.iter().map(|op| op.name.clone()).collect(),
        rate_for: flags
            .rate_for
            .iter()
            .map(|(p, r)| (p.clone(), r.per_second))
            .collect(),
        insecure: flags.insecure,
    };

    let tally = Tally::new(api).with_lines(&source.lines);
    if !reachable(&target_url).await {
        eprintln!("error: the target {target_url} cannot be reached (no TCP connection)");
        let outcome = execution::RunOutcome {
            requests: 0,
            refused: 0,
            fenced: 0,
            stop: execution::StopReason::Exhausted,
            elapsed: Duration::ZERO,
            auth_error: None,
            unreachable: Some(format!("no TCP connection to {target_url}")),
        };
        let report = tally.report(settings, &outcome, Vec::new());
        reports::write_report(&flags.out, &report, &secrets)?;
        return Ok(Err(RunSummary {
            report,
            unreachable: true,
            fail_on: flags.fail_on.clone(),
            graph: None,
            spec_fixes: None,
        }));
    }
    Ok(Ok(Session {
        target: target_url,
        secrets,
        credentials,
        seed,
        settings,
        tally,
    }))
}

/// The target with the description's base path added when the target
/// names no path of its own (`--target http://h:8080` for a description
/// whose paths live under `/api`); a target with a path is used as it is.
pub fn with_base_path(target: url::Url, api: &Api) -> url::Url {
    let Some(base) = api.base_path() else {
        return target;
    };
    if !target.path().trim_end_matches('/').is_empty() {
        return target;
    }
    let mut joined = target.clone();
    joined.set_path(&base);
    eprintln!(
        "cartograph: requests go to {joined} (the description's base path {base} under --target; give --target a path to override it)"
    );
    joined
}

/// Whether a TCP connection to the target's host and port can be opened.
async fn reachable(url: &url::Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let port = url.port_or_known_default().unwrap_or(80);
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    matches!(
        tokio::time::timeout(
            Duration::from_secs(5),
            tokio::net::TcpStream::connect((host, port))
        )
        .await,
        Ok(Ok(_))
    )
}
