//! `cartograph graph` and `cartograph inspect` as a user runs them: real binary,
//! real files, exit codes and messages.

use crate::support;

use std::path::Path;
use std::process::{Command, Output};

const PETSTORE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/fixtures/specs/morest-petstore.yaml"
);

fn cartograph(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cartograph"))
        .args(args)
        .output()
        .expect("binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn json_export_validates_against_the_published_schema() {
    let out = cartograph(&["graph", PETSTORE]);
    assert!(out.status.success(), "{}", stderr(&out));
    let export: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("models/graph.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&export)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // And the schema is not vacuous: a wrong edge kind is refused.
    let mut broken = export.clone();
    broken["edges"][0]["kind"] = "depends_on".into();
    assert!(!validator.is_valid(&broken));
}

#[test]
fn output_file_and_every_format() {
    let dir = tempfile::tempdir().unwrap();
    for (format, marker) in [
        ("json", "\"format_version\""),
        ("dot", "digraph"),
        ("mermaid", "flowchart LR"),
        ("graphml", "<graphml"),
    ] {
        let file = dir.path().join(format!("g.{format}"));
        let out = cartograph(&[
            "graph",
            PETSTORE,
            "--format",
            format,
            "-o",
            file.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(out.stdout.is_empty());
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains(marker), "{format}: {text}");
    }
}

#[test]
fn dot_export_renders_with_graphviz() {
    if Command::new("dot").arg("-V").output().is_err() {
        support::skip_for("Graphviz `dot` is not installed (.ci/run installs it)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let dot = dir.path().join("g.dot");
    let out = cartograph(&[
        "graph",
        PETSTORE,
        "--format",
        "dot",
        "-o",
        dot.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let svg = Command::new("dot").arg("-Tsvg").arg(&dot).output().unwrap();
    assert!(
        svg.status.success(),
        "{}",
        String::from_utf8_lossy(&svg.stderr)
    );
    let svg = String::from_utf8_lossy(&svg.stdout);
    assert!(svg.contains("<svg") && svg.contains("getPetById") && svg.contains("petId ← id"));
}

#[test]
fn missing_file_is_a_clear_error_with_exit_code_2() {
    let out = cartograph(&["graph", "no/such/spec.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("no/such/spec.yaml") && err.contains("cannot read"),
        "{err}"
    );
}

#[test]
fn a_document_that_is_not_an_api_description_is_named_and_located() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config.yaml");
    std::fs::write(&file, "name: my-service\nreplicas: 3\n").unwrap();
    let out = cartograph(&["inspect", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("config.yaml:#/: not an API description"),
        "{err}"
    );
    assert!(err.contains("hint:"), "{err}");
}

#[test]
fn broken_yaml_is_located_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("broken.yaml");
    std::fs::write(&file, "openapi: 3.0.0\npaths:\n  /a: [unclosed\n").unwrap();
    let out = cartograph(&["graph", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("broken.yaml:4:"), "{}", stderr(&out));
}

#[test]
fn broken_operations_warn_once_each_and_the_rest_exports() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("partial.yaml");
    std::fs::write(
        &file,
        r##"openapi: 3.0.0
info: {title: partial, version: "1"}
paths:
  /a:
    get:
      parameters: [{$ref: "#/components/parameters/Nope"}]
      responses: {"200": {description: ok}}
  /b:
    get: {operationId: getB, responses: {"200": {description: ok}}}
"##,
    )
    .unwrap();
    let out = cartograph(&["graph", file.to_str().unwrap()]);
    assert!(out.status.success());
    let err = stderr(&out);
    // The operation skipped, the document that seems cut short (its one
    // `$ref` points into a `#/components` it does not have), a summary.
    assert_eq!(
        err.matches("warning: ").count(),
        3,
        "one per skipped part plus a summary: {err}"
    );
    assert!(err.contains("seems cut short"), "{err}");
    assert!(err.contains("#/paths/~1a/get"), "{err}");
    assert!(stdout(&out).contains("op:getB"));
}

#[test]
fn inspect_summary_op_and_chain() {
    let out = cartograph(&["inspect", PETSTORE]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.contains("6 operations, 2 schemas"), "{text}");
    assert!(
        text.contains("consumes           7   (spec 2, inferred 5)"),
        "{text}"
    );

    let out = cartograph(&["inspect", PETSTORE, "--op", "getPetById"]);
    let text = stdout(&out);
    assert!(text.contains("path petId (required): integer"), "{text}");
    assert!(text.contains("← Pet.id  [inferred by compound-name, score 1.00]  produced by findPetsByStatus, getPetById"), "{text}");

    let out = cartograph(&["inspect", PETSTORE, "--chain", "deleteOrder"]);
    let text = stdout(&out);
    assert!(
        text.contains("1. placeOrder\n       Order.id → deleteOrder orderId\n  2. deleteOrder"),
        "{text}"
    );

    // The sequences `run` samples: Morest's chains through Pet and Order.
    let out = cartograph(&["inspect", PETSTORE, "--sequences", "3"]);
    let text = stdout(&out);
    assert!(
        text.starts_with("30 call sequences from the graph"),
        "{text}"
    );
    assert!(
        text.contains(
            "  findPetsByStatus → getPetById → placeOrder → getOrderById → deleteOrder\n"
        ),
        "{text}"
    );
    assert_eq!(text.lines().count(), 4, "{text}");

    let out = cartograph(&["inspect", PETSTORE, "--op", "getPetByID"]);
    assert!(
        out.status.success(),
        "names are matched without regard to case"
    );
    let out = cartograph(&["inspect", PETSTORE, "--op", "getPet"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("did you mean \"getPetById\""),
        "{}",
        stderr(&out)
    );
}

#[test]
fn help_explains_every_command() {
    for cmd in [
        &["--help"][..],
        &["graph", "--help"],
        &["inspect", "--help"],
    ] {
        let out = cartograph(cmd);
        assert!(out.status.success());
        assert!(stdout(&out).contains("Usage:"));
    }
}

#[test]
fn webhooks_are_listed_not_turned_into_operations() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hooks.yaml");
    std::fs::write(
        &file,
        "openapi: 3.1.0\ninfo: {title: hooks, version: '1'}\npaths: {}\nwebhooks:\n  newPet:\n    post:\n      operationId: onNewPet\n      responses: {'200': {description: ok}}\n",
    )
    .unwrap();
    let out = cartograph(&["inspect", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("0 operations"), "{text}");
    assert!(
        text.contains("newPet                       POST (onNewPet)"),
        "{text}"
    );
}

#[test]
fn run_on_a_graphql_schema_needs_the_endpoint() {
    let schema = concat!(env!("CARGO_MANIFEST_DIR"), "/models/demo/schema.graphql");
    let out = cartograph(&["run", schema, "--max-requests", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("a GraphQL schema names no endpoint; pass --target URL"),
        "{}",
        stderr(&out)
    );
    let out = cartograph(&["run", "--graphql"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// `inspect --op` on a run's `graph-final.json` shows a link the run set
/// aside as suspended, not as no source at all.
#[test]
fn inspect_shows_suspended_links_as_suspended() {
    let export = cartograph(&["graph", PETSTORE, "--format", "json"]);
    assert!(export.status.success());
    let mut doc: serde_json::Value = serde_json::from_slice(&export.stdout).unwrap();
    for e in doc["edges"].as_array_mut().unwrap() {
        if e["id"] == "consumes:schema:Order->op:getOrderById" {
            e["state"] = "suspended".into();
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("graph-final.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let out = cartograph(&[
        "inspect",
        PETSTORE,
        "--graph",
        file.to_str().unwrap(),
        "--op",
        "getOrderById",
    ]);
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!text.contains("no source in the graph"), "{text}");
    assert!(
        text.contains("no source in use: the run set aside"),
        "{text}"
    );
    let line = text
        .lines()
        .find(|l| l.contains("← Order.id"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.ends_with("(suspended)"), "{text}");
}
