//! `run --config FILE`: a run's settings kept in a TOML file next to the API.
//! Each key is a `run` flag's long name (`max-requests` or `max_requests`),
//! plus `spec`; the file's values become flags placed before the command
//! line's, so the command line wins. Every value is checked by the flag's own
//! parser, and errors name the file, the line and the key.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, Command, CommandFactory};
use toml_edit::{Item, Value};

/// Keys that name a file: relative to the configuration file, not to where
/// `cartograph` is run.
const PATHS: [&str; 5] = ["spec", "cacert", "cert", "key", "auth-file"];

/// `argv` with the flags of the `--config` file of a `run` command added
/// (none when there is no such file).
pub(super) fn expand(argv: Vec<OsString>) -> Result<Vec<OsString>, String> {
    if argv.get(1).map(OsString::as_os_str) != Some(OsStr::new("run")) {
        return Ok(argv);
    }
    let Some(file) = config_path(&argv[2..]) else {
        return Ok(argv);
    };
    let text = std::fs::read_to_string(&file)
        .map_err(|e| format!("--config {}: cannot read it: {e}", file.display()))?;
    let mut cli = super::Cli::command();
    // What the command line itself sets (required arguments may come from
    // the file, so a missing one is no error here).
    let matches = cli
        .clone()
        .ignore_errors(true)
        .try_get_matches_from(&argv)
        .map_err(|e| e.to_string())?;
    let on_cli = matches.subcommand_matches("run").cloned();
    let run = cli
        .find_subcommand_mut("run")
        .expect("the run command exists")
        .clone();
    let from_file = flags(&file, &text, &run, on_cli.as_ref())?;
    let mut out: Vec<OsString> = argv[..2].to_vec();
    out.extend(from_file.into_iter().map(OsString::from));
    out.extend(argv[2..].iter().cloned());
    Ok(out)
}

/// The file named by `--config FILE` or `--config=FILE`, if any.
fn config_path(args: &[OsString]) -> Option<PathBuf> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let a = a.to_string_lossy();
        if a == "--" {
            break;
        }
        if a == "--config" {
            return it.next().map(PathBuf::from);
        }
        if let Some(v) = a.strip_prefix("--config=") {
            return Some(PathBuf::from(v));
        }
    }
    None
}

/// 1-based line of byte `offset` of `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The flags `text` (the file `file`) sets that the command line does not.
fn flags(
    file: &Path,
    text: &str,
    run: &Command,
    on_cli: Option<&clap::ArgMatches>,
) -> Result<Vec<String>, String> {
    let doc = toml_edit::Document::parse(text).map_err(|e| {
        let at = e
            .span()
            .map_or(String::new(), |s| format!(":{}", line_of(text, s.start)));
        format!("{}{at}: not valid TOML: {}", file.display(), e.message())
    })?;
    let dir = file.parent().unwrap_or(Path::new("."));
    let table = doc.as_table();
    let mut out = Vec::new();
    let mut positional = None;
    for (key, _) in table.iter() {
        let (k, item) = table.get_key_value(key).expect("a key of the table");
        let line = k.span().map_or(0, |s| line_of(text, s.start));
        let at = format!("{}:{line}: {key}", file.display());
        let name = key.replace('_', "-");
        if name == "identities" {
            out.extend(identity_flags(&at, item)?);
            continue;
        }
        let arg = run
            .get_arguments()
            .find(|a| {
                a.get_long() == Some(name.as_str()) || (name == "spec" && a.get_id() == "spec")
            })
            .filter(|_| !matches!(name.as_str(), "config" | "help"));
        let Some(arg) = arg else {
            let known: Vec<&str> = run
                .get_arguments()
                .filter_map(|a| a.get_long())
                .filter(|l| !matches!(*l, "config" | "help"))
                .collect();
            let near = known
                .iter()
                .map(|k| (strsim::levenshtein(k, &name), *k))
                .min()
                .filter(|(d, _)| *d <= 3)
                .map_or(String::new(), |(_, k)| format!(" (did you mean `{k}`?)"));
            return Err(format!(
                "{at}: unknown key{near}; the keys are `spec` and run's long flag names: {}",
                known.join(", ")
            ));
        };
        let cli_set = on_cli
            .and_then(|m| m.value_source(arg.get_id().as_str()))
            .is_some_and(|s| s == ValueSource::CommandLine);
        let values = values(&at, &name, item, arg)?;
        for v in &values {
            check(&at, run, arg, v)?;
        }
        let values: Vec<String> = if PATHS.contains(&name.as_str()) {
            values
                .into_iter()
                .map(|v| {
                    let url = v.starts_with("http://") || v.starts_with("https://");
                    if url || Path::new(&v).is_absolute() {
                        v
                    } else {
                        dir.join(v).to_string_lossy().into_owned()
                    }
                })
                .collect()
        } else {
            values
        };
        match arg.get_action() {
            ArgAction::SetTrue | ArgAction::SetFalse => {
                if !cli_set && values.first().is_some_and(|v| v == "true") {
                    out.push(format!("--{name}"));
                }
            }
            ArgAction::Append => {
                let cli_headers: Vec<String> = if name == "header" {
                    on_cli
                        .and_then(|m| m.get_many::<String>(arg.get_id().as_str()))
                        .into_iter()
                        .flatten()
                        .filter_map(|h| {
                            h.split_once(':')
                                .map(|(n, _)| n.trim().to_ascii_lowercase())
                        })
                        .collect()
                } else {
                    Vec::new()
                };
                for v in values {
                    // A header the command line sets again is the command line's.
                    let overridden = v
                        .split_once(':')
                        .is_some_and(|(n, _)| cli_headers.contains(&n.trim().to_ascii_lowercase()));
                    if !overridden {
                        out.push(format!("--{name}={v}"));
                    }
                }
            }
            _ if name == "spec" => {
                if !cli_set {
                    positional = values.into_iter().next();
                }
            }
            _ => {
                if !cli_set && let Some(v) = values.into_iter().next() {
                    out.push(format!("--{name}={v}"));
                }
            }
        }
    }
    if let Some(spec) = positional {
        out.insert(0, spec);
    }
    Ok(out)
}

