//! The spec fixes, cause by cause and dialect by dialect: answers are judged
//! by the real checks, grouped into causes, the overlay is written, read
//! back from its YAML, applied, and the same answers judged again against
//! the patched description.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Value, json};

use super::*;
use crate::execution::{Breach, BreachKind, Exchange, RequestSpec};
use crate::faults::{Faults, causes, witness::Ledger};
use crate::model::Api;
use crate::oracles::Checker;

/// One answer: operation, method, path, status, media type, body.
type Answer<'a> = (&'a str, &'a str, &'a str, u16, &'a str, &'a str);

fn exchange(seq: u64, (op, method, path, status, media, body): Answer<'_>) -> Exchange {
    Exchange {
        seq,
        request: RequestSpec {
            operation: op.into(),
            method: method.into(),
            path: path.into(),
            ..Default::default()
        },
        status: Some(status),
        headers: if media.is_empty() {
            Vec::new()
        } else {
            vec![("content-type".into(), media.into())]
        },
        body: body.into(),
        ..Default::default()
    }
}

fn load(text: &str, name: &str) -> Api {
    let loaded = crate::load::load_text(text, Path::new(name)).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    loaded.api
}

/// What a run of `answers` against `spec` finds: (code, title) per cause.
fn judge(api: &Api, exchanges: &[Exchange]) -> (Faults, Vec<causes::Cause>) {
    let checker = Checker::new(api, Vec::new(), None);
    let mut faults = Faults::new();
    let ledger = Ledger::new();
    for ex in exchanges {
        let findings = checker.test(api, std::slice::from_ref(ex));
        faults.record(std::slice::from_ref(ex), &findings, &ledger);
    }
    let all = faults.faults();
    let causes = causes::group(&all);
    (faults, causes)
}

struct Outcome {
    fixes: SpecFixes,
    overlay: Value,
    /// Causes before, and after the overlay was applied.
    before: Vec<causes::Cause>,
    after: Vec<causes::Cause>,
    patched: Value,
}

impl Outcome {
    fn actions(&self) -> &[Value] {
        self.overlay["actions"]
            .as_array()
            .map_or(&[], Vec::as_slice)
    }

    /// The actions of the cause of `code` whose title (or one of whose
    /// places) contains `title`.
    fn of(&self, code: &str, title: &str) -> Vec<&Value> {
        let cause = self
            .before
            .iter()
            .find(|c| {
                c.code.as_str() == code
                    && (c.title.contains(title) || c.places.iter().any(|p| p.contains(title)))
            })
            .unwrap_or_else(|| panic!("no {code} cause {title:?} in {:#?}", self.before));
        self.actions()
            .iter()
            .filter(|a| a["x-cartograph-cause"] == json!(cause.id))
            .collect()
    }

    fn targets(&self, code: &str, title: &str) -> Vec<String> {
        self.of(code, title)
            .iter()
            .map(|a| a["target"].as_str().unwrap().to_string())
            .collect()
    }
}

