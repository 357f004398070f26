//! Iterative sequences (`sequence_batching { iterative_sequence: true }`):
//! one request is the whole sequence, executed over several batches. A
//! request without a correlation id gets one (and START); the model hands
//! it back after an execution ([`ResponseTarget::reschedule`], Triton's
//! `TRITONSERVER_REQUEST_RELEASE_RESCHEDULE`) and it queues again in its
//! sequence, without START; once it is released for good (its final
//! response), the sequence ends and frees its slot.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Instant,
};

use oxiserve_backend::{BackendRequest, CancelFlag, ResponseEvent, ResponseSink, ResponseTarget};
use oxiserve_types::{Error, InferRequest, ParameterValue};

use super::{
    shared::Shared,
    state::{CorrId, Flags, Refusal},
};
use crate::{scheduler::Job, stats::RequestRecord};

/// The correlation ids an iterative batcher gives requests that have none,
/// counting from 1 as Triton does.
#[derive(Debug)]
pub(super) struct Ids(AtomicU64);

impl Default for Ids {
    fn default() -> Self {
        Self(AtomicU64::new(1))
    }
}

impl Ids {
    /// Makes `request` the START of a new sequence with a fresh id.
    pub fn assign(&self, request: &mut InferRequest) -> CorrId {
        let id = self.0.fetch_add(1, Ordering::Relaxed);
        let parameters = &mut request.parameters;
        parameters.insert("sequence_id".into(), ParameterValue::Uint(id));
        parameters.insert("sequence_start".into(), ParameterValue::Bool(true));
        parameters.remove("sequence_end");
        CorrId::Uint(id)
    }
}

/// What it takes to queue a request again: the request as it arrived (the
/// control and state inputs are added at each execution) and its books.
struct Saved {
    shared: Arc<Shared>,
    corrid: CorrId,
    request: InferRequest,
    requested_outputs: Vec<String>,
    record: Arc<RequestRecord>,
    batch_size: u64,
    cancel: CancelFlag,
}

/// The target of an iterative sequence's request: passes its events on,
/// queues it again when the model reschedules it, ends its sequence once it
/// was answered for good.
pub(super) struct Iterative {
    saved: Arc<Saved>,
    inner: Option<Box<dyn ResponseTarget>>,
}

impl Iterative {
    /// Wraps the sink of `job`, the START request of sequence `corrid`.
    pub fn wrap(shared: &Arc<Shared>, corrid: CorrId, mut job: Job) -> Job {
        let mut request = job.request.request.clone();
        for flag in ["sequence_start", "sequence_end"] {
            request.parameters.remove(flag);
        }
        let saved = Arc::new(Saved {
            shared: shared.clone(),
            corrid,
            request,
            requested_outputs: job.request.requested_outputs.clone(),
            record: job.record.clone(),
            batch_size: job.batch_size,
            cancel: job.request.sink.cancel_flag(),
        });
        job.request.sink = job.request.sink.wrap(|inner| {
            Box::new(Self {
                saved,
                inner: Some(inner),
            })
        });
        job
    }
}

impl ResponseTarget for Iterative {
    fn deliver(&mut self, event: ResponseEvent) {
        let Some(inner) = self.inner.as_mut() else {
            return;
        };
        let is_final = event.is_final;
        inner.deliver(event);
        if is_final {
            self.inner = None;
            let shared = &self.saved.shared;
            shared.lock().end(&self.saved.corrid);
            shared.work.notify_all();
        }
    }

    fn reschedule(&mut self) -> bool {
        let Some(inner) = self.inner.take() else {
            return false;
        };
        let saved = &self.saved;
        let sink = ResponseSink::new(
            Box::new(Self {
                saved: saved.clone(),
                inner: Some(inner),
            }),
            saved.cancel.clone(),
        );
        let job = Job {
            request: BackendRequest {
                request: saved.request.clone(),
                requested_outputs: saved.requested_outputs.clone(),
                sink,
                trace: None,
            },
            record: saved.record.clone(),
            batch_size: saved.batch_size,
            enqueued: Instant::now(),
            trace: None,
        };
        let shared = &saved.shared;
        let corrid = saved.corrid.clone();
        let mut state = shared.lock();
        let again = Flags::default();
        let refused = match state.enqueue(job, corrid.clone(), again, Instant::now()) {
            // The sequence lost its slot while the request executed (it was
            // idle longer than max_sequence_idle_microseconds): it starts anew.
            Err((job, Refusal::NotStarted)) => {
                let start = Flags {
                    start: true,
                    ..Flags::default()
                };
                state.enqueue(*job, corrid, start, Instant::now())
            }
            queued => queued,
        };
        drop(state);
        match refused {
            Ok(()) => {
                shared.work.notify_all();
            }
            Err((job, _)) => job.request.sink.respond(Err(Error::unavailable(
                "Server is stopping, scheduler for model has stopped accepting new inference \
                 requests",
            ))),
        }
        true
    }
}
