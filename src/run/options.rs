//! Everything a run is told: its limits (budget, requests, rate), how it
//! talks to the server (credentials, timeouts), which checks apply, the
//! search's parameters, and where it writes. The `run` and `demo` commands
//! take these as flags.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::execution::fence::{Fence, Route};
use crate::execution::{self, RunConfig};
use crate::generation::MioConfig;
use crate::model::{Api, Method};

/// An oracle's code, or an earlier name of one, as `--skip-check` and
/// `--fail-on` take it.
fn check_code(name: &str) -> Result<String, String> {
    crate::oracles::registry::resolve(name).map(|_| name.to_string())
}

/// What a run is told (the flags of `run` and `demo`).
#[derive(Debug, Args, Clone)]
pub struct RunOptions {
    /// Time budget (`90s`, `5m`, `1h`); the run stops cleanly when it is spent.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub budget: Option<Duration>,
    /// Stop after sending this many requests.
    #[arg(long, value_name = "N")]
    pub max_requests: Option<u64>,
    /// Seed of every random choice; the seed used is printed and recorded, so
    /// the same seed against the same server state sends the same requests
    /// (exactly so with --concurrency 1 and --max-requests: the search paces
    /// itself by the share of the budget spent, and a time budget is spent
    /// differently from run to run).
    #[arg(long, value_name = "N", value_parser = parse_seed)]
    pub seed: Option<u64>,
    /// Global rate limit across all operations: `10/s`, `120/m`, `1000/h`.
    #[arg(long, value_parser = execution::parse_rate, value_name = "RATE")]
    pub rate: Option<execution::Rate>,
    /// A rate limit for the operations a pattern names, besides --rate
    /// (repeatable): `--rate-for 'POST /search=1/s' --rate-for 'Mutation.*=10/m'`.
    /// The operations one pattern names share its limit.
    #[arg(long = "rate-for", value_parser = parse_rate_for, value_name = "'PATTERN=RATE'")]
    pub rate_for: Vec<(String, execution::Rate)>,
    /// Requests that may go at once above the rate (with --rate).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub burst: u32,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub concurrency: usize,
    /// Send only GET, HEAD and OPTIONS requests (and GraphQL queries): nothing
    /// that could change the server's state, ever.
    #[arg(long)]
    pub read_only: bool,
    /// A header sent with every request, `Name: value` (repeatable). Its value
    /// is a secret, and so is the token after a scheme word (`Bearer …`):
    /// replaced by `[REDACTED]` in every output file and on the terminal,
    /// however written (as is, percent- or form-encoded, JSON-escaped). One
    /// shorter than 8 characters is also an ordinary word, so it is replaced
    /// only where it stands whole (a whole JSON string, header value, query
    /// or form value, quoted word or line) and kept inside other text.
    #[arg(long = "header", short = 'H', value_name = "'NAME: VALUE'")]
    pub headers: Vec<String>,
    /// A shell command whose output lines are headers (`Authorization: Bearer …`);
    /// re-run after a 401 and every --auth-refresh. Its output is secret.
    #[arg(long, value_name = "CMD")]
    pub auth_command: Option<String>,
    /// Re-run --auth-command this often (`15m`).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub auth_refresh: Option<Duration>,
    /// Trust the CA certificates of this PEM file besides the system's (a
    /// staging server with its own CA).
    #[arg(long, value_name = "FILE", help_heading = "TLS")]
    pub cacert: Option<PathBuf>,
    /// Do not check the server's certificate at all (a warning says so, on
    /// stderr and in the report). Prefer --cacert.
    #[arg(long, help_heading = "TLS")]
    pub insecure: bool,
    /// Client certificate (PEM) for servers that ask for one; with --key.
    #[arg(long, value_name = "FILE", requires = "key", help_heading = "TLS")]
    pub cert: Option<PathBuf>,
    /// Private key (PEM) of --cert.
    #[arg(long, value_name = "FILE", requires = "cert", help_heading = "TLS")]
    pub key: Option<PathBuf>,
    /// Give up on a request after this long (above zero).
    #[arg(long, value_parser = parse_timeout, default_value = "10s", value_name = "DURATION")]
    pub timeout: Duration,
    /// Read at most this much of a response body: bytes, or with a unit
    /// (`64k`, `4MiB`, `1MB`; k, M, G and KiB, MiB, GiB count by 1024, kB, MB
    /// and GB by 1000).
    #[arg(long, value_parser = parse_bytes, default_value = "4MiB", value_name = "SIZE")]
    pub max_body: usize,
    /// Retries of a request answered 429 or 503, after the wait the server asks for.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub retries: u32,
    /// Turn an oracle off by its code (repeatable).
    #[arg(long = "skip-check", value_name = "CODE", value_parser = check_code,
          long_help = crate::oracles::registry::flag_help("Turn an oracle off by its code (repeatable)."))]
    pub skip_checks: Vec<String>,
    /// Only faults of these oracle codes make the exit status 1 (comma-separated);
    /// the others are still reported.
    #[arg(long, value_delimiter = ',', value_name = "CODE,...", value_parser = check_code,
          long_help = crate::oracles::registry::flag_help("Only faults of these oracle codes make the exit status 1 (comma-separated); the others are still reported."))]
    pub fail_on: Vec<String>,
    /// Do not replay faults after the search (no confirmation, no minimised
    /// reproducers, no regression suite): for a strict request budget.
    #[arg(long)]
    pub no_replay: bool,
    /// Never refine the graph from responses (to measure what refinement is worth).
    #[arg(long)]
    pub no_feedback: bool,
    /// Generate without the property graph: no graph call sequences and no
    /// values passed along its edges, only resource templates, random tests
    /// and Location headers (to measure what the graph is worth).
    #[arg(long)]
    pub no_graph: bool,
    /// Consecutive failures of values passed along a consumes edge before the
    /// edge is suspended (λ); a suspended edge is still tried now and then.
    #[arg(long, default_value_t = crate::graph::feedback::DEFAULT_LAMBDA, value_name = "N")]
    pub suspend_after: u32,
    /// MIO: tests kept per uncovered target at the start (n; 1 from the focus point on).
    #[arg(long, default_value_t = MioConfig::default().population, value_name = "N", help_heading = "Search (MIO)")]
    pub population: usize,
    /// MIO: probability of sampling a new test instead of mutating an archived
    /// one, at the start (P_r; 0 from the focus point on).
    #[arg(long, default_value_t = MioConfig::default().random_sampling, value_name = "P", help_heading = "Search (MIO)")]
    pub random_sampling: f64,
    /// MIO: share of the budget after which the search only refines what it
    /// has (F).
    #[arg(long, default_value_t = MioConfig::default().focus, value_name = "F", help_heading = "Search (MIO)")]
    pub focus: f64,
    /// MIO: mutations per sampled test at the start.
    #[arg(long, default_value_t = MioConfig::default().start_mutations, value_name = "N", help_heading = "Search (MIO)")]
    pub start_mutations: usize,
    /// MIO: mutations per sampled test from the focus point on.
    #[arg(long, default_value_t = MioConfig::default().end_mutations, value_name = "N", help_heading = "Search (MIO)")]
    pub end_mutations: usize,
    /// Most calls in one test.
    #[arg(long, default_value_t = MioConfig::default().max_length, value_name = "N", help_heading = "Search (MIO)")]
    pub max_length: usize,
    /// Output folder: report.json, report.html, junit.xml, report.sarif (for
    /// code-scanning uploads), reproducers/ (a
    /// shell script per confirmed fault), tests/ (the regression suite as Hurl
    /// files), trace.ndjson and replay.ndjson (every exchange), suite.json (the
    /// final test suite), graph-initial.json and graph-final.json.
    #[arg(long, default_value = "cartograph-out", value_name = "DIR")]
    pub out: PathBuf,
    /// Write newline-delimited JSON events as the run goes to FILE (`-` for
    /// stdout): run started (its settings), phase started and finished,
    /// progress (once a second), operation first reached, fault found, cause
    /// confirmed, warning, run finished (what report.json sums up, and the
    /// exit status). One JSON object a line, shaped as
    /// models/events.schema.json says; secrets redacted.
    #[arg(long, value_name = "FILE")]
    pub events: Option<PathBuf>,
    /// Which operations to test (`--include`, `--exclude`).
    #[command(flatten)]
    pub select: SelectArgs,
}

