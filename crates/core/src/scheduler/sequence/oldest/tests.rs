//! The oldest strategy's decisions with an injected clock: `at(ms)` is a
//! time `ms` milliseconds after the test's start.

use std::time::{Duration, Instant};

use oxiserve_config::BatchPlan;

use crate::scheduler::batch_rules::BatchRules;
use crate::scheduler::sequence::{
    oldest::OldestState,
    state::{Control, CorrId, Flags, Next, Refusal},
};

const IDLE: Duration = Duration::from_millis(1000);

const START: Flags = Flags {
    start: true,
    end: false,
    timeout: None,
};
const MIDDLE: Flags = Flags {
    start: false,
    end: false,
    timeout: None,
};
const END: Flags = Flags {
    start: false,
    end: true,
    timeout: None,
};

struct Clock(Instant);

impl Clock {
    fn new() -> Self {
        Self(Instant::now())
    }

    fn at(&self, ms: u64) -> Instant {
        self.0 + Duration::from_millis(ms)
    }
}

fn id(n: u64) -> CorrId {
    CorrId::Uint(n)
}

/// `instances` instances of `candidates` sequence slots each, batches of
/// at most `max_batch_size` with the `preferred` sizes and `delay_ms`.
fn state(
    instances: usize,
    candidates: usize,
    max_batch_size: i32,
    preferred: &[i32],
    delay_ms: u64,
) -> OldestState<&'static str, u8> {
    let rules = BatchRules::new(
        preferred,
        delay_ms * 1000,
        BatchPlan::with_max_batch_size(max_batch_size),
    );
    let mut state = OldestState::new(candidates, IDLE, rules);
    for _ in 0..instances {
        state.add_instance();
    }
    state
}

/// Queues `item` of sequence `corrid` with batch key 0.
fn push(
    s: &mut OldestState<&'static str, u8>,
    item: &'static str,
    corrid: u64,
    flags: Flags,
    at: Instant,
) {
    s.enqueue(item, 0, id(corrid), flags, at).unwrap();
}

/// The items of a batch, and the slots they came from.
fn batch(next: Next<&'static str>) -> (Vec<&'static str>, Vec<usize>) {
    match next {
        Next::Batch(batch) => batch.into_iter().map(|d| (d.item, d.slot)).unzip(),
        other => panic!("a batch expected, got {other:?}"),
    }
}

