//! The channel between an instance's `ResponseSink` (on its OS thread) and the
//! frontend's handler (on the async runtime).

use std::{collections::VecDeque, sync::Arc};

use parking_lot::Mutex;

pub use oxiserve_backend::StreamEvent;
use oxiserve_backend::{CancelFlag, EventCallback, ResponseEvent, ResponseTarget};
use oxiserve_trace::TensorActivity;
use oxiserve_types::Result;
use tokio::sync::Notify;

use super::{OutputShaping, RequestTrace};
use crate::stats::{FailureReason, RequestRecord};

/// The responses to one request, as they come. Dropping the stream before
/// its final event cancels the request: work not yet started is skipped.
#[derive(Debug)]
pub struct ResponseStream {
    channel: Arc<Channel>,
    cancel: CancelFlag,
    finished: bool,
}

/// A single-consumer queue of events with a wake-up: lighter than a general
/// channel, as most requests carry exactly one event.
#[derive(Debug, Default)]
pub(crate) struct Channel {
    events: Mutex<VecDeque<StreamEvent>>,
    ready: Notify,
}

impl Channel {
    /// Queues an event and wakes the reader.
    pub fn send(&self, event: StreamEvent) {
        self.events.lock().push_back(event);
        self.ready.notify_one();
    }
}

impl ResponseStream {
    /// The next event; `None` once the final event was read.
    pub async fn next(&mut self) -> Option<StreamEvent> {
        if self.finished {
            return None;
        }
        loop {
            let event = self.channel.events.lock().pop_front();
            if let Some(event) = event {
                self.finished = event.is_final;
                return Some(event);
            }
            self.channel.ready.notified().await;
        }
    }

    /// The one response of a non-decoupled request. A model that sent more
    /// than one fails the request, as in Triton.
    pub async fn single(mut self) -> Result<oxiserve_types::InferResponse> {
        let mut first = None;
        let mut count = 0;
        while let Some(event) = self.next().await {
            if let Some(response) = event.response {
                count += 1;
                first.get_or_insert(response);
            }
        }
        match first {
            Some(response) if count == 1 => response,
            Some(_) => Err(oxiserve_types::Error::internal(format!(
                "expected a single response, got {count}"
            ))),
            None => Err(oxiserve_types::Error::internal(
                "the model finished without sending a response",
            )),
        }
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

/// A connected pair: the stream for the frontend and the channel for the sink.
pub(crate) fn response_channel(cancel: CancelFlag) -> (ResponseStream, Arc<Channel>) {
    let channel = Arc::new(Channel::default());
    let stream = ResponseStream {
        channel: channel.clone(),
        cancel,
        finished: false,
    };
    (stream, channel)
}

/// Where a request's events go: a frontend's [`ResponseStream`], or a
/// callback (a backend's call to another model).
pub(crate) enum EventOut {
    Stream(Arc<Channel>),
    Callback(EventCallback),
}

impl EventOut {
    fn send(&mut self, event: StreamEvent) {
        match self {
            Self::Stream(channel) => channel.send(event),
            Self::Callback(callback) => callback(event),
        }
    }
}

/// The core's end of a `ResponseSink`: turns backend responses into
/// `InferResponse`s, sends them on, and records the request's outcome.
pub(crate) struct StreamTarget {
    pub tx: EventOut,
    pub record: Arc<RequestRecord>,
    pub shaping: OutputShaping,
    /// Why the request failed, once one of its responses was an error.
    pub failure: Option<FailureReason>,
    /// The request's trace, until its final response.
    pub trace: Option<Arc<RequestTrace>>,
}

impl ResponseTarget for StreamTarget {
    fn deliver(&mut self, event: ResponseEvent) {
        if let (Some(trace), Some(Ok(response))) = (&self.trace, &event.response) {
            trace.report_tensors(TensorActivity::BackendOutput, &response.outputs);
        }
        let response = event.response.map(|r| match r {
            Ok(r) => self.shaping.apply(r).inspect_err(|_| {
                self.failure.get_or_insert(FailureReason::Other);
            }),
            Err(e) => {
                if event.fails_request {
                    self.failure
                        .get_or_insert(FailureReason::of_backend_error(&e));
                }
                Err(e)
            }
        });
        if response.is_some() {
            self.record.responded();
        }
        if event.is_final {
            self.record.finished(self.failure);
            self.trace = None;
            // Before the client hears of the end: a region it unregisters
            // once it has the final response is free by then.
            self.shaping.release_regions();
        }
        // If the client is gone, nobody reads the event; it is dropped with the channel.
        self.tx.send(StreamEvent {
            response,
            is_final: event.is_final,
        });
    }
}
