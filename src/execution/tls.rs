//! TLS for staging servers: an extra CA to trust (`--cacert`), no
//! verification at all (`--insecure`), and a client certificate (`--cert`,
//! `--key`), applied to every HTTP client a run makes (the run's, the
//! description's fetch, introspection).

use std::path::PathBuf;

/// How a run's clients check servers and prove who they are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tls {
    /// PEM file of CA certificates to trust besides the system's.
    pub cacert: Option<PathBuf>,
    /// Accept any server certificate (a warning says so).
    pub insecure: bool,
    /// PEM file of the client certificate (chain).
    pub cert: Option<PathBuf>,
    /// PEM file of the client certificate's private key.
    pub key: Option<PathBuf>,
}

/// Why an HTTP client could not be made: the TLS files, or the client
/// itself. Each names the flag and file at fault and what to do.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// A TLS file is missing, unreadable or not what its flag needs.
    #[error("{0}")]
    Tls(String),
    /// The HTTP library refused the settings.
    #[error("cannot build the HTTP client: {0}")]
    Build(#[from] reqwest::Error),
}

impl Tls {
    /// `builder` with these settings; errors name the file and what to do.
    pub fn apply(
        &self,
        builder: reqwest::ClientBuilder,
    ) -> Result<reqwest::ClientBuilder, ClientError> {
        self.settings(builder).map_err(ClientError::Tls)
    }

    fn settings(&self, builder: reqwest::ClientBuilder) -> Result<reqwest::ClientBuilder, String> {
        let read = |flag: &str, p: &PathBuf| {
            std::fs::read(p).map_err(|e| format!("{flag} {}: cannot read it: {e}", p.display()))
        };
        let mut builder = builder;
        if let Some(path) = &self.cacert {
            let certs = reqwest::Certificate::from_pem_bundle(&read("--cacert", path)?)
                .map_err(|e| format!("--cacert {}: not PEM certificates: {e}", path.display()))?;
            if certs.is_empty() {
                return Err(format!(
                    "--cacert {}: no certificate in it (expected -----BEGIN CERTIFICATE-----)",
                    path.display()
                ));
            }
            builder = builder.tls_certs_merge(certs);
        }
        match (&self.cert, &self.key) {
            (Some(cert), Some(key)) => {
                let mut pem = read("--cert", cert)?;
                pem.push(b'\n');
                pem.extend(read("--key", key)?);
                let identity = reqwest::Identity::from_pem(&pem).map_err(|e| {
                    format!(
                        "--cert {} --key {}: not a PEM certificate and private key: {e}",
                        cert.display(),
                        key.display()
                    )
                })?;
                builder = builder.identity(identity);
            }
            (Some(_), None) | (None, Some(_)) => {
                return Err("--cert and --key go together: pass both PEM files".into());
            }
            (None, None) => {}
        }
        Ok(builder.tls_danger_accept_invalid_certs(self.insecure))
    }
}
