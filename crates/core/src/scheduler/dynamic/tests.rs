//! The batcher's handle with real threads: instances taking batches, the
//! timer rejecting late requests, refusals and response order. The
//! decisions themselves are tested on the State (state/tests.rs).

use std::{
    sync::{Arc, mpsc},
    thread,
    time::{Duration, Instant},
};

use oxiserve_backend::{
    BackendRequest, BackendResponse, CancelFlag, ResponseEvent, ResponseSink, ResponseTarget,
};
use oxiserve_proto::{
    ModelConfig,
    inference::{ModelDynamicBatching, ModelQueuePolicy},
};
use oxiserve_types::{ErrorKind, InferRequest};

use super::{DynamicBatcher, Retired};
use crate::{
    scheduler::Job,
    stats::{FailureReason, RequestRecord, StatsCollector},
};

const WAIT: Duration = Duration::from_secs(5);

/// Sends (request id, event) pairs to the test and, like the core's
/// target, records the request's outcome on its final event.
struct Probe(u32, mpsc::Sender<(u32, ResponseEvent)>, Arc<RequestRecord>);

impl ResponseTarget for Probe {
    fn deliver(&mut self, event: ResponseEvent) {
        if event.is_final {
            let failure = match &event.response {
                Some(Err(e)) => Some(FailureReason::of_backend_error(e)),
                _ => None,
            };
            self.2.finished(failure);
        }
        let _ = self.1.send((self.0, event));
    }
}

struct Fixture {
    batcher: DynamicBatcher,
    stats: Arc<StatsCollector>,
    events: mpsc::Receiver<(u32, ResponseEvent)>,
    tx: mpsc::Sender<(u32, ResponseEvent)>,
}

impl Fixture {
    fn new(batching: ModelDynamicBatching) -> Self {
        let config = ModelConfig {
            name: "m".into(),
            max_batch_size: 8,
            ..Default::default()
        };
        let (tx, events) = mpsc::channel();
        Self {
            batcher: DynamicBatcher::new(&config, &batching).unwrap(),
            stats: Arc::new(StatsCollector::default()),
            events,
            tx,
        }
    }

    fn job(&self, id: u32) -> Job {
        let record = Arc::new(RequestRecord::new(self.stats.clone(), Instant::now()));
        let probe = Probe(id, self.tx.clone(), record.clone());
        let target = self.batcher.wrap_target(Box::new(probe));
        Job {
            request: BackendRequest {
                request: InferRequest {
                    id: format!("r{id}"),
                    ..Default::default()
                },
                requested_outputs: Vec::new(),
                sink: ResponseSink::new(target, CancelFlag::default()),
                trace: None,
            },
            record,
            batch_size: 1,
            enqueued: Instant::now(),
            trace: None,
        }
    }
}

fn id(job: &Job) -> u32 {
    job.request.request.id[1..].parse().unwrap()
}

#[test]
fn free_instances_take_every_queued_request_then_stop() {
    let fixture = Fixture::new(ModelDynamicBatching {
        preferred_batch_size: vec![4],
        max_queue_delay_microseconds: 2_000,
        ..Default::default()
    });
    let instances: Vec<_> = (0..2)
        .map(|_| {
            let mut source = fixture.batcher.source(Retired::default());
            thread::spawn(move || {
                let load = source.load();
                let mut seen = Vec::new();
                while let Some(batch) = source.next_batch() {
                    assert!((1..=8).contains(&batch.len()));
                    seen.extend(batch.iter().map(id));
                    load.ended();
                }
                seen
            })
        })
        .collect();
    for i in 0..20 {
        fixture.batcher.enqueue(fixture.job(i)).unwrap();
    }
    let deadline = Instant::now() + WAIT;
    while fixture.batcher.pending() > 0 && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(1));
    }
    fixture.batcher.stop();
    let mut seen: Vec<u32> = instances
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    seen.sort_unstable();
    assert_eq!(seen, (0..20).collect::<Vec<_>>());
}

#[test]
fn a_waiting_instance_wakes_for_each_request() {
    // No queue delay: an idle instance waits without a timeout, so only the
    // wake of the request's enqueue gets it going.
    let fixture = Fixture::new(ModelDynamicBatching::default());
    let (tx, taken) = mpsc::channel();
    let mut source = fixture.batcher.source(Retired::default());
    let instance = thread::spawn(move || {
        let load = source.load();
        while let Some(batch) = source.next_batch() {
            for job in &batch {
                tx.send(id(job)).unwrap();
            }
            load.ended();
        }
    });
    for i in 0..50 {
        thread::sleep(Duration::from_millis(1)); // the instance waits again
        fixture.batcher.enqueue(fixture.job(i)).unwrap();
        assert_eq!(taken.recv_timeout(WAIT), Ok(i));
    }
    fixture.batcher.stop();
    instance.join().unwrap();
}

