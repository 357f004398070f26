//! ModelStreamInfer: each connection keeps one bidirectional stream open and
//! sends its requests on it one at a time. A request is done at its response,
//! or, for a decoupled model, at the response flagged `triton_final_response`
//! (the requests ask for an empty one); its responses are counted.

use std::{
    future::Future,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll},
    time::Instant,
};

use bytes::Bytes;
use http_body::{Body, Frame};
use hyper::{Response, body::Incoming};
use oxiserve_proto::inference::{
    ModelInferResponse, ModelStreamInferResponse, infer_parameter::ParameterChoice,
};
use prost::Message;
use tokio::sync::mpsc;

use super::{
    conn::GrpcConn,
    encode::with_sequence,
    frame::{self, Decoder},
};
use crate::{
    client::{Connector, InferClient, Outcome},
    error::{Error, Result},
    http::body::{SendClock, next_frame},
    sequence::SequenceStep,
    target::Target,
};

/// The request side of a stream: frames from a channel.
pub struct ChannelBody {
    rx: mpsc::UnboundedReceiver<Bytes>,
    clock: Arc<SendClock>,
}

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<std::result::Result<Frame<Bytes>, Self::Error>>> {
        self.rx.poll_recv(cx).map(|next| {
            next.map(|data| {
                self.clock.mark();
                Ok(Frame::data(data))
            })
        })
    }
}

type Head = Pin<Box<dyn Future<Output = hyper::Result<Response<Incoming>>> + Send>>;

/// An open stream: where requests go and where responses come from.
struct Open {
    tx: mpsc::UnboundedSender<Bytes>,
    /// The response head, until it has arrived.
    head: Option<Head>,
    response: Option<Response<Incoming>>,
}

/// Opens [`GrpcStream`] connections.
#[derive(Debug, Clone)]
pub struct GrpcStreamConnector {
    target: Target,
    frames: Arc<[Bytes]>,
    decoupled: bool,
}

impl GrpcStreamConnector {
    /// Streams that send `frames` (framed ModelInferRequests) round robin to
    /// a model that is `decoupled` or not.
    pub fn new(target: Target, frames: Vec<Bytes>, decoupled: bool) -> Self {
        GrpcStreamConnector {
            target,
            frames: frames.into(),
            decoupled,
        }
    }
}

impl Connector for GrpcStreamConnector {
    type Client = GrpcStream;

    async fn connect(&self) -> Result<GrpcStream> {
        Ok(GrpcStream {
            conn: GrpcConn::connect(&self.target).await?,
            frames: self.frames.clone(),
            clock: SendClock::new(),
            decoder: Decoder::default(),
            stream: None,
            decoupled: self.decoupled,
        })
    }
}

/// One connection with one ModelStreamInfer stream.
pub struct GrpcStream {
    conn: GrpcConn<ChannelBody>,
    frames: Arc<[Bytes]>,
    clock: Arc<SendClock>,
    decoder: Decoder,
    stream: Option<Open>,
    decoupled: bool,
}

impl GrpcStream {
    async fn open(&mut self) -> Result<Open> {
        self.conn.ready().await?;
        let (tx, rx) = mpsc::unbounded_channel();
        let body = ChannelBody {
            rx,
            clock: self.clock.clone(),
        };
        let request = GrpcConn::request(self.conn.uri("ModelStreamInfer"), body);
        self.decoder = Decoder::default();
        Ok(Open {
            tx,
            head: Some(Box::pin(self.conn.send_later(request))),
            response: None,
        })
    }

    /// Sends request `step` and reads its responses; returns when the first
    /// bytes arrived and how many responses came. Any failure leaves the
    /// stream closed (the next call opens a new one).
    async fn exchange(
        &mut self,
        step: usize,
        sequence: Option<SequenceStep>,
    ) -> Result<(Instant, u64)> {
        let mut open = match self.stream.take() {
            Some(open) => open,
            None => self.open().await?,
        };
        let frame = &self.frames[step % self.frames.len()];
        let frame = match sequence {
            Some(s) => with_sequence(frame, s),
            None => frame.clone(),
        };
        open.tx
            .send(frame)
            .map_err(|_| Error::new("the stream is closed"))?;
        if let Some(head) = open.head.take() {
            let response = self.conn.drive(head).await??;
            if let Some(Err(e)) = frame::status(response.headers()) {
                return Err(Error::new(e));
            }
            open.response = Some(response);
        }
        let response = open.response.as_mut().expect("head received");
        let mut first = None;
        let mut responses = 0;
        loop {
            let message = loop {
                if let Some(message) = self.decoder.next_message().map_err(Error::new)? {
                    break message;
                }
                match self.conn.drive(next_frame(response.body_mut())).await? {
                    Some(f) => match f?.into_data() {
                        Ok(data) => {
                            first.get_or_insert_with(Instant::now);
                            self.decoder.push(&data);
                        }
                        Err(f) => return Err(ended(f.into_trailers().ok())),
                    },
                    None => return Err(ended(None)),
                }
            };
            let answer = ModelStreamInferResponse::decode(message)
                .map_err(|e| Error::new(format!("bad ModelStreamInferResponse: {e}")))?;
            if !answer.error_message.is_empty() {
                return Err(Error::new(answer.error_message));
            }
            if !self.decoupled {
                responses = 1;
                break;
            }
            let infer = answer.infer_response.unwrap_or_default();
            let last = is_final(&infer);
            if !(last && infer.outputs.is_empty()) {
                responses += 1;
            }
            if last {
                break;
            }
        }
        self.stream = Some(open);
        Ok((first.unwrap_or_else(Instant::now), responses))
    }
}

/// Whether a decoupled model's response is its request's last.
fn is_final(response: &ModelInferResponse) -> bool {
    response
        .parameters
        .get("triton_final_response")
        .and_then(|p| p.parameter_choice.as_ref())
        == Some(&ParameterChoice::BoolParam(true))
}

/// Why a stream ended before its response.
fn ended(trailers: Option<hyper::HeaderMap>) -> Error {
    match trailers.as_ref().and_then(frame::status) {
        Some(Err(e)) => Error::new(e),
        _ => Error::new("the server ended the stream"),
    }
}

impl InferClient for GrpcStream {
    async fn infer(&mut self, step: usize, sequence: Option<SequenceStep>) -> Outcome {
        let start = Instant::now();
        match self.exchange(step, sequence).await {
            Ok((first, responses)) => Outcome {
                send_ns: self
                    .clock
                    .taken()
                    .saturating_duration_since(start)
                    .as_nanos() as u64,
                recv_ns: first.elapsed().as_nanos() as u64,
                responses,
                error: None,
            },
            Err(e) => Outcome {
                error: Some(e.to_string()),
                ..Outcome::default()
            },
        }
    }
}
