//! The GraphQL rows' functions: how a script tells that a fault each row's
//! walk reported showed in an answer ([`GraphqlJudge::Walk`](super::GraphqlJudge::Walk)).

use serde_json::Value;

use crate::execution::Exchange;
use crate::oracles::graphql::{Evidence, GraphqlFinding, NULL_REPORT_WORDING, error_check};
use crate::oracles::{FaultCheck, json_type, leaks, pointer};

fn status(ex: &Exchange) -> u16 {
    ex.status.unwrap_or(0)
}

pub(super) fn gq_server_error(_: &GraphqlFinding, _: &Exchange) -> Option<FaultCheck> {
    Some(FaultCheck::ServerError)
}

/// The marker of the leak the body shows.
pub(super) fn gq_leak(_: &GraphqlFinding, ex: &Exchange) -> Option<FaultCheck> {
    leaks::find(&ex.body).map(|(_, _, marker)| FaultCheck::BodyContains {
        status: status(ex),
        text: marker.trim().to_string(),
    })
}

/// What made the rules judge the `errors` entry an internal failure, at its
/// path: a server answering 200 to everything, or data there, does not pass
/// for the fault.
pub(super) fn gq_internal_error(f: &GraphqlFinding, ex: &Exchange) -> Option<FaultCheck> {
    error_check(ex.json(), Evidence::Internal, &f.path, status(ex))
}

/// What made the rules judge the `errors` entry a refusal of the query.
pub(super) fn gq_validation_error(f: &GraphqlFinding, ex: &Exchange) -> Option<FaultCheck> {
    error_check(ex.json(), Evidence::Validation, &f.path, status(ex))
}

/// The server's own report of a null it could not return, or the null
/// where the walk found it (a null parent is not a null field: nothing is
/// there under it).
pub(super) fn gq_null_violation(f: &GraphqlFinding, ex: &Exchange) -> Option<FaultCheck> {
    let status = status(ex);
    if f.message.starts_with("errors[") {
        if let Some(check) = error_check(ex.json(), Evidence::NullReport, &f.path, status) {
            return Some(check);
        }
        let lower = ex.body.to_lowercase();
        return NULL_REPORT_WORDING.iter().find_map(|w| {
            // Byte offsets of the lower-cased text match the original's
            // for these ASCII phrases only when nothing before them
            // changed length.
            let at = lower.find(w)?;
            let text = ex.body.get(at..at + w.len())?;
            (text.to_lowercase() == *w).then(|| FaultCheck::BodyContains {
                status,
                text: text.to_string(),
            })
        });
    }
    let pointer = if f.message.starts_with("`data` is null") {
        "/data".to_string()
    } else if f.path.starts_with("data") {
        pointer::from_graphql_path(&f.path)
    } else {
        return None;
    };
    Some(FaultCheck::JsonValue {
        status,
        pointer,
        value: Value::Null,
    })
}

/// The very value the walk found wrong, where it found it.
pub(super) fn gq_value_seen(f: &GraphqlFinding, ex: &Exchange) -> Option<FaultCheck> {
    if !f.path.starts_with("data") {
        return None;
    }
    let pointer = pointer::from_graphql_path(&f.path);
    match f.seen.clone()? {
        v @ (Value::Array(_) | Value::Object(_)) => Some(FaultCheck::JsonType {
            status: status(ex),
            pointer,
            json_type: json_type(&v).to_string(),
            allowed: Vec::new(),
        }),
        value => Some(FaultCheck::JsonValue {
            status: status(ex),
            pointer,
            value,
        }),
    }
}

/// The field missing where the walk looked for it.
pub(super) fn gq_missing_field(f: &GraphqlFinding, ex: &Exchange) -> Option<FaultCheck> {
    gq_value_seen(f, ex).or_else(|| {
        f.path
            .starts_with("data.")
            .then(|| FaultCheck::JsonMissing {
                status: status(ex),
                pointer: pointer::from_graphql_path(&f.path),
            })
    })
}

/// A kind `errors` may not be, an entry that is not an object, or a
/// `message` that is missing or not a string.
pub(super) fn gq_malformed_errors(f: &GraphqlFinding, ex: &Exchange) -> Option<FaultCheck> {
    if let Some(check) = gq_value_seen(f, ex) {
        return Some(check);
    }
    let status = status(ex);
    let kind_check = |pointer: &str, v: &Value, allowed: &str| FaultCheck::JsonType {
        status,
        pointer: pointer.into(),
        json_type: pointer::kind(v).to_string(),
        allowed: vec![allowed.into()],
    };
    let errors = ex.json()?.get("errors")?;
    let Value::Array(items) = errors else {
        return Some(kind_check("/errors", errors, "array"));
    };
    if let Some(bad) = items.iter().find(|e| !e.is_object()) {
        return Some(kind_check("/errors/*", bad, "object"));
    }
    let messages: Vec<Option<&Value>> = items.iter().map(|e| e.get("message")).collect();
    if let Some(bad) = messages.iter().flatten().find(|m| !m.is_string()) {
        return Some(kind_check("/errors/*/message", bad, "string"));
    }
    messages.contains(&None).then(|| FaultCheck::JsonMissing {
        status,
        pointer: "/errors/*/message".into(),
    })
}
