//! How every phase of a run reaches the target: the engine's settings, one
//! transport, the credentials and one politeness, so that the rate holds
//! from the server's view across the search and the replays.

use std::sync::Arc;
use std::time::Duration;

use super::options::RunOptions;
use crate::execution::{Credentials, Politeness, RunConfig, Transport, secrets::Secrets};
use crate::model::Api;
use crate::reproduce::channel::Channel;

/// The run's way to the target, shared by its phases.
#[derive(Clone)]
pub struct Link {
    /// The engine's settings (the replays replace budget and caps).
    pub config: RunConfig,
    /// One transport for every phase.
    pub transport: Transport,
    /// Credentials, refreshed as the flags say.
    pub credentials: Credentials,
    /// One rate for the whole run.
    pub politeness: Arc<Politeness>,
    /// Time the search left the replays beyond their share, for proofs
    /// after resets ([`proof_reserve`](crate::reproduce::channel::proof_reserve)).
    pub proofs: std::time::Duration,
    /// How long the reset before the search took, with `--reset-command`.
    pub first_reset: Option<Duration>,
}

impl Link {
    /// The link for `api` under `config`: its transport sends the requests of
    /// operations that document a redirect without following it.
    pub fn new(api: &Api, config: RunConfig, credentials: Credentials) -> anyhow::Result<Link> {
        let transport = Transport::new(
            config.target.clone(),
            config.max_body,
            config.concurrency,
            &config.tls,
        )?
        .without_redirects_for(
            api.operations
                .iter()
                .filter(|op| op.documents_redirect())
                .map(|op| op.name.clone()),
        );
        Ok(Link {
            politeness: Arc::new(config.politeness()),
            config,
            transport,
            credentials,
            proofs: std::time::Duration::ZERO,
            first_reset: None,
        })
    }

    /// The command that runs the regression suite against the target
    /// (without its files): `--secret` for each credential the files take
    /// as a variable, its value left for the user to give.
    pub fn suite_command(&self) -> String {
        let base = format!("base={}", self.config.target.as_str().trim_end_matches('/'));
        let secrets: Vec<String> = self
            .suite_credentials()
            .variables()
            .iter()
            .map(|(var, _)| format!("{var}=…"))
            .collect();
        let mut command = vec!["hurl", "--test", "--jobs", "1", "--variable", &base];
        for s in &secrets {
            command.extend(["--secret", s]);
        }
        crate::model::text::shell_command(command)
    }

    /// The credentials the regression suite's files take as variables,
    /// by name (their values stay out of every file).
    pub fn suite_credentials(&self) -> crate::reproduce::hurl::Credentials {
        let c = &self.credentials;
        let query: Vec<String> = c.query().iter().map(|(n, _)| n.clone()).collect();
        let identities: Vec<(String, Vec<String>)> = c
            .identity_names()
            .into_iter()
            .map(|who| {
                let headers = c
                    .identity_headers(&who)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(n, _)| n)
                    .collect();
                (who, headers)
            })
            .collect();
        crate::reproduce::hurl::Credentials::new(&c.header_names(), &query, &identities)
    }

    /// A channel for the replays, recording to `replay.ndjson`: their
    /// allowance (a fifth of `--budget`, at most 30 s, and a third of
    /// `--max-requests`), within `left` of the budget.
    pub fn channel(
        &self,
        options: &RunOptions,
        out: &crate::execution::OutDir,
        secrets: &Secrets,
        left: Option<Duration>,
    ) -> Result<Channel, crate::reproduce::WriteError> {
        let (time, requests) =
            crate::reproduce::channel::allowance(options.budget, options.max_requests);
        let time = time + self.proofs;
        let time = left.map_or(time, |left| time.min(left));
        let mut channel = Channel::open(
            self.config.clone(),
            self.transport.clone(),
            self.credentials.clone(),
            self.politeness.clone(),
            out,
            secrets,
            (time, requests),
        )?;
        channel.reset = options.reset.clone();
        channel.reset_times.extend(self.first_reset);
        Ok(channel)
    }
}
