//! Tracing an HTTP inference: when its head came, and a response body that
//! reports `HTTP_SEND_START` when it starts to go out and `HTTP_SEND_END`
//! when it is all written.

use std::{
    pin::Pin,
    task::{Context, Poll},
    time::Instant,
};

use axum::{body::Body, http::HeaderMap};
use bytes::Bytes;
use http_body::{Frame, SizeHint};
use oxiserve_core::Server;
use oxiserve_trace::{Activity, Trace};

/// When a request's head was read (a request extension the connection adds).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Received(pub Instant);

/// The trace of a request to `model` if its trace setting samples it (or
/// its `traceparent` header asks for one, in OpenTelemetry mode), with its
/// `HTTP_RECV_START` (`received`) and `HTTP_RECV_END` (now).
pub(crate) fn sample(
    server: &Server,
    model: &str,
    headers: &HeaderMap,
    received: Option<Received>,
) -> Option<Trace> {
    let header = |name: &str| Some(headers.get(name)?.to_str().ok()?.to_string());
    let trace = server.tracing().sample(model, header)?;
    let now = Instant::now();
    trace.report(Activity::HttpRecvStart, received.map_or(now, |r| r.0));
    trace.report(Activity::HttpRecvEnd, now);
    Some(trace)
}

/// A response body that reports its sending on `trace`.
pub(crate) struct TracedBody {
    inner: Body,
    trace: Trace,
    started: bool,
}

impl TracedBody {
    pub fn new(inner: Body, trace: Trace) -> Self {
        Self {
            inner,
            trace,
            started: false,
        }
    }
}

impl http_body::Body for TracedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        if !std::mem::replace(&mut self.started, true) {
            self.trace.report(Activity::HttpSendStart, Instant::now());
        }
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for TracedBody {
    /// The connection drops the body once it has written it.
    fn drop(&mut self) {
        let now = Instant::now();
        if !self.started {
            self.trace.report(Activity::HttpSendStart, now);
        }
        self.trace.report(Activity::HttpSendEnd, now);
    }
}
