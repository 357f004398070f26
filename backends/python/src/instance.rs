//! A model instance: a stub process that runs the user's `TritonPythonModel`,
//! restarted after a crash (at most [`MAX_RESTARTS`] times a minute).

use std::{
    collections::VecDeque,
    sync::Arc,
    time::{Duration, Instant},
};

use oxiserve_backend::{
    BackendRequest, ComputeTiming, InstanceContext, InstanceKind, ModelInstance,
};
use oxiserve_types::{Error, ErrorKind, Result};

use crate::{
    convert,
    inflight::OpenRequest,
    lane::{DirectCalls, Lane},
    model::PythonModel,
    process::Process,
    protocol::{ExecuteRequest, ToStub},
    pump::Event,
};

/// Crashes within [`CRASH_WINDOW`] after which the instance stays down.
const MAX_CRASHES: usize = 5;
const CRASH_WINDOW: Duration = Duration::from_secs(60);

/// One instance of a Python model.
pub(crate) struct PythonInstance {
    model: Arc<PythonModel>,
    context: InstanceContext,
    process: Option<Process>,
    /// When its processes died, most recent last.
    crashes: VecDeque<Instant>,
    next_batch: u64,
    next_rid: u64,
    /// Batches sent to the process and not finished yet, oldest first.
    executing: VecDeque<u64>,
    /// The next `execute` runs on an admitting thread (see
    /// [`ModelInstance::ready_inline`]): it must not restart the process.
    inline: bool,
}

impl PythonInstance {
    /// Starts the instance's process and runs the model's `initialize`.
    pub fn create(model: Arc<PythonModel>, context: &InstanceContext) -> Result<Self> {
        let process = start(&model, context)?;
        Ok(Self {
            model,
            context: context.clone(),
            process: Some(process),
            crashes: VecDeque::new(),
            next_batch: 1,
            next_rid: 1,
            executing: VecDeque::new(),
            inline: false,
        })
    }

    /// The live process, restarting a crashed one unless it crashed
    /// [`MAX_CRASHES`] times within [`CRASH_WINDOW`].
    fn process(&mut self) -> Result<&Process> {
        if self.process.as_ref().is_some_and(|p| !p.is_alive()) {
            self.crashed();
        }
        if self.process.is_none() {
            let now = Instant::now();
            while self
                .crashes
                .front()
                .is_some_and(|t| now - *t > CRASH_WINDOW)
            {
                self.crashes.pop_front();
            }
            if self.crashes.len() >= MAX_CRASHES {
                return Err(Error::unavailable(format!(
                    "Python model instance '{}' crashed {MAX_CRASHES} times in {} s; reload the \
                     model",
                    self.context.name,
                    CRASH_WINDOW.as_secs()
                )));
            }
            log::warn!("restarting Python model instance '{}'", self.context.name);
            self.process = Some(start(&self.model, &self.context)?);
        }
        Ok(self.process.as_ref().expect("just started"))
    }

    /// Forgets a process that died (its pump already failed its requests).
    fn crashed(&mut self) {
        self.executing.clear();
        if let Some(process) = self.process.take() {
            process.kill();
            self.crashes.push_back(Instant::now());
        }
    }

    fn run(&mut self, requests: Vec<BackendRequest>, timing: &mut ComputeTiming) -> Result<()> {
        let batch_id = self.next_batch;
        self.next_batch += 1;
        let first_rid = self.next_rid;
        self.next_rid += requests.len() as u64;
        // A process that died since `ready_inline` is restarted by the
        // instance thread; here its requests fail as those it held did.
        if std::mem::take(&mut self.inline) && self.process.as_ref().is_none_or(|p| !p.is_alive()) {
            let error = Error::unavailable(format!(
                "Stub process '{}' is not healthy; the instance is being restarted",
                self.context.name
            ));
            return fail_all(requests, error);
        }
        let process = match self.process() {
            Ok(p) => p,
            Err(e) => return fail_all(requests, e),
        };
        let parts: Vec<&[u8]> = requests
            .iter()
            .flat_map(|r| r.request.inputs.iter().map(|t| t.data.as_ref()))
            .collect();
        let block = match process.arena_in.write_block(&parts) {
            Ok(block) => block,
            Err(e) => return fail_all(requests, e),
        };
        let mut offsets = block.parts.as_slice();
        let mut wire = Vec::with_capacity(requests.len());
        let mut rids = Vec::with_capacity(requests.len());
        {
            let mut inflight = process.inflight.lock();
            for (i, r) in requests.into_iter().enumerate() {
                let rid = first_rid + i as u64;
                let (here, rest) = offsets.split_at(r.request.inputs.len());
                offsets = rest;
                wire.push(ExecuteRequest {
                    rid,
                    request: convert::wire_request(&r.request, &r.requested_outputs, here),
                });
                rids.push(rid);
                inflight.requests.insert(
                    rid,
                    OpenRequest {
                        rid,
                        sink: r.sink,
                        outputs: r.requested_outputs,
                        trace: r.trace,
                    },
                );
            }
            inflight.batches.insert(batch_id, rids);
            timing.start_compute();
            // Statistics count the batch until the stub says it is done.
            inflight.ends.insert(batch_id, timing.defer());
        }
        let sent = process.connection.send(&ToStub::Execute {
            batch_id,
            block: block.offset,
            requests: wire,
        });
        if sent.is_err() {
            // The pump fails the batch's requests when it sees the death.
            self.crashed();
            return Ok(());
        }
        self.executing.push_back(batch_id);
        self.wait_below(self.model.pipeline_depth);
        Ok(())
    }

