//! The schema oracle's rules, body by body.

use super::convert::def_ref;
use super::*;
use crate::model::SchemaType;
use std::path::Path;

fn demo() -> Api {
    crate::load::load_text(crate::demo::OPENAPI_YAML, Path::new("d.yaml"))
        .unwrap()
        .api
}

fn load(text: &str, name: &str) -> Api {
    let loaded = crate::load::load_text(text, Path::new(name)).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    loaded.api
}

fn op(api: &Api, name: &str) -> usize {
    api.operations.iter().position(|o| o.name == name).unwrap()
}

fn book(price: Value) -> Value {
    json!({"id": 1, "authorId": 1, "title": "T", "price": price, "stock": 3,
               "tags": ["a"], "status": "available"})
}

const JSON: Option<&str> = Some("application/json; charset=utf-8");

#[test]
fn a_text_price_is_a_type_violation_at_price() {
    let api = demo();
    let rs = ResponseSchemas::new(&api);
    let get = op(&api, "getBook");
    let v = rs.check(&api, get, 200, JSON, &book(json!("12.50")));
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0].pointer, "/price");
    assert_eq!(v[0].location, "/price");
    assert_eq!(v[0].keyword, "type");
    assert_eq!(v[0].message, "/price: \"12.50\" is not of type number");
    assert!(
        rs.check(&api, get, 200, JSON, &book(json!(12.5)))
            .is_empty()
    );
    assert!(rs.check(&api, get, 200, None, &book(json!(12))).is_empty());
    assert!(rs.warnings().is_empty());
}

#[test]
fn array_indexes_become_stars_in_the_location() {
    let api = demo();
    let rs = ResponseSchemas::new(&api);
    let list = op(&api, "listBooks");
    let mut books: Vec<Value> = (0..6).map(|_| book(json!(3.5))).collect();
    books[3]["price"] = json!("3.50");
    let v = rs.check(&api, list, 200, JSON, &Value::Array(books.clone()));
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0].pointer, "/3/price");
    assert_eq!(v[0].location, "/*/price");
    // The same fault on several items is one violation; different faults are more.
    books[4]["price"] = json!("1");
    books[5].as_object_mut().unwrap().remove("title");
    books[1]["status"] = json!("lost");
    let v = rs.check(&api, list, 200, JSON, &Value::Array(books));
    let found: Vec<(&str, &str)> = v
        .iter()
        .map(|v| (v.location.as_str(), v.keyword.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            ("/*/status", "enum"),
            ("/*/price", "type"),
            ("/*/title", "required")
        ]
    );
    assert_eq!(v[2].pointer, "/5/title");
    assert_eq!(v[2].message, "/5: required property \"title\" is missing");
}

#[test]
fn status_and_media_type_choose_the_schema() {
    let api = demo();
    let rs = ResponseSchemas::new(&api);
    let get = op(&api, "getBook");
    let error_body = json!({"message": "no such book"});
    // 404 documents Error: a book-shaped error body breaks it, a message does not.
    assert!(rs.check(&api, get, 404, JSON, &error_body).is_empty());
    let v = rs.check(&api, get, 404, JSON, &json!({"msg": 1}));
    assert_eq!(v[0].keyword, "required");
    // A problem+json answer is held to the JSON schema.
    let v = rs.check(&api, get, 404, Some("application/problem+json"), &json!({}));
    assert_eq!(v.len(), 1);
    // Undocumented statuses and non-JSON bodies check nothing.
    assert!(rs.check(&api, get, 418, JSON, &json!(1)).is_empty());
    assert!(
        rs.check(&api, get, 200, Some("text/plain"), &json!(1))
            .is_empty()
    );
    assert!(rs.check(&api, 999, 200, JSON, &json!(1)).is_empty());
}

#[test]
fn ranges_default_and_wildcards() {
    let api = load(
        r##"
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /a:
    get:
      responses:
        "200":
          description: ok
          content:
            application/*: {schema: {type: integer}}
            text/plain: {schema: {type: string}}
        "2xx":
          description: ok
          content:
            "*/*": {schema: {type: boolean}}
        default:
          description: err
          content:
            application/vnd.api+json: {schema: {type: object, required: [errors]}}
"##,
        "r.yaml",
    );
    let rs = ResponseSchemas::new(&api);
    assert!(rs.check(&api, 0, 200, JSON, &json!(3)).is_empty());
    assert_eq!(rs.check(&api, 0, 200, JSON, &json!("3"))[0].keyword, "type");
    assert!(rs.check(&api, 0, 201, JSON, &json!(true)).is_empty());
    assert_eq!(rs.check(&api, 0, 201, JSON, &json!(1)).len(), 1);
    assert!(
        rs.check(&api, 0, 500, JSON, &json!({"errors": []}))
            .is_empty()
    );
    assert_eq!(
        rs.check(&api, 0, 500, JSON, &json!({}))[0].keyword,
        "required"
    );
    assert_eq!(
        rs.check(&api, 0, 500, None, &json!({}))[0].message,
        "body: required property \"errors\" is missing"
    );
}

