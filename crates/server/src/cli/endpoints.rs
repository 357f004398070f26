//! Endpoint flags: HTTP, gRPC, metrics, SageMaker, Vertex AI.

use std::path::{Path, PathBuf};

use clap::{ArgAction, Args};

use super::values::{GrpcCompressionLevel, MetricsConfig, PortRange, RestrictedApi, parse_bool};

/// HTTP/REST endpoint flags.
#[derive(Clone, Debug, PartialEq, Args)]
#[command(next_help_heading = "HTTP")]
#[group(skip)]
pub struct HttpOptions {
    /// Listen for HTTP requests.
    #[arg(long, default_value = "true", value_parser = parse_bool, action = ArgAction::Set, value_name = "BOOL")]
    pub allow_http: bool,
    /// Address the HTTP server binds to.
    #[arg(long, default_value = "0.0.0.0", value_name = "ADDRESS")]
    pub http_address: String,
    /// HTTP port (0 picks a free one).
    #[arg(long, default_value_t = 8000, value_name = "PORT")]
    pub http_port: u16,
    /// Let several servers listen on the same HTTP port (SO_REUSEPORT).
    #[arg(long, default_value = "false", value_parser = parse_bool, action = ArgAction::Set, value_name = "BOOL")]
    pub reuse_http_port: bool,
    /// Regex of HTTP headers forwarded as inference request parameters.
    #[arg(long, value_name = "REGEX")]
    pub http_header_forward_pattern: Option<String>,
    /// Threads handling HTTP and gRPC requests, at most one per CPU
    /// [default: half the CPUs, 1 to 8].
    #[arg(long, value_name = "N")]
    pub http_thread_count: Option<u32>,
    /// Largest HTTP request body accepted, in bytes (after decompression).
    #[arg(long, default_value_t = 64 * 1024 * 1024, value_name = "BYTES")]
    pub http_max_input_size: usize,
    /// Restrict APIs to requests with a header: `<api>[,<api>...]:<header>=<value>`; repeatable.
    #[arg(long, value_name = "APIS:HEADER=VALUE")]
    pub http_restricted_api: Vec<RestrictedApi>,
    /// HTTP connections served at once; further ones wait to be accepted.
    #[arg(long, default_value_t = 4096, value_name = "N")]
    pub http_max_connections: usize,
    /// Seconds a client has to send a request's headers; also how long an
    /// idle keep-alive connection stays open.
    #[arg(long, default_value_t = 60, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub http_header_timeout_secs: u64,
    /// Seconds without request body data before the request fails.
    #[arg(long, default_value_t = 60, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub http_body_timeout_secs: u64,
    /// Use SSL (HTTPS) for HTTP.
    #[arg(long, default_value = "false", value_parser = parse_bool, action = ArgAction::Set, value_name = "BOOL")]
    pub http_use_ssl: bool,
    /// Require client certificates for HTTP (implies --http-use-ssl).
    #[arg(long, default_value = "false", value_parser = parse_bool, action = ArgAction::Set, value_name = "BOOL")]
    pub http_use_ssl_mutual: bool,
    /// PEM server certificate file for HTTP.
    #[arg(long, value_name = "PATH")]
    pub http_server_cert: Option<PathBuf>,
    /// PEM server key file for HTTP.
    #[arg(long, value_name = "PATH")]
    pub http_server_key: Option<PathBuf>,
    /// PEM root certificate file that HTTP client certificates must chain to.
    #[arg(long, value_name = "PATH")]
    pub http_root_cert: Option<PathBuf>,
}

impl HttpOptions {
    /// The `--http-*ssl*` and certificate flags.
    pub fn ssl(&self) -> SslFlags<'_> {
        SslFlags {
            protocol: "http",
            use_ssl: self.http_use_ssl,
            mutual: self.http_use_ssl_mutual,
            server_cert: self.http_server_cert.as_deref(),
            server_key: self.http_server_key.as_deref(),
            root_cert: self.http_root_cert.as_deref(),
        }
    }
}

