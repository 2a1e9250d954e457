//! Each kind of GraphQL schema fault, once: a purpose-built server
//! (`tests/support/graphql_faults.rs`) answers each query of
//! `fixtures/graphql/fault-kinds/queries.ndjson` with exactly one fault of
//! one kind, and the `Conforming` query with none. The oracle must report each
//! with the right code, root field and path and nothing else, both when
//! called directly and through `cartograph replay-queries` as a user runs it.

use crate::support;

use std::path::{Path, PathBuf};

use apollo_compiler::response::JsonMap;
use apollo_compiler::{ExecutableDocument, Schema};
use cartograph::model::graphql::TypeSystem;
use serde_json::Value;
use support::cli::{cartograph, read_report};
use support::graphql_faults::{self, CONFORMING, CONFORMING_ROOT, EXPECTED};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// One line of the query log.
struct Request {
    line: Value,
    query: String,
    name: String,
    variables: Value,
}

fn requests() -> Vec<Request> {
    let path = fixture(graphql_faults::QUERIES_PATH);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let line: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            Request {
                query: line["query"].as_str().expect("a query").to_string(),
                name: line["operationName"]
                    .as_str()
                    .expect("an operationName")
                    .to_string(),
                variables: line["variables"].clone(),
                line,
            }
        })
        .collect()
}

fn type_system() -> TypeSystem {
    let loaded = cartograph::load::load(&fixture(graphql_faults::SCHEMA_PATH))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(loaded.is_complete(), "{:?}", loaded.warnings);
    loaded.api.graphql.expect("a GraphQL type system")
}

