//! `--trace-config` (and the deprecated `--trace-*` flags) as the tracing
//! they set up, read as `tritonserver` reads them: the deprecated flags
//! first, `--trace-config` over them, a mode's own settings only in that
//! mode, and unknown settings kept (the settings replies echo them).

use oxiserve_trace::{
    TraceConfig, TraceLevel, TraceMode,
    setting_text::{NotAnInt, stoi},
};

use super::{
    options::ServerOptions,
    values::{TraceLevel as LevelFlag, TraceMode as ModeFlag},
};

/// The OpenTelemetry batch span processor settings, in the order Triton
/// appends their defaults, with their environment variables.
const BATCH_SETTINGS: [(&str, &str, &str); 3] = [
    (
        "bsp_max_export_batch_size",
        "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
        "512",
    ),
    ("bsp_schedule_delay", "OTEL_BSP_SCHEDULE_DELAY", "5000"),
    ("bsp_max_queue_size", "OTEL_BSP_MAX_QUEUE_SIZE", "2048"),
];

impl ServerOptions {
    /// The tracing the flags set up; a value that is not one is an error
    /// naming its flag and setting, as Triton's (`Bad option: ...`).
    pub fn trace_config(&self) -> Result<TraceConfig, String> {
        let flags = &self.trace;
        let explicit_off = flags.trace_level.contains(&LevelFlag::Off);
        let mut config = TraceConfig {
            level: flags
                .trace_level
                .iter()
                .fold(TraceLevel::OFF, |all, level| all.union(level_of(*level))),
            rate: flags.trace_rate,
            count: flags.trace_count,
            log_frequency: flags.trace_log_frequency,
            file: flags
                .trace_file
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            ..TraceConfig::default()
        };
        let settings = |mode: Option<ModeFlag>| {
            flags
                .trace_config
                .iter()
                .filter(move |c| c.mode == mode)
                .map(|c| (c.setting.as_str(), c.value.as_str()))
        };
        for (setting, value) in settings(None) {
            let bad = |why: String| format!("Bad option: \"--trace-config {setting}\". {why}");
            match setting {
                "rate" => config.rate = int(value).map_err(bad)? as u32,
                "count" => config.count = int(value).map_err(bad)?,
                "level" => config.level = config.level.union(level(value).map_err(bad)?),
                "mode" => config.mode = mode(value).map_err(bad)?,
                _ => {}
            }
        }
        match config.mode {
            TraceMode::Triton => {
                for (setting, value) in settings(Some(ModeFlag::Triton)) {
                    let bad =
                        |why| format!("Bad option: \"--trace-config triton,{setting}\". {why}");
                    match setting {
                        "file" => config.file = value.to_string(),
                        "log-frequency" => config.log_frequency = int(value).map_err(bad)? as u32,
                        _ => {}
                    }
                    config.mode_options.push((setting.into(), value.into()));
                }
            }
            TraceMode::OpenTelemetry => {
                config.file.clear();
                config.log_frequency = 0;
                opentelemetry(&mut config, settings(Some(ModeFlag::Opentelemetry)))?;
            }
        }
        if explicit_off {
            config.level = TraceLevel::OFF;
        }
        Ok(config)
    }

    /// Warnings for deprecated flags OpenTelemetry mode ignores.
    pub fn trace_warnings(&self) -> Vec<String> {
        let otel = self
            .trace_config()
            .is_ok_and(|c| c.mode == TraceMode::OpenTelemetry);
        ["trace-file", "trace-log-frequency"]
            .into_iter()
            .filter(|flag| otel && self.was_passed(flag))
            .map(|flag| format!("--{flag} is ignored in opentelemetry trace mode"))
            .collect()
    }
}

/// The OpenTelemetry settings: `url`, `resource=<key>=<value>` (repeatable)
/// and the batch span processor's, whose defaults (or `OTEL_BSP_*`) are
/// echoed after those given.
fn opentelemetry<'a>(
    config: &mut TraceConfig,
    settings: impl Iterator<Item = (&'a str, &'a str)>,
) -> Result<(), String> {
    let otel = &mut config.opentelemetry;
    let mut given = Vec::new();
    for (setting, value) in settings {
        let bad = |why| format!("Bad option: \"--trace-config opentelemetry,{setting}\". {why}");
        match setting {
            "url" => otel.url = value.to_string(),
            "resource" => {
                let (key, value) = value.split_once('=').unwrap_or((value, ""));
                otel.resource.push((key.to_string(), value.to_string()));
            }
            "bsp_max_queue_size" => otel.max_queue_size = int(value).map_err(bad)? as u32,
            "bsp_schedule_delay" => otel.schedule_delay_ms = int(value).map_err(bad)? as u32,
            "bsp_max_export_batch_size" => {
                otel.max_export_batch_size = int(value).map_err(bad)? as u32
            }
            _ => {}
        }
        given.push(setting);
        config.mode_options.push((setting.into(), value.into()));
    }
    for (setting, variable, default) in BATCH_SETTINGS {
        if given.contains(&setting) {
            continue;
        }
        let text = std::env::var(variable).unwrap_or_else(|_| default.to_string());
        let value = int(&text).map_err(|why| format!("Bad option: \"{variable}\". {why}"))? as u32;
        match setting {
            "bsp_max_queue_size" => otel.max_queue_size = value,
            "bsp_schedule_delay" => otel.schedule_delay_ms = value,
            _ => otel.max_export_batch_size = value,
        }
        config
            .mode_options
            .push((setting.into(), value.to_string()));
    }
    Ok(())
}

