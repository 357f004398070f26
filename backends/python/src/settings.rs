//! The backend's settings: `--backend-config=python,<key>=<value>`.

use std::{path::PathBuf, time::Duration};

use oxiserve_types::{Error, Result};

/// How the Python backend runs its processes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonSettings {
    /// The size of each instance's shared memory arenas (`shm-max-byte-size`);
    /// pages cost memory only once written.
    pub arena_size: u64,
    /// How long a process may take to start, initialize or finalize
    /// (`stub-timeout-seconds`).
    pub stub_timeout: Duration,
    /// The interpreter for models that don't name one (`python-interpreter`).
    pub interpreter: Option<PathBuf>,
    /// How long a stub and its pump keep polling for the next frame before
    /// they sleep, while frames keep coming (`idle-spin-microseconds`; 0
    /// sleeps at once).
    pub idle_spin: Duration,
}

impl Default for PythonSettings {
    fn default() -> Self {
        Self {
            arena_size: 1 << 30,
            stub_timeout: Duration::from_secs(30),
            interpreter: None,
            idle_spin: DEFAULT_IDLE_SPIN,
        }
    }
}

/// Long enough to span a stub's round trip at one request in flight, short
/// enough that an idle instance soon stops spending CPU (section 7 of
/// docs/design/python-backend.md).
const DEFAULT_IDLE_SPIN: Duration = Duration::from_micros(300);

/// Triton's settings that size its growing shared memory region; the arenas
/// need no growth, so they are accepted and ignored.
const IGNORED: &[&str] = &[
    "shm-default-byte-size",
    "shm-growth-byte-size",
    "shm-region-prefix-name",
];

impl PythonSettings {
    /// Reads `(key, value)` pairs given for the `python` backend.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self> {
        let mut settings = Self::default();
        for (key, value) in pairs {
            let number = || {
                value.parse::<u64>().map_err(|_| {
                    Error::invalid_arg(format!(
                        "--backend-config=python,{key}={value}: '{value}' is not a whole number"
                    ))
                })
            };
            match key {
                "shm-max-byte-size" => settings.arena_size = number()?.max(1 << 20),
                "stub-timeout-seconds" => settings.stub_timeout = Duration::from_secs(number()?),
                "idle-spin-microseconds" => {
                    settings.idle_spin = Duration::from_micros(number()?.min(1_000_000))
                }
                "python-interpreter" => settings.interpreter = Some(PathBuf::from(value)),
                _ if IGNORED.contains(&key) => {
                    log::info!("python backend: '{key}' is not needed by oxiserve and is ignored");
                }
                _ => log::warn!("python backend: unknown setting '{key}' ignored"),
            }
        }
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_known_keys() {
        let s = PythonSettings::from_pairs([
            ("shm-max-byte-size", "67108864"),
            ("stub-timeout-seconds", "5"),
            ("python-interpreter", "/opt/py/bin/python3"),
            ("shm-default-byte-size", "1"),
            ("idle-spin-microseconds", "0"),
        ])
        .unwrap();
        assert_eq!(s.idle_spin, Duration::ZERO);
        assert_eq!(s.arena_size, 64 << 20);
        assert_eq!(s.stub_timeout, Duration::from_secs(5));
        assert_eq!(s.interpreter, Some(PathBuf::from("/opt/py/bin/python3")));
    }

    #[test]
    fn bad_number_names_the_key() {
        let err = PythonSettings::from_pairs([("stub-timeout-seconds", "soon")]).unwrap_err();
        assert!(
            err.message.contains("stub-timeout-seconds=soon"),
            "{}",
            err.message
        );
    }
}
