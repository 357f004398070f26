//! The server as its backends see it: models calling other models.

use std::{
    collections::HashMap,
    sync::{Arc, Weak},
    time::Instant,
};

use oxiserve_backend::{CancelFlag, EventCallback, ModelHost, metrics::CustomMetrics};
use oxiserve_proto::ModelConfig;
use oxiserve_trace::Trace;
use oxiserve_types::{Error, InferRequest, Result};

use super::{Inner, ModelManager, members};
use crate::{
    infer::EventOut, model::LoadedModel, repository::ModelId, scheduler::StepHost, stats::StepTimes,
};

/// Runs a backend's requests on the manager's models. Holds the manager
/// weakly: models live inside it.
#[derive(Debug)]
pub(crate) struct ServerHost {
    manager: Weak<Inner>,
    metrics: Arc<CustomMetrics>,
    /// An ensemble's steps, by model name: the model each is bound to.
    steps: HashMap<String, ModelId>,
}

impl ServerHost {
    /// The host of a backend's model: it finds models by name, as requests do.
    pub fn new(manager: &ModelManager) -> Arc<Self> {
        Arc::new(Self {
            manager: Arc::downgrade(&manager.inner),
            metrics: manager.inner.custom_metrics.clone(),
            steps: HashMap::new(),
        })
    }

    /// The host of an ensemble's steps: each runs on the model it was bound
    /// to at load ([`ModelManager::bind_steps`]).
    pub fn for_steps(manager: &ModelManager, config: &ModelConfig) -> Arc<Self> {
        let steps = members::bound_members(config)
            .into_iter()
            .map(|id| (id.name.clone(), id))
            .collect();
        Arc::new(Self {
            manager: Arc::downgrade(&manager.inner),
            metrics: manager.inner.custom_metrics.clone(),
            steps,
        })
    }
}

impl ServerHost {
    /// The ready model a backend asks for. Triton tells backends only that
    /// it is not ready, whatever the reason.
    fn model(&self, name: &str, version: Option<i64>) -> Result<Arc<LoadedModel>> {
        let not_ready = || Error::unavailable(format!("Model '{name}' is not ready."));
        let inner = self.manager.upgrade().ok_or_else(not_ready)?;
        ModelManager { inner }
            .model(name, version)
            .map_err(|_| not_ready())
    }

    /// [`ServerHost::model`] for an ensemble's step `name`: the model it is
    /// bound to.
    fn step_model(&self, name: &str, version: Option<i64>) -> Result<Arc<LoadedModel>> {
        let not_ready = || Error::unavailable(format!("Model '{name}' is not ready."));
        let id = self.steps.get(name).ok_or_else(not_ready)?;
        let inner = self.manager.upgrade().ok_or_else(not_ready)?;
        ModelManager { inner }
            .model_by_id(id, version)
            .map_err(|_| not_ready())
    }
}

impl ModelHost for ServerHost {
    fn is_decoupled(&self, model_name: &str, version: Option<i64>) -> Result<bool> {
        Ok(self.model(model_name, version)?.is_decoupled())
    }

    fn custom_metrics(&self) -> Arc<CustomMetrics> {
        self.metrics.clone()
    }

    fn infer(
        &self,
        request: InferRequest,
        cancel: CancelFlag,
        on_event: EventCallback,
        trace: Option<Trace>,
    ) -> Result<()> {
        let model = self.model(&request.model_name, request.model_version)?;
        model.submit(
            request,
            Instant::now(),
            Vec::new(),
            cancel,
            EventOut::Callback(on_event),
            trace,
        )
    }
}

impl StepHost for ServerHost {
    fn submit_step(
        &self,
        request: InferRequest,
        cancel: CancelFlag,
        on_event: EventCallback,
        times: Arc<StepTimes>,
        trace: Option<Trace>,
    ) -> Result<()> {
        let model = self.step_model(&request.model_name, request.model_version)?;
        model.submit_step(request, cancel, on_event, times, trace)
    }
}