#[test]
fn openapi_30_nullable_write_only_and_overlapping_one_of() {
    let api = load(
        r##"
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /users/{id}:
    get:
      parameters: [{name: id, in: path, required: true, schema: {type: integer}}]
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {$ref: "#/components/schemas/User"}
components:
  schemas:
    Secret: {type: string, writeOnly: true}
    User:
      type: object
      required: [id, name, password, token, pet, kind]
      properties:
        id: {type: integer, format: int64, multipleOf: 1}
        name: {type: string, nullable: true, maxLength: 5}
        password: {type: string, writeOnly: true}
        token: {$ref: "#/components/schemas/Secret"}
        kind: {type: string, enum: [a, b], nullable: true}
        score: {type: number, multipleOf: 0.01, minimum: 0, exclusiveMinimum: true}
        pet:
          nullable: true
          type: object
          oneOf:
            - {type: object, properties: {name: {type: string}}}
            - {type: object, properties: {age: {type: integer}}}
        code: {type: string, pattern: "^(?<year>\\d{4})$"}
        list: {type: array, minItems: 20, maxItems: 30, items: {type: integer}}
"##,
        "n.yaml",
    );
    let rs = ResponseSchemas::new(&api);
    let ok = [
        json!({"id": 1, "name": null, "pet": null, "kind": null}),
        json!({"id": 3.0, "name": "bob", "pet": {"name": "x", "age": 2}, "kind": "a",
                   "score": 12.34, "list": [1, 2, 3], "code": "2024"}),
        json!({"id": 1, "name": "x", "pet": {}, "kind": "b", "password": "p", "extra": 1}),
    ];
    for body in &ok {
        assert_eq!(rs.check(&api, 0, 200, JSON, body), [], "{body}");
    }
    let cents = json!({"id": 1, "name": null, "pet": null, "kind": null, "score": 12.345});
    assert_eq!(
        rs.check(&api, 0, 200, JSON, &cents)[0].keyword,
        "multipleOf"
    );
    let v = rs.check(
        &api,
        0,
        200,
        JSON,
        &json!({"id": "1", "name": "toolong", "pet": 3, "kind": "c", "score": 0}),
    );
    let found: Vec<(&str, &str)> = v
        .iter()
        .map(|v| (v.pointer.as_str(), v.keyword.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            ("/id", "type"),
            ("/kind", "enum"),
            ("/name", "maxLength"),
            ("/pet", "anyOf"),
            ("/pet", "type"),
        ]
    );
    assert!(rs.warnings().is_empty(), "{:?}", rs.warnings());
}

#[test]
fn swagger_2_and_openapi_31() {
    let api = load(
        r##"
swagger: "2.0"
info: {title: t, version: "1"}
produces: [application/json, application/xml]
paths:
  /pets:
    get:
      responses:
        "200":
          description: ok
          schema:
            type: array
            items: {$ref: "#/definitions/Pet~1Thing"}
definitions:
  Pet/Thing:
    type: object
    required: [id]
    properties:
      id: {type: integer, x-nullable: true}
      tag: {type: string, format: uuid}
      kids: {type: array, items: {$ref: "#/definitions/Pet~1Thing"}}
"##,
        "s.yaml",
    );
    let rs = ResponseSchemas::new(&api);
    let body = json!([{"id": null, "tag": "not-a-uuid", "kids": [{"id": 2}]}]);
    assert!(rs.check(&api, 0, 200, JSON, &body).is_empty());
    let v = rs.check(
        &api,
        0,
        200,
        JSON,
        &json!([{"id": 1, "kids": [{"id": "2"}]}]),
    );
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].location, "/*/kids/*/id");
    assert!(
        rs.check(&api, 0, 200, Some("application/xml"), &json!(1))
            .is_empty()
    );

    let api = load(
        r##"
openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /a:
    get:
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                required: [name, n]
                properties:
                  name: {type: [string, "null"]}
                  n: {oneOf: [{type: integer, exclusiveMaximum: 10}, {type: "null"}]}
                  c: {const: x}
                  w: {$ref: "#/components/schemas/Page«Pet»"}
components:
  schemas:
    Page«Pet»: {type: object, properties: {size: {type: integer}}}
"##,
        "t.yaml",
    );
    let rs = ResponseSchemas::new(&api);
    for body in [
        json!({"name": null, "n": null}),
        json!({"name": "x", "n": 9, "c": "x", "w": {"size": 1}}),
    ] {
        assert_eq!(rs.check(&api, 0, 200, JSON, &body), [], "{body}");
    }
    let v = rs.check(
        &api,
        0,
        200,
        JSON,
        &json!({"name": 1, "n": 10, "c": "y", "w": {"size": "1"}}),
    );
    let found: Vec<(&str, &str)> = v
        .iter()
        .map(|v| (v.pointer.as_str(), v.keyword.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            ("/w/size", "type"),
            ("/c", "enum"),
            ("/n", "anyOf"),
            ("/name", "type")
        ]
    );
    assert!(
        v[2].message.contains("closest: /n: 10 is not less than"),
        "{}",
        v[2].message
    );
}

