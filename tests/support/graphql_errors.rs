//! A purpose-built GraphQL server whose errors say what they mean in three
//! awkward ways real servers have:
//!
//! - `Query.report` always crashes, and the crash is answered as Python
//!   servers built by hand answer it: `{"data": null, "errors":
//!   ["Traceback (most recent call last): …"]}`, bare strings instead of
//!   objects with a `message`;
//! - `Query.account(id: UUID!)` and `Query.entries(since: Date!, over:
//!   BigInt!)` take custom scalars the server parses strictly (canonical
//!   UUIDs, `YYYY-MM-DD` dates that exist, integers as digits or JSON
//!   numbers), refusing anything else as async-graphql refuses it; and
//!   `Query.tagged(slug: Slug!)` takes a scalar whose name says nothing of
//!   its shape, so that most values made up for it are refused;
//! - every other error gets `extensions.code: INTERNAL_SERVER_ERROR`, as
//!   Apollo Server 2 (and the CMSs built on it) stamp on every error, and a
//!   null for a non-null variable is refused with graphql-js's wording
//!   (`Variable "$x" of non-null type "String!" must not be null.`).
//!
//! Apart from `report`, the server is correct: every value it answers fits
//! the schema.

use std::net::{Ipv4Addr, SocketAddr};

use async_graphql::{
    EmptySubscription, Error, InputValueError, InputValueResult, Object, Result, Scalar,
    ScalarType, Schema, SimpleObject, Value,
};
use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// The schema the server serves, as its SDL.
pub const SDL: &str = r#"scalar UUID

"A calendar date, YYYY-MM-DD."
scalar Date

"The `BigInt` scalar type represents non-fractional signed whole numeric values."
scalar BigInt

type Account {
  id: UUID!
  balance: BigInt!
  opened: Date!
}

type Entry {
  on: Date!
  amount: BigInt!
}

"Lower-case letters and digits, words joined by dashes."
scalar Slug

type Query {
  account(id: UUID!): Account
  entries(since: Date!, over: BigInt!): [Entry!]!
  tagged(slug: Slug!): [Entry!]!
  report(title: String!): String
}

type Mutation {
  note(text: String!): String!
}
"#;

/// Whether `s` reads `8-4-4-4-12` hexadecimal digits.
fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.chars().all(|c| c.is_ascii_hexdigit()))
}

/// Whether `s` is a `YYYY-MM-DD` date of the calendar (months of 31 days
/// at most; the test needs strictness, not leap years).
fn is_date(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return false;
    };
    let number = |t: &str, len: usize| {
        (t.len() == len && t.chars().all(|c| c.is_ascii_digit()))
            .then(|| t.parse::<u32>().ok())
            .flatten()
    };
    matches!(
        (number(y, 4), number(m, 2), number(d, 2)),
        (Some(_), Some(1..=12), Some(1..=31))
    )
}

/// Whether `v` is a `BigInt`: a JSON integer, or a string of digits with an
/// optional sign.
fn is_bigint(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.is_i64() || n.is_u64(),
        Value::String(s) => {
            let digits = s.strip_prefix('-').unwrap_or(s);
            !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
        }
        _ => false,
    }
}

