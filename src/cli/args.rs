//! The flags the commands share, each defined once, in groups that the
//! commands flatten into their own arguments (`run` and `demo` take every
//! group, `replay-queries` the ones that apply to a log sent once). The
//! groups become a [`RunOptions`], the plain settings the library runs on.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::values::{
    CodeParser, Codes, parse_bytes, parse_duration, parse_limit, parse_pattern, parse_rate_for,
    parse_seed, parse_timeout,
};
use crate::execution::{self, Rate};
use crate::generation::MioConfig;
use crate::run::RunOptions;

/// How requests reach the server: how long to wait, how much to read, TLS.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Connection")]
pub(super) struct ConnectionArgs {
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
    /// How the server's certificate is checked, and the client's own.
    #[command(flatten)]
    pub tls: TlsArgs,
}

/// How servers' certificates are checked and how the client proves who it
/// is (every command that talks to a server).
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "TLS")]
pub(super) struct TlsArgs {
    /// Trust the CA certificates of this PEM file besides the system's (a
    /// staging server with its own CA).
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<PathBuf>,
    /// Do not check the server's certificate at all (a warning says so).
    /// Prefer --cacert.
    #[arg(long)]
    pub insecure: bool,
    /// Client certificate (PEM) for servers that ask for one; with --key.
    #[arg(long, value_name = "FILE", requires = "key")]
    pub cert: Option<PathBuf>,
    /// Private key (PEM) of --cert.
    #[arg(long, value_name = "FILE", requires = "cert")]
    pub key: Option<PathBuf>,
}

impl TlsArgs {
    /// The TLS settings these flags give.
    pub(super) fn tls(&self) -> execution::tls::Tls {
        execution::tls::Tls {
            cacert: self.cacert.clone(),
            insecure: self.insecure,
            cert: self.cert.clone(),
            key: self.key.clone(),
        }
    }
}

/// What every request carries to say who sends it; all of it secret.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Credentials")]
pub(super) struct CredentialArgs {
    /// A header sent with every request, `Name: value` (repeatable). Its value
    /// is a secret, and so is the token after a scheme word (`Bearer …`):
    /// replaced by `[REDACTED]` in every output file and on the terminal,
    /// however written (as is, percent- or form-encoded, JSON-escaped). One
    /// shorter than 8 characters is also an ordinary word, so it is replaced
    /// only where it stands whole (a whole JSON string, header value, query
    /// or form value, quoted word or line) and kept inside other text.
    #[arg(long = "header", short = 'H', value_name = "'NAME: VALUE'")]
    pub headers: Vec<String>,
    /// An API key sent in the query of every request, `NAME=VALUE`
    /// (repeatable; `query-key` in --config): for a key the description
    /// declares `in: query`. Its value is a secret like a -H value, never
    /// written; reproducers take it from CARTOGRAPH_QUERY.
    #[arg(long = "query-key", value_name = "'NAME=VALUE'")]
    pub query_keys: Vec<String>,
    /// A shell command whose output lines are headers (`Authorization: Bearer …`);
    /// re-run after a 401 and every --auth-refresh. Its output is secret.
    #[arg(long, value_name = "CMD")]
    pub auth_command: Option<String>,
    /// Re-run --auth-command this often (`15m`).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub auth_refresh: Option<Duration>,
    /// Another caller to test as, `NAME='Header: value'` (repeatable; repeat
    /// a name for more headers; `[identities]` in --config). With a second
    /// identity the run replays what one creates as the others and with no
    /// credentials (the identity checks). Without -H or --auth-command the
    /// first identity is the run's own. Values are secrets like -H values;
    /// reproducers take them from CARTOGRAPH_IDENTITY_<NAME>.
    #[arg(long = "identity", value_name = "NAME='HEADER: VALUE'")]
    pub identities: Vec<String>,
    /// Identities from a Web Fuzzing Commons auth file (JSON or YAML):
    /// `fixedHeaders`, or a `loginEndpointAuth` request on the target whose
    /// answer gives the token.
    #[arg(long = "auth-file", value_name = "FILE")]
    pub auth_file: Option<std::path::PathBuf>,
    /// Call the operations that end a session (`logout`, `signout`,
    /// revoking a token) too: a run that sends credentials leaves them out,
    /// as after one every request would be refused.
    #[arg(long)]
    pub call_logout: bool,
}