/// The values of one key as the flag's text, checked for the TOML type the
/// flag takes.
fn values(at: &str, name: &str, item: &Item, arg: &Arg) -> Result<Vec<String>, String> {
    let scalar = |v: &Value| -> Option<String> {
        match v {
            Value::String(s) => Some(s.value().clone()),
            Value::Integer(i) => Some(i.value().to_string()),
            Value::Float(f) => Some(f.value().to_string()),
            _ => None,
        }
    };
    if name == "rate-for" {
        // A table of pattern = rate, inline or as a `[rate_for]` section.
        let pairs: Vec<(String, Option<String>)> = match item {
            Item::Table(t) => t
                .iter()
                .map(|(k, v)| (k.to_string(), v.as_value().and_then(scalar)))
                .collect(),
            _ => match item.as_inline_table() {
                Some(t) => t.iter().map(|(k, v)| (k.to_string(), scalar(v))).collect(),
                None => {
                    return Err(format!(
                        "{at}: expected a table of pattern = rate, e.g. rate_for = {{ \"POST /search\" = \"1/s\" }}"
                    ));
                }
            },
        };
        return pairs
            .into_iter()
            .map(|(pattern, rate)| match rate {
                Some(rate) => Ok(format!("{pattern}={rate}")),
                None => Err(format!(
                    "{at}: the rate of {pattern:?} must be a string such as \"1/s\""
                )),
            })
            .collect();
    }
    let Some(value) = item.as_value() else {
        return Err(format!("{at}: expected a value, found a table"));
    };
    match arg.get_action() {
        ArgAction::SetTrue | ArgAction::SetFalse => match value {
            Value::Boolean(b) => Ok(vec![b.value().to_string()]),
            _ => Err(format!("{at}: expected true or false")),
        },
        ArgAction::Append => {
            let text = |v: &Value| v.as_str().map(str::to_string);
            match value {
                Value::Array(items) => items
                    .iter()
                    .map(|v| text(v).ok_or_else(|| format!("{at}: expected a list of strings")))
                    .collect(),
                v => text(v)
                    .map(|s| vec![s])
                    .ok_or_else(|| format!("{at}: expected a string or a list of strings")),
            }
        }
        _ => scalar(value)
            .map(|s| vec![s])
            .ok_or_else(|| format!("{at}: expected a string or a number")),
    }
}

