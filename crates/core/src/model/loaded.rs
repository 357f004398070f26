//! One loaded model version: its backend model, its instance runners, its
//! scheduler and its statistics.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use oxiserve_backend::{
    Backend, BackendRequest, CancelFlag, DirectExecution, EventCallback, ModelContext,
    ResponseEvent, ResponseSink, ResponseTarget,
};
use oxiserve_proto::ModelConfig;
use oxiserve_trace::{Activity, TensorActivity, Trace};
use oxiserve_types::{Error, InferRequest, Result};

use super::instances::{InstanceSource, Instances};
use crate::{
    cache::{CacheInsert, ResponseCache, cache_key},
    infer::{
        EventOut, OutputInfo, OutputShaping, RequestTrace, ResponseStream, StreamTarget,
        response_channel, validate::validate,
    },
    rate_limiter::RateLimiter,
    scheduler::{EnsembleScheduler, Job, Scheduler, StepHost},
    shared_memory::OutputRegion,
    stats::{
        ExecutionTimes, FailureReason, LatencyMetrics, ModelStatistics, RequestRecord,
        StatsCollector, StatsSettings, StepTimes,
    },
    warmup,
};

/// A model version that is ready to serve.
#[derive(Debug)]
pub struct LoadedModel {
    name: Arc<str>,
    /// The namespace of the model with `--model-namespacing` (`None`: none).
    namespace: Option<Arc<str>>,
    version: i64,
    config: Arc<ModelConfig>,
    stats: Arc<StatsCollector>,
    outputs: Arc<OutputInfo>,
    /// The scheduler and instances, shared with the versions an instance
    /// update makes from this one.
    instances: Arc<Instances>,
    /// Requests waiting beyond this many are refused; 0: no limit.
    queue_limit: usize,
    load_duration: Duration,
    /// The server's response cache, when this model's config enables it.
    cache: Option<Arc<ResponseCache>>,
}

/// What the server decides for every model it loads.
#[derive(Debug, Clone)]
pub(crate) struct LoadSettings {
    /// The latency metrics to record.
    pub stats: StatsSettings,
    /// Refuse requests while this many wait in the model's queue (0: never).
    pub queue_limit: usize,
    /// The server's response cache, if it has one.
    pub cache: Option<Arc<ResponseCache>>,
    /// The server's rate limiter, if it has one.
    pub rate_limiter: Option<Arc<RateLimiter>>,
}

impl LoadedModel {
    /// Loads `context`'s model with `backend` and starts its instances.
    pub(crate) fn load(
        backend: &dyn Backend,
        context: ModelContext,
        settings: LoadSettings,
    ) -> Result<Self> {
        let started = Instant::now();
        let outputs = Arc::new(OutputInfo::load(&context)?);
        let model = backend.load(&context)?;
        let decoupled = is_decoupled(&context.config);
        let cache = cache_for(&context.config, settings.cache);
        let stats = Arc::new(StatsCollector::new(
            &settings.stats,
            decoupled,
            cache.is_some(),
        ));
        let scheduler = Scheduler::for_config(&context.config, &context.model_path)?;
        let warmup = Arc::new(warmup::samples(&context.config, &context.model_path)?);
        let source = InstanceSource {
            model,
            stats: stats.clone(),
            label: format!("{} (version {})", context.name, context.version),
            warmup,
            rate_limiter: settings.rate_limiter,
        };
        let instances = Instances::start(&context.config, scheduler, source)?;
        Ok(Self {
            name: context.name.as_str().into(),
            namespace: None,
            version: context.version,
            config: context.config,
            stats,
            outputs,
            instances: Arc::new(instances),
            queue_limit: settings.queue_limit,
            load_duration: started.elapsed(),
            cache,
        })
    }

    /// Loads an ensemble: no backend and no instances; its steps run on
    /// the models `host` finds.
    pub(crate) fn ensemble(
        context: ModelContext,
        host: Arc<dyn StepHost>,
        settings: &StatsSettings,
        cache: Option<Arc<ResponseCache>>,
    ) -> Result<Self> {
        let started = Instant::now();
        let decoupled = is_decoupled(&context.config);
        let cache = cache_for(&context.config, cache);
        let stats = Arc::new(StatsCollector::new(settings, decoupled, cache.is_some()));
        let scheduler = EnsembleScheduler::new(&context.config, host, stats.clone());
        Ok(Self {
            name: context.name.as_str().into(),
            namespace: None,
            version: context.version,
            outputs: Arc::new(OutputInfo::load(&context)?),
            stats,
            instances: Arc::new(Instances::none(Scheduler::Ensemble(scheduler))),
            // Its requests wait in its members' queues, which have limits.
            queue_limit: 0,
            load_duration: started.elapsed(),
            cache,
            config: context.config,
        })
    }

