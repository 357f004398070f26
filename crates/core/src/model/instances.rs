//! A model version's scheduler and instance runners. The `LoadedModel` that
//! started them shares them with the ones an instance update makes from it
//! (same version, new `instance_group`); the last of them to go stops them.

use std::sync::{
    Arc,
    atomic::{AtomicBool, Ordering},
};

use oxiserve_backend::{InstanceContext, InstanceKind, Model};
use oxiserve_proto::{
    ModelConfig,
    inference::{ModelRateLimiter, model_instance_group::Kind},
};
use oxiserve_types::{Error, InferRequest, ParameterValue, Result};
use parking_lot::Mutex;

use crate::{
    rate_limiter::RateLimiter,
    scheduler::{InstanceRunner, Retired, RunnerSpec, Scheduler},
    stats::StatsCollector,
    warmup::WarmupSample,
};

/// What a new instance of the version is made from.
pub(crate) struct InstanceSource {
    pub model: Arc<dyn Model>,
    pub stats: Arc<StatsCollector>,
    /// `<model> (version <v>)`, for log lines.
    pub label: String,
    pub warmup: Arc<Vec<WarmupSample>>,
    /// The server's rate limiter, if it has one.
    pub rate_limiter: Option<Arc<RateLimiter>>,
}

impl std::fmt::Debug for InstanceSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InstanceSource")
            .field("label", &self.label)
            .finish_non_exhaustive()
    }
}

/// One running instance and how to make it leave.
#[derive(Debug)]
struct Running {
    runner: InstanceRunner,
    kind: InstanceKind,
    device_id: i32,
    retired: Retired,
}

/// The scheduler and the running instances of one model version.
#[derive(Debug)]
pub(crate) struct Instances {
    pub scheduler: Scheduler,
    running: Mutex<Vec<Running>>,
    /// Retired instances that finish the sequences they hold before they
    /// end (the sequence batcher's); joined at shutdown.
    leaving: Mutex<Vec<InstanceRunner>>,
    /// `None` for an ensemble, which has no instances.
    source: Option<InstanceSource>,
    /// The server is stopping: new requests are refused, queued ones finish.
    stopping: AtomicBool,
}

impl Instances {
    /// Starts an instance for each of `config`'s instance groups, all at
    /// once as Triton does (a model whose instances are slow to initialise
    /// loads in about the time of one); on an error, stops those started.
    pub fn start(
        config: &ModelConfig,
        scheduler: Scheduler,
        source: InstanceSource,
    ) -> Result<Self> {
        let instances = Self {
            scheduler,
            running: Mutex::new(Vec::new()),
            leaving: Mutex::new(Vec::new()),
            source: Some(source),
            stopping: AtomicBool::new(false),
        };
        if let Err(e) = instances.add_all(instances_of(config)) {
            instances.shutdown();
            return Err(e);
        }
        Ok(instances)
    }

    /// Starts `wanted` in parallel; the first error, if any, once all are done.
    fn add_all(&self, wanted: Vec<Planned>) -> Result<()> {
        if wanted.len() <= 1 {
            return wanted
                .into_iter()
                .try_for_each(|instance| self.add(instance));
        }
        std::thread::scope(|scope| {
            let started: Vec<_> = wanted
                .into_iter()
                .map(|instance| scope.spawn(|| self.add(instance)))
                .collect();
            started
                .into_iter()
                .map(|handle| {
                    handle.join().unwrap_or_else(|_| {
                        Err(Error::internal("an instance panicked while starting"))
                    })
                })
                .fold(Ok(()), Result::and)
        })
    }

    /// An ensemble's scheduler, with no instances.
    pub fn none(scheduler: Scheduler) -> Self {
        Self {
            scheduler,
            running: Mutex::new(Vec::new()),
            leaving: Mutex::new(Vec::new()),
            source: None,
            stopping: AtomicBool::new(false),
        }
    }

    /// Refuses new requests from now on, as Triton's schedulers do when the
    /// server begins to exit; the queued ones, and the later requests of
    /// sequences already started, are still served.
    pub fn stop_accepting(&self) {
        self.stopping.store(true, Ordering::Relaxed);
    }

    /// Whether a new `request` is refused because the server is stopping:
    /// the sequence batcher takes the requests of sequences already started.
    pub fn refuses(&self, request: &InferRequest) -> bool {
        if !self.stopping.load(Ordering::Relaxed) {
            return false;
        }
        match &self.scheduler {
            Scheduler::Sequence(_) => request
                .parameters
                .get("sequence_start")
                .and_then(ParameterValue::as_bool)
                .unwrap_or(false),
            Scheduler::Default(_) | Scheduler::Dynamic(_) | Scheduler::Ensemble(_) => true,
        }
    }

