//! The trace extension: `TraceSetting` reads and changes the server's or a
//! model's trace settings.

use oxiserve_core::Server;
use oxiserve_proto::inference::{
    TraceSettingRequest, TraceSettingResponse, trace_setting_request, trace_setting_response,
};
use oxiserve_trace::{Change, SettingsUpdate, setting_text};
use oxiserve_types::{Error, ErrorKind, Result};

/// `TraceSetting` for the server or for one model: applies the settings
/// given (an empty value list clears one), then answers those in force.
pub(crate) fn trace_setting(
    server: &Server,
    request: TraceSettingRequest,
) -> Result<TraceSettingResponse> {
    let model = (!request.model_name.is_empty()).then_some(request.model_name.as_str());
    if let Some(model) = model
        && !server.model_ready(model, None)
    {
        return Err(Error::invalid_arg(format!(
            "Request for unknown model : {model}"
        )));
    }
    let tracing = server.tracing();
    if !request.settings.is_empty() {
        tracing.update(model, &update(&request)?)?;
    }
    let mut settings = std::collections::HashMap::new();
    for (key, values) in tracing.settings(model).reply() {
        let entry: &mut trace_setting_response::SettingValue = settings.entry(key).or_default();
        entry.value.extend(values);
    }
    Ok(TraceSettingResponse { settings })
}

/// The changes `request` asks for, with Triton's checks and texts.
fn update(request: &TraceSettingRequest) -> Result<SettingsUpdate> {
    let settings = &request.settings;
    if settings.contains_key("trace_file") {
        return Err(Error::new(
            ErrorKind::Unsupported,
            "trace file location can not be updated through network protocol",
        ));
    }
    let mut update = SettingsUpdate::default();
    if let Some(value) = settings.get("trace_level") {
        let names: Vec<&str> = value.value.iter().map(String::as_str).collect();
        update.level = match names.is_empty() {
            true => Change::Clear,
            false => setting_text::parse_levels(&names)?.map_or(Change::Keep, Change::Set),
        };
    }
    if let Some(text) = single(settings.get("trace_rate"), "trace_rate")? {
        update.rate = Change::from_text(text, |t| setting_text::parse_unsigned("trace_rate", t))?;
    }
    if let Some(text) = single(settings.get("trace_count"), "trace_count")? {
        update.count = Change::from_text(text, |t| setting_text::parse_count(t, true))?;
    }
    if let Some(text) = single(settings.get("log_frequency"), "log_frequency")? {
        update.log_frequency =
            Change::from_text(text, |t| setting_text::parse_unsigned("log_frequency", t))?;
    }
    Ok(update)
}

/// A setting given once: `Some(None)` clears it (no value), more than one
/// value is an error.
fn single<'a>(
    value: Option<&'a trace_setting_request::SettingValue>,
    name: &str,
) -> Result<Option<Option<&'a str>>> {
    let Some(value) = value else {
        return Ok(None);
    };
    match value.value.as_slice() {
        [] => Ok(Some(None)),
        [text] => Ok(Some(Some(text))),
        _ => Err(Error::invalid_arg(format!(
            "expect only 1 value for '{name}'"
        ))),
    }
}
