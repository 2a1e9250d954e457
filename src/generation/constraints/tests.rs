//! Constraints read from descriptions and refusals of real frameworks
//! (Cornice, FastAPI/pydantic, Django REST framework, express-validator,
//! PowerDNS), and the values that keep them.

use serde_json::{Value, json};

use super::*;
use crate::model::{Api, Schema, SchemaType};

fn pairs(found: Vec<(Input, Rule, String)>) -> Vec<(Input, Rule)> {
    found.into_iter().map(|(i, r, _)| (i, r)).collect()
}

fn api() -> Api {
    crate::load::load_text(
        r#"openapi: 3.0.0
info: {title: t, version: '1'}
paths:
  /c/{id}:
    put:
      operationId: put
      parameters:
      - {name: id, in: path, required: true, schema: {type: string}}
      - {name: If-Match, in: header, schema: {type: string}}
      - {name: limit, in: query, schema: {type: string}}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                password: {type: string}
                user: {type: object, properties: {age: {type: integer}}}
      responses: {'200': {description: ok}}
"#,
        std::path::Path::new("t.yaml"),
    )
    .unwrap()
    .api
}

#[test]
fn cornice_pydantic_and_free_text_refusals_name_an_input_and_a_rule() {
    let api = api();
    let op = &api.operations[0];
    let kinto = json!({"code": 400, "message": "If-Match in header: The value should be integer between double quotes.",
        "details": [{"location": "header", "name": "If-Match", "description": "The value should be integer between double quotes."}]});
    assert_eq!(
        pairs(from_answer(&api, op, Some(&kinto), &kinto.to_string())),
        vec![(Input::Param(1), Rule::QuotedInteger)]
    );
    let fastapi = json!({"detail": [
        {"loc": ["query", "limit"], "type": "int_parsing", "msg": "Input should be a valid integer"},
        {"loc": ["body", "user", "age"], "type": "greater_than_equal", "msg": "…", "ctx": {"ge": 18}},
        {"loc": ["body", "password"], "type": "string_pattern_mismatch", "msg": "…", "ctx": {"pattern": "^[a-z]+[0-9]$"}}
    ]});
    assert_eq!(
        pairs(from_answer(&api, op, Some(&fastapi), "")),
        vec![
            (Input::Param(2), Rule::Integer),
            (
                Input::Field(vec!["user".into(), "age".into()]),
                Rule::Minimum(18.0)
            ),
            (
                Input::Field(vec!["password".into()]),
                Rule::Pattern("^[a-z]+[0-9]$".into())
            ),
        ]
    );
    let text = "Invalid request. password must be between 8 and 64 characters.";
    assert_eq!(
        pairs(from_answer(&api, op, None, text)),
        vec![
            (Input::Field(vec!["password".into()]), Rule::MinLength(8)),
            (Input::Field(vec!["password".into()]), Rule::MaxLength(64)),
        ]
    );
    // A sentence naming no input, or two, teaches nothing.
    assert!(from_answer(&api, op, None, "must be an integer").is_empty());
}

fn zones() -> Api {
    crate::load::load_text(
        r#"openapi: 3.0.0
info: {title: t, version: '1'}
paths:
  /servers/{server_id}/zones:
    post:
      operationId: createZone
      parameters:
      - {name: server_id, in: path, required: true, schema: {type: string}}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                name: {type: string}
                kind: {type: string}
                email: {type: string}
                url: {type: string}
                code: {type: string}
                password: {type: string}
      responses: {'201': {description: made}}
"#,
        std::path::Path::new("z.yaml"),
    )
    .unwrap()
    .api
}

fn field(name: &str) -> Input {
    Input::Field(vec![name.into()])
}

