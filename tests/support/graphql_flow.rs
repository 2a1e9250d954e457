//! A purpose-built GraphQL server whose ids only a query lists: three events
//! exist from the start (no mutation creates or returns one; a paginated
//! query lists them), people are created, and a link mutation takes one id
//! of each and answers a bare `true`. Event ids are a `UUID` scalar the
//! server checks; person ids are `ID`s that are UUIDs too. The server counts
//! what reached it, so a test can tell whether values flowed.

use std::collections::BTreeSet;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_graphql::{
    Context, EmptySubscription, Error, ID, InputValueError, InputValueResult, Object, Result,
    Scalar, ScalarType, Schema, SimpleObject, Value,
};
use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// What reached the server.
#[derive(Debug, Default)]
pub struct Counts {
    /// `event(id:)` calls naming an event that exists.
    pub event_found: AtomicU64,
    /// `event(id:)` calls with a well-formed UUID.
    pub event_calls: AtomicU64,
    /// `addPersonToEvent` calls that linked a real person to a real event.
    pub linked: AtomicU64,
    /// `person(id:)` calls naming a person that exists.
    pub person_found: AtomicU64,
    /// `UUID` values sent, anywhere in a query.
    pub uuids_sent: AtomicU64,
    /// Those of them that were malformed.
    pub uuids_malformed: AtomicU64,
    /// The distinct malformed `UUID` values sent.
    pub malformed_values: Mutex<BTreeSet<String>>,
}

impl Counts {
    /// One counter's value.
    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}

/// Whether `s` reads `8-4-4-4-12` hexadecimal digits.
fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.chars().all(|c| c.is_ascii_hexdigit()))
}

tokio::task_local! {
    /// The counts of the server executing the request: a scalar's parser
    /// sees no context, and a static would mix the counts of every server
    /// of the test process.
    static COUNTS: Arc<Counts>;
}

/// The `UUID` scalar: text in the canonical form, else a GraphQL error.
#[derive(Clone)]
struct Uuid(String);

#[Scalar(name = "UUID")]
impl ScalarType for Uuid {
    fn parse(value: Value) -> InputValueResult<Self> {
        COUNTS.with(|counts| {
            counts.uuids_sent.fetch_add(1, Ordering::Relaxed);
            match &value {
                Value::String(s) if is_uuid(s) => Ok(Uuid(s.clone())),
                _ => {
                    counts.uuids_malformed.fetch_add(1, Ordering::Relaxed);
                    let mut malformed = counts.malformed_values.lock().unwrap();
                    malformed.insert(value.to_string());
                    Err(InputValueError::custom("not a UUID"))
                }
            }
        })
    }

    fn to_value(&self) -> Value {
        Value::String(self.0.clone())
    }
}

#[derive(Clone, SimpleObject)]
struct Event {
    id: Uuid,
    title: String,
    attendees: Vec<String>,
}

/// A page of events, as paginated APIs list them.
#[derive(SimpleObject)]
struct EventConnection {
    nodes: Vec<Event>,
    total_count: i32,
}

#[derive(Clone, SimpleObject)]
struct Person {
    id: ID,
    name: String,
}

#[derive(Default)]
struct Store {
    events: Vec<Event>,
    people: Vec<Person>,
    next: u64,
}

impl Store {
    fn uuid(&mut self) -> String {
        self.next += 1;
        format!("6f1c2a3b-0000-4000-8000-{:012x}", self.next * 7919)
    }
}

type Shared = Arc<Mutex<Store>>;

struct Query;

#[Object]
impl Query {
    async fn events(&self, ctx: &Context<'_>, first: Option<i32>) -> EventConnection {
        let events = ctx
            .data_unchecked::<Shared>()
            .lock()
            .unwrap()
            .events
            .clone();
        let n = usize::try_from(first.unwrap_or(10)).unwrap_or(0);
        EventConnection {
            total_count: i32::try_from(events.len()).unwrap_or(0),
            nodes: events.into_iter().take(n).collect(),
        }
    }

