//! The gRPC endpoint (`--grpc-*` flags).

use std::time::Duration;

use oxiserve_core::Server;

use super::header_forward::header_forward;
use super::listener::bind_with;
use super::restrictions::restrictions;
use super::service::{Service, Shutdown};
use super::tls;

use crate::cli::{ServerOptions, values::GrpcCompressionLevel};

/// Binds the gRPC endpoint if `--allow-grpc`; the returned service serves it.
pub(super) async fn start(
    server: &Server,
    options: &ServerOptions,
    shutdown: Shutdown,
) -> Result<Option<Service>, String> {
    let grpc = &options.grpc;
    if !grpc.allow_grpc {
        return Ok(None);
    }
    let tls = tls::files(grpc.ssl())?
        .map(oxiserve_grpc::tls_acceptor)
        .transpose()
        .map_err(|e| format!("gRPC SSL: {e}"))?;
    let header_forward = header_forward(
        "grpc-header-forward-pattern",
        grpc.grpc_header_forward_pattern.as_deref(),
    )?;
    let (listener, _) = bind_with(
        "GRPCInferenceService",
        &grpc.grpc_address,
        grpc.grpc_port,
        grpc.reuse_grpc_port,
    )
    .await?;
    let grpc_options = oxiserve_grpc::GrpcOptions {
        keepalive_time: Duration::from_millis(grpc.grpc_keepalive_time),
        keepalive_timeout: Duration::from_millis(grpc.grpc_keepalive_timeout),
        max_connection_age: grpc.grpc_max_connection_age.map(Duration::from_millis),
        max_connection_age_grace: grpc
            .grpc_max_connection_age_grace
            .map(Duration::from_millis),
        compress_responses: grpc.grpc_infer_response_compression_level
            != GrpcCompressionLevel::None,
        restrictions: restrictions(
            &grpc.grpc_restricted_protocol,
            oxiserve_grpc::restricted_header,
        ),
        max_request_bytes: grpc.grpc_max_input_size,
        tls,
        header_forward,
    };
    let server = server.clone();
    Ok(Some(Box::pin(async move {
        oxiserve_grpc::serve(listener, server, grpc_options, shutdown.wait())
            .await
            .map_err(|e| format!("gRPC service failed: {e}"))
    })))
}
