//! The GraphQL response oracle's rules, one answer at a time.

use super::*;
use crate::oracles::registry::graphql_code;

/// The registry's code of a finding's kind.
fn code(kind: Kind) -> &'static str {
    graphql_code(kind).as_str()
}
use serde_json::json;
use std::path::Path;

fn demo() -> TypeSystem {
    crate::load::load_text(crate::demo::GRAPHQL_SDL, Path::new("schema.graphql"))
        .expect("demo SDL loads")
        .api
        .graphql
        .expect("a type system")
}

/// A schema with an interface, a union, a custom scalar and nested lists.
const LIB_SDL: &str = r#"
        interface Node { id: ID! }
        type Book implements Node { id: ID! title: String! pages: Int rating: Float genre: Genre tags: [String!]! }
        type Author implements Node { id: ID! name: String! books: [Book!] }
        type Shelf { id: ID! grid: [[Int!]!] }
        union SearchResult = Book | Author
        enum Genre { SF FANTASY }
        scalar JSON
        type Query {
          node(id: ID!): Node
          search(q: String!): [SearchResult!]!
          meta: JSON
          shelf: Shelf
          ok: Boolean!
        }
    "#;

fn lib() -> TypeSystem {
    crate::load::load_text(LIB_SDL, Path::new("lib.graphql"))
        .expect("lib SDL loads")
        .api
        .graphql
        .expect("a type system")
}

fn run(ts: &TypeSystem, query: &str, vars: Value, status: u16, body: Value) -> Vec<GraphqlFinding> {
    let text = body.to_string();
    check(ts, query, None, &vars, Some(status), Some(&body), &text)
}

fn codes(f: &[GraphqlFinding]) -> Vec<(&'static str, &str, &str)> {
    f.iter()
        .map(|f| (code(f.kind), f.root_field.as_str(), f.path.as_str()))
        .collect()
}

const ORDER_Q: &str = r#"{ order(id: "2") { book { title author { name } } } }"#;

#[test]
fn f7_null_author_is_one_null_violation() {
    let ts = demo();
    let body = json!({"data":{"order":{"book":{"title":"Ancillary Justice","author":null}}}});
    let f = run(&ts, ORDER_Q, json!({}), 200, body);
    assert_eq!(
        codes(&f),
        vec![(
            "graphql_null_violation",
            "Query.order",
            "data.order.book.author"
        )]
    );
    assert!(
        f[0].message.contains("Book.author is Author!"),
        "{}",
        f[0].message
    );
    let good = json!({"data":{"order":{"book":{"title":"Ancillary Justice","author":{"name":"Ann Leckie"}}}}});
    assert!(run(&ts, ORDER_Q, json!({}), 200, good).is_empty());
}

