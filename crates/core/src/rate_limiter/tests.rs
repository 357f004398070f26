use std::{sync::Arc, time::Duration};

use oxiserve_proto::inference::{ModelRateLimiter, model_rate_limiter::Resource};

use super::{RateLimiter, resources::Scope, state::State};
use crate::config::{RateLimiterSettings, ResourceCount};

/// A group's `rate_limiter`: `(name, global, count)` resources and a priority.
fn needs(resources: &[(&str, bool, u32)], priority: u32) -> ModelRateLimiter {
    ModelRateLimiter {
        resources: resources
            .iter()
            .map(|&(name, global, count)| Resource {
                name: name.into(),
                global,
                count,
            })
            .collect(),
        priority,
    }
}

fn count(name: &str, count: u64, device: Option<i32>) -> ResourceCount {
    ResourceCount {
        name: name.into(),
        count,
        device,
    }
}

#[test]
fn without_counts_a_resource_has_the_largest_need() {
    let mut state = State::new(&[]);
    let small = state.register(0, &needs(&[("R", false, 1)], 1)).unwrap();
    let large = state.register(0, &needs(&[("R", false, 3)], 1)).unwrap();
    assert_eq!(state.resources().limit(Scope::Device(0), "R"), Some(3));
    assert_eq!(state.stage(small), [small]);
    assert_eq!(state.resources().allocated(Scope::Device(0), "R"), 1);
    assert!(state.stage(large).is_empty(), "1 + 3 is more than 3");
    assert_eq!(state.release(small), [large]);
    assert_eq!(state.resources().allocated(Scope::Device(0), "R"), 3);
    state.release(large);
    assert_eq!(state.resources().allocated(Scope::Device(0), "R"), 0);
}

#[test]
fn the_limit_follows_the_instances_registered() {
    let mut state = State::new(&[]);
    let small = state.register(0, &needs(&[("R", false, 1)], 1)).unwrap();
    let large = state.register(0, &needs(&[("R", false, 2)], 1)).unwrap();
    state.unregister(large);
    assert_eq!(state.resources().limit(Scope::Device(0), "R"), Some(1));
    state.unregister(small);
    assert_eq!(state.resources().limit(Scope::Device(0), "R"), None);
}

#[test]
fn per_device_resources_count_per_device_and_global_ones_once() {
    let mut state = State::new(&[]);
    let on_0 = state.register(0, &needs(&[("R", false, 1)], 1)).unwrap();
    let on_1 = state.register(1, &needs(&[("R", false, 1)], 1)).unwrap();
    assert_eq!(state.stage(on_0), [on_0]);
    assert_eq!(state.stage(on_1), [on_1], "each device has its own R");

    let mut state = State::new(&[]);
    let on_0 = state.register(0, &needs(&[("G", true, 1)], 1)).unwrap();
    let on_1 = state.register(1, &needs(&[("G", true, 1)], 1)).unwrap();
    assert_eq!(state.stage(on_0), [on_0]);
    assert!(state.stage(on_1).is_empty(), "one G for all devices");
    assert_eq!(state.release(on_0), [on_1]);
}

#[test]
fn an_instance_with_its_next_batch_is_staged_when_it_releases() {
    let mut state = State::new(&[]);
    let busy = state.register(0, &needs(&[("R", false, 1)], 1)).unwrap();
    let other = state.register(0, &needs(&[("R", false, 1)], 1)).unwrap();
    assert_eq!(state.stage(busy), [busy]);
    assert!(state.stage(busy).is_empty(), "it executes a batch");
    assert!(state.stage(other).is_empty());
    assert_eq!(
        state.release(busy),
        [other],
        "staged again behind the one that executed less"
    );
    assert_eq!(state.release(other), [busy]);
}

#[test]
fn an_instance_needing_nothing_goes_at_once() {
    let mut state = State::new(&[]);
    let free = state.register(0, &ModelRateLimiter::default()).unwrap();
    assert_eq!(state.stage(free), [free]);
    assert_eq!(state.release(free), Vec::<u64>::new());
    assert_eq!(state.stage(free), [free]);
}