/// The fixture itself is sound: one line per expected fault and the
/// conforming one, each query valid against the schema (by Apollo's
/// validator) with variables that coerce, so every finding is the server's.
#[test]
fn the_fixture_queries_are_valid() {
    let sdl = std::fs::read_to_string(fixture(graphql_faults::SCHEMA_PATH)).unwrap();
    let schema = Schema::parse_and_validate(sdl, "schema.graphql").expect("a valid schema");
    let requests = requests();
    let mut names: Vec<&str> = requests.iter().map(|r| r.name.as_str()).collect();
    names.sort_unstable();
    let mut wanted: Vec<&str> = EXPECTED.iter().map(|e| e.0).collect();
    wanted.push(CONFORMING);
    wanted.sort_unstable();
    assert_eq!(
        names, wanted,
        "one query per expected fault and {CONFORMING}"
    );
    let with_variables = requests
        .iter()
        .filter(|r| r.variables.as_object().is_some_and(|m| !m.is_empty()))
        .count();
    assert!(with_variables >= 2);
    for r in &requests {
        let doc = ExecutableDocument::parse_and_validate(&schema, r.query.as_str(), "q.graphql")
            .unwrap_or_else(|e| panic!("{}: {}\n{}", r.name, r.query, e.errors));
        let op = doc.operations.get(Some(r.name.as_str())).unwrap();
        let map: JsonMap = serde_json::from_value(r.variables.clone()).unwrap();
        apollo_compiler::request::coerce_variable_values(&schema, op, &map)
            .unwrap_or_else(|e| panic!("{}: variables {}: {}", r.name, r.variables, e.message()));
    }
    // No faulting query reaches the conforming query's root field.
    let root = CONFORMING_ROOT.strip_prefix("Query.").unwrap();
    assert!(EXPECTED.iter().all(|e| e.2 != CONFORMING_ROOT));
    for r in requests.iter().filter(|r| r.name != CONFORMING) {
        assert!(!r.query.contains(&format!("{root}(")), "{}", r.name);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn oracle_sees_each_kind_once() {
    let ts = type_system();
    let (addr, server) = graphql_faults::start().await;
    let endpoint = format!("http://{addr}/graphql");
    let client = reqwest::Client::new();
    let requests = requests();
    let mut seen = Vec::new();
    for r in &requests {
        let response = client
            .post(&endpoint)
            .json(&r.line)
            .send()
            .await
            .expect("the server answers");
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        let body: Value = serde_json::from_str(&text).expect("a JSON answer");
        assert_eq!(status, 200, "{}", r.name);
        assert!(body.get("errors").is_none(), "{}: {text}", r.name);
        let findings = cartograph::oracles::graphql::check(
            &ts,
            &r.query,
            Some(&r.name),
            &r.variables,
            Some(status),
            Some(&body),
            &text,
        );
        let got: Vec<(&str, &str, &str)> = findings
            .iter()
            .map(|f| {
                (
                    cartograph::oracles::registry::graphql_code(f.kind).as_str(),
                    f.root_field.as_str(),
                    f.path.as_str(),
                )
            })
            .collect();
        if r.name == CONFORMING {
            assert!(got.is_empty(), "{CONFORMING}: {findings:#?}");
        } else {
            let (_, code, root, path) = EXPECTED
                .iter()
                .find(|e| e.0 == r.name)
                .unwrap_or_else(|| panic!("{} is not expected", r.name));
            assert_eq!(
                got,
                vec![(*code, *root, *path)],
                "{}: {findings:#?}",
                r.name
            );
            seen.push(*code);
        }
    }
    server.abort();
    // Every kind of schema fault the oracle knows is shown.
    for code in [
        "graphql_missing_field",
        "graphql_null_violation",
        "graphql_wrong_type",
        "graphql_enum_violation",
        "graphql_list_mismatch",
        "graphql_typename_violation",
    ] {
        assert!(seen.contains(&code), "{code} never shown");
    }
    assert_eq!(seen.len(), EXPECTED.len());
}

/// "No finding" on the conforming answer means something: the oracle walks
/// all of it (aliases, fragment spreads inside union fragments, the field
/// under `@include` by a defaulted variable, interface fragments, nested
/// lists), as one fault planted at each of those places shows.
#[test]
fn the_conforming_answer_is_checked_throughout() {
    let ts = type_system();
    let r = requests()
        .into_iter()
        .find(|r| r.name == CONFORMING)
        .unwrap();
    let plants: [(&str, Option<Value>, &str, &str); 6] = [
        (
            "/data/shelf/heading",
            None,
            "graphql_missing_field",
            "data.shelf.heading",
        ),
        (
            "/data/shelf/books/1/author/books/0/title",
            Some(Value::Null),
            "graphql_null_violation",
            "data.shelf.books[*].author.books[*].title",
        ),
        (
            "/data/shelf/books/0/tags/1",
            Some(serde_json::json!(7)),
            "graphql_wrong_type",
            "data.shelf.books[*].tags[*]",
        ),
        (
            "/data/shelf/items/0/genre",
            Some(serde_json::json!("HORROR")),
            "graphql_enum_violation",
            "data.shelf.items[*].genre",
        ),
        (
            "/data/shelf/featured/editors",
            Some(serde_json::json!({"name": "Lena Ortiz"})),
            "graphql_list_mismatch",
            "data.shelf.featured.editors",
        ),
        (
            "/data/shelf/items/1/__typename",
            Some(serde_json::json!("Author")),
            "graphql_typename_violation",
            "data.shelf.items[*].__typename",
        ),
    ];
    for (pointer, value, code, path) in plants {
        let mut body = graphql_faults::answer(CONFORMING);
        match value {
            Some(v) => *body.pointer_mut(pointer).expect(pointer) = v,
            None => {
                let (parent, key) = pointer.rsplit_once('/').unwrap();
                let parent = body.pointer_mut(parent).and_then(Value::as_object_mut);
                assert!(parent.unwrap().remove(key).is_some(), "{pointer}");
            }
        }
        let text = body.to_string();
        let findings = cartograph::oracles::graphql::check(
            &ts,
            &r.query,
            Some(&r.name),
            &r.variables,
            Some(200),
            Some(&body),
            &text,
        );
        let got: Vec<(&str, &str, &str)> = findings
            .iter()
            .map(|f| {
                (
                    cartograph::oracles::registry::graphql_code(f.kind).as_str(),
                    f.root_field.as_str(),
                    f.path.as_str(),
                )
            })
            .collect();
        assert_eq!(got, vec![(code, CONFORMING_ROOT, path)], "{pointer}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn replay_queries_reports_each_kind() {
    let (addr, server) = graphql_faults::start().await;
    let out = tempfile::tempdir().unwrap();
    let run = cartograph(
        [
            "replay-queries",
            graphql_faults::QUERIES_PATH,
            "--schema",
            graphql_faults::SCHEMA_PATH,
            "--target",
            &format!("http://{addr}/graphql"),
            "--out",
            out.path().to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
    )
    .await;
    server.abort();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "faults found: {stderr}");
    let report = read_report(out.path());
    let faults = report["faults"].as_array().expect("faults[]");
    for (name, code, root, path) in EXPECTED {
        // One fault per broken schema location (`Book.isbn`), named in the
        // signature, whatever response path showed it.
        let field = path.rsplit('.').next().unwrap_or(path);
        let matching: Vec<&Value> = faults
            .iter()
            .filter(|f| f["code"] == *code && f["operation"] == *root)
            .filter(|f| {
                f["signature"].as_str().is_some_and(|s| {
                    s.starts_with(&format!("{code}:")) && s.contains(&format!(".{field}"))
                })
            })
            .collect();
        assert_eq!(matching.len(), 1, "{name}: {code} at {path}: {faults:#?}");
    }
    assert_eq!(
        faults.len(),
        EXPECTED.len(),
        "only the planted faults: {faults:#?}"
    );
    assert!(
        faults.iter().all(|f| f["operation"] != CONFORMING_ROOT),
        "{CONFORMING}: {faults:#?}"
    );
    let coverage = &report["schema_coverage"];
    assert!(
        coverage["covered"].as_u64().is_some_and(|c| c > 0),
        "{coverage:#}"
    );
}

/// Each kind's reproducer check (as `cartograph replay` and the shell
/// scripts read it) shows on the faulty answer, and no longer once that one
/// value is put right: a reproducer of the fault says "did not show" on a
/// server without it, rather than passing on any 200.
#[test]
fn each_kinds_reproducer_check_shows_only_with_the_fault() {
    use cartograph::execution::{Exchange, RequestSpec};
    use serde_json::json;
    let api = cartograph::load::load(&fixture(graphql_faults::SCHEMA_PATH))
        .unwrap()
        .api;
    let checker = cartograph::oracles::Checker::new(&api, Vec::new(), None);
    // The answer with its one fault put right: (pointer, the right value).
    let repairs: [(&str, &str, Value); 7] = [
        ("MissingField", "/data/book/isbn", json!("978-0-00-b1")),
        (
            "NullViolation",
            "/data/author/books/1/title",
            json!("Salt Roads"),
        ),
        ("WrongType", "/data/books/1/pages", json!(288)),
        (
            "EnumViolation",
            "/data/magazine/frequency",
            json!("MONTHLY"),
        ),
        (
            "ListMismatchObject",
            "/data/publication/author",
            json!({"name": "Ada Moreau"}),
        ),
        (
            "ListMismatchList",
            "/data/authors/1/books",
            json!([{"title": "Salt Roads"}]),
        ),
        (
            "TypenameViolation",
            "/data/search/2/__typename",
            json!("Magazine"),
        ),
    ];
    let requests = requests();
    for (name, pointer, right) in repairs {
        let request = requests.iter().find(|r| r.name == name).unwrap();
        let exchange = |body: &Value| Exchange {
            request: RequestSpec {
                operation: "Query".into(),
                method: "POST".into(),
                body: Some(request.line.to_string()),
                content_type: Some("application/json".into()),
                graphql_query: true,
                ..Default::default()
            },
            status: Some(200),
            body: body.to_string(),
            ..Default::default()
        };
        let faulty = graphql_faults::answer(name);
        let found = checker.exchange(&api, &exchange(&faulty));
        let (_, code, _, _) = EXPECTED.iter().find(|(n, ..)| *n == name).unwrap();
        let finding = found
            .iter()
            .find(|f| f.code.as_str() == *code)
            .unwrap_or_else(|| panic!("{name}: {found:?}"));
        let check = finding.script_check(Some(200));
        assert!(
            !matches!(check, cartograph::oracles::FaultCheck::Status { .. }),
            "{name}: a check any 200 passes: {check:?}"
        );
        assert!(
            cartograph::reproduce::script_run::shows(&check, &exchange(&faulty)),
            "{name}: {check:?} does not show on the faulty answer"
        );
        let mut fixed = faulty.clone();
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        match fixed.pointer_mut(parent) {
            Some(Value::Object(map)) => {
                map.insert(key.to_string(), right);
            }
            Some(Value::Array(items)) => items[key.parse::<usize>().unwrap()] = right,
            _ => panic!("{name}: {pointer}"),
        }
        assert!(
            !cartograph::reproduce::script_run::shows(&check, &exchange(&fixed)),
            "{name}: {check:?} shows on the answer put right: {fixed}"
        );
    }
}
