//! The registry against everything derived from it: each oracle fires on
//! its fixture, reports validate against the published schema, and the
//! guide says what the rows say.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::*;
use crate::execution::{Breach, Exchange, Failure, FailureKind, RequestSpec};
use crate::faults::{Faults, witness::Ledger};
use crate::oracles::{Checker, FaultCheck};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// One exchange of a fixture, as written by hand.
#[derive(Deserialize)]
struct FixtureExchange {
    operation: String,
    method: String,
    path: String,
    status: Option<u16>,
    #[serde(default)]
    headers: Vec<(String, String)>,
    #[serde(default)]
    body: String,
    #[serde(default)]
    request_body: Option<String>,
    #[serde(default)]
    graphql_query: bool,
    breach: Option<Breach>,
    #[serde(default)]
    identity: Option<String>,
    failure: Option<Failure>,
    elapsed_ms: u64,
}

#[derive(Deserialize)]
struct Fixture {
    spec: String,
    exchanges: Vec<FixtureExchange>,
}

fn exchanges(fixture: &Fixture) -> Vec<Exchange> {
    fixture
        .exchanges
        .iter()
        .enumerate()
        .map(|(seq, e)| Exchange {
            seq: seq as u64,
            request: RequestSpec {
                operation: e.operation.clone(),
                method: e.method.clone(),
                path: e.path.clone(),
                content_type: e.request_body.as_ref().map(|_| "application/json".into()),
                body: e.request_body.clone(),
                graphql_query: e.graphql_query,
                breach: e.breach.clone(),
                identity: e.identity.clone(),
                ..Default::default()
            },
            status: e.status,
            headers: e.headers.clone(),
            body: e.body.clone(),
            failure: e.failure.clone(),
            elapsed: std::time::Duration::from_millis(e.elapsed_ms),
            ..Default::default()
        })
        .collect()
}

/// Every fixture: its file name's first word is the code it must make fire.
fn fixtures() -> Vec<(String, PathBuf)> {
    let dir = root().join("fixtures/oracles");
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .expect("fixtures/oracles")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            (name.split('.').next().unwrap().to_string(), p)
        })
        .collect();
    out.sort();
    out
}

/// The faults each fixture makes, by the code it is named for.
fn faults_of_fixtures() -> Vec<(String, Vec<crate::faults::Fault>)> {
    fixtures()
        .into_iter()
        .map(|(code, path)| {
            let fixture: Fixture = serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let api = crate::load::load(&root().join(&fixture.spec))
                .unwrap_or_else(|e| panic!("{}: {e}", fixture.spec))
                .api;
            let target = url::Url::parse("http://127.0.0.1:9/").ok();
            let checker = Checker::new(&api, Vec::new(), target);
            let exchanges = exchanges(&fixture);
            let findings = checker.test(&api, &exchanges);
            let mut faults = Faults::new();
            faults.record(&exchanges, &findings, &Ledger::new());
            (code, faults.faults())
        })
        .collect()
}

#[test]
fn every_oracle_fires_on_its_fixture_and_every_fixture_names_an_oracle() {
    let made = faults_of_fixtures();
    // The security probes' rows judge requests of their own, not a
    // fixture's exchanges: tests/security.rs makes each fire on a server.
    for o in ORACLES.iter().filter(|o| !matches!(o.rest, Judge::Probe)) {
        assert!(
            made.iter().any(|(code, _)| code == o.code.as_str()),
            "no fixture under fixtures/oracles/ makes `{}` fire: add {}.json",
            o.code,
            o.code
        );
    }
    for (code, faults) in &made {
        assert!(
            Code::from_name(code).is_some(),
            "fixture for unknown code {code}"
        );
        assert!(
            faults.iter().any(|f| f.code.as_str() == code),
            "the fixture for {code} made {:?}",
            faults.iter().map(|f| &f.code).collect::<Vec<_>>()
        );
    }
}

