//! `ModelStreamInfer`: one bidirectional stream carrying many requests,
//! their responses coming back as the server writes them.

use std::{future::Future, pin::Pin};

use oxiserve_proto::inference::{
    ModelInferRequest, ModelStreamInferResponse,
    grpc_inference_service_client::GrpcInferenceServiceClient,
};
use tokio::sync::mpsc;
use tokio_stream::wrappers::UnboundedReceiverStream;
use tonic::{Status, Streaming, transport::Channel};

use super::convert::{infer_result, model_infer_request};
use crate::{
    error::{Error, Result},
    request::InferRequest,
    result::InferResult,
};

type Opening =
    Pin<Box<dyn Future<Output = Result<Streaming<ModelStreamInferResponse>, Status>> + Send>>;

/// An open `ModelStreamInfer` stream ([`GrpcClient::stream_infer`]).
/// The call starts with the first [`InferStream::next`], carrying the
/// requests sent before it and after.
///
/// ```no_run
/// # async fn f() -> oxiserve_client::Result<()> {
/// use oxiserve_client::{GrpcClient, InferInput, InferRequest, ParameterValue};
///
/// let client = GrpcClient::connect("localhost:8001").await?;
/// let mut stream = client.stream_infer();
/// let input = InferInput::from_array("IN", &ndarray::arr1(&[4_i32]));
/// stream.send(&InferRequest::new("repeat").input(input))?;
/// stream.close();
/// while let Some(response) = stream.next().await {
///     let result = response?;
///     if !result.outputs().is_empty() {
///         println!("{}", result.as_array::<i32>("OUT")?);
///     }
/// }
/// # Ok(()) }
/// ```
///
/// [`GrpcClient::stream_infer`]: crate::GrpcClient::stream_infer
pub struct InferStream {
    requests: Option<mpsc::UnboundedSender<ModelInferRequest>>,
    state: State,
}

enum State {
    Opening(Opening),
    Open(Box<Streaming<ModelStreamInferResponse>>),
    Ended,
}

impl InferStream {
    pub(crate) fn open(mut service: GrpcInferenceServiceClient<Channel>) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let call = async move {
            let requests = UnboundedReceiverStream::new(rx);
            Ok(service.model_stream_infer(requests).await?.into_inner())
        };
        InferStream {
            requests: Some(tx),
            state: State::Opening(Box::pin(call)),
        }
    }

    /// Sends `request` on the stream.
    pub fn send(&self, request: &InferRequest) -> Result<()> {
        let requests = self
            .requests
            .as_ref()
            .ok_or_else(|| Error::invalid_arg("the stream was closed for sending"))?;
        requests
            .send(model_infer_request(request))
            .map_err(|_| Error::Transport("the stream has ended".into()))
    }

    /// Sends no more requests: the server ends the stream once it has
    /// answered those sent.
    pub fn close(&mut self) {
        self.requests = None;
    }

    /// The next response; [`Error::Stream`] for a request that failed (the
    /// stream goes on); `None` once the server has ended the stream.
    pub async fn next(&mut self) -> Option<Result<InferResult>> {
        loop {
            let message = match &mut self.state {
                State::Ended => return None,
                State::Opening(call) => match call.await {
                    Ok(responses) => {
                        self.state = State::Open(Box::new(responses));
                        continue;
                    }
                    Err(status) => Err(status),
                },
                State::Open(responses) => responses.message().await,
            };
            return match message {
                Ok(Some(message)) => Some(response(message)),
                Ok(None) => {
                    self.state = State::Ended;
                    None
                }
                Err(status) => {
                    self.state = State::Ended;
                    Some(Err(status.into()))
                }
            };
        }
    }
}

impl std::fmt::Debug for InferStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match self.state {
            State::Opening(_) => "opening",
            State::Open(_) => "open",
            State::Ended => "ended",
        };
        f.debug_struct("InferStream")
            .field("sending", &self.requests.is_some())
            .field("state", &state)
            .finish()
    }
}

fn response(message: ModelStreamInferResponse) -> Result<InferResult> {
    if !message.error_message.is_empty() {
        return Err(Error::Stream(message.error_message));
    }
    infer_result(message.infer_response.unwrap_or_default())
}
