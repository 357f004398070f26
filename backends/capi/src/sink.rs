//! One request's answering end, shared by its `TRITONBACKEND_Request`, its
//! response factories and its responses: any of them may answer, from any
//! thread, even after the request was released (decoupled models). When
//! the last of them goes without a final response, the request is answered
//! with an error ([`ResponseSink`]'s drop).

use std::sync::Arc;

use oxiserve_backend::{BackendResponse, CancelFlag, ResponseSink};
use oxiserve_types::{Error, Result, Tensor};
use parking_lot::Mutex;

use crate::model_info::ModelInfo;

/// A request's sink and what the backend said about the request.
#[derive(Debug)]
pub struct SharedSink {
    state: Mutex<SinkState>,
    cancel: CancelFlag,
    /// The model the request is for.
    pub model: Arc<ModelInfo>,
}

#[derive(Debug)]
struct SinkState {
    /// `None` once the request was rescheduled or abandoned.
    sink: Option<ResponseSink>,
    /// The `success` of the backend's `ReportStatistics` for the request.
    reported_success: Option<bool>,
    /// States the backend updated (`TRITONBACKEND_StateUpdate`), sent with
    /// the request's next successful response.
    states: Vec<Tensor>,
}

impl SharedSink {
    /// Shares `sink`, for a request of `model`.
    pub fn new(sink: ResponseSink, model: Arc<ModelInfo>) -> Arc<Self> {
        Arc::new(Self {
            cancel: sink.cancel_flag(),
            state: Mutex::new(SinkState {
                sink: Some(sink),
                reported_success: None,
                states: Vec::new(),
            }),
            model,
        })
    }

    /// Sends a response (or error), closing the sink with `is_final`. An
    /// error fails the request in the statistics unless the backend
    /// reported the request a success.
    pub fn send(&self, response: Result<BackendResponse>, is_final: bool) -> Result<()> {
        let mut state = self.state.lock();
        let response = response.map(|mut r| {
            r.outputs.append(&mut state.states);
            r
        });
        let counts_as_success = state.reported_success == Some(true);
        let sink = state.sink.as_mut().ok_or_else(gone)?;
        if counts_as_success {
            sink.send_model_response(response, is_final)
        } else {
            sink.send(response, is_final)
        }
    }

    /// `TRITONBACKEND_ResponseFactorySendFlags`: with the final flag, closes
    /// the sink without a response; without it, does nothing.
    pub fn send_flags(&self, is_final: bool) -> Result<()> {
        if !is_final {
            return Ok(());
        }
        let mut state = self.state.lock();
        let sink = state.sink.take().ok_or_else(gone)?;
        if sink.is_finished() {
            state.sink = Some(sink);
            return Err(Error::invalid_arg(
                "a final response was already sent for this request",
            ));
        }
        sink.finish();
        Ok(())
    }

    /// Records the `success` the backend reported for the request.
    pub fn report_success(&self, success: bool) {
        self.state.lock().reported_success = Some(success);
    }

    /// Keeps `state`'s new value for the request's next response, in place
    /// of an earlier value of the same state.
    pub fn update_state(&self, tensor: Tensor) {
        let mut state = self.state.lock();
        state.states.retain(|t| t.name != tensor.name);
        state.states.push(tensor);
    }

    /// Hands the request back to its scheduler to run again
    /// (`TRITONSERVER_REQUEST_RELEASE_RESCHEDULE`); Triton's error when the
    /// model's scheduler cannot.
    pub fn reschedule(&self) -> Result<()> {
        let mut state = self.state.lock();
        let sink = state.sink.take().ok_or_else(gone)?;
        sink.reschedule().map_err(|sink| {
            state.sink = Some(sink);
            Error::invalid_arg(
                "Request is released with TRITONSERVER_REQUEST_RELEASE_RESCHEDULE, while the \
                 model is not configured to handle such a flag.",
            )
        })
    }

    /// Gives up on the request: unless it was answered, its client gets an
    /// error now.
    pub fn abandon(&self) {
        let sink = self.state.lock().sink.take();
        drop(sink);
    }

    /// Whether the request's final response was sent (or it is gone).
    pub fn is_finished(&self) -> bool {
        self.state
            .lock()
            .sink
            .as_ref()
            .is_none_or(ResponseSink::is_finished)
    }

    /// Whether the client cancelled the request.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
}

fn gone() -> Error {
    Error::invalid_arg("the request was rescheduled or abandoned; it takes no more responses")
}
