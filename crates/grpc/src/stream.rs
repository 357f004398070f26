//! `ModelStreamInfer`: requests and responses on one bidirectional stream.
//! Requests are queued in the order they come (a sequence's requests reach
//! its batcher in order, as in Triton), then each runs concurrently with
//! the others. As in Triton, responses
//! of models that are not decoupled are written in request order; a
//! decoupled model's responses (there may be many) go out as they come. A request's error goes in `error_message`
//! and the stream goes on (unless the client asked for `triton_grpc_error`
//! and the error came from the model).
//! When the client cancels, its deadline passes or the server stops, the
//! core's response streams are dropped, which cancels their requests.

use std::{sync::Arc, time::Duration};

use oxiserve_core::{ResponseStream, Server, StreamEvent};
use oxiserve_proto::inference::{ModelInferRequest, ModelInferResponse, ModelStreamInferResponse};
use oxiserve_types::{Error, Parameters, Result};
use tokio::{
    sync::{mpsc, oneshot, watch},
    task::JoinSet,
    time::Instant,
};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Status, Streaming, metadata::MetadataMap};

use crate::{
    convert::{
        parameters::{FINAL_RESPONSE, to_infer_parameter},
        request, response,
    },
    error,
    infer::with_forwarded,
    traced::{CallTrace, TraceContext},
    version,
};

/// The responses of one stream, in the order they are ready.
pub(crate) type Outbound = ReceiverStream<Result<ModelStreamInferResponse, Status>>;

/// Messages waiting to be written before producers wait.
const OUTBOUND_CAPACITY: usize = 64;

/// Starts serving one stream; the returned stream carries its responses.
/// Each request gets the parameters `forwarded` from the stream's metadata.
pub(crate) fn start(
    server: Server,
    request: Request<Streaming<ModelInferRequest>>,
    forwarded: Parameters,
    stopping: watch::Receiver<bool>,
) -> Outbound {
    let (tx, rx) = mpsc::channel(OUTBOUND_CAPACITY);
    let context = StreamContext {
        server,
        tx,
        grpc_errors: wants_grpc_errors(request.metadata()),
        trace_context: TraceContext::of(request.metadata()),
        forwarded: Arc::new(forwarded),
    };
    let deadline = deadline(request.metadata());
    tokio::spawn(run(context, request.into_inner(), stopping, deadline));
    ReceiverStream::new(rx)
}

/// What every request of a stream shares.
#[derive(Clone)]
struct StreamContext {
    server: Server,
    tx: mpsc::Sender<Result<ModelStreamInferResponse, Status>>,
    /// `triton_grpc_error: true`: an error ends the stream with its status.
    grpc_errors: bool,
    /// The stream's W3C trace context, for each of its traced requests.
    trace_context: TraceContext,
    /// Parameters forwarded from the stream's metadata to each request.
    forwarded: Arc<Parameters>,
}

