//! Schema coverage of a GraphQL API as AutoGraphQL measures it: the (type,
//! field) pairs that came back in answers over all the pairs the schema has,
//! and the root fields that answered data. One tally serves generated runs and
//! replays of production queries, so the two figures mean the same thing.

use std::collections::HashSet;

use indexmap::IndexSet;
use serde::Serialize;

use crate::model::graphql::{TypeKind, TypeSystem};
use crate::oracles::graphql::Answer;

/// Schema coverage, as `report.json` shows it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SchemaCoverage {
    /// (type, field) pairs that came back in a `data` answer.
    pub covered: usize,
    /// (type, field) pairs of the schema's object and interface types (the
    /// query root's included, the mutation and subscription roots' not).
    pub total: usize,
    /// Root fields that answered `data` (not null, no error for them).
    pub root_fields_reached: Vec<String>,
    /// Root fields in the schema (queries and mutations).
    pub root_fields: usize,
}

/// Accumulates coverage over answers.
#[derive(Debug, Clone)]
pub struct CoverageTally {
    pairs: HashSet<(String, String)>,
    covered: IndexSet<(String, String)>,
    reached: IndexSet<String>,
    root_fields: usize,
}

impl CoverageTally {
    /// An empty tally over the pairs of `ts`; `root_fields` is how many root
    /// fields the run could call (read-only runs leave mutations out).
    pub fn new(ts: &TypeSystem, root_fields: usize) -> CoverageTally {
        let roots_left_out = [ts.mutation_type.as_deref(), ts.subscription_type.as_deref()];
        let pairs = ts
            .types
            .values()
            .filter(|t| matches!(t.kind, TypeKind::Object | TypeKind::Interface))
            .filter(|t| !t.name.starts_with("__"))
            .filter(|t| !roots_left_out.contains(&Some(t.name.as_str())))
            .flat_map(|t| {
                t.fields
                    .iter()
                    .map(|f| (t.name.clone(), f.name.clone()))
                    .collect::<Vec<_>>()
            })
            .collect();
        CoverageTally {
            pairs,
            covered: IndexSet::new(),
            reached: IndexSet::new(),
            root_fields,
        }
    }

    /// Adds what one answer exercised (the oracle's walk of it).
    pub fn add(&mut self, answer: &Answer) {
        self.add_pairs(&answer.covered, &answer.data_roots);
    }

    /// Adds pairs and root fields seen by other means (the search's own
    /// walk of the selections it generated).
    pub fn add_pairs(&mut self, pairs: &[(String, String)], roots: &[String]) {
        for pair in pairs {
            if self.pairs.contains(pair) {
                self.covered.insert(pair.clone());
            }
        }
        for root in roots {
            self.reached.insert(root.clone());
        }
    }

    /// The figures so far.
    pub fn summary(&self) -> SchemaCoverage {
        SchemaCoverage {
            covered: self.covered.len(),
            total: self.pairs.len(),
            root_fields_reached: self.reached.iter().cloned().collect(),
            root_fields: self.root_fields,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracles::graphql::inspect;
    use serde_json::json;

    fn demo() -> TypeSystem {
        let loaded = crate::load::load_text(
            crate::demo::GRAPHQL_SDL,
            std::path::Path::new("schema.graphql"),
        )
        .unwrap();
        loaded.api.graphql.unwrap()
    }

    #[test]
    fn counts_schema_pairs_once_and_roots_that_answered() {
        let ts = demo();
        let mut tally = CoverageTally::new(&ts, 8);
        // Query 4 + Author 4 + Book 7 + Order 5; Mutation's fields are not pairs.
        assert_eq!(tally.summary().total, 20);
        let q = "{ book(id: 1) { id title author { name } } order(id: 9) { id } }";
        let body = json!({
            "data": {"book": {"id": "1", "title": "Dune", "author": {"name": "Frank"}}, "order": null},
            "errors": [{"message": "no order 9", "path": ["order"]}]
        });
        let answer = inspect(&ts, q, None, &json!({}), Some(200), Some(&body), "");
        tally.add(&answer);
        tally.add(&answer);
        let s = tally.summary();
        // Query.book, Book.id, Book.title, Book.author, Author.name.
        assert_eq!(s.covered, 5, "{answer:?}");
        assert_eq!(s.root_fields_reached, ["Query.book"]);
    }

    #[test]
    fn nulls_and_mutation_roots_cover_nothing() {
        let ts = demo();
        let mut tally = CoverageTally::new(&ts, 8);
        let q = "mutation { createAuthor(name: \"A\") { id bio } }";
        let body = json!({"data": {"createAuthor": {"id": "3", "bio": null}}});
        let answer = inspect(&ts, q, None, &json!({}), Some(200), Some(&body), "");
        tally.add(&answer);
        let s = tally.summary();
        assert_eq!(s.covered, 1, "only Author.id: {answer:?}");
        assert_eq!(s.root_fields_reached, ["Mutation.createAuthor"]);
    }
}
