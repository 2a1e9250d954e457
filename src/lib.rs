//! Cartograph: black-box web API testing driven by a property graph of the API.
//!
//! The pipeline reads left to right:
//! `spec` (read a description) → `model` (one protocol-neutral API model) →
//! `graph` (the property graph of operations and schemas) → `generation`
//! (call sequences, templates, values, the MIO search) → `execution` (the
//! run loop, politeness, transport) → `oracles` → `reproduce` (confirm, shrink, render reproducers) → `reports`.

pub mod cli;
pub mod demo;
pub mod execution;
pub mod generation;
pub mod graph;
pub mod load;
pub mod model;
pub mod oracles;
pub mod reports;
pub mod reproduce;
pub mod run;
