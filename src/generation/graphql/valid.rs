//! Each generated query checked against the schema before it is sent, by
//! apollo-compiler's spec-complete validator. The generator means every
//! query to be valid (an invalid one only ever earns an `errors` answer), so
//! one the validator refuses is a generator bug: counted, said once at the
//! end of the run, and not sent.

use std::sync::{Mutex, OnceLock};

use apollo_compiler::validation::Valid;
use apollo_compiler::{ExecutableDocument, Schema};

use super::request::to_sdl;
use crate::model::graphql::TypeSystem;

/// Longest part of a refused query quoted in the warning.
const QUOTED: usize = 200;

/// The validator of one type system's queries, and what it refused.
#[derive(Debug, Default)]
pub struct QueryCheck {
    /// The type system as apollo-compiler reads it once printed as SDL,
    /// built at the first check; `None` when that schema is itself invalid
    /// (queries then go unchecked rather than all refused).
    schema: OnceLock<Option<Valid<Schema>>>,
    refused: Mutex<Refused>,
}

#[derive(Debug, Default)]
struct Refused {
    count: usize,
    /// The first refused query and the validator's first reason.
    first: Option<(String, String)>,
}

impl QueryCheck {
    /// Whether `query` is valid against `ts`; a refusal is counted.
    pub fn accepts(&self, ts: &TypeSystem, query: &str) -> bool {
        let schema = self
            .schema
            .get_or_init(|| Schema::parse_and_validate(to_sdl(ts), "schema.graphql").ok());
        let Some(schema) = schema else {
            return true;
        };
        let Err(with) = ExecutableDocument::parse_and_validate(schema, query, "query.graphql")
        else {
            return true;
        };
        let mut refused = self.refused.lock().unwrap_or_else(|e| e.into_inner());
        refused.count += 1;
        if refused.first.is_none() {
            let why = with
                .errors
                .iter()
                .next()
                .map(|d| d.error.to_string())
                .unwrap_or_default();
            refused.first = Some((query.to_string(), why));
        }
        false
    }

    /// How many generated queries were refused, and the first with why;
    /// `None` when every one was valid.
    pub fn warning(&self) -> Option<String> {
        let refused = self.refused.lock().unwrap_or_else(|e| e.into_inner());
        let (query, why) = refused.first.as_ref()?;
        let mut quoted: String = query.chars().take(QUOTED).collect();
        if quoted.len() < query.len() {
            quoted.push('…');
        }
        let n = refused.count;
        let (queries, were) = if n == 1 {
            ("query", "was")
        } else {
            ("queries", "were")
        };
        Some(format!(
            "{n} generated GraphQL {queries} {were} invalid against the schema and not sent \
             (a Cartograph bug: please report it); the first: {} in `{}`",
            crate::model::text::one_line(why),
            crate::model::text::one_line(&quoted)
        ))
    }
}
