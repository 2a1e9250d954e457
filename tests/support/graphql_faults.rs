//! A purpose-built GraphQL server that shows each kind of schema fault once.
//!
//! It serves the library catalogue of [`SCHEMA_PATH`] on `POST /graphql` and
//! answers the operations of [`QUERIES_PATH`] by name (`operationName`, else
//! the name in the query text) with canned HTTP 200 JSON bodies. Each canned
//! answer is correct in every way (every selected field present, nullability,
//! scalar types, enum values, list shapes and `__typename`s as the schema
//! says) except exactly ONE fault of one kind, listed in [`EXPECTED`]; the
//! answer to `Conforming` (fragments, aliases, `@include`, a union and an
//! interface, nested lists, nulls where the schema allows them) has none. Any
//! other operation gets `{"errors": [{"message": "unknown operation"}]}`.

use std::net::{Ipv4Addr, SocketAddr};

use axum::routing::post;
use axum::{Json, Router};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// The schema the server answers by, relative to the crate root.
pub const SCHEMA_PATH: &str = "fixtures/graphql/fault-kinds/schema.graphql";

/// One request per fault kind and the `Conforming` one, as NDJSON lines of
/// `{"query", "variables", "operationName"}`, relative to the crate root.
pub const QUERIES_PATH: &str = "fixtures/graphql/fault-kinds/queries.ndjson";

/// The operation whose answer is fully correct.
pub const CONFORMING: &str = "Conforming";

/// The root field of [`CONFORMING`], which no faulting operation selects.
pub const CONFORMING_ROOT: &str = "Query.shelf";

/// Per faulting operation, the one finding its answer must yield:
/// (operationName, code, root field, response path).
pub const EXPECTED: &[(&str, &str, &str, &str)] = &[
    // `isbn` (String!) selected but left out of the book.
    (
        "MissingField",
        "graphql_missing_field",
        "Query.book",
        "data.book.isbn",
    ),
    // The second book's `title` (String!) is null, and no error explains it.
    (
        "NullViolation",
        "graphql_null_violation",
        "Query.author",
        "data.author.books[*].title",
    ),
    // The second book's `pages` (Int!) is the string "288".
    (
        "WrongType",
        "graphql_wrong_type",
        "Query.books",
        "data.books[*].pages",
    ),
    // `frequency` (Frequency!) is "BIWEEKLY", not one of the enum's values.
    (
        "EnumViolation",
        "graphql_enum_violation",
        "Query.magazine",
        "data.magazine.frequency",
    ),
    // A list stands where an object was promised: the book's `author` (Author!).
    (
        "ListMismatchObject",
        "graphql_list_mismatch",
        "Query.publication",
        "data.publication.author",
    ),
    // An object stands where a list was promised: an author's `books` ([Book!]!).
    (
        "ListMismatchList",
        "graphql_list_mismatch",
        "Query.authors",
        "data.authors[*].books",
    ),
    // A search result claims to be a `Periodical`, not a Book or a Magazine.
    (
        "TypenameViolation",
        "graphql_typename_violation",
        "Query.search",
        "data.search[*].__typename",
    ),
];

/// Starts the server on a free loopback port; its endpoint is
/// `http://{addr}/graphql`. Abort the handle to stop it.
pub async fn start() -> (SocketAddr, JoinHandle<()>) {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .expect("a free loopback port");
    let addr = listener.local_addr().expect("a bound address");
    let router = Router::new().route("/graphql", post(graphql));
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (addr, task)
}

/// Takes the raw body (whatever its content type) and answers by operation.
async fn graphql(body: String) -> Json<Value> {
    let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let name = request["operationName"]
        .as_str()
        .map(str::to_string)
        .or_else(|| request["query"].as_str().and_then(name_in_query));
    Json(answer(name.as_deref().unwrap_or("")))
}

