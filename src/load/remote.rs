//! A description served over HTTP (`cartograph run https://…/openapi.json`):
//! fetched with the run's client, its relative `$ref` files fetched beside it
//! (same origin only), mirrored into a temporary folder so the file loader
//! resolves them as it does on disk, and its relative server URLs resolved
//! against where it came from.

use std::path::{Path, PathBuf};

use super::{Loaded, SpecError};

/// Whether the SPEC argument names a URL rather than a file.
pub fn is_url(spec: &str) -> bool {
    spec.starts_with("http://") || spec.starts_with("https://")
}

/// A description loaded from a URL.
pub struct Remote {
    /// The loaded API, its servers made absolute.
    pub loaded: Loaded,
    /// The root document's text (for the reports' line numbers).
    pub text: String,
    /// The URL it came from.
    pub url: url::Url,
}

/// Most files a description may pull in through `$ref`s.
const MAX_FILES: usize = 200;

/// Fetches and loads the description at `url` with `client`, sending
/// `headers` (the run's credentials) to its origin only.
pub async fn fetch(
    client: &reqwest::Client,
    url: &url::Url,
    headers: &[(String, String)],
) -> Result<Remote, SpecError> {
    let shown = PathBuf::from(url.as_str());
    let dir = tempfile::tempdir()
        .map_err(|e| SpecError::new(&shown, format!("cannot make a temporary folder: {e}")))?;
    let local = |u: &url::Url| -> PathBuf {
        let mut p = dir.path().to_path_buf();
        for seg in u.path().split('/').filter(|s| !s.is_empty() && *s != "..") {
            p.push(seg);
        }
        if u.path().ends_with('/') || u.path().is_empty() {
            p.push("index");
        }
        p
    };
    let root_text = get(client, url, headers, super::MAX_DESCRIPTION_BYTES).await?;
    // What the files its `$ref`s name may weigh, together.
    let mut left = super::MAX_DESCRIPTION_BYTES;
    let root_path = local(url);
    write(&root_path, &root_text, &shown)?;
    // Every relative `$ref` file, transitively, fetched beside the root.
    let mut todo = vec![(url.clone(), root_text.clone())];
    let mut seen = vec![url.clone()];
    while let Some((at, text)) = todo.pop() {
        let Ok(value) = super::document::parse_text(&text, &local(&at)) else {
            continue;
        };
        let mut files = Vec::new();
        super::document::collect_external_files(&value, &mut files);
        for file in files {
            let Ok(next) = at.join(&file) else { continue };
            let mut next_doc = next.clone();
            next_doc.set_fragment(None);
            if next_doc.origin() != url.origin()
                || seen.contains(&next_doc)
                || seen.len() >= MAX_FILES
            {
                continue;
            }
            seen.push(next_doc.clone());
            // A file that cannot be fetched is reported where it is used.
            if let Ok(text) = get(client, &next_doc, headers, left).await
                && write(&local(&next_doc), &text, &shown).is_ok()
            {
                left -= text.len();
                todo.push((next_doc, text));
            }
        }
    }
    // Its `$ref`s read the mirror only: never a file of this machine.
    let mut loaded = super::load_in(&root_path, Some(dir.path())).map_err(|mut e| {
        e.file = shown.clone();
        e
    })?;
    let prefix = dir.path().to_string_lossy().into_owned();
    let base = url
        .join(".")
        .map_or_else(|_| url.to_string(), |u| u.to_string());
    // Messages name the URLs, not the temporary copies.
    let named = |p: &Path| -> PathBuf {
        match p.strip_prefix(dir.path()) {
            Ok(rel) => PathBuf::from(format!("{base}{}", rel.to_string_lossy())),
            Err(_) => p.to_path_buf(),
        }
    };
    for w in &mut loaded.warnings {
        w.file = if w.file == root_path {
            shown.clone()
        } else {
            named(&w.file)
        };
        w.message = w.message.replace(&format!("{prefix}/"), &base);
    }
    loaded.api.servers = servers(&loaded.api.servers, url);
    Ok(Remote {
        loaded,
        text: root_text,
        url: url.clone(),
    })
}

/// The servers with relative URLs (`/api/v3`, `v1`) resolved against the
/// description's URL; with none, its origin.
pub fn servers(servers: &[String], url: &url::Url) -> Vec<String> {
    let resolved: Vec<String> = servers
        .iter()
        .filter_map(|s| {
            if is_url(s) {
                Some(s.clone())
            } else {
                url.join(s).ok().map(|u| u.to_string())
            }
        })
        .collect();
    if resolved.is_empty() {
        vec![url.origin().ascii_serialization()]
    } else {
        resolved
    }
}

