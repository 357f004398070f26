//! One loaded version of a Python model, and what the backend's models share.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::Arc,
};

use oxiserve_backend::ModelHost;
use oxiserve_proto::{
    ModelConfig,
    inference::{ModelQueuePolicy, model_config::SchedulingChoice},
};
use oxiserve_types::Result;
use parking_lot::Mutex;

use crate::{lane::Lanes, package::package_dir, settings::PythonSettings, zygote::Zygote};

/// What every model of the backend shares: its settings, one zygote per
/// interpreter and the lanes of its instances.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    pub settings: PythonSettings,
    zygotes: Mutex<HashMap<PathBuf, Arc<Zygote>>>,
    pub lanes: Arc<Lanes>,
}

impl Shared {
    /// The state of a backend with these settings; no zygote started yet.
    pub fn new(settings: PythonSettings) -> Self {
        Self {
            settings,
            zygotes: Mutex::default(),
            lanes: Arc::default(),
        }
    }

    /// The zygote for `python`, started (or restarted) when needed.
    pub fn zygote(&self, python: &Path) -> Result<Arc<Zygote>> {
        let mut zygotes = self.zygotes.lock();
        if let Some(zygote) = zygotes.get(python).filter(|z| z.is_alive()) {
            return Ok(zygote.clone());
        }
        let zygote = Arc::new(Zygote::start(
            python,
            package_dir()?,
            self.settings.stub_timeout,
        )?);
        log::info!(
            "python backend: {} ready to fork model instances ({})",
            zygote.python().display(),
            zygote.versions
        );
        zygotes.insert(python.to_path_buf(), zygote.clone());
        Ok(zygote)
    }
}

/// One loaded version of a Python model.
pub(crate) struct PythonModel {
    pub backend: Arc<Shared>,
    pub name: String,
    pub version: i64,
    pub settings: PythonSettings,
    pub python: PathBuf,
    pub model_file: PathBuf,
    /// `initialize` arguments shared by every instance.
    pub args: Vec<(String, String)>,
    pub decoupled: bool,
    pub host: Arc<dyn ModelHost>,
    /// Batches a process holds at once (see [`pipeline_depth`]).
    pub pipeline_depth: usize,
    /// Whether its instances take direct BLS calls (lane.rs).
    pub takes_direct_calls: bool,
}

/// How many batches an instance's process may hold at once. With two, the
/// next batch already waits in the stub's socket while it computes one, so
/// it never idles between batches. But a batch sent early has left the
/// scheduler's queue: where queue timeouts or priorities decide what runs
/// next, batches go one at a time, as in Triton.
pub(crate) fn pipeline_depth(config: &ModelConfig) -> usize {
    let timed = |p: &ModelQueuePolicy| p.default_timeout_microseconds > 0;
    match &config.scheduling_choice {
        None => 2,
        Some(SchedulingChoice::DynamicBatching(batching)) => {
            let ordered = batching.priority_levels > 1
                || batching.default_queue_policy.as_ref().is_some_and(timed)
                || batching.priority_queue_policy.values().any(timed);
            if ordered { 1 } else { 2 }
        }
        Some(_) => 1,
    }
}

#[cfg(test)]
mod tests {
    use oxiserve_proto::inference::ModelDynamicBatching;

    use super::*;

    fn batching(b: ModelDynamicBatching) -> ModelConfig {
        ModelConfig {
            scheduling_choice: Some(SchedulingChoice::DynamicBatching(b)),
            ..Default::default()
        }
    }

    #[test]
    fn batches_are_pipelined_unless_the_queue_decides_the_order() {
        assert_eq!(pipeline_depth(&ModelConfig::default()), 2);
        assert_eq!(
            pipeline_depth(&batching(ModelDynamicBatching::default())),
            2
        );
        let prioritized = ModelDynamicBatching {
            priority_levels: 2,
            ..Default::default()
        };
        assert_eq!(pipeline_depth(&batching(prioritized)), 1);
        let timed = ModelDynamicBatching {
            default_queue_policy: Some(ModelQueuePolicy {
                default_timeout_microseconds: 1000,
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(pipeline_depth(&batching(timed)), 1);
    }
}
