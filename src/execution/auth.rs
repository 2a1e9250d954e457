//! Credentials: fixed headers from `--header`, and headers printed by
//! `--auth-command`, re-run on a 401 and every `--auth-refresh`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Mutex;

use super::secrets::Secrets;

/// Headers the auth command printed, and when.
type Issued = (Vec<(String, String)>, Instant);

/// The headers every request carries, and how to renew them.
#[derive(Debug, Clone)]
pub struct Credentials {
    fixed: Vec<(String, String)>,
    /// API keys sent in every request's query.
    query: Vec<(String, String)>,
    command: Option<String>,
    refresh: Option<Duration>,
    current: Arc<Mutex<Option<Issued>>>,
    /// The names of the headers the auth command last printed (kept when
    /// its output is forgotten after a 401): a suite file takes each as a
    /// variable.
    issued_names: Arc<std::sync::Mutex<Vec<String>>>,
    secrets: Secrets,
    /// The other identities requests may go as, by name.
    others: Arc<std::sync::RwLock<Vec<Named>>>,
    /// The name of the run's own identity, as findings name it, when an
    /// identity given by name stands for it.
    main: Option<String>,
}

/// An identity's name and the headers it sends.
type Named = (String, Vec<(String, String)>);

/// The user and password a URL carried, once taken out of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Userinfo {
    /// `Authorization: Basic …`, the header a client sends for them.
    pub header: (String, String),
    /// What must never be written: the user, the password, both.
    pub secrets: Vec<String>,
}

/// Takes the user and password out of `url` (`http://user:pw@host/`): they
/// are credentials like a `-H` header, sent as Basic auth and never
/// written, so the URL every file names holds neither.
pub fn take_userinfo(url: &mut url::Url) -> Option<Userinfo> {
    use base64::Engine;
    if url.username().is_empty() && url.password().is_none() {
        return None;
    }
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8_lossy()
            .into_owned()
    };
    let user = decode(url.username());
    let password = url.password().map(decode).unwrap_or_default();
    // Clearing cannot fail on a URL that had them (it has a host).
    let _ = url.set_username("");
    let _ = url.set_password(None);
    let pair = format!("{user}:{password}");
    let token = base64::engine::general_purpose::STANDARD.encode(&pair);
    Some(Userinfo {
        header: ("Authorization".to_string(), format!("Basic {token}")),
        secrets: [user, password, pair]
            .into_iter()
            .filter(|s| !s.is_empty() && s != ":")
            .collect(),
    })
}

/// `text` as it may be shown when it is a URL: without its user and
/// password (`http://host/`); a text that does not parse loses what stands
/// between `://` and an `@` before the next `/`.
pub fn without_userinfo(text: &str) -> String {
    if let Ok(mut url) = url::Url::parse(text) {
        if take_userinfo(&mut url).is_some() {
            return url.to_string();
        }
        return text.to_string();
    }
    let Some(start) = text.find("://").map(|i| i + 3) else {
        return text.to_string();
    };
    let authority_end = text[start..].find('/').map_or(text.len(), |i| start + i);
    match text[start..authority_end].rfind('@') {
        Some(at) => format!("{}{}", &text[..start], &text[start + at + 1..]),
        None => text.to_string(),
    }
}

/// Parses `Name: value`. An error never quotes the text: a malformed
/// header is most often a credential without its colon
/// (`Authorization Bearer …`); it names at most the first word, when a
/// header name may stand there.
pub fn parse_header(text: &str) -> Result<(String, String), String> {
    let malformed = |why: &str| {
        let mut words = text.split_whitespace();
        let first = words.next().unwrap_or("").trim_end_matches(':');
        let begins = if words.next().is_some()
            && (1..=64).contains(&first.len())
            && first
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b))
        {
            format!(", beginning {first}")
        } else {
            String::new()
        };
        format!(
            "{why}{begins}: write it as 'Name: value' (the header is not shown here, as it may hold a secret)"
        )
    };
    let (name, value) = text
        .split_once(':')
        .ok_or_else(|| malformed("a header without a colon"))?;
    let name = name.trim();
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b))
    {
        return Err(malformed("a header whose name is not a valid header name"));
    }
    Ok((name.to_string(), value.trim().to_string()))
}

