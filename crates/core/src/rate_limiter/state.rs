//! The rate limiter's plain state: registered instances, the staged queue
//! and the resources. Each change answers which instances it allocated, so
//! that the caller wakes them; nothing here blocks.

use std::collections::HashMap;

use oxiserve_proto::inference::ModelRateLimiter;

use super::{
    queue::{InstanceId, Place, StagedQueue},
    resources::Resources,
};
use crate::config::ResourceCount;

/// One registered instance.
#[derive(Debug)]
struct Entry {
    /// `priority`, 0 counting as 1.
    priority: u64,
    /// Executions it finished.
    executions: u64,
    phase: Phase,
    /// It has its next batch while it executes one (a pipelining
    /// instance): it is staged again the moment it releases.
    again: bool,
}

/// Triton's instance states: available, staged (it has a batch and waits
/// for its resources), allocated (it holds them and executes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Available,
    Staged(Place),
    Allocated,
}

/// Instances, their resources and the order they are served in.
#[derive(Debug)]
pub(super) struct State {
    instances: HashMap<InstanceId, Entry>,
    staged: StagedQueue,
    resources: Resources,
    next_id: InstanceId,
}

impl State {
    /// A state with the command line's resource counts.
    pub fn new(counts: &[ResourceCount]) -> Self {
        Self {
            instances: HashMap::new(),
            staged: StagedQueue::default(),
            resources: Resources::new(counts),
            next_id: 0,
        }
    }

    /// Registers an instance on `device` needing what `config` lists;
    /// refused when the resources could never satisfy it.
    pub fn register(
        &mut self,
        device: i32,
        config: &ModelRateLimiter,
    ) -> Result<InstanceId, String> {
        let id = self.next_id;
        self.resources.add(id, device, config)?;
        self.next_id += 1;
        self.instances.insert(
            id,
            Entry {
                priority: u64::from(config.priority.max(1)),
                executions: 0,
                phase: Phase::Available,
                again: false,
            },
        );
        Ok(id)
    }

    /// Forgets instance `id`: what it holds goes back, and it leaves the
    /// queue. Answers the instances allocated in its place.
    pub fn unregister(&mut self, id: InstanceId) -> Vec<InstanceId> {
        match self.instances.remove(&id).map(|entry| entry.phase) {
            Some(Phase::Staged(place)) => self.staged.remove(place),
            Some(Phase::Allocated) => self.resources.release(id),
            Some(Phase::Available) | None => {}
        }
        self.resources.remove(id);
        self.allocate()
    }

    /// Instance `id` has a batch to execute: it joins the queue, or, while
    /// it executes another, will join it when that one ends. Answers the
    /// instances allocated now (`id` among them when it can go at once).
    pub fn stage(&mut self, id: InstanceId) -> Vec<InstanceId> {
        let Some(entry) = self.instances.get_mut(&id) else {
            return Vec::new();
        };
        match entry.phase {
            Phase::Available => {
                self.enqueue(id);
                self.allocate()
            }
            Phase::Allocated => {
                entry.again = true;
                Vec::new()
            }
            Phase::Staged(_) => Vec::new(),
        }
    }

    /// Instance `id` finished executing: its resources go back. Answers the
    /// instances allocated now.
    pub fn release(&mut self, id: InstanceId) -> Vec<InstanceId> {
        let Some(entry) = self.instances.get_mut(&id) else {
            return Vec::new();
        };
        if entry.phase != Phase::Allocated {
            return Vec::new();
        }
        entry.phase = Phase::Available;
        entry.executions += 1;
        let again = std::mem::take(&mut entry.again);
        self.resources.release(id);
        if again {
            // Triton stages a released instance with work at once, before
            // the resources go to anyone.
            self.enqueue(id);
        }
        self.allocate()
    }

    /// Puts available instance `id` in the queue at its scaled priority.
    fn enqueue(&mut self, id: InstanceId) {
        if let Some(entry) = self.instances.get_mut(&id) {
            let scaled = entry.executions.saturating_mul(entry.priority);
            entry.phase = Phase::Staged(self.staged.push(id, scaled));
        }
    }

    /// Allocates the queue's head while its resources are free. The head
    /// waits for what it needs even when an instance behind it could go:
    /// no instance waits forever behind others that need less.
    fn allocate(&mut self) -> Vec<InstanceId> {
        let mut allocated = Vec::new();
        while let Some(id) = self.staged.head() {
            if !self.resources.try_allocate(id) {
                break;
            }
            self.staged.pop();
            if let Some(entry) = self.instances.get_mut(&id) {
                entry.phase = Phase::Allocated;
            }
            allocated.push(id);
        }
        allocated
    }

    /// The resources, for tests.
    #[cfg(test)]
    pub fn resources(&self) -> &Resources {
        &self.resources
    }
}
