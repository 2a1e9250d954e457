//! Writing what the phase settled: each confirmed fault's reproducer
//! (`reproducers/*.sh|json`) and the regression suite (`tests/*.hurl`,
//! `tests/unproven/*.hurl`), every text redacted.

use super::WriteError;
use super::shrink::Outcome;
use super::suite::SuiteScript;
use super::{Script, hurl, shell};
use crate::execution::{OutDir, secrets::Secrets};
use crate::faults::{Confirmation, Fresh, Reproducer, WitnessStep};

/// A file name part: letters, digits, `-` and `_`.
fn slug(s: &str) -> String {
    let s: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    s.chars().take(60).collect()
}

/// Writes each confirmed fault's reproducer (`.sh` and `.json`) under
/// `reproducers/` in the output folder (an earlier run's were deleted when
/// it was opened, so none passes for this one's; a person's files there
/// stay, and a reproducer goes beside one of the same name) and returns, per
/// signature, what the report records.
pub fn write_reproducers(
    dir: &OutDir,
    outcomes: &[Outcome],
    secrets: &Secrets,
) -> Result<Vec<(String, Confirmation, Option<Reproducer>)>, WriteError> {
    let mut out = Vec::new();
    for (i, o) in outcomes.iter().enumerate() {
        if o.confirmation != Confirmation::Confirmed {
            out.push((o.signature.clone(), o.confirmation, None));
            continue;
        }
        let (code, op) = o
            .script
            .fault
            .as_ref()
            .map(|f| {
                (
                    f.code.as_str(),
                    o.script
                        .steps
                        .last()
                        .map(|s| s.operation.clone())
                        .unwrap_or_default(),
                )
            })
            .unwrap_or_default();
        let stem = dir.free_stem(
            "reproducers",
            &format!("{:02}-{}-{}", i + 1, slug(code), slug(&op)),
            &["sh", "json"],
        );
        let sh = format!("reproducers/{stem}.sh");
        let json = format!("reproducers/{stem}.json");
        // Shrinking may have cut the steps that named what the run made.
        let mut script = o.script.clone();
        script.settle_standalone();
        prove_standalone(&mut script, o.fresh);
        dir.write_executable(&sh, secrets.redact(&shell::render(&script)).as_bytes())
            .map_err(|e| WriteError::new("write", &dir.path(&sh), e))?;
        let text = serde_json::to_string_pretty(&script)
            .map_err(|e| WriteError::new("write", &dir.path(&json), e.into()))?;
        dir.write(&json, format!("{}\n", secrets.redact(&text)).as_bytes())
            .map_err(|e| WriteError::new("write", &dir.path(&json), e))?;
        let steps = o
            .script
            .steps
            .iter()
            .map(|s| WitnessStep {
                seq: 0,
                operation: s.operation.clone(),
                method: s.method.clone(),
                path: s.path.clone(),
                status: s.status,
            })
            .collect();
        out.push((
            o.signature.clone(),
            o.confirmation,
            Some(Reproducer {
                steps,
                shell: sh,
                json,
                requests: o.requests,
                standalone: script.standalone,
                unmade: script
                    .unmade
                    .iter()
                    .map(|u| secrets.redact(&u.to_string()).into_owned())
                    .collect(),
                not_standalone: script
                    .not_standalone
                    .iter()
                    .map(|r| secrets.redact(r).into_owned())
                    .collect(),
                planted: script.planted,
                fresh: o.fresh,
            }),
        ));
    }
    Ok(out)
}

/// Settles `script`'s label with what it did on a fresh server: a script
/// that showed its fault after a reset stands alone, whatever the run could
/// tell from its names; one that did not is not standalone, and says so.
fn prove_standalone(script: &mut Script, fresh: Option<Fresh>) {
    script.fresh = fresh;
    match fresh {
        None => {}
        Some(Fresh::Shows) => {
            script.standalone = true;
            script.not_standalone.clear();
        }
        Some(Fresh::DoesNotShow) => {
            script.standalone = false;
            script.not_standalone.insert(
                0,
                "run after the reset (--reset-command) before it was written, it did not show its fault: it needs something the run left on the server that it does not make".to_string(),
            );
        }
        Some(Fresh::CannotRun) => {
            script.standalone = false;
            script.not_standalone.insert(
                0,
                "run after the reset (--reset-command) before it was written, it could not run to its end: an answer lacked a value a later request needs, or none came".to_string(),
            );
        }
    }
}

/// Writes the reproducers of `outcomes` in the output folder and records on
/// each of `faults` what replaying it showed and where its reproducer is.
pub fn attach_reproducers(
    faults: &mut [crate::faults::Fault],
    dir: &OutDir,
    outcomes: &[Outcome],
    secrets: &Secrets,
) -> Result<(), WriteError> {
    for (signature, confirmation, reproducer) in write_reproducers(dir, outcomes, secrets)? {
        if let Some(f) = faults.iter_mut().find(|f| f.signature == signature) {
            f.confirmation = confirmation;
            f.reproducer = reproducer;
        }
    }
    Ok(())
}

/// The regression suite as written.
#[derive(Debug, Clone, Default)]
pub struct Written {
    /// Hurl files written.
    pub files: usize,
    /// Per test written, its place in the archive and its file (relative to
    /// the output folder; tests that made the same requests share one).
    pub tests: Vec<(usize, String)>,
}

