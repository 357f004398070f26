//! Flags oxiserve accepts but does not act on yet, and deprecated flags.

use super::options::ServerOptions;

/// Whether the options' value of a flag asks for its feature.
type AsksForFeature = fn(&ServerOptions) -> bool;

/// The flags of features oxiserve does not implement yet: the one list to
/// shrink as features land. A flag given on the command line is reported
/// when its value asks for the feature; a value that turns the feature off
/// (`--enable-peer-access=false`, `--reuse-http-port=false`, ...) is fine.
const NOT_YET_SUPPORTED: &[(&str, AsksForFeature)] = &[
    ("enable-peer-access", |o| o.repository.enable_peer_access),
    ("reuse-http-port", |o| o.http.reuse_http_port),
    ("grpc-infer-allocation-pool-size", always),
    ("grpc-http2-max-pings-without-data", always),
    ("grpc-http2-min-recv-ping-interval-without-data", always),
    ("grpc-http2-max-ping-strikes", always),
    ("repoagent-directory", always),
    ("pinned-memory-pool-byte-size", |o| {
        o.memory.pinned_memory_pool_byte_size > 0
    }),
    ("cuda-memory-pool-byte-size", |o| {
        o.memory
            .cuda_memory_pool_byte_size
            .iter()
            .any(|p| p.value > 0)
    }),
    ("cuda-virtual-address-size", always),
    ("min-supported-compute-capability", always),
    ("buffer-manager-thread-count", |o| {
        o.memory.buffer_manager_thread_count > 0
    }),
    ("host-policy", always),
    ("model-load-gpu-limit", always),
];

/// Deprecated flags and what replaces them.
const DEPRECATED: &[(&str, &str)] = &[
    ("strict-model-config", "--disable-auto-complete-config"),
    (
        "response-cache-byte-size",
        "--cache-config=local,size=<bytes>",
    ),
    ("trace-file", "--trace-config=triton,file=<path>"),
    ("trace-level", "--trace-config=level=<level>"),
    ("trace-rate", "--trace-config=rate=<rate>"),
    ("trace-count", "--trace-config=count=<count>"),
    (
        "trace-log-frequency",
        "--trace-config=triton,log-frequency=<n>",
    ),
];

fn always(_: &ServerOptions) -> bool {
    true
}

impl ServerOptions {
    /// One line per flag given on the command line whose feature oxiserve
    /// does not implement yet, e.g. `--grpc-use-ssl: not supported yet (ignored)`.
    pub fn unsupported_options(&self) -> Vec<String> {
        NOT_YET_SUPPORTED
            .iter()
            .filter(|(flag, asks)| self.was_passed(flag) && asks(self))
            .map(|(flag, _)| format!("--{flag}: not supported yet (ignored)"))
            .collect()
    }

    /// One line per deprecated flag given on the command line.
    pub fn deprecation_warnings(&self) -> Vec<String> {
        DEPRECATED
            .iter()
            .filter(|(flag, _)| self.was_passed(flag))
            .map(|(flag, instead)| format!("--{flag} is deprecated; use {instead} instead"))
            .collect()
    }
}

#[cfg(test)]
pub(super) fn flags_in_tables() -> impl Iterator<Item = &'static str> {
    NOT_YET_SUPPORTED
        .iter()
        .map(|(flag, _)| *flag)
        .chain(DEPRECATED.iter().map(|(flag, _)| *flag))
}
