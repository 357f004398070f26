//! One ensemble request in flight: starts its ready steps on their models,
//! collects their outputs, and answers: a decoupled ensemble with each
//! iteration of its outputs as soon as it is complete, then the final flag
//! once no step runs any more; any other with its one answer then.

use std::sync::{Arc, atomic::Ordering};

use oxiserve_backend::{
    BackendRequest, BackendResponse, CancelFlag, EventCallback, ResponseSink, StreamEvent,
};
use oxiserve_types::{Error, ErrorKind, InferRequest, Parameters, RequestedOutput, Result, Tensor};
use parking_lot::{Mutex, MutexGuard};

use super::{
    shared::Ensemble,
    state::{ReadyStep, State},
};
use crate::{
    infer::RequestTrace,
    scheduler::Job,
    stats::{ExecutionTimes, FailureReason, RequestRecord, StepTimes},
};

/// An ensemble request between its arrival and its response.
pub(super) struct Run {
    ensemble: Arc<Ensemble>,
    request_id: String,
    parameters: Parameters,
    requested_outputs: Vec<String>,
    cancel: CancelFlag,
    record: Arc<RequestRecord>,
    batch_size: u64,
    queue: std::time::Duration,
    times: Arc<StepTimes>,
    /// The ensemble request's trace: each step gets a child of it.
    trace: Option<Arc<RequestTrace>>,
    progress: Mutex<Progress>,
}

struct Progress {
    state: State,
    /// `None` once the request was answered.
    sink: Option<ResponseSink>,
}

impl Run {
    /// Starts `job` on `ensemble`'s first steps.
    pub fn start(ensemble: Arc<Ensemble>, job: Job) {
        let Job {
            request:
                BackendRequest {
                    request,
                    requested_outputs,
                    sink,
                    trace: _,
                },
            record,
            batch_size,
            enqueued,
            trace,
        } = job;
        let state = State::new(&ensemble.plan, request.inputs);
        ensemble.runs.fetch_add(1, Ordering::Relaxed);
        let run = Arc::new(Self {
            ensemble,
            request_id: request.id,
            parameters: request.parameters,
            requested_outputs,
            cancel: sink.cancel_flag(),
            record,
            batch_size: batch_size.max(1),
            queue: enqueued.elapsed(),
            times: Arc::default(),
            trace,
            progress: Mutex::new(Progress {
                state,
                sink: Some(sink),
            }),
        });
        let progress = run.progress.lock();
        run.advance(progress);
    }

    /// Sends the complete iterations of a decoupled ensemble's outputs,
    /// starts the steps that became ready, or answers when none runs any more.
    fn advance(self: &Arc<Self>, mut progress: MutexGuard<'_, Progress>) {
        if self.cancel.is_cancelled() {
            let sink = progress.sink.take();
            drop(progress);
            let cancelled = Error::new(ErrorKind::Cancelled, "request was cancelled");
            return self.fail(sink, cancelled);
        }
        let Progress { state, sink } = &mut *progress;
        if self.ensemble.decoupled
            && let Some(sink) = sink
        {
            while let Some(outputs) = state.take_answer(&self.requested_outputs) {
                let _ = sink.send(Ok(BackendResponse::new(outputs)), false);
            }
        }
        let ready = state.take_ready(&self.ensemble.plan);
        if ready.is_empty() && state.is_idle() {
            let answer = if self.ensemble.decoupled {
                Ok(None)
            } else {
                self.answer(state).map(Some)
            };
            let sink = sink.take();
            drop(progress);
            return match answer {
                Ok(outputs) => self.succeed(sink, outputs),
                Err(e) => self.fail(sink, e),
            };
        }
        drop(progress);
        for step in ready {
            self.launch(step);
        }
    }