/// Parses `--query-key NAME=VALUE`. An error never quotes the text: its
/// value is a secret (so the flag takes text, and this runs after clap,
/// whose errors quote the value).
pub fn parse_query_key(text: &str) -> Result<(String, String), String> {
    let how = "write NAME=VALUE, e.g. --query-key api_key=$API_KEY (the text is not shown here, as it may hold a secret)";
    let Some((name, value)) = text.split_once('=') else {
        return Err(format!("no `=` in it: {how}"));
    };
    let name = name.trim();
    if name.is_empty() {
        return Err(format!("no name before the `=`: {how}"));
    }
    if value.is_empty() {
        return Err(format!("no value after {name}=: {how}"));
    }
    Ok((name.to_string(), value.to_string()))
}

impl Credentials {
    /// Credentials from fixed headers and an optional command; every value is
    /// registered as a secret.
    pub fn new(
        fixed: Vec<(String, String)>,
        command: Option<String>,
        refresh: Option<Duration>,
        secrets: Secrets,
    ) -> Credentials {
        for (n, v) in &fixed {
            secrets.add_header(n, v);
        }
        Credentials {
            fixed,
            query: Vec::new(),
            command,
            refresh,
            current: Arc::new(Mutex::new(None)),
            issued_names: Arc::default(),
            secrets,
            others: Arc::default(),
            main: None,
        }
    }

    /// The same, its own identity named `name` and sending `headers` besides
    /// the others (an identity given with `--identity` or an auth file that
    /// stands for the run's own credentials); the values are secrets.
    pub fn as_identity(mut self, name: &str, headers: Vec<(String, String)>) -> Credentials {
        for (n, v) in &headers {
            self.secrets.add_header(n, v);
        }
        self.fixed.extend(headers);
        self.main = Some(name.to_string());
        self
    }

    /// The name of the run's own identity, when an identity given by name
    /// stands for it.
    pub fn main_name(&self) -> Option<&str> {
        self.main.as_deref()
    }

    /// Adds an identity requests may go as, by `name`; its header values
    /// are secrets.
    pub fn add_identity(&self, name: &str, headers: Vec<(String, String)>) {
        for (n, v) in &headers {
            self.secrets.add_header(n, v);
        }
        let mut others = self.others.write().unwrap_or_else(|e| e.into_inner());
        others.retain(|(n, _)| n != name);
        others.push((name.to_string(), headers));
    }

    /// The names of the other identities, in the order added.
    pub fn identity_names(&self) -> Vec<String> {
        let others = self.others.read().unwrap_or_else(|e| e.into_inner());
        others.iter().map(|(n, _)| n.clone()).collect()
    }

