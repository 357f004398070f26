//! The logging extension: `GET` and `POST /v2/logging`.

use axum::{body::Bytes, extract::State, response::Response};
use oxiserve_core::{LogSettings, LogSettingsUpdate};
use oxiserve_types::{Error, ErrorKind};
use serde_json::{Value, json};

use super::{json_response, repository::parse_object};
use crate::{app::App, error::ApiResult};

/// `GET /v2/logging`
pub(crate) async fn get(State(app): State<App>) -> ApiResult<Response> {
    let control = app
        .server
        .log_control()
        .ok_or_else(|| Error::new(ErrorKind::Unsupported, "log settings are not available"))?;
    Ok(json_response(&settings_json(&control.settings())))
}

/// `POST /v2/logging` with the settings to change.
pub(crate) async fn update(State(app): State<App>, body: Bytes) -> ApiResult<Response> {
    let control = app
        .server
        .log_control()
        .ok_or_else(|| Error::new(ErrorKind::Unsupported, "log settings are not available"))?;
    let mut update = LogSettingsUpdate::default();
    // Triton's wording and codes: type errors are 500, a log file change is
    // 501, unknown settings are ignored.
    let wrong =
        |kind: &str| Error::internal(format!("attempt to access JSON non-{kind} as {kind}"));
    for (key, value) in parse_object(&body)? {
        match key.as_str() {
            "log_file" => {
                return Err(Error::new(
                    ErrorKind::Unsupported,
                    "log file location can not be updated through network protocol",
                )
                .into());
            }
            "log_info" => update.log_info = Some(value.as_bool().ok_or_else(|| wrong("boolean"))?),
            "log_warning" => {
                update.log_warning = Some(value.as_bool().ok_or_else(|| wrong("boolean"))?)
            }
            "log_error" => {
                update.log_error = Some(value.as_bool().ok_or_else(|| wrong("boolean"))?)
            }
            "log_verbose_level" => {
                let level = value.as_u64().and_then(|v| u32::try_from(v).ok());
                update.log_verbose_level = Some(level.ok_or_else(|| wrong("unsigned-integer"))?);
            }
            "log_format" => {
                update.log_format = Some(value.as_str().ok_or_else(|| wrong("string"))?.into())
            }
            _ => log::warn!("logging setting '{key}' is not known; ignored"),
        }
    }
    Ok(json_response(&settings_json(&control.update(update)?)))
}

fn settings_json(s: &LogSettings) -> Value {
    json!({
        "log_file": s.log_file,
        "log_info": s.log_info,
        "log_warning": s.log_warning,
        "log_error": s.log_error,
        "log_verbose_level": s.log_verbose_level,
        "log_format": s.log_format,
    })
}
