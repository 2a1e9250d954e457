//! `wfc-report.json`: the run in the Web Fuzzing Commons report format
//! (the schema `report.yaml` of the `webfuzzing-commons` package), so that
//! the WFC web report can show a Cartograph run beside other tools'. Faults
//! of a check with a WFC code are listed with their catalogue id and code;
//! each fault's test case is its reproducer when it has one.

use std::collections::BTreeSet;
use std::time::SystemTime;

use serde_json::{Value, json};

use super::Report;

/// The version of the WFC schema the file is written for (the
/// `webfuzzing-commons` release its catalogue and schema come from).
pub const WFC_SCHEMA_VERSION: &str = "0.12.1";

/// The WFC fault catalogue (`fault_categories.json` of
/// `webfuzzing-commons` 0.12.1): code and stable id.
const CATALOGUE: &[(u16, &str)] = &[
    (100, "HTTP_STATUS_500"),
    (101, "HTTP_STATUS_NO_NON_STANDARD_CODES"),
    (102, "HTTP_STATUS_NO_201_IF_DELETE"),
    (103, "HTTP_STATUS_NO_201_IF_GET"),
    (104, "HTTP_STATUS_NO_201_IF_PATCH"),
    (105, "HTTP_STATUS_NO_204_IF_CONTENT"),
    (106, "HTTP_STATUS_NO_413_IF_NO_PAYLOAD"),
    (107, "HTTP_STATUS_NO_415_IF_NO_PAYLOAD"),
    (108, "HTTP_STATUS_NO_304_IF_NO_GET_OR_HEAD"),
    (109, "HTTP_STATUS_NO_401_IF_NO_WWW_AUTHENTICATE"),
    (110, "HTTP_STATUS_NO_405_IF_NO_ALLOW"),
    (111, "HTTP_STATUS_NO_205_IF_CONTENT"),
    (112, "HTTP_STATUS_NO_426_IF_NO_UPGRADE"),
    (113, "HTTP_NONWORKING_DELETE"),
    (114, "HTTP_SIDE_EFFECTS_FAILED_MODIFICATION"),
    (115, "HTTP_REPEATED_CREATE_PUT"),
    (116, "HTTP_MISLEADING_CREATE_PUT"),
    (117, "HTTP_PARTIAL_UPDATE_PUT"),
    (118, "HTTP_NON_IDEMPOTENT_PUT"),
    (119, "HTTP_INVALID_MERGE_PATCH"),
    (120, "HTTP_INVALID_LOCATION"),
    (121, "HTTP_OTHER_STATUS_5XX"),
    (122, "HTTP_CREATED_RESOURCE_NOT_FOUND"),
    (200, "SCHEMA_INVALID_RESPONSE"),
    (201, "SCHEMA_INVALID_ALLOW"),
    (202, "SCHEMA_STATUS_NO_401_IF_NO_AUTH"),
    (203, "SCHEMA_STATUS_NO_403_IF_NO_401"),
    (204, "SCHEMA_STATUS_HAS_406_IF_ACCEPT"),
    (205, "SCHEMA_STATUS_NO_501_IF_IMPLEMENTED"),
    (206, "SCHEMA_VALIDATION_BYPASS"),
    (207, "SCHEMA_VALID_INPUT_REJECTED"),
    (300, "SECURITY_SQL_INJECTION"),
    (301, "SECURITY_XSS_INJECTION"),
    (302, "SECURITY_SSRF"),
    (303, "SECURITY_MASS_ASSIGNMENT"),
    (304, "SECURITY_EXISTENCE_LEAKAGE"),
    (305, "SECURITY_NOT_RECOGNIZED_AUTHENTICATED"),
    (306, "SECURITY_INCONSISTENT_WRITE_AUTHORIZATION"),
    (307, "SECURITY_IGNORE_ANONYMOUS"),
    (308, "SECURITY_ANONYMOUS_MODIFICATIONS"),
    (309, "SECURITY_LEAKED_STACK_TRACES"),
    (310, "SECURITY_HIDDEN_ACCESSIBLE_ENDPOINT"),
    (311, "SECURITY_DECLARED_AUTH_NOT_ENFORCED"),
    (312, "SECURITY_CALL_TIMEOUT"),
];

