//! The backend contract, checked: every backend crate runs [`check`] in its
//! tests with a model and a request that model accepts.
//!
//! What is checked:
//! - every request of a batch gets exactly one final event, and nothing after it;
//! - a non-decoupled model sends exactly one response per request, with every
//!   requested output and nothing else;
//! - a request cancelled before it runs still gets its final event;
//! - instances are independent: several can exist and run at once.

use std::thread;

use oxiserve_types::InferRequest;

use super::{Collected, collecting_request, collecting_request_with};
use crate::contract::{InstanceContext, InstanceKind, Model, ModelInstance};
use crate::sink::CancelFlag;
use crate::timing::ComputeTiming;

/// Runs the contract checks on `model` with `request` (which must be valid
/// for it) asking for `outputs`; panics with what is wrong.
pub fn check(model: &dyn Model, request: &InferRequest, outputs: &[&str]) {
    batch_is_answered_once_each(model, request, outputs);
    cancelled_request_is_finished(model, request, outputs);
    instances_run_side_by_side(model, request, outputs);
}

fn instance(model: &dyn Model, index: usize) -> Box<dyn ModelInstance> {
    model
        .create_instance(&InstanceContext {
            name: format!("conformance_0_{index}"),
            kind: InstanceKind::Cpu,
            device_id: 0,
        })
        .expect("the model creates an instance")
}

fn assert_one_final_response(collected: &Collected, outputs: &[&str], what: &str) {
    let events = collected.lock();
    assert!(!events.is_empty(), "{what}: no event was sent");
    assert_eq!(
        events.iter().filter(|e| e.is_final).count(),
        1,
        "{what}: exactly one final event"
    );
    assert!(
        events.last().unwrap().is_final,
        "{what}: nothing may follow the final event"
    );
    let responses: Vec<_> = events.iter().filter_map(|e| e.response.as_ref()).collect();
    assert_eq!(responses.len(), 1, "{what}: one response per request");
    let response = responses[0].as_ref().expect("the request succeeds");
    let mut names: Vec<&str> = response.outputs.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    let mut wanted = outputs.to_vec();
    wanted.sort_unstable();
    assert_eq!(
        names, wanted,
        "{what}: the requested outputs, and only those"
    );
}

fn batch_is_answered_once_each(model: &dyn Model, request: &InferRequest, outputs: &[&str]) {
    let mut instance = instance(model, 0);
    let (requests, collected): (Vec<_>, Vec<_>) = (0..4)
        .map(|_| collecting_request(request.clone(), outputs))
        .unzip();
    instance.execute(requests, &mut ComputeTiming::default());
    for (i, c) in collected.iter().enumerate() {
        assert_one_final_response(c, outputs, &format!("request {i} of a batch of 4"));
    }
}

fn cancelled_request_is_finished(model: &dyn Model, request: &InferRequest, outputs: &[&str]) {
    let mut instance = instance(model, 0);
    let cancel = CancelFlag::default();
    cancel.cancel();
    let (req, collected) = collecting_request_with(request.clone(), outputs, cancel);
    instance.execute(vec![req], &mut ComputeTiming::default());
    let events = collected.lock();
    assert_eq!(
        events.iter().filter(|e| e.is_final).count(),
        1,
        "a cancelled request still gets exactly one final event"
    );
}

fn instances_run_side_by_side(model: &dyn Model, request: &InferRequest, outputs: &[&str]) {
    let instances: Vec<_> = (0..3).map(|i| instance(model, i)).collect();
    thread::scope(|scope| {
        for mut instance in instances {
            scope.spawn(move || {
                let (req, collected) = collecting_request(request.clone(), outputs);
                instance.execute(vec![req], &mut ComputeTiming::default());
                assert_one_final_response(&collected, outputs, "a request on a parallel instance");
            });
        }
    });
}