#[test]
fn bad_patterns_are_dropped_and_the_rest_still_checked() {
    let api = load(
        r##"
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /a:
    get:
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties:
                  a: {type: string, pattern: "^[a-z]+$"}
                  b: {type: string, pattern: "(unclosed"}
                  c: {type: integer}
"##,
        "p.yaml",
    );
    let rs = ResponseSchemas::new(&api);
    assert!(
        rs.check(&api, 0, 200, JSON, &json!({"a": "abc", "b": "x"}))
            .is_empty()
    );
    let v = rs.check(&api, 0, 200, JSON, &json!({"a": "ABC", "c": "1"}));
    let kw: Vec<&str> = v.iter().map(|v| v.keyword.as_str()).collect();
    assert_eq!(kw, ["pattern", "type"]);
    assert_eq!(rs.compile_all(&api), (1, 0));
    assert_eq!(
        rs.warnings(),
        ["pattern \"(unclosed\" is not checked: the regex engine rejects it"]
    );
}

#[test]
fn at_most_five_violations_in_a_stable_order() {
    let api = demo();
    let rs = ResponseSchemas::new(&api);
    let get = op(&api, "getBook");
    let bad = json!({"id": "x", "authorId": "x", "title": 1, "price": "x", "stock": "x",
                         "tags": "x", "status": 1});
    let v = rs.check(&api, get, 200, JSON, &bad);
    assert_eq!(v.len(), MAX_VIOLATIONS);
    assert_eq!(v, rs.check(&api, get, 200, JSON, &bad));
    let pointers: Vec<&str> = v.iter().map(|v| v.pointer.as_str()).collect();
    assert_eq!(
        pointers,
        ["/authorId", "/id", "/price", "/status", "/status"]
    );
}

#[test]
fn one_validator_per_response_when_the_whole_set_does_not_compile() {
    let api = demo();
    let rs = ResponseSchemas::new(&api);
    rs.whole.set(None).unwrap();
    let (get, list) = (op(&api, "getBook"), op(&api, "listBooks"));
    let v = rs.check(&api, get, 200, JSON, &book(json!("12.50")));
    assert_eq!(v[0].message, "/price: \"12.50\" is not of type number");
    let v = rs.check(&api, list, 200, JSON, &json!([book(json!(1)), {"id": 2}]));
    assert_eq!(v[0].location, "/*/authorId");
    let counts = rs.compile_all(&api);
    assert_eq!(counts, ResponseSchemas::new(&api).compile_all(&api));
    assert_eq!(counts.1, 0);
}

#[test]
fn a_pattern_the_engine_gives_up_on_is_no_violation() {
    let v = options()
        .with_pattern_options(jsonschema::PatternOptions::fancy_regex().backtrack_limit(1))
        .build(&json!({"properties": {"a": {"pattern": "(?<=ab)c"}, "b": {"type": "string"}}}))
        .unwrap();
    let body = json!({"a": "abc", "b": 1});
    let api = demo();
    let origin = violations::Origin {
        api: &api,
        key: (0, 0, 0),
        start: std::cell::OnceCell::new(),
        schema_prefix: String::new(),
    };
    let found: Vec<String> = violations(&v, &body, "", &body, &origin)
        .into_iter()
        .map(|v| v.pointer)
        .collect();
    assert_eq!(found, ["/b"]);
}

#[test]
fn null_beside_alternatives_means_nullable() {
    let mut api = demo();
    let s = Schema {
        types: vec![SchemaType::Null],
        alternatives: vec![Schema::of_type(SchemaType::Integer), Schema::named("Error")],
        ..Schema::default()
    };
    let get = op(&api, "getBook");
    api.operations[get].responses["200"].content[0] = s;
    let rs = ResponseSchemas::new(&api);
    for ok in [json!(null), json!(3), json!({"message": "m"})] {
        assert_eq!(rs.check(&api, get, 200, JSON, &ok), [], "{ok}");
    }
    assert_eq!(
        rs.check(&api, get, 200, JSON, &json!("x"))[0].keyword,
        "anyOf"
    );
}

