//! Triton's rate limiter (`--rate-limit=execution_count`): a model instance
//! executes a batch only once it holds every resource its `instance_group`'s
//! `rate_limiter` lists, and gives them back when the batch ends. Instances
//! waiting for resources are served in order of executions times priority,
//! so a priority-2 instance gets half the turns of a priority-1 one and none
//! waits forever. One limiter serves every model of the server; with
//! `--rate-limit=off` there is none, and instances take no lock for it.

mod queue;
mod resources;
mod state;
#[cfg(test)]
mod tests;

use std::{collections::HashMap, sync::Arc};

use crossbeam_channel::{Receiver, Sender};
use oxiserve_proto::inference::ModelRateLimiter;
use oxiserve_types::{Error, Result};
use parking_lot::Mutex;

use crate::config::RateLimiterSettings;
use queue::InstanceId;
use state::State;

/// The server's rate limiter.
#[derive(Debug)]
pub(crate) struct RateLimiter {
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    state: State,
    /// Where each registered instance hears that it was allocated.
    grants: HashMap<InstanceId, Sender<()>>,
}

impl Inner {
    fn grant(&self, allocated: Vec<InstanceId>) {
        for id in allocated {
            if let Some(tx) = self.grants.get(&id) {
                let _ = tx.try_send(());
            }
        }
    }
}

impl RateLimiter {
    /// A limiter with `settings`' resource counts.
    pub fn new(settings: &RateLimiterSettings) -> Self {
        Self {
            inner: Mutex::new(Inner {
                state: State::new(&settings.resources),
                grants: HashMap::new(),
            }),
        }
    }

    /// Registers one instance on `device` with its group's `config`; refused
    /// (INVALID_ARG, Triton's words) when the resources cannot satisfy it.
    /// It stays registered until the returned slot is dropped.
    pub fn register(
        self: &Arc<Self>,
        device: i32,
        config: &ModelRateLimiter,
    ) -> Result<InstanceSlot> {
        let mut inner = self.inner.lock();
        let id = inner
            .state
            .register(device, config)
            .map_err(Error::invalid_arg)?;
        let (tx, granted) = crossbeam_channel::bounded(1);
        inner.grants.insert(id, tx);
        Ok(InstanceSlot {
            limiter: self.clone(),
            id,
            granted,
        })
    }

    fn release(&self, id: InstanceId) {
        let mut inner = self.inner.lock();
        let allocated = inner.state.release(id);
        inner.grant(allocated);
    }
}

/// One instance's registration with the rate limiter; dropping it
/// unregisters the instance.
#[derive(Debug)]
pub(crate) struct InstanceSlot {
    limiter: Arc<RateLimiter>,
    id: InstanceId,
    granted: Receiver<()>,
}

impl InstanceSlot {
    /// Waits until the instance holds its resources, for one batch; they go
    /// back when the permit drops.
    pub fn acquire(&self) -> Permit {
        let now = {
            let mut inner = self.limiter.inner.lock();
            let allocated = inner.state.stage(self.id);
            let now = allocated.contains(&self.id);
            inner.grant(allocated.into_iter().filter(|id| *id != self.id).collect());
            now
        };
        if !now {
            // The sender lives as long as this slot's registration.
            let _ = self.granted.recv();
        }
        Permit {
            limiter: self.limiter.clone(),
            id: self.id,
        }
    }
}

impl Drop for InstanceSlot {
    fn drop(&mut self) {
        let mut inner = self.limiter.inner.lock();
        inner.grants.remove(&self.id);
        let allocated = inner.state.unregister(self.id);
        inner.grant(allocated);
    }
}

/// Resources an instance holds for one batch; dropped when the batch ends.
#[derive(Debug)]
pub(crate) struct Permit {
    limiter: Arc<RateLimiter>,
    id: InstanceId,
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.limiter.release(self.id);
    }
}
