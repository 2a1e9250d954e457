//! Long steps before the first request (reading a description of 100,000
//! operations, building its graph, preparing the search) say so on stderr:
//! a spinner when stderr is a terminal, a line otherwise, and how long they
//! took. Short steps say nothing.

use std::io::IsTerminal;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long a step runs before a terminal shows a spinner.
const SPIN_AFTER: Duration = Duration::from_secs(1);
/// How long a step runs before a line says so, when stderr is not a
/// terminal (a CI log: fewer lines).
const SAY_AFTER: Duration = Duration::from_secs(5);

/// Runs `work` (`what` it does, as `reading openapi.yaml`), telling the
/// user when it takes longer than `SPIN_AFTER` on a terminal, or
/// `SAY_AFTER` otherwise.
pub(crate) fn timed<T>(what: &str, work: impl FnOnce() -> T) -> T {
    let (done, wait) = mpsc::channel::<()>();
    let label = what.to_string();
    let terminal = std::io::stderr().is_terminal();
    let after = if terminal { SPIN_AFTER } else { SAY_AFTER };
    let watcher = std::thread::spawn(move || {
        if !matches!(
            wait.recv_timeout(after),
            Err(mpsc::RecvTimeoutError::Timeout)
        ) {
            return false;
        }
        if terminal {
            let bar = indicatif::ProgressBar::new_spinner();
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("{spinner} cartograph: {msg}… {elapsed}")
            {
                bar.set_style(style);
            }
            bar.set_message(label);
            bar.enable_steady_tick(Duration::from_millis(200));
            let _ = wait.recv();
            bar.finish_and_clear();
        } else {
            eprintln!("cartograph: {label}… (this takes a while)");
            let _ = wait.recv();
        }
        true
    });
    let started = Instant::now();
    let out = work();
    drop(done);
    if watcher.join().unwrap_or(false) {
        eprintln!(
            "cartograph: {what} took {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_step_returns_its_value_and_says_nothing() {
        assert_eq!(timed("adding", || 2 + 2), 4);
    }
}