/// Writes the regression suite: one Hurl file per distinct recorded test,
/// under `tests/` in the output folder (an earlier run's were deleted when
/// it was opened; a person's own files there stay, and a test goes beside
/// one of the same name). Each file takes `credentials` as variables.
pub fn write_suite(
    dir: &OutDir,
    scripts: Vec<SuiteScript>,
    credentials: &hurl::Credentials,
    secrets: &Secrets,
) -> Result<Written, WriteError> {
    let scripts = scripts.into_iter().map(|s| (s, None)).collect();
    write_suite_in(dir, "tests", scripts, credentials, secrets)
}

/// Writes files that no run on a fresh server proved under
/// `tests/unproven/`, apart from the suite `hurl --test tests/*.hurl`
/// runs: each says in its header why it is unproven.
pub fn write_unproven(
    dir: &OutDir,
    scripts: Vec<(SuiteScript, String)>,
    credentials: &hurl::Credentials,
    secrets: &Secrets,
) -> Result<Written, WriteError> {
    if scripts.is_empty() {
        return Ok(Written::default());
    }
    let scripts = scripts.into_iter().map(|(s, why)| (s, Some(why))).collect();
    write_suite_in(dir, UNPROVEN, scripts, credentials, secrets)
}

/// Where the suite's files that no run on a fresh server proved go.
pub const UNPROVEN: &str = "tests/unproven";

fn write_suite_in(
    dir: &OutDir,
    folder: &str,
    scripts: Vec<(SuiteScript, Option<String>)>,
    credentials: &hurl::Credentials,
    secrets: &Secrets,
) -> Result<Written, WriteError> {
    // The folder, even for an empty suite: `hurl --test tests/*.hurl` finds it.
    dir.folder(folder)
        .map_err(|e| WriteError::new("create", &dir.path(folder), e))?;
    // Numbered wide enough that `tests/*.hurl` lists them in the order
    // they run (`1000-…` sorts before `101-…`).
    let width = if scripts.len() > 999 { 4 } else { 3 };
    let mut seen: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    let mut written = Written::default();
    for (s, unproven) in scripts {
        let title = match &unproven {
            Some(why) => format!("{}\nUnproven: {why}", s.title),
            None => s.title.clone(),
        };
        let text = hurl::render_redacted(&s.script, &title, credentials, secrets);
        let body: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        if s.script.steps.is_empty() {
            continue;
        }
        let body = body.join("\n");
        if let Some(file) = seen.get(&body) {
            written.tests.push((s.archived, file.clone()));
            continue;
        }
        let op = s
            .script
            .steps
            .last()
            .map(|s| s.operation.clone())
            .unwrap_or_default();
        let stem = dir.free_stem(
            folder,
            &format!("{:0width$}-{}", seen.len() + 1, slug(&op)),
            &["hurl"],
        );
        let file = format!("{folder}/{stem}.hurl");
        dir.write(
            &file,
            redact_keeping(&text, secrets, credentials).as_bytes(),
        )
        .map_err(|e| WriteError::new("write", &dir.path(&file), e))?;
        seen.insert(body, file.clone());
        written.files += 1;
        written.tests.push((s.archived, file));
    }
    Ok(written)
}

/// `text` with every secret redacted but in the names of the variables
/// that carry `credentials`: those are the file's own (`{{cartograph_authorization}}`),
/// and a secret that is a plain word (Jupyter's token `cartograph`) made
/// them `{{[REDACTED]_authorization}}`, which Hurl cannot parse.
fn redact_keeping(text: &str, secrets: &Secrets, credentials: &hurl::Credentials) -> String {
    let names: Vec<String> = credentials
        .variables()
        .into_iter()
        .map(|(v, _)| v)
        .collect();
    secrets.redact_keeping(text, &names)
}

#[cfg(test)]
mod tests {
    use super::slug;

    #[test]
    fn a_secret_that_is_a_word_of_a_variable_name_leaves_the_name_whole() {
        let secrets = crate::execution::secrets::Secrets::default();
        secrets.add_header("Authorization", "token cartograph");
        let credentials = super::hurl::Credentials::new(&["Authorization".to_string()], &[], &[]);
        let (var, _) = credentials.variables().remove(0);
        assert!(var.contains("cartograph"), "{var}");
        let text = format!(
            "# --secret '{var}=…'\nAuthorization: {{{{{var}}}}}\n{{\"note\":\"cartograph\"}}\n"
        );
        let out = super::redact_keeping(&text, &secrets, &credentials);
        assert!(out.contains(&format!("{{{{{var}}}}}")), "{out}");
        assert!(out.contains(&format!("--secret '{var}=…'")), "{out}");
        // The secret itself, elsewhere, is still redacted.
        assert!(!out.contains("\"cartograph\""), "{out}");
    }

    #[test]
    fn file_names_are_bounded_slugs() {
        assert_eq!(slug("getBook"), "getBook");
        let hostile = slug("../../x\n$(touch y)`z`'\"\u{1b}é/\\");
        assert!(
            hostile
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
            "{hostile}"
        );
        assert!(!hostile.contains(".."));
        assert_eq!(slug(&"a".repeat(500)).len(), 60);
    }
}
