//! `report.sarif`: the run's faults as SARIF 2.1.0, the format code-scanning
//! platforms read (GitHub code scanning, GitLab, Azure DevOps). It validates
//! against the OASIS schema (`fixtures/sarif/sarif-schema-2.1.0.json`).
//!
//! One `run`, whose `tool.driver.rules` are the oracles that fired (id = the
//! oracle's code, title and text from [`crate::oracles::registry`]), and one
//! `result` per cause (the faults one check reported for one reason),
//! defects first, each built from the cause's representative fault:
//!
//! - `message.text`: the cause's title, its faults, how often and on which
//!   operations it was seen, then the representative's message, its
//!   confirmation, and how to reproduce it (the reproducer script, or the
//!   witness as sent when there is none);
//! - `locations`: the representative's operation as a logical location
//!   (`kind` `function`, fully qualified name = the operation's name) and,
//!   because GitHub drops results without one, a physical location: the API
//!   description the run read (`settings.spec`; the target when none is
//!   recorded) at the line where it writes the operation (line 1 when that
//!   is unknown); `relatedLocations`: the other operations it was seen on;
//! - `partialFingerprints`: `cartographCause/v1`, the cause's id (stable
//!   across runs), and `cartographSignature/v1`, the representative's
//!   signature;
//! - `attachments`: the reproducer script, relative to the output folder
//!   (`uriBaseId` `OUTPUT_DIR`, the folder holding the SARIF file);
//!   `webRequest`/`webResponse`: the request that showed the fault;
//!   `properties`: cause, class, severity, the faults' signatures and
//!   operations, code, operation, status, count, confirmation, and the
//!   reproducer's or the witness's steps (method, path, status).
//!
//! **Levels.** A fault's level follows its oracle's class, and nothing else
//! (not the count, not the confirmation): `error` for defects (the server
//! failed, leaked internals, broke a promise across requests, let in a
//! caller it must refuse), `warning` for conformance (an answer does not
//! match the description), `note` for `graphql_validation_error`, the
//! server rejecting a query built from its own schema, most likely a
//! Cartograph bug.
//!
//! Every string taken from the run is redacted before it is written (and
//! before a location becomes a URI, so a secret cannot hide behind percent
//! encoding).

use std::fmt::Write;
use std::path::Path;
use std::time::{Duration, SystemTime};

use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use serde_json::{Map, Value, json};

use super::junit::confirmation_text;
use super::{Report, legal, utc_timestamp};
use crate::execution::secrets::Secrets;
use crate::faults::{Confirmation, Fault, WitnessStep};
use crate::oracles::registry::{Class, Code, Concern, Oracle, Severity};

/// The schema the file names in `$schema`: the OASIS Standard with its errata.
const SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The key of the fingerprint holding a fault's signature.
const FINGERPRINT: &str = "cartographSignature/v1";

/// The key of the fingerprint holding a cause's id: a cause keeps its alert
/// across runs whichever of its faults stands for it.
const CAUSE_FINGERPRINT: &str = "cartographCause/v1";

/// The `uriBaseId` of paths relative to the output folder (reproducers).
const OUTPUT_DIR: &str = "OUTPUT_DIR";

/// The level of a fault of this code: `error` for defects, `warning` for
/// conformance, `note` for a query the server rejected although it was
/// built from its own schema (most likely Cartograph's mistake); `warning`
/// for a code this version does not know (a report from another version).
fn level(code: Code) -> &'static str {
    let o = code.oracle();
    if o.concern == Concern::Tool {
        "note"
    } else if o.class == Class::Defect && o.severity != Severity::Low {
        // A low-severity defect (a read the role model may allow) is
        // worth a look, not a failed build.
        "error"
    } else {
        "warning"
    }
}

