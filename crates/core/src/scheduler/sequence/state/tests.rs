//! The sequence batcher's decisions with an injected clock: slot
//! assignment, the backlog, END and idle release, control values.

use std::time::{Duration, Instant};

use crate::scheduler::sequence::state::{Control, CorrId, Dispatch, Flags, Next, Refusal, State};

const IDLE: Duration = Duration::from_millis(100);

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

fn id(n: u64) -> CorrId {
    CorrId::Uint(n)
}

/// A state with `instances` instances of `slots` slots each.
fn state(instances: usize, slots: usize) -> State<&'static str> {
    let mut state = State::new(slots, IDLE);
    for _ in 0..instances {
        state.add_instance();
    }
    state
}

fn items(next: Next<&'static str>) -> Vec<&'static str> {
    match next {
        Next::Batch(batch) => batch.into_iter().map(|d| d.item).collect(),
        other => panic!("a batch expected, got {other:?}"),
    }
}

#[test]
fn every_request_of_a_sequence_goes_to_its_slot() {
    let t0 = Instant::now();
    let mut s = state(2, 1);
    s.enqueue("a1", id(1), START, t0).unwrap();
    s.enqueue("b1", id(2), START, t0).unwrap();
    s.enqueue("a2", id(1), MIDDLE, t0).unwrap();
    s.enqueue("b2", id(2), MIDDLE, t0).unwrap();
    // The sequences went to different instances; each runs in order.
    assert_eq!(items(s.next(0, t0)), ["a1"]);
    assert_eq!(items(s.next(1, t0)), ["b1"]);
    assert_eq!(items(s.next(0, t0)), ["a2"]);
    assert_eq!(items(s.next(1, t0)), ["b2"]);
    assert_eq!(s.next(0, t0), Next::WaitUntil(t0 + IDLE));
}

#[test]
fn an_instance_batches_one_request_per_slot() {
    let t0 = Instant::now();
    let mut s = state(1, 2);
    for (item, corrid) in [("a1", 1), ("b1", 2)] {
        s.enqueue(item, id(corrid), START, t0).unwrap();
    }
    s.enqueue("a2", id(1), MIDDLE, t0).unwrap();
    assert_eq!(items(s.next(0, t0)), ["a1", "b1"]);
    assert_eq!(items(s.next(0, t0)), ["a2"]);
}

#[test]
fn a_third_sequence_waits_for_a_slot_freed_by_end() {
    let t0 = Instant::now();
    let mut s = state(1, 2);
    s.enqueue("a1", id(1), START, t0).unwrap();
    s.enqueue("b1", id(2), START, t0).unwrap();
    s.enqueue("c1", id(3), START, t0).unwrap();
    s.enqueue("c2", id(3), MIDDLE, t0).unwrap();
    assert_eq!(items(s.next(0, t0)), ["a1", "b1"]);
    assert_eq!(s.len(), 2, "c waits in the backlog");
    s.enqueue("b2", id(2), END, t0).unwrap();
    assert_eq!(items(s.next(0, t0)), ["b2"]);
    assert_eq!(s.released(), 1);
    // b's slot went to c, whose requests run in order.
    assert_eq!(items(s.next(0, t0)), ["c1"]);
    assert_eq!(items(s.next(0, t0)), ["c2"]);
}

#[test]
fn requests_after_end_or_without_start_are_refused() {
    let t0 = Instant::now();
    let mut s = state(1, 1);
    assert_eq!(
        s.enqueue("x", id(9), MIDDLE, t0).unwrap_err().1,
        Refusal::NotStarted
    );
    s.enqueue("a1", id(1), START, t0).unwrap();
    s.enqueue("a2", id(1), END, t0).unwrap();
    assert_eq!(
        s.enqueue("a3", id(1), MIDDLE, t0).unwrap_err().1,
        Refusal::NotStarted
    );
    // A new sequence may reuse the id once the old one ended.
    s.enqueue("a'1", id(1), START, t0).unwrap();
    assert_eq!(items(s.next(0, t0)), ["a1"]);
    assert_eq!(items(s.next(0, t0)), ["a2"]);
    assert_eq!(items(s.next(0, t0)), ["a'1"]);
}

#[test]
fn string_and_integer_ids_are_different_sequences() {
    let t0 = Instant::now();
    let mut s = state(1, 2);
    s.enqueue("n", id(1), START, t0).unwrap();
    s.enqueue("s", CorrId::Str("1".into()), START, t0).unwrap();
    assert_eq!(items(s.next(0, t0)), ["n", "s"]);
}

#[test]
fn an_idle_sequence_loses_its_slot_once() {
    let t0 = Instant::now();
    let mut s = state(1, 1);
    s.enqueue("a1", id(1), START, t0).unwrap();
    s.enqueue("b1", id(2), START, t0).unwrap();
    assert_eq!(items(s.next(0, t0)), ["a1"]);
    // b waits while a holds the only slot and is not yet idle.
    assert_eq!(s.next(0, t0 + IDLE / 2), Next::WaitUntil(t0 + IDLE));
    let t1 = t0 + IDLE;
    assert_eq!(items(s.next(0, t1)), ["b1"]);
    assert_eq!(s.released(), 1);
    // a's late request is refused; its slot is not freed again.
    assert_eq!(
        s.enqueue("a2", id(1), END, t1).unwrap_err().1,
        Refusal::NotStarted
    );
    s.enqueue("b2", id(2), END, t1).unwrap();
    assert_eq!(items(s.next(0, t1)), ["b2"]);
    assert_eq!(s.released(), 2);
    assert_eq!(s.next(0, t1 + IDLE * 10), Next::WaitForRequests);
    assert_eq!(s.released(), 2);
}

#[test]
fn a_sequence_with_queued_requests_is_never_idle() {
    let t0 = Instant::now();
    let mut s = state(1, 1);
    s.enqueue("a1", id(1), START, t0).unwrap();
    s.enqueue("a2", id(1), MIDDLE, t0).unwrap();
    assert_eq!(items(s.next(0, t0 + IDLE * 5)), ["a1"]);
    assert_eq!(items(s.next(0, t0 + IDLE * 5)), ["a2"]);
    // Taking a request counts as activity.
    s.enqueue("a3", id(1), END, t0 + IDLE * 5 + IDLE / 2)
        .unwrap();
}

#[test]
fn control_values_carry_the_flags_and_the_id() {
    let t0 = Instant::now();
    let mut s = state(1, 1);
    let both = Flags {
        start: true,
        end: true,
        timeout: None,
    };
    s.enqueue("only", CorrId::Str("seq".into()), both, t0)
        .unwrap();
    assert_eq!(
        s.next(0, t0),
        Next::Batch(vec![Dispatch {
            item: "only",
            control: Control {
                start: true,
                end: true,
                ready: true,
                corrid: CorrId::Str("seq".into()),
            },
            slot: 0,
        }])
    );
    assert_eq!(s.released(), 1);
    s.enqueue("a1", id(7), START, t0).unwrap();
    s.enqueue("a2", id(7), MIDDLE, t0).unwrap();
    let controls = |next| match next {
        Next::Batch(batch) => batch
            .into_iter()
            .map(|d: Dispatch<_>| (d.control.start, d.control.end))
            .collect::<Vec<_>>(),
        other => panic!("a batch expected, got {other:?}"),
    };
    assert_eq!(controls(s.next(0, t0)), [(true, false)]);
    assert_eq!(controls(s.next(0, t0)), [(false, false)]);
}

#[test]
fn stopping_refuses_new_requests_and_drains_the_backlog() {
    let t0 = Instant::now();
    let mut s = state(1, 1);
    s.enqueue("a1", id(1), START, t0).unwrap();
    s.enqueue("b1", id(2), START, t0).unwrap();
    assert_eq!(items(s.next(0, t0)), ["a1"]);
    s.stop();
    assert_eq!(
        s.enqueue("a2", id(1), MIDDLE, t0).unwrap_err().1,
        Refusal::Stopped
    );
    // a's slot frees at once for the backlog, then the instance stops.
    assert_eq!(items(s.next(0, t0)), ["b1"]);
    assert_eq!(s.next(0, t0), Next::Stopped);
    assert_eq!(s.released(), 2);
}

#[test]
fn ending_a_sequence_frees_its_slot_for_the_backlog() {
    // An iterative sequence's request was answered for good: its sequence ends
    // as an END request would end it, and the waiting sequence takes the slot.
    let t0 = Instant::now();
    let mut s = state(1, 1);
    s.enqueue("a1", id(1), START, t0).unwrap();
    s.enqueue("b1", id(2), START, t0).unwrap();
    assert_eq!(items(s.next(0, t0)), ["a1"]);
    // Rescheduled: it queues again in its sequence, without START.
    s.enqueue("a1 again", id(1), MIDDLE, t0).unwrap();
    assert_eq!(items(s.next(0, t0)), ["a1 again"]);
    s.end(&id(1));
    assert_eq!(s.released(), 1);
    assert_eq!(items(s.next(0, t0)), ["b1"]);
    let refused = s.enqueue("a2", id(1), MIDDLE, t0);
    assert_eq!(refused.unwrap_err().1, Refusal::NotStarted);
    s.end(&id(7)); // unknown: nothing happens
    assert_eq!(s.released(), 1);
}

#[test]
fn a_retired_instance_takes_no_new_sequence_and_keeps_its_own() {
    let now = Instant::now();
    let mut state: State<u32> = State::new(1, Duration::from_secs(60));
    let (first, second) = (state.add_instance(), state.add_instance());
    let start = Flags {
        start: true,
        end: false,
        timeout: None,
    };
    state.enqueue(1, CorrId::Uint(1), start, now).unwrap();
    assert!(state.holds_sequences(first));
    state.retire_instance(second);
    state.enqueue(2, CorrId::Uint(2), start, now).unwrap();
    assert!(
        !state.holds_sequences(second),
        "the new sequence waits for a slot"
    );
    let end = Flags {
        start: false,
        end: true,
        timeout: None,
    };
    state.enqueue(3, CorrId::Uint(1), end, now).unwrap();
    assert!(matches!(state.next(first, now), Next::Batch(_)));
}

/// `flags` with a timeout of `ms` milliseconds.
fn timed(flags: Flags, ms: u64) -> Flags {
    Flags {
        timeout: Some(Duration::from_millis(ms)),
        ..flags
    }
}

#[test]
fn a_backlogged_sequence_expires_with_all_its_requests() {
    let t0 = Instant::now();
    let ms = |n| t0 + Duration::from_millis(n);
    let mut s = state(1, 1);
    s.enqueue("a1", id(1), timed(START, 3000), t0).unwrap();
    s.enqueue("a2", id(1), timed(MIDDLE, 3000), t0).unwrap();
    assert_eq!(s.next_expiry(), None, "a holds the slot: it never expires");
    s.enqueue("b1", id(2), timed(START, 3000), ms(1000))
        .unwrap();
    s.enqueue("b2", id(2), timed(MIDDLE, 3000), ms(2000))
        .unwrap();
    // The earliest deadline of b's requests counts.
    assert_eq!(s.next_expiry(), Some(ms(4000)));
    assert_eq!(items(s.next(0, ms(1000))), ["a1"]);
    assert!(s.expire(ms(3999)).is_empty());
    assert_eq!(s.expire(ms(4000)), ["b1", "b2"]);
    assert_eq!((s.len(), s.next_expiry()), (1, None));
    // b is forgotten; a runs on, past every deadline.
    assert_eq!(
        s.enqueue("b3", id(2), timed(END, 3000), ms(5000))
            .unwrap_err()
            .1,
        Refusal::NotStarted
    );
    assert_eq!(items(s.next(0, ms(9000))), ["a2"]);
    s.enqueue("a3", id(1), END, ms(9000)).unwrap();
    assert_eq!(items(s.next(0, ms(9000))), ["a3"]);
    assert_eq!(s.released(), 1);
}

#[test]
fn only_backlogged_sequences_with_a_timeout_expire() {
    let t0 = Instant::now();
    let ms = |n| t0 + Duration::from_millis(n);
    let mut s = state(1, 1);
    s.enqueue("a1", id(1), START, t0).unwrap();
    s.enqueue("b1", id(2), START, t0).unwrap(); // no timeout
    s.enqueue("c1", id(3), timed(START, 100), t0).unwrap();
    s.enqueue("c2", id(3), timed(END, 5000), ms(50)).unwrap();
    s.enqueue("d1", id(4), timed(START, 200), t0).unwrap();
    assert_eq!(s.next_expiry(), Some(ms(100)));
    // c ended, yet its requests expire with it, and d's later.
    assert_eq!(s.expire(ms(150)), ["c1", "c2"]);
    assert_eq!(s.next_expiry(), Some(ms(200)));
    // The id may start a new sequence.
    s.enqueue("c'1", id(3), START, ms(150)).unwrap();
    assert_eq!(s.expire(ms(250)), ["d1"]);
    assert!(s.expire(ms(60_000)).is_empty());
    // The slot goes to the oldest sequences left: b, then c'.
    s.enqueue("a2", id(1), END, ms(250)).unwrap();
    assert_eq!(items(s.next(0, ms(250))), ["a1"]);
    assert_eq!(items(s.next(0, ms(250))), ["a2"]);
    assert_eq!(items(s.next(0, ms(250))), ["b1"]);
}

#[test]
fn a_sequence_that_got_a_slot_no_longer_expires() {
    let t0 = Instant::now();
    let ms = |n| t0 + Duration::from_millis(n);
    let mut s = state(1, 1);
    s.enqueue("a1", id(1), START, t0).unwrap();
    s.enqueue("a2", id(1), END, t0).unwrap();
    s.enqueue("b1", id(2), timed(START, 100), t0).unwrap();
    assert_eq!(items(s.next(0, ms(10))), ["a1"]);
    assert_eq!(items(s.next(0, ms(20))), ["a2"]);
    // a's END freed the slot for b before its deadline.
    assert_eq!(s.next_expiry(), None);
    assert!(s.expire(ms(500)).is_empty());
    s.enqueue("b2", id(2), timed(END, 100), ms(500)).unwrap();
    assert_eq!(items(s.next(0, ms(1000))), ["b1"]);
    assert_eq!(items(s.next(0, ms(1000))), ["b2"]);
}

#[test]
fn sequences_in_progress_count_slots_and_backlog_until_they_end() {
    let t0 = Instant::now();
    let mut s = state(1, 1);
    s.enqueue("a1", id(1), START, t0).unwrap();
    s.enqueue("b1", id(2), START, t0).unwrap();
    // One holds the slot, one waits in the backlog: both are in progress.
    assert_eq!(s.sequences(), 2);
    assert_eq!(items(s.next(0, t0)), ["a1"]);
    s.enqueue("a2", id(1), END, t0).unwrap();
    assert_eq!(s.sequences(), 1);
    assert_eq!(items(s.next(0, t0)), ["a2"]);
    s.enqueue("b2", id(2), END, t0).unwrap();
    assert_eq!(s.sequences(), 0);
}
