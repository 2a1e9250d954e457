//! Choosing what to send: the graph's advice ([`plan`]), call sequences from
//! the graph ([`sequences`]) and resource templates ([`templates`]), values
//! built from schemas and pooled from responses, tests that carry values from
//! one call to the next ([`flow`]), mutation, and the MIO search ([`search`]).

pub mod coverage;
pub mod flow;
pub mod gql_search;
pub mod graphql;
pub mod mio;
pub mod mutation;
pub mod plan;
pub mod pool;
pub mod query_log;
pub mod request;
pub mod search;
pub mod sequences;
pub mod templates;
pub mod testcase;
pub mod values;

pub use mio::MioConfig;
pub use search::{SearchConfig, SearchDriver, SearchSummary};
