//! The channel between an instance's `ResponseSink` (on its OS thread) and the
//! frontend's handler (on the async runtime).

use std::sync::Arc;

use oxiserve_backend::{CancelFlag, ResponseEvent, ResponseTarget};
use oxiserve_types::{InferResponse, Result};
use tokio::sync::mpsc;

use super::OutputShaping;
use crate::stats::RequestRecord;

/// One event of a response stream: a response (or error), and whether it is the last.
#[derive(Debug)]
pub struct StreamEvent {
    pub response: Option<Result<InferResponse>>,
    pub is_final: bool,
}

/// The responses to one request, as they come. Dropping the stream before
/// its final event cancels the request: work not yet started is skipped.
#[derive(Debug)]
pub struct ResponseStream {
    rx: mpsc::UnboundedReceiver<StreamEvent>,
    cancel: CancelFlag,
    finished: bool,
}

impl ResponseStream {
    /// The next event; `None` once the final event was read.
    pub async fn next(&mut self) -> Option<StreamEvent> {
        if self.finished {
            return None;
        }
        let event = self.rx.recv().await?;
        self.finished = event.is_final;
        Some(event)
    }

    /// The one response of a non-decoupled request.
    pub async fn single(mut self) -> Result<InferResponse> {
        while let Some(event) = self.next().await {
            if let Some(response) = event.response {
                return response;
            }
        }
        Err(oxiserve_types::Error::internal(
            "the model finished without sending a response",
        ))
    }

    /// The cancel flag shared with the request, for frontends that cancel
    /// explicitly (a gRPC stream's cancellation).
    pub fn cancel_flag(&self) -> CancelFlag {
        self.cancel.clone()
    }
}

impl Drop for ResponseStream {
    fn drop(&mut self) {
        if !self.finished {
            self.cancel.cancel();
        }
    }
}

/// A connected pair: the stream for the frontend and the sending half for the sink.
pub(crate) fn response_channel(
    cancel: CancelFlag,
) -> (ResponseStream, mpsc::UnboundedSender<StreamEvent>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let stream = ResponseStream {
        rx,
        cancel,
        finished: false,
    };
    (stream, tx)
}

/// The core's end of a `ResponseSink`: turns backend responses into
/// `InferResponse`s, sends them on, and records the request's outcome.
pub(crate) struct StreamTarget {
    pub tx: mpsc::UnboundedSender<StreamEvent>,
    pub record: Arc<RequestRecord>,
    pub shaping: OutputShaping,
    pub failed: bool,
}

impl ResponseTarget for StreamTarget {
    fn deliver(&mut self, event: ResponseEvent) {
        let response = event
            .response
            .map(|r| r.and_then(|r| self.shaping.apply(r)));
        if matches!(response, Some(Err(_))) {
            self.failed = true;
        }
        if event.is_final {
            self.record.finished(!self.failed);
        }
        // The client may be gone; the response is then dropped.
        let _ = self.tx.send(StreamEvent {
            response,
            is_final: event.is_final,
        });
    }
}
