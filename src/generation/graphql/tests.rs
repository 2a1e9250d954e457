//! The GraphQL protocol in the search on small schemas: which mutations
//! prepare a call, how values flow along consumes edges, and how answers
//! refine the graph.

use super::*;
use crate::execution::{Driver, RequestSpec, TestRun};
use crate::graph::feedback::Change;
use crate::graph::{EdgeKind, EdgeState};

use serde_json::json;
use std::path::Path;

fn load(sdl: &str) -> (Arc<Api>, TypeSystem, PropertyGraph) {
    let loaded = crate::load::load_text(sdl, Path::new("schema.graphql")).unwrap();
    let graph = crate::graph::build(&loaded.api);
    let ts = loaded.api.graphql.clone().unwrap();
    (Arc::new(loaded.api), ts, graph)
}

fn config(seed: u64, use_graph: bool) -> SearchConfig {
    SearchConfig {
        mio: Default::default(),
        seed,
        read_only: false,
        use_graph,
        max_requests: Some(1000),
        budget: None,
        skip_checks: Vec::new(),
        target: None,
        identities: Vec::new(),
        main_identity: None,
    }
}

type Searcher = Search<Graphql>;

fn searcher(
    api: Arc<Api>,
    ts: &TypeSystem,
    graph: PropertyGraph,
    feedback: Option<Feedback>,
    config: SearchConfig,
) -> Searcher {
    Search::graphql(api, ts, graph, feedback, config)
}

fn driver(sdl: &str, seed: u64, use_graph: bool, lambda: u32) -> Searcher {
    let (api, ts, graph) = load(sdl);
    searcher(
        api,
        &ts,
        graph,
        Some(Feedback::new(lambda)),
        config(seed, use_graph),
    )
}

fn names(test: &GqlTest) -> Vec<String> {
    test.calls.iter().map(|c| c.genes.field.clone()).collect()
}

/// Sampled tests ending in `field`.
fn samples_ending_in(d: &mut Searcher, field: &str) -> Vec<Vec<String>> {
    (0..400)
        .map(|_| d.sample())
        .filter(|t| t.calls.last().is_some_and(|c| c.genes.field == field))
        .map(|t| names(&t))
        .collect()
}

/// A test of these calls of `d`'s root fields.
fn test_of(d: &Searcher, calls: Vec<GqlCall>) -> GqlTest {
    let positions = d.api().operation_positions();
    let calls = calls
        .into_iter()
        .map(|c| {
            let word = if c.root == "Mutation" {
                "Mutation"
            } else {
                "Query"
            };
            let op = positions
                .get(&format!("{word}.{}", c.field))
                .copied()
                .expect("a root field of the schema");
            Call::of(op, c)
        })
        .collect();
    TestCase::of(calls, Sampler::Random, 0)
}

fn answer(seq: u64, request: RequestSpec, body: Value) -> Exchange {
    Exchange {
        seq,
        request,
        status: Some(200),
        body: body.to_string(),
        ..Default::default()
    }
}

/// Runs `calls` in `d`, answering call k with `answers[k]`; the run and
/// its exchanges.
fn run(d: &mut Searcher, calls: Vec<GqlCall>, answers: &[Value]) -> (GqlRun, Vec<Exchange>) {
    let test = test_of(d, calls);
    let mut run = d.run(test);
    let mut done: Vec<Exchange> = Vec::new();
    for (k, body) in answers.iter().enumerate() {
        let req = run.next_request(&done).expect("a request per call");
        done.push(answer(k as u64, req, body.clone()));
    }
    assert!(run.next_request(&done).is_none());
    (run, done)
}

/// `root.field` selecting only `id` (when it returns an object), with
/// these arguments.
fn call(root: &str, field: &str, args: &[(&str, Value)]) -> GqlCall {
    let on = match field {
        "createAuthor" | "author" => "Author",
        "createBook" | "book" => "Book",
        "placeOrder" | "order" => "Order",
        _ => "",
    };
    GqlCall {
        root: root.into(),
        field: field.into(),
        args: args
            .iter()
            .map(|(n, v)| (n.to_string(), Some(v.clone())))
            .collect(),
        selection: (!on.is_empty()).then(|| Selection {
            on: on.into(),
            typename: false,
            fields: vec![FieldSelection {
                name: "id".into(),
                args: Vec::new(),
                selection: None,
            }],
            fragments: Vec::new(),
        }),
        breach: None,
    }
}

fn arg<'c>(c: &'c GqlCall, name: &str) -> Option<&'c Value> {
    c.args.iter().find(|(n, _)| n == name)?.1.as_ref()
}

