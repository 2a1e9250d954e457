//! The OpenAPI loader on small documents: versions, bodies, schemas,
//! broken parts, and `$ref`s that point anywhere.

use super::*;
use crate::model::SchemaType;

fn load_yaml(text: &str) -> Loaded {
    let v = super::super::parse_text(text, Path::new("t.yaml")).unwrap();
    load(v, Path::new("t.yaml"), None).unwrap()
}

#[test]
fn swagger2_body_and_form_data_become_request_bodies() {
    let l = load_yaml(
        r##"
swagger: "2.0"
info: {title: t, version: "1"}
host: api.example.com
basePath: /v1/
schemes: [http, https]
consumes: [application/json]
paths:
  /pets:
    post:
      operationId: addPet
      parameters:
        - {name: body, in: body, required: true, schema: {$ref: "#/definitions/Pet"}}
      responses: {"200": {description: ok, schema: {$ref: "#/definitions/Pet"}}}
  /pets/{id}/photo:
    post:
      parameters:
        - {name: id, in: path, required: true, type: integer, format: int64}
        - {name: file, in: formData, type: file, required: true}
        - {name: note, in: formData, type: string}
      responses: {"200": {description: ok}}
definitions:
  Pet:
    type: object
    required: [name]
    properties:
      id: {type: integer, x-nullable: true}
      name: {type: string, example: Rex}
"##,
    );
    assert!(l.is_complete(), "{:?}", l.warnings);
    let api = &l.api;
    assert_eq!(api.format, SpecFormat::Swagger2);
    assert_eq!(
        api.servers,
        vec!["http://api.example.com/v1", "https://api.example.com/v1"]
    );
    let add = api.operation("addPet").unwrap();
    let body = add.request_body.as_ref().unwrap();
    assert!(body.required);
    assert_eq!(
        body.content["application/json"].reference.as_deref(),
        Some("Pet")
    );
    let photo = api.operation("POST /pets/{id}/photo").unwrap();
    assert_eq!(photo.parameters.len(), 1);
    assert_eq!(photo.parameters[0].schema.types, vec![SchemaType::Integer]);
    let form = api.resolve(&photo.request_body.as_ref().unwrap().content["multipart/form-data"]);
    assert_eq!(form.required, vec!["file"]);
    assert_eq!(form.properties["file"].format.as_deref(), Some("binary"));
    let pet = &api.schemas["Pet"];
    assert_eq!(
        pet.properties["id"].types,
        vec![SchemaType::Integer, SchemaType::Null]
    );
}

#[test]
fn openapi31_type_arrays_webhooks_and_recursion() {
    let l = load_yaml(
        r##"
openapi: 3.1.0
info: {title: t, version: "1"}
servers: [{url: "https://{env}.example.com", variables: {env: {default: api}}}]
paths:
  /nodes/{id}:
    get:
      parameters: [{name: id, in: path, required: true, schema: {type: [string, "null"]}}]
      responses:
        "200":
          description: ok
          content: {application/json: {schema: {$ref: "#/components/schemas/Node"}}}
webhooks:
  newNode:
    post:
      operationId: onNewNode
      responses: {"200": {description: ok}}
components:
  schemas:
    Node:
      type: object
      properties:
        id: {type: string}
        children: {type: array, items: {$ref: "#/components/schemas/Node"}}
        parent: {$ref: "#/components/schemas/Node"}
        size: {type: integer, exclusiveMinimum: 0}
"##,
    );
    assert!(l.is_complete(), "{:?}", l.warnings);
    let api = &l.api;
    assert_eq!(api.servers, vec!["https://api.example.com"]);
    assert_eq!(api.webhooks.len(), 1);
    assert_eq!(api.webhooks[0].operation_id.as_deref(), Some("onNewNode"));
    let op = api.operation("GET /nodes/{id}").unwrap();
    assert_eq!(
        op.parameters[0].schema.types,
        vec![SchemaType::String, SchemaType::Null]
    );
    let node = &api.schemas["Node"];
    assert_eq!(
        node.properties["children"]
            .items
            .as_ref()
            .unwrap()
            .reference
            .as_deref(),
        Some("Node")
    );
    assert_eq!(node.properties["size"].minimum, Some(0.0));
    assert!(node.properties["size"].exclusive_minimum);
}