    /// Whether [`LoadedModel::with_instance_groups`] can apply a new
    /// `instance_group` to this version.
    pub(crate) fn can_update_instances(&self) -> bool {
        self.instances.can_update()
    }

    /// This version with `config`, which differs from its own only in
    /// `instance_group`: the instances it no longer lists leave, new ones
    /// start, and the others go on serving (Triton's instance update). The
    /// two share their instances, queue and statistics.
    pub(crate) fn with_instance_groups(&self, config: Arc<ModelConfig>) -> Result<Self> {
        self.instances.update(&config)?;
        Ok(Self {
            name: self.name.clone(),
            namespace: self.namespace.clone(),
            version: self.version,
            config,
            stats: self.stats.clone(),
            outputs: self.outputs.clone(),
            instances: self.instances.clone(),
            queue_limit: self.queue_limit,
            load_duration: self.load_duration,
            cache: self.cache.clone(),
        })
    }

    /// The model's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// This version as a model of `namespace` (none when empty).
    pub(crate) fn in_namespace(mut self, namespace: &str) -> Self {
        self.namespace = (!namespace.is_empty()).then(|| namespace.into());
        self
    }

    /// The model's namespace with `--model-namespacing`: the repository it
    /// was found in (its metrics carry it as Triton's `namespace` label).
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The version number.
    pub fn version(&self) -> i64 {
        self.version
    }

    /// The complete configuration.
    pub fn config(&self) -> &Arc<ModelConfig> {
        &self.config
    }

    /// Whether the model's requests are answered from the response cache
    /// when they can be (its config enables it and the server has one).
    pub fn is_cached(&self) -> bool {
        self.cache.is_some()
    }

    /// Whether the model may send any number of responses per request.
    pub fn is_decoupled(&self) -> bool {
        is_decoupled(&self.config)
    }

    /// Requests queued and not yet executing.
    pub fn pending_requests(&self) -> usize {
        self.instances.scheduler.pending()
    }

    /// The statistics so far.
    pub fn statistics(&self) -> ModelStatistics {
        self.stats.snapshot(&self.name, self.version)
    }

    /// Adds executions its backend ran outside the scheduler (each one
    /// request, no queue): counted as the scheduler counts its own.
    pub(crate) fn record_direct_executions(&self, executions: &[DirectExecution]) {
        for execution in executions {
            let times = ExecutionTimes {
                compute_infer: execution.compute,
                ..ExecutionTimes::default()
            };
            self.stats.record_execution(1, &times);
            match execution.failed {
                true => self
                    .stats
                    .record_failure(execution.compute, FailureReason::Backend),
                false => self.stats.record_success(execution.compute, &times, 1),
            }
        }
    }

    /// The latency metrics so far: histograms, summaries, first responses.
    pub fn latency(&self) -> LatencyMetrics {
        self.stats.latency()
    }

    /// How long loading took: the backend's load and every instance's creation.
    pub fn load_duration(&self) -> Duration {
        self.load_duration
    }

    /// Validates and queues `request` (traced by `trace`, if sampled); its
    /// responses come on the returned stream, with the outputs in
    /// `output_regions` written there.
    pub(crate) fn infer(
        &self,
        request: InferRequest,
        arrival: Instant,
        output_regions: Vec<OutputRegion>,
        trace: Option<Trace>,
    ) -> Result<ResponseStream> {
        let cancel = CancelFlag::default();
        let (stream, tx) = response_channel(cancel.clone());
        self.submit(
            request,
            arrival,
            output_regions,
            cancel,
            EventOut::Stream(tx),
            trace,
        )?;
        Ok(stream)
    }

    /// Validates and queues `request`; its responses go to `out`.
    pub(crate) fn submit(
        &self,
        request: InferRequest,
        arrival: Instant,
        output_regions: Vec<OutputRegion>,
        cancel: CancelFlag,
        out: EventOut,
        trace: Option<Trace>,
    ) -> Result<()> {
        if self.instances.refuses(&request) {
            return Err(self.stopping_error(&request.id));
        }
        let record = Arc::new(RequestRecord::new(self.stats.clone(), arrival));
        self.submit_recorded(request, record, output_regions, cancel, out, trace)
    }

    /// Triton's words for a request refused because the server is stopping
    /// (an ensemble's steps already under way are not refused).
    fn stopping_error(&self, request_id: &str) -> Error {
        let id = if request_id.is_empty() {
            "<id_unknown>"
        } else {
            request_id
        };
        let ensemble = match self.instances.scheduler {
            Scheduler::Ensemble(_) => format!("in ensemble '{}', ", self.name),
            _ => String::new(),
        };
        Error::unavailable(format!(
            "{ensemble}[request id: {id}] Server is stopping, scheduler for model has stopped \
             accepting new inference requests"
        ))
    }

