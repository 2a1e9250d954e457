//! A run, from a loaded description to the output folder, the same for REST
//! and GraphQL and for every source of tests: the session is opened
//! ([`session`]), the tests' source made (the search over the graph,
//! [`searched`], or a log of requests, [`queries`]), and one pipeline
//! ([`drive`](mod@drive)) runs them against the target ([`search`]), replays the
//! faults and records the suite ([`confirm`]), and writes everything
//! ([`outputs`], `reports`). The `run`, `demo` and `replay-queries`
//! commands prepare a run and hand it here.

// A run says on stderr what it does (progress, warnings, its last line),
// as the command that drives it would.
#![allow(clippy::print_stdout, clippy::print_stderr)]

pub(crate) mod confirm;
pub(crate) mod drive;
pub(crate) mod link;
pub(crate) mod options;
pub(crate) mod outputs;
pub(crate) mod phase;
pub(crate) mod progress;
pub(crate) mod queries;
pub(crate) mod search;
pub(crate) mod searched;
pub(crate) mod security;
pub(crate) mod session;
pub(crate) mod source;

use std::process::ExitCode;
use std::sync::Arc;

pub(crate) use drive::drive;
pub use options::RunOptions;
pub(crate) use session::{Session, introspect, open_session};

use crate::generation::Search;
use crate::generation::graphql::Graphql;
use crate::generation::rest::Rest;
use crate::graph::{self, export::GraphDocument, feedback::Feedback};
use crate::load::SpecSource;
use crate::model::Api;
use crate::reports::Report;
use searched::Searched;

/// Exit status when faults were found.
pub(crate) const EXIT_FAULTS: u8 = 1;
/// Exit status when the target cannot be reached.
pub(crate) const EXIT_UNREACHABLE: u8 = 3;
/// Exit status when the run could not do its work for another reason than
/// an unreachable target: the server asked to wait past the budget's end,
/// the auth command failed or hung, nothing was sent or no answer could be
/// read, or the outputs could not be written (a full disk).
pub(crate) const EXIT_INCOMPLETE: u8 = 4;

/// A failure while the run works or writes its outputs (not a usage
/// error): the command exits [`EXIT_INCOMPLETE`].
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct RuntimeFailure(pub String);

impl RuntimeFailure {
    /// `what` could not be done because of `e`.
    pub(crate) fn error(what: impl std::fmt::Display, e: impl std::fmt::Display) -> anyhow::Error {
        anyhow::Error::new(RuntimeFailure(format!("{what}: {e}")))
    }
}

/// What a run produced, for the commands' summaries.
pub struct RunSummary {
    /// The report as written.
    pub report: Report,
    /// Whether the target could not be reached.
    pub unreachable: bool,
    /// Whether the run could not do all its work although the target
    /// answered: the server asked to wait past the budget's end, the auth
    /// command failed, or nothing was tested (no request sent, no answer
    /// that could be read).
    pub incomplete: bool,
    /// The signal that interrupted the run, when one did.
    pub interrupted: Option<crate::execution::interrupt::Interrupt>,
    /// Oracle codes whose faults fail the run (all when empty).
    pub fail_on: Vec<crate::oracles::registry::Code>,
    /// The final graph, as report.html draws it (none when the run never
    /// started).
    pub graph: Option<GraphDocument>,
    /// Hurl files of the regression suite written (none without replays).
    pub suite_files: Option<usize>,
    /// The line saying what `spec-fixes.overlay.yaml` holds (OpenAPI runs).
    pub spec_fixes: Option<String>,
}

impl RunSummary {
    /// 0 no faults, 1 faults, 3 unreachable, 4 incomplete, 130 or 143
    /// interrupted (the first that applies of 130/143, 3, 4, 1).
    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(self.exit_status())
    }

    /// [`RunSummary::exit_code`] as a number (for `--events`).
    pub fn exit_status(&self) -> u8 {
        if let Some(signal) = self.interrupted {
            signal.exit_status()
        } else if self.unreachable {
            EXIT_UNREACHABLE
        } else if self.incomplete {
            EXIT_INCOMPLETE
        } else if !self
            .report
            .faults
            .iter()
            .any(|f| self.fail_on.is_empty() || self.fail_on.contains(&f.code))
        {
            0
        } else {
            EXIT_FAULTS
        }
    }
}

