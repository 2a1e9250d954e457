//! Golden files: output pinned in the repository (the petstore graph's
//! export, the requests of a seeded run) and compared byte for byte.
//! `UPDATE_GOLDEN=1` rewrites them instead: one switch for every golden
//! file of the crate (the unit test of the guide's page of checks reads
//! it too), so `UPDATE_GOLDEN=1 cargo test` re-pins them all at once.

use std::path::Path;

/// Whether this run rewrites golden files instead of comparing with them.
pub fn updating() -> bool {
    std::env::var_os("UPDATE_GOLDEN").is_some()
}

/// Compares `got` with the golden file at `path`, or rewrites the file when
/// [`updating`]. A difference fails saying `what` changed; `module` is the
/// caller's `module_path!()`, so the failure names the command that re-pins.
pub fn check(path: &Path, got: &str, what: &str, module: &str) {
    if updating() {
        std::fs::create_dir_all(path.parent().expect("a file in a folder")).unwrap();
        std::fs::write(path, got).unwrap();
        return;
    }
    // `integration::determinism` is filtered as `determinism::`.
    let module = module.split_once("::").map_or(module, |(_, m)| m);
    let rerun = format!("UPDATE_GOLDEN=1 cargo test --test integration {module}::");
    let want = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}; create it with `{rerun}`", path.display()));
    if want != got {
        let first = want
            .lines()
            .zip(got.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(want.lines().count().min(got.lines().count()));
        panic!(
            "{}: {what}, from line {}:\n  pinned: {}\n  now:    {}\n\
             (an intended change re-pins with `{rerun}` in the same commit, saying why)",
            path.display(),
            first + 1,
            want.lines().nth(first).unwrap_or("(nothing)"),
            got.lines().nth(first).unwrap_or("(nothing)")
        );
    }
}
