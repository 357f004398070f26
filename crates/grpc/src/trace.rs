//! The trace extension: `TraceSetting`. This build does not trace, so it
//! reports Triton's settings with tracing off and refuses changes.

use oxiserve_core::Server;
use oxiserve_proto::inference::{
    TraceSettingRequest, TraceSettingResponse, trace_setting_response::SettingValue,
};
use oxiserve_types::{Error, ErrorKind, Result};

/// `TraceSetting` for the server or for one model.
pub(crate) fn trace_setting(
    server: &Server,
    request: TraceSettingRequest,
) -> Result<TraceSettingResponse> {
    if !request.model_name.is_empty() && !server.model_ready(&request.model_name, None) {
        return Err(Error::invalid_arg(format!(
            "Request for unknown model : {}",
            request.model_name
        )));
    }
    if request.settings.contains_key("trace_file") {
        return Err(Error::new(
            ErrorKind::Unsupported,
            "trace file location can not be updated through network protocol",
        ));
    }
    if !request.settings.is_empty() {
        return Err(Error::new(
            ErrorKind::Unsupported,
            "trace settings can not be changed: this server does not trace yet",
        ));
    }
    let settings = [
        ("trace_level", "OFF"),
        ("trace_rate", "1000"),
        ("trace_count", "-1"),
        ("log_frequency", "0"),
        ("trace_file", ""),
        ("trace_mode", "triton"),
    ];
    Ok(TraceSettingResponse {
        settings: settings
            .into_iter()
            .map(|(key, value)| {
                let value = SettingValue {
                    value: vec![value.to_string()],
                };
                (key.to_string(), value)
            })
            .collect(),
    })
}
