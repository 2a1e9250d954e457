//! The registry's guards (when an oracle's check applies to a REST answer)
//! and its REST checks (what each finds), which the rows of
//! [`ORACLES`](super::ORACLES) name.

use crate::execution::{Exchange, FailureKind};
use crate::model::Operation;
use crate::oracles::conformance::MediaGap;
use crate::oracles::leaks::Family;
use crate::oracles::{Answer, FaultCheck, Found, acceptance, stateful};

/// An answer the request itself does not explain ([`crate::oracles::explained`]:
/// a status an echo endpoint was asked for, a refusal of the request's own
/// oversized or route-changing value).
pub(super) fn unexplained(a: &Answer<'_>) -> bool {
    a.explained().is_none()
}

/// An answer of a known operation that is not a server error and not a 429
/// (an answer to our rate, not to the request), and that the request does
/// not explain: the description's promises apply to it.
pub(super) fn conformance_applies(a: &Answer<'_>) -> bool {
    a.op.is_some()
        && !crate::oracles::is_server_error(a.status)
        && a.status != 429
        && unexplained(a)
}

/// As [`conformance_applies`], the status is documented, and it is no
/// redirect (whose body is for people, and not the answer the operation
/// documents content for).
/// A whole, non-blank body whose own media type says JSON, of a status
/// that is not a server error nor 429.
pub(super) fn declared_json_applies(a: &Answer<'_>) -> bool {
    !crate::oracles::is_server_error(a.status)
        && a.status != 429
        && !a.ex.truncated
        && !a.ex.body.trim().is_empty()
        && a.ex.header("content-type").is_some_and(|c| {
            crate::oracles::conformance::is_json(&crate::oracles::conformance::essence_of(c))
        })
}

/// As [`conformance_applies`], and the status is documented.
pub(super) fn documented_applies(a: &Answer<'_>) -> bool {
    conformance_applies(a) && !(300..400).contains(&a.status) && a.documented().is_some()
}

/// As [`documented_applies`], and the body is of a documented media type.
pub(super) fn body_applies(a: &Answer<'_>) -> bool {
    documented_applies(a) && a.media().is_none()
}

pub(super) fn server_error(a: &Answer<'_>) -> Option<Found> {
    crate::oracles::is_server_error(a.status).then(|| {
        Found::new(
            a.operation(),
            format!("the server answered {}", a.status),
            String::new(),
        )
    })
}

pub(super) fn timeout(ex: &Exchange, op: Option<&Operation>) -> Option<Found> {
    let failure = ex.failure.as_ref()?;
    // Its time may have been another request's: blamed only on its own; and
    // a delay the request asked for is no timeout of the server.
    if failure.kind != FailureKind::Timeout
        || ex.behind_another
        || crate::oracles::explained::delay(op, ex).is_some()
    {
        return None;
    }
    // The limit that ran out, as given: the time measured is always a
    // little longer.
    let limit = failure.limit.unwrap_or(ex.elapsed);
    let seconds = limit.as_secs_f64().ceil().max(1.0) as u64;
    Some(Found {
        check: Some(FaultCheck::Timeout { seconds }),
        ..Found::new(
            &ex.request.operation,
            format!("no answer within {} (--timeout)", duration_text(limit)),
            String::new(),
        )
    })
}

/// `10 s`, `1.5 s`, `700 ms`: a duration as given, to the millisecond.
pub fn duration_text(d: std::time::Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        let text = format!("{:.3}", d.as_secs_f64());
        format!("{} s", text.trim_end_matches('0'))
    }
}

pub(super) fn no_answer(ex: &Exchange, _: Option<&Operation>) -> Option<Found> {
    let failure = ex.failure.as_ref()?;
    (failure.kind == FailureKind::NoAnswer).then(|| Found {
        check: Some(FaultCheck::NoAnswer),
        ..Found::new(
            &ex.request.operation,
            format!(
                "the server closed the connection without answering ({})",
                failure.message
            ),
            String::new(),
        )
    })
}

