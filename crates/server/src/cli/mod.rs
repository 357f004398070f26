//! The `oxiserve` command line: `tritonserver`'s flags (names, value forms,
//! defaults and checks of Triton 2.51) plus an `oxiserve validate DIR...`
//! subcommand.
//!
//! Differences from `tritonserver`: booleans also take `yes`/`no`; numbers
//! are checked strictly (ports must fit in 16 bits, counts are unsigned);
//! port 0 means "any free port", so it never collides with another endpoint
//! nor leaves `--sagemaker-safe-port-range`. The Vertex AI environment
//! variables (AIP_*) are read as `tritonserver` reads them.

pub mod endpoints;
mod environment;
pub mod options;
pub mod resources;
mod rules;
mod table;
mod trace;
mod unsupported;
pub mod values;

#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::PathBuf;

use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};

pub use options::ServerOptions;
pub use table::{OPTIONS_TABLE_HEADERS, render_table};

/// What the command line asks `oxiserve` to do.
#[derive(Clone, Debug, PartialEq)]
#[allow(clippy::large_enum_variant, reason = "made once per process")]
pub enum Command {
    /// Serve the model repositories (no subcommand, as `tritonserver`).
    Serve(ServerOptions),
    /// Check model repositories and exit (`oxiserve validate DIR...`).
    Validate {
        /// The repositories to check.
        repositories: Vec<PathBuf>,
    },
}

/// Parses the command line; `args` starts with the program name.
///
/// Errors are clap errors: `err.exit()` prints them (or the help text) and
/// exits with status 2 (0 for `--help`).
pub fn parse_args<I, T>(args: I) -> Result<Command, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let mut cmd = Cli::command();
    let matches = cmd.try_get_matches_from_mut(args)?;
    let cli = Cli::from_arg_matches(&matches)?;
    let passed = passed_flags(&cmd, &matches);
    match cli.command {
        Some(Action::Validate { .. }) if !passed.is_empty() => {
            let flags: Vec<String> = passed.iter().map(|flag| format!("--{flag}")).collect();
            let message = format!(
                "'validate' takes no server flags (got {})",
                flags.join(", ")
            );
            Err(cmd.error(ErrorKind::ArgumentConflict, message))
        }
        Some(Action::Validate { repositories }) => Ok(Command::Validate { repositories }),
        None => {
            let mut options = cli.options;
            options.passed = passed;
            options.finish();
            options
                .apply_environment(|name| std::env::var(name).ok())
                .map_err(|message| cmd.error(ErrorKind::ValueValidation, message))?;
            options
                .check()
                .map_err(|(kind, message)| cmd.error(kind, message))?;
            Ok(Command::Serve(options))
        }
    }
}

#[derive(Parser)]
#[command(
    name = "oxiserve",
    about = "A Triton-compatible inference server: takes tritonserver's flags.",
    args_override_self = true,
    infer_long_args = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Action>,
    #[command(flatten)]
    options: ServerOptions,
}

#[derive(Subcommand)]
enum Action {
    /// Check model repositories (layout and config.pbtxt) and exit.
    Validate {
        /// Model repository directories.
        #[arg(required = true, value_name = "DIR")]
        repositories: Vec<PathBuf>,
    },
}

/// Long names of the flags that `matches` got from the command line.
fn passed_flags(cmd: &clap::Command, matches: &ArgMatches) -> BTreeSet<String> {
    cmd.get_arguments()
        .filter(|arg| matches.value_source(arg.get_id().as_str()) == Some(ValueSource::CommandLine))
        .filter_map(|arg| arg.get_long().map(str::to_string))
        .collect()
}
