//! The `cartograph` command: a thin shell over the library.

use std::process::ExitCode;

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    cartograph::main()
}
