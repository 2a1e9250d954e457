//! The `cartograph` command: a thin shell over the library.

use std::process::ExitCode;

fn main() -> ExitCode {
    cartograph::cli::main()
}
