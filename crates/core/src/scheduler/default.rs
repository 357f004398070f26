//! The default scheduler: one shared queue; each free instance takes the next
//! request and executes it alone. While nothing is queued, a model that
//! executes inline runs the request on an idle instance at once, on the
//! admitting thread (see `inline.rs`).

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use crossbeam_channel::{Receiver, Sender};
use oxiserve_types::{Error, Result};
use parking_lot::Mutex;

use super::{
    BatchSource, InlineInstances, InstanceLoad, Job, Retired, Waiting, idle_polling::IdlePolling,
};

/// The queue's sending side, shared by all requests of one model version.
#[derive(Debug)]
pub(crate) struct DefaultScheduler {
    tx: Mutex<Option<Sender<Job>>>,
    rx: Receiver<Job>,
    pending: Arc<AtomicUsize>,
    /// Requests instances took while busy with another (pipelining backends).
    waiting: Waiting,
    /// The instances admitting threads may execute on.
    inline: InlineInstances,
}

impl DefaultScheduler {
    pub fn new() -> Self {
        let (tx, rx) = crossbeam_channel::unbounded();
        Self {
            tx: Mutex::new(Some(tx)),
            rx,
            pending: Arc::default(),
            waiting: Waiting::default(),
            inline: InlineInstances::default(),
        }
    }

    /// Queues a request (or, while nothing is queued, executes it on an idle
    /// instance that executes inline); refused once the scheduler stopped.
    pub fn enqueue(&self, job: Job) -> Result<()> {
        let stopped = || Error::unavailable("the model is unloading");
        let job = if self.pending() == 0 {
            if self.tx.lock().is_none() {
                return Err(stopped());
            }
            match self.inline.try_execute(job) {
                Some(job) => job,
                None => return Ok(()),
            }
        } else {
            job
        };
        let tx = self.tx.lock().clone().ok_or_else(stopped)?;
        self.pending.fetch_add(1, Ordering::Relaxed);
        tx.send(job).map_err(|_| {
            self.pending.fetch_sub(1, Ordering::Relaxed);
            stopped()
        })
    }

    /// The instances that admitting threads may execute on.
    pub fn inline_instances(&self) -> InlineInstances {
        self.inline.clone()
    }

    /// Requests queued, or taken by an instance that did not start them.
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::Relaxed) + self.waiting.get()
    }

    /// Accepts no more requests; instances finish what is queued, then stop.
    pub fn stop(&self) {
        self.tx.lock().take();
    }

    /// A source for one more instance runner, which stops once `retired`.
    pub fn source(&self, retired: Retired) -> Box<dyn BatchSource> {
        Box::new(QueueSource {
            rx: self.rx.clone(),
            pending: self.pending.clone(),
            retired,
            // A busy instance may take the next request (as Triton's
            // scheduler prepares it for the instance): a lone request cannot
            // grow into a batch.
            load: Arc::new(InstanceLoad::new(self.waiting.clone(), None)),
            polling: IdlePolling::default(),
        })
    }
}

struct QueueSource {
    rx: Receiver<Job>,
    pending: Arc<AtomicUsize>,
    retired: Retired,
    load: Arc<InstanceLoad>,
    polling: IdlePolling,
}

/// Waits for the next job, or until the source is retired.
fn wait(rx: &Receiver<Job>, retired: &Retired) -> Option<Job> {
    crossbeam_channel::select! {
        recv(rx) -> job => job.ok(),
        recv(retired.wake()) -> _ => None,
    }
}

impl BatchSource for QueueSource {
    fn next_batch(&mut self) -> Option<Vec<Job>> {
        if self.retired.is_set() {
            return None;
        }
        let (rx, retired) = (&self.rx, &self.retired);
        let job = self.polling.next(rx, || wait(rx, retired))?;
        // Taken first: the job counts as pending in one place or the other.
        self.load.take(1);
        self.pending.fetch_sub(1, Ordering::Relaxed);
        Some(vec![job])
    }

    fn load(&self) -> Arc<InstanceLoad> {
        self.load.clone()
    }
}
