//! The trace extension: `GET` and `POST /v2/trace/setting` and
//! `/v2/models/{model}/trace/setting`.

use axum::{
    body::Bytes,
    extract::{Path, State},
    http::header,
    response::{IntoResponse, Response},
};
use oxiserve_trace::{Change, SettingsUpdate, setting_text};
use oxiserve_types::{Error, ErrorKind, Result};
use serde_json::Value;

use crate::{app::App, error::ApiResult};

/// `GET /v2/trace/setting`
pub(crate) async fn get_global(State(app): State<App>) -> ApiResult<Response> {
    settings(&app, None, None)
}

/// `POST /v2/trace/setting`
pub(crate) async fn update_global(State(app): State<App>, body: Bytes) -> ApiResult<Response> {
    settings(&app, None, Some(&body))
}

/// `GET /v2/models/{model}/trace/setting`
pub(crate) async fn get_model(
    State(app): State<App>,
    Path(model): Path<String>,
) -> ApiResult<Response> {
    settings(&app, Some(&model), None)
}

/// `POST /v2/models/{model}/trace/setting`
pub(crate) async fn update_model(
    State(app): State<App>,
    Path(model): Path<String>,
    body: Bytes,
) -> ApiResult<Response> {
    settings(&app, Some(&model), Some(&body))
}

/// Applies the update in `body` (if any), then answers the settings in force.
fn settings(app: &App, model: Option<&str>, body: Option<&[u8]>) -> ApiResult<Response> {
    if let Some(model) = model
        && !app.server.model_ready(model, None)
    {
        return Err(Error::invalid_arg(format!("Request for unknown model : {model}")).into());
    }
    let tracing = app.server.tracing();
    if let Some(body) = body {
        tracing.update(model, &update(body)?)?;
    }
    Ok(reply(&tracing.settings(model).reply()))
}

/// The changes a body asks for, with Triton's checks and texts (type errors
/// are 500; a body that is no object changes nothing).
fn update(body: &[u8]) -> Result<SettingsUpdate> {
    let request: Value = serde_json::from_slice(body)
        .map_err(|e| Error::internal(format!("failed to parse the request JSON buffer: {e}")))?;
    let mut update = SettingsUpdate::default();
    let Value::Object(settings) = request else {
        return Ok(update);
    };
    if settings.contains_key("trace_file") {
        return Err(Error::new(
            ErrorKind::Unsupported,
            "trace file location can not be updated through network protocol",
        ));
    }
    if let Some(value) = settings.get("trace_level") {
        update.level = match value {
            Value::Null => Change::Clear,
            Value::Array(items) => {
                let names = items
                    .iter()
                    .map(|item| item.as_str().ok_or_else(|| not_a("string")))
                    .collect::<Result<Vec<_>>>()?;
                setting_text::parse_levels(&names)?.map_or(Change::Keep, Change::Set)
            }
            _ => return Err(not_a("array")),
        };
    }
    if let Some(text) = text_of(&settings, "trace_rate")? {
        update.rate = Change::from_text(text, |t| setting_text::parse_unsigned("trace_rate", t))?;
    }
    if let Some(text) = text_of(&settings, "trace_count")? {
        update.count = Change::from_text(text, |t| setting_text::parse_count(t, false))?;
    }
    if let Some(text) = text_of(&settings, "log_frequency")? {
        update.log_frequency =
            Change::from_text(text, |t| setting_text::parse_unsigned("log_frequency", t))?;
    }
    Ok(update)
}

/// A setting's text: `Some(None)` for `null`; a value that is no string
/// is an error.
fn text_of<'a>(
    settings: &'a serde_json::Map<String, Value>,
    key: &str,
) -> Result<Option<Option<&'a str>>> {
    match settings.get(key) {
        None => Ok(None),
        Some(Value::Null) => Ok(Some(None)),
        Some(Value::String(text)) => Ok(Some(Some(text))),
        Some(_) => Err(not_a("string")),
    }
}

fn not_a(kind: &str) -> Error {
    Error::internal(format!("attempt to access JSON non-{kind} as {kind}"))
}

/// The settings as Triton's JSON object: `trace_level` an array, every
/// other value a string; a mode option given twice appears twice.
fn reply(entries: &[(String, Vec<String>)]) -> Response {
    let quoted = |text: &str| Value::from(text).to_string();
    let members: Vec<String> = entries
        .iter()
        .map(|(key, values)| {
            let value = if key == "trace_level" {
                let names: Vec<String> = values.iter().map(|v| quoted(v)).collect();
                format!("[{}]", names.join(","))
            } else {
                quoted(values.first().map_or("", String::as_str))
            };
            format!("{}:{value}", quoted(key))
        })
        .collect();
    let body = format!("{{{}}}", members.join(","));
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}
