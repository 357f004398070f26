//! The dynamic batcher's queues: one per priority level, each with its queue
//! policy (maximum size, timeout and what a timeout does), as Triton's
//! `PriorityQueue` keeps them. Level 1 is served before level 2; level 0
//! is the only level of a model without `priority_levels`.

use std::{
    collections::{BTreeMap, HashMap, VecDeque},
    time::{Duration, Instant},
};

use oxiserve_proto::inference::{
    ModelDynamicBatching, ModelQueuePolicy, model_queue_policy::TimeoutAction,
};

use super::batch_key::BatchKey;

/// What a level's queue accepts and how long a request may wait in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct QueuePolicy {
    /// What happens to a request whose timeout passed: rejected (`false`)
    /// or moved behind the level's other requests (`true`).
    pub delay_on_timeout: bool,
    /// The timeout of every request; zero means none.
    pub default_timeout: Duration,
    /// Whether a request's own `timeout` may shorten the default.
    pub allow_timeout_override: bool,
    /// The most requests waiting at this level; zero means no limit.
    pub max_queue_size: usize,
}

impl QueuePolicy {
    /// The policy of the configuration's `ModelQueuePolicy`.
    pub fn from_config(policy: &ModelQueuePolicy) -> Self {
        Self {
            delay_on_timeout: policy.timeout_action == TimeoutAction::Delay as i32,
            default_timeout: Duration::from_micros(policy.default_timeout_microseconds),
            allow_timeout_override: policy.allow_timeout_override,
            max_queue_size: policy.max_queue_size as usize,
        }
    }

    /// The timeout of a request asking for `requested` microseconds (0 =
    /// none): Triton lets a request only shorten a non-zero default.
    fn timeout(&self, requested_us: u64) -> Duration {
        let requested = Duration::from_micros(requested_us);
        if self.allow_timeout_override && requested_us != 0 && requested < self.default_timeout {
            requested
        } else {
            self.default_timeout
        }
    }
}

/// What a queued request carries besides itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Meta {
    /// The request's batch size (at least 1).
    pub batch_size: u64,
    /// Requests with different keys are never batched together.
    pub key: BatchKey,
    /// The request's `priority` parameter (0 = the default level).
    pub priority: u64,
    /// The request's `timeout` parameter in microseconds (0 = none).
    pub timeout_us: u64,
}

/// A queued request.
#[derive(Debug)]
pub(crate) struct Entry<T> {
    pub item: T,
    pub batch_size: u64,
    pub key: BatchKey,
    pub enqueued: Instant,
    /// When its queue policy's timeout passes; `None` without a timeout or
    /// once it was delayed.
    pub deadline: Option<Instant>,
}

/// Why a request was not queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Its level's queue holds `max_queue_size` requests.
    QueueFull,
    /// The batcher stopped (the model is unloading).
    Stopped,
}

/// Requests taken out of the queues without executing.
#[derive(Debug)]
pub(crate) struct Removed<T> {
    /// Their timeout passed under the REJECT action.
    pub timed_out: Vec<T>,
    /// Their client cancelled them.
    pub cancelled: Vec<T>,
}

impl<T> Default for Removed<T> {
    fn default() -> Self {
        Self {
            timed_out: Vec::new(),
            cancelled: Vec::new(),
        }
    }
}

impl<T> Removed<T> {
    pub fn is_empty(&self) -> bool {
        self.timed_out.is_empty() && self.cancelled.is_empty()
    }
}

#[derive(Debug)]
struct LevelQueue<T> {
    policy: QueuePolicy,
    waiting: VecDeque<Entry<T>>,
    /// Requests whose timeout passed under the DELAY action: they go after
    /// every waiting request of the level.
    delayed: VecDeque<Entry<T>>,
}

impl<T> LevelQueue<T> {
    fn new(policy: QueuePolicy) -> Self {
        Self {
            policy,
            waiting: VecDeque::new(),
            delayed: VecDeque::new(),
        }
    }

    fn len(&self) -> usize {
        self.waiting.len() + self.delayed.len()
    }
}

/// Every level's queue.
#[derive(Debug)]
pub(crate) struct PriorityQueues<T> {
    levels: BTreeMap<u64, LevelQueue<T>>,
    priority_levels: u64,
    default_level: u64,
    default_policy: QueuePolicy,
    policies: HashMap<u64, QueuePolicy>,
    len: usize,
}

