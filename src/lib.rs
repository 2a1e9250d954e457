//! Cartograph: black-box web API testing driven by a property graph of the API.
//!
//! # Words
//!
//! The names of the code are the words of the reports (the guide's
//! `docs/src/glossary.md` has them all, with examples):
//!
//! - **oracle**: one check, a row of [`oracles::registry::ORACLES`]: its code,
//!   class, severity and when it fires.
//! - **finding**: what one check found in one answer.
//! - **fault**: a check's findings on one operation and status (and place),
//!   counted under one *signature* (`schema_violation:getBook:200:/price type`).
//! - **cause**: what a person fixes: the faults one check reports for one
//!   reason, with an id stable across runs.
//! - **witness**: the test that showed a fault; its first and its smallest
//!   are kept. **Completion** puts before it the earlier requests that made
//!   what it uses.
//! - **representative**: the fault whose reproducer stands for its cause.
//! - **breach**: what a negative test's request breaks on purpose.
//! - **plant**: a value the description forbids that the server accepted, so
//!   it sits in the server's data; a later crash may need it.
//! - **echo**: a planted value served back in a later answer: not a schema
//!   violation, since the fault is the acceptance that let it in.
//! - **link**: a consumes edge of the graph (a schema's property feeding an
//!   operation's input); *exercised* once a value passed along it, then a 2xx.
//!
//! The modules read like the pipeline, and data flows down it once:
//!
//! ```text
//!   cli          arguments and commands only (run, demo, graph, inspect, replay…)
//!    │
//!   run          one run, REST or GraphQL: session, search phase, replays, outputs
//!    │
//!   reports      report.json, junit.xml, report.sarif, report.html (the graph explorer)
//!   reproduce    confirming and shrinking faults; curl reproducers, the Hurl suite
//!    │
//!   generation   the one search (MIO) over protocol-neutral tests;
//!    │           the REST and GraphQL protocols supply the genes
//!   faults       the books: faults by signature, their causes and witnesses
//!   oracles      what an answer shows: the checks and what they found
//!    │
//!   graph        the property graph: built from the model, refined by feedback
//!   load         descriptions (OpenAPI 2/3.0/3.1, GraphQL SDL and introspection) into the model
//!    │
//!   model        the protocol-neutral API model (operations, schemas, names)
//!   execution    HTTP: the engine, politeness, credentials, the trace
//!
//!   demo         the built-in bookshop API (served for `cartograph demo` and the tests)
//!   testing      what the tests reach in for: the demo API, one run, the CLI's definition
//! ```
//!
//! Which module may use which (checked by `tests/architecture.rs`, which
//! reads every `crate::` and `super::` path outside test code):
//!
//! | module | may use |
//! |---|---|
//! | `model`, `execution` | nothing of the crate |
//! | `load`, `graph` | `model` |
//! | `oracles` | `model`, `execution` |
//! | `faults` | `model`, `execution`, `oracles` |
//! | `generation` | `model`, `graph`, `execution`, `oracles`, `faults` |
//! | `reproduce` | `model`, `execution`, `oracles`, `faults`, `generation` |
//! | `reports` | `model`, `graph`, `execution`, `oracles`, `faults`, `generation` |
//! | `run` | everything above but `cli` and `demo` |
//! | `demo` | `model`, `load` |
//! | `cli` | everything |
//! | `testing` | `cli`, `demo`, `run` (the tests' one door to them) |
//!
//! and no two modules under one parent use each other, directly or through a
//! circle (a parent and its own children may).
//!
//! The search's seam is [`generation::search::Protocol`]: MIO, sampling
//! policy, the archive, the budget and the graph's feedback live once in
//! [`generation::search`]; [`generation::rest`] and [`generation::graphql`]
//! say how a call is sampled and mutated, how it becomes a request and how
//! an answer is read.

// Unit tests that skip (a corpus not beside the checkout) say so.
#![cfg_attr(test, allow(clippy::print_stdout, clippy::print_stderr))]

pub(crate) mod cli;
#[cfg(feature = "demo")]
pub(crate) mod demo;
pub mod execution;
pub mod faults;
pub mod generation;
pub mod graph;
pub mod load;
pub mod model;
pub mod oracles;
pub mod reports;
pub mod reproduce;
pub(crate) mod run;
pub mod testing;

pub use cli::main;