/// Judges `answers` against `spec`, writes the overlay, applies it as read
/// back from its YAML, and judges the same answers again.
fn fix(spec: &str, name: &str, answers: &[Answer<'_>]) -> Outcome {
    let api = load(spec, name);
    let exchanges: Vec<Exchange> = answers
        .iter()
        .enumerate()
        .map(|(i, a)| exchange(i as u64, *a))
        .collect();
    let (faults, before) = judge(&api, &exchanges);
    let mut kept: HashMap<String, Vec<Exchange>> = HashMap::new();
    for k in faults.kept() {
        kept.insert(
            k.fault.signature.clone(),
            vec![k.witness.last().unwrap().clone()],
        );
    }
    let report_faults = faults.faults();
    let checker = Checker::new(&api, Vec::new(), None);
    let seen = Seen {
        api: &api,
        faults: &report_faults,
        answers: &kept,
        checker: &checker,
    };
    let fixes = spec_fixes(&seen, &before, Some("../api.yaml"), &Secrets::new());
    let text = fixes.text.clone().unwrap_or_default();
    let overlay = if text.is_empty() {
        Value::Null
    } else {
        crate::load::parse_text(&text, Path::new("o.yaml")).unwrap()
    };
    let mut patched = api.document.as_ref().unwrap().root().clone();
    if let Some(actions) = overlay["actions"].as_array() {
        edit::apply(&mut patched, actions);
    }
    let patched_api = load(&serde_json::to_string(&patched).unwrap(), "patched.json");
    let again: Vec<Exchange> = answers
        .iter()
        .enumerate()
        .map(|(i, a)| exchange(i as u64, *a))
        .collect();
    let (_, after) = judge(&patched_api, &again);
    Outcome {
        fixes,
        overlay,
        before,
        after,
        patched,
    }
}

const BOOK: &str = r#"{"id":1,"title":"T","isbn":"x","price":2.5,"status":"available","author":{"name":"A"},"o'neil":3}"#;

fn book(change: &str) -> String {
    let mut b: Value = serde_json::from_str(BOOK).unwrap();
    let c: Value = serde_json::from_str(change).unwrap();
    for (k, v) in c.as_object().unwrap() {
        if v == &json!("<absent>") {
            b.as_object_mut().unwrap().remove(k);
        } else {
            b[k] = v.clone();
        }
    }
    b.to_string()
}

const SWAGGER2: &str = r##"
swagger: "2.0"
info: {title: Books, version: "1"}
produces: [application/json]
paths:
  /books/{id}/:
    get:
      operationId: getBook
      parameters: [{name: id, in: path, required: true, type: integer}]
      responses:
        200: {description: ok, schema: {$ref: "#/definitions/Book"}}
  /books:
    get:
      operationId: listBooks
      responses:
        200: {description: ok, schema: {type: array, items: {$ref: "#/definitions/Book"}}}
definitions:
  Book:
    type: object
    required: [id, title, isbn]
    properties:
      id: {type: integer}
      title: {type: string}
      isbn: {type: string}
      price: {type: number}
      status: {type: string, enum: [available, sold]}
      author: {$ref: "#/definitions/Author"}
      "o'neil": {type: integer, maximum: 10}
  Author: {type: object, properties: {name: {type: string}}}
"##;

/// The answers every dialect's test judges: one broken thing each.
fn book_answers() -> Vec<(String, String, String, u16, String, String)> {
    let one = |op: &str, path: &str, body: String| {
        let body = if op == "listBooks" {
            format!("[{}]", body)
        } else {
            body
        };
        (
            op.to_string(),
            "GET".to_string(),
            path.to_string(),
            200,
            "application/json".to_string(),
            body,
        )
    };
    vec![
        one("getBook", "/books/1/", book(r#"{"isbn":"<absent>"}"#)),
        one("listBooks", "/books", book(r#"{"isbn":"<absent>"}"#)),
        one("listBooks", "/books", book(r#"{"price":null}"#)),
        one("getBook", "/books/2/", book(r#"{"price":null}"#)),
        one("getBook", "/books/3/", book(r#"{"status":"archived"}"#)),
        one("listBooks", "/books", book(r#"{"author":null}"#)),
        one("getBook", "/books/4/", book(r#"{"o'neil":12}"#)),
        one("getBook", "/books/5/", book(r#"{"id":"7"}"#)),
        (
            "getBook".into(),
            "GET".into(),
            "/books/9/".into(),
            404,
            "application/json".into(),
            r#"{"error":"no book 9","code":404}"#.into(),
        ),
        (
            "listBooks".into(),
            "GET".into(),
            "/books".into(),
            200,
            "text/plain".into(),
            "hello".into(),
        ),
        (
            "listBooks".into(),
            "GET".into(),
            "/books".into(),
            500,
            "application/json".into(),
            r#"{"error":"boom"}"#.into(),
        ),
    ]
}

fn run_books(spec: &str, name: &str) -> Outcome {
    let owned = book_answers();
    let answers: Vec<Answer<'_>> = owned
        .iter()
        .map(|(a, b, c, d, e, f)| {
            (
                a.as_str(),
                b.as_str(),
                c.as_str(),
                *d,
                e.as_str(),
                f.as_str(),
            )
        })
        .collect();
    fix(spec, name, &answers)
}

/// What every dialect shares: one cause per broken place whichever
/// operation showed it, every conformance cause settled, defects untouched.
fn common(o: &Outcome) {
    let codes = |causes: &[causes::Cause]| -> Vec<String> {
        causes
            .iter()
            .map(|c| format!("{} {}", c.code, c.title))
            .collect()
    };
    // A missing isbn and a null price, each seen under two operations.
    let required: Vec<_> = o
        .before
        .iter()
        .filter(|c| c.title.contains("required \"isbn\""))
        .collect();
    assert_eq!(required.len(), 1, "{:#?}", codes(&o.before));
    assert_eq!(required[0].operations, ["getBook", "listBooks"]);
    // The description marks nothing nullable: the null price is one gap of
    // the whole description, listing its places; the overlay still fixes
    // each place (nothing but the defect is left after).
    let price: Vec<_> = o
        .before
        .iter()
        .filter(|c| c.places.iter().any(|p| p.ends_with("/price: type")))
        .collect();
    assert_eq!(price.len(), 1, "{:#?}", codes(&o.before));
    assert!(
        price[0]
            .title
            .ends_with("null where the description marks no schema nullable"),
        "{}",
        price[0].title
    );
    assert_eq!(price[0].operations.len(), 2);
    assert_eq!(o.fixes.conformance, o.before.len() - 1);
    assert!(o.fixes.unsettled.is_empty(), "{:?}", o.fixes.unsettled);
    // Only the defect is left, and it is in no action.
    assert_eq!(codes(&o.after).len(), 1, "{:#?}", codes(&o.after));
    assert_eq!(o.after[0].code.as_str(), "server_error");
    assert!(o.of("server_error", "").is_empty());
    // The path key is kept as written, trailing slash and braces.
    assert_eq!(
        o.targets("undocumented_status", ""),
        ["$['paths']['/books/{id}/']['get']['responses']"]
    );
}

#[test]
fn swagger_2_actions_use_its_own_words() {
    let o = run_books(SWAGGER2, "api.yaml");
    common(&o);
    let d = &o.patched["definitions"];
    assert_eq!(d["Book"]["required"], json!(["id", "title"]));
    assert_eq!(
        o.targets("schema_violation", "required"),
        ["$['definitions']['Book']['required'][?(@ == 'isbn')]"]
    );
    assert_eq!(d["Book"]["properties"]["price"]["x-nullable"], json!(true));
    assert_eq!(
        d["Book"]["properties"]["author"],
        json!({"allOf": [{"$ref": "#/definitions/Author"}], "x-nullable": true})
    );
    assert_eq!(
        d["Book"]["properties"]["status"]["enum"],
        json!(["available", "sold", "archived"])
    );
    assert_eq!(d["Book"]["properties"]["o'neil"]["maximum"], json!(12));
    assert_eq!(
        o.targets("schema_violation", "o'neil"),
        [r#"$['definitions']['Book']['properties']["o'neil"]"#]
    );
    // "7" for an integer id: Swagger 2 has no alternatives, the type is left open.
    assert_eq!(d["Book"]["properties"]["id"], json!({}));
    let get = &o.patched["paths"]["/books/{id}/"]["get"];
    assert_eq!(
        get["responses"]["404"],
        json!({"description": "Not Found (as the server answers it)", "schema": {"type": "object", "properties": {"error": {"type": "string"}, "code": {"type": "integer"}}}})
    );
    // The operation's list replaces the document's: both are listed.
    assert_eq!(
        o.patched["paths"]["/books"]["get"]["produces"],
        json!(["application/json", "text/plain"])
    );
    assert!(o.overlay["extends"] == json!("../api.yaml"));
}

fn openapi(version: &str) -> String {
    format!(
        r##"
openapi: {version}
info: {{title: Books, version: "1"}}
paths:
  /books/{{id}}/:
    get:
      operationId: getBook
      parameters: [{{name: id, in: path, required: true, schema: {{type: integer}}}}]
      responses:
        "200": {{description: ok, content: {{application/json: {{schema: {{$ref: "#/components/schemas/Book"}}}}}}}}
  /books:
    get:
      operationId: listBooks
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {{type: array, items: {{$ref: "#/components/schemas/Book"}}}}
components:
  schemas:
    Book:
      allOf:
        - $ref: "#/components/schemas/Base"
        - type: object
          required: [title, isbn]
          properties:
            title: {{type: string}}
            isbn: {{type: string}}
            price: {{type: number}}
            status: {{type: string, enum: [available, sold]}}
            author: {{$ref: "#/components/schemas/Author"}}
            "o'neil": {{type: integer, maximum: 10}}
    Base: {{type: object, required: [id], properties: {{id: {{type: integer}}}}}}
    Author: {{type: object, properties: {{name: {{type: string}}}}}}
"##
    )
}

#[test]
fn openapi_3_0_actions_reach_into_all_of_members() {
    let o = run_books(&openapi("3.0.3"), "api.yaml");
    common(&o);
    let book = &o.patched["components"]["schemas"]["Book"]["allOf"][1];
    assert_eq!(book["required"], json!(["title"]));
    assert_eq!(book["properties"]["price"]["nullable"], json!(true));
    assert_eq!(
        book["properties"]["author"],
        json!({"allOf": [{"$ref": "#/components/schemas/Author"}], "nullable": true})
    );
    assert_eq!(
        book["properties"]["status"]["enum"],
        json!(["available", "sold", "archived"])
    );
    // The id is in the referenced Base: "7" adds a string alternative there.
    assert_eq!(
        o.patched["components"]["schemas"]["Base"]["properties"]["id"],
        json!({"anyOf": [{"type": "integer"}, {"type": "string"}]})
    );
    // Inside an allOf member: the item is removed by a filter.
    assert_eq!(
        o.targets("schema_violation", "required \"isbn\""),
        ["$['components']['schemas']['Book']['allOf'][1]['required'][?(@ == 'isbn')]"]
    );
    for t in o.targets("schema_violation", "/price: type") {
        assert!(!t.ends_with("[1]"), "no update selects an array item: {t}");
    }
    assert_eq!(
        o.patched["paths"]["/books"]["get"]["responses"]["200"]["content"]["text/plain"],
        json!({"schema": {"type": "string"}})
    );
}

#[test]
fn openapi_3_1_actions_list_types() {
    let o = run_books(&openapi("3.1.0"), "api.yaml");
    common(&o);
    let book = &o.patched["components"]["schemas"]["Book"]["allOf"][1];
    assert_eq!(
        book["properties"]["price"]["type"],
        json!(["number", "null"])
    );
    assert_eq!(
        book["properties"]["author"],
        json!({"anyOf": [{"$ref": "#/components/schemas/Author"}, {"type": "null"}]})
    );
    assert_eq!(
        o.patched["components"]["schemas"]["Base"]["properties"]["id"]["type"],
        json!(["integer", "string"])
    );
    let nf = &o.patched["paths"]["/books/{id}/"]["get"]["responses"]["404"];
    assert_eq!(
        nf["content"]["application/json"]["schema"]["properties"]["code"],
        json!({"type": "integer"})
    );
}

const SHARED: &str = r##"
openapi: 3.0.3
info: {title: Shared, version: "1"}
paths:
  /a:
    get:
      operationId: getA
      responses:
        "200": {description: ok, content: {application/json: {schema: {type: object, properties: {n: {type: integer, minimum: 5, exclusiveMinimum: true}}}}}}
        "404": {$ref: "#/components/responses/NotFound"}
  /b:
    get:
      operationId: getB
      responses:
        "200": {description: ok, content: {application/json: {schema: {type: object, properties: {s: {type: string, pattern: "^[a-z]+$", maxLength: 3}}}}}}
        "404": {$ref: "#/components/responses/NotFound"}
        "400": {description: bad, content: {application/json: {schema: {type: object}}}}
components:
  responses:
    NotFound: {description: nf, content: {application/json: {schema: {type: object}}}}
"##;

#[test]
fn a_shared_response_is_changed_once_and_bounds_follow_the_values() {
    let o = fix(
        SHARED,
        "shared.yaml",
        &[
            ("getA", "GET", "/a", 404, "text/plain", "no a"),
            ("getB", "GET", "/b", 404, "text/plain", "no b"),
            (
                "getB",
                "GET",
                "/b",
                400,
                "text/html",
                "<!DOCTYPE html><p>bad</p>",
            ),
            ("getA", "GET", "/a", 200, "application/json", r#"{"n":5}"#),
            (
                "getB",
                "GET",
                "/b",
                200,
                "application/json",
                r#"{"s":"abcd"}"#,
            ),
            (
                "getB",
                "GET",
                "/b",
                200,
                "application/json",
                r#"{"s":"AB"}"#,
            ),
        ],
    );
    assert!(o.after.is_empty(), "{:#?}", o.after);
    assert_eq!(
        o.targets("content_type_mismatch", ""),
        ["$['components']['responses']['NotFound']"]
    );
    assert_eq!(
        o.patched["components"]["responses"]["NotFound"]["content"]["text/plain"],
        json!({"schema": {"type": "string"}})
    );
    assert_eq!(
        o.patched["paths"]["/b"]["get"]["responses"]["400"]["content"]["text/html"],
        json!({"schema": {"type": "string"}})
    );
    let n = &o.patched["paths"]["/a"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
        ["properties"]["n"];
    assert_eq!(
        n,
        &json!({"type": "integer", "minimum": 5, "exclusiveMinimum": false})
    );
    let s = &o.patched["paths"]["/b"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
        ["properties"]["s"];
    assert_eq!(s, &json!({"type": "string", "maxLength": 4}));
}

#[test]
fn accepted_invalid_input_gets_no_action_and_says_why() {
    let spec = SHARED.replace(
        "operationId: getA\n",
        "operationId: getA\n      parameters: [{name: x, in: query, schema: {type: integer}}]\n",
    );
    let api = load(&spec, "shared.yaml");
    // The check needs the breach the negative test recorded.
    let mut ex = exchange(
        0,
        (
            "getA",
            "GET",
            "/a?x=abc",
            200,
            "application/json",
            r#"{"n":6}"#,
        ),
    );
    ex.request.breach = Some(Breach {
        input: "query x".into(),
        kind: BreachKind::WrongType,
        class: None,
    });
    let (faults, causes) = judge(&api, &[ex]);
    assert_eq!(causes.len(), 1, "{causes:#?}");
    assert_eq!(causes[0].code.as_str(), "invalid_input_accepted");
    let checker = Checker::new(&api, Vec::new(), None);
    let all = faults.faults();
    let seen = Seen {
        api: &api,
        faults: &all,
        answers: &HashMap::new(),
        checker: &checker,
    };
    let fixes = spec_fixes(&seen, &causes, None, &Secrets::new());
    assert!(fixes.text.is_none());
    assert_eq!(fixes.unsettled.len(), 1);
    assert!(
        fixes.unsettled[0].1.contains("should refuse"),
        "{:?}",
        fixes.unsettled
    );
    assert!(
        fixes
            .summary(None)
            .contains("none of the 1 conformance cause")
    );
}

#[test]
fn strings_from_the_server_are_encoded_and_secrets_redacted() {
    let spec = r##"
openapi: 3.1.0
info: {title: "Echo \"quoted\"\nnext", version: "1"}
paths:
  /e:
    get:
      operationId: echo
      responses:
        "200": {description: ok}
"##;
    let api = load(spec, "e.yaml");
    let body = r#"{"line1\nline2 # x\u2028\"q\"": "v", "s3cr3t-t0ken": 1, "yes": true}"#;
    let exchanges = [exchange(
        0,
        ("echo", "GET", "/e?q=%0a", 418, "application/json", body),
    )];
    let (faults, causes) = judge(&api, &exchanges);
    let mut kept = HashMap::new();
    for k in faults.kept() {
        kept.insert(
            k.fault.signature.clone(),
            vec![k.witness.last().unwrap().clone()],
        );
    }
    let checker = Checker::new(&api, Vec::new(), None);
    let all = faults.faults();
    let seen = Seen {
        api: &api,
        faults: &all,
        answers: &kept,
        checker: &checker,
    };
    let secrets = Secrets::new();
    secrets.add("s3cr3t-t0ken");
    let fixes = spec_fixes(&seen, &causes, None, &secrets);
    let text = fixes.text.unwrap();
    assert!(!text.contains("s3cr3t"), "{text}");
    let overlay = crate::load::parse_text(&text, Path::new("o.yaml")).unwrap();
    assert_eq!(
        overlay["info"]["title"],
        json!("Spec fixes for Echo \"quoted\"\nnext (Cartograph)")
    );
    let response = &overlay["actions"][0]["update"]["418"];
    assert_eq!(
        response["content"]["application/json"]["schema"]["properties"],
        json!({"line1\nline2 # x\u{2028}\"q\"": {"type": "string"}, "[REDACTED]": {"type": "integer"}, "yes": {"type": "boolean"}})
    );
    // The title's line break stays inside its comment line.
    assert!(text.lines().all(|l| !l.starts_with("next")), "{text}");
}

#[test]
fn extends_is_relative_to_the_overlay() {
    let cwd = std::env::current_dir().unwrap();
    assert_eq!(
        extends("openapi.yaml", Path::new("cartograph-out")),
        "../openapi.yaml"
    );
    assert_eq!(
        extends("specs/my api.yaml", Path::new("out/run 1")),
        "../../specs/my%20api.yaml"
    );
    assert_eq!(
        extends(
            &cwd.join("a:b.yaml").display().to_string(),
            &cwd.join("out")
        ),
        "../a%3Ab.yaml"
    );
    assert_eq!(
        extends("/nonexistent-a/api.yaml", Path::new("/nonexistent-b/out")),
        "file:///nonexistent-a/api.yaml"
    );
    assert_eq!(
        extends("https://example.com/openapi.json", Path::new("out")),
        "https://example.com/openapi.json"
    );
}
