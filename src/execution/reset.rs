//! `--reset-command`: what puts the target back in its start state, so that
//! reproducers and suite files are proven against a fresh server before
//! they are written (`reproduce::phase`). A shell command (restart a
//! container, truncate a database, `curl -X POST …/__reset`), or, for the
//! demo, a POST to its own reset endpoint.

use std::time::{Duration, Instant};

use super::auth::Group;

/// How long one reset may take: restarting a container takes seconds; one
/// that hangs fails the run instead of holding it for ever.
pub const RESET_LIMIT: Duration = Duration::from_secs(120);

/// Of the command's stderr, the error keeps this many last characters.
const STDERR_TAIL: usize = 400;

/// A way to put the target back in its start state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reset {
    /// A shell command, run with `sh -c` in its own process group.
    Command(String),
    /// A POST to this URL (the demo's `/__reset`), answered 2xx.
    Post(String),
}

/// A reset failed: the message names the command (or URL) and, for a
/// command, the end of what it wrote on stderr.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the reset {what} failed: {why}")]
pub struct ResetError {
    what: String,
    why: String,
}

impl Reset {
    /// A reset by shell command.
    pub fn command(cmd: impl Into<String>) -> Reset {
        Reset::Command(cmd.into())
    }

    /// A reset by POST to `url`.
    pub fn post(url: impl Into<String>) -> Reset {
        Reset::Post(url.into())
    }

    /// What it runs, for people (a command as a shell would read it back).
    pub fn describe(&self) -> String {
        match self {
            Reset::Command(cmd) => format!("command `{}`", one_line(cmd)),
            Reset::Post(url) => format!("POST {}", one_line(url)),
        }
    }

    /// Puts the target back in its start state, within [`RESET_LIMIT`];
    /// returns how long it took.
    pub async fn run(&self) -> Result<Duration, ResetError> {
        self.run_within(RESET_LIMIT).await
    }

    async fn run_within(&self, limit: Duration) -> Result<Duration, ResetError> {
        let started = Instant::now();
        let fail = |why: String| ResetError {
            what: self.describe(),
            why,
        };
        match self {
            Reset::Command(cmd) => run_command(cmd, limit).await.map_err(fail)?,
            Reset::Post(url) => {
                let client = reqwest::Client::builder()
                    .timeout(limit)
                    .build()
                    .map_err(|e| fail(e.to_string()))?;
                client
                    .post(url)
                    .send()
                    .await
                    .and_then(|r| r.error_for_status())
                    .map_err(|e| fail(e.to_string()))?;
            }
        }
        Ok(started.elapsed())
    }
}

/// Runs `cmd` with `sh -c` in a process group of its own, within `limit`.
async fn run_command(cmd: &str, limit: Duration) -> Result<(), String> {
    let mut command = tokio::process::Command::new("sh");
    command
        .arg("-c")
        .arg(cmd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    // A group of its own, so that what the shell started goes too when the
    // command is given up on.
    #[cfg(unix)]
    command.process_group(0);
    let child = command.spawn().map_err(|e| format!("cannot run it: {e}"))?;
    let mut group = Group(child.id());
    let output = tokio::time::timeout(limit, child.wait_with_output())
        .await
        .map_err(|_| {
            format!(
                "it did not finish within {} s (it was stopped)",
                limit.as_secs_f64()
            )
        })?
        .map_err(|e| format!("cannot run it: {e}"))?;
    group.0 = None;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stderr = stderr.trim();
    let tail: String = {
        let chars: Vec<char> = stderr.chars().collect();
        let from = chars.len().saturating_sub(STDERR_TAIL);
        chars[from..].iter().collect()
    };
    Err(if tail.is_empty() {
        format!("{}, and wrote nothing on stderr", output.status)
    } else {
        format!("{}; its stderr ends: {}", output.status, one_line(&tail))
    })
}

/// `s` on one line, control characters shown as escapes: a command or its
/// stderr may hold anything, and an error line must stay one line
/// (`model::text` has the general one, above this layer).
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_command_that_succeeds_resets() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("reset");
        let cmd = format!("touch '{}'", marker.display());
        Reset::command(cmd).run().await.unwrap();
        assert!(marker.exists());
    }

    #[tokio::test]
    async fn a_failing_command_is_named_with_its_stderr_tail() {
        let cmd = "echo starting >&2; echo 'database is locked' >&2; exit 3";
        let err = Reset::command(cmd).run().await.unwrap_err().to_string();
        assert!(err.contains("the reset command `echo starting"), "{err}");
        assert!(err.contains("exit status: 3"), "{err}");
        assert!(err.contains("database is locked"), "{err}");
        // Only the tail of a long stderr.
        let long = format!("printf '%0{}d' 0 >&2; echo END >&2; exit 1", 5000);
        let err = Reset::command(long).run().await.unwrap_err().to_string();
        assert!(err.contains("END"), "{err}");
        assert!(err.len() < 1000, "{}", err.len());
    }

    #[tokio::test]
    async fn a_hung_command_fails_at_its_limit_and_is_killed_with_what_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("late");
        let cmd = format!("(sleep 1; touch '{}') & wait", marker.display());
        let err = Reset::command(cmd)
            .run_within(Duration::from_millis(300))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("did not finish within 0.3 s"), "{err}");
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert!(!marker.exists(), "the command went on after its limit");
    }

    #[tokio::test]
    async fn a_post_that_is_refused_is_named() {
        // A port nothing listens on: bound, then released.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = format!("http://127.0.0.1:{port}/__reset");
        let err = Reset::post(url.clone())
            .run()
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("the reset POST {url} failed")),
            "{err}"
        );
    }
}