    /// Sends one step to its model.
    fn launch(self: &Arc<Self>, ready: ReadyStep) {
        let step = &self.ensemble.plan.steps[ready.index];
        let request = InferRequest {
            model_name: step.model_name.clone(),
            model_version: step.model_version,
            id: self.request_id.clone(),
            inputs: ready.inputs,
            outputs: step
                .outputs
                .iter()
                .map(|(name, _)| RequestedOutput {
                    name: name.clone(),
                    ..Default::default()
                })
                .collect(),
            parameters: self.parameters.clone(),
        };
        let index = ready.index;
        let run = self.clone();
        let on_event: EventCallback = Box::new(move |event: StreamEvent| match event.response {
            Some(Err(e)) => run.step_failed(e),
            response => {
                let outputs = response.and_then(Result::ok).map(|r| r.outputs);
                run.step_responded(index, outputs, event.is_final);
            }
        });
        self.times.step_started();
        let host = &self.ensemble.host;
        let trace = self.trace.as_ref().map(|t| t.child());
        let cancel = self.cancel.clone();
        if let Err(e) = host.submit_step(request, cancel, on_event, self.times.clone(), trace) {
            self.step_failed(e);
        }
    }

    /// One event of a step run: a response's outputs, its final flag, or both.
    fn step_responded(self: &Arc<Self>, index: usize, outputs: Option<Vec<Tensor>>, last: bool) {
        let mut progress = self.progress.lock();
        if progress.sink.is_none() {
            return;
        }
        if let Some(outputs) = outputs {
            progress.state.respond(&self.ensemble.plan, index, outputs);
        }
        if last {
            progress.state.finish();
        }
        self.advance(progress);
    }

    /// A step failed: so does the request, at once.
    fn step_failed(&self, error: Error) {
        let sink = self.progress.lock().sink.take();
        if sink.is_some() {
            self.fail(sink, error);
            // The steps still running have no one to answer.
            self.cancel.cancel();
        }
    }

    /// The one answer of an ensemble that is not decoupled: the requested
    /// outputs, each produced or absent (absent ones are left out, as in
    /// Triton), made once.
    fn answer(&self, state: &mut State) -> Result<Vec<Tensor>> {
        let id = match self.request_id.as_str() {
            "" => "<id_unknown>",
            id => id,
        };
        let Some(outputs) = state.take_answer(&self.requested_outputs) else {
            return Err(Error::invalid_arg(format!(
                "[request id: {id}] unexpected deadlock, at least one output is not set \
                 while no more ensemble steps can be made"
            )));
        };
        if state.take_answer(&self.requested_outputs).is_some() {
            return Err(Error::invalid_arg(format!(
                "[request id: {id}] a decoupled step made its outputs more than once, so \
                 the ensemble must be decoupled too (model_transaction_policy {{ decoupled: \
                 true }})"
            )));
        }
        Ok(outputs)
    }

    /// Ends the request: its one answer, or for a decoupled ensemble the
    /// final flag after the responses already sent.
    fn succeed(&self, sink: Option<ResponseSink>, outputs: Option<Vec<Tensor>>) {
        let Some(sink) = sink else { return };
        let stats = self.ensemble.stats.clone();
        let record = self.record.clone();
        let (batch_size, queue) = (self.batch_size, self.queue);
        // Like Triton, the ensemble's compute times are its steps' together.
        self.times.when_all_executed(move |steps| {
            let times = ExecutionTimes { queue, ..steps };
            stats.record_execution(batch_size, &times);
            record.executed(times, batch_size);
        });
        match outputs {
            Some(outputs) => sink.respond(Ok(BackendResponse::new(outputs))),
            None => sink.finish(),
        }
    }

    /// Answers with `error`, worded as Triton words a step's failure. As in
    /// Triton, whatever failed, the ensemble counts an `OTHER` failure (its
    /// step counted its own reason).
    fn fail(&self, sink: Option<ResponseSink>, error: Error) {
        let Some(sink) = sink else { return };
        self.record.finished(Some(FailureReason::Other));
        let message = format!("in ensemble '{}', {}", self.ensemble.name, error.message);
        sink.respond(Err(Error::new(error.kind, message)));
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        self.ensemble.runs.fetch_sub(1, Ordering::Relaxed);
    }
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Run")
            .field("ensemble", &self.ensemble.name)
            .field("request_id", &self.request_id)
            .finish_non_exhaustive()
    }
}