    async fn event(&self, ctx: &Context<'_>, id: Uuid) -> Option<Event> {
        let counts = ctx.data_unchecked::<Arc<Counts>>();
        counts.event_calls.fetch_add(1, Ordering::Relaxed);
        let store = ctx.data_unchecked::<Shared>().lock().unwrap();
        let found = store.events.iter().find(|e| e.id.0 == id.0).cloned();
        if found.is_some() {
            counts.event_found.fetch_add(1, Ordering::Relaxed);
        }
        found
    }

    async fn people(&self, ctx: &Context<'_>) -> Vec<Person> {
        ctx.data_unchecked::<Shared>()
            .lock()
            .unwrap()
            .people
            .clone()
    }

    async fn person(&self, ctx: &Context<'_>, id: ID) -> Option<Person> {
        let store = ctx.data_unchecked::<Shared>().lock().unwrap();
        let found = store.people.iter().find(|p| p.id == id).cloned();
        if found.is_some() {
            let counts = ctx.data_unchecked::<Arc<Counts>>();
            counts.person_found.fetch_add(1, Ordering::Relaxed);
        }
        found
    }
}

struct Mutation;

#[Object]
impl Mutation {
    async fn create_person(&self, ctx: &Context<'_>, name: String) -> Person {
        let mut store = ctx.data_unchecked::<Shared>().lock().unwrap();
        let id = ID(store.uuid());
        let person = Person { id, name };
        store.people.push(person.clone());
        person
    }

    async fn add_person_to_event(
        &self,
        ctx: &Context<'_>,
        person_id: ID,
        event_id: Uuid,
    ) -> Result<bool> {
        let mut store = ctx.data_unchecked::<Shared>().lock().unwrap();
        let Some(person) = store.people.iter().find(|p| p.id == person_id).cloned() else {
            return Err(Error::new("no such person"));
        };
        let Some(event) = store.events.iter_mut().find(|e| e.id.0 == event_id.0) else {
            return Err(Error::new("no such event"));
        };
        event.attendees.push(person.name);
        ctx.data_unchecked::<Arc<Counts>>()
            .linked
            .fetch_add(1, Ordering::Relaxed);
        Ok(true)
    }
}

/// The schema the server serves, as its SDL.
pub const SDL: &str = r#"scalar UUID

type Event {
  id: UUID!
  title: String!
  attendees: [String!]!
}

type Person {
  id: ID!
  name: String!
}

type EventConnection {
  nodes: [Event!]!
  totalCount: Int!
}

type Query {
  events(first: Int): EventConnection!
  event(id: UUID!): Event
  people: [Person!]!
  person(id: ID!): Person
}

type Mutation {
  createPerson(name: String!): Person!
  addPersonToEvent(personId: ID!, eventId: UUID!): Boolean!
}
"#;

/// Starts the server on a free loopback port, endpoint `http://{addr}/graphql`,
/// with three events; abort the handle to stop it.
pub async fn start() -> (SocketAddr, Arc<Counts>, JoinHandle<()>) {
    let mut store = Store::default();
    for title in ["launch", "retro", "offsite"] {
        let id = Uuid(store.uuid());
        store.events.push(Event {
            id,
            title: title.into(),
            attendees: Vec::new(),
        });
    }
    let counts = Arc::new(Counts::default());
    let schema = Schema::build(Query, Mutation, EmptySubscription)
        .data::<Shared>(Arc::new(Mutex::new(store)))
        .data(counts.clone())
        .finish();
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .expect("a free loopback port");
    let addr = listener.local_addr().expect("a bound address");
    let router = Router::new()
        .route("/graphql", post(graphql))
        .with_state((schema, counts.clone()));
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (addr, counts, task)
}

async fn graphql(
    State((schema, counts)): State<(Schema<Query, Mutation, EmptySubscription>, Arc<Counts>)>,
    body: String,
) -> Json<async_graphql::Response> {
    match serde_json::from_str::<async_graphql::Request>(&body) {
        Ok(request) => Json(COUNTS.scope(counts, schema.execute(request)).await),
        Err(e) => Json(async_graphql::Response::from_errors(vec![
            async_graphql::ServerError::new(e.to_string(), None),
        ])),
    }
}