impl<T> PriorityQueues<T> {
    /// The queues of a `dynamic_batching` configuration.
    pub fn new(config: &ModelDynamicBatching) -> Self {
        let default_policy = config
            .default_queue_policy
            .as_ref()
            .map(QueuePolicy::from_config)
            .unwrap_or_default();
        let policies = config
            .priority_queue_policy
            .iter()
            .map(|(level, policy)| (*level, QueuePolicy::from_config(policy)))
            .collect();
        Self {
            levels: BTreeMap::new(),
            priority_levels: config.priority_levels,
            default_level: config.default_priority_level,
            default_policy,
            policies,
            len: 0,
        }
    }

    /// The level a request of `priority` waits at: Triton's rule, where 0
    /// and levels above `priority_levels` mean the default level.
    pub fn level_of(&self, priority: u64) -> u64 {
        if self.priority_levels == 0 {
            0
        } else if priority == 0 || priority > self.priority_levels {
            self.default_level
        } else {
            priority
        }
    }

    /// Requests queued, delayed ones included.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Queues `item` at the back of its level.
    pub fn push(&mut self, item: T, meta: Meta, now: Instant) -> Result<(), (T, Refusal)> {
        let level = self.level_of(meta.priority);
        let policy = *self.policies.get(&level).unwrap_or(&self.default_policy);
        let queue = self
            .levels
            .entry(level)
            .or_insert_with(|| LevelQueue::new(policy));
        if policy.max_queue_size != 0 && queue.len() >= policy.max_queue_size {
            return Err((item, Refusal::QueueFull));
        }
        let timeout = policy.timeout(meta.timeout_us);
        queue.waiting.push_back(Entry {
            item,
            batch_size: meta.batch_size.max(1),
            key: meta.key,
            enqueued: now,
            deadline: (!timeout.is_zero()).then(|| now + timeout),
        });
        self.len += 1;
        Ok(())
    }

    /// Every queued request in the order batches take them: by level, and
    /// within a level the waiting ones before the delayed ones.
    pub fn iter(&self) -> impl Iterator<Item = &Entry<T>> {
        self.levels
            .values()
            .flat_map(|q| q.waiting.iter().chain(q.delayed.iter()))
    }

    /// Takes the first `count` requests of [`Self::iter`]'s order.
    pub fn take(&mut self, count: usize) -> Vec<Entry<T>> {
        let mut taken = Vec::with_capacity(count);
        for queue in self.levels.values_mut() {
            while taken.len() < count {
                match queue
                    .waiting
                    .pop_front()
                    .or_else(|| queue.delayed.pop_front())
                {
                    Some(entry) => taken.push(entry),
                    None => break,
                }
            }
        }
        self.len -= taken.len();
        self.levels.retain(|_, q| q.len() > 0);
        taken
    }

    /// Applies the queue policies at `now`: requests past their deadline are
    /// rejected or delayed, and cancelled ones leave.
    pub fn expire(&mut self, now: Instant, cancelled: impl Fn(&T) -> bool) -> Removed<T> {
        let mut removed = Removed::default();
        for queue in self.levels.values_mut() {
            let mut kept = VecDeque::with_capacity(queue.waiting.len());
            for mut entry in queue.waiting.drain(..) {
                if cancelled(&entry.item) {
                    removed.cancelled.push(entry.item);
                } else if entry.deadline.is_some_and(|d| now >= d) {
                    if queue.policy.delay_on_timeout {
                        entry.deadline = None;
                        queue.delayed.push_back(entry);
                    } else {
                        removed.timed_out.push(entry.item);
                    }
                } else {
                    kept.push_back(entry);
                }
            }
            queue.waiting = kept;
            let delayed = std::mem::take(&mut queue.delayed);
            for entry in delayed {
                if cancelled(&entry.item) {
                    removed.cancelled.push(entry.item);
                } else {
                    queue.delayed.push_back(entry);
                }
            }
        }
        self.len -= removed.timed_out.len() + removed.cancelled.len();
        self.levels.retain(|_, q| q.len() > 0);
        removed
    }

    /// The earliest deadline of a queued request.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.iter().filter_map(|e| e.deadline).min()
    }
}