/// How a command that only reads a description fetches it from an
/// `http(s)://` URL (`graph`, `inspect`): the headers and TLS settings of
/// `run`.
#[derive(Debug, Args, Clone, Default)]
pub struct FetchArgs {
    /// A header sent when fetching the description from a URL, `Name: value`
    /// (repeatable); values are secrets, never written anywhere.
    #[arg(
        long = "header",
        short = 'H',
        value_name = "'NAME: VALUE'",
        help_heading = "Fetching a description from a URL"
    )]
    pub headers: Vec<String>,
    /// Trust the CA certificates of this PEM file besides the system's.
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Fetching a description from a URL"
    )]
    pub cacert: Option<PathBuf>,
    /// Do not check the server's certificate at all. Prefer --cacert.
    #[arg(long, help_heading = "Fetching a description from a URL")]
    pub insecure: bool,
    /// Client certificate (PEM) for servers that ask for one; with --key.
    #[arg(
        long,
        value_name = "FILE",
        requires = "key",
        help_heading = "Fetching a description from a URL"
    )]
    pub cert: Option<PathBuf>,
    /// Private key (PEM) of --cert.
    #[arg(
        long,
        value_name = "FILE",
        requires = "cert",
        help_heading = "Fetching a description from a URL"
    )]
    pub key: Option<PathBuf>,
    /// Give up on fetching after this long (above zero).
    #[arg(long, value_parser = parse_timeout, default_value = "30s", value_name = "DURATION", help_heading = "Fetching a description from a URL")]
    pub timeout: Duration,
}