/// Whether `s` is lower-case words of letters and digits joined by dashes.
fn is_slug(s: &str) -> bool {
    !s.is_empty()
        && s.split('-').all(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}

/// The `Slug` scalar.
#[derive(Clone)]
struct Slug(String);

#[Scalar(name = "Slug")]
impl ScalarType for Slug {
    fn parse(value: Value) -> InputValueResult<Self> {
        match &value {
            Value::String(s) if is_slug(s) => Ok(Slug(s.clone())),
            _ => Err(InputValueError::expected_type(value)),
        }
    }

    fn is_valid(value: &Value) -> bool {
        matches!(value, Value::String(s) if is_slug(s))
    }

    fn to_value(&self) -> Value {
        Value::String(self.0.clone())
    }
}

/// The `UUID` scalar, canonical text only.
#[derive(Clone)]
struct Uuid(String);

#[Scalar(name = "UUID")]
impl ScalarType for Uuid {
    fn parse(value: Value) -> InputValueResult<Self> {
        match &value {
            Value::String(s) if is_uuid(s) => Ok(Uuid(s.clone())),
            _ => Err(InputValueError::expected_type(value)),
        }
    }

    fn is_valid(value: &Value) -> bool {
        matches!(value, Value::String(s) if is_uuid(s))
    }

    fn to_value(&self) -> Value {
        Value::String(self.0.clone())
    }
}

/// The `Date` scalar, `YYYY-MM-DD` only.
#[derive(Clone)]
struct Date(String);

#[Scalar(name = "Date")]
impl ScalarType for Date {
    fn parse(value: Value) -> InputValueResult<Self> {
        match &value {
            Value::String(s) if is_date(s) => Ok(Date(s.clone())),
            _ => Err(InputValueError::expected_type(value)),
        }
    }

    fn is_valid(value: &Value) -> bool {
        matches!(value, Value::String(s) if is_date(s))
    }

    fn to_value(&self) -> Value {
        Value::String(self.0.clone())
    }
}

/// The `BigInt` scalar: integers as JSON numbers or as digits; answered as
/// digits.
#[derive(Clone)]
struct BigInt(String);

#[Scalar(name = "BigInt")]
impl ScalarType for BigInt {
    fn parse(value: Value) -> InputValueResult<Self> {
        if !is_bigint(&value) {
            return Err(InputValueError::expected_type(value));
        }
        Ok(BigInt(match value {
            Value::String(s) => s,
            other => other.to_string(),
        }))
    }

    fn is_valid(value: &Value) -> bool {
        is_bigint(value)
    }

    fn to_value(&self) -> Value {
        Value::String(self.0.clone())
    }
}

/// A string as Python's `repr` writes it, as a `KeyError` shows its key.
fn python_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::from(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[derive(SimpleObject)]
struct Account {
    id: Uuid,
    balance: BigInt,
    opened: Date,
}

#[derive(SimpleObject)]
struct Entry {
    on: Date,
    amount: BigInt,
}

struct Query;

#[Object]
impl Query {
    async fn account(&self, id: Uuid) -> Option<Account> {
        Some(Account {
            id,
            balance: BigInt("120000000000".into()),
            opened: Date("2021-03-04".into()),
        })
    }

    async fn entries(&self, since: Date, over: BigInt) -> Vec<Entry> {
        vec![Entry {
            on: since,
            amount: over,
        }]
    }

    async fn tagged(&self, slug: Slug) -> Vec<Entry> {
        vec![Entry {
            on: Date(format!("2024-01-{:02}", 1 + slug.0.len() % 28)),
            amount: BigInt("7".into()),
        }]
    }

    async fn report(&self, title: String) -> Result<Option<String>> {
        Err(Error::new(format!(
            "Traceback (most recent call last):\n  File \"/srv/ledger/reports.py\", line 41, in resolve_report\n    return REPORTS[title].render()\nKeyError: {}",
            python_repr(&title)
        )))
    }
}

struct Mutation;

#[Object]
impl Mutation {
    async fn note(&self, text: String) -> String {
        text
    }
}

type LedgerSchema = Schema<Query, Mutation, EmptySubscription>;

/// Starts the server on a free loopback port, endpoint
/// `http://{addr}/graphql`; abort the handle to stop it.
pub async fn start() -> (SocketAddr, JoinHandle<()>) {
    let schema = Schema::build(Query, Mutation, EmptySubscription).finish();
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

async fn graphql(State(schema): State<LedgerSchema>, body: String) -> Json<serde_json::Value> {
    let raw: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
    if let Some(refusal) = null_for_non_null(&raw) {
        return Json(json!({ "errors": [refusal] }));
    }
    let answer = match serde_json::from_value::<async_graphql::Request>(raw) {
        Ok(request) => schema.execute(request).await,
        Err(e) => async_graphql::Response::from_errors(vec![async_graphql::ServerError::new(
            e.to_string(),
            None,
        )]),
    };
    let mut answer = serde_json::to_value(&answer).unwrap_or_default();
    let Some(errors) = answer.get_mut("errors").and_then(|e| e.as_array_mut()) else {
        return Json(answer);
    };
    let crashed = errors.iter().any(|e| {
        e["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("Traceback"))
    });
    if crashed {
        let bare: Vec<serde_json::Value> = errors.iter().map(|e| e["message"].clone()).collect();
        return Json(json!({ "data": null, "errors": bare }));
    }
    for e in errors.iter_mut() {
        e["extensions"] = json!({ "code": "INTERNAL_SERVER_ERROR" });
    }
    Json(answer)
}

/// graphql-js's refusal of a null for a non-null variable, as Apollo Server
/// 2 stamps it: the first such variable of the request, if any.
fn null_for_non_null(raw: &serde_json::Value) -> Option<serde_json::Value> {
    let query = raw["query"].as_str()?;
    let doc = async_graphql::parser::parse_query(query).ok()?;
    let operations: Vec<_> = doc.operations.iter().map(|(_, op)| op).collect();
    for op in operations {
        for def in &op.node.variable_definitions {
            let ty = &def.node.var_type.node;
            let name = def.node.name.node.as_str();
            let sent_null = raw["variables"]
                .as_object()
                .is_some_and(|v| v.get(name).is_some_and(serde_json::Value::is_null));
            if !ty.nullable && sent_null {
                let at = def.pos;
                return Some(json!({
                    "message": format!("Variable \"${name}\" of non-null type \"{ty}\" must not be null."),
                    "locations": [{"line": at.line, "column": at.column}],
                    "extensions": {"code": "INTERNAL_SERVER_ERROR"},
                }));
            }
        }
    }
    None
}