#[test]
fn a_count_below_the_need_refuses_the_instance_in_tritons_words() {
    let mut state = State::new(&[count("R", 1, None)]);
    let error = state
        .register(0, &needs(&[("R", false, 4)], 1))
        .unwrap_err();
    assert_eq!(
        error,
        "Resource count for \"R\" is limited to 1 which will prevent scheduling of one or more \
         model instances, the minimum required count is 4"
    );
    // The refused instance left nothing behind.
    let fits = state.register(0, &needs(&[("R", false, 1)], 1)).unwrap();
    assert_eq!(state.resources().limit(Scope::Device(0), "R"), Some(1));
    assert_eq!(state.stage(fits), [fits]);
}

#[test]
fn with_counts_given_a_resource_not_named_has_none() {
    let mut state = State::new(&[count("R", 4, None)]);
    let error = state
        .register(0, &needs(&[("S", false, 1)], 1))
        .unwrap_err();
    assert!(error.contains("\"S\" is limited to 0"), "{error}");
}

#[test]
fn a_count_for_one_device_covers_only_that_device() {
    let mut state = State::new(&[count("R", 10, Some(10)), count("R", 2, Some(1))]);
    let error = state
        .register(0, &needs(&[("R", false, 4)], 1))
        .unwrap_err();
    assert!(error.contains("limited to 0"), "{error}");
    state.register(1, &needs(&[("R", false, 2)], 1)).unwrap();
    assert_eq!(state.resources().limit(Scope::Device(1), "R"), Some(2));
}

#[test]
fn an_explicit_count_is_the_limit_even_above_the_needs() {
    let mut state = State::new(&[count("R", 2, None)]);
    let a = state.register(0, &needs(&[("R", false, 1)], 1)).unwrap();
    let b = state.register(0, &needs(&[("R", false, 1)], 1)).unwrap();
    assert_eq!(state.stage(a), [a]);
    assert_eq!(state.stage(b), [b], "two units for two instances");
}

#[test]
fn a_global_resource_takes_the_largest_count_given_on_any_device() {
    let state_with = |counts: &[ResourceCount]| {
        let mut state = State::new(counts);
        state
            .register(0, &needs(&[("G", true, 3)], 1))
            .map(|_| state)
    };
    let state = state_with(&[count("G", 1, None), count("G", 5, Some(7))]).unwrap();
    assert_eq!(state.resources().limit(Scope::Global, "G"), Some(5));
    assert!(state_with(&[count("G", 2, Some(0))]).is_err());
}

#[test]
fn a_resource_given_twice_counts_the_smaller_number() {
    let mut state = State::new(&[count("R", 5, None), count("R", 2, None)]);
    let error = state
        .register(0, &needs(&[("R", false, 3)], 1))
        .unwrap_err();
    assert!(error.contains("limited to 2"), "{error}");
}

#[test]
fn a_resource_both_global_and_per_device_is_refused() {
    let mut state = State::new(&[]);
    state.register(0, &needs(&[("R", true, 1)], 1)).unwrap();
    let error = state
        .register(0, &needs(&[("R", false, 1)], 1))
        .unwrap_err();
    assert_eq!(
        error,
        "Resource \"R\" is present as both global and device-specific resource in the model \
         configuration."
    );
}

/// Keeps `instances` busy on one shared unit for `turns` executions, each
/// holding its next batch before its execution ends; returns how many each
/// executed.
fn contend(state: &mut State, instances: &[u64], turns: usize) -> Vec<usize> {
    let mut executed = vec![0; instances.len()];
    let mut running: Vec<u64> = instances.iter().flat_map(|&id| state.stage(id)).collect();
    for _ in 0..turns {
        assert_eq!(running.len(), 1, "one unit: one at a time");
        let done = running.pop().unwrap();
        executed[instances.iter().position(|&id| id == done).unwrap()] += 1;
        assert!(state.stage(done).is_empty(), "staged when it releases");
        running.extend(state.release(done));
    }
    executed
}

