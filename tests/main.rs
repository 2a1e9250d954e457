//! Cartograph's integration tests, as one test binary (`integration`): each
//! module below is a file of `tests/` and meets the tool as a user does, through
//! the `cartograph` binary, the library's public API, the demo API or the
//! purpose-built servers of `support/`. One binary links the crate once,
//! where a binary per file linked it once each.
//!
//! `cargo test --test integration` runs them all; a module's name and `::`
//! runs one part, as in `cargo test --test integration determinism::`.
//! `UPDATE_GOLDEN=1 cargo test` rewrites every golden file instead of comparing
//! with it (`support/golden.rs`).

// A test binary is no library: its `pub` items serve its own modules, and a
// test that skips says why on stderr.
#![allow(unreachable_pub, clippy::print_stdout, clippy::print_stderr)]

mod support;

mod architecture;
mod causes;
mod chains;
mod cli_graph;
mod confirm_first;
mod conforming;
mod corpus;
mod corpus_graphql;
mod corpus_schemas;
mod demo_server;
mod depth;
mod determinism;
mod docs;
mod edge_pass;
mod engine;
mod false_alarms;
mod fault_checks;
mod faults;
mod fresh_truth;
mod graph_petstore;
mod graphql_errors;
mod graphql_fault_kinds;
mod graphql_flow;
mod graphql_queries;
mod graphql_reproducers;
mod graphql_run;
mod hostile;
mod hostile_specs;
mod identities;
mod input_edges;
mod list_flow;
mod misbehaving_selftest;
mod no_silent_success;
mod out_folder;
mod ref_mesh;
mod regression_suite;
mod replay_queries;
mod report_browser;
mod report_files;
mod reproducers_truth;
mod reset_proof;
mod run_phases;
mod search;
mod secrets;
mod security;
mod selection;
mod signals;
mod slow_edges_selftest;
mod snapshots;
mod spec_fixes;
mod suite_credentials;
mod target_path;
mod tls;
mod unavailable;
mod wire;
