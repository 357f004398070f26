//! How an instance answers a request: zero or more responses, then a final flag.

use std::sync::{
    Arc,
    atomic::{AtomicBool, Ordering},
};

use oxiserve_types::{Error, Parameters, Result, Tensor};

/// The outputs of one response.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BackendResponse {
    pub outputs: Vec<Tensor>,
    pub parameters: Parameters,
}

impl BackendResponse {
    /// A response with these outputs.
    pub fn new(outputs: Vec<Tensor>) -> Self {
        Self {
            outputs,
            parameters: Parameters::new(),
        }
    }
}

/// One event on a sink: a response or error, or none, and whether it is the last.
#[derive(Debug)]
pub struct ResponseEvent {
    pub response: Option<Result<BackendResponse>>,
    pub is_final: bool,
    /// Whether an error in `response` fails the request in the statistics
    /// (Triton's `success` of `TRITONBACKEND_ModelInstanceReportStatistics`):
    /// so for every backend but Python, whose models' own error responses
    /// Triton counts as successes.
    pub fails_request: bool,
}

/// Where a sink's events go; the core implements it.
pub trait ResponseTarget: Send {
    /// Receives one event. Called at most once with `is_final` set, and never after.
    fn deliver(&mut self, event: ResponseEvent);

    /// Takes the request back to execute it again (Triton's
    /// `TRITONSERVER_REQUEST_RELEASE_RESCHEDULE`: a scheduler of iterative
    /// sequences queues it anew); whether it did. Once it did, no event
    /// comes here. Most targets cannot.
    fn reschedule(&mut self) -> bool {
        false
    }
}

/// Set when the client went away or the deadline passed.
#[derive(Debug, Clone, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    /// Marks the request cancelled.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// The answering end of one request. Dropped without a final event, it
/// answers with an internal error so that no client ever waits forever.
pub struct ResponseSink {
    target: Option<Box<dyn ResponseTarget>>,
    cancel: CancelFlag,
}

impl std::fmt::Debug for ResponseSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseSink")
            .field("finished", &self.target.is_none())
            .field("cancel", &self.cancel)
            .finish()
    }
}

impl ResponseSink {
    /// A sink delivering to `target`.
    pub fn new(target: Box<dyn ResponseTarget>, cancel: CancelFlag) -> Self {
        Self {
            target: Some(target),
            cancel,
        }
    }

    /// Sends this sink's events through the target `wrap` makes of its
    /// current one (a scheduler that looks at responses on their way).
    pub fn wrap(
        mut self,
        wrap: impl FnOnce(Box<dyn ResponseTarget>) -> Box<dyn ResponseTarget>,
    ) -> Self {
        let target = self.target.take().map(wrap);
        Self {
            target,
            cancel: self.cancel.clone(),
        }
    }

    /// The request's cancel flag, for work the request hands on (an
    /// ensemble's steps).
    pub fn cancel_flag(&self) -> CancelFlag {
        self.cancel.clone()
    }

    /// Sends a response (or error); `is_final` closes the sink. Sends after the
    /// final one are refused with an error.
    pub fn send(&mut self, response: Result<BackendResponse>, is_final: bool) -> Result<()> {
        self.deliver(Some(response), is_final, true)
    }

    /// Sends a response the model made, error or not; unlike
    /// [`send`](Self::send), its error does not fail the request in the
    /// statistics (Triton's Python backend counts a request as failed only
    /// when its execution failed).
    pub fn send_model_response(
        &mut self,
        response: Result<BackendResponse>,
        is_final: bool,
    ) -> Result<()> {
        self.deliver(Some(response), is_final, false)
    }

    /// Sends the one and only response.
    pub fn respond(mut self, response: Result<BackendResponse>) {
        let _ = self.send(response, true);
    }

    /// Closes the sink with no further response (a decoupled model's
    /// `TRITONSERVER_RESPONSE_COMPLETE_FINAL` alone).
    pub fn finish(mut self) {
        let _ = self.deliver(None, true, true);
    }

    /// Hands the request back to its scheduler to execute again (Triton's
    /// `TRITONSERVER_REQUEST_RELEASE_RESCHEDULE`, for models with iterative
    /// sequences); the sink comes back when its scheduler cannot.
    pub fn reschedule(mut self) -> std::result::Result<(), Self> {
        if self
            .target
            .as_mut()
            .is_some_and(|target| target.reschedule())
        {
            self.target = None;
            Ok(())
        } else {
            Err(self)
        }
    }

    /// Whether the final event was sent.
    pub fn is_finished(&self) -> bool {
        self.target.is_none()
    }

    /// Whether the client cancelled the request; work for it may stop.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    fn deliver(
        &mut self,
        response: Option<Result<BackendResponse>>,
        is_final: bool,
        fails_request: bool,
    ) -> Result<()> {
        let Some(target) = self.target.as_mut() else {
            return Err(Error::invalid_arg(
                "a final response was already sent for this request",
            ));
        };
        target.deliver(ResponseEvent {
            response,
            is_final,
            fails_request,
        });
        if is_final {
            self.target = None;
        }
        Ok(())
    }
}

impl Drop for ResponseSink {
    fn drop(&mut self) {
        if let Some(mut target) = self.target.take() {
            target.deliver(ResponseEvent {
                response: Some(Err(Error::internal(
                    "the model returned without answering this request",
                ))),
                is_final: true,
                fails_request: true,
            });
        }
    }
}
