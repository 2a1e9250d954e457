//! The guide (`docs/src/`) and the README held to the code: every relative
//! link and `#anchor` resolves, every page is in `SUMMARY.md`, every
//! `cartograph` command of a `sh` or `console` block parses with the real
//! command line, the `graph` and `inspect` examples run and print what the
//! pages show, and every flag of every command is named in its section of
//! the reference page. A failure names the file and line to mend.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser};

use cartograph::testing::Cli;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The README and every page of the guide, by path from the package root.
fn pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "md") {
                out.push(p);
            }
        }
    }
    let mut out = vec![root().join("README.md")];
    walk(&root().join("docs/src"), &mut out);
    out
}

fn shown(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// One line of a page, with whether it is inside a fenced code block and
/// the info string of that block.
struct Line<'a> {
    number: usize,
    text: &'a str,
    fence: Option<&'a str>,
}

fn lines(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut fence: Option<(&str, &str)> = None;
    for (i, text) in text.lines().enumerate() {
        let trimmed = text.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => fence = Some((m, trimmed[m.len()..].trim())),
            (Some((open, _)), Some(m)) if m == open && trimmed[m.len()..].trim().is_empty() => {
                fence = None
            }
            _ => out.push(Line {
                number: i + 1,
                text,
                fence: fence.map(|(_, info)| info),
            }),
        }
    }
    out
}

/// The anchor mdBook (and GitHub, for these headings) gives a heading:
/// lower case, spaces to `-`, everything but letters, digits, `-` and `_`
/// dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .chars()
        .filter_map(|c| {
            if c.is_whitespace() {
                Some('-')
            } else if c.is_alphanumeric() || c == '-' || c == '_' {
                Some(c.to_ascii_lowercase())
            } else {
                None
            }
        })
        .collect()
}

/// Every anchor of a page: its headings' and its definition terms' (a
/// line followed by one starting `: `), a repeated one numbered as mdBook
/// numbers it.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    let lines = lines(text);
    for (i, line) in lines.iter().enumerate() {
        if line.fence.is_some() {
            continue;
        }
        let heading = line
            .text
            .strip_prefix('#')
            .map(|h| h.trim_start_matches('#'))
            .filter(|h| h.starts_with(' '));
        let term = lines
            .get(i + 1)
            .filter(|next| next.fence.is_none() && next.number == line.number + 1)
            .filter(|next| next.text.starts_with(": ") && !line.text.trim().is_empty())
            .map(|_| line.text);
        let Some(name) = heading.or(term) else {
            continue;
        };
        let id = anchor(name);
        let n = seen.entry(id.clone()).or_insert(0);
        out.insert(if *n == 0 {
            id.clone()
        } else {
            format!("{id}-{n}")
        });
        *n += 1;
    }
    out
}

