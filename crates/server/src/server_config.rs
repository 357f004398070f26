//! From command-line options to the core's configuration and backends.

use std::sync::Arc;

use oxiserve_core::{BackendRegistry, ModelControlMode, ServerConfig};

use crate::{
    cli::{ServerOptions, values},
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
    }
}

/// Every backend built into this binary.
pub fn backends() -> BackendRegistry {
    let mut backends = BackendRegistry::default();
    backends.register(Arc::new(oxiserve_backend_identity::IdentityBackend));
    backends
}