pub(super) fn invalid_http(ex: &Exchange, _: Option<&Operation>) -> Option<Found> {
    let failure = ex.failure.as_ref()?;
    (failure.kind == FailureKind::InvalidHttp).then(|| Found {
        check: Some(FaultCheck::InvalidHttp),
        ..Found::new(
            &ex.request.operation,
            format!("the answer is not valid HTTP: {}", failure.message),
            String::new(),
        )
    })
}

pub(super) fn invalid_json(a: &Answer<'_>) -> Option<Found> {
    if a.ex.json().is_some() || crate::oracles::conformance::parses_as_json(&a.ex.body) {
        return None;
    }
    let media = crate::oracles::conformance::essence(a.ex.header("content-type").unwrap_or(""));
    let start: String = a.ex.body.trim_start().chars().take(40).collect();
    Some(Found {
        check: Some(FaultCheck::NotJson { status: a.status }),
        ..Found::new(
            a.operation(),
            format!(
                "status {} says {media} but its body is not JSON (it begins {start:?})",
                a.status
            ),
            String::new(),
        )
    })
}

/// The leak of `family` a body shows.
pub fn leak(a: &Answer<'_>, family: Family) -> Option<Found> {
    let (_, what, marker) = a.leak().filter(|(f, ..)| *f == family)?;
    let status = a.status;
    Some(Found {
        check: Some(FaultCheck::BodyContains {
            status,
            text: marker.trim().to_string(),
        }),
        ..Found::new(
            a.operation(),
            format!("status {status} holds {what} ({:?})", marker.trim()),
            marker.trim().to_string(),
        )
    })
}

pub(super) fn ignored_auth(a: &Answer<'_>) -> Option<Found> {
    acceptance::ignored_auth(a.op?, a.ex)
}

pub(super) fn invalid_input_accepted(a: &Answer<'_>) -> Option<Found> {
    acceptance::invalid_input_accepted(a.op?, a.ex)
}

pub(super) fn undocumented_status(a: &Answer<'_>) -> Option<Found> {
    let op = a.op?;
    if a.documented().is_some() || acceptance::rightly_refused(op, a.ex) {
        return None;
    }
    let listed: Vec<&str> = op.responses.keys().map(String::as_str).collect();
    Some(Found::new(
        &op.name,
        format!(
            "status {} is not documented (documented: {})",
            a.status,
            listed.join(", ")
        ),
        String::new(),
    ))
}

pub(super) fn html_instead_of_json(a: &Answer<'_>) -> Option<Found> {
    let MediaGap::Html(message) = a.media()? else {
        return None;
    };
    Some(Found::new(a.operation(), message.clone(), String::new()))
}

pub(super) fn content_type_mismatch(a: &Answer<'_>) -> Option<Found> {
    let MediaGap::Other(message, media) = a.media()? else {
        return None;
    };
    Some(Found {
        check: Some(FaultCheck::ContentType {
            status: a.status,
            media: media.clone(),
        }),
        ..Found::new(a.operation(), message.clone(), media.clone())
    })
}

/// A 405 Method Not Allowed.
pub(super) fn method_refused(a: &Answer<'_>) -> bool {
    a.status == 405
}

pub(super) fn missing_allow(a: &Answer<'_>) -> Option<Found> {
    if a.ex.header("allow").is_some() {
        return None;
    }
    Some(Found {
        check: Some(FaultCheck::NoHeader {
            status: 405,
            name: "allow".into(),
        }),
        ..Found::new(
            a.operation(),
            format!(
                "{} {} answered 405 without an Allow header",
                a.ex.request.method, a.ex.request.path
            ),
            String::new(),
        )
    })
}

/// Whether a request's query names a field projection: `fields`,
/// `_fields`, `$select`, `select` or `only`, with a value.
pub(super) fn asks_for_some_fields(path: &str) -> bool {
    let Some((_, query)) = path.split_once('?') else {
        return false;
    };
    url::form_urlencoded::parse(query.as_bytes()).any(|(k, v)| {
        let k = k.trim_start_matches(['_', '$']).to_ascii_lowercase();
        matches!(k.as_str(), "fields" | "select" | "only") && !v.is_empty()
    })
}

