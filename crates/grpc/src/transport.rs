//! The HTTP/2 server under the services: message size limits, compression,
//! keepalive, connection age, TLS and graceful shutdown.

use std::{future::Future, sync::Arc, time::Duration};

use oxiserve_core::{HeaderForward, Restrictions, Server};
use oxiserve_proto::{
    health::health_server::HealthServer,
    inference::grpc_inference_service_server::GrpcInferenceServiceServer,
};
use tokio::{net::TcpListener, sync::watch};
use tonic::{
    codec::CompressionEncoding,
    transport::server::{Server as TonicServer, TcpIncoming},
};

use oxiserve_tls::{TlsAcceptor, TlsListener};

use crate::{health::HealthService, service::InferenceService, tls::TlsIncoming};

/// The largest response message, as in Triton (`INT32_MAX` bytes).
const MAX_RESPONSE_BYTES: usize = i32::MAX as usize;

/// Settings of the gRPC frontend (the `--grpc-*` flags it honours).
#[derive(Debug, Clone)]
pub struct GrpcOptions {
    /// Interval of the server's keepalive pings (`--grpc-keepalive-time`).
    pub keepalive_time: Duration,
    /// How long a ping may go unanswered before the connection closes
    /// (`--grpc-keepalive-timeout`).
    pub keepalive_timeout: Duration,
    /// Connections older than this are asked to go away
    /// (`--grpc-max-connection-age`); `None` for no limit.
    pub max_connection_age: Option<Duration>,
    /// Time a connection past its age gets to finish its calls
    /// (`--grpc-max-connection-age-grace`); `None` for no limit.
    pub max_connection_age_grace: Option<Duration>,
    /// Gzip responses for clients that accept it
    /// (`--grpc-infer-response-compression-level` other than `none`).
    pub compress_responses: bool,
    /// Headers some API groups require (`--grpc-restricted-protocol`).
    pub restrictions: Restrictions,
    /// The largest request message, decompressed (`--grpc-max-input-size`;
    /// Triton takes up to 2 GiB, which lets a client make the server hold
    /// twice that).
    pub max_request_bytes: usize,
    /// Serve TLS with this acceptor (`--grpc-use-ssl`; see
    /// [`tls_acceptor`](crate::tls_acceptor)); plain TCP when `None`.
    pub tls: Option<TlsAcceptor>,
    /// Inference request metadata to forward as request parameters
    /// (`--grpc-header-forward-pattern`).
    pub header_forward: Option<HeaderForward>,
}

impl Default for GrpcOptions {
    fn default() -> Self {
        Self {
            keepalive_time: Duration::from_millis(7_200_000),
            keepalive_timeout: Duration::from_millis(20_000),
            max_connection_age: None,
            max_connection_age_grace: None,
            compress_responses: false,
            restrictions: Restrictions::default(),
            max_request_bytes: 64 * 1024 * 1024,
            tls: None,
            header_forward: None,
        }
    }
}

/// Serves `server` on `listener` until `shutdown` completes; open streams
/// then stop taking requests, finish the ones in flight and end.
pub async fn serve(
    listener: TcpListener,
    server: Server,
    options: GrpcOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), tonic::transport::Error> {
    let (stop, stopping) = watch::channel(false);
    let shutdown = async move {
        shutdown.await;
        let _ = stop.send(true);
    };
    let mut inference = GrpcInferenceServiceServer::new(InferenceService::new(
        server.clone(),
        stopping,
        Arc::new(options.restrictions),
        options.header_forward,
    ))
    .accept_compressed(CompressionEncoding::Gzip)
    .accept_compressed(CompressionEncoding::Deflate)
    .max_decoding_message_size(options.max_request_bytes)
    .max_encoding_message_size(MAX_RESPONSE_BYTES);
    if options.compress_responses {
        inference = inference.send_compressed(CompressionEncoding::Gzip);
    }
    let mut builder = TonicServer::builder()
        .http2_keepalive_interval(Some(options.keepalive_time))
        .http2_keepalive_timeout(Some(options.keepalive_timeout));
    if let Some(age) = options.max_connection_age {
        builder = builder.max_connection_age(age);
    }
    if let Some(grace) = options.max_connection_age_grace {
        builder = builder.max_connection_age_grace(grace);
    }
    let router = builder
        .add_service(inference)
        .add_service(HealthServer::new(HealthService::new(server)));
    match options.tls {
        Some(acceptor) => {
            let incoming = TlsIncoming(TlsListener::new(listener, acceptor));
            router
                .serve_with_incoming_shutdown(incoming, shutdown)
                .await
        }
        None => {
            let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
            router
                .serve_with_incoming_shutdown(incoming, shutdown)
                .await
        }
    }
}
