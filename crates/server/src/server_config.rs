//! From command-line options to the core's configuration and backends.

use std::sync::Arc;

use oxiserve_backend_onnxruntime::{OnnxBackend, OnnxSettings};
use oxiserve_backend_openvino::{OpenVinoBackend, OpenVinoSettings};
use oxiserve_backend_python::{PythonBackend, PythonSettings};
use oxiserve_backend_tensorflow::{TfBackend, TfSettings};
use oxiserve_core::{
    BackendRegistry, ModelControlMode, RateLimiterSettings, ResourceCount, ServerConfig,
    ServerLimits,
};

use crate::{
    cli::{ServerOptions, resources::RateLimiterOptions, values},
    metrics::MetricsSettings,
};

/// The core's settings from the command line.
pub fn from_options(options: &ServerOptions, metrics: &MetricsSettings) -> ServerConfig {
    let repository = &options.repository;
    ServerConfig {
        id: options.id.clone(),
        repositories: repository.model_repository.clone(),
        control_mode: match repository.model_control_mode {
            values::ModelControlMode::None => ModelControlMode::None,
            values::ModelControlMode::Poll => ModelControlMode::Poll,
            values::ModelControlMode::Explicit => ModelControlMode::Explicit,
        },
        startup_models: repository.load_model.clone(),
        auto_complete: !repository.strict_model_config,
        strict_readiness: repository.strict_readiness,
        gpus: Vec::new(),
        latency_histograms: metrics.histogram_latencies,
        latency_summaries: metrics.summaries.clone(),
        first_response_histogram: metrics.first_response_histogram,
        model_load_threads: repository.model_load_thread_count.max(1) as usize,
        model_load_retries: repository.model_load_retry_count,
        model_config_name: repository
            .model_config_name
            .clone()
            .filter(|name| !name.is_empty()),
        model_namespacing: repository.model_namespacing,
        limits: ServerLimits {
            shared_memory_regions: options.memory.shared_memory_region_limit,
            model_queue: options.memory.model_queue_limit,
        },
        response_cache: None,
        rate_limiter: rate_limiter(&options.rate_limiter),
    }
}

/// The rate limiter `--rate-limit` asks for, with `--rate-limit-resource`'s
/// counts; `None` when it is off.
fn rate_limiter(options: &RateLimiterOptions) -> Option<RateLimiterSettings> {
    if options.rate_limit == values::RateLimitMode::Off {
        return None;
    }
    let resources = options
        .rate_limit_resource
        .iter()
        .map(|resource| ResourceCount {
            name: resource.name.clone(),
            count: u64::from(resource.count),
            device: resource
                .device
                .map(|d| i32::try_from(d).unwrap_or(i32::MAX)),
        })
        .collect();
    Some(RateLimiterSettings { resources })
}

/// Every backend built into this binary, with its `--backend-config` settings.
pub fn backends(settings: &[values::BackendConfig]) -> Result<BackendRegistry, String> {
    for setting in settings {
        if let Some(backend) = setting.backend.as_deref().filter(|b| !BUILT_IN.contains(b)) {
            log::warn!(
                "--backend-config={backend},{}={}: no backend '{backend}' in this build; ignored",
                setting.setting,
                setting.value
            );
        }
    }
    let python = PythonSettings::from_pairs(
        settings
            .iter()
            .filter(|s| s.backend.as_deref() == Some("python"))
            .map(|s| (s.setting.as_str(), s.value.as_str())),
    )
    .map_err(|e| e.message)?;
    let onnx = OnnxSettings::from_pairs(
        settings
            .iter()
            .filter(|s| match s.backend.as_deref() {
                Some(backend) => backend == "onnxruntime",
                None => s.setting == "default-max-batch-size",
            })
            .map(|s| (s.setting.as_str(), s.value.as_str())),
    )
    .map_err(|e| e.message)?;
    let tensorflow = TfSettings::from_pairs(
        settings
            .iter()
            .filter(|s| match s.backend.as_deref() {
                Some(backend) => backend == "tensorflow",
                None => s.setting == "default-max-batch-size",
            })
            .map(|s| (s.setting.as_str(), s.value.as_str())),
    )
    .map_err(|e| e.message)?;
    let openvino = OpenVinoSettings::from_pairs(
        settings
            .iter()
            .filter(|s| match s.backend.as_deref() {
                Some(backend) => backend == "openvino",
                None => s.setting == "default-max-batch-size",
            })
            .map(|s| (s.setting.as_str(), s.value.as_str())),
    )
    .map_err(|e| e.message)?;
    let mut backends = BackendRegistry::default();
    backends.register(Arc::new(oxiserve_backend_identity::IdentityBackend));
    backends.register(Arc::new(PythonBackend::new(python)));
    backends.register(Arc::new(OnnxBackend::new(onnx)));
    backends.register(Arc::new(OpenVinoBackend::new(openvino)));
    backends.register(Arc::new(TfBackend::new(tensorflow)));
    backends.register(Arc::new(oxiserve_backend_tokenizer::TokenizerBackend));
    #[cfg(feature = "pytorch")]
    backends.register(Arc::new(oxiserve_backend_pytorch::PyTorchBackend));
    Ok(backends)
}

/// The backends `backends` registers.
const BUILT_IN: &[&str] = &[
    "identity",
    "onnxruntime",
    "openvino",
    "python",
    "tensorflow",
    "tokenizer",
    #[cfg(feature = "pytorch")]
    "pytorch",
];
