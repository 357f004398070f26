//! `oxiserve`: a Triton-compatible inference server. Takes `tritonserver`'s
//! command line; `oxiserve validate DIR...` checks repositories without serving.

mod cache_settings;
mod cli;
mod endpoints;
mod logging;
mod metrics;
mod model_table;
mod plugins;
mod serve;
mod server_config;
mod thread_policy;
mod validate;

use std::process::ExitCode;

use cli::Command;

/// mimalloc: the request path allocates many small, short-lived buffers,
/// where it is measurably faster than the system allocator (bench/).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // mimalloc asks for transparent huge pages for its arenas: a few small
    // allocations per thread then fill whole 2 MiB pages (50 MB with 24
    // Python models). Not for this process and the ones it starts.
    let _ = rustix::thread::disable_transparent_huge_pages(true);
    match cli::parse_args(std::env::args_os()) {
        Ok(Command::Serve(options)) => serve::run(&options),
        Ok(Command::Validate { repositories }) => validate::run(&repositories),
        Err(e) => e.exit(),
    }
}
