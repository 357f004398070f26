//! What a trace records, and a finished request's trace as it goes out.

use std::time::Instant;

use opentelemetry::trace::SpanContext;

use crate::{
    activity::{Activity, TensorActivity},
    tensor_text::TensorText,
};

/// One record, made under a trace id.
#[derive(Debug)]
pub(crate) enum Record {
    /// The model the trace's request ran on (Triton writes it with
    /// `REQUEST_START`).
    Model {
        name: String,
        version: i64,
        request_id: String,
        parent_id: u64,
    },
    Timestamp {
        activity: Activity,
        at: Instant,
    },
    Tensor {
        activity: TensorActivity,
        tensor: TensorText,
    },
}

/// A request's trace and the traces it spawned, once all are done.
#[derive(Debug)]
pub(crate) struct FinishedTrace {
    /// When the request was sampled.
    pub started: Instant,
    /// OpenTelemetry mode: the caller's span (a W3C `traceparent`).
    pub remote_parent: Option<SpanContext>,
    /// Each record with its trace id, in the order they were made.
    pub records: Vec<(u64, Record)>,
}