/// One endpoint's TLS flags (`--<protocol>-use-ssl`, ...), which HTTP and
/// gRPC spell alike.
#[derive(Clone, Copy, Debug)]
pub struct SslFlags<'a> {
    /// `http` or `grpc`: the flags' prefix.
    pub protocol: &'static str,
    pub use_ssl: bool,
    pub mutual: bool,
    pub server_cert: Option<&'a Path>,
    pub server_key: Option<&'a Path>,
    pub root_cert: Option<&'a Path>,
}

/// gRPC endpoint flags. Durations are in milliseconds.
#[derive(Clone, Debug, PartialEq, Args)]
#[command(next_help_heading = "GRPC")]
#[group(skip)]
pub struct GrpcOptions {
    /// Listen for gRPC requests.
    #[arg(long, default_value = "true", value_parser = parse_bool, action = ArgAction::Set, value_name = "BOOL")]
    pub allow_grpc: bool,
    /// Address the gRPC server binds to.
    #[arg(long, default_value = "0.0.0.0", value_name = "ADDRESS")]
    pub grpc_address: String,
    /// gRPC port (0 picks a free one).
    #[arg(long, default_value_t = 8001, value_name = "PORT")]
    pub grpc_port: u16,
    /// Let several servers listen on the same gRPC port (SO_REUSEPORT).
    #[arg(long, default_value = "false", value_parser = parse_bool, action = ArgAction::Set, value_name = "BOOL")]
    pub reuse_grpc_port: bool,
    /// Regex of gRPC headers forwarded as inference request parameters.
    #[arg(long, value_name = "REGEX")]
    pub grpc_header_forward_pattern: Option<String>,
    /// Inference request/response objects kept allocated for reuse.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub grpc_infer_allocation_pool_size: u32,
    /// Use SSL for gRPC.
    #[arg(long, default_value = "false", value_parser = parse_bool, action = ArgAction::Set, value_name = "BOOL")]
    pub grpc_use_ssl: bool,
    /// Use mutual SSL authentication for gRPC (implies --grpc-use-ssl).
    #[arg(long, default_value = "false", value_parser = parse_bool, action = ArgAction::Set, value_name = "BOOL")]
    pub grpc_use_ssl_mutual: bool,
    /// PEM server certificate file.
    #[arg(long, value_name = "PATH")]
    pub grpc_server_cert: Option<PathBuf>,
    /// PEM server key file.
    #[arg(long, value_name = "PATH")]
    pub grpc_server_key: Option<PathBuf>,
    /// PEM root certificate file.
    #[arg(long, value_name = "PATH")]
    pub grpc_root_cert: Option<PathBuf>,
    /// Compression of inference responses.
    #[arg(
        long,
        value_enum,
        default_value = "none",
        ignore_case = true,
        value_name = "LEVEL"
    )]
    pub grpc_infer_response_compression_level: GrpcCompressionLevel,
    /// Period after which a keepalive ping is sent.
    #[arg(long, default_value_t = 7_200_000, value_name = "MS")]
    pub grpc_keepalive_time: u64,
    /// How long to wait for a keepalive ping acknowledgement before closing.
    #[arg(long, default_value_t = 20_000, value_name = "MS")]
    pub grpc_keepalive_timeout: u64,
    /// Allow keepalive pings when no call is in flight.
    #[arg(long, default_value = "false", value_parser = parse_bool, action = ArgAction::Set, value_name = "BOOL")]
    pub grpc_keepalive_permit_without_calls: bool,
    /// Pings allowed without a data/header frame (0: unlimited).
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub grpc_http2_max_pings_without_data: u32,
    /// Minimum time between pings received without data before a ping strike.
    #[arg(long, default_value_t = 300_000, value_name = "MS")]
    pub grpc_http2_min_recv_ping_interval_without_data: u64,
    /// Bad pings tolerated before GOAWAY (0: unlimited).
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub grpc_http2_max_ping_strikes: u32,
    /// Maximum age of a connection; unlimited when absent.
    #[arg(long, value_name = "MS")]
    pub grpc_max_connection_age: Option<u64>,
    /// Grace period after a connection reaches its maximum age; unlimited when absent.
    #[arg(long, value_name = "MS")]
    pub grpc_max_connection_age_grace: Option<u64>,
    /// Restrict protocols to requests with a header: `<api>[,<api>...]:<header>=<value>`; repeatable.
    #[arg(long, value_name = "APIS:HEADER=VALUE")]
    pub grpc_restricted_protocol: Vec<RestrictedApi>,
    /// Largest gRPC request message accepted, in bytes (after decompression).
    #[arg(long, default_value_t = 64 * 1024 * 1024, value_name = "BYTES")]
    pub grpc_max_input_size: usize,
}