    /// Waits until fewer than `depth` batches are executing in the process.
    fn wait_below(&mut self, depth: usize) {
        while self.executing.len() >= depth {
            let Some(process) = self.process.as_ref() else {
                return;
            };
            match process.wait_for(Duration::MAX, |e| match e {
                Event::Executed(id) => Some(id),
                _ => None,
            }) {
                Ok(id) => self.executing.retain(|b| *b != id),
                Err(_) => {
                    self.crashed();
                    return;
                }
            }
        }
    }
}

impl ModelInstance for PythonInstance {
    fn execute(&mut self, requests: Vec<BackendRequest>, timing: &mut ComputeTiming) {
        let _ = self.run(requests, timing);
    }

    /// Ready while the live process holds fewer batches than the pipeline
    /// depth less one: sending one more then does not wait.
    fn ready_inline(&mut self) -> bool {
        let Some(process) = self.process.as_ref() else {
            return false;
        };
        let executing = &mut self.executing;
        let alive = process.poll_executed(|id| executing.retain(|b| *b != id));
        self.inline = alive && executing.len() + 1 < self.model.pipeline_depth;
        self.inline
    }
}

impl Drop for PythonInstance {
    fn drop(&mut self) {
        if let Some(process) = self.process.take() {
            process.stop(self.model.settings.stub_timeout);
        }
    }
}

fn fail_all(requests: Vec<BackendRequest>, error: Error) -> Result<()> {
    for r in requests {
        r.sink.respond(Err(error.clone()));
    }
    Err(error)
}

/// Forks a process for `context` and runs `initialize` in it.
fn start(model: &PythonModel, context: &InstanceContext) -> Result<Process> {
    let zygote = model.backend.zygote(&model.python)?;
    let settings = &model.settings;
    let lane = model
        .takes_direct_calls
        .then(|| model.backend.lanes.new_path())
        .flatten();
    let mut process = Process::spawn(
        zygote,
        &context.name,
        settings.arena_layout(),
        settings.stub_timeout,
        settings.idle_spin,
        model.host.clone(),
        DirectCalls {
            lanes: model.backend.lanes.clone(),
            version: model.version,
            own_lane: lane.clone(),
        },
    )?;
    let kind = match context.kind {
        InstanceKind::Cpu => "CPU",
        InstanceKind::Gpu => "GPU",
        InstanceKind::Model => "MODEL",
    };
    let mut args = model.args.clone();
    args.push(("model_instance_kind".into(), kind.into()));
    args.push(("model_instance_name".into(), context.name.clone()));
    args.push((
        "model_instance_device_id".into(),
        context.device_id.to_string(),
    ));
    let init = ToStub::Init {
        args,
        model_file: model.model_file.display().to_string(),
        decoupled: model.decoupled,
        idle_spin_us: u32::try_from(settings.idle_spin.as_micros()).unwrap_or(u32::MAX),
        lane: lane
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
    };
    let initialized = process
        .connection
        .send(&init)
        .map_err(|e| e.message)
        .and_then(|()| {
            process.wait_for(settings.stub_timeout, |e| match e {
                Event::Initialized(result) => Some(result),
                _ => None,
            })
        });
    match initialized {
        Ok(Ok(())) => {
            // The stub listens before it answers `Init`, unless it could not.
            if let Some(path) = lane.filter(|p| p.exists()) {
                let lane = Lane {
                    path,
                    instance: context.name.clone(),
                };
                process.lane = Some(model.backend.lanes.open(&model.name, model.version, lane));
            }
            Ok(process)
        }
        Ok(Err(e)) => {
            process.kill();
            // Triton's load reason: the stub's text after its status name.
            Err(Error::new(
                ErrorKind::Internal,
                format!("Internal: {}", e.message),
            ))
        }
        Err(why) => {
            process.kill();
            Err(Error::internal(format!(
                "Python model instance '{}' failed to initialize: {why}",
                context.name
            )))
        }
    }
}
