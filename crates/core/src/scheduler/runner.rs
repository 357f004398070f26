//! Instance runners: one OS thread per model instance, which creates and
//! warms up the instance, executes the batches its scheduler hands out, and
//! finalizes it. A model that executes inline also lends the idle instance
//! to the threads that admit requests (`inline.rs`).

use std::{
    panic::{AssertUnwindSafe, catch_unwind},
    sync::{Arc, mpsc},
    thread::JoinHandle,
};

use oxiserve_backend::{InstanceContext, Model};
use oxiserve_types::{Error, Result};

use super::{BatchSource, InlineInstances, SharedInstance};
use crate::{
    rate_limiter::InstanceSlot,
    stats::StatsCollector,
    warmup::{self, WarmupSample},
};

/// What a runner needs to start.
pub(crate) struct RunnerSpec {
    pub model: Arc<dyn Model>,
    pub instance: InstanceContext,
    pub source: Box<dyn BatchSource>,
    pub stats: Arc<StatsCollector>,
    /// `<model> (version <v>)`, for log lines.
    pub label: String,
    /// The `model_warmup` samples the instance runs before it is ready.
    pub warmup: Arc<Vec<WarmupSample>>,
    /// The instance's registration with the rate limiter, if the server has
    /// one: each batch waits for its resources.
    pub rate_limit: Option<InstanceSlot>,
    /// Where the scheduler lets admitting threads execute on idle
    /// instances, if it does; used when the model executes inline and no
    /// rate limiter holds the instance.
    pub inline: Option<InlineInstances>,
}

/// A running instance thread.
#[derive(Debug)]
pub(crate) struct InstanceRunner {
    thread: JoinHandle<()>,
}

impl InstanceRunner {
    /// Starts the thread, creates the instance on it and warms it up;
    /// returns once the instance is ready, or with the error that prevented it.
    pub fn start(spec: RunnerSpec) -> Result<Self> {
        let (ready_tx, ready_rx) = mpsc::sync_channel(1);
        let thread = std::thread::Builder::new()
            .name(format!("inst:{}", spec.instance.name))
            .spawn(move || run(spec, ready_tx))
            .map_err(|e| Error::internal(format!("cannot start an instance thread: {e}")))?;
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(Self { thread }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => {
                let _ = thread.join();
                Err(Error::internal(
                    "the instance panicked while it was created",
                ))
            }
        }
    }

    /// Waits until the thread ends (after its scheduler stopped).
    pub fn join(self) {
        let _ = self.thread.join();
    }
}

fn run(spec: RunnerSpec, ready: mpsc::SyncSender<Result<()>>) {
    let RunnerSpec {
        model,
        instance,
        mut source,
        stats,
        label,
        warmup,
        rate_limit,
        inline,
    } = spec;
    let created = catch_unwind(AssertUnwindSafe(|| {
        let mut created = model.create_instance(&instance)?;
        warmup::run(created.as_mut(), &warmup)?;
        Ok(created)
    }));
    let instance = match created {
        Ok(Ok(created)) => {
            let _ = ready.send(Ok(()));
            created
        }
        Ok(Err(e)) => {
            let _ = ready.send(Err(e));
            return;
        }
        Err(_) => {
            let _ = ready.send(Err(Error::internal(format!(
                "instance '{}' panicked while it was created or warmed up",
                instance.name
            ))));
            return;
        }
    };
    let shared = SharedInstance::new(instance, stats, label, source.load());
    let inline = inline.filter(|_| model.executes_inline() && rate_limit.is_none());
    if let Some(inline) = &inline {
        inline.offer(&shared);
    }
    while let Some(batch) = source.next_batch() {
        let permit = rate_limit.as_ref().map(InstanceSlot::acquire);
        shared.execute(batch, permit);
    }
    if let Some(inline) = &inline {
        inline.withdraw(&shared);
    }
    // Finalized here, on its own thread, once no admitting thread holds it.
    drop(shared.take());
}
