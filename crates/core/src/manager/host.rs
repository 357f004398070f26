//! The server as its backends see it: models calling other models.

use std::{
    collections::HashMap,
    sync::{Arc, Weak},
    time::Instant,
};

use oxiserve_backend::{
    CancelFlag, DirectExecution, EventCallback, LoadParameters, ModelHost, metrics::CustomMetrics,
};
use oxiserve_proto::ModelConfig;
use oxiserve_trace::Trace;
use oxiserve_types::{Error, InferRequest, Result};

use super::{Inner, ModelManager, Requester, members};
use crate::{
    infer::EventOut,
    model::LoadedModel,
    repository::{LoadRequest, ModelId},
    scheduler::StepHost,
    stats::StepTimes,
};

/// Runs a backend's requests on the manager's models. Holds the manager
/// weakly: models live inside it.
#[derive(Debug)]
pub(crate) struct ServerHost {
    manager: Weak<Inner>,
    /// The model whose backend asks (`None` for an ensemble's steps).
    caller: Option<ModelId>,
    metrics: Arc<CustomMetrics>,
    /// An ensemble's steps, by model name: the model each is bound to.
    steps: HashMap<String, ModelId>,
}

impl ServerHost {
    /// The host of model `caller`'s backend: it finds models by name, as
    /// requests do.
    pub fn new(manager: &ModelManager, caller: &ModelId) -> Arc<Self> {
        Arc::new(Self {
            manager: Arc::downgrade(&manager.inner),
            caller: Some(caller.clone()),
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
            caller: None,
            metrics: manager.inner.custom_metrics.clone(),
            steps,
        })
    }
}

impl ServerHost {
    /// The manager, as the calling model asks it for changes; `None` once
    /// the server is gone.
    fn manager(&self) -> Option<ModelManager> {
        let requester = match &self.caller {
            Some(caller) => Requester::Model(caller.clone()),
            None => Requester::Client,
        };
        let inner = self.manager.upgrade()?;
        Some(ModelManager { inner, requester })
    }

    /// The ready model a backend asks for. Triton tells backends only that
    /// it is not ready, whatever the reason.
    fn model(&self, name: &str, version: Option<i64>) -> Result<Arc<LoadedModel>> {
        let not_ready = || Error::unavailable(format!("Model '{name}' is not ready."));
        let manager = self.manager().ok_or_else(not_ready)?;
        manager.model(name, version).map_err(|_| not_ready())
    }

    /// [`ServerHost::model`] for an ensemble's step `name`: the model it is
    /// bound to.
    fn step_model(&self, name: &str, version: Option<i64>) -> Result<Arc<LoadedModel>> {
        let not_ready = || Error::unavailable(format!("Model '{name}' is not ready."));
        let id = self.steps.get(name).ok_or_else(not_ready)?;
        let manager = self.manager().ok_or_else(not_ready)?;
        manager.model_by_id(id, version).map_err(|_| not_ready())
    }

    /// The manager for a change to `name`; an error once the server is gone.
    fn manager_for(&self, name: &str) -> Result<ModelManager> {
        self.manager().ok_or_else(|| {
            Error::unavailable(format!(
                "cannot change model '{name}': the server is stopping"
            ))
        })
    }
}

impl ModelHost for ServerHost {
    fn is_decoupled(&self, model_name: &str, version: Option<i64>) -> Result<bool> {
        Ok(self.model(model_name, version)?.is_decoupled())
    }

    fn custom_metrics(&self) -> Arc<CustomMetrics> {
        self.metrics.clone()
    }

    fn load_model(&self, model_name: &str, parameters: LoadParameters) -> Result<()> {
        let request = LoadRequest {
            config: parameters.config,
            files: parameters.files,
            version: None,
        };
        self.manager_for(model_name)?
            .load_model_with(model_name, &request)
    }

    fn unload_model(&self, model_name: &str, unload_dependents: bool) -> Result<()> {
        let manager = self.manager_for(model_name)?;
        match unload_dependents {
            true => manager.unload_model_and_dependents(model_name),
            false => manager.unload_model(model_name),
        }
    }

    fn is_model_ready(&self, model_name: &str, version: Option<i64>) -> bool {
        self.manager()
            .is_some_and(|m| m.model_ready(model_name, version))
    }

    /// Executions reported after the version stopped serving are dropped
    /// with its statistics.
    fn record_direct_executions(&self, version: i64, executions: &[DirectExecution]) {
        let (Some(caller), Some(manager)) = (&self.caller, self.manager()) else {
            return;
        };
        if let Ok(model) = manager.model_by_id(caller, Some(version)) {
            model.record_direct_executions(executions);
        }
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