#[test]
fn a_fault_of_every_code_validates_against_the_published_report_schema() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("models/report.schema.json")).unwrap(),
    )
    .unwrap();
    let mut one_fault = serde_json::json!({ "$defs": schema["$defs"].clone() });
    one_fault["$defs"]["fault_under_test"] = schema["properties"]["faults"]["items"].clone();
    one_fault["$ref"] = "#/$defs/fault_under_test".into();
    let validator = jsonschema::validator_for(&one_fault).expect("the schema compiles");
    let mut seen = std::collections::BTreeSet::new();
    for (_, faults) in faults_of_fixtures() {
        for f in faults {
            let value = serde_json::to_value(&f).unwrap();
            let errors: Vec<String> = validator
                .iter_errors(&value)
                .map(|e| format!("{} at {}", e, e.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{}: {errors:?}", f.code);
            seen.insert(f.code);
        }
    }
    // The probes' faults are validated by tests/security.rs, on a real run.
    let codes: std::collections::BTreeSet<Code> = ORACLES
        .iter()
        .filter(|o| !matches!(o.rest, Judge::Probe))
        .map(|o| o.code)
        .collect();
    assert_eq!(seen, codes);
}

#[test]
fn the_report_schema_lists_exactly_the_registry_codes() {
    let path = root().join("models/report.schema.json");
    let mut schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let listed = &mut schema["properties"]["faults"]["items"]["properties"]["code"]["enum"];
    assert!(listed.is_array(), "an enum of codes");
    let want = serde_json::json!(codes().collect::<Vec<_>>());
    if *listed == want {
        return;
    }
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        *listed = want;
        let text = serde_json::to_string_pretty(&schema).unwrap();
        std::fs::write(&path, format!("{text}\n")).unwrap();
        return;
    }
    panic!(
        "models/report.schema.json lists other fault codes than src/oracles/registry/mod.rs; \
         rewrite it with `UPDATE_GOLDEN=1 cargo test --lib the_report_schema_lists`"
    );
}

/// Where the guide's list of checks starts and ends: everything between
/// the markers is written from the rows.
const GUIDE_START: &str = "<!-- checks: written from src/oracles/registry/mod.rs -->\n";
const GUIDE_END: &str = "<!-- end of checks -->";

#[test]
fn the_guide_lists_the_registry() {
    let path = root().join("docs/src/reference/checks.md");
    let page = std::fs::read_to_string(&path).unwrap();
    let start = page
        .find(GUIDE_START)
        .expect("the guide's start marker of checks")
        + GUIDE_START.len();
    let end = start
        + page[start..]
            .find(GUIDE_END)
            .expect("the guide's end marker of checks");
    let want = markdown_reference();
    if page[start..end] == want {
        return;
    }
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, format!("{}{want}{}", &page[..start], &page[end..])).unwrap();
        return;
    }
    panic!(
        "docs/src/reference/checks.md differs from src/oracles/registry/mod.rs; \
         rewrite it with `UPDATE_GOLDEN=1 cargo test --lib the_guide_lists_the_registry`"
    );
}

#[test]
fn aliases_name_the_concepts_they_were_codes_of() {
    assert_eq!(
        resolve("graphql_server_error").unwrap(),
        [Code::ServerError]
    );
    assert_eq!(
        resolve("graphql_stack_leak").unwrap(),
        [Code::StackTraceLeak, Code::SqlLeak, Code::DebugPageLeak]
    );
    let e = resolve("server_eror").unwrap_err();
    assert!(e.contains("did you mean `server_error`"), "{e}");
    for o in ORACLES {
        for a in o.aliases {
            assert!(Code::from_name(a).is_none(), "alias {a} is also a code");
        }
    }
}

#[test]
fn defects_rank_before_conformance_and_severity_orders_within() {
    let mut codes: Vec<Code> = Code::ALL.to_vec();
    codes.sort_by_key(|c| rank(*c));
    let classes: Vec<Class> = codes.iter().map(|c| c.oracle().class).collect();
    assert!(classes.windows(2).all(|w| w[0] <= w[1]), "{codes:?}");
    assert!(rank(Code::ServerError) < rank(Code::UseAfterDelete));
    assert!(rank(Code::UseAfterDelete) < rank(Code::UndocumentedStatus));
    assert!(rank(Code::SchemaViolation) < rank(Code::UndocumentedStatus));
    assert!(Path::new(&root()).join("fixtures/oracles").is_dir());
}

#[test]
fn a_missing_property_is_named_once_in_the_script_check() {
    let api = crate::load::load(&root().join("models/demo/openapi.yaml"))
        .unwrap()
        .api;
    let checker = Checker::new(&api, Vec::new(), None);
    let ex = Exchange {
        request: RequestSpec {
            operation: "getAuthor".into(),
            method: "GET".into(),
            path: "/authors/7".into(),
            ..Default::default()
        },
        status: Some(200),
        headers: vec![("content-type".into(), "application/json".into())],
        body: r#"{"id":7}"#.into(),
        ..Default::default()
    };
    let found = checker.exchange(&api, &ex);
    let f = found
        .iter()
        .find(|f| f.code == Code::SchemaViolation)
        .expect("a missing name");
    assert_eq!(
        f.found.check,
        Some(FaultCheck::JsonMissing {
            status: 200,
            pointer: "/name".into()
        })
    );
}

