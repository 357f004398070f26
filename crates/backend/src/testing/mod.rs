//! Helpers for backend tests: run requests through a model and collect what
//! its instance answers, without a server; the conformance kit every
//! backend runs ([`conformance`]); configurations with parameters; a
//! runtime library's search checked against its wheel.

pub mod conformance;
mod library;
mod parameters;

pub use library::library_found_in_wheel;
pub use parameters::config_with_parameters;

use std::sync::Arc;

use bytes::Bytes;
use oxiserve_types::{InferRequest, Result};
use parking_lot::Mutex;

use crate::contract::{InstanceContext, InstanceKind, Model};
use crate::request::BackendRequest;
use crate::sink::{BackendResponse, CancelFlag, ResponseEvent, ResponseSink, ResponseTarget};
use crate::timing::ComputeTiming;

/// FP32 values as tensor data (little-endian).
pub fn fp32_data(values: impl IntoIterator<Item = f32>) -> Bytes {
    values
        .into_iter()
        .flat_map(f32::to_le_bytes)
        .collect::<Vec<u8>>()
        .into()
}

/// FP32 tensor data as values.
pub fn fp32_values(data: &[u8]) -> Vec<f32> {
    data.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Everything one request received, in order.
pub type Collected = Arc<Mutex<Vec<ResponseEvent>>>;

struct Collector(Collected);

impl ResponseTarget for Collector {
    fn deliver(&mut self, event: ResponseEvent) {
        self.0.lock().push(event);
    }
}

/// A request whose responses are collected; `outputs` are the outputs to produce.
pub fn collecting_request(request: InferRequest, outputs: &[&str]) -> (BackendRequest, Collected) {
    collecting_request_with(request, outputs, CancelFlag::default())
}

/// Like [`collecting_request`], with the request's cancel flag.
pub fn collecting_request_with(
    request: InferRequest,
    outputs: &[&str],
    cancel: CancelFlag,
) -> (BackendRequest, Collected) {
    let collected = Collected::default();
    let sink = ResponseSink::new(Box::new(Collector(collected.clone())), cancel);
    let request = BackendRequest {
        request,
        requested_outputs: outputs.iter().map(|s| s.to_string()).collect(),
        sink,
        trace: None,
    };
    (request, collected)
}

/// Creates one CPU instance of `model` and runs `request` alone; returns the
/// single final response, checking the model sent exactly one event.
pub fn infer_once(
    model: &dyn Model,
    request: InferRequest,
    outputs: &[&str],
) -> Result<BackendResponse> {
    let mut instance = model.create_instance(&InstanceContext {
        name: "test_0".into(),
        kind: InstanceKind::Cpu,
        device_id: 0,
    })?;
    let (request, collected) = collecting_request(request, outputs);
    instance.execute(vec![request], &mut ComputeTiming::default());
    let mut events = std::mem::take(&mut *collected.lock());
    assert_eq!(events.len(), 1, "expected exactly one response event");
    let event = events.pop().unwrap();
    assert!(event.is_final, "the only response must be final");
    event.response.expect("a response, not only a final flag")
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxiserve_types::Error;

    #[test]
    fn dropped_sink_answers_with_an_error() {
        let (request, collected) = collecting_request(InferRequest::default(), &[]);
        drop(request);
        let events = collected.lock();
        assert_eq!(events.len(), 1);
        assert!(events[0].is_final);
        assert!(
            matches!(&events[0].response, Some(Err(e)) if e.message.contains("without answering"))
        );
    }

    #[test]
    fn nothing_is_delivered_after_the_final_event() {
        let (mut request, collected) = collecting_request(InferRequest::default(), &[]);
        request
            .sink
            .send(Ok(BackendResponse::default()), false)
            .unwrap();
        request.sink.send(Err(Error::internal("x")), true).unwrap();
        assert!(
            request
                .sink
                .send(Ok(BackendResponse::default()), true)
                .is_err()
        );
        drop(request);
        assert_eq!(collected.lock().len(), 2);
    }
}
