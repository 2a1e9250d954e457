//! Helpers shared by integration tests (`mod support;` in a test file).
//!
//! Each test binary compiles this module separately and uses only part of it,
//! so unused items are expected rather than a sign of dead code.
#![allow(dead_code)]

pub mod cli;
pub mod conforming;
pub mod depth;
pub mod drift;
pub mod drive;
pub mod echo;
pub mod false_alarms;
pub mod graphql_faults;
pub mod graphql_flow;
pub mod hostile;
pub mod input_edges;
pub mod list_flow;
pub mod misbehaving;
pub mod recording;
pub mod truthful;
