//! The SageMaker endpoint (`--allow-sagemaker`, `--sagemaker-port`) and the
//! environment variables Triton reads for it: `SAGEMAKER_TRITON_DEFAULT_MODEL_NAME`,
//! `SAGEMAKER_TRITON_PING_MODE` and `SAGEMAKER_TRITON_INFERENCE_TYPE`.

use std::path::PathBuf;

use oxiserve_core::Server;
use oxiserve_http::{InferenceType, PingMode, SagemakerOptions};
use tempfile::TempDir;

use super::listener::bind;
use super::service::{Service, Shutdown};
use crate::cli::{ServerOptions, values::ModelControlMode};

/// The model `/invocations` runs when `SAGEMAKER_TRITON_DEFAULT_MODEL_NAME`
/// is not set (Triton's placeholder: such requests find no model).
const UNSPECIFIED_MODEL: &str = "unspecified_SAGEMAKER_TRITON_DEFAULT_MODEL_NAME";

/// SageMaker's address: Triton has no flag for it.
const ADDRESS: &str = "0.0.0.0";

/// The folder where the multi-model endpoint registers model archives, to
/// be one of the server's repositories: with `--allow-sagemaker` and
/// explicit model control only (registering needs it, as in Triton).
pub fn registry(options: &ServerOptions) -> Result<Option<TempDir>, String> {
    let explicit = options.repository.model_control_mode == ModelControlMode::Explicit;
    if !options.sagemaker.allow_sagemaker || !explicit {
        return Ok(None);
    }
    tempfile::Builder::new()
        .prefix("oxiserve-sagemaker-models-")
        .tempdir()
        .map(Some)
        .map_err(|e| format!("cannot create the SageMaker model registry: {e}"))
}

/// Binds the SageMaker endpoint if `--allow-sagemaker`; the returned
/// service serves it. `registry` is the folder of [`registry`].
pub(super) async fn start(
    server: &Server,
    options: &ServerOptions,
    registry: Option<PathBuf>,
    shutdown: Shutdown,
) -> Result<Option<Service>, String> {
    if !options.sagemaker.allow_sagemaker {
        return Ok(None);
    }
    let sagemaker = sagemaker_options(|name| std::env::var(name).ok(), registry)
        .map_err(|e| format!("failed to start Sagemaker service: {e}"))?;
    let (listener, _) = bind(
        "Sagemaker HTTPService",
        ADDRESS,
        options.sagemaker.sagemaker_port,
    )
    .await?;
    let http = super::http::http_options(options, None);
    let app = oxiserve_http::sagemaker_router(server.clone(), &http, sagemaker);
    Ok(Some(Box::pin(async move {
        oxiserve_http::serve_router(listener, app, http, shutdown.wait())
            .await
            .map_err(|e| format!("Sagemaker service failed: {e}"))
    })))
}

/// The endpoint's settings from the environment (`env` reads a variable).
fn sagemaker_options(
    env: impl Fn(&str) -> Option<String>,
    registry: Option<PathBuf>,
) -> Result<SagemakerOptions, String> {
    let inference_type = match env("SAGEMAKER_TRITON_INFERENCE_TYPE").as_deref() {
        None | Some("infer") => InferenceType::Infer,
        Some("generate") => InferenceType::Generate,
        Some("generate_stream") => InferenceType::GenerateStream,
        Some(other) => {
            return Err(format!(
                "Invalid SAGEMAKER_TRITON_INFERENCE_TYPE '{other}': must be one of: infer, \
                 generate, generate_stream"
            ));
        }
    };
    Ok(SagemakerOptions {
        default_model: env("SAGEMAKER_TRITON_DEFAULT_MODEL_NAME")
            .unwrap_or_else(|| UNSPECIFIED_MODEL.to_string()),
        ping_mode: match env("SAGEMAKER_TRITON_PING_MODE").as_deref() {
            Some("live") => PingMode::Live,
            _ => PingMode::Ready,
        },
        inference_type,
        registry,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(vars: &[(&str, &str)]) -> Result<SagemakerOptions, String> {
        let env = |name: &str| {
            vars.iter()
                .find(|(var, _)| *var == name)
                .map(|(_, value)| value.to_string())
        };
        sagemaker_options(env, None)
    }

    #[test]
    fn defaults_are_tritons() {
        let options = options(&[]).unwrap();
        assert_eq!(options.default_model, UNSPECIFIED_MODEL);
        assert_eq!(options.ping_mode, PingMode::Ready);
        assert_eq!(options.inference_type, InferenceType::Infer);
    }

    #[test]
    fn reads_the_environment() {
        let options = options(&[
            ("SAGEMAKER_TRITON_DEFAULT_MODEL_NAME", "m"),
            ("SAGEMAKER_TRITON_PING_MODE", "live"),
            ("SAGEMAKER_TRITON_INFERENCE_TYPE", "generate_stream"),
        ])
        .unwrap();
        assert_eq!(options.default_model, "m");
        assert_eq!(options.ping_mode, PingMode::Live);
        assert_eq!(options.inference_type, InferenceType::GenerateStream);
    }

    #[test]
    fn an_unknown_inference_type_is_named() {
        let error = options(&[("SAGEMAKER_TRITON_INFERENCE_TYPE", "x")]).unwrap_err();
        assert!(
            error.starts_with("Invalid SAGEMAKER_TRITON_INFERENCE_TYPE 'x'"),
            "{error}"
        );
    }
}