    /// Triton's in-flight inferences, which the server waits for when it
    /// stops: see [`Scheduler::in_flight`].
    pub fn in_flight(&self) -> usize {
        self.scheduler.in_flight()
    }

    /// Whether [`Instances::update`] can apply a new `instance_group`.
    pub fn can_update(&self) -> bool {
        self.source.is_some() && self.scheduler.can_retire_instances()
    }

    /// Makes the running instances those of `config`'s instance groups, as
    /// Triton does: instances are matched by kind and device, whatever their
    /// names; the unmatched ones leave (after the batch they execute, and
    /// are finalized before this returns; with the sequence batcher, once the
    /// sequences they hold end) and missing ones start, while the others
    /// keep serving.
    pub fn update(&self, config: &ModelConfig) -> Result<()> {
        let wanted = instances_of(config);
        let mut leaving = Vec::new();
        let mut joining = Vec::new();
        {
            let mut running = self.running.lock();
            let mut kept = vec![false; running.len()];
            for planned in wanted {
                let instance = &planned.context;
                let same =
                    |r: &Running| r.kind == instance.kind && r.device_id == instance.device_id;
                match (0..running.len()).find(|&i| !kept[i] && same(&running[i])) {
                    Some(i) => kept[i] = true,
                    None => joining.push(planned),
                }
            }
            for i in (0..running.len()).rev() {
                if !kept[i] {
                    leaving.push(running.remove(i));
                }
            }
        }
        for gone in &leaving {
            gone.retired.set();
        }
        self.scheduler.wake_idle();
        if self.scheduler.retiring_outlives_update() {
            let mut later = self.leaving.lock();
            later.extend(leaving.into_iter().map(|gone| gone.runner));
        } else {
            leaving.into_iter().for_each(|gone| gone.runner.join());
        }
        self.add_all(joining)
    }

    /// Starts one instance and waits until it is ready; with a rate
    /// limiter, registers it there first.
    fn add(&self, planned: Planned) -> Result<()> {
        let source = self
            .source
            .as_ref()
            .ok_or_else(|| Error::internal("an ensemble has no instances"))?;
        let Planned {
            context: instance,
            rate_limiter,
        } = planned;
        let rate_limit = match &source.rate_limiter {
            Some(limiter) => Some(limiter.register(instance.device_id, &rate_limiter)?),
            None => None,
        };
        let retired = Retired::default();
        let (kind, device_id) = (instance.kind, instance.device_id);
        let runner = InstanceRunner::start(RunnerSpec {
            model: source.model.clone(),
            instance,
            source: self.scheduler.source(retired.clone()),
            stats: source.stats.clone(),
            label: source.label.clone(),
            warmup: source.warmup.clone(),
            rate_limit,
            inline: self.scheduler.inline_instances(),
        })?;
        self.running.lock().push(Running {
            runner,
            kind,
            device_id,
            retired,
        });
        Ok(())
    }

    /// Stops accepting requests, lets the queued ones finish, and waits for
    /// the instance threads to end.
    pub fn shutdown(&self) {
        self.scheduler.stop();
        let running = std::mem::take(&mut *self.running.lock());
        running.into_iter().for_each(|r| r.runner.join());
        let leaving = std::mem::take(&mut *self.leaving.lock());
        leaving.into_iter().for_each(InstanceRunner::join);
    }
}

impl Drop for Instances {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// An instance to start, with what its group asks of the rate limiter.
struct Planned {
    context: InstanceContext,
    rate_limiter: ModelRateLimiter,
}

/// Every instance of the configuration's instance groups, named as Triton
/// names them: `<group name>_<index>`.
fn instances_of(config: &ModelConfig) -> Vec<Planned> {
    let mut instances = Vec::new();
    for group in &config.instance_group {
        let kind = match Kind::try_from(group.kind) {
            Ok(Kind::Gpu) => InstanceKind::Gpu,
            Ok(Kind::Model) => InstanceKind::Model,
            _ => InstanceKind::Cpu,
        };
        let devices: Vec<i32> = if kind == InstanceKind::Gpu && !group.gpus.is_empty() {
            group.gpus.clone()
        } else {
            vec![0]
        };
        let mut index = 0;
        for device_id in devices {
            for _ in 0..group.count.max(1) {
                index += 1;
                instances.push(Planned {
                    context: InstanceContext {
                        name: format!("{}_{}", group.name, index - 1),
                        kind,
                        device_id,
                    },
                    rate_limiter: group.rate_limiter.clone().unwrap_or_default(),
                });
            }
        }
    }
    if instances.is_empty() {
        instances.push(Planned {
            context: InstanceContext {
                name: format!("{}_0", config.name),
                kind: InstanceKind::Cpu,
                device_id: 0,
            },
            rate_limiter: ModelRateLimiter::default(),
        });
    }
    instances
}
