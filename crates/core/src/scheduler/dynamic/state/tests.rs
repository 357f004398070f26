//! The dynamic batcher's decisions on an injected clock: `at(ms)` is a time
//! `ms` milliseconds after the test's start.

use std::{
    collections::HashMap,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use oxiserve_config::BatchPlan;
use oxiserve_proto::inference::{
    ModelDynamicBatching, ModelQueuePolicy, model_queue_policy::TimeoutAction,
};

use crate::scheduler::dynamic::{
    batch_key::BatchKey,
    queue::{Meta, Refusal},
    state::{Cancellable, Next, State},
};

#[derive(Debug)]
struct Item {
    id: u32,
    cancelled: Arc<AtomicBool>,
}

impl Cancellable for Item {
    fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }
}

struct Clock(Instant);

impl Clock {
    fn at(&self, ms: u64) -> Instant {
        self.0 + Duration::from_millis(ms)
    }
}

fn batching(preferred: &[i32], delay_us: u64) -> ModelDynamicBatching {
    ModelDynamicBatching {
        preferred_batch_size: preferred.to_vec(),
        max_queue_delay_microseconds: delay_us,
        ..Default::default()
    }
}

fn policy(timeout_us: u64, delay: bool, allow_override: bool, max: u32) -> ModelQueuePolicy {
    ModelQueuePolicy {
        timeout_action: if delay {
            TimeoutAction::Delay
        } else {
            TimeoutAction::Reject
        } as i32,
        default_timeout_microseconds: timeout_us,
        allow_timeout_override: allow_override,
        max_queue_size: max,
    }
}

/// A request of batch size 1, shape key 0, default priority, no timeout.
fn meta() -> Meta {
    Meta {
        batch_size: 1,
        key: BatchKey::of(&[0]),
        priority: 0,
        timeout_us: 0,
    }
}

struct Harness {
    state: State<Item>,
    clock: Clock,
}

impl Harness {
    fn new(config: ModelDynamicBatching, max_batch_size: i32) -> Self {
        Self {
            state: State::new(&config, BatchPlan::with_max_batch_size(max_batch_size)),
            clock: Clock(Instant::now()),
        }
    }

    fn push(&mut self, id: u32, ms: u64, meta: Meta) -> Result<Arc<AtomicBool>, Refusal> {
        let cancelled = Arc::new(AtomicBool::new(false));
        let item = Item {
            id,
            cancelled: cancelled.clone(),
        };
        self.state
            .enqueue(item, meta, self.clock.at(ms))
            .map(|()| cancelled)
            .map_err(|(_, refusal)| refusal)
    }

    fn push_all(&mut self, ids: std::ops::Range<u32>, ms: u64) {
        for id in ids {
            self.push(id, ms, meta()).unwrap();
        }
    }

    /// The ids of the next batch at `ms`, or the decision if not a batch.
    fn next(&mut self, ms: u64) -> Result<Vec<u32>, Next<u32>> {
        self.decide(ms, false)
    }

    /// [`Harness::next`] for an instance still executing a batch.
    fn next_busy(&mut self, ms: u64) -> Result<Vec<u32>, Next<u32>> {
        self.decide(ms, true)
    }

    fn decide(&mut self, ms: u64, busy: bool) -> Result<Vec<u32>, Next<u32>> {
        let step = self.state.next(self.clock.at(ms), busy);
        match step.next {
            Next::Batch(items) => Ok(items.iter().map(|i| i.id).collect()),
            Next::WaitUntil(at) => Err(Next::WaitUntil(at)),
            Next::WaitForRequests => Err(Next::WaitForRequests),
            Next::Stopped => Err(Next::Stopped),
        }
    }

    fn wait_until(&self, ms: u64) -> Result<Vec<u32>, Next<u32>> {
        Err(Next::WaitUntil(self.clock.at(ms)))
    }
}

#[test]
fn without_delay_a_free_instance_takes_what_is_queued() {
    let mut h = Harness::new(batching(&[8], 0), 8);
    assert_eq!(h.next(0), Err(Next::WaitForRequests));
    h.push_all(0..3, 0);
    assert_eq!(h.next(0), Ok(vec![0, 1, 2]));
    assert_eq!(h.state.len(), 0);
}