#[test]
fn def_refs_are_valid_uri_fragments() {
    assert_eq!(def_ref("a/b~c d"), "#/$defs/a~1b~0c%20d");
    assert_eq!(def_ref("Page«Pet»"), "#/$defs/Page%C2%ABPet%C2%BB");
}

#[test]
fn response_schemas_can_be_shared_between_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<ResponseSchemas>();
}

#[test]
fn each_violation_names_where_the_description_writes_its_schema() {
    let api = demo();
    let rs = ResponseSchemas::new(&api);
    let (get, list) = (op(&api, "getBook"), op(&api, "listBooks"));
    let v = rs.check(&api, get, 200, JSON, &book(json!("12.50")));
    assert_eq!(
        v[0].schema.as_deref(),
        Some("#/components/schemas/Book/properties/price")
    );
    // The same place through a list of references.
    let v = rs.check(
        &api,
        list,
        200,
        JSON,
        &json!([book(json!(1)), book(json!("1"))]),
    );
    assert_eq!(
        v[0].schema.as_deref(),
        Some("#/components/schemas/Book/properties/price")
    );

    let spec = r##"
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /things/{id}/:
    $ref: "#/x-items/thing"
components:
  responses:
    Thing:
      description: ok
      content:
        application/json:
          schema:
            allOf:
              - $ref: "#/components/schemas/Base"
              - type: object
                required: [name]
                properties:
                  name: {type: string}
                  owner: {$ref: "#/components/schemas/Owner"}
                  shape:
                    oneOf:
                      - {type: object, properties: {r: {type: number}}}
                      - {type: string, enum: [square]}
  schemas:
    Base: {type: object, required: [id], properties: {id: {type: integer}}}
    Owner: {type: object, properties: {n: {type: string}}}
x-items:
  thing:
    get:
      operationId: getThing
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses:
        "200": {$ref: "#/components/responses/Thing"}
"##;
    let api = load(spec, "t.yaml");
    let rs = ResponseSchemas::new(&api);
    let thing = op(&api, "getThing");
    let place = |body: Value| {
        let v = rs.check(&api, thing, 200, JSON, &body);
        assert_eq!(v.len(), 1, "{v:?}");
        (
            v[0].keyword.clone(),
            v[0].schema.clone().unwrap_or_default(),
        )
    };
    let schema = "#/components/responses/Thing/content/application~1json/schema";
    assert_eq!(
        place(json!({"name": "a"})),
        ("required".into(), "#/components/schemas/Base".into())
    );
    assert_eq!(
        place(json!({"id": 1})),
        ("required".into(), format!("{schema}/allOf/1"))
    );
    assert_eq!(
        place(json!({"id": "x", "name": "a"})),
        (
            "type".into(),
            "#/components/schemas/Base/properties/id".into()
        )
    );
    // A null where a `$ref` stands: the referring place.
    assert_eq!(
        place(json!({"id": 1, "name": "a", "owner": null})),
        ("type".into(), format!("{schema}/allOf/1/properties/owner"))
    );
    assert_eq!(
        place(json!({"id": 1, "name": "a", "owner": {"n": 5}})),
        (
            "type".into(),
            "#/components/schemas/Owner/properties/n".into()
        )
    );
    assert_eq!(
        place(json!({"id": 1, "name": "a", "shape": 7})),
        ("anyOf".into(), format!("{schema}/allOf/1/properties/shape"))
    );
}

#[test]
fn an_answer_that_broke_nothing_is_judged_once_and_a_broken_one_every_time() {
    let api = demo();
    let rs = ResponseSchemas::new(&api);
    let get = op(&api, "getBook");
    let good = book(json!(12.5));
    let text = good.to_string();
    assert!(rs.check_text(&api, get, 200, JSON, &good, &text).is_empty());
    assert_eq!(rs.valid.lock().unwrap().len(), 1);
    // Remembered by its text: judged again, it is not validated (a body
    // passed along with the same text is taken as the one seen).
    let bad = book(json!("12.50"));
    assert!(rs.check_text(&api, get, 200, JSON, &bad, &text).is_empty());
    // Another text is judged, and a violation is found each time it comes.
    let bad_text = bad.to_string();
    for _ in 0..2 {
        let v = rs.check_text(&api, get, 200, JSON, &bad, &bad_text);
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].keyword, "type");
    }
    assert_eq!(rs.valid.lock().unwrap().len(), 1);
    // The same text under another response schema is judged on its own.
    let list = op(&api, "listBooks");
    assert!(
        !rs.check_text(&api, list, 200, JSON, &good, &text)
            .is_empty()
    );
}
