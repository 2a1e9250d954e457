//! Ctrl-C (SIGINT) and SIGTERM, for the whole process and every phase of a
//! run: the first one is remembered, every waiter is woken, and the run ends
//! its current phase, writes what it gathered and exits 130 or 143; a second
//! one exits at once.
//!
//! The signals are watched by one thread of the process with its own
//! runtime: a watcher tied to a run's runtime would leave the signal
//! caught (tokio never restores the default) but heeded by no one once that
//! runtime is gone, and a listener made per phase misses a signal that
//! comes between phases.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};

use tokio::sync::Notify;

/// The signal that interrupted the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupt {
    /// SIGINT (Ctrl-C).
    Int,
    /// SIGTERM.
    Term,
}

impl Interrupt {
    /// The exit status shells expect of a process the signal ended: 128
    /// and the signal's number.
    pub fn exit_status(self) -> u8 {
        match self {
            Interrupt::Int => 130,
            Interrupt::Term => 143,
        }
    }

    /// The signal's name.
    pub fn name(self) -> &'static str {
        match self {
            Interrupt::Int => "SIGINT",
            Interrupt::Term => "SIGTERM",
        }
    }

    fn code(self) -> u8 {
        match self {
            Interrupt::Int => 1,
            Interrupt::Term => 2,
        }
    }
}

/// The first signal received (0 none, else [`Interrupt::code`]).
static RECEIVED: AtomicU8 = AtomicU8::new(0);

fn notify() -> &'static Notify {
    static NOTIFY: OnceLock<Notify> = OnceLock::new();
    NOTIFY.get_or_init(Notify::new)
}

/// Starts watching SIGINT and SIGTERM, once per process (later calls do
/// nothing). Until then a signal has its default effect: the process ends.
pub fn watch() {
    static STARTED: OnceLock<()> = OnceLock::new();
    STARTED.get_or_init(|| {
        let (ready, installed) = std::sync::mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("cartograph-signals".into())
            .spawn(move || watcher(ready));
        // The handlers are in place when this returns: a signal sent right
        // after is not lost.
        if spawned.is_ok() {
            let _ = installed.recv();
        }
    });
}

fn watcher(ready: std::sync::mpsc::Sender<()>) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    runtime.block_on(async move {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let (Ok(mut int), Ok(mut term)) = (
                signal(SignalKind::interrupt()),
                signal(SignalKind::terminate()),
            ) else {
                let _ = ready.send(());
                return;
            };
            let _ = ready.send(());
            loop {
                let which = tokio::select! {
                    _ = int.recv() => Interrupt::Int,
                    _ = term.recv() => Interrupt::Term,
                };
                received_now(which);
            }
        }
        #[cfg(not(unix))]
        {
            let _ = ready.send(());
            while tokio::signal::ctrl_c().await.is_ok() {
                received_now(Interrupt::Int);
            }
        }
    });
}

/// Records `which`; a second signal ends the process at once, with the
/// status of the one just received.
fn received_now(which: Interrupt) {
    if RECEIVED
        .compare_exchange(0, which.code(), Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        std::process::exit(i32::from(which.exit_status()));
    }
    notify().notify_waiters();
}

/// The signal received, if any.
pub fn received() -> Option<Interrupt> {
    match RECEIVED.load(Ordering::SeqCst) {
        1 => Some(Interrupt::Int),
        2 => Some(Interrupt::Term),
        _ => None,
    }
}

/// Waits for a signal (returns at once when one came already).
pub async fn wait() -> Interrupt {
    loop {
        let woken = notify().notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        if let Some(which) = received() {
            return which;
        }
        woken.await;
    }
}

/// `work`, unless a signal comes first (`None` then).
pub async fn unless_interrupted<T>(work: impl std::future::Future<Output = T>) -> Option<T> {
    if received().is_some() {
        return None;
    }
    tokio::select! {
        out = work => Some(out),
        _ = wait() => None,
    }
}
