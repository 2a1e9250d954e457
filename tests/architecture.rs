//! The layers of `src/` as the crate docs (`src/lib.rs`) draw them: every
//! `crate::…` and `super::…` path outside test code is read, and
//!
//! - a top-level module uses only the modules its layer allows (no import
//!   runs back up the pipeline);
//! - no two modules under one parent use each other, directly or through a
//!   circle of siblings (a parent and its own children may: a child module
//!   holds part of its parent's work).
//!
//! The reading is textual (no compiler), so it errs on the side of seeing
//! an import: a path in a doc comment or string is ignored, one in code
//! counts.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each top-level module and the modules it may use, lowest layer first.
const LAYERS: &[(&str, &[&str])] = &[
    ("model", &[]),
    ("execution", &[]),
    ("load", &["model"]),
    ("graph", &["model"]),
    ("oracles", &["model", "execution"]),
    ("faults", &["model", "execution", "oracles"]),
    (
        "generation",
        &["model", "graph", "execution", "oracles", "faults"],
    ),
    (
        "reproduce",
        &["model", "execution", "oracles", "faults", "generation"],
    ),
    (
        "reports",
        &[
            "model",
            "graph",
            "execution",
            "oracles",
            "faults",
            "generation",
        ],
    ),
    (
        "run",
        &[
            "model",
            "load",
            "graph",
            "execution",
            "oracles",
            "faults",
            "generation",
            "reproduce",
            "reports",
        ],
    ),
    ("demo", &["model", "load"]),
    (
        "cli",
        &[
            "model",
            "load",
            "graph",
            "execution",
            "oracles",
            "faults",
            "generation",
            "reproduce",
            "reports",
            "run",
            "demo",
        ],
    ),
    ("testing", &["cli", "demo", "run"]),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file: `src/generation/search/mod.rs` is
/// `generation::search`, `src/cli/run.rs` is `cli::run`.
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src()).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts
        .last()
        .is_some_and(|p| p == "mod" || p == "lib" || p == "main")
    {
        parts.pop();
    }
    parts
}

/// The code of a file without comments, string contents and `#[cfg(test)]`
/// items.
fn code(text: &str) -> String {
    // Comments and strings first (a brace in a string must not count).
    let mut out = String::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && chars.get(i + 1) == Some(&'*') {
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                i += 1;
            }
            i += 2;
            continue;
        }
        if c == 'r' && matches!(chars.get(i + 1), Some('"') | Some('#')) {
            // A raw string: r"…", r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) == Some(&'"') {
                j += 1;
                loop {
                    if j >= chars.len() {
                        break;
                    }
                    if chars[j] == '"' && (0..hashes).all(|k| chars.get(j + 1 + k) == Some(&'#')) {
                        j += 1 + hashes;
                        break;
                    }
                    j += 1;
                }
                out.push_str("\"\"");
                i = j;
                continue;
            }
        }
        if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
            continue;
        }
        if c == '\'' {
            // A char literal ('x', '\n', '{') but not a lifetime ('a).
            let close = if chars.get(i + 1) == Some(&'\\') {
                chars[i + 2..]
                    .iter()
                    .position(|&c| c == '\'')
                    .map(|p| i + 2 + p)
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            if let Some(end) = close {
                out.push_str("' '");
                i = end + 1;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    // Then the items under #[cfg(test)].
    let mut cleaned = String::with_capacity(out.len());
    let mut rest = out.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        cleaned.push_str(&rest[..at]);
        let after = &rest[at..];
        let Some(open) = after.find(['{', ';']) else {
            rest = "";
            break;
        };
        if after.as_bytes()[open] == b';' {
            rest = &after[open + 1..];
            continue;
        }
        let mut depth = 0;
        let mut end = after.len();
        for (k, ch) in after[open..].char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    cleaned.push_str(rest);
    cleaned
}

/// The paths a piece of code names through `crate::` and `super::`,
/// resolved to absolute module paths (brace groups expanded one level).
fn references(module: &[String], is_mod_file: bool, code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(found) = code[from..].find(start) {
            let at = from + found;
            from = at + start.len();
            if at > 0 {
                let prev = bytes[at - 1] as char;
                if prev.is_alphanumeric() || prev == '_' || prev == ':' {
                    continue;
                }
            }
            // Read `seg::seg::…`, possibly ending in a `{a, b}` group.
            let mut base: Vec<String> = if start == "crate::" {
                Vec::new()
            } else {
                // `super` of a file module is its parent; of a mod.rs, the
                // parent of its folder.
                let mut p = module.to_vec();
                let _ = is_mod_file;
                p.pop();
                p
            };
            let mut rest = &code[from..];
            // More `super::` steps.
            while let Some(r) = rest.strip_prefix("super::") {
                base.pop();
                rest = r;
            }
            let mut paths = Vec::new();
            loop {
                let ident: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if ident.is_empty() {
                    if let Some(group) = rest.strip_prefix('{') {
                        let inner: String = group.chars().take_while(|c| *c != '}').collect();
                        for part in inner.split(',') {
                            let first: String = part
                                .trim()
                                .chars()
                                .take_while(|c| c.is_alphanumeric() || *c == '_')
                                .collect();
                            if !first.is_empty() {
                                let mut p = base.clone();
                                p.push(first);
                                paths.push(p);
                            }
                        }
                    }
                    break;
                }
                base.push(ident.clone());
                rest = &rest[ident.len()..];
                match rest.strip_prefix("::") {
                    Some(r) => rest = r,
                    None => break,
                }
            }
            if paths.is_empty() {
                paths.push(base);
            }
            out.extend(paths);
        }
    }
    out
}

struct Reading {
    /// Module → the modules it uses (the longest known module prefix of
    /// each path it names).
    uses: BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
}

/// The modules a file declares under `#[cfg(test)]` (`mod tests;`): test
/// code, like the inline test modules.
fn test_modules(module: &[String], text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        let after = rest[at + "#[cfg(test)]".len()..].trim_start();
        if let Some(decl) = after.strip_prefix("mod ") {
            let name: String = decl
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if decl[name.len()..].trim_start().starts_with(';') {
                let mut m = module.to_vec();
                m.push(name);
                out.push(m);
            }
        }
        rest = &rest[at + 1..];
    }
    out
}