/// Tests `api` (read from `source`) against `target` under `options` and
/// writes the output folder: the search through the API's protocol, then
/// the replays.
pub async fn execute(
    api: Arc<Api>,
    source: &SpecSource,
    target: &str,
    options: &RunOptions,
) -> anyhow::Result<RunSummary> {
    let session = match open_session(&api, source, target, options).await? {
        Ok(session) => session,
        Err(unreachable) => return Ok(unreachable),
    };
    if options.part.as_ref().is_none_or(|p| p.first) {
        eprintln!(
            "cartograph: seed {} (repeat this run with --seed {})",
            session.seed, session.seed
        );
    }
    let graph = phase::timed("building the graph", || graph::build(&api));
    outputs::write_graph(&session.out, "graph-initial.json", &graph)
        .map_err(|e| RuntimeFailure::error("cannot write graph-initial.json", format!("{e:#}")))?;
    let feedback = options
        .feedback()
        .then(|| Feedback::new(options.suspend_after));
    let mut config = options.search_config(session.seed, &session.target);
    config.identities = session.credentials.identity_names();
    config.main_identity = session.credentials.main_name().map(str::to_string);
    match api.graphql.clone() {
        Some(ts) => {
            let search = phase::timed("preparing the search", || {
                Search::graphql(api.clone(), &ts, graph, feedback, config)
            });
            let source = Searched::new(search, |p: &Graphql, report: &mut Report| {
                report.schema_coverage = Some(p.coverage());
                if let Some(w) = p.invalid_queries() {
                    eprintln!("warning: {w}");
                    report.warnings.push(w);
                }
            });
            drive(api, source, session, options).await
        }
        None => {
            let search = phase::timed("preparing the search", || {
                Search::rest(api.clone(), graph, feedback, config)
            });
            let source = Searched::new(search, |_: &Rest, _: &mut Report| {});
            drive(api, source, session, options).await
        }
    }
}

/// Writes `suite.json`, its secrets redacted but for the variable names
/// `keep`.
pub(crate) fn write_suite_document(
    out: &crate::execution::OutDir,
    doc: &serde_json::Value,
    secrets: &crate::execution::secrets::Secrets,
    keep: &[String],
) -> anyhow::Result<()> {
    // Numbers past 64 bits are written as the digits sent, not rounded.
    let text = crate::execution::wire::exact_numbers_written(serde_json::to_string_pretty(doc)?);
    // The credentials' variable names are the suite files' own: kept whole
    // even where a secret is a word of them.
    out.write(
        "suite.json",
        format!("{}\n", secrets.redact_keeping(&text, keep)).as_bytes(),
    )
    .map_err(|e| {
        RuntimeFailure::error(
            format!("cannot write {}", out.path("suite.json").display()),
            e,
        )
    })
}

#[cfg(test)]
mod tests {
    use crate::execution::OutDir;
    use crate::execution::secrets::Secrets;

    #[test]
    fn suite_json_keeps_the_variable_names_a_secret_is_a_word_of() {
        let dir = tempfile::tempdir().unwrap();
        let out = OutDir::open(&dir.path().join("out")).unwrap();
        let secrets = Secrets::new();
        // Jupyter's token is a plain word of the variable's name.
        secrets.add_header("Authorization", "token cartograph");
        let doc = serde_json::json!({"run": {
            "command": "hurl --test --secret 'cartograph_authorization=…' tests/*.hurl",
            "credentials": {"cartograph_authorization": "the value of the run's Authorization header"},
            "leaked": "token cartograph",
        }});
        let names = vec!["cartograph_authorization".to_string()];
        super::write_suite_document(&out, &doc, &secrets, &names).unwrap();
        let text = std::fs::read_to_string(out.path("suite.json")).unwrap();
        assert!(
            text.contains("--secret 'cartograph_authorization="),
            "{text}"
        );
        assert!(text.contains("\"cartograph_authorization\":"), "{text}");
        assert!(!text.contains("token cartograph"), "{text}");
    }
}