/// The targets of a line's inline links (`[text](target)`), outside code
/// spans.
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_code = false;
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'`' => in_code = !in_code,
            b']' if !in_code && bytes.get(i + 1) == Some(&b'(') => {
                if let Some(end) = line[i + 2..].find(')') {
                    let target = line[i + 2..i + 2 + end].trim();
                    // A title after the target (`(a.md "Title")`) is not part of it.
                    let target = target.split_whitespace().next().unwrap_or("");
                    out.push(target.to_string());
                    i += 2 + end;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

#[test]
fn every_link_and_anchor_resolves() {
    let docs = root().join("docs/src");
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for line in lines(&text).into_iter().filter(|l| l.fence.is_none()) {
            for target in link_targets(line.text) {
                let at = format!("{}:{}", shown(&page), line.number);
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (file, fragment) = target.split_once('#').unwrap_or((&target, ""));
                let file = if file.is_empty() {
                    page.clone()
                } else {
                    page.parent().unwrap().join(file)
                };
                let Ok(file) = file.canonicalize() else {
                    broken.push(format!("{at}: {target}: no such file"));
                    continue;
                };
                // mdBook copies only `docs/src` into the book.
                if page.starts_with(&docs) && !file.starts_with(docs.canonicalize().unwrap()) {
                    broken.push(format!(
                        "{at}: {target}: outside docs/src, so not in the built guide \
                         (name the file as code instead)"
                    ));
                    continue;
                }
                if fragment.is_empty() {
                    continue;
                }
                let target_text = std::fs::read_to_string(&file).unwrap_or_default();
                if !anchors(&target_text).contains(fragment) {
                    broken.push(format!(
                        "{at}: {target}: no heading of {} has the anchor #{fragment}",
                        shown(&file)
                    ));
                }
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} links found: is the scanner broken?"
    );
    assert!(
        broken.is_empty(),
        "broken links in the guide or the README:\n  {}",
        broken.join("\n  ")
    );
}

#[test]
fn every_page_is_in_the_summary() {
    let docs = root().join("docs/src");
    let summary = std::fs::read_to_string(docs.join("SUMMARY.md")).unwrap();
    let listed: BTreeSet<PathBuf> = lines(&summary)
        .iter()
        .flat_map(|l| link_targets(l.text))
        .map(|t| docs.join(t))
        .collect();
    let missing: Vec<String> = pages()
        .into_iter()
        .filter(|p| p.starts_with(&docs) && !p.ends_with("SUMMARY.md") && !listed.contains(p))
        .map(|p| shown(&p))
        .collect();
    assert!(
        missing.is_empty(),
        "pages mdBook would not build (add them to docs/src/SUMMARY.md): {missing:?}"
    );
}

/// Where a shell line stops being the command: a comment, a pipe, a
/// redirection, a background `&` or a `;`, outside quotes.
fn command_part(line: &str) -> &str {
    let mut quote = None;
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '#') if prev.is_whitespace() => return &line[..i],
            (None, '|' | '>' | '<' | '&' | ';') => return &line[..i],
            _ => {}
        }
        prev = c;
    }
    line
}

/// The `cartograph` commands of the `sh`, `bash`, `shell` and `console`
/// blocks of a page: (line, argv), continuation lines joined.
fn commands(text: &str) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for line in lines(text) {
        let Some(info) = line.fence else {
            continue;
        };
        let console = info == "console";
        if !(console || matches!(info, "sh" | "bash" | "shell")) {
            continue;
        }
        let (number, joined) = match pending.take() {
            Some((n, head)) => (n, format!("{head} {}", line.text.trim())),
            None => {
                let text = line.text.trim();
                let text = if console {
                    match text.strip_prefix("$ ") {
                        Some(t) => t,
                        None => continue,
                    }
                } else {
                    text
                };
                (line.number, text.to_string())
            }
        };
        if let Some(head) = joined.strip_suffix('\\') {
            pending = Some((number, head.to_string()));
            continue;
        }
        let command = command_part(&joined).trim();
        let command = if let Some(rest) = command.strip_prefix("cargo run --release -- ") {
            format!("cartograph {rest}")
        } else if command.starts_with("cartograph ") {
            command.to_string()
        } else {
            continue;
        };
        let argv = shlex::split(&command)
            .unwrap_or_else(|| panic!("line {number}: unbalanced quotes in {command:?}"));
        out.push((number, argv));
    }
    out
}

#[test]
fn every_example_command_parses() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for (number, argv) in commands(&text) {
            checked += 1;
            if let Err(e) = Cli::try_parse_from(&argv) {
                let first = e.to_string();
                let first = first.lines().next().unwrap_or_default().to_string();
                let command = shlex::try_join(argv.iter().map(String::as_str)).unwrap_or_default();
                failures.push(format!("{}:{number}: {command}: {first}", shown(&page)));
            }
        }
    }
    assert!(
        checked > 30,
        "only {checked} example commands found: is the extractor broken?"
    );
    assert!(
        failures.is_empty(),
        "example commands the CLI refuses:\n  {}",
        failures.join("\n  ")
    );
}

