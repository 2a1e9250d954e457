//! Helpers shared by the integration test modules (`use crate::support;`):
//! purpose-built servers, the CLI as a user runs it, golden files.

pub mod causes;
pub mod chains;
pub mod cli;
pub mod conforming;
pub mod depth;
pub mod drift;
pub mod drive;
pub mod echo;
pub mod false_alarms;
pub mod golden;
pub mod graphql_always200;
pub mod graphql_errors;
pub mod graphql_faults;
pub mod graphql_flow;
pub mod hostile;
pub mod input_edges;
pub mod list_flow;
pub mod many_faults;
pub mod misbehaving;
pub mod named;
pub mod notes;
pub mod recording;
pub mod renames;
pub mod security;
pub mod slow_edges;
pub mod stateful;
pub mod truthful;
pub mod unavailable;

/// Whether CI asked for every tool the tests use (`CARTOGRAPH_REQUIRE_TOOLS`,
/// set by `.ci/run`): then a missing tool fails the test instead of
/// skipping it, so a failed install cannot pass unnoticed.
pub fn tools_required() -> bool {
    std::env::var("CARTOGRAPH_REQUIRE_TOOLS").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Says that a test skips a part for want of a tool (`why`), or fails it
/// when [`tools_required`].
pub fn skip_for(why: &str) {
    assert!(
        !tools_required(),
        "CARTOGRAPH_REQUIRE_TOOLS is set, and {why}"
    );
    eprintln!("skipped: {why}");
}
