//! `tritonserver`'s rules applied after parsing: derived values and
//! rejected combinations.

use std::collections::HashSet;

use clap::error::ErrorKind;
use oxiserve_core::RestrictedCategory;

use super::options::ServerOptions;
use super::values::{ModelControlMode, RestrictedApi};

impl ServerOptions {
    /// Applies `tritonserver`'s post-parse rules.
    pub(super) fn finish(&mut self) {
        let repository = &mut self.repository;
        repository
            .model_repository
            .sort_by(|a, b| a.as_os_str().cmp(b.as_os_str()));
        repository.model_repository.dedup();
        repository.load_model.sort();
        repository.load_model.dedup();
        repository.model_load_thread_count = repository.model_load_thread_count.max(1);
        if repository.disable_auto_complete_config {
            repository.strict_model_config = true;
        }
        if self.grpc.grpc_use_ssl_mutual {
            self.grpc.grpc_use_ssl = true;
        }
        if self.http.http_use_ssl_mutual {
            self.http.http_use_ssl = true;
        }
        let metrics = &mut self.metrics;
        metrics.allow_gpu_metrics &= metrics.allow_metrics;
        metrics.allow_cpu_metrics &= metrics.allow_metrics;
        if !self.passed.contains("metrics-address") {
            metrics.metrics_address = self.http.http_address.clone();
        }
    }

    /// Rejects combinations that `tritonserver` rejects.
    pub(super) fn check(&self) -> Result<(), (ErrorKind, String)> {
        let repository = &self.repository;
        if repository.model_repository.is_empty() {
            let message = "--model-repository must be specified".to_string();
            return Err((ErrorKind::MissingRequiredArgument, message));
        }
        let conflict = |message: &str| Err((ErrorKind::ArgumentConflict, message.to_string()));
        if !repository.load_model.is_empty()
            && repository.model_control_mode != ModelControlMode::Explicit
        {
            return conflict("use of '--load-model' requires '--model-control-mode=explicit'");
        }
        if repository.load_model.len() > 1 && repository.load_model.iter().any(|m| m == "*") {
            return conflict(
                "wildcard model name '*' must be the ONLY --load-model if given at all",
            );
        }
        if !self.cache.cache_config.is_empty() && self.cache.response_cache_byte_size.is_some() {
            return conflict(
                "--response-cache-byte-size and --cache-config are incompatible: give one or the other",
            );
        }
        self.trace_config()
            .map_err(|message| (ErrorKind::ValueValidation, message))?;
        for (flags, kind) in [
            (&self.http.http_restricted_api, "api"),
            (&self.grpc.grpc_restricted_protocol, "protocol"),
        ] {
            check_restrictions(flags, kind)
                .map_err(|message| (ErrorKind::ValueValidation, message))?;
        }
        self.check_ports()
            .map_err(|message| (ErrorKind::ArgumentConflict, message))
    }

    /// No two enabled endpoints on the same address and (non-zero) port;
    /// with `--sagemaker-safe-port-range`, no other endpoint on SageMaker's
    /// address outside the range.
    fn check_ports(&self) -> Result<(), String> {
        // SageMaker and Vertex AI listen on every address, as in Triton.
        let any = "0.0.0.0".to_string();
        let endpoints = [
            (
                "HTTP",
                self.http.allow_http,
                &self.http.http_address,
                self.http.http_port,
            ),
            (
                "GRPC",
                self.grpc.allow_grpc,
                &self.grpc.grpc_address,
                self.grpc.grpc_port,
            ),
            (
                "metrics",
                self.metrics.allow_metrics,
                &self.metrics.metrics_address,
                self.metrics.metrics_port,
            ),
            (
                "SageMaker",
                self.sagemaker.allow_sagemaker,
                &any,
                self.sagemaker.sagemaker_port,
            ),
            (
                "Vertex AI",
                self.vertex_ai.allow_vertex_ai,
                &any,
                self.vertex_ai.vertex_ai_port,
            ),
        ];
        let enabled: Vec<(&str, &String, u16)> = endpoints
            .into_iter()
            .filter(|&(_, allowed, _, port)| allowed && port != 0)
            .map(|(name, _, address, port)| (name, address, port))
            .collect();
        for (i, &(name, address, port)) in enabled.iter().enumerate() {
            let clash = enabled[i + 1..]
                .iter()
                .find(|&&(_, a, p)| (a, p) == (address, port));
            if let Some((other, ..)) = clash {
                return Err(format!(
                    "the server cannot listen to {name} requests and {other} requests at the same address and port {address}:{port}"
                ));
            }
        }
        let sagemaker = &self.sagemaker;
        if let Some(range) = sagemaker
            .sagemaker_safe_port_range
            .filter(|_| sagemaker.allow_sagemaker)
        {
            let outside = enabled.iter().find(|&&(name, address, port)| {
                name != "SageMaker"
                    && *address == any
                    && !(range.first..=range.last).contains(&port)
            });
            if let Some((name, _, port)) = outside {
                return Err(format!(
                    "The server cannot listen to {name} requests at port {port}, allowed port range is [{}, {}]",
                    range.first, range.last
                ));
            }
        }
        Ok(())
    }
}

/// Triton's checks of one kind of restriction flag (`api` for HTTP,
/// `protocol` for gRPC): every group is known and in one group only.
fn check_restrictions(flags: &[RestrictedApi], kind: &str) -> Result<(), String> {
    let mut seen = HashSet::new();
    for name in flags.iter().flat_map(|flag| &flag.apis) {
        let Some(category) = RestrictedCategory::from_name(name) else {
            return Err(format!("unknown restricted {kind} '{name}'"));
        };
        if !seen.insert(category) {
            return Err(format!(
                "restricted {kind} '{name}' can not be specified in multiple config groups"
            ));
        }
    }
    Ok(())
}
