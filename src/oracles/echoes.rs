//! Values the run itself planted: a negative test's body member that the
//! description forbids and the server accepted (2xx). A server that
//! validates nothing stores `{"title": 123}` and serves it back on every
//! later read; each of those answers breaks the response schema, yet the
//! fault is the one `invalid_input_accepted` already reports. Counting the
//! echoes as `schema_violation` too would file one missing check as many
//! conformance causes, and the spec fixes would loosen the description to
//! fit the run's own garbage ([`Echoes`]).

use std::collections::HashSet;

use serde_json::Value;

use super::schema::Violation;
use crate::execution::Exchange;

/// Planted values kept at most: a run's accepted wrong inputs repeat, and
/// a bound keeps a hostile server from growing the set without end.
const MAX_PLANTED: usize = 20_000;

/// The body members the run's accepted wrong inputs set (or left out), by
/// pointer, with the value sent.
#[derive(Debug, Default, Clone)]
pub struct Echoes {
    planted: HashSet<(String, Option<String>)>,
}

impl Echoes {
    /// None planted yet.
    pub fn new() -> Echoes {
        Echoes::default()
    }

    /// Keeps what `ex` planted, if it is a wrong body member the server
    /// accepted.
    pub fn note(&mut self, ex: &Exchange) {
        if self.planted.len() < MAX_PLANTED
            && let Some(planted) = planted(ex)
        {
            self.planted.insert(planted);
        }
    }

    /// Whether `v`, a violation of the answer `body`, shows back what the
    /// run planted: now, in an earlier exchange of the same test
    /// (`test`, the answer's own last), or in an earlier test.
    pub fn explain(&self, test: &[&Exchange], v: &Violation, body: &Value) -> bool {
        // A left-out member shows as `required` naming it; any other
        // keyword shows the value itself.
        let seen = if v.keyword == "required" {
            None
        } else {
            match body.pointer(&v.pointer) {
                Some(value) => Some(value.to_string()),
                None => return false,
            }
        };
        // The answer wraps members its own way (`/0/title`, `/data/title`
        // for `/title`): every tail of the pointer may be the member.
        let tails: Vec<(String, Option<String>)> = v
            .pointer
            .match_indices('/')
            .map(|(i, _)| (v.pointer[i..].to_string(), seen.clone()))
            .collect();
        tails.iter().any(|t| self.planted.contains(t))
            || test
                .iter()
                .filter_map(|ex| planted(ex))
                .any(|p| tails.contains(&p))
    }
}