/// The text at `url`, refused past `limit` bytes (a description that
/// streams for ever must not fill the memory).
async fn get(
    client: &reqwest::Client,
    url: &url::Url,
    headers: &[(String, String)],
    limit: usize,
) -> Result<String, SpecError> {
    let shown = PathBuf::from(url.as_str());
    let mut request = client.get(url.clone()).header(
        "accept",
        "application/json, application/yaml, text/yaml, */*",
    );
    for (name, value) in headers {
        request = request.header(name.as_str(), value.as_str());
    }
    let answer = request.send().await.map_err(|e| {
        let mut why = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            why = format!("{why}: {s}");
            source = s.source();
        }
        SpecError::new(&shown, format!("cannot fetch the description: {why}"))
            .hint(fetch_hint(&e, url))
    })?;
    let status = answer.status();
    if !status.is_success() {
        return Err(SpecError::new(
            &shown,
            format!("fetching the description answered {status}"),
        )
        .hint("check the URL; pass -H for a description behind authentication"));
    }
    let too_large = || {
        SpecError::new(
            &shown,
            format!(
                "the description is larger than {}; refused",
                crate::model::text::size_text(limit)
            ),
        )
        .hint(format!(
            "a description and the files its $refs name may weigh {} in all; check the URL",
            crate::model::text::size_text(super::MAX_DESCRIPTION_BYTES)
        ))
    };
    let body = body_within(answer, limit)
        .await
        .map_err(|e| SpecError::new(&shown, format!("cannot read the description: {e}")))?
        .ok_or_else(too_large)?;
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// The body of `answer`, or `None` once it passes `limit` bytes (read no
/// further: an answer may stream for ever).
pub(super) async fn body_within(
    mut answer: reqwest::Response,
    limit: usize,
) -> Result<Option<Vec<u8>>, reqwest::Error> {
    if answer.content_length().is_some_and(|n| n > limit as u64) {
        return Ok(None);
    }
    let mut body = Vec::new();
    while let Some(chunk) = answer.chunk().await? {
        if body.len() + chunk.len() > limit {
            return Ok(None);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Some(body))
}

/// What to do about a fetch that got no answer, told by the error's kind
/// (not its wording): a certificate is only mentioned for `https://`.
/// Whether the TLS handshake was answered with something that is not TLS
/// (a plain-HTTP server's answer). The run's transport tells it the same
/// way (`execution::tls::answered_in_plain_http`); the loader may not use
/// the execution layer. An I/O error's `source` skips the error it wraps
/// (rustls's): that one is reached through `get_ref`.
fn answered_in_plain_http(e: &(dyn std::error::Error + 'static)) -> bool {
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

fn fetch_hint(e: &reqwest::Error, url: &url::Url) -> String {
    let place = format!(
        "{}:{}",
        url.host_str().unwrap_or(""),
        url.port_or_known_default().unwrap_or(0)
    );
    let io_kind = {
        let mut source = std::error::Error::source(e);
        let mut kind = None;
        while let Some(s) = source {
            if let Some(io) = s.downcast_ref::<std::io::Error>() {
                kind = Some(io.kind());
            }
            source = s.source();
        }
        kind
    };
    if e.is_timeout() {
        "no answer came in time: check the URL, or allow longer with --timeout".into()
    } else if e.is_dns() {
        format!("the host name of {url} does not resolve: check the URL")
    } else if io_kind == Some(std::io::ErrorKind::ConnectionRefused) {
        format!("the connection to {place} was refused: is the server running and listening there?")
    } else if e.is_connect() && url.scheme() == "https" && answered_in_plain_http(e) {
        let mut http = url.clone();
        let _ = http.set_scheme("http");
        format!(
            "the server at {place} answered the TLS handshake in plain HTTP: the URL is http://, not https:// (no certificate setting helps): {http}"
        )
    } else if e.is_connect() && url.scheme() == "https" {
        "check the URL; for a server whose certificate is not trusted, pass --cacert FILE (the CA that signed it) or --insecure".into()
    } else if e.is_connect() {
        format!(
            "no connection to {place} could be made: check the URL and that the server is running"
        )
    } else {
        "the server closed the connection or answered something that is not HTTP: check the URL"
            .into()
    }
}

fn write(path: &Path, text: &str, shown: &Path) -> Result<(), SpecError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| SpecError::new(shown, format!("cannot write a temporary copy: {e}")))?;
    }
    std::fs::write(path, text)
        .map_err(|e| SpecError::new(shown, format!("cannot write a temporary copy: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_servers_resolve_against_the_description() {
        let url = url::Url::parse("http://127.0.0.1:9000/docs/openapi.json").unwrap();
        assert_eq!(
            servers(&["/api/v3".into()], &url),
            ["http://127.0.0.1:9000/api/v3"]
        );
        assert_eq!(
            servers(&["v1".into()], &url),
            ["http://127.0.0.1:9000/docs/v1"]
        );
        assert_eq!(servers(&[], &url), ["http://127.0.0.1:9000"]);
        assert_eq!(
            servers(&["https://api.example.com".into()], &url),
            ["https://api.example.com"]
        );
    }
}