/// How hard the run may press on the server, and whether it may change it.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Politeness")]
pub(super) struct PolitenessArgs {
    /// Global rate limit across all operations: `10/s`, `120/m`, `1000/h`.
    #[arg(long, value_parser = execution::parse_rate, value_name = "RATE")]
    pub rate: Option<Rate>,
    /// A rate limit for the operations a pattern names, besides --rate
    /// (repeatable): `--rate-for 'POST /search=1/s' --rate-for 'Mutation.*=10/m'`.
    /// The operations one pattern names share its limit.
    #[arg(long = "rate-for", value_parser = parse_rate_for, value_name = "'PATTERN=RATE'")]
    pub rate_for: Vec<(String, Rate)>,
    /// Requests that may go at once above the rate (with --rate).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub burst: u32,
    /// Send only GET, HEAD and OPTIONS requests (and GraphQL queries): nothing
    /// that could change the server's state, ever.
    #[arg(long)]
    pub read_only: bool,
}

/// Which oracles judge the answers, which of their faults fail the run, and
/// whether faults are replayed.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Checks")]
pub(super) struct CheckArgs {
    /// Turn an oracle off by its code (repeatable).
    #[arg(long = "skip-check", value_name = "CODE", value_parser = CodeParser,
          hide_possible_values = true,
          long_help = crate::oracles::registry::flag_help("Turn an oracle off by its code (repeatable)."))]
    pub skip_checks: Vec<Codes>,
    /// Only faults of these oracle codes make the exit status 1 (comma-separated);
    /// the others are still reported.
    #[arg(long, value_delimiter = ',', value_name = "CODE,...", value_parser = CodeParser,
          hide_possible_values = true,
          long_help = crate::oracles::registry::flag_help("Only faults of these oracle codes make the exit status 1 (comma-separated); the others are still reported."))]
    pub fail_on: Vec<Codes>,
    /// Do not replay faults after the search (no confirmation, no minimised
    /// reproducers, no regression suite): for a strict request budget.
    #[arg(long)]
    pub no_replay: bool,
    /// A shell command that puts the target back in its start state
    /// (restart a container, truncate a database, `curl -X POST
    /// http://127.0.0.1:8080/__reset`; `reset-command` in --config). Run
    /// with `sh -c` before the search, and before each reproducer and
    /// suite file is proven after it: each is run on a fresh server before
    /// it is written. A failure (non-zero exit, more than 120 s) ends the run.
    #[arg(long, value_name = "CMD")]
    pub reset_command: Option<String>,
}

/// Where the run writes, and who hears of it as it goes.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Output")]
pub(super) struct OutputArgs {
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
    /// Most of each exchange log to write (trace.ndjson, replay.ndjson,
    /// security.ndjson): bytes, or with a unit as --max-body takes. Past
    /// it, exchanges are counted, not written, and the run says how many
    /// were left out. `0` keeps every exchange.
    #[arg(long, value_parser = parse_limit, default_value = "32MiB", value_name = "SIZE")]
    pub trace_limit: usize,
    /// Say more on the terminal: the search's own bookkeeping (links of the
    /// graph set aside after repeated failures and taken back).
    #[arg(long, short = 'v')]
    pub verbose: bool,
}

/// How long the search goes and how it searches.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Search")]
pub(super) struct SearchArgs {
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
    /// Requests in flight at once.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub concurrency: usize,
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
    /// MIO's parameters.
    #[command(flatten)]
    pub mio: MioArgs,
}

