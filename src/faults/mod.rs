//! The books of what the checks found: each fault under its signature
//! (code, operation, status and place), counted, with its first and its
//! smallest witness ([`Faults`], the book the search keeps); the report's
//! record of a fault ([`Fault`]) with what replaying it showed and its
//! reproducer; the causes faults are grouped into ([`causes`]); and the
//! witnesses completed with the requests that made what they use
//! ([`witness`]).

mod book;
pub mod causes;
mod record;
pub mod witness;

pub use book::{Faults, Kept, News};
pub use record::{Confirmation, Fault, Fresh, Reproducer, WitnessStep, steps};
