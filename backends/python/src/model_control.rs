//! A model's model control calls (`pb_utils.load_model`, `unload_model`,
//! `is_model_ready`), run on the server through its host as Triton's
//! Python backend runs them, and answered with a `ModelControlReply`.
//!
//! A load or unload runs on a thread of its own: it may take long, and the
//! pump must go on reading the process's frames meanwhile (the loaded
//! model's own BLS calls may reach this very process).

use std::sync::Arc;

use oxiserve_backend::{LoadParameters, ModelHost};
use oxiserve_types::{Error, Result};

use crate::{
    connection::Connection,
    protocol::{ModelControlCall, ToStub},
};

/// The prefix of a load parameter that is a file of the model's folder.
const FILE_PREFIX: &str = "file:";

/// Runs `call` (tag `call_id`) on `host`; the answer goes to the stub over
/// `connection`.
pub(crate) fn start(
    host: &Arc<dyn ModelHost>,
    connection: &Arc<Connection>,
    call_id: u64,
    call: ModelControlCall,
) {
    let reply = {
        let connection = connection.clone();
        // A stub that died meanwhile needs no answer.
        move |result| {
            let _ = connection.send(&ToStub::ModelControlReply { call_id, result });
        }
    };
    if matches!(call, ModelControlCall::IsReady { .. }) {
        // A look at the model table: no need for a thread.
        return reply(run(&**host, call));
    }
    let host = host.clone();
    let spawned = std::thread::Builder::new()
        .name("python-model-control".into())
        .spawn(move || reply(run(&*host, call)));
    if let Err(e) = spawned {
        log::error!("cannot start a thread for a model's load or unload: {e}");
    }
}

/// The answer to `call`: whether the model is ready, `false` after a load
/// or unload.
fn run(host: &dyn ModelHost, call: ModelControlCall) -> Result<bool> {
    match call {
        ModelControlCall::Load {
            model_name,
            config,
            files,
        } => host
            .load_model(&model_name, load_parameters(config, files)?)
            .map(|()| false),
        ModelControlCall::Unload {
            model_name,
            unload_dependents,
        } => host
            .unload_model(&model_name, unload_dependents)
            .map(|()| false),
        ModelControlCall::IsReady {
            model_name,
            model_version,
        } => Ok(host.is_model_ready(&model_name, model_version_of(&model_version)?)),
    }
}

/// The load parameters of `load_model(config, files)`, as Triton's core
/// reads them: `file:<path>` names are files; with a configuration, other
/// names are ignored, without one the first of them is refused (unless a
/// file needs the configuration, which the load then says).
fn load_parameters(config: String, files: Vec<(String, bytes::Bytes)>) -> Result<LoadParameters> {
    let config = (!config.is_empty()).then_some(config);
    let (files, others): (Vec<_>, Vec<_>) = files
        .into_iter()
        .partition(|(name, _)| name.starts_with(FILE_PREFIX));
    if let (None, true, Some((name, _))) = (&config, files.is_empty(), others.first()) {
        return Err(Error::invalid_arg(format!(
            "Unrecognized load parameter '{name}' with type 'BYTES'"
        )));
    }
    let files = files
        .into_iter()
        .map(|(name, contents)| (name[FILE_PREFIX.len()..].to_string(), contents))
        .collect();
    Ok(LoadParameters { config, files })
}

/// The version of `is_model_ready(model_version=...)`: `None` (the latest)
/// for `""`, else the number C++'s `std::stol` reads at its start, as
/// Triton's Python backend reads it, which must not be negative.
fn model_version_of(text: &str) -> Result<Option<i64>> {
    if text.is_empty() {
        return Ok(None);
    }
    let invalid = |details: &str| {
        Error::internal(format!(
            "failed to get model version from specified version string '{text}'{details}, \
             version should be an integral value > 0"
        ))
    };
    let version = stol(text).ok_or_else(|| invalid(" (details: stol)"))?;
    match version < 0 {
        true => Err(invalid("")),
        false => Ok(Some(version)),
    }
}

/// `std::stol(text)`: leading white space, a sign and the digits after it,
/// ignoring what follows them; `None` when there is no digit or the number
/// does not fit.
fn stol(text: &str) -> Option<i64> {
    let rest = text.trim_start_matches([' ', '\t', '\n', '\u{b}', '\u{c}', '\r']);
    let (negative, rest) = match rest.as_bytes().first() {
        Some(b'-') => (true, &rest[1..]),
        Some(b'+') => (false, &rest[1..]),
        _ => (false, rest),
    };
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return None;
    }
    let number = format!("{}{}", if negative { "-" } else { "" }, &rest[..digits]);
    number.parse().ok()
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;

    #[test]
    fn versions_read_as_stol_reads_them() {
        assert_eq!(model_version_of("").unwrap(), None);
        assert_eq!(model_version_of("3").unwrap(), Some(3));
        assert_eq!(model_version_of(" +2").unwrap(), Some(2));
        assert_eq!(model_version_of("2abc").unwrap(), Some(2));
        assert_eq!(model_version_of("0").unwrap(), Some(0));
        let text = model_version_of("abc").unwrap_err().message;
        assert_eq!(
            text,
            "failed to get model version from specified version string 'abc' (details: stol), \
             version should be an integral value > 0"
        );
        let text = model_version_of("-1").unwrap_err().message;
        assert_eq!(
            text,
            "failed to get model version from specified version string '-1', version should be \
             an integral value > 0"
        );
        assert!(model_version_of("99999999999999999999").is_err());
        assert!(model_version_of("-").is_err());
    }

    #[test]
    fn file_parameters_lose_their_prefix() {
        let files = vec![
            ("file:1/model.onnx".to_string(), Bytes::from_static(b"x")),
            ("other".to_string(), Bytes::new()),
        ];
        let parameters = load_parameters("{}".into(), files).unwrap();
        assert_eq!(parameters.config.as_deref(), Some("{}"));
        assert_eq!(
            parameters.files,
            vec![("1/model.onnx".to_string(), Bytes::from_static(b"x"))]
        );
    }

    #[test]
    fn unknown_parameters_without_a_config_are_refused() {
        let files = vec![("1/model.onnx".to_string(), Bytes::new())];
        let e = load_parameters(String::new(), files).unwrap_err();
        assert_eq!(
            e.message,
            "Unrecognized load parameter '1/model.onnx' with type 'BYTES'"
        );
        // A file without a configuration: the load says what is missing.
        let files = vec![("file:1/model.onnx".to_string(), Bytes::new())];
        let parameters = load_parameters(String::new(), files).unwrap();
        assert_eq!(parameters.config, None);
        assert_eq!(parameters.files.len(), 1);
    }
}
