//! Unary ModelInfer calls with pre-encoded requests.

use std::{sync::Arc, time::Instant};

use bytes::Bytes;
use hyper::{Response, StatusCode, Uri, body::Incoming};

use super::{
    conn::GrpcConn,
    encode::with_sequence,
    frame::{self, Decoder},
};
use crate::{
    client::{Connector, InferClient, Outcome},
    error::{Error, Result},
    http::body::{OnceBody, SendClock, next_frame},
    sequence::SequenceStep,
    target::Target,
};

/// Opens [`GrpcInfer`] connections.
#[derive(Debug, Clone)]
pub struct GrpcConnector {
    target: Target,
    frames: Arc<[Bytes]>,
}

impl GrpcConnector {
    /// Connections that send `frames` (framed ModelInferRequests) round robin.
    pub fn new(target: Target, frames: Vec<Bytes>) -> Self {
        GrpcConnector {
            target,
            frames: frames.into(),
        }
    }
}

impl Connector for GrpcConnector {
    type Client = GrpcInfer;

    async fn connect(&self) -> Result<GrpcInfer> {
        let conn = GrpcConn::connect(&self.target).await?;
        Ok(GrpcInfer {
            uri: conn.uri("ModelInfer"),
            conn,
            frames: self.frames.clone(),
            clock: SendClock::new(),
            decoder: Decoder::default(),
        })
    }
}

/// One HTTP/2 connection making ModelInfer calls one at a time.
pub struct GrpcInfer {
    conn: GrpcConn<OnceBody>,
    uri: Uri,
    frames: Arc<[Bytes]>,
    clock: Arc<SendClock>,
    decoder: Decoder,
}

impl InferClient for GrpcInfer {
    async fn infer(&mut self, step: usize, sequence: Option<SequenceStep>) -> Outcome {
        let start = Instant::now();
        let frame = &self.frames[step % self.frames.len()];
        let frame = match sequence {
            Some(s) => with_sequence(frame, s),
            None => frame.clone(),
        };
        let body = OnceBody::timed(frame, self.clock.clone());
        let request = GrpcConn::request(self.uri.clone(), body);
        let mut response = match self.conn.send(request).await {
            Ok(r) => r,
            Err(e) => {
                return Outcome {
                    error: Some(e.to_string()),
                    ..Outcome::default()
                };
            }
        };
        let head = Instant::now();
        let read = self
            .conn
            .drive(read_unary(&mut response, &mut self.decoder))
            .await;
        if let Err(e) = read.and_then(|r| r) {
            return Outcome {
                error: Some(e.to_string()),
                ..Outcome::default()
            };
        }
        Outcome {
            send_ns: self
                .clock
                .taken()
                .saturating_duration_since(start)
                .as_nanos() as u64,
            recv_ns: head.elapsed().as_nanos() as u64,
            responses: 1,
            error: None,
        }
    }
}

/// Reads a unary answer to its end: its message (if any) once the status is OK.
async fn read_unary(
    response: &mut Response<Incoming>,
    decoder: &mut Decoder,
) -> Result<Option<Bytes>> {
    if response.status() != StatusCode::OK {
        return Err(Error::new(format!(
            "HTTP status {} (is this a gRPC port?)",
            response.status()
        )));
    }
    let mut status = frame::status(response.headers());
    while let Some(f) = next_frame(response.body_mut()).await {
        match f?.into_data() {
            Ok(data) => decoder.push(&data),
            Err(f) => {
                if let Ok(trailers) = f.into_trailers() {
                    status = frame::status(&trailers);
                }
            }
        }
    }
    match status {
        Some(Ok(())) => decoder.next_message().map_err(Error::new),
        Some(Err(e)) => Err(Error::new(e)),
        None => Err(Error::new("the answer has no gRPC status")),
    }
}