/// MIO's parameters (EvoMaster's defaults).
#[derive(Debug, Args, Clone, Copy)]
#[command(next_help_heading = "Search (MIO)")]
pub(super) struct MioArgs {
    /// MIO: tests kept per uncovered target at the start (n; 1 from the focus point on).
    #[arg(long, default_value_t = MioConfig::default().population, value_name = "N")]
    pub population: usize,
    /// MIO: probability of sampling a new test instead of mutating an archived
    /// one, at the start (P_r; 0 from the focus point on).
    #[arg(long, default_value_t = MioConfig::default().random_sampling, value_name = "P")]
    pub random_sampling: f64,
    /// MIO: share of the budget after which the search only refines what it
    /// has (F).
    #[arg(long, default_value_t = MioConfig::default().focus, value_name = "F")]
    pub focus: f64,
    /// MIO: mutations per sampled test at the start.
    #[arg(long, default_value_t = MioConfig::default().start_mutations, value_name = "N")]
    pub start_mutations: usize,
    /// MIO: mutations per sampled test from the focus point on.
    #[arg(long, default_value_t = MioConfig::default().end_mutations, value_name = "N")]
    pub end_mutations: usize,
    /// Most calls in one test.
    #[arg(long, default_value_t = MioConfig::default().max_length, value_name = "N")]
    pub max_length: usize,
}

/// Which operations a command works on.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Selection")]
pub(super) struct SelectArgs {
    /// Only the operations this pattern names (repeatable): an operationId
    /// glob (`get*`), `METHOD /path` as written in the description
    /// (`GET /users/*`; `*` is any text, `/` included), `tag:NAME`, or a
    /// GraphQL root field (`Query.user*`).
    #[arg(long, value_name = "PATTERN", value_parser = parse_pattern)]
    pub include: Vec<String>,
    /// Never the operations this pattern names (repeatable; same patterns as
    /// --include, and it wins over it): `--exclude 'POST /admin/*'
    /// --exclude 'Mutation.shutdown'`. Excluded operations get no request in
    /// any phase.
    #[arg(long, value_name = "PATTERN", value_parser = parse_pattern)]
    pub exclude: Vec<String>,
}

/// The flags of every command that sends requests to a target (`run`,
/// `demo`, `replay-queries`): all but the search's.
#[derive(Debug, Args, Clone)]
pub(super) struct TargetFlags {
    /// How hard the run may press on the server.
    #[command(flatten)]
    pub politeness: PolitenessArgs,
    /// What every request carries to say who sends it.
    #[command(flatten)]
    pub credentials: CredentialArgs,
    /// How requests reach the server.
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// Which oracles judge, and which faults fail the run.
    #[command(flatten)]
    pub checks: CheckArgs,
    /// Where the run writes.
    #[command(flatten)]
    pub output: OutputArgs,
    /// Which operations to test.
    #[command(flatten)]
    pub select: SelectArgs,
}

impl TargetFlags {
    /// The settings these flags give (the search's at their defaults).
    pub(super) fn options(&self) -> RunOptions {
        // Each group is taken apart whole: a flag added to a group and not
        // carried into the settings does not compile.
        let mut o = RunOptions::default();
        let PolitenessArgs {
            rate,
            rate_for,
            burst,
            read_only,
        } = &self.politeness;
        (o.rate, o.rate_for, o.burst, o.read_only) = (*rate, rate_for.clone(), *burst, *read_only);
        let CredentialArgs {
            headers,
            query_keys,
            auth_command,
            auth_refresh,
            identities,
            auth_file,
            call_logout,
        } = &self.credentials;
        o.call_logout = *call_logout;
        (o.headers, o.query_keys, o.auth_command, o.auth_refresh) = (
            headers.clone(),
            query_keys.clone(),
            auth_command.clone(),
            *auth_refresh,
        );
        (o.identities, o.auth_file) = (identities.clone(), auth_file.clone());
        let ConnectionArgs {
            timeout,
            max_body,
            retries,
            tls,
        } = &self.connection;
        (o.timeout, o.max_body, o.retries, o.tls) = (*timeout, *max_body, *retries, tls.tls());
        let CheckArgs {
            skip_checks,
            fail_on,
            no_replay,
            reset_command,
        } = &self.checks;
        (o.skip_checks, o.fail_on, o.no_replay) =
            (Codes::flat(skip_checks), Codes::flat(fail_on), *no_replay);
        o.reset = reset_command.clone().map(execution::reset::Reset::command);
        let OutputArgs {
            out,
            events,
            trace_limit,
            verbose,
        } = &self.output;
        (o.out, o.events, o.trace_limit) = (out.clone(), events.clone(), *trace_limit);
        o.verbose = *verbose;
        let SelectArgs { include, exclude } = &self.select;
        (o.include, o.exclude) = (include.clone(), exclude.clone());
        o
    }
}