#[test]
fn all_of_is_merged_and_one_of_kept_as_alternatives() {
    let l = load_yaml(
        r##"
openapi: 3.0.0
info: {title: t, version: "1"}
paths: {}
components:
  schemas:
    Base: {type: object, required: [id], properties: {id: {type: integer}}}
    Dog:
      allOf:
        - $ref: "#/components/schemas/Base"
        - {type: object, properties: {bark: {type: boolean}}}
    Pet:
      oneOf: [{$ref: "#/components/schemas/Dog"}, {type: string}]
      discriminator: {propertyName: kind}
    Loop:
      allOf: [{$ref: "#/components/schemas/Loop"}]
"##,
    );
    let dog = &l.api.schemas["Dog"];
    assert_eq!(dog.required, vec!["id"]);
    assert!(dog.properties.contains_key("id") && dog.properties.contains_key("bark"));
    let pet = &l.api.schemas["Pet"];
    assert_eq!(pet.alternatives.len(), 2);
    assert!(pet.exclusive_alternatives);
    assert_eq!(pet.discriminator.as_deref(), Some("kind"));
    assert!(l.api.schemas.contains_key("Loop"));
}

#[test]
fn broken_operation_is_skipped_with_one_warning_and_rest_loads() {
    let l = load_yaml(
        r##"
openapi: 3.0.0
info: {title: t, version: "1"}
paths:
  /a:
    get:
      parameters: [{$ref: "#/components/parameters/Missing"}]
      responses: {"200": {description: ok}}
    post: "not an operation"
  /b:
    get:
      operationId: getB
      responses: {"200": {description: ok}}
"##,
    );
    assert_eq!(l.api.operations.len(), 1);
    assert_eq!(l.api.operations[0].name, "getB");
    assert_eq!(l.warnings.len(), 2, "{:#?}", l.warnings);
    assert!(l.warnings[0].location.contains("/paths/~1a/get"));
}

#[test]
fn undeclared_path_parameters_are_added_and_duplicate_ids_renamed() {
    let l = load_yaml(
        r##"
openapi: 3.0.0
info: {title: t, version: "1"}
paths:
  /a/{x}:
    get: {operationId: same, responses: {"200": {description: ok}}}
  /b:
    get: {operationId: same, responses: {"200": {description: ok}}}
"##,
    );
    assert_eq!(l.api.operations[0].parameters[0].name, "x");
    assert!(l.api.operations[0].parameters[0].required);
    assert_eq!(l.api.operations[1].name, "GET /b");
    assert_eq!(l.warnings.len(), 1);
}