#[test]
fn a_timeout_says_the_limit_as_given() {
    let ex = |limit_ms: u64, elapsed_ms: u64| Exchange {
        request: RequestSpec {
            operation: "listAuthors".into(),
            ..Default::default()
        },
        failure: Some(Failure {
            limit: Some(std::time::Duration::from_millis(limit_ms)),
            ..Failure::new(FailureKind::Timeout, "no response before the timeout")
        }),
        elapsed: std::time::Duration::from_millis(elapsed_ms),
        ..Default::default()
    };
    let said = |limit_ms, elapsed_ms| timeout(&ex(limit_ms, elapsed_ms), None).unwrap();
    let ten = said(10_000, 10_040);
    assert_eq!(ten.message, "no answer within 10 s (--timeout)");
    assert_eq!(ten.check, Some(FaultCheck::Timeout { seconds: 10 }));
    assert_eq!(
        said(700, 731).message,
        "no answer within 700 ms (--timeout)"
    );
    assert_eq!(
        said(1_500, 1_502).message,
        "no answer within 1.5 s (--timeout)"
    );
}

#[test]
fn invalid_json_judges_only_whole_bodies_declared_json() {
    let api = crate::load::load(&root().join("models/demo/openapi.yaml"))
        .unwrap()
        .api;
    let checker = Checker::new(&api, Vec::new(), None);
    let fires = |media: &str, body: &str, truncated: bool| {
        let ex = Exchange {
            request: RequestSpec {
                operation: "listAuthors".into(),
                method: "GET".into(),
                path: "/authors".into(),
                ..Default::default()
            },
            status: Some(200),
            headers: vec![("content-type".into(), media.into())],
            body: body.into(),
            truncated,
            ..Default::default()
        };
        checker
            .exchange(&api, &ex)
            .iter()
            .any(|f| f.code == Code::InvalidJson)
    };
    assert!(fires("application/json", "{\"a\": ", false));
    assert!(fires(
        "application/problem+json",
        "<html>oops</html>",
        false
    ));
    assert!(fires("application/json", "ok", false));
    // Cut by --max-body or the timeout: no verdict.
    assert!(!fires("application/json", "{\"a\": ", true));
    // Not declared JSON, or nothing to parse.
    assert!(!fires("text/plain", "{\"a\": ", false));
    assert!(!fires("application/json", "", false));
    assert!(!fires("application/json", " \n", false));
    // Valid JSON, with a byte order mark, or nested past serde_json's limit.
    assert!(!fires("application/json", "[1, 2, 3]", false));
    assert!(!fires(
        "application/json; charset=utf-8",
        "\u{feff}{\"a\": 1}",
        false
    ));
    let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
    assert!(!fires("application/json", &deep, false));
}

#[test]
fn a_501_is_the_server_declining_not_a_crash() {
    let api = crate::load::load(&root().join("models/demo/openapi.yaml"))
        .unwrap()
        .api;
    let checker = Checker::new(&api, Vec::new(), None);
    let codes = |status: u16| -> Vec<&'static str> {
        let ex = Exchange {
            request: RequestSpec {
                operation: "listAuthors".into(),
                method: "GET".into(),
                path: "/authors".into(),
                ..Default::default()
            },
            status: Some(status),
            ..Default::default()
        };
        checker
            .exchange(&api, &ex)
            .iter()
            .map(|f| f.code.as_str())
            .collect()
    };
    assert_eq!(codes(501), ["undocumented_status"]);
    assert_eq!(codes(500), ["server_error"]);
    assert_eq!(codes(503), ["server_error"]);
}

#[test]
fn a_projection_may_leave_required_fields_out() {
    let api = crate::load::load(&root().join("models/demo/openapi.yaml"))
        .unwrap()
        .api;
    let checker = Checker::new(&api, Vec::new(), None);
    let fires = |path: &str| {
        let ex = Exchange {
            request: RequestSpec {
                operation: "getAuthor".into(),
                method: "GET".into(),
                path: path.into(),
                ..Default::default()
            },
            status: Some(200),
            headers: vec![("content-type".into(), "application/json".into())],
            body: r#"{"id":7}"#.into(),
            ..Default::default()
        };
        checker
            .exchange(&api, &ex)
            .iter()
            .any(|f| f.code == Code::SchemaViolation)
    };
    assert!(fires("/authors/7"));
    assert!(fires("/authors/7?fields="));
    assert!(!fires("/authors/7?_fields=id"));
    assert!(!fires("/authors/7?fields=id,bio"));
    assert!(!fires("/authors/7?%24select=id"));
}

#[test]
fn the_flags_help_lists_the_codes_in_one_column() {
    let help = flag_help("Turn an oracle off by its code.");
    let columns: std::collections::BTreeSet<usize> = ORACLES
        .iter()
        .map(|o| {
            let line = help
                .lines()
                .find(|l| l.trim_start().starts_with(&format!("{} ", o.code)))
                .unwrap_or_else(|| panic!("no line for {}:\n{help}", o.code));
            line.find(o.title).unwrap()
        })
        .collect();
    assert_eq!(
        columns.len(),
        1,
        "titles start at columns {columns:?}:\n{help}"
    );
}
