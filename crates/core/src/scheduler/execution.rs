//! Executing one batch on an instance: dropping requests cancelled while
//! they waited, catching a panicking backend, and recording the batch's
//! statistics and trace timestamps once it ends (a pipelining backend's
//! batch ends after `execute` returned).

use std::{
    panic::{AssertUnwindSafe, catch_unwind},
    sync::Arc,
    time::Instant,
};

use oxiserve_backend::{ComputeTiming, ModelInstance};
use oxiserve_trace::Activity;
use oxiserve_types::{Error, ErrorKind};

use super::{InstanceLoad, Job};
use crate::{
    rate_limiter::Permit,
    stats::{ExecutionTimes, StatsCollector},
};

/// Executes `batch` on `instance`; `permit` (the rate limiter's resources)
/// goes back when the batch ends.
pub(super) fn execute(
    instance: &mut dyn ModelInstance,
    batch: Vec<Job>,
    stats: &Arc<StatsCollector>,
    label: &str,
    load: &Arc<InstanceLoad>,
    permit: Option<Permit>,
) {
    let exec_start = Instant::now();
    let mut requests = Vec::with_capacity(batch.len());
    let mut records = Vec::with_capacity(batch.len());
    let mut traces = Vec::new();
    let mut batch_size = 0;
    for job in batch {
        if job.request.sink.is_cancelled() {
            job.request.sink.respond(Err(Error::new(
                ErrorKind::Cancelled,
                "request was cancelled before it executed",
            )));
            continue;
        }
        batch_size += job.batch_size;
        records.push((job.record, job.enqueued, job.batch_size));
        traces.extend(job.trace);
        requests.push(job.request);
    }
    if requests.is_empty() {
        load.ended();
        return;
    }
    let mut timing = ComputeTiming::default();
    let outcome = catch_unwind(AssertUnwindSafe(|| instance.execute(requests, &mut timing)));
    if outcome.is_err() {
        log::error!("{label}: the model panicked while executing; its requests got errors");
    }
    let compute_start = timing.compute_start();
    let compute_end = timing.compute_end();
    let stats = stats.clone();
    let load = load.clone();
    // A pipelining instance's batch ends after `execute` returned.
    timing.on_end(move |exec_end| {
        // The instance's next batch starts now; its resources go back.
        load.ended();
        drop(permit);
        let compute_start = compute_start.unwrap_or(exec_start).max(exec_start);
        let compute_end = compute_end
            .unwrap_or(exec_end)
            .clamp(compute_start, exec_end);
        let mut times = ExecutionTimes {
            queue: Default::default(),
            compute_input: compute_start - exec_start,
            compute_infer: compute_end - compute_start,
            compute_output: exec_end - compute_end,
        };
        stats.record_execution(batch_size, &times);
        for (record, enqueued, request_batch) in records {
            times.queue = exec_start.saturating_duration_since(enqueued);
            record.executed(times, request_batch);
        }
        // Each traced request's compute timestamps are its batch's.
        for trace in traces {
            trace.report(Activity::ComputeStart, exec_start);
            trace.report(Activity::ComputeInputEnd, compute_start);
            trace.report(Activity::ComputeOutputStart, compute_end);
            trace.report(Activity::ComputeEnd, exec_end);
        }
    });
}