#[test]
fn f8_backtrace_is_a_stack_leak_and_the_panic_an_internal_error() {
    let ts = demo();
    let q = r#"{ book(id: "abc") { title } }"#;
    let body = json!({"data":null,"errors":[{
            "message":"called `Result::unwrap()` on an `Err` value: ParseIntError { kind: InvalidDigit }\nthread 'tokio-runtime-worker' panicked at src/store.rs:42:9:\nstack backtrace:\n   0: rust_begin_unwind",
            "locations":[{"line":1,"column":3}],
            "path":["book"]}]});
    let f = run(&ts, q, json!({}), 200, body);
    // Two faults, neither hiding the other: the leak, and the crash it shows.
    assert_eq!(
        codes(&f),
        vec![
            ("stack_trace_leak", "Query.book", "data.book"),
            ("graphql_internal_error", "Query.book", "data.book")
        ]
    );
    // The near miss: a plain domain error, and the root field's null data.
    let plain = json!({"data":null,"errors":[{"message":"invalid id \"abc\"","path":["author"]}]});
    assert!(
        run(
            &ts,
            r#"{ author(id: "abc") { name } }"#,
            json!({}),
            200,
            plain
        )
        .is_empty()
    );
    let good = json!({"data":{"book":{"title":"Dune"}}});
    assert!(run(&ts, r#"{ book(id: "1") { title } }"#, json!({}), 200, good).is_empty());
}

#[test]
fn stack_traces_in_extensions_leak_too() {
    let ts = demo();
    let q = r#"{ book(id: "1") { title } }"#;
    let apollo = json!({"data":{"book":null},"errors":[{"message":"boom","path":["book"],
            "extensions":{"code":"INTERNAL_SERVER_ERROR","exception":{"stacktrace":["Error: boom","    at resolve (/app/x.js:1:2)"]}}}]});
    assert_eq!(
        codes(&run(&ts, q, json!({}), 200, apollo)),
        vec![
            ("stack_trace_leak", "Query.book", "data.book"),
            ("graphql_internal_error", "Query.book", "data.book")
        ]
    );
    let sql = json!({"data":{"book":null},"errors":[{"message":"db","path":["book"],
            "extensions":{"detail":"ERROR: syntax error at or near \"abc\""}}]});
    assert_eq!(code(run(&ts, q, json!({}), 200, sql)[0].kind), "sql_leak");
}

#[test]
fn server_errors_name_every_root_field() {
    let ts = demo();
    let q = r#"{ a: book(id: "1") { title } authors { name } }"#;
    let f = check(&ts, q, None, &json!({}), Some(502), None, "Bad Gateway");
    assert_eq!(
        codes(&f),
        vec![
            ("server_error", "Query.book", "-"),
            ("server_error", "Query.authors", "-"),
        ]
    );
    let f = check(&ts, "{ book(", None, &json!({}), Some(500), None, "");
    assert_eq!(codes(&f), vec![("server_error", "-", "-")]);
    let good = json!({"data":{"a":{"title":"Dune"},"authors":[]}});
    assert!(run(&ts, q, json!({}), 200, good).is_empty());
}

#[test]
fn mutations_are_named_by_their_root_type() {
    let ts = demo();
    let q = r#"mutation M { createAuthor(name: "x") { id name } }"#;
    let bad = json!({"data":{"createAuthor":{"id":"3","name":7}}});
    assert_eq!(
        codes(&run(&ts, q, json!({}), 200, bad)),
        vec![(
            "graphql_wrong_type",
            "Mutation.createAuthor",
            "data.createAuthor.name"
        )]
    );
    let f1 = json!({"data":null,"errors":[{"message":"internal error","path":["placeOrder"]}]});
    assert_eq!(
        codes(&run(
            &ts,
            r#"mutation { placeOrder(bookId: "4", quantity: 1) { id } }"#,
            json!({}),
            200,
            f1
        )),
        vec![(
            "graphql_internal_error",
            "Mutation.placeOrder",
            "data.placeOrder"
        )]
    );
}

#[test]
fn validation_errors_are_told_apart() {
    let ts = demo();
    let q = "{ book(id: \"1\") {\n  title\n  foo\n} }";
    for (message, ext) in [
        ("Unknown field \"foo\" on type \"Book\".", Value::Null),
        (
            "Cannot query field \"foo\" on type \"Book\".",
            json!({"code":"GRAPHQL_VALIDATION_FAILED"}),
        ),
        (
            "Field \"book\" argument \"id\" of type \"ID!\" is required, but it was not provided.",
            Value::Null,
        ),
        (
            "Variable \"$id\" of required type \"ID!\" was not provided.",
            Value::Null,
        ),
        (
            "Unknown argument \"x\" on field \"book\" of type \"Query\".",
            Value::Null,
        ),
        ("whatever", json!({"classification":"ValidationError"})),
    ] {
        let body = json!({"data":null,"errors":[{"message":message,"locations":[{"line":3,"column":3}],"extensions":ext}]});
        assert_eq!(
            codes(&run(&ts, q, json!({}), 200, body)),
            vec![("graphql_validation_error", "Query.book", "-")],
            "{message}"
        );
    }
    // A parse error counts only when there is no data.
    let parse = json!({"errors":[{"message":"Syntax Error: Expected Name, found <EOF>."}]});
    assert_eq!(
        code(run(&ts, q, json!({}), 400, parse)[0].kind),
        "graphql_validation_error"
    );
    let pest = json!({"data":null,"errors":[{"message":" --> 1:7\n  |\n1 | { book(\n  |       ^---\n  |\n  = expected name"}]});
    assert_eq!(
        codes(&run(&ts, "{ book(", json!({}), 200, pest)),
        vec![("graphql_validation_error", "-", "-")]
    );
    // Output coercion errors carry a path: not ours.
    let coerce = json!({"data":{"book":null},"errors":[{"message":"Int cannot represent non-integer value: 1.5","path":["book","stock"]}]});
    assert!(
        run(
            &ts,
            r#"{ book(id: "1") { stock } }"#,
            json!({}),
            200,
            coerce
        )
        .is_empty()
    );
}

#[test]
fn internal_errors_are_conservative() {
    let ts = demo();
    let q = r#"{ book(id: "1") { title } }"#;
    for (message, ext) in [
        ("internal error", Value::Null),
        (
            "Internal Server Error(s) while executing query",
            Value::Null,
        ),
        ("boom", json!({"code":"INTERNAL_SERVER_ERROR"})),
        (
            "Cannot read properties of undefined (reading 'title')",
            Value::Null,
        ),
        ("Unexpected error.", Value::Null),
    ] {
        let body = json!({"data":{"book":null},"errors":[{"message":message,"path":["book"],"extensions":ext}]});
        assert_eq!(
            codes(&run(&ts, q, json!({}), 200, body)),
            vec![("graphql_internal_error", "Query.book", "data.book")],
            "{message}"
        );
    }
    for message in [
        "book 9 not found",
        "invalid id \"abc\"",
        "not enough stock",
        "quantity must be between 1 and 10",
        "there can only be one admin",
    ] {
        let body = json!({"data":{"book":null},"errors":[{"message":message,"path":["book"],"extensions":{"code":"BAD_USER_INPUT"}}]});
        assert!(run(&ts, q, json!({}), 200, body).is_empty(), "{message}");
    }
}

#[test]
fn missing_field_is_reported_unless_an_error_covers_it() {
    let ts = demo();
    let q = r#"{ book(id: "1") { title price } }"#;
    let bad = json!({"data":{"book":{"title":"Dune"}}});
    assert_eq!(
        codes(&run(&ts, q, json!({}), 200, bad)),
        vec![("graphql_missing_field", "Query.book", "data.book.price")]
    );
    let covered = json!({"data":{"book":{"title":"Dune"}},"errors":[{"message":"price unavailable","path":["book","price"]}]});
    assert!(run(&ts, q, json!({}), 200, covered).is_empty());
    // A null parent has no fields to miss.
    assert!(run(&ts, q, json!({}), 200, json!({"data":{"book":null}})).is_empty());
    let good = json!({"data":{"book":{"title":"Dune","price":9.5}}});
    assert!(run(&ts, q, json!({}), 200, good).is_empty());
    // A 2xx JSON body that is no GraphQL response misses the root field.
    assert_eq!(
        codes(&run(&ts, q, json!({}), 200, json!({"ok":true}))),
        vec![("graphql_missing_field", "Query.book", "data.book")]
    );
}

#[test]
fn null_propagation_with_an_error_path_is_not_a_violation() {
    let ts = demo();
    // `author` (Author!) failed: its parent `book` (Book!) became null, so
    // `order` (nullable) is null; the error's path points below each null.
    let q = r#"{ order(id: "2") { book { author { name } } } }"#;
    let body = json!({"data":{"order":null},"errors":[{"message":"author gone","path":["order","book","author"]}]});
    assert!(run(&ts, q, json!({}), 200, body).is_empty());
    // A server that stops the propagation early still has its error at or below.
    let body = json!({"data":{"order":{"book":null}},"errors":[{"message":"author gone","path":["order","book","author"]}]});
    assert!(run(&ts, q, json!({}), 200, body).is_empty());
    // An error elsewhere does not explain it.
    let body = json!({"data":{"order":{"book":null}},"errors":[{"message":"x","path":["other"]}]});
    assert_eq!(
        codes(&run(&ts, q, json!({}), 200, body)),
        vec![("graphql_null_violation", "Query.order", "data.order.book")]
    );
    // The server's own report of the violation is the fault.
    let body = json!({"data":{"order":null},"errors":[{"message":"Cannot return null for non-nullable field Book.author.","path":["order","book","author"]}]});
    assert_eq!(
        codes(&run(&ts, q, json!({}), 200, body)),
        vec![(
            "graphql_null_violation",
            "Query.order",
            "data.order.book.author"
        )]
    );
}

#[test]
fn data_null_without_errors_breaks_non_null_roots() {
    let ts = demo();
    let f = run(
        &ts,
        "{ authors { name } }",
        json!({}),
        200,
        json!({"data":null}),
    );
    assert_eq!(
        codes(&f),
        vec![("graphql_null_violation", "Query.authors", "data.authors")]
    );
    assert!(
        run(
            &ts,
            r#"{ book(id: "1") { title } }"#,
            json!({}),
            200,
            json!({"data":null})
        )
        .is_empty()
    );
}

#[test]
fn wrong_scalar_types() {
    let ts = demo();
    let q = r#"{ book(id: "1") { id title price stock } }"#;
    let good = json!({"data":{"book":{"id":1,"title":"Dune","price":12,"stock":3}}});
    assert!(run(&ts, q, json!({}), 200, good).is_empty());
    for (field, value) in [
        ("price", json!("12.50")),
        ("stock", json!(1.5)),
        ("stock", json!(3_000_000_000u64)),
        ("title", json!(5)),
        ("id", json!(true)),
        ("id", json!(1.5)),
    ] {
        let mut book = json!({"id":"1","title":"Dune","price":12.5,"stock":3});
        book[field] = value.clone();
        let f = run(&ts, q, json!({}), 200, json!({"data":{"book":book}}));
        let path = format!("data.book.{field}");
        assert_eq!(
            codes(&f),
            vec![("graphql_wrong_type", "Query.book", path.as_str())],
            "{value}"
        );
    }
    let b = json!({"data":{"book":{"id":"1","title":"Dune","price":1,"stock":3.0}}});
    assert!(
        run(&ts, q, json!({}), 200, b).is_empty(),
        "an integral float is an Int"
    );
    let nested = json!({"data":{"book":"Dune"}});
    assert_eq!(
        code(run(&ts, q, json!({}), 200, nested)[0].kind),
        "graphql_wrong_type"
    );
}

#[test]
fn enum_values_outside_the_enum() {
    let ts = demo();
    let q = r#"{ book(id: "1") { status } }"#;
    for bad in [json!("SHIPPED"), json!("available"), json!(1)] {
        let f = run(
            &ts,
            q,
            json!({}),
            200,
            json!({"data":{"book":{"status":bad}}}),
        );
        assert_eq!(
            codes(&f),
            vec![("graphql_enum_violation", "Query.book", "data.book.status")]
        );
    }
    assert!(
        run(
            &ts,
            q,
            json!({}),
            200,
            json!({"data":{"book":{"status":"RETIRED"}}})
        )
        .is_empty()
    );
}

#[test]
fn lists_and_non_lists() {
    let ts = demo();
    let q = r#"{ authors { name books { tags } } }"#;
    let good = json!({"data":{"authors":[{"name":"A","books":[{"tags":["sf"]},{"tags":[]}]},{"name":"B","books":[]}]}});
    assert!(run(&ts, q, json!({}), 200, good).is_empty());
    let not_list = json!({"data":{"authors":{"name":"A","books":[]}}});
    assert_eq!(
        codes(&run(&ts, q, json!({}), 200, not_list)),
        vec![("graphql_list_mismatch", "Query.authors", "data.authors")]
    );
    let list_for_scalar = json!({"data":{"authors":[{"name":["A"],"books":[]}]}});
    assert_eq!(
        codes(&run(&ts, q, json!({}), 200, list_for_scalar)),
        vec![(
            "graphql_list_mismatch",
            "Query.authors",
            "data.authors[*].name"
        )]
    );
    // The same fault in many elements is one finding; different paths are not.
    let many = json!({"data":{"authors":[
            {"name":"A","books":[{"tags":"sf"},{"tags":"x"}]},
            {"name":"B","books":[{"tags":[null]}]}]}});
    assert_eq!(
        codes(&run(&ts, q, json!({}), 200, many)),
        vec![
            (
                "graphql_list_mismatch",
                "Query.authors",
                "data.authors[*].books[*].tags"
            ),
            (
                "graphql_null_violation",
                "Query.authors",
                "data.authors[*].books[*].tags[*]"
            ),
        ]
    );
    let lib = lib();
    let grid = "{ shelf { grid } }";
    assert!(
        run(
            &lib,
            grid,
            json!({}),
            200,
            json!({"data":{"shelf":{"grid":[[1,2],[]]}}})
        )
        .is_empty()
    );
    assert_eq!(
        codes(&run(
            &lib,
            grid,
            json!({}),
            200,
            json!({"data":{"shelf":{"grid":[1]}}})
        )),
        vec![("graphql_list_mismatch", "Query.shelf", "data.shelf.grid[*]")]
    );
}

#[test]
fn findings_are_capped() {
    let ts = lib();
    let q = "{ search(q: \"x\") { ... on Book { id title pages rating genre tags } ... on Author { id name } __typename } }";
    let body = json!({"data":{"search":[
            {"__typename":"Book","id":[],"title":1,"pages":"x","rating":"y","genre":"Z","tags":3},
            {"__typename":"Author","id":{},"name":2},
            {"__typename":"Nope"},
            {"__typename":"Book"}]}});
    let f = run(&ts, q, json!({}), 200, body);
    assert_eq!(f.len(), MAX_FINDINGS, "{f:#?}");
}

#[test]
fn aliases_report_the_response_key_and_the_real_field() {
    let ts = demo();
    let q = r#"{ first: book(id: "1") { name: title } second: book(id: "2") { name: title } }"#;
    let good = json!({"data":{"first":{"name":"Dune"},"second":{"name":"Emma"}}});
    assert!(run(&ts, q, json!({}), 200, good).is_empty());
    let bad = json!({"data":{"first":{"name":"Dune"},"second":{"name":null}}});
    assert_eq!(
        codes(&run(&ts, q, json!({}), 200, bad)),
        vec![("graphql_null_violation", "Query.book", "data.second.name")]
    );
    let missing = json!({"data":{"first":{"title":"Dune"},"second":{"name":"Emma"}}});
    assert_eq!(
        codes(&run(&ts, q, json!({}), 200, missing)),
        vec![("graphql_missing_field", "Query.book", "data.first.name")]
    );
}

#[test]
fn fragments_on_interfaces_and_unions_with_typename() {
    let ts = lib();
    let q = r#"
            query Q($id: ID!) {
              node(id: $id) { __typename id ...BookParts ... on Author { name } }
              search(q: "x") { kind: __typename ... on Node { id } ... on Book { title genre } ... on Author { name } }
            }
            fragment BookParts on Book { title pages }
        "#;
    let good = json!({"data":{
            "node":{"__typename":"Book","id":"1","title":"Dune","pages":412},
            "search":[
                {"kind":"Book","id":"1","title":"Dune","genre":"SF"},
                {"kind":"Author","id":"2","name":"Frank"}]}});
    let f = check(
        &ts,
        q,
        Some("Q"),
        &json!({"id":"1"}),
        Some(200),
        Some(&good),
        "",
    );
    assert!(f.is_empty(), "{f:#?}");
    // Missing fields of the concrete type's fragments are found.
    let missing = json!({"data":{
            "node":{"__typename":"Author","id":"2"},
            "search":[{"kind":"Book","id":"1","title":"Dune"}]}});
    let f = check(
        &ts,
        q,
        Some("Q"),
        &json!({"id":"2"}),
        Some(200),
        Some(&missing),
        "",
    );
    assert_eq!(
        codes(&f),
        vec![
            ("graphql_missing_field", "Query.node", "data.node.name"),
            (
                "graphql_missing_field",
                "Query.search",
                "data.search[*].genre"
            ),
        ]
    );
    // A __typename outside the possible types, or unknown to the schema.
    for bad in ["Shelf", "Query", "Ghost", "Node"] {
        let body = json!({"data":{"node":{"__typename":bad,"id":"1"},"search":[]}});
        let f = check(
            &ts,
            q,
            Some("Q"),
            &json!({"id":"1"}),
            Some(200),
            Some(&body),
            "",
        );
        assert_eq!(
            codes(&f),
            vec![(
                "graphql_typename_violation",
                "Query.node",
                "data.node.__typename"
            )],
            "{bad}"
        );
    }
    // On an object type it must be the type itself.
    let obj_q = "{ shelf { __typename id } }";
    assert!(
        run(
            &ts,
            obj_q,
            json!({}),
            200,
            json!({"data":{"shelf":{"__typename":"Shelf","id":"1"}}})
        )
        .is_empty()
    );
    assert_eq!(
        codes(&run(
            &ts,
            obj_q,
            json!({}),
            200,
            json!({"data":{"shelf":{"__typename":"Book","id":"1"}}})
        )),
        vec![(
            "graphql_typename_violation",
            "Query.shelf",
            "data.shelf.__typename"
        )]
    );
}

#[test]
fn abstract_values_without_typename_are_checked_conservatively() {
    let ts = lib();
    // Without __typename the concrete type is unknown: `... on Book` fields
    // may be absent, but the interface's own fields are still checked.
    let q = "{ node(id: \"1\") { id ... on Book { title } } }";
    assert!(run(&ts, q, json!({}), 200, json!({"data":{"node":{"id":"1"}}})).is_empty());
    assert_eq!(
        codes(&run(
            &ts,
            q,
            json!({}),
            200,
            json!({"data":{"node":{"title":"Dune"}}})
        )),
        vec![("graphql_missing_field", "Query.node", "data.node.id")]
    );
    // Custom scalars accept anything.
    assert!(
        run(
            &ts,
            "{ meta }",
            json!({}),
            200,
            json!({"data":{"meta":{"a":[1,"b"]}}})
        )
        .is_empty()
    );
}

#[test]
fn skip_and_include() {
    let ts = demo();
    let q = r#"query ($noPrice: Boolean!, $withStock: Boolean = true, $unknown: Boolean) {
            book(id: "1") { title price @skip(if: $noPrice) stock @include(if: $withStock) status @skip(if: $unknown) tags @include(if: false) }
        }"#;
    let skipped = json!({"data":{"book":{"title":"Dune","stock":1}}});
    assert!(run(&ts, q, json!({"noPrice":true}), 200, skipped.clone()).is_empty());
    // Not skipped: now the price must be there.
    assert_eq!(
        codes(&run(&ts, q, json!({"noPrice":false}), 200, skipped)),
        vec![("graphql_missing_field", "Query.book", "data.book.price")]
    );
    // Without the default's field.
    let no_stock = json!({"data":{"book":{"title":"Dune"}}});
    assert_eq!(
        codes(&run(&ts, q, json!({"noPrice":true}), 200, no_stock)),
        vec![("graphql_missing_field", "Query.book", "data.book.stock")]
    );
    // A field under an unknown condition is checked only when present.
    let bad_status = json!({"data":{"book":{"title":"Dune","stock":1,"status":"NOPE"}}});
    assert_eq!(
        codes(&run(&ts, q, json!({"noPrice":true}), 200, bad_status)),
        vec![("graphql_enum_violation", "Query.book", "data.book.status")]
    );
    // Skipped fragments too.
    let fq = r#"{ book(id: "1") { title ... on Book @skip(if: true) { price } } }"#;
    assert!(
        run(
            &ts,
            fq,
            json!({}),
            200,
            json!({"data":{"book":{"title":"Dune"}}})
        )
        .is_empty()
    );
}

#[test]
fn operation_name_picks_the_operation() {
    let ts = demo();
    let q = r#"query A { authors { name } } mutation B { deleteAuthor(id: "1") }"#;
    let body = json!({"data":{"deleteAuthor":"yes"}});
    let f = check(&ts, q, Some("B"), &json!({}), Some(200), Some(&body), "");
    assert_eq!(
        codes(&f),
        vec![(
            "graphql_wrong_type",
            "Mutation.deleteAuthor",
            "data.deleteAuthor"
        )]
    );
    let ok = json!({"data":{"deleteAuthor":true}});
    assert!(check(&ts, q, Some("B"), &json!({}), Some(200), Some(&ok), "").is_empty());
}

#[test]
fn non_json_bodies_with_traces_leak() {
    let ts = demo();
    let text = "<html>Traceback (most recent call last):\n  File \"app.py\"</html>";
    let f = check(
        &ts,
        "{ authors { name } }",
        None,
        &json!({}),
        Some(200),
        None,
        text,
    );
    assert_eq!(codes(&f), vec![("stack_trace_leak", "Query.authors", "-")]);
}

#[test]
fn every_code_reported_is_a_graphql_oracle_of_the_registry() {
    let source = [
        include_str!("mod.rs"),
        include_str!("walk.rs"),
        include_str!("kinds.rs"),
    ]
    .concat();
    for o in crate::oracles::registry::ORACLES {
        // Every row the walk reports names a kind the walk's source makes
        // (the leaks' kinds come from `leaks::find`).
        if let crate::oracles::registry::GraphqlJudge::Walk(kind, _) = o.graphql {
            assert_eq!(graphql_code(kind), o.code, "one row per kind");
            if !matches!(kind, Kind::Leak(_)) {
                assert!(source.contains(&format!("Kind::{kind:?}")), "{}", o.code);
            }
        }
    }
}

#[test]
fn an_echoed_value_is_masked_whatever_quotes_it_holds() {
    let ts = demo();
    let q = "mutation M($name: String!) { createAuthor(name: $name) { id } }";
    let location = |name: &str| {
        let body = json!({"data": null, "errors": [{
            "message": format!("internal error: author \"{name}\" wasn't saved"),
            "path": ["createAuthor"]}]});
        run(&ts, q, json!({"name": name}), 200, body)
            .into_iter()
            .find(|f| f.kind == Kind::InternalError)
            .expect("an internal error")
            .location
    };
    let plain = location("Ann");
    assert_eq!(location(r#"O"Brien"#), plain);
    assert_eq!(location(r#"x\" y "z"#), plain);
    assert_eq!(location("it's 42"), plain);
    // Unquoted echoes of literals in the query are masked too.
    let literal = |id: &str| {
        let q = format!("{{ book(id: \"{id}\") {{ id }} }}");
        let body = json!({"data": {"book": null}, "errors": [{
            "message": format!("internal error: no book {id}"), "path": ["book"]}]});
        run(&ts, &q, json!({}), 200, body)
            .into_iter()
            .find(|f| f.kind == Kind::InternalError)
            .expect("an internal error")
            .location
    };
    assert_eq!(literal("abc"), literal("zzTop"));
}

#[test]
fn a_piece_of_a_value_is_masked_and_a_name_it_did_not_send_is_kept() {
    let ts = demo();
    let q = "mutation M($name: String!) { createAuthor(name: $name) { id } }";
    let location = |name: &str, message: &str| {
        let body = json!({"data": {"createAuthor": null}, "errors": [{
            "message": message, "path": ["createAuthor"],
            "extensions": {"code": "INTERNAL_SERVER_ERROR"}}]});
        run(&ts, q, json!({"name": name}), 200, body)
            .into_iter()
            .find(|f| f.kind == Kind::InternalError)
            .expect("an internal error")
            .location
    };
    // SQLite quotes what follows the quote that broke the statement: a
    // piece of the value, not a name of the server's.
    assert_eq!(
        location(
            "O'Brien",
            r#"internal error: SQLITE_ERROR: near "Brien": syntax error"#
        ),
        location(
            "x'tag",
            r#"internal error: SQLITE_ERROR: near "tag": syntax error"#
        )
    );
    // Which property was read of nothing is the server's, not the value's.
    let read = |property: &str| {
        location(
            "Ann",
            &format!("Cannot read properties of undefined (reading '{property}')"),
        )
    };
    assert_ne!(read("owner"), read("tags"));
    assert_eq!(read("owner"), read("owner"));
}

#[test]
fn errors_that_are_bare_strings_are_read_and_are_a_finding_of_their_own() {
    let ts = demo();
    let q = r#"{ book(id: "1") { title } }"#;
    let crash = "Traceback (most recent call last):\n  File \"app.py\", line 9, in resolve_book\n    return BOOKS[id]\nKeyError: '1'";
    let f = run(
        &ts,
        q,
        json!({}),
        200,
        json!({"data": null, "errors": [crash]}),
    );
    assert_eq!(
        codes(&f),
        vec![
            ("graphql_malformed_errors", "Query.book", "-"),
            ("stack_trace_leak", "Query.book", "-"),
            ("graphql_internal_error", "Query.book", "-"),
        ]
    );
    assert!(
        f[0].message.contains("`errors[0]` is a string"),
        "{}",
        f[0].message
    );
    // The exception names the crash, not the traceback's first line.
    assert!(f[2].message.ends_with("KeyError: '1'"), "{}", f[2].message);
    // Two crashes of two exceptions are two faults.
    let other = crash.replace("KeyError: '1'", "ZeroDivisionError: division by zero");
    let g = run(
        &ts,
        q,
        json!({}),
        200,
        json!({"data": null, "errors": [other]}),
    );
    assert_ne!(f[2].location, g[2].location);
    // One crash whatever was sent, line breaks in the value included.
    let m = "mutation M($name: String!) { createAuthor(name: $name) { id } }";
    let crash_of = |name: &str| {
        let text = format!(
            "Traceback (most recent call last):\n  File \"a.py\", line 3, in create\n    raise KeyError(name)\nKeyError: '{name}'"
        );
        run(
            &ts,
            m,
            json!({"name": name}),
            200,
            json!({"data": null, "errors": [text]}),
        )
        .into_iter()
        .find(|f| f.kind == Kind::InternalError)
        .expect("an internal error")
        .location
    };
    assert_eq!(crash_of("ab\ncd"), crash_of("xy\nzw"));
    assert_eq!(crash_of("ab\ncd"), crash_of("plain"));
    // A value longer than the excerpt is hidden whole.
    assert_eq!(crash_of(&"a".repeat(500)), crash_of("plain"));

    // A bare string that is an ordinary refusal is only malformed.
    let plain = json!({"data": {"book": null}, "errors": ["book 1 not found"]});
    assert_eq!(
        codes(&run(&ts, q, json!({}), 200, plain)),
        vec![("graphql_malformed_errors", "Query.book", "-")]
    );
    // An object without a `message`: its text is still judged.
    let no_message = json!({"data": null, "errors": [{"error": "internal server error"}]});
    let f = run(&ts, q, json!({}), 200, no_message);
    assert_eq!(
        codes(&f),
        vec![
            ("graphql_malformed_errors", "Query.book", "-"),
            ("graphql_internal_error", "Query.book", "-"),
        ]
    );
    assert!(
        f[0].message.contains("without a `message`"),
        "{}",
        f[0].message
    );
    // `errors` that is not a list at all.
    let not_a_list = json!({"data": null, "errors": "boom"});
    let f = run(&ts, q, json!({}), 200, not_a_list);
    assert_eq!(
        codes(&f),
        vec![("graphql_malformed_errors", "Query.book", "-")]
    );
    assert!(
        f[0].message.contains("`errors` is a string, not a list"),
        "{}",
        f[0].message
    );
    // The spec's form is no finding.
    let good = json!({"data": {"book": null}, "errors": [{"message": "book 1 not found", "path": ["book"]}]});
    assert!(run(&ts, q, json!({}), 200, good).is_empty());
}

#[test]
fn a_stack_trace_in_a_message_is_an_internal_failure() {
    let ts = demo();
    let q = r#"{ book(id: "1") { title } }"#;
    let body = json!({"data": {"book": null}, "errors": [{
        "message": "Exception in thread \"main\" java.lang.IllegalStateException: closed\n\tat org.acme.Books.get(Books.java:12)",
        "path": ["book"]}]});
    assert_eq!(
        codes(&run(&ts, q, json!({}), 200, body)),
        vec![
            ("stack_trace_leak", "Query.book", "data.book"),
            ("graphql_internal_error", "Query.book", "data.book"),
        ]
    );
}

#[test]
fn a_message_refusing_the_input_wins_over_a_stamped_internal_code() {
    let ts = demo();
    let q = "mutation M($name: String!) { createAuthor(name: $name) { id } }";
    let stamped = json!({"code": "INTERNAL_SERVER_ERROR"});
    for (message, path) in [
        (
            "Variable \"$name\" of non-null type \"String!\" must not be null.",
            Value::Null,
        ),
        (
            "Variable \"$name\" got invalid value null; Expected non-nullable type \"String!\" not to be null.",
            Value::Null,
        ),
        (
            "Variable \"$name\" of required type \"String!\" was not provided.",
            Value::Null,
        ),
        (
            "Variable 'name' has coerced Null value for NonNull type 'String!'",
            Value::Null,
        ),
        (
            "Argument \"name\" of required type \"String!\" was not provided.",
            json!(["createAuthor"]),
        ),
        (
            "Argument \"name\" of non-null type \"String!\" must not be null.",
            json!(["createAuthor"]),
        ),
        (
            "Field \"AuthorInput.name\" of required type \"String!\" was not provided.",
            Value::Null,
        ),
        (
            "Unknown argument \"nom\" on field \"Mutation.createAuthor\".",
            Value::Null,
        ),
        (
            "Expected value of type \"String!\", found null.",
            Value::Null,
        ),
    ] {
        let body = json!({"data": null, "errors": [{"message": message, "path": path, "extensions": stamped}]});
        assert_eq!(
            codes(&run(&ts, q, json!({"name": null}), 200, body)),
            vec![("graphql_validation_error", "Mutation.createAuthor", {
                if path.is_null() {
                    "-"
                } else {
                    "data.createAuthor"
                }
            })],
            "{message}"
        );
    }
    // The code alone, or an output the server could not serialise (it has
    // a path), still says the server failed.
    for (message, path) in [
        ("boom", json!(["createAuthor"])),
        (
            "String cannot represent value: {\"a\": 1}",
            json!(["createAuthor", "id"]),
        ),
        ("name must not be null", json!(["createAuthor"])),
    ] {
        let body = json!({"data": null, "errors": [{"message": message, "path": path, "extensions": stamped}]});
        assert_eq!(
            run(&ts, q, json!({"name": "Ann"}), 200, body)
                .iter()
                .map(|f| code(f.kind))
                .collect::<Vec<_>>(),
            vec!["graphql_internal_error"],
            "{message}"
        );
    }
}

/// A schema whose arguments take custom scalars, directly and in an input.
const LEDGER_SDL: &str = r#"
    scalar BigInt
    scalar Date
    scalar UUID
    scalar Value
    input Filter { since: Date, name: String }
    type Account { id: UUID! balance: BigInt! }
    type Query {
      account(id: UUID!, min: BigInt, filter: Filter, v: Value): Account
      count(name: String!): Int
    }
"#;

#[test]
fn a_refusal_of_a_value_made_up_for_a_custom_scalar_is_no_finding() {
    let ts = crate::load::load_text(LEDGER_SDL, Path::new("ledger.graphql"))
        .unwrap()
        .api
        .graphql
        .unwrap();
    let q = "query Q($id: UUID!, $min: BigInt, $f: Filter, $v: Value) { account(id: $id, min: $min, filter: $f, v: $v) { id } }";
    let vars = json!({"id": "abc", "min": "12", "f": {"since": "x", "name": 5}, "v": 1});
    let judged = |message: &str, ext: Value| {
        let body = json!({"data": null, "errors": [{"message": message, "locations": [{"line": 1, "column": 60}], "extensions": ext}]});
        run(&ts, q, vars.clone(), 200, body)
            .iter()
            .map(|f| code(f.kind))
            .collect::<Vec<_>>()
    };
    for (message, ext) in [
        (
            "Variable \"$id\" got invalid value \"abc\"; Expected type \"UUID\". Value is not a valid UUID",
            Value::Null,
        ),
        (
            "Variable \"$id\" got invalid value \"abc\"; Expected type \"UUID\".",
            json!({"code": "INTERNAL_SERVER_ERROR"}),
        ),
        (
            "Invalid value for argument \"id\", expected type \"UUID\"",
            Value::Null,
        ),
        (
            "Failed to parse \"BigInt\": invalid digit found in string",
            Value::Null,
        ),
        (
            "Variable \"$f\" got invalid value \"x\" at \"f.since\"; Expected type \"Date\". Date cannot represent an invalid date-string x.",
            Value::Null,
        ),
        (
            "Variable 'id' has an invalid value: Invalid UUID string: abc",
            json!({"classification": "ValidationError"}),
        ),
        (
            "Validation error (WrongType@[account]) : argument 'id' with value 'StringValue{value='abc'}' is not a valid 'UUID'",
            Value::Null,
        ),
    ] {
        assert!(judged(message, ext).is_empty(), "{message}");
    }
    // Refusals of the document, of a built-in scalar's value, or of a null:
    // the query's own mistakes, custom scalar named or not.
    for message in [
        "Variable \"$f\" got invalid value 5 at \"f.name\"; String cannot represent a non string value: 5",
        "Variable \"$id\" of type \"UUID!\" used in position expecting type \"ID!\".",
        "Unknown type \"UUID\".",
        "Variable \"$id\" of non-null type \"UUID!\" must not be null.",
        "Invalid value for argument \"count\", expected type \"Int\"",
        // A scalar is named by its name as written: `Value` is not "value".
        "Invalid value for argument \"filter\": the value is not accepted",
    ] {
        assert_eq!(
            judged(message, Value::Null),
            ["graphql_validation_error"],
            "{message}"
        );
    }
    let value = "Variable \"$v\" got invalid value 1; Expected type \"Value\".";
    assert!(judged(value, Value::Null).is_empty());
}

#[test]
fn error_checks_carry_what_made_the_rules_judge_at_the_errors_path() {
    let body = serde_json::json!({"data": null, "errors": [
        {"message": "Cannot return null for non-nullable field Book.title.", "path": ["books", 2, "title"]},
        {"message": "boom", "path": ["x"], "extensions": {"code": "internal-server-error"}},
        {"message": "Cannot query field \"nope\" on type \"Query\"."},
    ]});
    let check = |code, path| error_check(Some(&body), code, path, 200);
    let said = |path: &str, text: &str| {
        Some(crate::oracles::FaultCheck::GraphqlError {
            status: 200,
            path: path.into(),
            text: text.into(),
        })
    };
    assert_eq!(
        check(Evidence::NullReport, "data.books[*].title"),
        said("data.books[*].title", "cannot return null for non-nullable")
    );
    // The code as the server wrote it.
    assert_eq!(
        check(Evidence::Internal, "data.x"),
        said("data.x", "internal-server-error")
    );
    assert_eq!(
        check(Evidence::Validation, "-"),
        said("-", "cannot query field")
    );
    // Nothing there says it: no check of that kind.
    assert_eq!(check(Evidence::Internal, "data.books[*].title"), None);
    assert_eq!(check(Evidence::Internal, "data.y"), None);
}
