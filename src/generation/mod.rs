//! Choosing what to send: values built from schemas, requests built from values,
//! and the drivers that decide which operations to call in which order.

pub mod request;
pub mod smoke;
pub mod values;

pub use smoke::SmokeDriver;
