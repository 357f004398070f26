//! The server as its backends see it: models calling other models.

use std::{
    sync::{Arc, Weak},
    time::Instant,
};

use oxiserve_backend::{CancelFlag, EventCallback, ModelHost};
use oxiserve_types::{Error, InferRequest, Result};

use super::{Inner, ModelManager};
use crate::{infer::EventOut, model::LoadedModel, scheduler::StepHost, stats::StepTimes};

/// Runs a backend's requests on the manager's models. Holds the manager
/// weakly: models live inside it.
#[derive(Debug)]
pub(crate) struct ServerHost(Weak<Inner>);

impl ServerHost {
    pub fn new(manager: &ModelManager) -> Arc<Self> {
        Arc::new(Self(Arc::downgrade(&manager.inner)))
    }
}

impl ServerHost {
    /// The ready model a backend asks for. Triton tells backends only that
    /// it is not ready, whatever the reason.
    fn model(&self, name: &str, version: Option<i64>) -> Result<Arc<LoadedModel>> {
        let not_ready = || Error::unavailable(format!("Model '{name}' is not ready."));
        let inner = self.0.upgrade().ok_or_else(not_ready)?;
        ModelManager { inner }
            .model(name, version)
            .map_err(|_| not_ready())
    }
}

impl ModelHost for ServerHost {
    fn is_decoupled(&self, model_name: &str, version: Option<i64>) -> Result<bool> {
        Ok(self.model(model_name, version)?.is_decoupled())
    }

    fn infer(
        &self,
        request: InferRequest,
        cancel: CancelFlag,
        on_event: EventCallback,
    ) -> Result<()> {
        let model = self.model(&request.model_name, request.model_version)?;
        model.submit(
            request,
            Instant::now(),
            Vec::new(),
            cancel,
            EventOut::Callback(on_event),
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
    ) -> Result<()> {
        let model = self.model(&request.model_name, request.model_version)?;
        model.submit_step(request, cancel, on_event, times)
    }
}
