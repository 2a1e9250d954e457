//! Helpers shared by integration tests (`mod support;` in a test file).
//!
//! Each test binary compiles this module separately and uses only part of it,
//! so unused items are expected rather than a sign of dead code.
#![allow(dead_code)]

pub mod cli;
pub mod conforming;
pub mod drift;
pub mod echo;
pub mod graphql_faults;
pub mod graphql_flow;
pub mod list_flow;
pub mod misbehaving;
pub mod recording;
