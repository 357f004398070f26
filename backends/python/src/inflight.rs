//! What is in flight in one instance process: the requests and batches the
//! stub has not finished, and its open BLS calls.

use std::collections::HashMap;

use oxiserve_backend::{BatchEnd, CancelFlag, ResponseSink, Trace};

/// A request the stub has not finished yet.
pub(crate) struct OpenRequest {
    pub rid: u64,
    pub sink: ResponseSink,
    /// The outputs to return; others the model produces are dropped.
    pub outputs: Vec<String>,
    /// The request's trace, which the BLS calls made for it join.
    pub trace: Option<Trace>,
}

/// What is in flight in one process.
#[derive(Default)]
pub(crate) struct InFlight {
    pub requests: HashMap<u64, OpenRequest>,
    /// Each executing batch's request ids, in order.
    pub batches: HashMap<u64, Vec<u64>>,
    /// Open BLS calls and their cancel flags.
    pub bls: HashMap<u64, CancelFlag>,
    /// When each executing batch ends, for its statistics.
    pub ends: HashMap<u64, BatchEnd>,
}