#[test]
fn a_priority_2_instance_gets_half_the_turns_of_a_priority_1_one() {
    let mut state = State::new(&[]);
    let first = state.register(0, &needs(&[("R", false, 1)], 1)).unwrap();
    let second = state.register(0, &needs(&[("R", false, 1)], 2)).unwrap();
    let executed = contend(&mut state, &[first, second], 300);
    assert_eq!(executed, [200, 100]);
}

#[test]
fn priority_0_counts_as_1() {
    let mut state = State::new(&[]);
    let zero = state.register(0, &needs(&[("R", false, 1)], 0)).unwrap();
    let one = state.register(0, &needs(&[("R", false, 1)], 1)).unwrap();
    assert_eq!(contend(&mut state, &[zero, one], 100), [50, 50]);
}

#[test]
fn an_instance_needing_more_is_not_passed_by_those_needing_less() {
    let mut state = State::new(&[]);
    let small = state.register(0, &needs(&[("R", false, 1)], 1)).unwrap();
    let large = state.register(0, &needs(&[("R", false, 2)], 1)).unwrap();
    let other = state.register(0, &needs(&[("R", false, 1)], 1)).unwrap();
    assert_eq!(state.stage(small), [small]);
    assert!(state.stage(large).is_empty());
    assert!(
        state.stage(other).is_empty(),
        "a unit is free, but the instance staged before waits for two"
    );
    assert_eq!(state.release(small), [large]);
    assert_eq!(state.release(large), [other]);
}

#[test]
fn unregistering_gives_back_what_an_instance_holds_and_its_place() {
    let mut state = State::new(&[]);
    let holder = state.register(0, &needs(&[("R", false, 1)], 1)).unwrap();
    let staged = state.register(0, &needs(&[("R", false, 1)], 1)).unwrap();
    let behind = state.register(0, &needs(&[("R", false, 1)], 1)).unwrap();
    state.stage(holder);
    state.stage(staged);
    state.stage(behind);
    assert!(
        state.unregister(staged).is_empty(),
        "the unit is still held"
    );
    assert_eq!(state.unregister(holder), [behind]);
    assert!(
        state.release(holder).is_empty(),
        "gone: nothing to give back"
    );
}

fn limiter(counts: Vec<ResourceCount>) -> Arc<RateLimiter> {
    Arc::new(RateLimiter::new(&RateLimiterSettings { resources: counts }))
}

#[test]
fn an_instance_waits_for_the_permit_another_holds() {
    let limiter = limiter(Vec::new());
    let one = needs(&[("R", false, 1)], 1);
    let first = limiter.register(0, &one).unwrap();
    let second = limiter.register(0, &one).unwrap();
    let permit = first.acquire();
    let (tx, rx) = crossbeam_channel::bounded(1);
    let waiter = std::thread::spawn(move || {
        let permit = second.acquire();
        tx.send(()).unwrap();
        drop(permit);
    });
    assert!(
        rx.recv_timeout(Duration::from_millis(50)).is_err(),
        "the unit is held"
    );
    drop(permit);
    rx.recv_timeout(Duration::from_secs(30))
        .expect("the released unit goes to the waiting instance");
    waiter.join().unwrap();
    // Both gave their unit back.
    drop(first.acquire());
}

#[test]
fn registering_beyond_the_count_is_an_invalid_argument() {
    let limiter = limiter(vec![count("R", 1, None)]);
    let error = limiter
        .register(0, &needs(&[("R", false, 2)], 1))
        .unwrap_err();
    assert_eq!(error.kind, oxiserve_types::ErrorKind::InvalidArg);
    assert!(error.message.contains("minimum required count is 2"));
}

#[test]
fn a_dropped_slot_lets_the_others_go() {
    let limiter = limiter(Vec::new());
    let one = needs(&[("R", false, 1)], 1);
    let holder = limiter.register(0, &one).unwrap();
    let other = limiter.register(0, &one).unwrap();
    let permit = holder.acquire();
    drop(holder);
    drop(permit);
    drop(other.acquire());
}
