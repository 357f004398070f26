//! One ensemble request in flight: starts its ready steps on their models,
//! collects their outputs, and answers once no step can run any more.

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

    /// Starts the steps that became ready, or answers when none runs any more.
    fn advance(self: &Arc<Self>, mut progress: MutexGuard<'_, Progress>) {
        if self.cancel.is_cancelled() {
            let sink = progress.sink.take();
            drop(progress);
            let cancelled = Error::new(ErrorKind::Cancelled, "request was cancelled");
            return self.fail(sink, cancelled);
        }
        let plan = &self.ensemble.plan;
        let ready = progress.state.take_ready(plan);
        if ready.is_empty() && progress.state.is_idle() {
            let outputs = self.outputs(&progress.state);
            let sink = progress.sink.take();
            drop(progress);
            return match outputs {
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
        let mut outputs: Vec<Tensor> = Vec::new();
        let mut error = None;
        let on_event: EventCallback = Box::new(move |event: StreamEvent| {
            match event.response {
                Some(Ok(response)) => outputs.extend(response.outputs),
                Some(Err(e)) => {
                    error.get_or_insert(e);
                }
                None => {}
            }
            if event.is_final {
                let result = match error.take() {
                    Some(e) => Err(e),
                    None => Ok(std::mem::take(&mut outputs)),
                };
                run.step_finished(index, result);
            }
        });
        self.times.step_started();
        let host = &self.ensemble.host;
        let trace = self.trace.as_ref().map(|t| t.child());
        let cancel = self.cancel.clone();
        if let Err(e) = host.submit_step(request, cancel, on_event, self.times.clone(), trace) {
            self.step_finished(index, Err(e));
        }
    }

    fn step_finished(self: &Arc<Self>, index: usize, result: Result<Vec<Tensor>>) {
        let mut progress = self.progress.lock();
        if progress.sink.is_none() {
            return;
        }
        match result {
            Ok(outputs) => {
                progress.state.complete(&self.ensemble.plan, index, outputs);
                self.advance(progress);
            }
            Err(e) => {
                let sink = progress.sink.take();
                drop(progress);
                self.fail(sink, e);
                // The steps still running have no one to answer.
                self.cancel.cancel();
            }
        }
    }

    /// The requested ensemble outputs, each of which must have been
    /// produced or be absent (absent ones are left out, as in Triton).
    fn outputs(&self, state: &State) -> Result<Vec<Tensor>> {
        let mut outputs = Vec::with_capacity(self.requested_outputs.len());
        for name in &self.requested_outputs {
            match state.tensor(name) {
                Some(Some(tensor)) => outputs.push(tensor.clone()),
                Some(None) => {}
                None => {
                    let id = match self.request_id.as_str() {
                        "" => "<id_unknown>",
                        id => id,
                    };
                    return Err(Error::invalid_arg(format!(
                        "[request id: {id}] unexpected deadlock, at least one output is not \
                         set while no more ensemble steps can be made"
                    )));
                }
            }
        }
        Ok(outputs)
    }

    fn succeed(&self, sink: Option<ResponseSink>, outputs: Vec<Tensor>) {
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
        sink.respond(Ok(BackendResponse::new(outputs)));
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