/// The catalogue's id of a WFC code.
pub fn wfc_id(code: u16) -> Option<&'static str> {
    CATALOGUE
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, id)| *id)
}

/// An operation as WFC names endpoints: `GET:/books/{id}`.
fn endpoint(method: &str, path: &str) -> String {
    format!("{method}:{path}")
}

/// The report as a WFC report, created at `ended`.
pub fn render_wfc(report: &Report, ended: SystemTime) -> Value {
    let mut endpoints: Vec<String> = report
        .operations
        .iter()
        .map(|o| endpoint(&o.method, &o.path))
        .collect();
    let endpoint_of = |operation: &str| -> String {
        if let Some(o) = report.operations.iter().find(|o| o.operation == operation) {
            return endpoint(&o.method, &o.path);
        }
        // A method the description does not list: `PUT /notes/{id}`.
        match operation.split_once(' ') {
            Some((method, path)) if path.starts_with('/') => endpoint(method, path),
            _ => operation.to_string(),
        }
    };
    let search_case = "search".to_string();
    let mut test_cases = vec![json!({
        "id": search_case,
        "name": "the search (every exchange is in trace.ndjson)",
    })];
    let mut files: BTreeSet<String> = BTreeSet::new();
    let mut found = Vec::new();
    for f in &report.faults {
        let Some(code) = f.code.oracle().wfc else {
            continue;
        };
        let Some(id) = wfc_id(code) else { continue };
        let test_case = match &f.reproducer {
            Some(r) => {
                if files.insert(r.shell.clone()) {
                    test_cases.push(json!({
                        "id": r.shell,
                        "filePath": r.shell,
                        "name": format!("{} on {}", f.code, f.operation),
                    }));
                }
                r.shell.clone()
            }
            None => {
                let id = format!("fault {}", f.signature);
                test_cases.push(json!({
                    "id": id,
                    "name": format!("{} on {} (no reproducer: see report.json)", f.code, f.operation),
                }));
                id
            }
        };
        let operation = endpoint_of(&f.operation);
        if !endpoints.contains(&operation) {
            endpoints.push(operation.clone());
        }
        found.push(json!({
            "operationId": operation,
            "testCaseId": test_case,
            "faultCategories": [{"id": id, "code": code, "context": f.message}],
        }));
    }
    let covered: Vec<Value> = report
        .operations
        .iter()
        .filter(|o| !o.status_counts.is_empty())
        .map(|o| {
            let statuses: BTreeSet<u16> = o
                .status_counts
                .keys()
                .filter_map(|s| s.parse().ok())
                .filter(|s| *s <= 599)
                .collect();
            json!({
                "endpointId": endpoint(&o.method, &o.path),
                "testCaseId": search_case,
                "httpStatus": statuses,
            })
        })
        .collect();
    let output_calls: usize = report
        .faults
        .iter()
        .filter_map(|f| f.reproducer.as_ref())
        .map(|r| r.steps.len())
        .sum();
    json!({
        "schemaVersion": WFC_SCHEMA_VERSION,
        "toolName": "Cartograph",
        "toolVersion": env!("CARGO_PKG_VERSION"),
        "creationTime": humantime::format_rfc3339_seconds(ended).to_string(),
        "faults": {"totalNumber": found.len(), "foundFaults": found},
        "problemDetails": {"rest": {
            "outputHttpCalls": output_calls,
            "evaluatedHttpCalls": report.requests,
            "endpointIds": endpoints,
            "coveredHttpStatus": covered,
        }},
        "totalTests": test_cases.len(),
        "testFilePaths": files,
        "testCases": test_cases,
        "executionTimeInSeconds": report.elapsed_s.max(0.0).round() as u64,
        "warnings": report.warnings.iter().map(|w| json!({"message": w, "category": "run"})).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registry_code_is_in_the_catalogue() {
        for o in crate::oracles::registry::ORACLES {
            if let Some(code) = o.wfc {
                assert!(wfc_id(code).is_some(), "{}: WFC code {code}", o.code);
            }
        }
        assert_eq!(wfc_id(300), Some("SECURITY_SQL_INJECTION"));
        assert_eq!(wfc_id(310), Some("SECURITY_HIDDEN_ACCESSIBLE_ENDPOINT"));
    }
}
