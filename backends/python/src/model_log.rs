//! A model's `pb_utils.Logger` lines in the server log, as Triton writes
//! them: the model file's name and line, the message in quotes, and VERBOSE
//! lines (shown only with `--log-verbose`) marked as information.

use crate::protocol::LogLevel;

/// Writes one line a model logged at `file:line`.
pub(crate) fn write(level: LogLevel, file: &str, line: u32, message: &str) {
    let level = match level {
        LogLevel::Verbose if !log::log_enabled!(target: "python", log::Level::Debug) => return,
        LogLevel::Verbose => log::Level::Info,
        other => other.to_log(),
    };
    log::logger().log(
        &log::Record::builder()
            .level(level)
            .target("python")
            .file(Some(file))
            .line(Some(line))
            .args(format_args!("\"{message}\""))
            .build(),
    );
}