    /// The headers identity `name` sends; `None` for a name no identity
    /// has.
    pub fn identity_headers(&self, name: &str) -> Option<Vec<(String, String)>> {
        let others = self.others.read().unwrap_or_else(|e| e.into_inner());
        others
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, h)| h.clone())
    }

    /// No credentials at all.
    pub fn none() -> Credentials {
        Credentials::new(Vec::new(), None, None, Secrets::new())
    }

    /// The same, with API keys sent in every request's query
    /// (`--query-key`); each value is registered as a secret.
    pub fn with_query(mut self, keys: Vec<(String, String)>) -> Credentials {
        for (_, v) in &keys {
            self.secrets.add(v);
        }
        self.query = keys;
        self
    }

    /// The API keys sent in every request's query.
    pub fn query(&self) -> &[(String, String)] {
        &self.query
    }

    /// Whether an auth command is configured (a 401 is then worth one retry).
    pub fn renewable(&self) -> bool {
        self.command.is_some()
    }

    /// The headers to send now, running the auth command when it has not run yet
    /// or its output is older than the refresh interval.
    pub async fn headers(&self) -> Result<Vec<(String, String)>, String> {
        let mut out = self.fixed.clone();
        if let Some(cmd) = &self.command {
            let mut current = self.current.lock().await;
            let stale = match (&*current, self.refresh) {
                (None, _) => true,
                (Some((_, at)), Some(every)) => at.elapsed() >= every,
                (Some(_), None) => false,
            };
            if stale {
                let headers = run_command(cmd, AUTH_COMMAND_LIMIT).await?;
                for (n, v) in &headers {
                    self.secrets.add_header(n, v);
                }
                *self.issued_names.lock().unwrap_or_else(|e| e.into_inner()) =
                    headers.iter().map(|(n, _)| n.clone()).collect();
                *current = Some((headers, Instant::now()));
            }
            if let Some((headers, _)) = &*current {
                out.extend(headers.iter().cloned());
            }
        }
        Ok(out)
    }

    /// The names of the headers the run's own credentials send (`-H`, an
    /// identity standing for the run's, and the auth command's as it last
    /// printed them), once each, never their values.
    pub fn header_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        let issued = self
            .issued_names
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        for name in self.fixed.iter().map(|(n, _)| n.clone()).chain(issued) {
            if !names.iter().any(|n| n.eq_ignore_ascii_case(&name)) {
                names.push(name);
            }
        }
        names
    }

    /// Forgets the command's output so the next request runs it again (after a 401).
    pub async fn invalidate(&self) {
        *self.current.lock().await = None;
    }
}

/// How long the auth command may take: a command that hangs (a login
/// prompt with no terminal, a server that never answers) fails the run
/// instead of holding it for ever.
pub const AUTH_COMMAND_LIMIT: Duration = Duration::from_secs(30);

/// Runs the auth command with `sh -c`, within `limit`; each non-empty
/// output line is a header.
async fn run_command(cmd: &str, limit: Duration) -> Result<Vec<(String, String)>, String> {
    let mut command = tokio::process::Command::new("sh");
    command
        .arg("-c")
        .arg(cmd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    // A group of its own, so that what the shell started goes too when
    // the command is given up on.
    #[cfg(unix)]
    command.process_group(0);
    let child = command
        .spawn()
        .map_err(|e| format!("cannot run the auth command: {e}"))?;
    let mut group = Group(child.id());
    let output = tokio::time::timeout(limit, child.wait_with_output())
        .await
        .map_err(|_| {
            format!(
                "the auth command did not finish within {} s",
                limit.as_secs_f64()
            )
        })?
        .map_err(|e| format!("cannot run the auth command: {e}"))?;
    group.0 = None;
    if !output.status.success() {
        // The command's stderr may hold secrets; report only its status.
        return Err(format!("the auth command failed ({})", output.status));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let headers: Result<Vec<_>, _> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            parse_header(l)
                .map_err(|_| "the auth command must print lines 'Name: value'".to_string())
        })
        .collect();
    let headers = headers?;
    if headers.is_empty() {
        return Err("the auth command printed no header".into());
    }
    Ok(headers)
}

/// The process group of an auth command still running: killed when it is
/// given up on (its time ran out, the run was interrupted or stopped).
pub(super) struct Group(pub(super) Option<u32>);

impl Drop for Group {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(id) = self.0 {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{id}")])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_becomes_basic_auth_and_secrets() {
        let mut url = url::Url::parse("http://u%40x:p%3Ass@127.0.0.1:8080/api").unwrap();
        let info = take_userinfo(&mut url).unwrap();
        assert_eq!(url.as_str(), "http://127.0.0.1:8080/api");
        // base64("u@x:p:ss")
        assert_eq!(
            info.header,
            ("Authorization".into(), "Basic dUB4OnA6c3M=".into())
        );
        assert_eq!(info.secrets, vec!["u@x", "p:ss", "u@x:p:ss"]);
        let mut plain = url::Url::parse("http://127.0.0.1/").unwrap();
        assert_eq!(take_userinfo(&mut plain), None);
        let mut user_only = url::Url::parse("http://admin@h/").unwrap();
        assert_eq!(
            take_userinfo(&mut user_only).unwrap().secrets,
            vec!["admin", "admin:"]
        );
    }

