//! Instance runners: one OS thread per model instance, executing the batches
//! its scheduler hands out, timing them for statistics, and surviving a
//! panicking backend.

use std::{
    panic::{AssertUnwindSafe, catch_unwind},
    sync::{Arc, mpsc},
    thread::JoinHandle,
    time::Instant,
};

use oxiserve_backend::{ComputeTiming, InstanceContext, Model, ModelInstance};
use oxiserve_trace::Activity;
use oxiserve_types::{Error, ErrorKind, Result};

use super::{BatchSource, InstanceLoad, Job};
use crate::{
    rate_limiter::{InstanceSlot, Permit},
    stats::{ExecutionTimes, StatsCollector},
    warmup::{self, WarmupSample},
};

/// What a runner needs to start.
pub(crate) struct RunnerSpec {
    pub model: Arc<dyn Model>,
    pub instance: InstanceContext,
    pub source: Box<dyn BatchSource>,
    pub stats: Arc<StatsCollector>,
    /// `<model> (version <v>)`, for log lines.
    pub label: String,
    /// The `model_warmup` samples the instance runs before it is ready.
    pub warmup: Arc<Vec<WarmupSample>>,
    /// The instance's registration with the rate limiter, if the server has
    /// one: each batch waits for its resources.
    pub rate_limit: Option<InstanceSlot>,
}

/// A running instance thread.
#[derive(Debug)]
pub(crate) struct InstanceRunner {
    thread: JoinHandle<()>,
}

impl InstanceRunner {
    /// Starts the thread, creates the instance on it and warms it up;
    /// returns once the instance is ready, or with the error that prevented it.
    pub fn start(spec: RunnerSpec) -> Result<Self> {
        let (ready_tx, ready_rx) = mpsc::sync_channel(1);
        let thread = std::thread::Builder::new()
            .name(format!("inst:{}", spec.instance.name))
            .spawn(move || run(spec, ready_tx))
            .map_err(|e| Error::internal(format!("cannot start an instance thread: {e}")))?;
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(Self { thread }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => {
                let _ = thread.join();
                Err(Error::internal(
                    "the instance panicked while it was created",
                ))
            }
        }
    }

    /// Waits until the thread ends (after its scheduler stopped).
    pub fn join(self) {
        let _ = self.thread.join();
    }
}

fn run(spec: RunnerSpec, ready: mpsc::SyncSender<Result<()>>) {
    let RunnerSpec {
        model,
        instance,
        mut source,
        stats,
        label,
        warmup,
        rate_limit,
    } = spec;
    let created = catch_unwind(AssertUnwindSafe(|| {
        let mut created = model.create_instance(&instance)?;
        warmup::run(created.as_mut(), &warmup)?;
        Ok(created)
    }));
    let mut instance = match created {
        Ok(Ok(created)) => {
            let _ = ready.send(Ok(()));
            created
        }
        Ok(Err(e)) => {
            let _ = ready.send(Err(e));
            return;
        }
        Err(_) => {
            let _ = ready.send(Err(Error::internal(format!(
                "instance '{}' panicked while it was created or warmed up",
                instance.name
            ))));
            return;
        }
    };
    let load = source.load();
    while let Some(batch) = source.next_batch() {
        let permit = rate_limit.as_ref().map(InstanceSlot::acquire);
        execute(instance.as_mut(), batch, &stats, &label, &load, permit);
    }
}

fn execute(
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