/// The `--identity` flags of an `[identities]` table: each key an
/// identity's name, its value a header (`"Authorization: Bearer …"`) or a
/// list of them. Errors never quote a header: it may hold a secret.
fn identity_flags(at: &str, item: &Item) -> Result<Vec<String>, String> {
    let how = "expected a table of name = \"Header: value\" (or a list of them), e.g. [identities] bob = \"Authorization: Bearer …\"";
    let table: Vec<(String, &Item)> = match item {
        Item::Table(t) => t.iter().map(|(k, v)| (k.to_string(), v)).collect(),
        _ => return Err(format!("{at}: {how}")),
    };
    let mut out = Vec::new();
    for (name, v) in table {
        let headers: Vec<String> = match v.as_value() {
            Some(Value::String(s)) => vec![s.value().clone()],
            Some(Value::Array(items)) => items
                .iter()
                .map(|h| h.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| format!("{at}.{name}: {how}"))?,
            _ => return Err(format!("{at}.{name}: {how}")),
        };
        for h in headers {
            let flag = format!("{name}={h}");
            crate::execution::identities::parse_flag(&flag)
                .map_err(|e| format!("{at}.{name}: {e}"))?;
            out.push(format!("--identity={flag}"));
        }
    }
    Ok(out)
}

/// Checks `value` with the flag's own parser, as the command line would.
fn check(at: &str, run: &Command, arg: &Arg, value: &str) -> Result<(), String> {
    let Some(long) = arg.get_long() else {
        return Ok(());
    };
    let flag = match arg.get_action() {
        ArgAction::SetTrue | ArgAction::SetFalse => format!("--{long}"),
        _ => format!("--{long}={value}"),
    };
    match run.clone().try_get_matches_from(["run", flag.as_str()]) {
        Ok(_) => Ok(()),
        // Only this value is checked: what else is required comes later.
        Err(e) if e.kind() == clap::error::ErrorKind::MissingRequiredArgument => Ok(()),
        Err(e) => {
            let text = e.to_string();
            let first = text
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ");
            Err(format!("{at}: {first}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_identities_table_gives_identity_flags_and_errors_keep_values_secret() {
        let toml = "[identities]\nbob = \"Authorization: Bearer b0b\"\ncarol = [\"X-Key: c\", \"X-Tenant: 2\"]\n";
        let joined = expand_with(toml, &[]).unwrap().join(" ");
        assert!(
            joined.contains("--identity=bob=Authorization: Bearer b0b"),
            "{joined}"
        );
        assert!(
            joined.contains("--identity=carol=X-Key: c --identity=carol=X-Tenant: 2"),
            "{joined}"
        );
        let e = expand_with("[identities]\nbob = \"Bearer s3cr3t\"\n", &[]).unwrap_err();
        assert!(
            e.contains("cartograph.toml:1: identities.bob") && !e.contains("s3cr3t"),
            "{e}"
        );
        let e = expand_with("identities = 3\n", &[]).unwrap_err();
        assert!(e.contains("expected a table of name"), "{e}");
    }

    fn expand_with(toml: &str, cli: &[&str]) -> Result<Vec<String>, String> {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cartograph.toml");
        std::fs::write(&file, toml).unwrap();
        let mut argv: Vec<OsString> = vec!["cartograph".into(), "run".into()];
        argv.push("--config".into());
        argv.push(file.clone().into());
        argv.extend(cli.iter().map(OsString::from));
        expand(argv).map(|v| {
            v.into_iter()
                .map(|a| {
                    a.to_string_lossy()
                        .replace(&*dir.path().to_string_lossy(), "DIR")
                })
                .collect()
        })
    }

    #[test]
    fn the_command_line_wins_and_lists_add_up() {
        let toml = r#"
spec = "openapi.yaml"
target = "http://127.0.0.1:8080"
seed = 6
budget = "90s"
read_only = true
header = ["Authorization: Bearer file", "X-Team: qa"]
exclude = ["POST /admin/*"]
rate_for = { "POST /search" = "1/s" }
"#;
        let argv = expand_with(toml, &["--seed", "9", "-H", "authorization: Bearer cli"]).unwrap();
        let joined = argv.join(" ");
        assert!(argv.contains(&"DIR/openapi.yaml".to_string()), "{joined}");
        assert!(
            argv.contains(&"--target=http://127.0.0.1:8080".to_string()),
            "{joined}"
        );
        assert!(!joined.contains("--seed=6"), "{joined}");
        assert!(joined.contains("--budget=90s"), "{joined}");
        assert!(joined.contains("--read-only"), "{joined}");
        assert!(!joined.contains("Bearer file"), "{joined}");
        assert!(joined.contains("--header=X-Team: qa"), "{joined}");
        assert!(joined.contains("--exclude=POST /admin/*"), "{joined}");
        assert!(joined.contains("--rate-for=POST /search=1/s"), "{joined}");
        // The command line's own flags come last, so they win.
        assert!(
            joined.ends_with("--seed 9 -H authorization: Bearer cli"),
            "{joined}"
        );
    }

    #[test]
    fn the_reset_command_comes_from_the_file() {
        let toml = "reset_command = \"docker restart shop-db && sleep 2\"\n";
        let argv = expand_with(toml, &["openapi.yaml"]).unwrap();
        assert!(
            argv.contains(&"--reset-command=docker restart shop-db && sleep 2".to_string()),
            "{argv:?}"
        );
    }

    #[test]
    fn errors_name_the_file_line_and_key() {
        let e = expand_with("seed = 6\nbudgett = \"9s\"\n", &[]).unwrap_err();
        assert!(
            e.contains("cartograph.toml:2: budgett: unknown key (did you mean `budget`?)"),
            "{e}"
        );
        let e = expand_with("\nseed = \"six\"\n", &[]).unwrap_err();
        assert!(
            e.contains("cartograph.toml:2: seed: invalid value 'six'"),
            "{e}"
        );
        let e = expand_with("rate = \"5/x\"\n", &[]).unwrap_err();
        assert!(e.contains("cartograph.toml:1: rate:"), "{e}");
        let e = expand_with("read_only = \"yes\"\n", &[]).unwrap_err();
        assert!(
            e.contains("cartograph.toml:1: read_only: expected true or false"),
            "{e}"
        );
        let e = expand_with("header = 5\n", &[]).unwrap_err();
        assert!(
            e.contains("header: expected a string or a list of strings"),
            "{e}"
        );
        let e = expand_with("seed = [1\n", &[]).unwrap_err();
        assert!(e.contains("cartograph.toml:1: not valid TOML"), "{e}");
    }

    #[test]
    fn the_help_example_parses_and_a_bad_pattern_names_its_line() {
        // The example `run --help` gives for --config.
        let help = super::super::Cli::command()
            .find_subcommand_mut("run")
            .unwrap()
            .get_arguments()
            .find(|a| a.get_long() == Some("config"))
            .unwrap()
            .get_help()
            .unwrap()
            .to_string();
        let start = help.find('(').unwrap() + 1;
        let example = help[start..help.find("or `spec`").unwrap()].replace('\n', " ");
        let lines: Vec<String> = example
            .split("`, `")
            .map(|e| e.trim_matches(|c| c == '`' || c == ')' || c == ' ' || c == ','))
            .map(|e| e.replace("…", "127.0.0.1:8080"))
            .collect();
        assert!(lines.iter().any(|l| l.starts_with("exclude")), "{lines:?}");
        let argv = expand_with(&lines.join("\n"), &[]).unwrap();
        assert!(argv.iter().any(|a| a == "--exclude=DELETE *"), "{argv:?}");
        let e = expand_with("seed = 1\nexclude = [\"FETCH /x\"]\n", &[]).unwrap_err();
        assert!(e.contains("cartograph.toml:2: exclude: "), "{e}");
        // Seeds above 2^63 only fit TOML as strings, as reports write them.
        let argv = expand_with("seed = \"18446744073709551615\"\n", &[]).unwrap();
        assert!(
            argv.iter().any(|a| a == "--seed=18446744073709551615"),
            "{argv:?}"
        );
    }

    #[test]
    fn the_guide_example_is_a_valid_file() {
        let page = include_str!("../../docs/src/reference/config.md");
        let start = page.find("```toml\n").expect("a TOML example") + 8;
        let toml = &page[start..start + page[start..].find("```").unwrap()];
        let argv = expand_with(toml, &[]).unwrap();
        for a in &argv {
            for flag in ["--skip-check=", "--fail-on="] {
                if let Some(code) = a.strip_prefix(flag) {
                    assert!(
                        crate::oracles::registry::codes().any(|c| c == code),
                        "{code}"
                    );
                }
            }
        }
        assert!(
            argv.iter().any(|a| a == "--rate-for=GET /reports/*=10/m"),
            "{argv:?}"
        );
    }
}