/// k schemas that each merge all the others through `allOf`, as pointer
/// targets and as named definitions: each expanded once, not once per path
/// through the mesh (8! before), and each with every property of the mesh.
#[test]
fn all_of_meshes_are_merged_once_each() {
    const K: usize = 8;
    let head =
        "openapi: 3.0.0\ninfo: {title: t, version: \"1\"}\npaths: {}\ncomponents:\n  schemas:\n";
    let mut pointer = format!("{head}    Mesh:\n      type: object\n      properties:\n");
    let mut named = head.to_string();
    for x in 1..=K {
        let own = format!("properties: {{f{x}: {{type: string}}}}");
        pointer.push_str(&format!(
            "        a{x}:\n          {own}\n          allOf:\n"
        ));
        named.push_str(&format!("    A{x}:\n      {own}\n      allOf:\n"));
        for y in (1..=K).filter(|y| *y != x) {
            pointer.push_str(&format!(
                "            - $ref: \"#/components/schemas/Mesh/properties/a{y}\"\n"
            ));
            named.push_str(&format!("        - $ref: \"#/components/schemas/A{y}\"\n"));
        }
    }
    let all: Vec<String> = (1..=K).map(|y| format!("f{y}")).collect();
    for (text, prefix, extra) in [(pointer, "Mesh.a", Some("Mesh")), (named, "A", None)] {
        let l = load_yaml(&text);
        assert!(l.is_complete(), "{:?}", l.warnings);
        let mut names: Vec<&str> = l.api.schemas.keys().map(String::as_str).collect();
        names.sort_unstable();
        let mut want: Vec<String> = extra.into_iter().map(str::to_string).collect();
        want.extend((1..=K).map(|x| format!("{prefix}{x}")));
        assert_eq!(names, want);
        for x in 1..=K {
            let a = &l.api.schemas[&format!("{prefix}{x}")];
            let mut props: Vec<&str> = a.properties.keys().map(String::as_str).collect();
            props.sort_unstable();
            assert_eq!(props, all, "{prefix}{x}");
        }
    }
}

/// Pointer targets with no pointer `$ref`s of their own stay inline, so a
/// primitive keeps its type at every use; responses and parameters are
/// followed as before; a pointer target that is a `$ref` is followed to
/// what it points at.
#[test]
fn small_pointer_targets_stay_inline() {
    let l = load_yaml(
        r##"
swagger: "2.0"
info: {title: t, version: "1"}
paths:
  /pets/{id}:
    parameters: [{$ref: "#/parameters/Id"}]
    get:
      operationId: getPet
      responses:
        "200": {$ref: "#/responses/PetOk"}
  /owners:
    get:
      operationId: listOwners
      parameters:
        - {name: pet, in: query, type: integer, format: int64}
      responses:
        "200":
          description: ok
          schema: {type: array, items: {$ref: "#/definitions/Pet/properties/owner"}}
        "201": {description: ok, schema: {$ref: "#/definitions/Pet/properties/alias"}}
        "202": {description: ok, schema: {$ref: "#/definitions/Pet/properties/tags"}}
parameters:
  Id: {name: id, in: path, required: true, type: integer}
responses:
  PetOk: {description: ok, schema: {$ref: "#/definitions/Pet"}}
definitions:
  Pet:
    type: object
    properties:
      id: {type: integer, format: int64}
      owner:
        type: object
        properties:
          petId: {$ref: "#/definitions/Pet/properties/id"}
          name: {type: string}
      alias: {$ref: "#/definitions/Pet/properties/owner"}
      tags: {type: array, items: {$ref: "#/definitions/Tag"}}
  Tag: {type: object, properties: {name: {type: string}}}
"##,
    );
    assert!(l.is_complete(), "{:?}", l.warnings);
    let api = &l.api;
    // `owner` refers only to a primitive (`id`): it is inlined, as before.
    // (Inline answers get names of their own, listed apart.)
    let named: Vec<&String> = api
        .schemas
        .keys()
        .filter(|k| !api.inline.contains_key(*k))
        .collect();
    assert_eq!(named, vec!["Pet", "Tag"]);
    let owners = api.operation("listOwners").unwrap();
    let items = api.resolve(
        owners.responses["200"].content["application/json"]
            .items
            .as_deref()
            .unwrap(),
    );
    assert_eq!(items.properties["petId"].types, vec![SchemaType::Integer]);
    assert_eq!(items.properties["petId"].format.as_deref(), Some("int64"));
    let alias = api.resolve(&owners.responses["201"].content["application/json"]);
    assert_eq!(alias.properties.len(), 2);
    let tags = &owners.responses["202"].content["application/json"];
    assert_eq!(
        tags.items.as_deref().unwrap().reference.as_deref(),
        Some("Tag")
    );
    let get = api.operation("getPet").unwrap();
    assert_eq!(get.parameters[0].schema.types, vec![SchemaType::Integer]);
    assert_eq!(
        get.responses["200"].content["application/json"]
            .reference
            .as_deref(),
        Some("Pet")
    );
}

