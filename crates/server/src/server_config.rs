//! From command-line options to the core's configuration and backends.

use std::sync::Arc;

use oxiserve_backend_capi::{BackendSetting, CapiLibraries, CapiSettings};
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
    plugins,
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

/// Every backend built into this binary, with its `--backend-config`
/// settings, and Triton's backend libraries (`libtriton_<name>.so`) for
/// the other names, found as `libraries` says.
pub fn backends(
    settings: &[values::BackendConfig],
    libraries: CapiSettings,
) -> Result<BackendRegistry, String> {
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
    let libraries = Arc::new(CapiLibraries::new(libraries));
    plugins::register(&mut backends, &libraries);
    backends.set_libraries(libraries);
    Ok(backends)
}

/// Where and how backend libraries are loaded: `--backend-directory`, every
/// `--backend-config` (a library's own and the global ones), and whether
/// configurations are auto-completed.
pub fn library_settings(options: &ServerOptions) -> CapiSettings {
    CapiSettings {
        backend_directory: options.backend.backend_directory.clone(),
        backend_config: options
            .backend
            .backend_config
            .iter()
            .map(|s| BackendSetting {
                backend: s.backend.clone(),
                setting: s.setting.clone(),
                value: s.value.clone(),
            })
            .collect(),
        auto_complete: !options.repository.strict_model_config,
        min_compute_capability: options.memory.min_supported_compute_capability,
    }
}