    #[test]
    fn urls_are_shown_without_userinfo() {
        assert_eq!(without_userinfo("http://u:p@h:1/x"), "http://h:1/x");
        assert_eq!(without_userinfo("http://h/x"), "http://h/x");
        assert_eq!(without_userinfo("openapi.yaml"), "openapi.yaml");
        assert_eq!(
            without_userinfo("http://u:p@h:notaport/x"),
            "http://h:notaport/x"
        );
        assert_eq!(without_userinfo("http://h/a@b"), "http://h/a@b");
    }

    #[test]
    fn query_keys_are_name_value_and_errors_keep_the_value_secret() {
        assert_eq!(
            parse_query_key("api_key=s3cr3t=x"),
            Ok(("api_key".into(), "s3cr3t=x".into()))
        );
        for bad in ["s3cr3t", "=s3cr3t", "api_key="] {
            let e = parse_query_key(bad).unwrap_err();
            assert!(!e.contains("s3cr3t") && e.contains("NAME=VALUE"), "{e}");
        }
    }

    #[test]
    fn headers_parse() {
        assert_eq!(
            parse_header("X-Api-Key: k 1").unwrap(),
            ("X-Api-Key".into(), "k 1".into())
        );
        assert!(parse_header("nocolon").is_err());
        assert!(parse_header("bad name: x").is_err());
        // The value is never quoted back, only a header name before it.
        let e = parse_header("Authorization Bearer s3cr3t-t0ken-value").unwrap_err();
        assert!(!e.contains("s3cr3t") && !e.contains("Bearer"), "{e}");
        assert!(e.contains("beginning Authorization"), "{e}");
        for text in ["s3cr3t-t0ken-value", "Bearer s3cr3t:x y", "x s3cr3t:v"] {
            let e = parse_header(text).unwrap_err();
            assert!(!e.contains("s3cr3t"), "{e}");
        }
    }

    #[tokio::test]
    async fn command_output_becomes_headers_and_secrets() {
        let secrets = Secrets::new();
        let c = Credentials::new(
            vec![("X-Fixed".into(), "fixed-secret".into())],
            Some("echo 'Authorization: Bearer from-command'".into()),
            None,
            secrets.clone(),
        );
        let h = c.headers().await.unwrap();
        assert_eq!(h.len(), 2);
        assert_eq!(h[1], ("Authorization".into(), "Bearer from-command".into()));
        assert_eq!(
            secrets.redact("from-command fixed-secret"),
            "[REDACTED] [REDACTED]"
        );
    }

    #[tokio::test]
    async fn failing_command_is_an_error_without_its_output() {
        let c = Credentials::new(
            Vec::new(),
            Some("echo secret >&2; exit 3".into()),
            None,
            Secrets::new(),
        );
        let err = c.headers().await.unwrap_err();
        assert!(err.contains("failed") && !err.contains("secret"));
    }

    #[tokio::test]
    async fn a_hung_command_fails_at_its_limit_and_is_killed_with_what_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("still-running");
        let cmd = format!(
            "sleep 2; touch '{}'; echo 'X-Token: late'",
            marker.display()
        );
        let started = Instant::now();
        let err = run_command(&cmd, Duration::from_millis(300))
            .await
            .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(2), "{err}");
        assert!(err.contains("did not finish within 0.3 s"), "{err}");
        // The shell's child (the sleep, then the touch) went with it.
        tokio::time::sleep(Duration::from_millis(2500)).await;
        assert!(!marker.exists(), "the command went on after its limit");
    }
}