/// Messages as the frameworks write them by default (captured from
/// Django REST framework 3.16, pydantic 2.13 under FastAPI's `detail`,
/// express-validator 7), and as PowerDNS and others word theirs.
#[test]
fn real_frameworks_messages_name_an_input_and_a_rule() {
    let api = zones();
    let op = &api.operations[0];
    let read = |body: Value| pairs(from_answer(&api, op, Some(&body), &body.to_string()));
    let drf = json!({"name": ["Ensure this field has at least 3 characters."],
        "kind": ["\"x\" is not a valid choice."], "email": ["Enter a valid email address."],
        "url": ["Enter a valid URL."], "code": ["This value does not match the required pattern."]});
    assert_eq!(
        read(drf),
        vec![
            (field("name"), Rule::MinLength(3)),
            (field("email"), Rule::Format("email".into())),
            (field("url"), Rule::Format("uri".into())),
        ]
    );
    assert_eq!(
        read(json!({"name": ["Ensure this field has no more than 10 characters."]})),
        vec![(field("name"), Rule::MaxLength(10))]
    );
    assert_eq!(
        read(json!({"name": ["This field must be unique."]})),
        vec![(field("name"), Rule::Unique)]
    );
    assert_eq!(
        read(json!({"name": ["zone with this name already exists."]})),
        vec![(field("name"), Rule::Unique)]
    );
    let fastapi = json!({"detail": [
        {"type": "string_too_short", "loc": ["body", "name"], "msg": "String should have at least 3 characters", "input": "ab", "ctx": {"min_length": 3}},
        {"type": "literal_error", "loc": ["body", "kind"], "msg": "Input should be 'Native' or 'Master'", "input": "x", "ctx": {"expected": "'Native' or 'Master'"}},
        {"type": "value_error", "loc": ["body", "email"], "msg": "value is not a valid email address: An email address must have an @-sign.", "input": "no", "ctx": {"reason": "An email address must have an @-sign."}},
        {"type": "url_parsing", "loc": ["body", "url"], "msg": "Input should be a valid URL, relative URL without a base", "input": "nope", "ctx": {"error": "relative URL without a base"}},
        {"type": "string_pattern_mismatch", "loc": ["body", "code"], "msg": "String should match pattern '^[a-z]+\\.$'", "input": "abcd", "ctx": {"pattern": "^[a-z]+\\.$"}}
    ]});
    assert_eq!(
        read(fastapi),
        vec![
            (field("name"), Rule::MinLength(3)),
            (
                field("kind"),
                Rule::OneOf(vec![json!("Native"), json!("Master")])
            ),
            (field("email"), Rule::Format("email".into())),
            (field("url"), Rule::Format("uri".into())),
            (field("code"), Rule::Pattern("^[a-z]+\\.$".into())),
        ]
    );
    let express = json!({"errors": [
        {"type": "field", "value": "ab", "msg": "must be at least 3 chars long", "path": "name", "location": "body"},
        {"type": "field", "value": "x", "msg": "must be one of: Native, Master", "path": "kind", "location": "body"},
        {"type": "field", "value": "no", "msg": "Invalid value", "path": "email", "location": "body"}
    ]});
    assert_eq!(
        read(express),
        vec![
            (field("name"), Rule::MinLength(3)),
            (
                field("kind"),
                Rule::OneOf(vec![json!("Native"), json!("Master")])
            ),
        ]
    );
    // Free text naming one input: PowerDNS, and what other services say.
    for (text, input, rule) in [
        (
            json!({"error": "DNS Name 'dtE' is not canonical"}),
            "name",
            Rule::EndsWith(".".into()),
        ),
        (
            json!({"error": "name must end with a dot"}),
            "name",
            Rule::EndsWith(".".into()),
        ),
        (
            json!({"message": "The name should start with 'zz-'."}),
            "name",
            Rule::StartsWith("zz-".into()),
        ),
        (
            json!({"error": "database name must be at least 3 characters"}),
            "name",
            Rule::MinLength(3),
        ),
        (
            json!({"error": "\"kind\" must be one of [Native, Master]"}),
            "kind",
            Rule::OneOf(vec![json!("Native"), json!("Master")]),
        ),
    ] {
        assert_eq!(read(text.clone()), vec![(field(input), rule)], "{text}");
    }
    // Default messages that state no rule teach nothing.
    assert!(
        read(json!({"errors": [{"msg": "Invalid value", "path": "email", "location": "body"}]}))
            .is_empty()
    );
    assert!(read(json!({"error": "Conflict"})).is_empty());
}

#[test]
fn affixes_change_values_to_keep_them() {
    let mut rng = <crate::generation::values::Rng64 as rand::SeedableRng>::seed_from_u64(3);
    let mut affix = Affix::default();
    assert!(affix.add(&Rule::EndsWith(".".into())));
    assert!(!affix.add(&Rule::EndsWith(".".into())));
    let mut v = json!("example");
    affix.keep(&mut v, &mut rng);
    assert_eq!(v, json!("example."));
    affix.add(&Rule::Unique);
    let (mut a, mut b) = (json!("zone."), json!("zone."));
    affix.keep(&mut a, &mut rng);
    affix.keep(&mut b, &mut rng);
    assert_ne!(a, b, "a unique value is new every time");
    assert!(a.as_str().unwrap().starts_with("zone") && a.as_str().unwrap().ends_with('.'));
    let mut n = json!(5);
    affix.keep(&mut n, &mut rng);
    assert_eq!(n, json!(5));
}

#[test]
fn a_quoted_integer_rule_makes_values_that_keep_it() {
    let mut s = Schema::of_type(SchemaType::String);
    assert!(Rule::QuotedInteger.apply(&mut s));
    assert!(
        !Rule::QuotedInteger.apply(&mut s),
        "no change the second time"
    );
    let api = api();
    let mut rng = <crate::generation::values::Rng64 as rand::SeedableRng>::seed_from_u64(1);
    for _ in 0..20 {
        let v = crate::generation::values::value_for(&api, &s, &mut rng);
        let t = v.as_str().unwrap();
        assert!(
            t.len() >= 3 && t.starts_with('"') && t.ends_with('"'),
            "{t}"
        );
        assert!(t[1..t.len() - 1].bytes().all(|b| b.is_ascii_digit()), "{t}");
    }
}

#[test]
fn prefect_s_wrapped_pydantic_entries_and_the_characters_a_name_is_made_of() {
    let api = api();
    let op = &api.operations[0];
    // Prefect wraps FastAPI's entries as `exception_detail`, and says in
    // words which characters a block document's name takes.
    let prefect = json!({"exception_message": "Invalid request received.", "exception_detail": [
        {"type": "value_error", "loc": ["body", "password"],
         "msg": "Value error, Block document name must only contain lowercase letters, numbers, and dashes.",
         "input": "D8d3S1XYrjPz", "ctx": {"error": {}}}
    ], "request_body": {"password": "D8d3S1XYrjPz"}});
    assert_eq!(
        pairs(from_answer(&api, op, Some(&prefect), "")),
        vec![(field("password"), Rule::Pattern("^[a-z0-9-]+$".into()))]
    );
    for (text, pattern) in [
        (
            "Names may only contain letters, digits and underscores.",
            "^[a-zA-Z0-9_]+$",
        ),
        (
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
            "^[a-z0-9-]+$",
        ),
        (
            "The slug can contain only lowercase letters and dots.",
            "^[a-z.]+$",
        ),
    ] {
        assert_eq!(
            rules_in(text),
            vec![Rule::Pattern(pattern.into())],
            "{text}"
        );
        let re = regex::Regex::new(pattern).unwrap();
        assert!(!re.is_match("Mixed Case"));
    }
    // What a value must hold somewhere is not what it is made of.
    assert!(rules_in("The password must contain at least one digit.").is_empty());
}