#[test]
fn batches_count_request_batch_sizes_up_to_the_maximum() {
    let mut h = Harness::new(batching(&[8], 0), 8);
    for id in 0..3 {
        let m = Meta {
            batch_size: 3,
            ..meta()
        };
        h.push(id, 0, m).unwrap();
    }
    assert_eq!(h.next(0), Ok(vec![0, 1]));
    assert_eq!(h.next(0), Ok(vec![2]));
}

#[test]
fn the_largest_preferred_size_reachable_goes_at_once() {
    let mut h = Harness::new(batching(&[2, 4], 100_000), 8);
    h.push_all(0..5, 0);
    assert_eq!(h.next(1), Ok(vec![0, 1, 2, 3]));
    // The rest waits for more until its delay passes.
    assert_eq!(h.next(1), h.wait_until(100));
    assert_eq!(h.next(100), Ok(vec![4]));
}

#[test]
fn a_batch_waits_for_more_requests_until_the_delay_passes() {
    let mut h = Harness::new(batching(&[4], 10_000), 8);
    h.push_all(0..2, 0);
    assert_eq!(h.next(0), h.wait_until(10));
    h.push_all(2..3, 5);
    assert_eq!(h.next(5), h.wait_until(10));
    assert_eq!(h.next(10), Ok(vec![0, 1, 2]));
}

#[test]
fn reaching_a_preferred_size_ends_the_wait() {
    let mut h = Harness::new(batching(&[4], 10_000), 8);
    h.push_all(0..2, 0);
    assert_eq!(h.next(0), h.wait_until(10));
    h.push_all(2..4, 3);
    assert_eq!(h.next(3), Ok(vec![0, 1, 2, 3]));
}

#[test]
fn a_batch_stops_before_passing_the_largest_preferred_size() {
    let mut h = Harness::new(batching(&[4], 100_000), 8);
    for id in 0..2 {
        let m = Meta {
            batch_size: 3,
            ..meta()
        };
        h.push(id, 0, m).unwrap();
    }
    assert_eq!(h.next(0), Ok(vec![0]));
    assert_eq!(h.next(0), h.wait_until(100));
}

#[test]
fn requests_of_different_shapes_never_share_a_batch() {
    let mut h = Harness::new(batching(&[8], 0), 8);
    for (id, key) in [(0, 1), (1, 1), (2, 2), (3, 1)] {
        let m = Meta {
            key: BatchKey::of(&[key]),
            ..meta()
        };
        h.push(id, 0, m).unwrap();
    }
    assert_eq!(h.next(0), Ok(vec![0, 1]));
    assert_eq!(h.next(0), Ok(vec![2]));
    assert_eq!(h.next(0), Ok(vec![3]));
}

#[test]
fn a_different_shape_sends_the_pending_batch_without_waiting() {
    let mut h = Harness::new(batching(&[4], 100_000), 8);
    h.push(0, 0, meta()).unwrap();
    let other = Meta {
        key: BatchKey::of(&[9]),
        ..meta()
    };
    h.push(1, 0, other).unwrap();
    assert_eq!(h.next(0), Ok(vec![0]));
    assert_eq!(h.next(0), h.wait_until(100));
}

#[test]
fn higher_priority_levels_go_first_and_unknown_levels_use_the_default() {
    let config = ModelDynamicBatching {
        priority_levels: 3,
        default_priority_level: 2,
        ..batching(&[1], 0)
    };
    let mut h = Harness::new(config, 8);
    for (id, priority) in [(0, 0), (1, 3), (2, 1), (3, 9), (4, 2)] {
        h.push(id, 0, Meta { priority, ..meta() }).unwrap();
    }
    let order: Vec<u32> = (0..5).flat_map(|_| h.next(0).unwrap()).collect();
    assert_eq!(order, [2, 0, 3, 4, 1]);
}

#[test]
fn one_batch_spans_priority_levels_in_their_order() {
    let config = ModelDynamicBatching {
        priority_levels: 2,
        default_priority_level: 1,
        ..batching(&[8], 0)
    };
    let mut h = Harness::new(config, 8);
    h.push(
        0,
        0,
        Meta {
            priority: 2,
            ..meta()
        },
    )
    .unwrap();
    h.push(
        1,
        0,
        Meta {
            priority: 1,
            ..meta()
        },
    )
    .unwrap();
    assert_eq!(h.next(0), Ok(vec![1, 0]));
}