impl FetchArgs {
    /// The headers, parsed.
    pub fn headers(&self) -> anyhow::Result<Vec<(String, String)>> {
        parse_headers(&self.headers)
    }

    /// The client that fetches the description.
    pub fn client(&self) -> anyhow::Result<reqwest::Client> {
        let tls = execution::tls::Tls {
            cacert: self.cacert.clone(),
            insecure: self.insecure,
            cert: self.cert.clone(),
            key: self.key.clone(),
        };
        if self.insecure {
            eprintln!("warning: --insecure: the server's certificate is not checked");
        }
        execution::fetch_client(&tls, self.timeout).map_err(anyhow::Error::msg)
    }
}

/// `-H` values as (name, value) pairs; an error names the flag.
pub fn parse_headers(headers: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    headers
        .iter()
        .map(|h| execution::parse_header(h).map_err(|e| anyhow::anyhow!("--header: {e}")))
        .collect()
}

/// Which operations a command works on.
#[derive(Debug, Args, Clone, Default)]
pub struct SelectArgs {
    /// Only the operations this pattern names (repeatable): an operationId
    /// glob (`get*`), `METHOD /path` as written in the description
    /// (`GET /users/*`; `*` is any text, `/` included), `tag:NAME`, or a
    /// GraphQL root field (`Query.user*`).
    #[arg(long, value_name = "PATTERN", value_parser = parse_pattern, help_heading = "Selection")]
    pub include: Vec<String>,
    /// Never the operations this pattern names (repeatable; same patterns as
    /// --include, and it wins over it): `--exclude 'POST /admin/*'
    /// --exclude 'Mutation.shutdown'`. Excluded operations get no request in
    /// any phase.
    #[arg(long, value_name = "PATTERN", value_parser = parse_pattern, help_heading = "Selection")]
    pub exclude: Vec<String>,
}

impl RunOptions {
    /// The share of `--budget` the replays after the search may use (a
    /// fifth, at most 30 s): the search gets the rest, so that the budget
    /// bounds the whole run.
    pub fn replay_reserve(&self) -> Duration {
        match self.budget {
            Some(_) if !self.no_replay => {
                crate::reproduce::phase::allowance(self.budget, self.max_requests).0
            }
            _ => Duration::ZERO,
        }
    }