    /// Validates and queues `request` as a step of an ensemble request:
    /// its execution times also add up in `times`.
    pub(crate) fn submit_step(
        &self,
        request: InferRequest,
        cancel: CancelFlag,
        on_event: EventCallback,
        times: Arc<StepTimes>,
        trace: Option<Trace>,
    ) -> Result<()> {
        let record = RequestRecord::for_step(self.stats.clone(), Instant::now(), times);
        let out = EventOut::Callback(on_event);
        self.submit_recorded(request, Arc::new(record), Vec::new(), cancel, out, trace)
    }

    fn submit_recorded(
        &self,
        request: InferRequest,
        record: Arc<RequestRecord>,
        output_regions: Vec<OutputRegion>,
        cancel: CancelFlag,
        out: EventOut,
        trace: Option<Trace>,
    ) -> Result<()> {
        if let Some(trace) = &trace {
            trace.request_start(&self.name, self.version, &request.id, record.arrival);
        }
        let classifications: Vec<(String, u32)> = request
            .outputs
            .iter()
            .filter(|o| o.class_count > 0)
            .map(|o| (o.name.clone(), o.class_count))
            .collect();
        let request_id = request.id.clone();
        // Like Triton, requests refused here are not counted in the statistics.
        self.check_queue_room(&request_id)?;
        let valid = validate(&self.config, request)?;
        let backend_trace = trace.clone();
        let trace = trace.map(RequestTrace::new);
        let target = StreamTarget {
            tx: out,
            record: record.clone(),
            shaping: OutputShaping {
                model_name: self.name.clone(),
                model_version: self.version,
                request_id,
                info: self.outputs.clone(),
                classifications,
                output_regions,
            },
            failure: None,
            trace: trace.clone(),
        };
        let enqueued = Instant::now();
        let mut target: Box<dyn ResponseTarget> = Box::new(target);
        if let Some(cache) = &self.cache {
            let key = cache_key(
                &self.name,
                self.version,
                &valid.request,
                &valid.requested_outputs,
            );
            let (cached, lookup) = cache.lookup(&key);
            if let Some(response) = cached {
                record.cache_hit(enqueued.elapsed().saturating_sub(lookup), lookup);
                target.deliver(ResponseEvent {
                    response: Some(Ok(response)),
                    is_final: true,
                    fails_request: false,
                });
                return Ok(());
            }
            target = Box::new(CacheInsert {
                inner: target,
                cache: cache.clone(),
                stats: self.stats.clone(),
                key,
                lookup,
                pending: None,
                responses: 0,
                failed: false,
            });
        }
        let job = Job {
            request: BackendRequest {
                request: valid.request,
                requested_outputs: valid.requested_outputs,
                sink: ResponseSink::new(self.instances.scheduler.wrap_target(target), cancel),
                trace: backend_trace,
            },
            record,
            batch_size: valid.batch_size,
            enqueued,
            trace,
        };
        if let Some(trace) = &job.trace {
            trace.report(Activity::QueueStart, job.enqueued);
            trace.report_tensors(TensorActivity::QueueInput, &job.request.request.inputs);
        }
        self.instances.scheduler.enqueue(job)
    }

    /// Refuses a request at once, with Triton's words, while the queue holds
    /// `queue_limit` requests (its memory stays bounded under overload).
    fn check_queue_room(&self, request_id: &str) -> Result<()> {
        if self.queue_limit == 0 || self.instances.scheduler.pending() < self.queue_limit {
            return Ok(());
        }
        let id = if request_id.is_empty() {
            "<id_unknown>"
        } else {
            request_id
        };
        Err(Error::unavailable(format!(
            "[request id: {id}] Exceeds maximum queue size"
        )))
    }

    /// See [`Instances::stop_accepting`].
    pub(crate) fn stop_accepting(&self) {
        self.instances.stop_accepting();
    }

    /// See [`Instances::in_flight`].
    pub fn in_flight(&self) -> usize {
        self.instances.in_flight()
    }

    /// Stops accepting requests, lets the queued ones finish, and waits for
    /// the instance threads to end (for every version sharing them).
    pub(crate) fn shutdown(&self) {
        self.instances.shutdown();
    }
}

/// Whether `config` lets the model send any number of responses per request.
fn is_decoupled(config: &ModelConfig) -> bool {
    config
        .model_transaction_policy
        .as_ref()
        .is_some_and(|p| p.decoupled)
}

/// `cache` for a model whose `config` enables the response cache.
fn cache_for(
    config: &ModelConfig,
    cache: Option<Arc<ResponseCache>>,
) -> Option<Arc<ResponseCache>> {
    cache.filter(|_| config.response_cache.is_some_and(|c| c.enable))
}
