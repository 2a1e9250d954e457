//! What every run sets up before its first request: the target (with the
//! description's base path), the checks named on the command line, the
//! credentials and the secrets to keep out of files, the seed, the settings
//! the report records, and whether the target answers at all.

use std::sync::Arc;
use std::time::Duration;

use super::RunSummary;
use super::options::RunOptions;
use crate::execution::{self, Credentials, OutDir, secrets::Secrets};
use crate::load::SpecSource;
use crate::model::Api;
use crate::reports::events::{Event, Events};
use crate::reports::{self, Settings, Tally};

/// The schema of the GraphQL endpoint `target`, from the standard
/// introspection query (sent with the flags' headers).
pub(crate) async fn introspect(target: &str, flags: &RunOptions) -> anyhow::Result<Api> {
    let endpoint = parse_target(target)?;
    let headers = parse_headers(&flags.headers)?;
    let loaded = crate::load::introspection::fetch(&flags.client()?, &endpoint, &headers).await?;
    eprintln!(
        "cartograph: schema from introspection: {} root fields",
        loaded.api.operations.len()
    );
    Ok(loaded.api)
}

/// `-H` values as (name, value) pairs; an error names the flag.
pub(crate) fn parse_headers(headers: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    headers
        .iter()
        .map(|h| execution::parse_header(h).map_err(|e| anyhow::anyhow!("--header: {e}")))
        .collect()
}

/// `--query-key` values as (name, value) pairs; an error names the flag
/// and never the value.
pub(crate) fn parse_query_keys(keys: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    keys.iter()
        .map(|k| execution::parse_query_key(k).map_err(|e| anyhow::anyhow!("--query-key: {e}")))
        .collect()
}

/// A target URL as given to `--target`: `http://` or `https://`; without
/// a scheme (`127.0.0.1:8080`, `localhost:8080/api`) the error says what
/// to write instead.
pub(crate) fn parse_target(text: &str) -> anyhow::Result<url::Url> {
    let t = text.trim();
    // Errors quote the target without its password.
    let shown = execution::without_userinfo(t);
    let t_shown = shown.as_str();
    if !t.contains("://") {
        // No URL to parse: whatever precedes an `@` may be a password.
        let host = t.rsplit('@').next().unwrap_or(t).trim_start_matches('/');
        anyhow::bail!(
            "--target {host:?} has no scheme: add http:// or https://, e.g. --target {}",
            crate::model::text::shell_arg(&format!("http://{host}"))
        );
    }
    let url = url::Url::parse(t)
        .map_err(|e| anyhow::anyhow!("--target {t_shown:?} is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        anyhow::bail!(
            "--target {t_shown:?}: the scheme must be http:// or https://, not {}://",
            url.scheme()
        );
    }
    if url.host_str().is_none_or(str::is_empty) {
        anyhow::bail!("--target {t_shown:?} names no host: write e.g. http://127.0.0.1:8080");
    }
    if url.query().is_some() {
        // The query is most often an API key: it would be written into
        // every file, and each path would go after it. It is not shown.
        let mut bare = url.clone();
        bare.set_query(None);
        bare.set_fragment(None);
        let _ = bare.set_username("");
        let _ = bare.set_password(None);
        anyhow::bail!(
            "--target {:?} has a query (not shown here, as it may hold a secret): the target is the API's base URL only; give an API key sent in the query with --query-key NAME=VALUE (or `query-key = \"NAME=VALUE\"` in --config), a secret like a -H value",
            bare.as_str()
        );
    }
    Ok(url)
}

/// What every command that talks to a target sets up first.
pub(crate) struct Session {
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
    /// Where `--events` go.
    pub events: Events,
    /// The output folder, held for the run.
    pub out: Arc<OutDir>,
}

