//! `cartograph completions` and `cartograph man`: shell completions and man
//! pages, generated from the same clap definitions as `--help`, so they
//! never disagree with it.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, CommandFactory, ValueEnum};

/// The shells completions are written for.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(super) enum Shell {
    /// Bash.
    Bash,
    /// Zsh.
    Zsh,
    /// Fish.
    Fish,
    /// PowerShell.
    Powershell,
    /// Elvish.
    Elvish,
}

/// The arguments of `cartograph completions`.
#[derive(Debug, Args)]
#[command(
    after_help = "Install them where your shell looks for completions, for example:\n  cartograph completions bash > ~/.local/share/bash-completion/completions/cartograph\n  cartograph completions zsh > \"${fpath[1]}/_cartograph\"\n  cartograph completions fish > ~/.config/fish/completions/cartograph.fish\n  cartograph completions powershell >> $PROFILE"
)]
pub(super) struct CompletionsArgs {
    /// The shell to write completions for.
    #[arg(value_enum)]
    shell: Shell,
}

/// Writes the completions of every command and flag to stdout.
pub(super) fn completions(args: &CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut cmd = super::Cli::command();
    let shell = match args.shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
        Shell::Powershell => clap_complete::Shell::PowerShell,
        Shell::Elvish => clap_complete::Shell::Elvish,
    };
    clap_complete::generate(shell, &mut cmd, "cartograph", &mut std::io::stdout());
    Ok(ExitCode::SUCCESS)
}

/// The arguments of `cartograph man`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  cartograph man | man -l -\n  cartograph man --out /usr/local/share/man/man1   # cartograph.1, cartograph-run.1, …"
)]
pub(super) struct ManArgs {
    /// Write one page per command into this folder (`cartograph.1`,
    /// `cartograph-run.1`, …) instead of the main page to stdout.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

/// Writes the man page (or one per command).
pub(super) fn man(args: &ManArgs) -> anyhow::Result<ExitCode> {
    let cmd = super::Cli::command();
    match &args.out {
        None => {
            clap_mangen::Man::new(cmd).render(&mut std::io::stdout())?;
        }
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
            clap_mangen::generate_to(cmd, dir).map_err(|e| {
                anyhow::anyhow!("cannot write man pages into {}: {e}", dir.display())
            })?;
            eprintln!("cartograph: man pages written into {}", dir.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every subcommand path and its long flags.
    fn commands(cmd: &clap::Command, path: Vec<String>, out: &mut Vec<(Vec<String>, Vec<String>)>) {
        let flags = cmd
            .get_arguments()
            .filter_map(|a| a.get_long().map(str::to_string))
            .collect();
        out.push((path.clone(), flags));
        for sub in cmd.get_subcommands() {
            let mut p = path.clone();
            p.push(sub.get_name().to_string());
            commands(sub, p, out);
        }
    }

    #[test]
    fn completions_hold_every_command_and_flag() {
        let cmd = crate::cli::Cli::command();
        let mut all = Vec::new();
        commands(&cmd, Vec::new(), &mut all);
        assert!(all.len() > 8, "{all:?}");
        for shell in [
            clap_complete::Shell::Bash,
            clap_complete::Shell::Zsh,
            clap_complete::Shell::Fish,
            clap_complete::Shell::PowerShell,
            clap_complete::Shell::Elvish,
        ] {
            let mut text = Vec::new();
            clap_complete::generate(
                shell,
                &mut crate::cli::Cli::command(),
                "cartograph",
                &mut text,
            );
            let text = String::from_utf8(text).unwrap();
            for (path, flags) in &all {
                if let Some(name) = path.last() {
                    assert!(text.contains(name.as_str()), "{shell}: no {name}");
                }
                for f in flags {
                    assert!(text.contains(f.as_str()), "{shell}: no --{f} of {path:?}");
                }
            }
        }
    }

    #[test]
    fn completions_offer_every_check_code() {
        for shell in [clap_complete::Shell::Bash, clap_complete::Shell::Fish] {
            let mut text = Vec::new();
            clap_complete::generate(
                shell,
                &mut crate::cli::Cli::command(),
                "cartograph",
                &mut text,
            );
            let text = String::from_utf8(text).unwrap();
            for code in crate::oracles::registry::Code::ALL {
                assert!(text.contains(code.as_str()), "{shell}: no {code}");
            }
        }
    }

    #[test]
    fn man_pages_hold_every_command_and_flag() {
        let dir = tempfile::tempdir().unwrap();
        clap_mangen::generate_to(crate::cli::Cli::command(), dir.path()).unwrap();
        let mut all = Vec::new();
        commands(&crate::cli::Cli::command(), Vec::new(), &mut all);
        for (path, flags) in &all {
            let name = std::iter::once("cartograph".to_string())
                .chain(path.iter().cloned())
                .collect::<Vec<_>>()
                .join("-");
            let page = std::fs::read_to_string(dir.path().join(format!("{name}.1")))
                .unwrap_or_else(|e| panic!("{name}.1: {e}"));
            // roff writes `-` as `\-`.
            let page = page.replace("\\-", "-");
            for f in flags {
                assert!(page.contains(&format!("--{f}")), "{name}.1: no --{f}");
            }
        }
    }
}
