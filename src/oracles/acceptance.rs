//! Answers to requests that should have been refused: a negative test's
//! input breaks a documented constraint, or its credentials are missing or
//! malformed where the operation requires them, and the server said 2xx.
//! Only requests a negative test marked ([`crate::execution::Breach`]) are
//! judged: what a request breaks is known exactly, never guessed.

use super::{FaultCheck, Found};
use crate::execution::{BreachKind, Exchange};
use crate::model::Operation;
use crate::model::security::requires_credentials;

/// The status of a 2xx answer to a request a negative test deliberately
/// made wrong, and what it broke (a label naming only what the request
/// carried: a change whose parent object was not there, or an input
/// shrinking cut, proves nothing).
fn accepted_breach(ex: &Exchange) -> Option<(&crate::execution::Breach, u16)> {
    let breach = ex.request.breach.as_ref()?;
    if !breach.carried_by(&ex.request) {
        return None;
    }
    let status = ex.status.filter(|s| (200..300).contains(s))?;
    Some((breach, status))
}

fn accepted(op: &Operation, message: String) -> Found {
    Found {
        check: Some(FaultCheck::Success),
        ..Found::new(&op.name, message, String::new())
    }
}

/// A request with no credentials, or malformed ones, to an operation that
/// requires them, answered 2xx.
pub fn ignored_auth(op: &Operation, ex: &Exchange) -> Option<Found> {
    let (breach, status) = accepted_breach(ex)?;
    let what = match breach.kind {
        BreachKind::NoCredentials => "no credentials",
        BreachKind::MalformedCredentials => "malformed credentials",
        _ => return None,
    };
    requires_credentials(&op.security).then(|| {
        accepted(
            op,
            format!(
                "the operation requires credentials ({}), and a request with {what} was answered {status}",
                schemes(op)
            ),
        )
    })
}

/// A request whose one wrong input the description forbids, answered 2xx.
pub fn invalid_input_accepted(op: &Operation, ex: &Exchange) -> Option<Found> {
    let (breach, status) = accepted_breach(ex)?;
    match breach.kind {
        // Credentials are `ignored_auth`'s.
        BreachKind::NoCredentials | BreachKind::MalformedCredentials => None,
        // A body the operation may go without can be ignored whole.
        BreachKind::MalformedBody if !op.request_body.as_ref().is_some_and(|b| b.required) => None,
        // One fault per operation (and status), whichever inputs it lets
        // through: the first one seen is its witness.
        kind if kind.forbidden() => Some(accepted(
            op,
            format!("{breach}, which the description forbids, was answered {status}"),
        )),
        _ => None,
    }
}

/// Whether an answer refuses a deliberately wrong or unusual request (a
/// 4xx) for an operation that documents no client error at all: a
/// description without any 4xx is a gap of the whole operation, not of this
/// answer (and refusing a number past the double range, say, is what most
/// servers do), so `undocumented_status` stays silent. An operation that
/// documents its refusals (400, say) and answers another (422) is still
/// reported.
pub fn rightly_refused(op: &Operation, ex: &Exchange) -> bool {
    let refused = ex.status.is_some_and(|s| (400..500).contains(&s));
    let documents_refusals = op
        .responses
        .keys()
        .any(|code| code.starts_with('4') || code == "default");
    refused && !documents_refusals && ex.request.breach.is_some()
}

fn schemes(op: &Operation) -> String {
    let alternatives: Vec<String> = op.security.iter().map(|alt| alt.join(" + ")).collect();
    alternatives.join(" or ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execution::{Breach, RequestSpec};
    use crate::oracles::Finding;

    fn api() -> crate::model::Api {
        crate::load::load_text(
            "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      operationId: locked\n      security: [{key: []}]\n      responses: {'200': {description: ok}}\n  /b:\n    get:\n      operationId: open\n      security: [{}, {key: []}]\n      responses: {'200': {description: ok}}\ncomponents:\n  securitySchemes:\n    key: {type: apiKey, in: header, name: X-Key}\n",
            std::path::Path::new("t.yaml"),
        )
        .unwrap()
        .api
    }

    /// Which of the two checks fires, by its row's code.
    fn check(op: &Operation, ex: &Exchange) -> Option<Finding> {
        use crate::oracles::registry::Code;
        (ignored_auth(op, ex).map(|f| f.stamped(Code::IgnoredAuth))).or_else(|| {
            invalid_input_accepted(op, ex).map(|f| f.stamped(Code::InvalidInputAccepted))
        })
    }

    fn answered(op: &str, status: u16, kind: BreachKind) -> Exchange {
        Exchange {
            request: RequestSpec {
                operation: op.into(),
                method: "GET".into(),
                path: "/a".into(),
                breach: Some(Breach {
                    input: "credentials key".into(),
                    kind,
                    class: None,
                }),
                ..Default::default()
            },
            status: Some(status),
            ..Default::default()
        }
    }

    #[test]
    fn only_a_2xx_to_a_deliberately_wrong_request_is_judged() {
        let api = api();
        let locked = &api.operations[0];
        let open = &api.operations[1];
        let code = |op, status, kind| {
            check(op, &answered(&op.name, status, kind)).map(|f| f.code.as_str())
        };
        assert_eq!(
            code(locked, 200, BreachKind::NoCredentials),
            Some("ignored_auth")
        );
        assert_eq!(
            code(locked, 200, BreachKind::MalformedCredentials),
            Some("ignored_auth")
        );
        assert_eq!(code(locked, 401, BreachKind::NoCredentials), None);
        // Anonymous calls are allowed: letting one in is right.
        assert_eq!(code(open, 200, BreachKind::NoCredentials), None);
        assert_eq!(
            code(open, 200, BreachKind::WrongType),
            Some("invalid_input_accepted")
        );
        assert_eq!(code(open, 400, BreachKind::WrongType), None);
        for kind in [
            BreachKind::Unusual,
            BreachKind::PatternMismatch,
            BreachKind::MalformedFormat,
            BreachKind::MissingWithDefault,
            BreachKind::WrongContentType,
        ] {
            assert_eq!(code(open, 200, kind), None, "{kind:?}");
        }
        let mut plain = answered("open", 200, BreachKind::WrongType);
        plain.request.breach = None;
        assert!(check(open, &plain).is_none(), "no breach, no judgement");
    }

    #[test]
    fn a_breach_the_request_did_not_carry_is_not_judged() {
        let api = api();
        let open = &api.operations[1];
        let mut ex = answered("open", 201, BreachKind::Null);
        ex.request.breach = Some(Breach {
            input: "body /permissions/read".into(),
            kind: BreachKind::Null,
            class: None,
        });
        ex.request.body = Some("{}".into());
        assert!(
            check(open, &ex).is_none(),
            "the body never held permissions.read"
        );
        ex.request.body = Some(r#"{"permissions":{"read":null}}"#.into());
        assert_eq!(
            check(open, &ex).map(|f| f.code.as_str()),
            Some("invalid_input_accepted")
        );
    }

    #[test]
    fn a_refusal_is_undocumented_only_where_refusals_are_documented() {
        let api = api();
        // `open` documents no 4xx: refusing a wrong input is right.
        assert!(rightly_refused(
            &api.operations[1],
            &answered("open", 422, BreachKind::WrongType)
        ));
        assert!(rightly_refused(
            &api.operations[1],
            &answered("open", 422, BreachKind::Unusual)
        ));
        // Without a breach, the request was meant to be right.
        let mut plain = answered("open", 422, BreachKind::Unusual);
        plain.request.breach = None;
        assert!(!rightly_refused(&api.operations[1], &plain));
    }
}
