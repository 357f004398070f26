//! The backend's settings: `--backend-config=python,<key>=<value>`.

use std::{path::PathBuf, time::Duration};

use oxiserve_types::{Error, Result};

use crate::arena::ArenaLayout;

/// How the Python backend runs its processes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonSettings {
    /// The bytes each arena's pool holds at first (`shm-default-byte-size`).
    pub shm_default_byte_size: u64,
    /// The pools grow by multiples of this (`shm-growth-byte-size`).
    pub shm_growth_byte_size: u64,
    /// The most a pool may grow to, where smaller than /dev/shm
    /// (`shm-max-byte-size`, oxiserve's own).
    pub shm_max_byte_size: Option<u64>,
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
            shm_default_byte_size: 1 << 20,
            shm_growth_byte_size: 1 << 20,
            shm_max_byte_size: None,
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

/// Triton's settings that mean nothing here (the arenas have no names),
/// accepted and ignored.
const IGNORED: &[&str] = &["shm-region-prefix-name"];

impl PythonSettings {
    /// How each instance's arenas are sized.
    pub(crate) fn arena_layout(&self) -> ArenaLayout {
        ArenaLayout::new(
            self.shm_default_byte_size,
            self.shm_growth_byte_size,
            self.shm_max_byte_size,
        )
    }

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
                "shm-default-byte-size" => {
                    settings.shm_default_byte_size = number()?;
                    if settings.shm_default_byte_size < 1 << 20 {
                        // Triton's words (it checks 1 MiB and says 4).
                        return Err(Error::invalid_arg(
                            "shm-default-byte-size can't be smaller than 4 MiBs",
                        ));
                    }
                }
                "shm-growth-byte-size" => {
                    settings.shm_growth_byte_size = number()?;
                    if settings.shm_growth_byte_size == 0 {
                        return Err(Error::invalid_arg(
                            "shm-growth-byte-size can't be smaller than or equal to zero.",
                        ));
                    }
                }
                "shm-max-byte-size" => settings.shm_max_byte_size = Some(number()?.max(1 << 20)),
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
            ("shm-default-byte-size", "2097152"),
            ("shm-growth-byte-size", "4096"),
            ("idle-spin-microseconds", "0"),
        ])
        .unwrap();
        assert_eq!(s.idle_spin, Duration::ZERO);
        assert_eq!(s.shm_max_byte_size, Some(64 << 20));
        assert_eq!(s.shm_default_byte_size, 2 << 20);
        assert_eq!(s.shm_growth_byte_size, 4096);
        let layout = s.arena_layout();
        assert_eq!(
            (layout.size, layout.pool, layout.growth),
            (64 << 20, 2 << 20, 4096)
        );
        assert_eq!(s.stub_timeout, Duration::from_secs(5));
        assert_eq!(s.interpreter, Some(PathBuf::from("/opt/py/bin/python3")));
    }

    #[test]
    fn pool_sizes_are_checked_as_triton_checks_them() {
        let err = PythonSettings::from_pairs([("shm-default-byte-size", "1000")]).unwrap_err();
        assert_eq!(
            err.message,
            "shm-default-byte-size can't be smaller than 4 MiBs"
        );
        let err = PythonSettings::from_pairs([("shm-growth-byte-size", "0")]).unwrap_err();
        assert_eq!(
            err.message,
            "shm-growth-byte-size can't be smaller than or equal to zero."
        );
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
