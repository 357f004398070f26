//! Log lines in Triton's layout (`I1121 10:57:40.904233 5310 file.rs:12] msg`),
//! filtered by `--log-verbose/--log-info/--log-warning/--log-error` and written
//! to standard error or `--log-file`.

use std::{
    fs::{File, OpenOptions},
    io::{self, Write},
    sync::Mutex,
    time::{SystemTime, UNIX_EPOCH},
};

use crate::cli::{options::LoggingOptions, values::LogFormat};

struct Logger {
    options: LoggingOptions,
    file: Option<Mutex<File>>,
}

/// Installs the process-wide logger. Fails when the log file cannot be opened.
pub fn init(options: &LoggingOptions) -> io::Result<()> {
    let file = match &options.log_file {
        Some(path) => Some(Mutex::new(
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| {
                    io::Error::new(
                        e.kind(),
                        format!("cannot open --log-file {}: {e}", path.display()),
                    )
                })?,
        )),
        None => None,
    };
    let logger = Logger {
        options: options.clone(),
        file,
    };
    log::set_max_level(options.max_level());
    log::set_boxed_logger(Box::new(logger)).map_err(io::Error::other)
}

impl log::Log for Logger {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        self.options.enabled(metadata.level())
    }

    fn log(&self, record: &log::Record) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let line = format_line(self.options.log_format, record, SystemTime::now());
        match &self.file {
            Some(file) => {
                let mut file = file.lock().unwrap_or_else(|e| e.into_inner());
                let _ = file.write_all(line.as_bytes());
            }
            None => {
                let _ = io::stderr().lock().write_all(line.as_bytes());
            }
        }
    }

    fn flush(&self) {
        if let Some(file) = &self.file {
            let _ = file.lock().unwrap_or_else(|e| e.into_inner()).flush();
        }
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