#[test]
fn a_full_queue_refuses_and_each_level_has_its_own_limit() {
    let config = ModelDynamicBatching {
        priority_levels: 2,
        default_priority_level: 2,
        default_queue_policy: Some(policy(0, false, false, 2)),
        priority_queue_policy: HashMap::from([(1, policy(0, false, false, 1))]),
        ..batching(&[8], 0)
    };
    let mut h = Harness::new(config, 8);
    let high = Meta {
        priority: 1,
        ..meta()
    };
    assert!(h.push(0, 0, high.clone()).is_ok());
    assert_eq!(h.push(1, 0, high.clone()).err(), Some(Refusal::QueueFull));
    assert!(h.push(2, 0, meta()).is_ok());
    assert!(h.push(3, 0, meta()).is_ok());
    assert_eq!(h.push(4, 0, meta()).err(), Some(Refusal::QueueFull));
    assert_eq!(h.next(0), Ok(vec![0, 2, 3]));
    // Room again once a batch left.
    assert!(h.push(5, 1, high).is_ok());
}

#[test]
fn requests_past_their_timeout_are_rejected() {
    let config = ModelDynamicBatching {
        default_queue_policy: Some(policy(5_000, false, false, 0)),
        ..batching(&[8], 100_000)
    };
    let mut h = Harness::new(config, 8);
    h.push(0, 0, meta()).unwrap();
    h.push(1, 3, meta()).unwrap();
    // The wake-up comes at the first timeout, before the queue delay.
    assert_eq!(h.next(0), h.wait_until(5));
    let step = h.state.next(h.clock.at(5), false);
    let rejected: Vec<u32> = step.removed.timed_out.iter().map(|i| i.id).collect();
    assert_eq!(rejected, [0]);
    assert!(matches!(step.next, Next::WaitUntil(at) if at == h.clock.at(8)));
    let step = h.state.expire(h.clock.at(8));
    assert_eq!(step.timed_out.len(), 1);
    assert_eq!(h.state.len(), 0);
    assert_eq!(h.state.next_deadline(), None);
}

#[test]
fn a_request_timeout_may_only_shorten_an_allowed_default() {
    let config = ModelDynamicBatching {
        default_queue_policy: Some(policy(10_000, false, true, 0)),
        ..batching(&[8], 100_000)
    };
    let mut h = Harness::new(config, 8);
    h.push(
        0,
        0,
        Meta {
            timeout_us: 50_000,
            ..meta()
        },
    )
    .unwrap();
    assert_eq!(h.state.next_deadline(), Some(h.clock.at(10)));
    h.push(
        1,
        0,
        Meta {
            timeout_us: 2_000,
            ..meta()
        },
    )
    .unwrap();
    assert_eq!(h.state.next_deadline(), Some(h.clock.at(2)));

    // Without permission, or without a default timeout, it is ignored.
    for default_policy in [policy(10_000, false, false, 0), policy(0, false, true, 0)] {
        let config = ModelDynamicBatching {
            default_queue_policy: Some(default_policy),
            ..batching(&[8], 0)
        };
        let mut h = Harness::new(config, 8);
        h.push(
            0,
            0,
            Meta {
                timeout_us: 2_000,
                ..meta()
            },
        )
        .unwrap();
        let expected = (default_policy.default_timeout_microseconds != 0).then(|| h.clock.at(10));
        assert_eq!(h.state.next_deadline(), expected);
    }
}

#[test]
fn the_delay_action_moves_late_requests_behind_their_level() {
    let config = ModelDynamicBatching {
        default_queue_policy: Some(policy(5_000, true, false, 0)),
        ..batching(&[1], 0)
    };
    let mut h = Harness::new(config, 1);
    h.push(0, 0, meta()).unwrap();
    h.push(1, 4, meta()).unwrap();
    let step = h.state.next(h.clock.at(6), false);
    assert!(step.removed.is_empty());
    assert!(matches!(step.next, Next::Batch(ref b) if b[0].id == 1));
    assert_eq!(h.next(6), Ok(vec![0]));
}

