//! `--cache-config` (and the deprecated `--response-cache-byte-size`) to
//! the core's [`CacheSettings`], refusing what Triton would not start with.

use oxiserve_core::CacheSettings;

use crate::cli::{resources::CacheOptions, values::NamedSetting};

/// The response cache the flags ask for; `None` when none; the error names the flag.
pub fn from_options(options: &CacheOptions) -> Result<Option<CacheSettings>, String> {
    if let Some(size) = options.response_cache_byte_size {
        return Ok(Some(CacheSettings::Local { size }));
    }
    let Some(first) = options.cache_config.first() else {
        return Ok(None);
    };
    if let Some(other) = options.cache_config.iter().find(|s| s.name != first.name) {
        return Err(format!(
            "--cache-config: only one cache can be configured, got '{}' and '{}'",
            first.name, other.name
        ));
    }
    match first.name.as_str() {
        "local" => local(&options.cache_config).map(Some),
        name => Err(format!(
            "--cache-config={name},{}={}: no cache '{name}' in this build (available: local)",
            first.setting, first.value
        )),
    }
}

fn local(settings: &[NamedSetting]) -> Result<CacheSettings, String> {
    let mut size = None;
    for s in settings {
        let flag = format!("--cache-config=local,{}={}", s.setting, s.value);
        match s.setting.as_str() {
            "size" => {
                let bytes = s
                    .value
                    .parse::<u64>()
                    .map_err(|_| format!("{flag}: the size must be a number of bytes"))?;
                size = Some(bytes);
            }
            other => {
                return Err(format!(
                    "{flag}: the local cache has no setting '{other}' (it takes size)"
                ));
            }
        }
    }
    let size = size.ok_or(
        "--cache-config: the local cache needs its size: --cache-config=local,size=<bytes>",
    )?;
    Ok(CacheSettings::Local { size })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(flags: &[&str]) -> Result<Option<CacheSettings>, String> {
        let options = CacheOptions {
            cache_config: flags.iter().map(|f| f.parse().unwrap()).collect(),
            cache_directory: "/opt/tritonserver/caches".into(),
            response_cache_byte_size: None,
        };
        from_options(&options)
    }

    #[test]
    fn local_cache_sizes() {
        assert_eq!(settings(&[]), Ok(None));
        assert_eq!(
            settings(&["local,size=1048576"]),
            Ok(Some(CacheSettings::Local { size: 1048576 }))
        );
    }

    #[test]
    fn bad_values_name_the_flag() {
        for (flags, error) in [
            (
                &["local,size=big"][..],
                "--cache-config=local,size=big: the size must be a number of bytes",
            ),
            (
                &["local,colour=red"][..],
                "--cache-config=local,colour=red: the local cache has no setting 'colour'",
            ),
            (
                &["fancy,size=1"][..],
                "--cache-config=fancy,size=1: no cache 'fancy' in this build",
            ),
            (
                &["local,size=1", "other,size=1"][..],
                "--cache-config: only one cache can be configured",
            ),
        ] {
            let message = settings(flags).unwrap_err();
            assert!(message.starts_with(error), "{message}");
        }
    }
}
