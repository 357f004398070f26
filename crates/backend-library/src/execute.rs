//! `TRITONBACKEND_ModelInstanceExecute`: the host's batch becomes our
//! [`BackendRequest`]s, run by the instance; then each request's statistics
//! go to the host and the request goes back to it. Responses go through
//! each request's factory, so they may come later.

use std::{sync::Arc, time::Instant};

use oxiserve_backend::{BackendRequest, CancelFlag, ComputeTiming, ResponseSink};
use oxiserve_types::Result;

use crate::abi::{self, REQUEST_RELEASE_ALL, TRITONBACKEND_ModelInstance, TRITONBACKEND_Request};
use crate::clock::nanos;
use crate::instance::{self, InstanceState};
use crate::request;
use crate::response::{FactoryTarget, Outcome};
use crate::status::check;

/// Runs `requests` on the instance; always takes them over (each is answered
/// and released), so it returns success unless the instance has no state.
pub(crate) fn execute(
    handle: *mut TRITONBACKEND_ModelInstance,
    requests: &[*mut TRITONBACKEND_Request],
) -> Result<()> {
    let state = instance::state(handle)?;
    let exec_start = Instant::now();
    let mut batch = Vec::with_capacity(requests.len());
    let mut outcomes = Vec::with_capacity(requests.len());
    for &request in requests {
        let (accepted, outcome) = accept(state, request);
        batch.extend(accepted);
        outcomes.push(outcome);
    }
    let rows: usize = batch.iter().map(BackendRequest::batch_size).sum();
    let mut timing = ComputeTiming::default();
    state.instance.execute(batch, &mut timing);
    let exec_end = Instant::now();
    let times = [
        nanos(exec_start),
        nanos(timing.compute_start().unwrap_or(exec_start)),
        nanos(timing.compute_end().unwrap_or(exec_end)),
        nanos(exec_end),
    ];
    for (&request, outcome) in requests.iter().zip(outcomes) {
        let success = outcome.is_some_and(|o| !o.failed());
        // SAFETY: the request is still ours (released just below); the host
        // reads the times only.
        let reported = check(unsafe {
            abi::TRITONBACKEND_ModelInstanceReportStatistics(
                handle, request, success, times[0], times[1], times[2], times[3],
            )
        });
        report_failure("report a request's statistics", reported);
        // SAFETY: hands the request back to the host, once; its factory
        // (held by the sink) stays valid for later responses.
        let released =
            check(unsafe { abi::TRITONBACKEND_RequestRelease(request, REQUEST_RELEASE_ALL) });
        report_failure("release a request", released);
    }
    // SAFETY: `handle` is the live instance of this call.
    let reported = check(unsafe {
        abi::TRITONBACKEND_ModelInstanceReportBatchStatistics(
            handle,
            rows.max(1) as u64,
            times[0],
            times[1],
            times[2],
            times[3],
        )
    });
    report_failure("report a batch's statistics", reported);
    Ok(())
}

/// The request as ours, answering it with the error when it cannot be read;
/// and where its outcome is recorded (none when it cannot be answered).
fn accept(
    state: &InstanceState,
    request: *mut TRITONBACKEND_Request,
) -> (Option<BackendRequest>, Option<Arc<Outcome>>) {
    let target = match FactoryTarget::new(request) {
        Ok(target) => target,
        Err(error) => {
            log::error!(
                "model '{}': cannot answer a request: {}",
                state.model_name,
                error.message
            );
            return (None, None);
        }
    };
    let outcome = target.outcome();
    let sink = ResponseSink::new(Box::new(target), CancelFlag::default());
    match request::read(request, &state.model_name, state.model_version) {
        Ok((request, requested_outputs)) => {
            let request = BackendRequest {
                request,
                requested_outputs,
                sink,
                trace: None,
            };
            (Some(request), Some(outcome))
        }
        Err(error) => {
            sink.respond(Err(error));
            (None, Some(outcome))
        }
    }
}

fn report_failure(what: &str, result: Result<()>) {
    if let Err(error) = result {
        log::error!("failed to {what}: {}", error.message);
    }
}