/// An `int` as Triton's option parser reads it (`std::stoi`).
fn int(text: &str) -> Result<i32, String> {
    stoi(text).map_err(|e| match e {
        NotAnInt::Invalid => format!("Invalid option value. Got {text}"),
        NotAnInt::OutOfRange => format!("Provided option value is out of bound. Got {text}"),
    })
}

fn level(text: &str) -> Result<TraceLevel, String> {
    use clap::ValueEnum;
    LevelFlag::from_str(text, true).map(level_of).map_err(|_| {
        format!(
            "invalid value for trace level option: {}",
            text.to_lowercase()
        )
    })
}

fn level_of(flag: LevelFlag) -> TraceLevel {
    match flag {
        LevelFlag::Off => TraceLevel::OFF,
        LevelFlag::Timestamps => TraceLevel::TIMESTAMPS,
        LevelFlag::Tensors => TraceLevel::TENSORS,
    }
}

fn mode(text: &str) -> Result<TraceMode, String> {
    use clap::ValueEnum;
    match ModeFlag::from_str(text, true) {
        Ok(ModeFlag::Triton) => Ok(TraceMode::Triton),
        Ok(ModeFlag::Opentelemetry) => Ok(TraceMode::OpenTelemetry),
        Err(_) => Err(format!(
            "invalid value for trace mode option: {}. Available options are \"triton\" and \
             \"opentelemetry\"",
            text.to_lowercase()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Command, parse_args};

    fn config(flags: &[&str]) -> Result<TraceConfig, String> {
        let args = ["oxiserve", "--model-repository=/m"].iter().chain(flags);
        match parse_args(args) {
            Ok(Command::Serve(options)) => options.trace_config(),
            Ok(_) => panic!("not a serve command"),
            Err(e) => Err(e.to_string()),
        }
    }

    #[test]
    fn trace_config_overrides_the_deprecated_flags() {
        let c = config(&[
            "--trace-file=/old.json",
            "--trace-rate=3",
            "--trace-level=TENSORS",
            "--trace-config=triton,file=/new.json",
            "--trace-config=rate=7",
            "--trace-config=level=TIMESTAMPS",
            "--trace-config=triton,custom=x",
        ])
        .unwrap();
        assert_eq!(c.file, "/new.json");
        assert_eq!(c.rate, 7);
        assert_eq!(c.level, TraceLevel::TIMESTAMPS.union(TraceLevel::TENSORS));
        assert_eq!(
            c.mode_options,
            [
                ("file".into(), "/new.json".into()),
                ("custom".into(), "x".into())
            ]
        );
    }

    #[test]
    fn only_the_deprecated_level_flag_turns_tracing_off() {
        let on = config(&[
            "--trace-config=level=TIMESTAMPS",
            "--trace-config=level=OFF",
        ]);
        assert_eq!(on.unwrap().level, TraceLevel::TIMESTAMPS);
        let off = config(&["--trace-config=level=TIMESTAMPS", "--trace-level=OFF"]);
        assert_eq!(off.unwrap().level, TraceLevel::OFF);
    }

    #[test]
    fn opentelemetry_settings_and_batch_defaults() {
        let c = config(&[
            "--trace-config=mode=opentelemetry",
            "--trace-config=opentelemetry,url=collector:4318/v1/traces",
            "--trace-config=opentelemetry,resource=a=b=c",
            "--trace-config=opentelemetry,bsp_schedule_delay=100",
            "--trace-config=triton,file=/ignored.json",
        ])
        .unwrap();
        assert_eq!(c.mode, TraceMode::OpenTelemetry);
        assert_eq!(c.file, "");
        let otel = &c.opentelemetry;
        assert_eq!(otel.url, "collector:4318/v1/traces");
        assert_eq!(otel.resource, [("a".to_string(), "b=c".to_string())]);
        assert_eq!(otel.schedule_delay_ms, 100);
        let keys: Vec<&str> = c.mode_options.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "url",
                "resource",
                "bsp_schedule_delay",
                "bsp_max_export_batch_size",
                "bsp_max_queue_size"
            ]
        );
    }

    #[test]
    fn bad_values_name_the_flag() {
        let e = config(&["--trace-config=rate=abc"]).unwrap_err();
        assert!(
            e.contains("Bad option: \"--trace-config rate\". Invalid option value. Got abc"),
            "{e}"
        );
        let e = config(&["--trace-config=level=Bogus"]).unwrap_err();
        assert!(
            e.contains("invalid value for trace level option: bogus"),
            "{e}"
        );
        let e = config(&[
            "--trace-config=mode=opentelemetry",
            "--trace-config=opentelemetry,bsp_max_queue_size=x",
        ])
        .unwrap_err();
        assert!(
            e.contains("--trace-config opentelemetry,bsp_max_queue_size"),
            "{e}"
        );
    }
}