#[test]
fn cancelled_requests_leave_the_queue() {
    let mut h = Harness::new(batching(&[8], 0), 8);
    let flag = h.push(0, 0, meta()).unwrap();
    h.push(1, 0, meta()).unwrap();
    flag.store(true, Ordering::Relaxed);
    let step = h.state.next(h.clock.at(0), false);
    assert_eq!(step.removed.cancelled.len(), 1);
    assert!(matches!(step.next, Next::Batch(ref b) if b.len() == 1 && b[0].id == 1));
}

#[test]
fn a_stopped_batcher_refuses_new_requests_and_drains_without_waiting() {
    let mut h = Harness::new(batching(&[4], 100_000), 8);
    h.push_all(0..2, 0);
    h.state.stop();
    assert_eq!(h.push(2, 0, meta()).err(), Some(Refusal::Stopped));
    assert_eq!(h.next(0), Ok(vec![0, 1]));
    assert_eq!(h.next(0), Err(Next::Stopped));
}

#[test]
fn a_model_without_batching_executes_requests_one_by_one() {
    let mut h = Harness::new(batching(&[], 100_000), 0);
    h.push_all(0..3, 0);
    assert_eq!(h.next(0), Ok(vec![0]));
    assert_eq!(h.next(0), Ok(vec![1]));
}

#[test]
fn a_busy_instance_gets_a_batch_once_it_cannot_grow() {
    // No preferred size: the largest batch is the one that cannot grow.
    let mut h = Harness::new(ModelDynamicBatching::default(), 4);
    h.push_all(0..3, 0);
    assert_eq!(h.next_busy(0), Err(Next::WaitForRequests));
    assert_eq!(
        h.next_busy(1000),
        Err(Next::WaitForRequests),
        "however long it waits"
    );
    h.push_all(3..6, 1);
    assert_eq!(h.next_busy(1), Ok(vec![0, 1, 2, 3]));
    assert_eq!(h.next_busy(1), Err(Next::WaitForRequests));
    assert_eq!(
        h.next(1),
        Ok(vec![4, 5]),
        "a free instance takes what there is"
    );
}

#[test]
fn a_busy_instance_gets_a_preferred_batch_only_without_delay() {
    let mut h = Harness::new(batching(&[2, 4], 0), 8);
    h.push_all(0..3, 0);
    assert_eq!(h.next_busy(0), Ok(vec![0, 1]));
    let mut h = Harness::new(batching(&[2, 4], 100_000), 8);
    h.push_all(0..3, 0);
    assert_eq!(h.next_busy(0), Err(Next::WaitForRequests));
    assert_eq!(
        h.next_busy(500),
        Err(Next::WaitForRequests),
        "past the delay too"
    );
    h.push(3, 500, meta()).unwrap();
    assert_eq!(
        h.next_busy(500),
        Ok(vec![0, 1, 2, 3]),
        "the largest preferred size"
    );
}

#[test]
fn a_busy_instance_gets_a_batch_the_next_request_cannot_join() {
    let mut h = Harness::new(ModelDynamicBatching::default(), 4);
    h.push(0, 0, meta()).unwrap();
    let other_shape = Meta {
        key: BatchKey::of(&[1]),
        ..meta()
    };
    h.push(1, 0, other_shape).unwrap();
    assert_eq!(h.next_busy(0), Ok(vec![0]));
}

#[test]
fn a_limited_timed_or_prioritized_queue_gives_a_busy_instance_nothing() {
    let limited = ModelDynamicBatching {
        default_queue_policy: Some(policy(0, false, false, 4)),
        ..Default::default()
    };
    let timed = ModelDynamicBatching {
        default_queue_policy: Some(policy(1_000_000, false, false, 0)),
        ..Default::default()
    };
    let prioritized = ModelDynamicBatching {
        priority_levels: 2,
        default_priority_level: 1,
        ..Default::default()
    };
    for config in [limited, timed, prioritized] {
        let mut h = Harness::new(config, 2);
        h.push_all(0..4, 0);
        assert_eq!(h.next_busy(0), Err(Next::WaitForRequests));
        assert_eq!(h.next(0), Ok(vec![0, 1]));
    }
}

#[test]
fn a_busy_instance_drains_a_stopped_batcher() {
    let mut h = Harness::new(ModelDynamicBatching::default(), 4);
    h.push_all(0..2, 0);
    h.state.stop();
    assert_eq!(h.next_busy(0), Ok(vec![0, 1]));
    assert_eq!(h.next_busy(0), Err(Next::Stopped));
}