fn read() -> Reading {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut test_only: BTreeSet<Vec<String>> = BTreeSet::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        test_only.extend(test_modules(&module_of(file), &text));
    }
    files.retain(|f| {
        let m = module_of(f);
        !test_only.iter().any(|t| m.starts_with(t))
    });
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(f)).collect();
    let mut uses: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for file in &files {
        let module = module_of(file);
        let is_mod = file.file_name().is_some_and(|n| n == "mod.rs");
        let text = std::fs::read_to_string(file).unwrap();
        let code = code(&text);
        for path in references(&module, is_mod, &code) {
            // The longest prefix that is a module of the crate.
            let target = (1..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|p| modules.contains(p));
            if let Some(t) = target
                && t != module
                && !t.is_empty()
            {
                uses.entry(module.clone()).or_default().insert(t);
            }
        }
    }
    Reading { uses }
}

#[test]
fn no_import_runs_up_the_layers() {
    let reading = read();
    let allowed: BTreeMap<&str, &[&str]> = LAYERS.iter().copied().collect();
    let mut wrong = Vec::new();
    for (from, targets) in &reading.uses {
        let Some(top) = from.first() else { continue };
        for to in targets {
            let other = &to[0];
            if other == top {
                continue;
            }
            match allowed.get(top.as_str()) {
                Some(ok) if ok.contains(&other.as_str()) => {}
                Some(_) => wrong.push(format!("{} uses {}", from.join("::"), to.join("::"))),
                None => wrong.push(format!(
                    "{} is not in the layer table of tests/architecture.rs (nor src/lib.rs)",
                    top
                )),
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(
        wrong.is_empty(),
        "imports that run up the layers:\n  {}",
        wrong.join("\n  ")
    );
}

#[test]
fn no_two_sibling_modules_use_each_other() {
    let reading = read();
    // Sibling edges: under a common parent, the child holding the user →
    // the child holding what it uses.
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (from, targets) in &reading.uses {
        for to in targets {
            let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
            if common >= from.len() || common >= to.len() {
                continue; // a parent and its child
            }
            let a = from[..=common].to_vec();
            let b = to[..=common].to_vec();
            edges.entry(a).or_default().insert(b);
        }
    }
    // A circle is a strongly connected set of two or more siblings.
    let mut circles = Vec::new();
    let nodes: Vec<Vec<String>> = edges.keys().cloned().collect();
    for n in &nodes {
        // Everything n reaches; a circle when something it reaches reaches n.
        let mut seen = BTreeSet::new();
        let mut stack = vec![n.clone()];
        while let Some(x) = stack.pop() {
            for y in edges.get(&x).into_iter().flatten() {
                if seen.insert(y.clone()) {
                    stack.push(y.clone());
                }
            }
        }
        if seen.contains(n) {
            let mut members: Vec<String> = seen
                .iter()
                .filter(|m| {
                    let mut back = BTreeSet::new();
                    let mut st = vec![(*m).clone()];
                    while let Some(x) = st.pop() {
                        for y in edges.get(&x).into_iter().flatten() {
                            if back.insert(y.clone()) {
                                st.push(y.clone());
                            }
                        }
                    }
                    back.contains(n)
                })
                .map(|m| m.join("::"))
                .collect();
            members.sort();
            let line = members.join(" <-> ");
            if !circles.contains(&line) {
                circles.push(line);
            }
        }
    }
    assert!(
        circles.is_empty(),
        "modules that use each other:\n  {}",
        circles.join("\n  ")
    );
}