/// A pointer target that refers to another is named, the name read from its
/// place and kept apart from a definition of the same name.
#[test]
fn pointer_targets_are_named_from_their_place() {
    let l = load_yaml(
        r##"
openapi: 3.0.0
info: {title: t, version: "1"}
paths:
  /a:
    get:
      operationId: getA
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties:
                  next: {$ref: "#/paths/~1b/get/responses/200/content/application~1json/schema"}
  /b:
    get:
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties:
                  back: {$ref: "#/paths/~1a/get/responses/200/content/application~1json/schema"}
                  list: {$ref: "#/components/schemas/List/items"}
components:
  schemas:
    getA.200: {type: string}
    List:
      type: array
      items:
        type: object
        properties: {up: {$ref: "#/components/schemas/List/items"}}
    Both:
      allOf:
        - $ref: "#/components/schemas/List/items"
        - {properties: {own: {type: boolean}}}
"##,
    );
    assert!(l.is_complete(), "{:?}", l.warnings);
    let names: Vec<&str> = l.api.schemas.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        vec![
            "getA.200",
            "List",
            "Both",
            "getA.200_2",
            "GET /b.200",
            "List.items"
        ]
    );
    let a = &l.api.operation("getA").unwrap().responses["200"].content["application/json"];
    assert_eq!(a.reference.as_deref(), Some("getA.200_2"));
    assert_eq!(
        l.api.schemas["getA.200_2"].properties["next"]
            .reference
            .as_deref(),
        Some("GET /b.200")
    );
    let list = &l.api.schemas["List"];
    assert_eq!(
        list.items.as_deref().unwrap().reference.as_deref(),
        Some("List.items")
    );
    let both = &l.api.schemas["Both"];
    assert_eq!(
        both.properties.keys().collect::<Vec<_>>(),
        vec!["up", "own"]
    );
}

#[test]
fn path_template_names_in_order() {
    assert_eq!(
        path_template_names("/a/{x}/b/{y}.{fmt}"),
        vec!["x", "y", "fmt"]
    );
}

#[test]
fn header_parameters_that_are_no_token_or_frame_the_message_are_refused() {
    use crate::model::Location;
    let l = load_yaml(
        r##"
openapi: 3.0.0
info: {title: t, version: "1"}
components:
  securitySchemes:
    split: {type: apiKey, in: header, name: "X-Key\r\nX-Injected: 1"}
    auth: {type: apiKey, in: header, name: Authorization}
    hosted: {type: apiKey, in: header, name: Host}
paths:
  /a:
    get:
      parameters:
        - {name: "X-A\r\nX-Injected: 1", in: header, schema: {type: string}}
        - {name: "X B", in: header, schema: {type: string}}
        - {name: Host, in: header, schema: {type: string}}
        - {name: connection, in: header, schema: {type: string}}
        - {name: Transfer-Encoding, in: header, schema: {type: string}}
        - {name: Upgrade, in: header, schema: {type: string}}
        - {name: Authorization, in: header, schema: {type: string}}
        - {name: X-Request-Id, in: header, schema: {type: string}}
        - {name: Host, in: query, schema: {type: string}}
        - {name: "a=1; b", in: cookie, schema: {type: string}}
        - {name: session, in: cookie, schema: {type: string}}
      responses: {"200": {description: ok}}
"##,
    );
    let op = l.api.operation("GET /a").unwrap();
    let names: Vec<_> = op
        .parameters
        .iter()
        .map(|p| (p.name.as_str(), p.location))
        .collect();
    assert_eq!(
        names,
        [
            ("X-Request-Id", Location::Header),
            ("Host", Location::Query),
            ("session", Location::Cookie)
        ]
    );
    let warned: Vec<_> = l.warnings.iter().map(|w| w.message.as_str()).collect();
    // `Authorization` is left out silently: OpenAPI ignores it.
    assert_eq!(warned.len(), 9, "{warned:#?}");
    assert!(warned.iter().any(|w| w.contains("cookie name")));
    assert!(
        warned.iter().all(|w| !w.contains(['\r', '\n'])),
        "{warned:#?}"
    );
    assert!(warned.iter().any(|w| w.contains("not an HTTP token")));
    assert!(
        warned
            .iter()
            .any(|w| w.contains("header Host is set by the client"))
    );
    // Only the API key in `Authorization` is a scheme to probe.
    let schemes: Vec<_> = l.api.security_schemes.keys().collect();
    assert_eq!(schemes, ["auth"]);
}

