//! What every request of one ensemble shares: its plan, the host its steps
//! go to, and its statistics.

use std::sync::{Arc, atomic::AtomicUsize};

use oxiserve_backend::{CancelFlag, EventCallback};
use oxiserve_trace::Trace;
use oxiserve_types::{InferRequest, Result};

use super::state::Plan;
use crate::stats::{StatsCollector, StepTimes};

/// Where an ensemble sends its steps: the server's models.
pub(crate) trait StepHost: Send + Sync + std::fmt::Debug {
    /// Validates and queues `request` on the model it names; its events go
    /// to `on_event`, its execution times add up in `times`, and `trace`
    /// (the ensemble request's child trace) traces it. Errors found before
    /// it was queued are returned and `on_event` is never called.
    fn submit_step(
        &self,
        request: InferRequest,
        cancel: CancelFlag,
        on_event: EventCallback,
        times: Arc<StepTimes>,
        trace: Option<Trace>,
    ) -> Result<()>;
}

/// What every request of one ensemble shares.
#[derive(Debug)]
pub(crate) struct Ensemble {
    pub name: Arc<str>,
    pub plan: Plan,
    /// Whether the ensemble may answer more than once (its
    /// `model_transaction_policy`), as its decoupled steps stream.
    pub decoupled: bool,
    pub host: Arc<dyn StepHost>,
    pub stats: Arc<StatsCollector>,
    /// Requests going through the steps (each [`super::run::Run`] counts
    /// itself while it lives).
    pub runs: AtomicUsize,
}