/// Reads requests until the client half-closes, then lets the requests in
/// flight finish. Returning early drops the tasks, cancelling their requests.
async fn run(
    context: StreamContext,
    mut inbound: Streaming<ModelInferRequest>,
    mut stopping: watch::Receiver<bool>,
    deadline: Option<Instant>,
) {
    let expired = async {
        match deadline {
            Some(at) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(expired);
    let stop = async move {
        let _ = stopping.wait_for(|stop| *stop).await;
    };
    tokio::pin!(stop);
    let mut requests = JoinSet::new();
    let mut reading = true;
    let mut last_turn = None;
    loop {
        tokio::select! {
            message = inbound.message(), if reading => match message {
                Ok(Some(message)) => {
                    let (done, next) = oneshot::channel();
                    let turn = Turn { previous: last_turn.replace(next), _done: done };
                    requests.spawn(serve_request(context.clone(), message, turn));
                }
                Ok(None) => reading = false,
                Err(status) => {
                    let _ = context.tx.send(Err(status)).await;
                    return;
                }
            },
            Some(_) = requests.join_next(), if !requests.is_empty() => {}
            () = &mut stop, if reading => reading = false,
            () = context.tx.closed() => return,
            () = &mut expired => {
                let _ = context.tx.send(Err(Status::deadline_exceeded("Deadline Exceeded"))).await;
                return;
            }
        }
        if !reading && requests.is_empty() {
            return;
        }
    }
}

/// A request's place in the stream's write order: it may write once the
/// request before it has written (or is gone), and lets the next one write
/// when dropped.
struct Turn {
    previous: Option<oneshot::Receiver<()>>,
    _done: oneshot::Sender<()>,
}

impl Turn {
    /// Waits until the requests before this one have written.
    async fn wait(&mut self) {
        if let Some(previous) = self.previous.take() {
            let _ = previous.await;
        }
    }

    /// A decoupled request writes whenever it likes; it only passes the
    /// turn on, in order, to the requests after it.
    fn hand_on(mut self) {
        tokio::spawn(async move { self.wait().await });
    }
}

/// Queues one request now, so that the stream's requests are queued in the
/// order they came; the returned future forwards its responses.
fn serve_request(
    context: StreamContext,
    message: ModelInferRequest,
    turn: Turn,
) -> impl Future<Output = ()> + Send + 'static {
    let read_start = std::time::Instant::now();
    let echo = Echo {
        id: message.id.clone(),
        model_name: message.model_name.clone(),
        model_version: message.model_version.clone(),
    };
    let started = start_request(&context, message, read_start);
    forward_request(context, echo, started, turn)
}

/// Forwards the responses of one request (its error, if it was refused).
async fn forward_request(
    context: StreamContext,
    echo: Echo,
    started: Result<Started>,
    mut turn: Turn,
) {
    let started = match started {
        Ok(started) => started,
        Err(e) => {
            // Refused before it ran: only the id goes back with the error.
            let reply = ModelInferResponse {
                id: echo.id,
                ..Default::default()
            };
            turn.wait().await;
            context.send_error_message(e, reply).await;
            return;
        }
    };
    if started.decoupled {
        turn.hand_on();
    } else {
        turn.wait().await;
    }
    forward(&context, started, &echo).await;
}

/// The request's identity, echoed in error and empty final responses.
struct Echo {
    id: String,
    model_name: String,
    model_version: String,
}

impl Echo {
    fn response(&self, is_final: bool) -> ModelInferResponse {
        let mut reply = ModelInferResponse {
            id: self.id.clone(),
            model_name: self.model_name.clone(),
            model_version: self.model_version.clone(),
            ..Default::default()
        };
        mark_final(&mut reply, is_final);
        reply
    }
}

/// A request queued in the core.
struct Started {
    stream: ResponseStream,
    decoupled: bool,
    /// The client asked for an empty final response (decoupled models only).
    empty_final: bool,
    /// The request's trace, if sampled.
    call: Option<CallTrace>,
}

/// Decodes and queues a request (traced when sampled), read from `read_start`.
fn start_request(
    context: &StreamContext,
    message: ModelInferRequest,
    read_start: std::time::Instant,
) -> Result<Started> {
    let server = &context.server;
    let version = version::parse(&message.model_version)?;
    let model = server.model(&message.model_name, version)?;
    let decoupled = model.is_decoupled();
    let mut decoded = request::decode(message)?;
    with_forwarded(
        &mut decoded.request.parameters,
        (*context.forwarded).clone(),
    );
    let call = CallTrace::sample(server, model.name(), &context.trace_context, read_start);
    let trace = call.as_ref().map(CallTrace::trace);
    Ok(Started {
        stream: server.infer_traced(&model, decoded.request, trace)?,
        decoupled,
        empty_final: decoupled && decoded.empty_final_response,
        call,
    })
}

/// Sends each response as it comes, marked with `triton_final_response`. A
/// model that is not decoupled has one response slot, as in Triton: what it
/// sends after its first response (e.g. the error of a failure after it) is
/// dropped.
async fn forward(context: &StreamContext, started: Started, echo: &Echo) {
    let Started {
        mut stream,
        decoupled,
        empty_final,
        mut call,
    } = started;
    let mut written = false;
    loop {
        let event = tokio::select! {
            event = stream.next() => event,
            // The client is gone: dropping the stream cancels the request.
            () = context.tx.closed() => return,
        };
        let Some(StreamEvent {
            mut response,
            is_final,
        }) = event
        else {
            return;
        };
        if !decoupled && response.is_some() && std::mem::replace(&mut written, true) {
            response = None;
        }
        let send_start = std::time::Instant::now();
        if let Some(call) = call.as_ref().filter(|_| is_final) {
            call.response_complete();
        }
        match response {
            Some(Ok(reply)) => {
                let mut reply = response::encode(reply);
                mark_final(&mut reply, is_final);
                context.send(reply).await;
            }
            Some(Err(e)) => context.send_error(e, echo.response(is_final)).await,
            None if is_final && empty_final => context.send(echo.response(true)).await,
            None => {}
        }
        if is_final {
            if let Some(call) = call.take() {
                call.sent(send_start);
            }
            return;
        }
    }
}

impl StreamContext {
    async fn send(&self, reply: ModelInferResponse) {
        let message = ModelStreamInferResponse {
            error_message: String::new(),
            infer_response: Some(reply),
        };
        let _ = self.tx.send(Ok(message)).await;
    }

    /// A model's error: in `error_message`, or (`triton_grpc_error`) as the
    /// status that ends the stream.
    async fn send_error(&self, e: Error, reply: ModelInferResponse) {
        if self.grpc_errors {
            let _ = self.tx.send(Err(error::status(e))).await;
        } else {
            self.send_error_message(e, reply).await;
        }
    }

    /// An error in `error_message`; the stream goes on. As in Triton, a
    /// request refused before it runs is always reported this way.
    async fn send_error_message(&self, e: Error, reply: ModelInferResponse) {
        let message = ModelStreamInferResponse {
            error_message: e.message,
            infer_response: Some(reply),
        };
        let _ = self.tx.send(Ok(message)).await;
    }
}

fn mark_final(reply: &mut ModelInferResponse, is_final: bool) {
    reply.parameters.insert(
        FINAL_RESPONSE.to_string(),
        to_infer_parameter(&oxiserve_types::ParameterValue::Bool(is_final)),
    );
}

/// Whether the client asked errors to end the stream (`triton_grpc_error`).
fn wants_grpc_errors(metadata: &MetadataMap) -> bool {
    metadata
        .get("triton_grpc_error")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == "true")
}

/// When the client's `grpc-timeout` runs out, if it set one.
fn deadline(metadata: &MetadataMap) -> Option<Instant> {
    let text = metadata.get("grpc-timeout")?.to_str().ok()?;
    timeout(text).map(|d| Instant::now() + d)
}

/// A `grpc-timeout` value: up to 8 digits and a unit (H, M, S, m, u, n).
fn timeout(text: &str) -> Option<Duration> {
    let (digits, unit) = text.split_at(text.len().checked_sub(1)?);
    let value: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(value.saturating_mul(3600)),
        "M" => Duration::from_secs(value.saturating_mul(60)),
        "S" => Duration::from_secs(value),
        "m" => Duration::from_millis(value),
        "u" => Duration::from_micros(value),
        "n" => Duration::from_nanos(value),
        _ => return None,
    })
}

#[cfg(test)]
mod tests;