    /// The search's time budget: `--budget` less the replays' reserve.
    pub fn search_budget(&self) -> Option<Duration> {
        self.budget.map(|b| b.saturating_sub(self.replay_reserve()))
    }

    /// How the engine talks to `target` under these options, in the search.
    pub fn run_config(&self, api: &Api, target: &url::Url, seed: u64) -> RunConfig {
        RunConfig {
            target: target.clone(),
            budget: self.search_budget(),
            max_requests: self.max_requests,
            seed,
            rate: self.rate,
            burst: self.burst,
            concurrency: self.concurrency.max(1),
            read_only: self.read_only,
            timeout: self.timeout,
            max_body: self.max_body,
            max_retries: self.retries,
            fence: std::sync::Arc::new(fence(api)),
            per_operation: self
                .rate_for
                .iter()
                .map(|(pattern, rate)| (*rate, named(api, pattern)))
                .collect(),
            tls: self.tls(),
        }
    }

    /// The TLS settings of these options.
    pub fn tls(&self) -> execution::tls::Tls {
        execution::tls::Tls {
            cacert: self.cacert.clone(),
            insecure: self.insecure,
            cert: self.cert.clone(),
            key: self.key.clone(),
        }
    }

    /// An HTTP client for what a run fetches besides its requests (the
    /// description, the introspection query).
    pub fn client(&self) -> anyhow::Result<reqwest::Client> {
        execution::fetch_client(&self.tls(), self.timeout).map_err(anyhow::Error::msg)
    }

    /// What the search is told: these options, the seed and the target.
    pub fn search_config(&self, seed: u64, target: &url::Url) -> crate::generation::SearchConfig {
        crate::generation::SearchConfig {
            mio: self.mio(),
            seed,
            read_only: self.read_only,
            use_graph: !self.no_graph,
            max_requests: self.max_requests,
            budget: self.search_budget(),
            skip_checks: self.skip_checks.clone(),
            target: Some(target.clone()),
        }
    }

    /// Whether answers refine the graph (`--no-feedback` and `--no-graph`
    /// turn it off).
    pub fn feedback(&self) -> bool {
        !self.no_feedback && !self.no_graph
    }

    /// The MIO parameters these options set.
    pub fn mio(&self) -> MioConfig {
        MioConfig {
            population: self.population.max(1),
            random_sampling: self.random_sampling.clamp(0.0, 1.0),
            focus: self.focus.clamp(0.0, 1.0),
            start_mutations: self.start_mutations.max(1),
            end_mutations: self.end_mutations.max(1),
            max_length: self.max_length.max(1),
        }
    }
}

/// The operations of `api` that `pattern` names (none when it is not one).
fn named(api: &Api, pattern: &str) -> Vec<String> {
    let Ok(p) = crate::model::select::Pattern::parse(pattern) else {
        return Vec::new();
    };
    api.operations
        .iter()
        .filter(|op| p.matches(op))
        .map(|op| op.name.clone())
        .collect()
}

/// The fence around what the selection left out of `api`.
fn fence(api: &Api) -> Fence {
    let route = |op: &crate::model::Operation| {
        Method::HTTP
            .contains(&op.method)
            .then(|| Route::new(op.method.as_str(), &op.path))
    };
    Fence::new(
        api.left_out.iter().map(|op| op.name.clone()),
        api.left_out.iter().filter_map(route).collect(),
        api.operations.iter().filter_map(route).collect(),
    )
}

/// Checks an `--include`/`--exclude` pattern (so that a bad one in a
/// configuration file is reported at its line).
pub fn parse_pattern(text: &str) -> Result<String, String> {
    crate::model::select::Pattern::parse(text).map(|_| text.to_string())
}

/// Parses `PATTERN=RATE` (`POST /search=1/s`).
pub fn parse_rate_for(text: &str) -> Result<(String, execution::Rate), String> {
    let Some((pattern, rate)) = text.rsplit_once('=') else {
        return Err(format!(
            "{text:?}: write PATTERN=RATE, e.g. 'POST /search=1/s'"
        ));
    };
    crate::model::select::Pattern::parse(pattern)?;
    Ok((
        pattern.trim().to_string(),
        execution::parse_rate(rate.trim())?,
    ))
}