fn items(next: Next<&'static str>) -> Vec<&'static str> {
    batch(next).0
}

#[test]
fn sequences_beyond_the_candidates_wait_until_one_ends() {
    let c = Clock::new();
    let mut s = state(1, 2, 4, &[4], 0);
    push(&mut s, "a1", 1, START, c.at(0));
    push(&mut s, "b1", 2, START, c.at(0));
    push(&mut s, "c1", 3, START, c.at(0));
    assert_eq!(items(s.next(0, c.at(0))), ["a1", "b1"]);
    assert_eq!(s.len(), 1, "c waits for a candidate slot");
    s.complete(0, 0, c.at(1));
    s.complete(0, 1, c.at(1));
    assert_eq!(s.next(0, c.at(1)), Next::WaitUntil(c.at(1) + IDLE));
    push(&mut s, "b2", 2, END, c.at(2));
    assert_eq!(batch(s.next(0, c.at(2))), (vec!["b2"], vec![1]));
    assert_eq!(s.released(), 1);
    // b's slot went to c.
    assert_eq!(batch(s.next(0, c.at(2))), (vec!["c1"], vec![1]));
}

#[test]
fn a_batch_takes_one_request_per_sequence() {
    let c = Clock::new();
    let mut s = state(1, 4, 4, &[4], 0);
    push(&mut s, "a1", 1, START, c.at(0));
    push(&mut s, "a2", 1, MIDDLE, c.at(0));
    push(&mut s, "b1", 2, START, c.at(0));
    assert_eq!(items(s.next(0, c.at(0))), ["a1", "b1"]);
    // a2 waits until a1 completed, however free the instance is.
    assert_eq!(s.next(0, c.at(5)), Next::WaitForRequests);
    s.complete(0, 1, c.at(6));
    // b's completion frees nothing of a.
    assert_eq!(s.next(0, c.at(6)), Next::WaitUntil(c.at(6) + IDLE));
    s.complete(0, 0, c.at(7));
    assert_eq!(items(s.next(0, c.at(7))), ["a2"]);
}

#[test]
fn the_oldest_ready_requests_go_first() {
    let c = Clock::new();
    let mut s = state(1, 4, 2, &[2], 0);
    push(&mut s, "c1", 3, START, c.at(0));
    push(&mut s, "a1", 1, START, c.at(1));
    push(&mut s, "b1", 2, START, c.at(2));
    assert_eq!(items(s.next(0, c.at(2))), ["c1", "a1"]);
    assert_eq!(items(s.next(0, c.at(2))), ["b1"]);
    // Ready means queued and the sequence's previous request completed:
    // a2 and c2 arrived together, c1 completed later, so a2 is older.
    push(&mut s, "c2", 3, MIDDLE, c.at(3));
    push(&mut s, "a2", 1, MIDDLE, c.at(3));
    s.complete(0, 1, c.at(4));
    s.complete(0, 0, c.at(5));
    assert_eq!(items(s.next(0, c.at(5))), ["a2", "c2"]);
}

#[test]
fn a_batch_stops_at_max_batch_size() {
    let c = Clock::new();
    let mut s = state(1, 5, 3, &[], 0);
    for (item, corrid) in [("a1", 1), ("b1", 2), ("c1", 3), ("d1", 4), ("e1", 5)] {
        push(&mut s, item, corrid, START, c.at(0));
    }
    assert_eq!(items(s.next(0, c.at(0))), ["a1", "b1", "c1"]);
    assert_eq!(items(s.next(0, c.at(0))), ["d1", "e1"]);
}

#[test]
fn a_preferred_batch_size_goes_at_once() {
    let c = Clock::new();
    let mut s = state(1, 4, 4, &[2, 4], 100);
    push(&mut s, "a1", 1, START, c.at(0));
    push(&mut s, "b1", 2, START, c.at(0));
    push(&mut s, "c1", 3, START, c.at(0));
    assert_eq!(items(s.next(0, c.at(0))), ["a1", "b1"]);
    // c1 alone is no preferred size: it waits the queue delay.
    assert_eq!(s.next(0, c.at(10)), Next::WaitUntil(c.at(100)));
    assert_eq!(items(s.next(0, c.at(100))), ["c1"]);
}

#[test]
fn a_small_batch_waits_for_more_sequences_up_to_the_queue_delay() {
    let c = Clock::new();
    let mut s = state(1, 4, 4, &[3], 100);
    push(&mut s, "a1", 1, START, c.at(0));
    assert_eq!(s.next(0, c.at(0)), Next::WaitUntil(c.at(100)));
    push(&mut s, "b1", 2, START, c.at(40));
    assert_eq!(s.next(0, c.at(40)), Next::WaitUntil(c.at(100)));
    assert_eq!(items(s.next(0, c.at(100))), ["a1", "b1"]);
    // The delay counts from when a request is ready: a2 arrived at 110,
    // its predecessor completed at 150.
    push(&mut s, "a2", 1, MIDDLE, c.at(110));
    s.complete(0, 0, c.at(150));
    assert_eq!(s.next(0, c.at(160)), Next::WaitUntil(c.at(250)));
    push(&mut s, "c1", 3, START, c.at(170));
    push(&mut s, "b2", 2, MIDDLE, c.at(170));
    s.complete(0, 1, c.at(170));
    // Three ready: the preferred size goes before the delay passed.
    assert_eq!(items(s.next(0, c.at(170))), ["a2", "b2", "c1"]);
}

#[test]
fn requests_of_other_shapes_go_in_another_batch() {
    let c = Clock::new();
    let mut s = state(1, 4, 4, &[4], 0);
    s.enqueue("a1", 1, id(1), START, c.at(0)).unwrap();
    s.enqueue("b1", 2, id(2), START, c.at(1)).unwrap();
    s.enqueue("c1", 1, id(3), START, c.at(2)).unwrap();
    assert_eq!(items(s.next(0, c.at(2))), ["a1"]);
    assert_eq!(items(s.next(0, c.at(2))), ["b1"]);
    assert_eq!(items(s.next(0, c.at(2))), ["c1"]);
}

#[test]
fn control_values_follow_each_request_of_the_batch() {
    let c = Clock::new();
    let mut s = state(1, 3, 4, &[4], 0);
    let both = Flags {
        start: true,
        end: true,
        timeout: None,
    };
    push(&mut s, "a1", 1, START, c.at(0));
    s.enqueue("s1", 0, CorrId::Str("s".into()), both, c.at(0))
        .unwrap();
    assert_eq!(items(s.next(0, c.at(0))), ["a1", "s1"]);
    push(&mut s, "a2", 1, MIDDLE, c.at(1));
    push(&mut s, "b1", 2, START, c.at(1));
    s.complete(0, 0, c.at(1));
    push(&mut s, "a3", 1, END, c.at(2));
    let Next::Batch(taken) = s.next(0, c.at(2)) else {
        panic!("a batch expected");
    };
    let control = |start, end, corrid| Control {
        start,
        end,
        ready: true,
        corrid: id(corrid),
    };
    let controls: Vec<_> = taken.into_iter().map(|d| (d.item, d.control)).collect();
    assert_eq!(
        controls,
        [
            ("a2", control(false, false, 1)),
            ("b1", control(true, false, 2))
        ]
    );
    s.complete(0, 0, c.at(3));
    let Next::Batch(taken) = s.next(0, c.at(3)) else {
        panic!("a batch expected");
    };
    assert_eq!(taken[0].control, control(false, true, 1));
    // START and END in one request, then END alone, each freed its slot.
    assert_eq!(s.released(), 2);
}

#[test]
fn an_idle_sequence_loses_its_slot_once_and_its_late_requests_are_refused() {
    let c = Clock::new();
    let mut s = state(1, 1, 4, &[4], 0);
    push(&mut s, "a1", 1, START, c.at(0));
    push(&mut s, "b1", 2, START, c.at(0));
    assert_eq!(items(s.next(0, c.at(0))), ["a1"]);
    // A sequence with a request in flight is never idle.
    assert_eq!(s.next(0, c.at(5000)), Next::WaitForRequests);
    assert_eq!(s.released(), 0);
    s.complete(0, 0, c.at(5000));
    assert_eq!(s.next(0, c.at(5500)), Next::WaitUntil(c.at(6000)));
    // Idle from its completion on: b gets the slot.
    assert_eq!(items(s.next(0, c.at(6000))), ["b1"]);
    assert_eq!(s.released(), 1);
    let late = s.enqueue("a2", 0, id(1), END, c.at(6000));
    assert_eq!(late.unwrap_err().1, Refusal::NotStarted);
    s.complete(0, 0, c.at(6001));
    push(&mut s, "b2", 2, END, c.at(6001));
    assert_eq!(items(s.next(0, c.at(6001))), ["b2"]);
    assert_eq!(s.released(), 2);
    // Nothing is freed twice, however long the wait.
    assert_eq!(s.next(0, c.at(60_000)), Next::WaitForRequests);
    s.complete(0, 0, c.at(60_000));
    assert_eq!(s.released(), 2);
}

#[test]
fn each_instance_batches_the_sequences_in_its_own_slots() {
    let c = Clock::new();
    let mut s = state(2, 2, 4, &[4], 0);
    for (item, corrid) in [("a1", 1), ("b1", 2), ("c1", 3), ("d1", 4)] {
        push(&mut s, item, corrid, START, c.at(0));
    }
    // New sequences go to the instance with the most free slots.
    assert_eq!(items(s.next(1, c.at(0))), ["b1", "d1"]);
    assert_eq!(items(s.next(0, c.at(0))), ["a1", "c1"]);
    push(&mut s, "d2", 4, END, c.at(1));
    s.complete(1, 1, c.at(1));
    assert_eq!(s.next(0, c.at(1)), Next::WaitForRequests);
    assert_eq!(items(s.next(1, c.at(1))), ["d2"]);
}

#[test]
fn stopping_sends_what_is_queued_without_waiting() {
    let c = Clock::new();
    let mut s = state(1, 1, 4, &[4], 100);
    push(&mut s, "a1", 1, START, c.at(0));
    push(&mut s, "b1", 2, START, c.at(0));
    assert_eq!(s.next(0, c.at(0)), Next::WaitUntil(c.at(100)));
    s.stop();
    let refused = s.enqueue("a2", 0, id(1), MIDDLE, c.at(0));
    assert_eq!(refused.unwrap_err().1, Refusal::Stopped);
    assert_eq!(items(s.next(0, c.at(0))), ["a1"]);
    // a's slot frees once a1 completed, for b from the backlog.
    assert_eq!(s.next(0, c.at(0)), Next::WaitForRequests);
    s.complete(0, 0, c.at(1));
    assert_eq!(items(s.next(0, c.at(1))), ["b1"]);
    s.complete(0, 0, c.at(2));
    assert_eq!(s.next(0, c.at(2)), Next::Stopped);
    assert_eq!(s.released(), 2);
}

#[test]
fn a_backlogged_sequence_expires_with_its_requests() {
    let c = Clock::new();
    let mut s = state(1, 1, 4, &[], 0);
    push(&mut s, "a1", 1, START, c.at(0));
    let timed = |flags: Flags| Flags {
        timeout: Some(Duration::from_millis(100)),
        ..flags
    };
    push(&mut s, "b1", 2, timed(START), c.at(10));
    push(&mut s, "b2", 2, timed(END), c.at(20));
    assert_eq!(s.next_expiry(), Some(c.at(110)));
    assert!(s.expire(c.at(109)).is_empty());
    assert_eq!(s.expire(c.at(110)), ["b1", "b2"]);
    assert_eq!((s.len(), s.next_expiry()), (1, None));
    let refused = s.enqueue("b3", 0, id(2), MIDDLE, c.at(120));
    assert_eq!(refused.unwrap_err().1, Refusal::NotStarted);
}
