//! A purpose-built GraphQL server that answers HTTP 200 to everything, as
//! many do, errors included: `Query.book` crashes on the faulty server (an
//! `errors` entry at `["book"]`, `Cannot read properties of undefined`),
//! and answers the book on its twin. A reproducer that checked only the
//! status could not tell them apart.

use std::net::{Ipv4Addr, SocketAddr};

use async_graphql::{EmptySubscription, Error, ID, Object, Result, Schema, SimpleObject};
use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

#[derive(SimpleObject, Clone)]
struct Book {
    id: ID,
    title: String,
}

struct Query {
    faulty: bool,
}

#[Object]
impl Query {
    async fn book(&self, id: ID) -> Result<Option<Book>> {
        if self.faulty {
            return Err(Error::new(
                "TypeError: Cannot read properties of undefined (reading 'title')",
            ));
        }
        Ok(Some(Book {
            id,
            title: "Dune".into(),
        }))
    }

    async fn books(&self) -> Vec<Book> {
        vec![Book {
            id: ID::from("1"),
            title: "Dune".into(),
        }]
    }
}

struct Mutation;

#[Object]
impl Mutation {
    async fn rename(&self, title: String) -> Book {
        Book {
            id: ID::from("1"),
            title,
        }
    }
}

type Shop = Schema<Query, Mutation, EmptySubscription>;

/// Starts the faulty server (or its twin, where `Query.book` answers) on
/// a free loopback port; its endpoint is `/graphql`.
pub async fn start(faulty: bool) -> (SocketAddr, JoinHandle<()>) {
    let schema = Schema::build(Query { faulty }, Mutation, EmptySubscription).finish();
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .expect("a free loopback port");
    let addr = listener.local_addr().expect("a bound address");
    let router = Router::new()
        .route("/graphql", post(graphql))
        .with_state(schema);
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (addr, task)
}

/// Every answer is 200, whatever went wrong.
async fn graphql(State(schema): State<Shop>, body: String) -> Json<serde_json::Value> {
    let answer = match serde_json::from_str::<async_graphql::Request>(&body) {
        Ok(request) => schema.execute(request).await,
        Err(e) => async_graphql::Response::from_errors(vec![async_graphql::ServerError::new(
            e.to_string(),
            None,
        )]),
    };
    Json(serde_json::to_value(&answer).unwrap_or_default())
}