/// The name of the first named operation of a query text (`query Name(...`).
fn name_in_query(query: &str) -> Option<String> {
    let rest = query.trim_start().strip_prefix("query")?.trim_start();
    let name: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// A book as the `BookCard` fragment of `Conforming` selects it.
fn book_card(id: &str, title: &str, year: Value, genre: &str, pages: i64, price: Value) -> Value {
    json!({
        "id": id,
        "title": title,
        "year": year,
        "isbn": format!("978-0-00-{id}"),
        "genre": genre,
        "pages": pages,
        "price": price,
        "onLoan": false,
        "tags": ["staff-pick", "new"],
    })
}

/// The canned answer to operation `name`.
pub fn answer(name: &str) -> Value {
    match name {
        "MissingField" => json!({"data": {"book": {
            "id": "b1",
            "title": "The River Keeper",
            "genre": "FICTION",
            "author": {"name": "Ada Moreau"},
        }}}),
        "NullViolation" => json!({"data": {"author": {
            "id": "a1",
            "name": "Ada Moreau",
            "books": [
                {"title": "The River Keeper", "genre": "FICTION"},
                {"title": null, "genre": "POETRY"},
            ],
        }}}),
        "WrongType" => json!({"data": {"books": [
            // A whole-number Float is still a Float.
            {"id": "b1", "title": "The River Keeper", "pages": 320, "price": 14.5, "onLoan": false},
            {"id": "b2", "title": "Salt Roads", "pages": "288", "price": 9, "onLoan": true},
        ]}}),
        "EnumViolation" => json!({"data": {"magazine": {
            "id": "m1",
            "title": "Tidewater Monthly",
            "issue": 42,
            "frequency": "BIWEEKLY",
        }}}),
        "ListMismatchObject" => json!({"data": {"publication": {
            "__typename": "Book",
            "id": "b1",
            "title": "The River Keeper",
            "author": [{"name": "Ada Moreau"}],
        }}}),
        "ListMismatchList" => json!({"data": {"authors": [
            {"id": "a1", "name": "Ada Moreau", "books": [{"title": "The River Keeper"}]},
            {"id": "a2", "name": "Jonas Brandt", "books": {"title": "Salt Roads"}},
        ]}}),
        "TypenameViolation" => json!({"data": {"search": [
            {"__typename": "Book", "title": "The River Keeper", "isbn": "978-0-00-b1"},
            {"__typename": "Magazine", "title": "River Life", "issue": 7},
            {"__typename": "Periodical", "title": "Rivers Quarterly", "issue": 3},
        ]}}),
        CONFORMING => {
            let mut first = book_card(
                "b1",
                "The River Keeper",
                json!(2021),
                "FICTION",
                320,
                json!(14.5),
            );
            first["author"] = json!({
                "name": "Ada Moreau",
                "born": 1979,
                "books": [{"title": "The River Keeper"}, {"title": "Low Water"}],
            });
            let mut second = book_card("b3", "Small Hours", Value::Null, "POETRY", 96, Value::Null);
            second["tags"] = json!([]);
            second["author"] =
                json!({"name": "Noor Haddad", "born": null, "books": [{"title": "Small Hours"}]});
            let mut item = book_card("b2", "Salt Roads", json!(2019), "NONFICTION", 288, json!(9));
            item["__typename"] = json!("Book");
            json!({"data": {"shelf": {
                "id": "s1",
                "heading": "New arrivals",
                "books": [first, second],
                "items": [
                    item,
                    {"__typename": "Magazine", "id": "m1", "title": "Tidewater Monthly", "issue": 42, "frequency": "MONTHLY"},
                ],
                "featured": {
                    "__typename": "Magazine",
                    "id": "m1",
                    "title": "Tidewater Monthly",
                    "year": 2024,
                    "editors": [{"name": "Lena Ortiz"}, {"name": "Sam Okafor"}],
                },
            }}})
        }
        _ => json!({"errors": [{"message": "unknown operation"}]}),
    }
}
