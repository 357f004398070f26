//! What the load loops need from a protocol: open a connection, send the
//! pre-encoded request number `step` and say how it went.

use std::future::Future;

use crate::{error::Result, sequence::SequenceStep};

/// How one request went, besides its latency (which the load loop measures).
#[derive(Debug, Default)]
pub struct Outcome {
    /// From the start of the call until the request was handed to the socket.
    pub send_ns: u64,
    /// From the first byte of the response until its last.
    pub recv_ns: u64,
    /// Responses received (several from a decoupled model; 0 when it failed).
    pub responses: u64,
    /// Why the request failed, if it did.
    pub error: Option<String>,
}

/// One connection that sends inference requests one at a time.
pub trait InferClient: Send + 'static {
    /// Sends request `step` (taken modulo the number of prepared requests),
    /// marked with its place in a sequence if it has one, and waits for its
    /// whole response.
    fn infer(
        &mut self,
        step: usize,
        sequence: Option<SequenceStep>,
    ) -> impl Future<Output = Outcome> + Send;
}

/// Opens connections of one kind.
pub trait Connector: Send + Sync + 'static {
    /// The connection type.
    type Client: InferClient;
    /// Opens one connection.
    fn connect(&self) -> impl Future<Output = Result<Self::Client>> + Send;
}