#[test]
fn bounds_no_value_satisfies_leave_their_parameter_or_property_out_with_a_warning() {
    let l = load_yaml(
        r##"
openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /x:
    get:
      parameters:
        - {name: backwards, in: query, schema: {type: integer, minimum: 10, maximum: 5}}
        - {name: between, in: query, schema: {type: integer, exclusiveMinimum: 1, maximum: 1.5}}
        - {name: open, in: query, schema: {type: number, minimum: 1, exclusiveMaximum: 1}}
        - {name: fine, in: query, schema: {type: number, minimum: 1.5, maximum: 1.7}}
        - {name: list, in: query, schema: {$ref: '#/components/schemas/Never'}}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              required: [none, kept]
              properties:
                none: {type: array, minItems: 2, items: false}
                short: {type: string, minLength: 5, maxLength: 2}
                kept: {type: string, minLength: 2000000000}
      responses: {"200": {description: ok}}
components:
  schemas:
    Never: {type: array, minItems: 3, maxItems: 1}
"##,
    );
    let op = &l.api.operations[0];
    let names: Vec<&str> = op.parameters.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["fine", "list"]);
    let body = l
        .api
        .resolve(&op.request_body.as_ref().unwrap().content["application/json"]);
    assert_eq!(body.properties.keys().collect::<Vec<_>>(), ["kept"]);
    assert_eq!(body.required, ["kept"]);
    let said: Vec<String> = l
        .warnings
        .iter()
        .map(|w| format!("{}: {}", w.location, w.message))
        .collect();
    let expect = [
        "#/paths/~1x/get/parameters/0/schema: minimum 10 is not below maximum 5: no value satisfies it; parameter \"backwards\" left out",
        "#/paths/~1x/get/parameters/1/schema: no integer lies between exclusiveMinimum 1 and maximum 1.5: no value satisfies it; parameter \"between\" left out",
        "#/paths/~1x/get/parameters/2/schema: minimum 1 is not below exclusiveMaximum 1: no value satisfies it; parameter \"open\" left out",
        "#/paths/~1x/get/requestBody/content/application~1json/schema/properties/none: minItems 2 with `items: false`, which allows no item: no value satisfies it; property \"none\" left out",
        "#/paths/~1x/get/requestBody/content/application~1json/schema/properties/short: minLength 5 > maxLength 2: no value satisfies it; property \"short\" left out",
        "#/paths/~1x/get/requestBody/content/application~1json/schema/properties/kept: minLength 2000000000 is past the longest string generated (10000 characters): values are cut there, and are too short",
        "#/components/schemas/Never: minItems 3 > maxItems 1: no value satisfies it; the bounds are ignored",
    ];
    for e in expect {
        assert!(said.iter().any(|s| s == e), "missing {e:?} in {said:#?}");
    }
    assert_eq!(said.len(), expect.len(), "{said:#?}");
    // Where nothing could be left out, the bounds are gone.
    let never = &l.api.schemas["Never"];
    assert_eq!((never.min_items, never.max_items), (None, None));
}