pub(super) fn schema_violation(a: &Answer<'_>) -> Option<Found> {
    let index = a.op_index?;
    let body = a.ex.json()?;
    let status = a.status;
    let ct = a.ex.header("content-type");
    // A request that asks for some fields only (`?fields=a,b`, Kinto's
    // `_fields`, OData's `$select`) gets an answer without the others.
    let projected = asks_for_some_fields(&a.ex.request.path);
    let v = a
        .schemas()
        .check_text(a.api, index, status, ct, body, &a.ex.body)
        .into_iter()
        // A member left out of a projection, or a value the run planted,
        // is no violation of the server's.
        .find(|v| !((projected && v.keyword == "required") || a.echoes(v, body)))?;
    // Checked where the signature places it (`/*/price`: some item, as the
    // oracle judged the whole body), for what the schema says there.
    let at = v.location.clone();
    let check = match (v.keyword.as_str(), body.pointer(&v.pointer)) {
        // A `required` violation's pointer already names the missing member.
        ("required", _) => FaultCheck::JsonMissing {
            status,
            pointer: at,
        },
        ("type", Some(value)) => FaultCheck::JsonType {
            status,
            pointer: at,
            json_type: crate::oracles::pointer::kind(value).to_string(),
            allowed: v.expected.clone(),
        },
        (_, Some(value)) => FaultCheck::JsonValue {
            status,
            pointer: at,
            value: value.clone(),
        },
        (_, None) => FaultCheck::Status { status },
    };
    let place = v.schema.as_ref().map(|schema| match v.keyword.as_str() {
        // The member the list names, as written in the description.
        "required" => {
            let name = v.pointer.rsplit('/').next().unwrap_or("");
            let name = name.replace("~1", "/").replace("~0", "~");
            format!("{schema}: required {name:?}")
        }
        keyword => format!("{schema}: {keyword}"),
    });
    // A description that marks nothing nullable misses it everywhere the
    // server answers null: one gap, whichever places showed it.
    let null = body
        .pointer(&v.pointer)
        .is_some_and(serde_json::Value::is_null);
    let drift = (null
        && matches!(v.keyword.as_str(), "type" | "enum" | "anyOf" | "oneOf")
        && !a.marks_nullable())
    .then_some("null where the description marks no schema nullable");
    Some(Found {
        check: Some(check),
        place,
        drift,
        ..Found::new(
            a.operation(),
            v.message.clone(),
            format!("{} {}", v.location, v.keyword),
        )
    })
}

pub(super) fn use_after_delete(a: &Answer<'_>) -> Option<Found> {
    a.with_sequence(stateful::use_after_delete)
}

pub(super) fn created_not_readable(a: &Answer<'_>) -> Option<Found> {
    a.with_sequence(stateful::created_not_readable)
}

pub(super) fn dangling_location(a: &Answer<'_>) -> Option<Found> {
    a.with_sequence(stateful::dangling_location)
}

pub(super) fn non_idempotent(a: &Answer<'_>) -> Option<Found> {
    a.with_sequence(stateful::non_idempotent)
}

pub(super) fn other_identity_write(a: &Answer<'_>) -> Option<Found> {
    crate::oracles::identities::other_identity_write(a.ex, a.earlier, a.main_identity())
}

pub(super) fn anonymous_modification(a: &Answer<'_>) -> Option<Found> {
    crate::oracles::identities::anonymous_modification(a.op?, a.ex)
}

pub(super) fn existence_leak(a: &Answer<'_>) -> Option<Found> {
    crate::oracles::identities::existence_leak(a.ex, a.earlier, a.main_identity())
}

pub(super) fn valid_credentials_told_401(a: &Answer<'_>) -> Option<Found> {
    crate::oracles::identities::valid_credentials_told_401(a.ex, a.earlier, a.main_identity())
}

pub(super) fn other_identity_read(a: &Answer<'_>) -> Option<Found> {
    crate::oracles::identities::other_identity_read(a.ex, a.earlier, a.main_identity())
}
