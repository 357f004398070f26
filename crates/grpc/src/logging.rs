//! The logging extension: `LogSettings` reads and changes the log settings,
//! with Triton's checks of each setting's type.

use std::collections::HashMap;

use oxiserve_core::{LogSettings, LogSettingsUpdate, Server};
use oxiserve_proto::inference::{
    LogSettingsRequest, LogSettingsResponse,
    log_settings_request::setting_value::ParameterChoice,
    log_settings_response::{SettingValue, setting_value::ParameterChoice as Out},
};
use oxiserve_types::{Error, ErrorKind, Result};

/// `LogSettings`: applies the settings given, then reports them all.
pub(crate) fn log_settings(
    server: &Server,
    request: LogSettingsRequest,
) -> Result<LogSettingsResponse> {
    let control = server
        .log_control()
        .ok_or_else(|| Error::unavailable("the server does not support dynamic logging"))?;
    if request.settings.is_empty() {
        return Ok(response(control.settings()));
    }
    let update = parse(request.settings)?;
    Ok(response(control.update(update)?))
}

/// The changes asked for, checked in Triton's order.
fn parse(
    mut settings: HashMap<String, oxiserve_proto::inference::log_settings_request::SettingValue>,
) -> Result<LogSettingsUpdate> {
    let mut take = |key: &str| settings.remove(key).map(|v| v.parameter_choice);
    if take("log_file").is_some() {
        return Err(Error::new(
            ErrorKind::Unsupported,
            "log file location can not be updated through network protocol",
        ));
    }
    let boolean = |key: &str, value: Option<Option<ParameterChoice>>| match value {
        None => Ok(None),
        Some(Some(ParameterChoice::BoolParam(b))) => Ok(Some(b)),
        Some(_) => Err(Error::invalid_arg(format!("expect boolean for '{key}'"))),
    };
    let mut update = LogSettingsUpdate {
        log_info: boolean("log_info", take("log_info"))?,
        log_warning: boolean("log_warning", take("log_warning"))?,
        log_error: boolean("log_error", take("log_error"))?,
        ..Default::default()
    };
    update.log_verbose_level = match take("log_verbose_level") {
        None => None,
        Some(Some(ParameterChoice::Uint32Param(level))) => Some(level),
        Some(_) => return Err(Error::invalid_arg("expect int32 for 'log_verbose_level'")),
    };
    update.log_format = match take("log_format") {
        None => None,
        Some(Some(ParameterChoice::StringParam(format))) => {
            if format != "default" && format != "ISO8601" {
                return Err(Error::invalid_arg(format!(
                    "invalid argument for log_format, got: {format}"
                )));
            }
            Some(format)
        }
        Some(_) => return Err(Error::invalid_arg("expect string for 'log_format'")),
    };
    Ok(update)
}

fn response(s: LogSettings) -> LogSettingsResponse {
    let value = |choice| SettingValue {
        parameter_choice: Some(choice),
    };
    let settings = [
        ("log_file", value(Out::StringParam(s.log_file))),
        ("log_info", value(Out::BoolParam(s.log_info))),
        ("log_warning", value(Out::BoolParam(s.log_warning))),
        ("log_error", value(Out::BoolParam(s.log_error))),
        (
            "log_verbose_level",
            value(Out::Uint32Param(s.log_verbose_level)),
        ),
        ("log_format", value(Out::StringParam(s.log_format))),
    ];
    LogSettingsResponse {
        settings: settings
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    }
}
