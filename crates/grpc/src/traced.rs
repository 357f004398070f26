//! Tracing a gRPC inference: the sampling, with the caller's W3C trace
//! context from its metadata, and the frontend's timestamps, reported in
//! Triton's order once the response is sent.

use std::time::Instant;

use oxiserve_core::Server;
use oxiserve_trace::{Activity, Trace};
use tonic::metadata::MetadataMap;

/// The headers that carry a W3C trace context.
const CONTEXT_HEADERS: [&str; 2] = ["traceparent", "tracestate"];

/// A call's trace context headers (a stream's apply to each of its requests).
#[derive(Debug, Clone, Default)]
pub(crate) struct TraceContext(Vec<(&'static str, String)>);

impl TraceContext {
    pub fn of(metadata: &MetadataMap) -> Self {
        Self(
            CONTEXT_HEADERS
                .into_iter()
                .filter_map(|name| Some((name, metadata.get(name)?.to_str().ok()?.to_string())))
                .collect(),
        )
    }

    fn header(&self, name: &str) -> Option<String> {
        self.0
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value.clone())
    }
}

/// A traced request's frontend timestamps.
#[derive(Debug)]
pub(crate) struct CallTrace {
    trace: Trace,
    read: (Instant, Instant),
}

impl CallTrace {
    /// The trace of a request to `model` whose message was read from
    /// `read_start` until now, if its trace setting samples it.
    pub fn sample(
        server: &Server,
        model: &str,
        context: &TraceContext,
        read_start: Instant,
    ) -> Option<Self> {
        let trace = server
            .tracing()
            .sample(model, |name| context.header(name))?;
        Some(Self {
            trace,
            read: (read_start, Instant::now()),
        })
    }

    /// The trace to hand to the core.
    pub fn trace(&self) -> Trace {
        self.trace.clone()
    }

    /// The final response came (`INFER_RESPONSE_COMPLETE`).
    pub fn response_complete(&self) {
        self.trace
            .report(Activity::InferResponseComplete, Instant::now());
    }

    /// The response, whose sending began at `send_start`, is sent: reports
    /// the read and send timestamps.
    pub fn sent(self, send_start: Instant) {
        let trace = &self.trace;
        trace.report(Activity::GrpcWaitreadStart, self.read.0);
        trace.report(Activity::GrpcWaitreadEnd, self.read.1);
        trace.report(Activity::GrpcSendStart, send_start);
        trace.report(Activity::GrpcSendEnd, Instant::now());
    }
}