#[test]
fn the_graph_says_which_mutations_create_what_a_query_needs() {
    let mut d = driver(crate::demo::GRAPHQL_SDL, 7, true, 3);
    let books = samples_ending_in(&mut d, "book");
    assert!(books.len() > 10, "{books:?}");
    for t in &books {
        // book(id) ← Book.id ← createBook(authorId) ← Author.id ← createAuthor.
        assert_eq!(t[..2], ["createAuthor", "createBook"], "{t:?}");
    }
    // placeOrder is not named `create…`, but it is the mutation returning
    // an Order, so it is the one order(id) is prepared with.
    let orders = samples_ending_in(&mut d, "order");
    assert!(!orders.is_empty());
    for t in &orders {
        assert_eq!(t[..2], ["createBook", "placeOrder"], "{t:?}");
    }
    // Nothing feeds createAuthor's arguments.
    for t in samples_ending_in(&mut d, "createAuthor") {
        assert_eq!(t, ["createAuthor"]);
    }
}

#[test]
fn without_the_graph_tests_are_random_calls() {
    let mut d = driver(crate::demo::GRAPHQL_SDL, 7, false, 3);
    for _ in 0..200 {
        assert_eq!(d.sample().calls.len(), 1);
    }
    let (run, _) = run(
        &mut d,
        vec![
            call("Mutation", "createAuthor", &[("name", json!("Ann"))]),
            call("Query", "author", &[("id", json!("999"))]),
        ],
        &[
            json!({"data": {"createAuthor": {"id": "17"}}}),
            json!({"data": {"author": null}}),
        ],
    );
    assert_eq!(arg(&run.test.calls[1].genes, "id"), Some(&json!("999")));
    assert!(run.used.iter().all(Vec::is_empty));
}

#[test]
fn ids_flow_along_consumes_edges_and_are_recorded_per_call() {
    let mut d = driver(crate::demo::GRAPHQL_SDL, 1, true, 3);
    let calls = vec![
        call("Mutation", "createAuthor", &[("name", json!("Ann"))]),
        call(
            "Mutation",
            "createBook",
            &[
                ("authorId", json!("0")),
                ("input", json!({"title": "T", "price": 1.5, "stock": 2})),
            ],
        ),
        call("Mutation", "deleteAuthor", &[("id", json!("0"))]),
        call("Query", "book", &[("id", json!("0"))]),
        call("Query", "order", &[("id", json!("5"))]),
    ];
    let (run, _) = run(
        &mut d,
        calls,
        &[
            json!({"data": {"createAuthor": {"id": 17}}}),
            json!({"data": {"createBook": {"id": "42"}}}),
            json!({"data": {"deleteAuthor": true}}),
            json!({"data": {"book": {"id": "42"}}}),
            json!({"data": {"order": null}}),
        ],
    );
    let sent: Vec<&GqlCall> = run.test.calls.iter().map(|c| &c.genes).collect();
    // A number answered for an ID travels as its text.
    assert_eq!(arg(sent[1], "authorId"), Some(&json!("17")));
    assert_eq!(arg(sent[2], "id"), Some(&json!("17")));
    assert_eq!(arg(sent[3], "id"), Some(&json!("42")));
    // No Order came back: order(id) keeps its own value.
    assert_eq!(arg(sent[4], "id"), Some(&json!("5")));
    assert_eq!(
        run.used,
        vec![
            vec![],
            vec![("Author".to_string(), 0)],
            vec![("Author".to_string(), 0)],
            vec![("Book".to_string(), 1)],
            vec![],
        ]
    );
}

#[test]
fn input_object_fields_bound_by_the_graph_are_created_and_fed() {
    let sdl = "type Query { book(id: ID!): Book }
            type Mutation { createAuthor(name: String!): Author! createBook(input: BookInput!): Book! }
            type Author { id: ID! name: String! }
            type Book { id: ID! title: String! }
            input BookInput { authorId: ID! title: String! }";
    let (api, ts, graph) = load(sdl);
    // graph::build binds the input object's id field: `input.authorId ← Author.id`.
    let (author, create) = (
        graph.schema("Author").unwrap(),
        graph.operation("Mutation.createBook").unwrap(),
    );
    assert!(
        graph
            .find_edge(author, create, EdgeKind::Consumes)
            .is_some()
    );
    let mut d = searcher(api, &ts, graph, None, config(4, true));
    let books = samples_ending_in(&mut d, "book");
    assert!(!books.is_empty());
    for t in &books {
        assert_eq!(t[..2], ["createAuthor", "createBook"], "{t:?}");
    }
    let (run, _) = run(
        &mut d,
        vec![
            call("Mutation", "createAuthor", &[("name", json!("Ann"))]),
            call(
                "Mutation",
                "createBook",
                &[("input", json!({"authorId": "1", "title": "T"}))],
            ),
        ],
        &[
            json!({"data": {"createAuthor": {"id": "17"}}}),
            json!({"data": {"createBook": {"id": "42"}}}),
        ],
    );
    assert_eq!(
        arg(&run.test.calls[1].genes, "input"),
        Some(&json!({"authorId": "17", "title": "T"}))
    );
    assert_eq!(run.used[1], [("Author".to_string(), 0)]);
}