/// What `ex` planted: the pointer of the wrong body member it sent and was
/// answered 2xx for, with the value sent (none when it was left out).
fn planted(ex: &Exchange) -> Option<(String, Option<String>)> {
    let breach = ex.request.breach.as_ref()?;
    if !breach.kind.forbidden() || !ex.status.is_some_and(|s| (200..300).contains(&s)) {
        return None;
    }
    let at = breach.body_pointer()?;
    let body: Value = serde_json::from_str(ex.request.body.as_deref()?).ok()?;
    let value = body.pointer(&at).map(Value::to_string);
    // A member the body was to leave out but carries planted nothing.
    if (breach.kind == crate::execution::BreachKind::Missing) != value.is_none() {
        return None;
    }
    Some((at, value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execution::{Breach, BreachKind, RequestSpec};

    fn sent(body: &str, input: &str, kind: BreachKind, status: u16) -> Exchange {
        Exchange {
            request: RequestSpec {
                operation: "createPost".into(),
                method: "POST".into(),
                path: "/posts".into(),
                body: Some(body.into()),
                breach: Some(Breach {
                    input: input.into(),
                    kind,
                }),
                ..Default::default()
            },
            status: Some(status),
            ..Default::default()
        }
    }

    fn violation(pointer: &str, keyword: &str) -> Violation {
        Violation {
            pointer: pointer.into(),
            location: pointer.into(),
            keyword: keyword.into(),
            message: String::new(),
            expected: Vec::new(),
            schema: None,
        }
    }

    #[test]
    fn an_accepted_wrong_value_served_back_is_an_echo() {
        let mut echoes = Echoes::new();
        echoes.note(&sent(
            r#"{"title":123,"views":1}"#,
            "body /title",
            BreachKind::WrongType,
            201,
        ));
        let list = serde_json::json!([{"title": "a"}, {"title": 123}, {"title": 124}]);
        assert!(echoes.explain(&[], &violation("/1/title", "type"), &list));
        // Another value at the member is the server's own.
        assert!(!echoes.explain(&[], &violation("/2/title", "type"), &list));
        // The value at another member is too.
        let other = serde_json::json!({"subtitle": 123});
        assert!(!echoes.explain(&[], &violation("/subtitle", "type"), &other));
    }

    #[test]
    fn only_a_2xx_to_a_forbidden_body_member_plants_anything() {
        let mut echoes = Echoes::new();
        echoes.note(&sent(
            r#"{"title":123}"#,
            "body /title",
            BreachKind::WrongType,
            400,
        ));
        echoes.note(&sent(
            r#"{"title":"%s"}"#,
            "body /title",
            BreachKind::Unusual,
            201,
        ));
        echoes.note(&sent(
            r#"{"id":"x"}"#,
            "path id",
            BreachKind::WrongType,
            200,
        ));
        let body = serde_json::json!({"title": 123});
        assert!(!echoes.explain(&[], &violation("/title", "type"), &body));
        let body = serde_json::json!({"title": "%s"});
        assert!(!echoes.explain(&[], &violation("/title", "pattern"), &body));
    }

    #[test]
    fn a_left_out_member_explains_its_absence_and_the_test_counts_at_once() {
        let missing = sent(r#"{"body":"b"}"#, "body /title", BreachKind::Missing, 201);
        let body = serde_json::json!({"id": 1, "body": "b"});
        let echoes = Echoes::new();
        assert!(echoes.explain(&[&missing], &violation("/title", "required"), &body));
        assert!(!echoes.explain(&[&missing], &violation("/body", "required"), &body));
        assert!(!echoes.explain(&[], &violation("/title", "required"), &body));
        // A body meant to leave the member out that still carries it.
        let carried = sent(r#"{"title":"t"}"#, "body /title", BreachKind::Missing, 201);
        assert!(!echoes.explain(&[&carried], &violation("/title", "required"), &body));
    }

    #[test]
    fn the_checker_reports_no_echo_and_the_first_real_violation_still() {
        let spec = "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /posts:\n    post:\n      operationId: createPost\n      requestBody: {required: true, content: {application/json: {schema: {$ref: '#/components/schemas/Post'}}}}\n      responses: {'201': {description: ok, content: {application/json: {schema: {$ref: '#/components/schemas/Post'}}}}}\n    get:\n      operationId: listPosts\n      responses: {'200': {description: ok, content: {application/json: {schema: {type: array, items: {$ref: '#/components/schemas/Post'}}}}}}\ncomponents:\n  schemas:\n    Post:\n      type: object\n      required: [title]\n      properties: {title: {type: string}, views: {type: integer}}\n";
        let api = crate::load::load_text(spec, std::path::Path::new("t.yaml"))
            .unwrap()
            .api;
        let checker = super::super::Checker::new(&api, Vec::new(), None);
        let answered = |mut ex: Exchange, body: &str| {
            ex.headers = vec![("content-type".into(), "application/json".into())];
            ex.body = body.into();
            ex
        };
        let create = answered(
            sent(
                r#"{"title":123}"#,
                "body /title",
                BreachKind::WrongType,
                201,
            ),
            r#"{"id":1,"title":123}"#,
        );
        let codes = |findings: Vec<Vec<super::super::Finding>>| -> Vec<&str> {
            findings.concat().iter().map(|f| f.code).collect()
        };
        assert_eq!(
            codes(checker.test(&api, std::slice::from_ref(&create))),
            ["invalid_input_accepted"]
        );
        let listed = |body: &str| {
            let list = Exchange {
                request: RequestSpec {
                    operation: "listPosts".into(),
                    method: "GET".into(),
                    path: "/posts".into(),
                    ..Default::default()
                },
                status: Some(200),
                ..Default::default()
            };
            answered(list, body)
        };
        let list = listed(r#"[{"title":"a"},{"title":123}]"#);
        let mut echoes = Echoes::new();
        echoes.note(&create);
        assert!(codes(checker.test_after(&api, std::slice::from_ref(&list), &echoes)).is_empty());
        // Without the run's memory the same answer is a violation…
        assert_eq!(
            codes(checker.test(&api, std::slice::from_ref(&list))),
            ["schema_violation"]
        );
        // …and a real violation beside an echo is still reported.
        let list = listed(r#"[{"title":123},{"title":"b","views":"many"}]"#);
        let found = checker.test_after(&api, std::slice::from_ref(&list), &echoes);
        assert_eq!(found.concat().len(), 1);
        assert!(
            found[0][0].detail.contains("/*/views type"),
            "{:?}",
            found[0][0]
        );
    }
}
