//! TLS for staging servers: an extra CA to trust (`--cacert`), no
//! verification at all (`--insecure`), and a client certificate (`--cert`,
//! `--key`), applied to every HTTP client a run makes (the run's, the
//! description's fetch, introspection).

use std::path::PathBuf;
use std::sync::Arc;

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
        let mut builder = builder;
        if let Some(path) = &self.cacert
            && !self.insecure
        {
            return Ok(builder.tls_backend_preconfigured(self.pinning(path)?));
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

    /// The TLS configuration of `--cacert FILE`: its certificates trusted
    /// as CAs besides the system's, and each also as the very certificate
    /// a server may present for its own names (a self-signed one); with
    /// `--cert`/`--key` when given.
    fn pinning(&self, path: &PathBuf) -> Result<rustls::ClientConfig, String> {
        use rustls_pki_types::pem::PemObject;
        use rustls_pki_types::{CertificateDer, PrivateKeyDer};
        let shown = path.display();
        let pem = read("--cacert", path)?;
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&pem)
            .collect::<Result<_, _>>()
            .map_err(|e| format!("--cacert {shown}: not PEM certificates: {e}"))?;
        if certs.is_empty() {
            return Err(format!(
                "--cacert {shown}: no certificate in it (expected -----BEGIN CERTIFICATE-----)"
            ));
        }
        let provider = rustls::crypto::CryptoProvider::get_default()
            .cloned()
            .unwrap_or_else(|| Arc::new(rustls::crypto::aws_lc_rs::default_provider()));
        let system = rustls_platform_verifier::Verifier::new_with_extra_roots(
            certs.clone(),
            provider.clone(),
        )
        .map_err(|e| format!("--cacert {shown}: cannot trust these certificates: {e}"))?;
        let verifier = Arc::new(Pinned {
            pins: certs,
            system,
        });
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("cannot set up TLS: {e}"))?
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let mut config = match (&self.cert, &self.key) {
            (Some(cert), Some(key)) => {
                let what = || format!("--cert {} --key {}", cert.display(), key.display());
                let chain: Vec<CertificateDer<'static>> =
                    CertificateDer::pem_slice_iter(&read("--cert", cert)?)
                        .collect::<Result<_, _>>()
                        .map_err(|e| format!("{}: not a PEM certificate: {e}", what()))?;
                let private = PrivateKeyDer::from_pem_slice(&read("--key", key)?)
                    .map_err(|e| format!("{}: not a PEM private key: {e}", what()))?;
                config
                    .with_client_auth_cert(chain, private)
                    .map_err(|e| format!("{}: not a certificate and its key: {e}", what()))?
            }
            (Some(_), None) | (None, Some(_)) => {
                return Err("--cert and --key go together: pass both PEM files".into());
            }
            (None, None) => config.with_no_client_auth(),
        };
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(config)
    }
}

/// A TLS configuration trusting no certificate, for the clients of a
/// plain-HTTP target: their redirects stay on its origin (its scheme
/// included), so they never make a TLS connection, and each would
/// otherwise read and keep the system's certificates (four clients: a
/// quarter of a short run's CPU, and megabytes held for the whole run).
pub(super) fn never_used() -> Result<rustls::ClientConfig, String> {
    let provider = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::aws_lc_rs::default_provider()));
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth())
}

/// The bytes of the file a flag names; the error names both.
fn read(flag: &str, p: &PathBuf) -> Result<Vec<u8>, String> {
    std::fs::read(p).map_err(|e| format!("{flag} {}: cannot read it: {e}", p.display()))
}

/// Whether `e` (or one of its causes) is a TLS handshake answered with
/// something that is not TLS at all, as a plain-HTTP server answers: the
/// target's scheme is wrong, and no certificate setting would help.
pub fn answered_in_plain_http(e: &(dyn std::error::Error + 'static)) -> bool {
    // An I/O error's `source` skips the error it wraps (rustls's, here):
    // that one is reached through `get_ref`.
    let mut stack = vec![e];
    while let Some(s) = stack.pop() {
        if let Some(rustls::Error::InvalidMessage(_)) = s.downcast_ref::<rustls::Error>() {
            return true;
        }
        if let Some(inner) = s
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            stack.push(inner);
        }
        if let Some(next) = s.source() {
            stack.push(next);
        }
    }
    false
}

/// Checks a server's certificate as the system does with the `--cacert`
/// CAs added; and, failing that, accepts a certificate that is exactly one
/// of `--cacert`'s for the names it was issued for. `openssl req -x509`
/// makes a certificate marked as a CA, which the system's check refuses as
/// the server's own ("CA used as end entity"); given with `--cacert`, it is
/// trusted as curl trusts it.
#[derive(Debug)]
struct Pinned {
    pins: Vec<rustls_pki_types::CertificateDer<'static>>,
    system: rustls_platform_verifier::Verifier,
}

impl rustls::client::danger::ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &rustls_pki_types::CertificateDer<'_>,
        intermediates: &[rustls_pki_types::CertificateDer<'_>],
        server_name: &rustls_pki_types::ServerName<'_>,
        ocsp_response: &[u8],
        now: rustls_pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        let refused = match self.system.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Ok(verified) => return Ok(verified),
            Err(e) => e,
        };
        if !self.pins.iter().any(|p| p.as_ref() == end_entity.as_ref()) {
            return Err(refused);
        }
        let parsed = rustls::server::ParsedCertificate::try_from(end_entity)?;
        rustls::client::verify_server_name(&parsed, server_name)?;
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls_pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.system.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls_pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.system.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.system.supported_verify_schemes()
    }
}
