//! Running the `cartograph` binary as a user does, and reading what it wrote.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// Runs the binary with `args` from the package root, off the async runtime.
pub async fn cartograph(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_cartograph"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(&args)
            .output()
            .expect("binary runs")
    })
    .await
    .unwrap()
}

/// Owned arguments from string slices.
pub fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// `dir/report.json`, asserted valid against `models/report.schema.json`.
pub fn read_report(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("report.json"))
        .unwrap_or_else(|e| panic!("cannot read {}/report.json: {e}", dir.display()));
    let report: Value = serde_json::from_str(&text).unwrap();
    let errors = schema_errors(&schema_validator("models/report.schema.json"), &report);
    assert!(
        errors.is_empty(),
        "report.json breaks models/report.schema.json: {errors:#?}"
    );
    report
}

/// The JSON Schema at `schema` (from the package root), compiled.
pub fn schema_validator(schema: &str) -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(schema)).unwrap(),
    )
    .unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

/// What `value` breaks of `validator`'s schema, each error with where in
/// `value`.
pub fn schema_errors(validator: &jsonschema::Validator, value: &Value) -> Vec<String> {
    validator
        .iter_errors(value)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

/// Hurl, from `$HURL` or PATH, when installed.
pub fn hurl() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HURL") {
        return Some(PathBuf::from(p));
    }
    Command::new("hurl")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|_| PathBuf::from("hurl"))
}