/// Parses `90s`, `5m`, `1h`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text).map_err(|e| format!("{text:?}: {e} (write e.g. 90s, 5m, 1h)"))
}

/// Parses a per-request timeout: a duration above zero (`0s` would make
/// every request a timeout before it is sent).
pub fn parse_timeout(text: &str) -> Result<Duration, String> {
    let d = parse_duration(text)?;
    if d.is_zero() {
        return Err(format!(
            "{text:?}: the timeout must be above zero (write e.g. 500ms, 10s)"
        ));
    }
    Ok(d)
}

/// Parses a size: bytes (`1000000`), or a number with a unit: `k`, `M`, `G`
/// (also `KiB`, `MiB`, `GiB`) count by 1024, `kB`, `MB`, `GB` by 1000, as dd
/// reads them; `1.5M` is allowed. Zero is refused: no body would be read.
pub fn parse_bytes(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let unit = unit.trim();
    let factor: f64 = match unit {
        "" | "b" | "B" => 1.0,
        "k" | "K" | "KiB" | "kiB" | "Ki" => 1024.0,
        "kB" | "KB" => 1e3,
        "m" | "M" | "MiB" | "Mi" => 1024.0 * 1024.0,
        "MB" => 1e6,
        "g" | "G" | "GiB" | "Gi" => 1024.0 * 1024.0 * 1024.0,
        "GB" => 1e9,
        other => {
            return Err(format!(
                "{text:?}: unknown unit {other:?}; write bytes, or a number with k, M, G (by 1024; also KiB, MiB, GiB) or kB, MB, GB (by 1000), e.g. 64k or 4MiB"
            ));
        }
    };
    let n: f64 = number.replace('_', "").parse().map_err(|_| {
        format!("{text:?} is not a size; write bytes, or a number with a unit, e.g. 64k or 4MiB")
    })?;
    let bytes = (n * factor).round();
    if !(bytes >= 1.0 && bytes <= usize::MAX as f64) {
        return Err(format!("{text:?}: the size must be at least one byte"));
    }
    Ok(bytes as usize)
}

/// Parses a seed: a number up to 2^64 - 1, as reports write it (a JSON
/// string, so that JavaScript and jq keep every digit; its quotes may come
/// along when it is copied from there).
pub fn parse_seed(text: &str) -> Result<u64, String> {
    let t = text.trim().trim_matches('"');
    t.parse().map_err(|_| {
        format!("{text:?} is not a seed: write a whole number from 0 to 18446744073709551615")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_units() {
        assert_eq!(parse_bytes("1000000"), Ok(1_000_000));
        assert_eq!(parse_bytes("1k"), Ok(1024));
        assert_eq!(parse_bytes("64K"), Ok(65_536));
        assert_eq!(parse_bytes("4MiB"), Ok(4 * 1024 * 1024));
        assert_eq!(parse_bytes("4M"), Ok(4 * 1024 * 1024));
        assert_eq!(parse_bytes("1MB"), Ok(1_000_000));
        assert_eq!(parse_bytes("2kB"), Ok(2000));
        assert_eq!(parse_bytes("1.5k"), Ok(1536));
        assert_eq!(parse_bytes("1GiB"), Ok(1 << 30));
        assert!(parse_bytes("0").unwrap_err().contains("at least one byte"));
        assert!(parse_bytes("1x").unwrap_err().contains("unknown unit"));
        assert!(parse_bytes("lots").is_err());
    }

    #[test]
    fn a_timeout_must_be_above_zero() {
        assert_eq!(parse_timeout("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_timeout("500ms"), Ok(Duration::from_millis(500)));
        assert!(parse_timeout("0s").unwrap_err().contains("above zero"));
        assert!(parse_timeout("0ms").is_err());
    }

    #[test]
    fn seeds_come_back_as_written() {
        assert_eq!(parse_seed("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(
            parse_seed("\"12345678901234567890\""),
            Ok(12_345_678_901_234_567_890)
        );
        assert_eq!(parse_seed("7"), Ok(7));
        assert!(parse_seed("18446744073709551616").is_err());
        assert!(parse_seed("-1").is_err());
    }
}
