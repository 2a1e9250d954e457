//! Choosing what to send: one search ([`search`]) over protocol-neutral tests
//! ([`test`](mod@test): sequences of calls to operations of the model), each call's
//! genes supplied by its protocol ([`rest`], [`graphql`]). The shared parts:
//! the graph's advice ([`plan`]), call sequences from the graph
//! ([`sequences`]) and resource templates ([`templates`]), values built from
//! schemas ([`values`]), mutated ([`mutation`]) and pooled from answers
//! ([`pool`]).

pub mod constraints;
pub mod graphql;
pub mod identities;
pub mod mutation;
pub mod pattern;
pub mod plan;
pub mod pool;
pub mod rest;
pub mod search;
pub mod sequences;
pub mod templates;
pub mod test;
pub mod values;

pub use search::{MioConfig, Search, SearchConfig, SearchSummary};
