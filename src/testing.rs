//! What the integration tests and benchmarks reach in for, besides the
//! pipeline's own modules: the demo API (served on a free port, with its
//! descriptions and its planted faults), one run driven from code, the
//! connection a run holds, and the command line's definition. The
//! commands themselves (`cli`, `run`, `demo`) are the program's, not the
//! library's; this is the one door to them, and not a stable API.

pub use crate::cli::Cli;
#[cfg(feature = "demo")]
pub use crate::demo::{DemoServer, FAULTS_MD, GRAPHQL_SDL, OPENAPI_YAML};
pub use crate::run::link::Link;
pub use crate::run::{RunOptions, RunSummary, execute};