/// Every flag of a run (`run` and `demo`).
#[derive(Debug, Args, Clone)]
pub(super) struct RunFlags {
    /// How long the search goes and how it searches.
    #[command(flatten)]
    pub search: SearchArgs,
    /// Everything else a run is told.
    #[command(flatten)]
    pub target: TargetFlags,
}

impl RunFlags {
    /// The settings these flags give.
    pub(super) fn options(&self) -> RunOptions {
        let mut o = self.target.options();
        let SearchArgs {
            budget,
            max_requests,
            seed,
            concurrency,
            no_feedback,
            no_graph,
            suspend_after,
            mio,
        } = &self.search;
        (o.budget, o.max_requests, o.seed, o.concurrency) =
            (*budget, *max_requests, *seed, *concurrency);
        (o.no_feedback, o.no_graph, o.suspend_after) = (*no_feedback, *no_graph, *suspend_after);
        let MioArgs {
            population,
            random_sampling,
            focus,
            start_mutations,
            end_mutations,
            max_length,
        } = *mio;
        o.mio = MioConfig {
            population,
            random_sampling,
            focus,
            start_mutations,
            end_mutations,
            max_length,
        };
        o
    }
}

/// How a command that only reads a description fetches it from an
/// `http(s)://` URL (`graph`, `inspect`): the headers and TLS settings of
/// `run`.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Fetching a description from a URL")]
pub(super) struct FetchArgs {
    /// A header sent when fetching the description from a URL, `Name: value`
    /// (repeatable); values are secrets, never written anywhere.
    #[arg(long = "header", short = 'H', value_name = "'NAME: VALUE'")]
    pub headers: Vec<String>,
    /// Give up on fetching after this long (above zero).
    #[arg(long, value_parser = parse_timeout, default_value = "30s", value_name = "DURATION")]
    pub timeout: Duration,
    /// How the server's certificate is checked, and the client's own.
    #[command(flatten)]
    pub tls: TlsArgs,
}

impl FetchArgs {
    /// The headers, parsed.
    pub(super) fn headers(&self) -> anyhow::Result<Vec<(String, String)>> {
        crate::run::session::parse_headers(&self.headers)
    }

    /// The client that fetches the description.
    pub(super) fn client(&self) -> anyhow::Result<reqwest::Client> {
        if self.tls.insecure {
            eprintln!("warning: --insecure: the server's certificate is not checked");
        }
        Ok(execution::fetch_client(&self.tls.tls(), self.timeout)?)
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        flags: RunFlags,
    }

    #[test]
    fn the_flags_defaults_are_the_settings_defaults() {
        // One place says what a run does untold: the library's Default. The
        // flags' defaults must say the same, or the library and the command
        // would run differently.
        let parsed = Flags::parse_from(["cartograph"]).flags.options();
        assert_eq!(
            format!("{parsed:?}"),
            format!("{:?}", RunOptions::default())
        );
    }

    #[test]
    fn every_group_lands_in_the_settings() {
        let parsed = Flags::parse_from([
            "cartograph",
            "--budget",
            "5m",
            "--rate",
            "2/s",
            "-H",
            "X-Key: k",
            "--query-key",
            "api_key=k",
            "--timeout",
            "3s",
            "--fail-on",
            "server_error",
            "--out",
            "o",
            "--exclude",
            "DELETE *",
            "--population",
            "4",
            "--insecure",
        ])
        .flags
        .options();
        assert_eq!(parsed.budget, Some(Duration::from_secs(300)));
        assert_eq!(parsed.rate.map(|r| r.per_second), Some(2.0));
        assert_eq!(parsed.headers, ["X-Key: k"]);
        assert_eq!(parsed.query_keys, ["api_key=k"]);
        assert_eq!(parsed.timeout, Duration::from_secs(3));
        assert_eq!(
            parsed.fail_on,
            [crate::oracles::registry::Code::ServerError]
        );
        assert_eq!(parsed.out, PathBuf::from("o"));
        assert_eq!(parsed.exclude, ["DELETE *"]);
        assert_eq!(parsed.mio.population, 4);
        assert!(parsed.tls.insecure);
    }
}