#[test]
fn every_flag_is_in_the_reference() {
    let page = root().join("docs/src/reference/cli.md");
    let text = std::fs::read_to_string(&page).unwrap();
    let cli = Cli::command();
    let mut missing = Vec::new();
    for command in cli.get_subcommands() {
        let name = command.get_name();
        let heading = format!("## `cartograph {name}`");
        let Some(start) = text.find(&heading) else {
            missing.push(format!("the section {heading}"));
            continue;
        };
        let rest = &text[start + heading.len()..];
        let section = &rest[..rest.find("\n## ").unwrap_or(rest.len())];
        for arg in command.get_arguments() {
            let Some(long) = arg.get_long() else {
                continue;
            };
            if matches!(long, "help" | "version") {
                continue;
            }
            if !section.contains(&format!("`--{long}")) {
                missing.push(format!("--{long} of `cartograph {name}`"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{} does not name (as `--flag` in its command's section): {}",
        shown(&page),
        missing.join(", ")
    );
}

#[test]
fn the_checks_find_what_they_should() {
    // The scanners above, on what they must catch and what they must pass.
    assert_eq!(anchor("`report.json`"), "reportjson");
    assert_eq!(
        anchor("The edge pass: negative and boundary values"),
        "the-edge-pass-negative-and-boundary-values"
    );
    assert_eq!(
        anchors("# A\n## A\n```sh\n# not a heading\n```\n**plant**, **planted input**\n: a term\n"),
        BTreeSet::from([
            "a".to_string(),
            "a-1".to_string(),
            "plant-planted-input".to_string()
        ])
    );
    assert_eq!(
        link_targets("see [a](x.md#y) and `[b](not.md)`, [c](https://e.org)"),
        ["x.md#y", "https://e.org"]
    );
    let found = commands(
        "```sh\ncartograph run a.yaml \\\n    --budget 2m   # a comment\necho no\n```\n\
         ```console\n$ cartograph graph a.yaml | head\noutput line\n```\n\
         ```text\ncartograph run not-checked\n```\n",
    );
    assert_eq!(
        found,
        [
            (2, vec!["cartograph", "run", "a.yaml", "--budget", "2m"]),
            (7, vec!["cartograph", "graph", "a.yaml"]),
        ]
        .map(|(n, v)| (n, v.into_iter().map(String::from).collect::<Vec<_>>()))
    );
    assert!(Cli::try_parse_from(["cartograph", "run", "--budgett", "2m"]).is_err());
}

/// Runs the binary with `argv` (its first word, `cartograph`, dropped) in
/// `cwd`.
fn run_binary(argv: &[String], cwd: &Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_cartograph"))
        .args(&argv[1..])
        .current_dir(cwd)
        .output()
        .expect("the binary runs")
}

/// `argv` with its description (the word after `graph` or `inspect`) made
/// absolute, when it is a file of the repository; `None` for a command that
/// needs what is not here (a placeholder such as `SPEC` or `openapi.yaml`,
/// or a run's output folder).
fn runnable(argv: &[String]) -> Option<Vec<String>> {
    if !matches!(argv.get(1).map(String::as_str), Some("graph" | "inspect"))
        || argv.iter().any(|a| a == "--diff" || a == "--graph")
    {
        return None;
    }
    let spec = root().join(argv.get(2)?);
    if argv[2].starts_with('-') || !spec.is_file() {
        return None;
    }
    let mut argv = argv.to_vec();
    argv[2] = spec.display().to_string();
    Some(argv)
}

#[test]
fn every_graph_and_inspect_example_runs() {
    // These need no server: a newcomer can paste them as they are.
    let scratch = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut ran = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for (number, written) in commands(&text) {
            let Some(argv) = runnable(&written) else {
                continue;
            };
            ran += 1;
            let out = run_binary(&argv, scratch.path());
            if !out.status.success() {
                failures.push(format!(
                    "{}:{number}: {} exited {}: {}",
                    shown(&page),
                    written.join(" "),
                    out.status,
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
        }
    }
    assert!(ran >= 5, "only {ran} graph/inspect examples ran");
    assert!(
        failures.is_empty(),
        "examples that fail:\n  {}",
        failures.join("\n  ")
    );
}

/// The `$ cartograph …` commands of a page's `console` blocks with the
/// output shown under each: (line, argv, output lines).
fn console_examples(text: &str) -> Vec<(usize, Vec<String>, Vec<String>)> {
    let mut out: Vec<(usize, Vec<String>, Vec<String>)> = Vec::new();
    let mut last_fence_line = 0;
    for line in lines(text) {
        if line.fence != Some("console") {
            continue;
        }
        // A new block starts a new example: output never runs across blocks.
        let same_block = line.number == last_fence_line + 1;
        last_fence_line = line.number;
        if let Some(command) = line.text.strip_prefix("$ ") {
            let argv = shlex::split(command_part(command).trim()).unwrap_or_default();
            out.push((line.number, argv, Vec::new()));
        } else if same_block && let Some((_, _, shown)) = out.last_mut() {
            shown.push(line.text.to_string());
        }
    }
    out
}

#[test]
fn console_examples_show_what_the_binary_prints() {
    let scratch = tempfile::tempdir().unwrap();
    let mut differences = Vec::new();
    let mut compared = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for (number, written, mut shown_lines) in console_examples(&text) {
            let Some(argv) = runnable(&written) else {
                continue;
            };
            while shown_lines.last().is_some_and(|l| l.trim().is_empty()) {
                shown_lines.pop();
            }
            // A last line `...` or `…` says the output goes on: only what is
            // above it is compared.
            let cut = shown_lines
                .last()
                .is_some_and(|l| matches!(l.trim(), "..." | "…"));
            if cut {
                shown_lines.pop();
            }
            let out = run_binary(&argv, scratch.path());
            let printed = String::from_utf8_lossy(&out.stdout);
            let printed: Vec<&str> = printed.trim_end().lines().collect();
            compared += 1;
            let same = if cut {
                printed.len() >= shown_lines.len() && printed[..shown_lines.len()] == shown_lines
            } else {
                printed == shown_lines
            };
            if !same {
                let at = shown_lines
                    .iter()
                    .zip(&printed)
                    .position(|(a, b)| a != b)
                    .unwrap_or(shown_lines.len().min(printed.len()));
                differences.push(format!(
                    "{}:{}: `{}` prints, at its line {}:\n    {:?}\n  the page shows:\n    {:?}",
                    shown(&page),
                    number,
                    written.join(" "),
                    at + 1,
                    printed.get(at).copied().unwrap_or("(nothing)"),
                    shown_lines.get(at).map_or("(nothing)", String::as_str),
                ));
            }
        }
    }
    assert!(compared >= 3, "only {compared} console examples compared");
    assert!(
        differences.is_empty(),
        "console examples that no longer show what the binary prints:\n  {}",
        differences.join("\n  ")
    );
}

#[test]
fn the_mermaid_example_is_what_graph_prints() {
    let out = run_binary(
        &[
            "cartograph".to_string(),
            "graph".to_string(),
            root()
                .join("fixtures/specs/morest-petstore.yaml")
                .display()
                .to_string(),
            "--format".to_string(),
            "mermaid".to_string(),
        ],
        &root(),
    );
    assert!(out.status.success());
    let printed = String::from_utf8_lossy(&out.stdout);
    let mut found = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let block: Vec<&str> = lines(&text)
            .into_iter()
            .filter(|l| l.fence == Some("mermaid"))
            .map(|l| l.text)
            .collect();
        if block.is_empty() {
            continue;
        }
        found += 1;
        assert_eq!(
            block.join("\n"),
            printed.trim_end(),
            "{}: the Mermaid example differs from `cartograph graph \
             fixtures/specs/morest-petstore.yaml --format mermaid`",
            shown(&page)
        );
    }
    assert!(found >= 1, "no Mermaid example found");
}