/// Checks the flags, opens the output folder ([`OutDir::open`]: created,
/// locked, the last run's files deleted) and checks the target answers
/// TCP; when it does not, writes an empty report and returns the summary to
/// end with (exit status 3).
pub(crate) async fn open_session(
    api: &Api,
    source: &SpecSource,
    target: &str,
    flags: &RunOptions,
) -> anyhow::Result<Result<Session, RunSummary>> {
    let mut target_url = parse_target(target)?;
    // A user and password in the target are credentials: sent as Basic
    // auth, like a -H header, and never in the target any file names.
    let userinfo = execution::take_userinfo(&mut target_url);
    let target_url = with_base_path(target_url, api);
    let secrets = Secrets::new();
    let mut headers = parse_headers(&flags.headers)?;
    if let Some(info) = userinfo {
        for s in &info.secrets {
            secrets.add(s);
        }
        if headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(&info.header.0))
        {
            eprintln!(
                "warning: -H gives an Authorization header, so the user and password of --target are not sent"
            );
        } else {
            headers.push(info.header);
        }
    }
    // A description fetched from a URL with a user and password names it
    // without them, and they are secrets too.
    let spec = source
        .location
        .as_deref()
        .map(|location| match url::Url::parse(location) {
            Ok(mut url) => match execution::take_userinfo(&mut url) {
                Some(info) => {
                    for s in &info.secrets {
                        secrets.add(s);
                    }
                    url.to_string()
                }
                None => location.to_string(),
            },
            Err(_) => location.to_string(),
        });
    let given = given_identities(flags)?;
    for login in &given.logins {
        for s in &login.secrets {
            secrets.add(s);
        }
    }
    let own = !headers.is_empty() || flags.auth_command.is_some() || !flags.query_keys.is_empty();
    let mut credentials = Credentials::new(
        headers.clone(),
        flags.auth_command.clone(),
        flags.auth_refresh,
        secrets.clone(),
    )
    .with_query(parse_query_keys(&flags.query_keys)?);
    // Without credentials of its own, the run is the first identity given.
    let stands_for_run = given.first.clone().filter(|_| !own);
    for identity in &given.fixed {
        if stands_for_run.as_deref() == Some(identity.name.as_str()) {
            credentials = credentials.as_identity(&identity.name, identity.headers.clone());
            headers.extend(identity.headers.iter().cloned());
        } else {
            credentials.add_identity(&identity.name, identity.headers.clone());
        }
    }
    let seed = flags.seed.unwrap_or_else(rand::random::<u64>);

    let out = OutDir::open(&flags.out)?;
    let settings = Settings {
        target: target_url.to_string(),
        spec,
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
        include: flags.include.clone(),
        exclude: flags.exclude.clone(),
        excluded_operations: api.left_out.iter().map(|op| op.name.clone()).collect(),
        rate_for: flags
            .rate_for
            .iter()
            .map(|(p, r)| (p.clone(), r.per_second))
            .collect(),
        insecure: flags.tls.insecure,
    };

    let tally = Tally::new(api)
        .with_lines(&source.lines)
        .with_credentials(flags.sends_credentials());
    let events = match &flags.part {
        Some(part) => part.events.clone(),
        None => Events::open(flags.events.as_deref(), &out, secrets.clone())?,
    };
    events.emit(&Event::RunStarted {
        version: env!("CARGO_PKG_VERSION"),
        settings: &settings,
        operations: tally.operation_count(),
    });
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
            rate_limited: Vec::new(),
            crash: None,
        };
        let report = tally.report(settings, &outcome, Vec::new());
        reports::write_report(&out, &report, &secrets).map_err(|e| {
            super::RuntimeFailure::error(
                format!("cannot write {}", out.path("report.json").display()),
                e,
            )
        })?;
        let summary = RunSummary {
            report,
            unreachable: true,
            incomplete: false,
            interrupted: None,
            fail_on: flags.fail_on.clone(),
            graph: None,
            suite_files: None,
            spec_fixes: None,
        };
        events.finish(&summary.report, summary.exit_status(), &flags.out);
        return Ok(Err(summary));
    }
    for login in &given.logins {
        let identity = log_in(login, &target_url, flags).await?;
        if stands_for_run.as_deref() == Some(login.name.as_str()) {
            credentials = credentials.as_identity(&identity.name, identity.headers);
        } else {
            credentials.add_identity(&identity.name, identity.headers);
        }
    }
    Ok(Ok(Session {
        target: target_url,
        secrets,
        credentials,
        seed,
        settings,
        tally,
        events,
        out,
    }))
}

/// The identities `--identity` (and `[identities]`) and `--auth-file` give.
fn given_identities(flags: &RunOptions) -> anyhow::Result<execution::identities::Given> {
    use execution::identities;
    let pairs = flags
        .identities
        .iter()
        .map(|text| identities::parse_flag(text).map_err(|e| anyhow::anyhow!("--identity: {e}")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let fixed = identities::group(pairs);
    let given = identities::Given {
        first: fixed.first().map(|i| i.name.clone()),
        fixed,
        logins: Vec::new(),
    };
    match &flags.auth_file {
        None => Ok(given),
        Some(file) => {
            let shown = file.display();
            let text = std::fs::read_to_string(file)
                .map_err(|e| anyhow::anyhow!("--auth-file {shown}: cannot read it: {e}"))?;
            let doc = crate::load::parse_text(&text, file)
                .map_err(|e| anyhow::anyhow!("--auth-file {shown}: not JSON or YAML: {e}"))?;
            let from_file = identities::parse_auth_file(&doc)
                .map_err(|e| anyhow::anyhow!("--auth-file {shown}: {e}"))?;
            given.and(from_file).map_err(|e| anyhow::anyhow!("{e}"))
        }
    }
}

/// Sends an identity's login request to the target and reads its token.
async fn log_in(
    login: &execution::identities::Login,
    target: &url::Url,
    flags: &RunOptions,
) -> anyhow::Result<execution::identities::Identity> {
    let transport = execution::Transport::new(target.clone(), flags.max_body, 1, &flags.tls)?;
    let got = transport
        .send(&login.request(), &[], &[], flags.timeout)
        .await;
    login
        .identity(got.status, &got.headers, &got.body)
        .map_err(|e| anyhow::Error::new(super::RuntimeFailure(format!("--auth-file: {e}"))))
}

/// The target with the description's base path added when the target
/// names no path of its own (`--target http://h:8080` for a description
/// whose paths live under `/api`); a target with a path is used as it is.
pub(crate) fn with_base_path(target: url::Url, api: &Api) -> url::Url {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_without_a_scheme_says_to_add_one() {
        for t in ["127.0.0.1:8080", "localhost:8080/api", "example.com"] {
            let e = parse_target(t).unwrap_err().to_string();
            assert!(e.contains("add http:// or https://"), "{e}");
            assert!(e.contains(&format!("--target http://{t}")), "{e}");
        }
        let e = parse_target("ftp://example.com").unwrap_err().to_string();
        assert!(e.contains("must be http:// or https://"), "{e}");
        assert_eq!(
            parse_target("http://127.0.0.1:8080/api").unwrap().as_str(),
            "http://127.0.0.1:8080/api"
        );
    }
}