#[test]
fn an_answer_the_schema_does_not_promise_teaches_a_producer() {
    let sdl = "scalar JSON
            type Query { book(id: ID!): Book }
            type Mutation { touch: JSON }
            type Book { id: ID! title: String! }";
    let mut d = driver(sdl, 5, true, 3);
    for t in samples_ending_in(&mut d, "book") {
        assert_eq!(t, ["book"], "nothing is known to make a Book");
    }
    let touch = GqlCall {
        root: "Mutation".into(),
        field: "touch".into(),
        args: Vec::new(),
        selection: None,
        breach: None,
    };
    let (r, ex) = run(
        &mut d,
        vec![touch],
        &[json!({"data": {"touch": {"id": "8", "title": "Dune"}}})],
    );
    d.finished(Box::new(r), &ex);
    assert_eq!(
        d.changes(),
        [Change::Produces {
            operation: "Mutation.touch".into(),
            schema: "Book".into()
        }]
    );
    // The lookup is rebuilt: book(id) is now prepared with touch.
    let books = samples_ending_in(&mut d, "book");
    assert!(!books.is_empty());
    for t in books {
        assert_eq!(t[0], "touch", "{t:?}");
    }
}

/// The edge `schema → op`, and its state.
fn state(g: &PropertyGraph, schema: &str, op: &str) -> EdgeState {
    let e = g
        .find_edge(
            g.schema(schema).unwrap(),
            g.operation(op).unwrap(),
            EdgeKind::Consumes,
        )
        .unwrap();
    g.graph[e].state
}

#[test]
fn lambda_failed_answers_suspend_the_edge_and_a_success_reactivates_it() {
    let mut d = driver(crate::demo::GRAPHQL_SDL, 2, true, 3);
    let test = || {
        vec![
            call("Mutation", "createAuthor", &[("name", json!("Ann"))]),
            call("Query", "author", &[("id", json!("0"))]),
        ]
    };
    let created = json!({"data": {"createAuthor": {"id": "17"}}});
    for k in 0..3 {
        assert_eq!(
            state(d.graph(), "Author", "Query.author"),
            EdgeState::Active,
            "after {k} failure(s)"
        );
        // Null data with an error: the id given did not work (an answer
        // of 200 all the same).
        let (r, ex) = run(
            &mut d,
            test(),
            &[
                created.clone(),
                json!({"data": {"author": null}, "errors": [{"message": "no author 17"}]}),
            ],
        );
        assert_eq!(r.used[1], [("Author".to_string(), 0)]);
        d.finished(Box::new(r), &ex);
    }
    assert_eq!(
        state(d.graph(), "Author", "Query.author"),
        EdgeState::Suspended
    );
    assert!(d.changes().contains(&Change::Suspended {
        schema: "Author".into(),
        operation: "Query.author".into()
    }));
    assert_eq!(
        state(d.graph(), "Author", "Mutation.deleteAuthor"),
        EdgeState::Active,
        "only the failing edge"
    );
    // The cached lookup follows: author(id) is no longer prepared with
    // createAuthor, and its id flows only now and then.
    for t in samples_ending_in(&mut d, "author") {
        assert_eq!(t.len(), 1, "{t:?}");
    }
    let mut flowed = false;
    for _ in 0..200 {
        let (r, ex) = run(
            &mut d,
            test(),
            &[created.clone(), json!({"data": {"author": {"id": "17"}}})],
        );
        if !r.used[1].is_empty() {
            // It worked: the edge is back.
            d.finished(Box::new(r), &ex);
            flowed = true;
            break;
        }
    }
    assert!(flowed, "a suspended edge is retried now and then");
    assert_eq!(
        state(d.graph(), "Author", "Query.author"),
        EdgeState::Active
    );
    assert!(matches!(
        d.changes().last(),
        Some(Change::Reactivated { .. })
    ));
}

#[test]
fn a_query_the_validator_refuses_is_not_sent_and_is_said_once() {
    let mut d = driver(crate::demo::GRAPHQL_SDL, 1, true, 3);
    let good = call("Query", "author", &[("id", json!("1"))]);
    let mut bad = good.clone();
    if let Some(s) = bad.selection.as_mut() {
        s.fields[0].name = "nope".into();
    }
    assert!(d.protocol().invalid_queries().is_none());
    for _ in 0..2 {
        let mut run = d.run(test_of(&d, vec![good.clone(), bad.clone()]));
        let first = run.next_request(&[]).expect("the valid call is sent");
        let done = vec![answer(0, first, json!({"data": {"author": {"id": "1"}}}))];
        assert!(run.next_request(&done).is_none(), "the invalid one is not");
    }
    let w = d.protocol().invalid_queries().expect("counted");
    assert!(
        w.starts_with("2 generated GraphQL queries were invalid against the schema and not sent"),
        "{w}"
    );
    assert!(w.contains("nope"), "{w}");
}
