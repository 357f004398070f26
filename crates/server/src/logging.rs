//! Log lines in Triton's layout (`I1121 10:57:40.904233 5310 file.rs:12] msg`),
//! filtered by `--log-verbose/--log-info/--log-warning/--log-error` and written
//! to standard error or `--log-file`.

use std::{
    fs::{File, OpenOptions},
    io::{self, Write},
    path::Path,
    sync::Arc,
    time::{SystemTime, UNIX_EPOCH},
};

use oxiserve_core::{LogControl, LogSettings, LogSettingsUpdate};
use oxiserve_types::{Error, Result};
use parking_lot::RwLock;

use crate::cli::{options::LoggingOptions, values::LogFormat};

/// The process's logger; its settings can change while it runs.
struct Logger {
    state: Arc<RwLock<LogState>>,
}

#[derive(Debug)]
struct LogState {
    options: LoggingOptions,
    file: Option<File>,
}

/// Reads and changes the log settings at run time (the logging extension).
#[derive(Debug, Clone)]
pub struct LogHandle {
    state: Arc<RwLock<LogState>>,
}

fn open(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot open log file {}: {e}", path.display()),
            )
        })
}

/// Installs the logger for the whole process.
pub fn init(options: &LoggingOptions) -> io::Result<LogHandle> {
    let file = options.log_file.as_deref().map(open).transpose()?;
    let state = Arc::new(RwLock::new(LogState {
        options: options.clone(),
        file,
    }));
    log::set_max_level(options.max_level());
    log::set_boxed_logger(Box::new(Logger {
        state: state.clone(),
    }))
    .map_err(io::Error::other)?;
    Ok(LogHandle { state })
}

impl log::Log for Logger {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        self.state.read().options.enabled(metadata.level())
    }

    fn log(&self, record: &log::Record) {
        let state = self.state.read();
        if !state.options.enabled(record.level()) {
            return;
        }
        let line = format_line(state.options.log_format, record, SystemTime::now());
        match state.file.as_ref() {
            Some(mut file) => {
                let _ = file.write_all(line.as_bytes());
            }
            None => {
                let _ = io::stderr().lock().write_all(line.as_bytes());
            }
        }
    }

    fn flush(&self) {
        if let Some(mut file) = self.state.read().file.as_ref() {
            let _ = file.flush();
        }
    }
}

impl LogControl for LogHandle {
    fn settings(&self) -> LogSettings {
        let state = self.state.read();
        let o = &state.options;
        LogSettings {
            log_file: o
                .log_file
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            log_info: o.log_info,
            log_warning: o.log_warning,
            log_error: o.log_error,
            log_verbose_level: o.log_verbose,
            log_format: match o.log_format {
                LogFormat::Default => "default",
                LogFormat::Iso8601 => "ISO8601",
            }
            .to_string(),
        }
    }

    fn update(&self, update: LogSettingsUpdate) -> Result<LogSettings> {
        let mut options = self.state.read().options.clone();
        let format = match update.log_format.as_deref() {
            None => options.log_format,
            Some("default") => LogFormat::Default,
            Some("ISO8601") => LogFormat::Iso8601,
            Some(other) => {
                return Err(Error::unavailable(format!(
                    "invalid argument for --log_format, got: {other}"
                )));
            }
        };
        options.log_format = format;
        options.log_info = update.log_info.unwrap_or(options.log_info);
        options.log_warning = update.log_warning.unwrap_or(options.log_warning);
        options.log_error = update.log_error.unwrap_or(options.log_error);
        options.log_verbose = update.log_verbose_level.unwrap_or(options.log_verbose);
        let mut new_file = None;
        if let Some(path) = update.log_file {
            if path.is_empty() {
                options.log_file = None;
            } else {
                let path = std::path::PathBuf::from(path);
                new_file = Some(open(&path).map_err(|e| Error::invalid_arg(e.to_string()))?);
                options.log_file = Some(path);
            }
        }
        {
            let mut state = self.state.write();
            if new_file.is_some() || options.log_file.is_none() {
                state.file = new_file;
            }
            state.options = options.clone();
        }
        log::set_max_level(options.max_level());
        Ok(self.settings())
    }
}

fn format_line(format: LogFormat, record: &log::Record, now: SystemTime) -> String {
    let letter = match record.level() {
        log::Level::Error => 'E',
        log::Level::Warn => 'W',
        log::Level::Info => 'I',
        log::Level::Debug | log::Level::Trace => 'V',
    };
    let since_epoch = now.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since_epoch.as_secs();
    let (year, month, day) = civil_date(secs / 86_400);
    let (hour, minute, second) = ((secs / 3600) % 24, (secs / 60) % 60, secs % 60);
    let location = match (record.file(), record.line()) {
        (Some(file), Some(line)) => format!("{}:{line}", file.rsplit('/').next().unwrap_or(file)),
        _ => record.target().to_string(),
    };
    let pid = std::process::id();
    match format {
        LogFormat::Default => format!(
            "{letter}{month:02}{day:02} {hour:02}:{minute:02}:{second:02}.{:06} {pid} {location}] {}\n",
            since_epoch.subsec_micros(),
            record.args()
        ),
        LogFormat::Iso8601 => format!(
            "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}Z {letter} {pid} {location}] {}\n",
            record.args()
        ),
    }
}

/// (year, month, day) of the UTC day `days` after 1970-01-01 (Howard
/// Hinnant's civil-from-days).
fn civil_date(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn dates() {
        assert_eq!(civil_date(0), (1970, 1, 1));
        assert_eq!(civil_date(20_513), (2026, 3, 1));
        assert_eq!(civil_date(11_016), (2000, 2, 29));
    }

    #[test]
    fn triton_layout() {
        let now = UNIX_EPOCH + Duration::from_micros(1_795_260_896_123_456);
        let args = format_args!("loaded");
        let record = log::Record::builder()
            .level(log::Level::Info)
            .file(Some("crates/server/src/main.rs"))
            .line(Some(7))
            .args(args)
            .build();
        let pid = std::process::id();
        assert_eq!(
            format_line(LogFormat::Default, &record, now),
            format!("I1121 11:34:56.123456 {pid} main.rs:7] loaded\n")
        );
        assert_eq!(
            format_line(LogFormat::Iso8601, &record, now),
            format!("2026-11-21T11:34:56Z I {pid} main.rs:7] loaded\n")
        );
    }
}