/// Why faults of a code have their level, for the rule's help.
fn why(o: &Oracle) -> &'static str {
    match (o.class, o.concern) {
        (_, Concern::Tool) => {
            "the server rejected a query built from its own schema, most likely a Cartograph bug"
        }
        (Class::Defect, Concern::Security) if o.severity == Severity::Low => {
            "a weak sign of a security defect: it depends on who may do what, which only the API's owners know"
        }
        (Class::Defect, Concern::Security) => {
            "the server leaked its internals, or let in a caller its description says it must refuse"
        }
        (Class::Defect, _) => "the server failed, or broke a promise it made in an earlier answer",
        (Class::Conformance, _) => "an answer does not conform to the API description",
    }
}

/// `server_error` → `ServerError`: the rule's `name`, an identifier as SARIF
/// recommends.
fn pascal(code: &str) -> String {
    code.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// Markdown to plain text: code spans lose their backticks.
fn plain(markdown: &str) -> String {
    markdown.replace('`', "")
}

/// `text.` with a full stop unless it ends with one.
fn sentence(text: &str) -> String {
    if text.ends_with('.') {
        text.to_string()
    } else {
        format!("{text}.")
    }
}

/// The `reportingDescriptor` of a code.
fn rule_json(code: Code) -> Value {
    let r = code.oracle();
    let full_md = format!("{}. Fires when {}", r.title, sentence(r.fires_when));
    let help_md = format!(
        "{full_md}\n\nReported as **{}**: {}. A confirmed fault comes with a reproducer in the output folder: `bash reproducers/NN-….sh [BASE_URL]` exits 1 when the fault shows. Turn the check off with `--skip-check {}`.",
        level(r.code),
        why(r),
        r.code
    );
    let mut tags = vec!["api".to_string()];
    if r.judges_rest() {
        tags.push("rest".to_string());
    }
    if r.judges_graphql() {
        tags.push("graphql".to_string());
    }
    tags.push(r.concern.as_str().to_string());
    if r.code.is_leak() {
        // CWE-209: generation of an error message containing sensitive information.
        tags.push("external/cwe/cwe-209".to_string());
    }
    let mut rule = json!({
        "id": r.code,
        "name": pascal(r.code.as_str()),
        "shortDescription": {"text": r.title},
        "fullDescription": {"text": plain(&full_md), "markdown": full_md},
        "help": {"text": plain(&help_md), "markdown": help_md},
        "defaultConfiguration": {"level": level(r.code)},
        "properties": {
            "tags": tags,
            // Each oracle fires exactly when its rule says.
            "precision": "high",
            "problem.severity": match level(r.code) {
                "error" => "error",
                "warning" => "warning",
                _ => "recommendation",
            },
        },
    });
    if let Some(wfc) = r.wfc {
        // The Web Fuzzing Commons catalogue's code, for tools that read it.
        rule["properties"]["wfc"] = json!(wfc);
    }
    rule
}

/// Characters a URI path segment cannot hold as they are.
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// A relative path as a relative URI reference (`specs/my api.yaml` →
/// `specs/my%20api.yaml`).
fn relative_uri(path: &str) -> String {
    let uri = path
        .split(['/', '\\'])
        .map(|s| utf8_percent_encode(s, SEGMENT).to_string())
        .collect::<Vec<_>>()
        .join("/");
    // `a:b.yaml` would read as a URI with the scheme `a`.
    match uri.split('/').next() {
        Some(first) if first.contains(':') => format!("./{uri}"),
        _ => uri,
    }
}

/// Where the run's description is, as an artifact URI: a URL as it is (with
/// the characters a URI cannot hold outside its host escaped), an absolute
/// path as a `file:` URI, a relative path as a relative reference.
fn artifact_uri(location: &str) -> String {
    if let Ok(url) = url::Url::parse(location) {
        // `C:\api.yaml` parses with the scheme `c`: a path, not a URL.
        if url.scheme().len() > 1 {
            let head = &url[..url::Position::BeforePath];
            let tail: String = url[url::Position::BeforePath..]
                .chars()
                .map(|c| match c {
                    '[' | ']' | '{' | '}' | '|' | '\\' | '^' | '`' | '"' | ' ' => {
                        let mut b = [0u8; 4];
                        c.encode_utf8(&mut b)
                            .bytes()
                            .map(|x| format!("%{x:02X}"))
                            .collect()
                    }
                    c => c.to_string(),
                })
                .collect();
            return format!("{head}{tail}");
        }
    }
    let path = Path::new(location);
    if path.is_absolute()
        && let Ok(url) = url::Url::from_file_path(path)
    {
        return url.to_string();
    }
    relative_uri(location)
}

/// A step as a property: method, path, status.
fn step_json(s: &WitnessStep) -> Value {
    let mut m = Map::new();
    m.insert("method".into(), json!(s.method));
    m.insert("path".into(), json!(s.path));
    if let Some(status) = s.status {
        m.insert("status".into(), json!(status));
    }
    Value::Object(m)
}

/// The result's message: what was seen, how often, whether a replay showed
/// it again, and how to reproduce it.
fn message(f: &Fault) -> String {
    let mut m = f.message.clone();
    if f.confirmation == Confirmation::Flaky {
        m.push_str(" (flaky)");
    }
    let _ = write!(
        m,
        "\nSeen {} time(s), first at request #{}; {}.",
        f.count,
        f.first_seq,
        confirmation_text(f.confirmation)
    );
    let steps = |steps: &[WitnessStep]| {
        steps
            .iter()
            .enumerate()
            .map(|(i, s)| format!("{}. {}", i + 1, super::step_text(s)))
            .collect::<Vec<_>>()
            .join("; ")
    };
    if let Some(r) = &f.reproducer {
        let _ = write!(
            m,
            "\nReproduce: bash {} [BASE_URL] (in the output folder; exits 1 when the fault shows): {}",
            crate::model::text::shell_arg(&r.shell),
            steps(&r.steps)
        );
    } else if !f.witness.is_empty() {
        let _ = write!(m, "\nWitness (as sent): {}", steps(&f.witness));
    }
    m
}

/// The report's operations by name, made once: looked up per fault, a
/// search through them would cost faults × operations.
type Ops<'a> = std::collections::HashMap<&'a str, &'a crate::reports::OperationReport>;

/// The logical and physical location of an operation.
fn operation_location(operation: &str, report: &Report, ops: &Ops<'_>) -> Value {
    let op = ops.get(operation).copied();
    let described = op
        .and_then(|o| o.spec.as_deref())
        .or(report.settings.spec.as_deref())
        .unwrap_or(&report.settings.target);
    let line = op.and_then(|o| o.line).unwrap_or(1).max(1);
    json!({
        "physicalLocation": {
            "artifactLocation": {"uri": artifact_uri(described)},
            "region": {"startLine": line},
        },
        "logicalLocations": [{
            "name": operation,
            "fullyQualifiedName": operation,
            "kind": "function",
        }],
    })
}

/// One cause as a SARIF result: its representative fault's result, titled
/// by the cause, located at the representative's operation with the other
/// operations it was seen on as related locations, and fingerprinted by the
/// cause's id.
fn cause_result(
    c: &crate::faults::causes::Cause,
    representative: &Fault,
    rule_index: usize,
    report: &Report,
    ops: &Ops<'_>,
) -> Value {
    let mut out = result(representative, rule_index, report, ops);
    let mut text = format!(
        "{}\n{} fault(s), seen {} time(s), on {} operation(s): {} ({}, {}; cause {}).\nRepresentative: ",
        c.title,
        c.faults.len(),
        c.count,
        c.operations.len(),
        c.operations.join(", "),
        c.class.as_str(),
        c.severity.as_str(),
        c.id
    );
    text.push_str(out["message"]["text"].as_str().unwrap_or_default());
    out["message"]["text"] = json!(text);
    let related: Vec<Value> = c
        .operations
        .iter()
        .filter(|o| **o != representative.operation)
        .enumerate()
        .map(|(i, o)| {
            let mut l = operation_location(o, report, ops);
            l["id"] = json!(i + 1);
            l["message"] = json!({"text": format!("also seen on {o}")});
            l
        })
        .collect();
    if !related.is_empty() {
        out["relatedLocations"] = Value::Array(related);
    }
    out["partialFingerprints"][CAUSE_FINGERPRINT] = json!(c.id);
    if let Some(props) = out["properties"].as_object_mut() {
        props.insert("cause".into(), json!(c.id));
        props.insert("class".into(), json!(c.class));
        props.insert("severity".into(), json!(c.severity));
        props.insert("faults".into(), json!(c.faults));
        props.insert("operations".into(), json!(c.operations));
        props.insert("total_count".into(), json!(c.count));
    }
    out
}

/// One fault as a SARIF result; `rule_index` is its rule's place in the driver.
fn result(f: &Fault, rule_index: usize, report: &Report, ops: &Ops<'_>) -> Value {
    let op = ops.get(f.operation.as_str()).copied();
    let location = operation_location(&f.operation, report, ops);

    let mut props = Map::new();
    props.insert("code".into(), json!(f.code));
    props.insert("operation".into(), json!(f.operation));
    if let Some(s) = f.status {
        props.insert("status".into(), json!(s));
    }
    props.insert("signature".into(), json!(f.signature));
    props.insert("count".into(), json!(f.count));
    props.insert("first_seq".into(), json!(f.first_seq));
    props.insert("confirmation".into(), json!(f.confirmation));
    if let Some(op) = op {
        props.insert("method".into(), json!(op.method));
        props.insert("path".into(), json!(op.path));
    }
    if !f.witness.is_empty() {
        props.insert(
            "witness".into(),
            Value::Array(f.witness.iter().map(step_json).collect()),
        );
    }

    let mut out = json!({
        "ruleId": f.code,
        "ruleIndex": rule_index,
        "kind": "fail",
        "level": level(f.code),
        "message": {"text": message(f)},
        "locations": [location],
        "partialFingerprints": {FINGERPRINT: f.signature},
    });
    let shown_by = match &f.reproducer {
        Some(r) => {
            props.insert(
                "reproducer".into(),
                json!({
                    "shell": r.shell,
                    "json": r.json,
                    "standalone": r.standalone,
                    "unmade": r.unmade,
                    "requests": r.requests,
                    "steps": r.steps.iter().map(step_json).collect::<Vec<_>>(),
                }),
            );
            out["attachments"] = json!([{
                "description": {"text": format!(
                    "The minimised reproducer: bash {} [BASE_URL] exits 1 when the fault shows, 0 when it does not, 2 when the sequence could not run; pass credentials with CARTOGRAPH_HEADER='Name: value'.",
                    crate::model::text::shell_arg(&r.shell)
                )},
                "artifactLocation": {"uri": relative_uri(&r.shell), "uriBaseId": OUTPUT_DIR},
            }]);
            r.steps.last()
        }
        None => f.witness.last(),
    };
    if let Some(s) = shown_by {
        out["webRequest"] = json!({"method": s.method, "target": s.path});
        if let Some(status) = s.status {
            out["webResponse"] = json!({"statusCode": status});
        }
    }
    out["properties"] = Value::Object(props);
    out
}

/// `2024-05-01T12:34:56Z`.
fn sarif_time(t: SystemTime) -> String {
    format!("{}Z", utc_timestamp(t))
}

/// Every string of `v` redacted and cut of the control characters (other than
/// tab and line breaks) that would be noise in a CI page.
fn clean(v: &mut Value, secrets: &Secrets) {
    match v {
        Value::String(s) => {
            let cleaned = match secrets.redact(s) {
                std::borrow::Cow::Borrowed(b) => match legal(b) {
                    std::borrow::Cow::Borrowed(_) => None,
                    std::borrow::Cow::Owned(o) => Some(o),
                },
                std::borrow::Cow::Owned(o) => Some(legal(&o).into_owned()),
            };
            if let Some(c) = cleaned {
                *s = c;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| clean(i, secrets)),
        Value::Object(m) => m.values_mut().for_each(|i| clean(i, secrets)),
        _ => {}
    }
}

/// Renders `report.sarif`: SARIF 2.1.0, one run, one result per cause, one
/// rule per oracle that fired; a result's level is `error` for server
/// failures, leaks and stateful faults, `warning` for answers that break the
/// description, `note` for `graphql_validation_error`. `ended` is when the run
/// ended (the invocation's end time; its start is `elapsed_s` before).
/// Secrets are redacted from every string.
pub fn render_sarif(report: &Report, ended: SystemTime, secrets: &Secrets) -> String {
    // A location is redacted before it becomes a URI, whose escaping could
    // otherwise hide a secret from the final pass.
    let mut report = report.clone();
    let red = |s: &mut String| *s = secrets.redact(s).into_owned();
    red(&mut report.settings.target);
    if let Some(s) = &mut report.settings.spec {
        red(s);
    }
    for op in &mut report.operations {
        if let Some(s) = &mut op.spec {
            red(s);
        }
    }
    for f in &mut report.faults {
        if let Some(r) = &mut f.reproducer {
            red(&mut r.shell);
        }
    }
    let report = &report;

    // The rules of the codes that fired, in the oracles' order.
    let codes: Vec<Code> = Code::ALL
        .iter()
        .copied()
        .filter(|c| report.faults.iter().any(|f| f.code == *c))
        .collect();
    let rules: Vec<Value> = codes.iter().map(|c| rule_json(*c)).collect();
    let mut ops = Ops::new();
    for o in &report.operations {
        // The first of a name, as a search through them would find.
        ops.entry(o.operation.as_str()).or_insert(o);
    }
    // One result per cause, most important first; a fault no cause names
    // (a report written by hand) stands alone.
    let results: Vec<Value> = report
        .causes
        .iter()
        .filter_map(|c| {
            let f = report
                .faults
                .iter()
                .find(|f| f.signature == c.representative)?;
            let index = codes.iter().position(|code| *code == f.code).unwrap_or(0);
            Some(cause_result(c, f, index, report, &ops))
        })
        .chain(
            report
                .faults
                .iter()
                .filter(|f| {
                    !report
                        .causes
                        .iter()
                        .any(|c| c.faults.contains(&f.signature))
                })
                .map(|f| {
                    let index = codes.iter().position(|c| *c == f.code).unwrap_or(0);
                    result(f, index, report, &ops)
                }),
        )
        .collect();

    let version = report
        .tool
        .get("version")
        .copied()
        .unwrap_or(env!("CARGO_PKG_VERSION"));
    let mut driver = json!({
        "name": "cartograph",
        "version": version,
        "semanticVersion": version,
        "rules": rules,
    });
    // Cargo.toml's homepage, else its repository, when the package names one.
    let home = [env!("CARGO_PKG_HOMEPAGE"), env!("CARGO_PKG_REPOSITORY")]
        .into_iter()
        .find(|u| url::Url::parse(u).is_ok());
    if let Some(home) = home {
        driver["informationUri"] = json!(home);
    }

    let started = ended
        .checked_sub(Duration::from_secs_f64(report.elapsed_s.max(0.0)))
        .unwrap_or(ended);
    let mut invocation = json!({
        "executionSuccessful": true,
        "startTimeUtc": sarif_time(started),
        "endTimeUtc": sarif_time(ended),
        "properties": {"stop": report.stop},
    });
    let failed = match report.stop.as_str() {
        "auth_failed" => Some(
            "the server refused the credentials and the run stopped: nothing after that was tested",
        ),
        "interrupted" => Some(
            "the run was interrupted (Ctrl-C or SIGTERM): only what was tested before is reported",
        ),
        "rate_limited" => Some(
            "the server asked to wait past the end of the budget (Retry-After): the operations it asked it of were not tested further",
        ),
        "crashed" => Some(
            "the search failed inside Cartograph and stopped: only what was tested before is reported",
        ),
        _ => None,
    };
    if let Some(why) = failed {
        invocation["executionSuccessful"] = json!(false);
        invocation["toolExecutionNotifications"] = json!([{
            "level": "error",
            "message": {"text": why},
        }]);
    }

    let s = &report.settings;
    let mut properties = json!({
        "target": s.target,
        "seed": s.seed.to_string(),
        "requests": report.requests,
        "operations": report.operations.len(),
        "operations_reached": report.operations_reached,
        "stop": report.stop,
        "elapsed_s": report.elapsed_s,
    });
    if let Some(spec) = &s.spec {
        properties["spec"] = json!(spec);
    }
    if report.refused_mutations > 0 {
        properties["refused_mutations"] = json!(report.refused_mutations);
    }

    let mut log = json!({
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": driver},
            "invocations": [invocation],
            "originalUriBaseIds": {
                OUTPUT_DIR: {"description": {"text": "The folder that holds this file: cartograph's output folder (--out)."}},
            },
            "results": results,
            "properties": properties,
        }],
    });
    clean(&mut log, secrets);
    let mut text = serde_json::to_string_pretty(&log).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_oracle_has_a_rule_with_its_registry_text() {
        for o in crate::oracles::registry::ORACLES {
            let rule = rule_json(o.code);
            assert_eq!(rule["shortDescription"]["text"], o.title, "{}", o.code);
            let full = rule["fullDescription"]["markdown"].as_str().unwrap();
            assert!(full.contains(o.fires_when), "{}", o.code);
        }
    }

    #[test]
    fn a_rule_carries_its_wfc_code_where_the_catalogue_has_one() {
        assert_eq!(
            rule_json(Code::from_name("other_identity_write").unwrap())["properties"]["wfc"],
            306
        );
        assert_eq!(
            rule_json(Code::from_name("anonymous_modification").unwrap())["properties"]["wfc"],
            308
        );
        assert_eq!(
            rule_json(Code::from_name("existence_leak").unwrap())["properties"]["wfc"],
            304
        );
        assert_eq!(
            rule_json(Code::from_name("valid_credentials_told_401").unwrap())["properties"]["wfc"],
            305
        );
        assert_eq!(
            rule_json(Code::from_name("server_error").unwrap())["properties"]["wfc"],
            100
        );
        assert!(
            rule_json(Code::from_name("non_idempotent").unwrap())["properties"]
                .get("wfc")
                .is_none()
        );
    }

    #[test]
    fn levels_follow_the_kind_of_fault() {
        for (code, expected) in [
            ("server_error", "error"),
            ("timeout", "error"),
            ("graphql_internal_error", "error"),
            ("stack_trace_leak", "error"),
            ("sql_leak", "error"),
            ("debug_page_leak", "error"),
            ("use_after_delete", "error"),
            ("created_not_readable", "error"),
            ("dangling_location", "error"),
            ("non_idempotent", "error"),
            ("ignored_auth", "error"),
            ("other_identity_write", "error"),
            ("existence_leak", "error"),
            ("other_identity_read", "warning"),
            ("valid_credentials_told_401", "warning"),
            ("invalid_input_accepted", "warning"),
            ("undocumented_status", "warning"),
            ("schema_violation", "warning"),
            ("content_type_mismatch", "warning"),
            ("html_instead_of_json", "warning"),
            ("graphql_null_violation", "warning"),
            ("graphql_validation_error", "note"),
        ] {
            assert_eq!(level(Code::from_name(code).unwrap()), expected, "{code}");
        }
    }

    #[test]
    fn locations_become_uris() {
        assert_eq!(
            artifact_uri("models/demo/openapi.yaml"),
            "models/demo/openapi.yaml"
        );
        assert_eq!(
            artifact_uri("specs/my api {v2}.yaml"),
            "specs/my%20api%20%7Bv2%7D.yaml"
        );
        assert_eq!(artifact_uri("a:b.yaml"), "./a:b.yaml");
        assert_eq!(artifact_uri("/srv/api#1.yaml"), "file:///srv/api%231.yaml");
        assert_eq!(
            artifact_uri("http://127.0.0.1:8080/graphql?key=[REDACTED]"),
            "http://127.0.0.1:8080/graphql?key=%5BREDACTED%5D"
        );
        assert_eq!(
            artifact_uri("http://[::1]:8080/graphql"),
            "http://[::1]:8080/graphql"
        );
        assert_eq!(pascal("graphql_null_violation"), "GraphqlNullViolation");
    }
}
