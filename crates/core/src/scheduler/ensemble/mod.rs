//! The ensemble scheduler: runs a request through the steps of an ensemble,
//! each step on its member model (with that model's own scheduler and
//! statistics), each as soon as its inputs exist; each response of a
//! decoupled step flows through the later steps on its own.

mod run;
mod shared;
mod state;

use std::sync::{
    Arc,
    atomic::{AtomicBool, AtomicUsize, Ordering},
};

use oxiserve_proto::ModelConfig;
use oxiserve_types::{Error, Result};

use super::{BatchSource, InstanceLoad, Job, Waiting};
use crate::stats::StatsCollector;
use run::Run;
use shared::Ensemble;
pub(crate) use shared::StepHost;
use state::Plan;

/// The scheduler of an ensemble: no queue and no instances of its own.
#[derive(Debug)]
pub(crate) struct EnsembleScheduler {
    ensemble: Arc<Ensemble>,
    stopped: AtomicBool,
}

impl EnsembleScheduler {
    pub fn new(config: &ModelConfig, host: Arc<dyn StepHost>, stats: Arc<StatsCollector>) -> Self {
        Self {
            ensemble: Arc::new(Ensemble {
                name: config.name.as_str().into(),
                plan: Plan::from_config(config),
                decoupled: config
                    .model_transaction_policy
                    .as_ref()
                    .is_some_and(|p| p.decoupled),
                host,
                stats,
                runs: AtomicUsize::new(0),
            }),
            stopped: AtomicBool::new(false),
        }
    }

    /// Starts the request's first steps; the rest follow as their inputs appear.
    pub fn enqueue(&self, job: Job) -> Result<()> {
        if self.stopped.load(Ordering::Relaxed) {
            job.record.discard();
            return Err(Error::unavailable(format!(
                "ensemble '{}' is being unloaded",
                self.ensemble.name
            )));
        }
        Run::start(self.ensemble.clone(), job);
        Ok(())
    }

    /// The requests going through the steps.
    pub fn in_flight(&self) -> usize {
        self.ensemble.runs.load(Ordering::Relaxed)
    }

    /// Accepts no more requests; those running finish on their members.
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::Relaxed);
    }

    /// An ensemble has no instances: a source with nothing to execute.
    pub fn source(&self) -> Box<dyn BatchSource> {
        Box::new(NoBatches)
    }
}

struct NoBatches;

impl BatchSource for NoBatches {
    fn next_batch(&mut self) -> Option<Vec<Job>> {
        None
    }

    fn load(&self) -> Arc<InstanceLoad> {
        Arc::new(InstanceLoad::new(Waiting::default(), None))
    }
}