impl GrpcOptions {
    /// The `--grpc-*ssl*` and certificate flags.
    pub fn ssl(&self) -> SslFlags<'_> {
        SslFlags {
            protocol: "grpc",
            use_ssl: self.grpc_use_ssl,
            mutual: self.grpc_use_ssl_mutual,
            server_cert: self.grpc_server_cert.as_deref(),
            server_key: self.grpc_server_key.as_deref(),
            root_cert: self.grpc_root_cert.as_deref(),
        }
    }
}

/// Metrics endpoint flags.
#[derive(Clone, Debug, PartialEq, Args)]
#[command(next_help_heading = "Metrics")]
#[group(skip)]
pub struct MetricsOptions {
    /// Serve Prometheus metrics.
    #[arg(long, default_value = "true", value_parser = parse_bool, action = ArgAction::Set, value_name = "BOOL")]
    pub allow_metrics: bool,
    /// Provide GPU metrics (forced off when metrics are off).
    #[arg(long, default_value = "true", value_parser = parse_bool, action = ArgAction::Set, value_name = "BOOL")]
    pub allow_gpu_metrics: bool,
    /// Provide CPU metrics (forced off when metrics are off).
    #[arg(long, default_value = "true", value_parser = parse_bool, action = ArgAction::Set, value_name = "BOOL")]
    pub allow_cpu_metrics: bool,
    /// Address the metrics server binds to [default: --http-address].
    #[arg(
        long,
        default_value = "0.0.0.0",
        hide_default_value = true,
        value_name = "ADDRESS"
    )]
    pub metrics_address: String,
    /// Metrics port (0 picks a free one).
    #[arg(long, default_value_t = 8002, value_name = "PORT")]
    pub metrics_port: u16,
    /// Interval between metric collections.
    #[arg(long, default_value_t = 2000.0, value_name = "MS")]
    pub metrics_interval_ms: f64,
    /// Metrics setting `<setting>=<value>`; repeatable.
    #[arg(long, value_name = "SETTING=VALUE")]
    pub metrics_config: Vec<MetricsConfig>,
}

/// SageMaker endpoint flags.
#[derive(Clone, Debug, PartialEq, Args)]
#[command(next_help_heading = "Sagemaker")]
#[group(skip)]
pub struct SagemakerOptions {
    /// Listen for SageMaker requests.
    #[arg(long, default_value = "false", value_parser = parse_bool, action = ArgAction::Set, value_name = "BOOL")]
    pub allow_sagemaker: bool,
    /// SageMaker port.
    #[arg(long, default_value_t = 8080, value_name = "PORT")]
    pub sagemaker_port: u16,
    /// Ports allowed for the other endpoints: `<first>-<last>`.
    #[arg(long, value_name = "FIRST-LAST")]
    pub sagemaker_safe_port_range: Option<PortRange>,
    /// Threads handling SageMaker requests.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub sagemaker_thread_count: u32,
}

/// Vertex AI endpoint flags (`AIP_MODE` and `AIP_HTTP_PORT` give defaults,
/// see `environment.rs`).
#[derive(Clone, Debug, PartialEq, Args)]
#[command(next_help_heading = "Vertex")]
#[group(skip)]
pub struct VertexAiOptions {
    /// Listen for Vertex AI requests [default: true with AIP_MODE=PREDICTION].
    #[arg(long, default_value = "false", value_parser = parse_bool, action = ArgAction::Set, value_name = "BOOL")]
    pub allow_vertex_ai: bool,
    /// Vertex AI port [default: AIP_HTTP_PORT if set].
    #[arg(long, default_value_t = 8080, value_name = "PORT")]
    pub vertex_ai_port: u16,
    /// Threads handling Vertex AI requests.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub vertex_ai_thread_count: u32,
    /// Model of predictions without a redirect [default: the repository's only model].
    #[arg(long, value_name = "MODEL")]
    pub vertex_ai_default_model: Option<String>,
}