#[test]
fn the_timer_rejects_a_late_request_while_no_instance_is_free() {
    let fixture = Fixture::new(ModelDynamicBatching {
        default_queue_policy: Some(ModelQueuePolicy {
            default_timeout_microseconds: 10_000,
            ..Default::default()
        }),
        ..Default::default()
    });
    fixture.batcher.enqueue(fixture.job(0)).unwrap();
    let (request, event) = fixture.events.recv_timeout(WAIT).unwrap();
    assert_eq!(request, 0);
    assert!(event.is_final);
    let error = event.response.unwrap().unwrap_err();
    assert_eq!(error.kind, ErrorKind::Unavailable);
    assert_eq!(error.message, "Request timeout expired");
    assert_eq!(fixture.batcher.pending(), 0);
    let stats = fixture.stats.snapshot("m", 1);
    assert_eq!(stats.failures.get(FailureReason::Rejected), 1);
}

#[test]
fn a_full_queue_refuses_with_tritons_text_and_counts_nothing() {
    let fixture = Fixture::new(ModelDynamicBatching {
        default_queue_policy: Some(ModelQueuePolicy {
            max_queue_size: 1,
            ..Default::default()
        }),
        ..Default::default()
    });
    fixture.batcher.enqueue(fixture.job(0)).unwrap();
    let error = fixture.batcher.enqueue(fixture.job(1)).unwrap_err();
    assert_eq!(error.kind, ErrorKind::Unavailable);
    assert_eq!(error.message, "[request id: r1] Exceeds maximum queue size");
    let stats = fixture.stats.snapshot("m", 1);
    assert_eq!(stats.inference_stats.fail.count, 0);
    fixture.batcher.stop();
    let error = fixture.batcher.enqueue(fixture.job(2)).unwrap_err();
    assert!(error.message.contains("stopped accepting"), "{error:?}");
}

#[test]
fn preserve_ordering_answers_in_arrival_order() {
    let fixture = Fixture::new(ModelDynamicBatching {
        preferred_batch_size: vec![1],
        preserve_ordering: true,
        ..Default::default()
    });
    for i in 0..3 {
        fixture.batcher.enqueue(fixture.job(i)).unwrap();
    }
    let mut source = fixture.batcher.source(Retired::default());
    let batches: Vec<_> = (0..3).map(|_| source.next_batch().unwrap()).collect();
    // The instances finish last to first.
    for job in batches.into_iter().flatten().rev() {
        job.request.sink.respond(Ok(BackendResponse::default()));
    }
    let order: Vec<u32> = fixture.events.try_iter().map(|(id, _)| id).collect();
    assert_eq!(order, [0, 1, 2]);
}

#[test]
fn a_busy_instance_takes_a_partial_batch_once_its_batch_ends() {
    // A pipelining backend: the instance asks for its next batch while its
    // first one still executes. The requests behind it wait for a batch of
    // eight, pending, until that batch ends.
    let fixture = Fixture::new(ModelDynamicBatching::default());
    let mut source = fixture.batcher.source(Retired::default());
    let load = source.load();
    fixture.batcher.enqueue(fixture.job(0)).unwrap();
    assert_eq!(source.next_batch().unwrap().len(), 1);
    assert_eq!(fixture.batcher.pending(), 0, "executing");
    let (tx, taken) = mpsc::channel();
    let instance = thread::spawn(move || {
        while let Some(batch) = source.next_batch() {
            tx.send(batch.iter().map(id).collect::<Vec<_>>()).unwrap();
        }
    });
    for i in 1..4 {
        fixture.batcher.enqueue(fixture.job(i)).unwrap();
    }
    assert_eq!(fixture.batcher.pending(), 3);
    assert!(taken.recv_timeout(Duration::from_millis(50)).is_err());
    load.ended();
    assert_eq!(taken.recv_timeout(WAIT), Ok(vec![1, 2, 3]));
    assert_eq!(fixture.batcher.pending(), 0);
    fixture.batcher.stop();
    load.ended();
    instance.join().unwrap();
}

#[test]
fn a_full_batch_for_a_busy_instance_stays_pending_until_it_starts() {
    let fixture = Fixture::new(ModelDynamicBatching::default());
    let mut source = fixture.batcher.source(Retired::default());
    let load = source.load();
    for i in 0..9 {
        fixture.batcher.enqueue(fixture.job(i)).unwrap();
    }
    assert_eq!(source.next_batch().unwrap().len(), 8);
    assert_eq!(fixture.batcher.pending(), 1);
    fixture.batcher.enqueue(fixture.job(9)).unwrap();
    fixture.batcher.stop();
    assert_eq!(
        source.next_batch().unwrap().len(),
        2,
        "a stopped batcher drains"
    );
    assert_eq!(fixture.batcher.pending(), 2, "behind the executing batch");
    load.ended();
    assert_eq!(fixture.batcher.pending(), 0);
    load.ended();
    assert!(source.next_batch().is_none());
}
