//! The sequence batcher's handle with the oldest strategy and a real
//! instance thread: sequences share batches, a sequence's next request goes
//! only once its previous one completed, and it gets the implicit state
//! that one produced; `preserve_ordering` answers in the order requests were
//! taken. The decisions themselves are tested on the State (oldest/tests.rs).

use std::{
    path::Path,
    sync::{Arc, mpsc},
    thread,
    time::{Duration, Instant},
};

use oxiserve_backend::{
    BackendRequest, BackendResponse, CancelFlag, ResponseEvent, ResponseSink, ResponseTarget,
};
use oxiserve_proto::{
    ModelConfig,
    inference::{
        ModelSequenceBatching,
        model_sequence_batching::{
            InitialState, State as StateConfig, StrategyChoice, StrategyOldest,
        },
    },
};
use oxiserve_types::{DataType, InferRequest, ParameterValue, Tensor};

use super::{CorrId, Flags, Retired, SequenceBatcher, correlation_id};
use crate::{
    scheduler::Job,
    stats::{RequestRecord, StatsCollector},
};

const WAIT: Duration = Duration::from_secs(5);
const TYPE_INT32: i32 = 8;

/// Oldest strategy, batches of two (waiting long for the second), and an
/// int32 state `IN_STATE` / `OUT_STATE`.
fn batcher(preserve_ordering: bool) -> SequenceBatcher {
    let config = ModelConfig {
        name: "acc".into(),
        max_batch_size: 4,
        ..Default::default()
    };
    let batching = ModelSequenceBatching {
        strategy_choice: Some(StrategyChoice::Oldest(StrategyOldest {
            max_candidate_sequences: 4,
            preferred_batch_size: vec![2],
            max_queue_delay_microseconds: 60_000_000,
            preserve_ordering,
        })),
        state: vec![StateConfig {
            input_name: "IN_STATE".into(),
            output_name: "OUT_STATE".into(),
            data_type: TYPE_INT32,
            dims: vec![1],
            ..Default::default()
        }],
        ..Default::default()
    };
    SequenceBatcher::new(&config, &batching, Path::new("/none")).unwrap()
}

fn int32(name: &str, value: i32) -> Tensor {
    let data = value.to_le_bytes().to_vec();
    Tensor::new(name, DataType::Int32, vec![1, 1], data.into())
}

fn value(tensor: &Tensor) -> i32 {
    i32::from_le_bytes(tensor.data[..4].try_into().unwrap())
}

/// Reports each request's final event: its id and whether it succeeded.
struct Client(String, mpsc::Sender<(String, bool)>);

impl ResponseTarget for Client {
    fn deliver(&mut self, event: ResponseEvent) {
        if event.is_final {
            let ok = matches!(event.response, Some(Ok(_)));
            let _ = self.1.send((self.0.clone(), ok));
        }
    }
}

/// A request of sequence `corrid` adding `input`, with id `corrid+input`.
fn job(
    corrid: u64,
    input: i32,
    start: bool,
    end: bool,
    client: &mpsc::Sender<(String, bool)>,
) -> Job {
    let stats = Arc::new(StatsCollector::default());
    let parameters = [
        ("sequence_id", ParameterValue::Uint(corrid)),
        ("sequence_start", ParameterValue::Bool(start)),
        ("sequence_end", ParameterValue::Bool(end)),
    ];
    let id = format!("{corrid}+{input}");
    let target = Box::new(Client(id.clone(), client.clone()));
    Job {
        request: BackendRequest {
            request: InferRequest {
                id,
                inputs: vec![int32("IN", input)],
                parameters: parameters
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect(),
                ..Default::default()
            },
            requested_outputs: Vec::new(),
            sink: ResponseSink::new(target, CancelFlag::default()),
            trace: None,
        },
        record: Arc::new(RequestRecord::new(stats, Instant::now())),
        batch_size: 1,
        enqueued: Instant::now(),
        trace: None,
    }
}

/// The model: answers `OUT_STATE` = `IN_STATE` + `IN`; returns the job's
/// id and the state it got.
fn execute(job: Job) -> (String, i32) {
    let state = value(job.request.input("IN_STATE").expect("a state input"));
    let sum = state + value(job.request.input("IN").unwrap());
    let response = BackendResponse::new(vec![int32("OUT_STATE", sum)]);
    let id = job.request.request.id.clone();
    job.request.sink.respond(Ok(response));
    (id, state)
}

/// An instance thread that hands each batch it takes to the test.
fn instance(batcher: &SequenceBatcher) -> (mpsc::Receiver<Vec<Job>>, thread::JoinHandle<()>) {
    let mut source = batcher.source(Retired::default());
    let (batches, taken) = mpsc::channel();
    let thread = thread::spawn(move || {
        while let Some(batch) = source.next_batch() {
            let _ = batches.send(batch);
        }
    });
    (taken, thread)
}

fn ids(batch: &[Job]) -> Vec<String> {
    batch.iter().map(|j| j.request.request.id.clone()).collect()
}

#[test]
fn sequences_share_batches_and_each_request_gets_its_predecessors_state() {
    let batcher = batcher(false);
    let (taken, instance) = instance(&batcher);
    let (client, answered) = mpsc::channel();
    for (corrid, input, start, end) in [
        (1, 1, true, false),
        (1, 2, false, true),
        (2, 10, true, false),
        (2, 20, false, true),
    ] {
        batcher
            .enqueue(job(corrid, input, start, end, &client))
            .unwrap();
    }
    let first = taken.recv_timeout(WAIT).unwrap();
    assert_eq!(ids(&first), ["1+1", "2+10"], "one request per sequence");
    let mut first = first.into_iter();
    assert_eq!(execute(first.next().unwrap()), ("1+1".into(), 0));
    // 1+2 waits for a partner: 2+20 cannot go before 2+10 completed.
    assert!(taken.recv_timeout(Duration::from_millis(50)).is_err());
    assert_eq!(execute(first.next().unwrap()), ("2+10".into(), 0));
    let second: Vec<_> = taken
        .recv_timeout(WAIT)
        .unwrap()
        .into_iter()
        .map(execute)
        .collect();
    assert_eq!(second, [("1+2".into(), 1), ("2+20".into(), 10)]);
    let oks: Vec<bool> = (0..4)
        .map(|_| answered.recv_timeout(WAIT).unwrap().1)
        .collect();
    assert_eq!(oks, [true; 4]);
    batcher.stop();
    instance.join().unwrap();
}

#[test]
fn with_preserve_ordering_answers_leave_in_the_order_requests_were_taken() {
    let batcher = batcher(true);
    let (taken, instance) = instance(&batcher);
    let (client, answered) = mpsc::channel();
    batcher.enqueue(job(1, 1, true, false, &client)).unwrap();
    batcher.enqueue(job(2, 10, true, true, &client)).unwrap();
    let mut first = taken.recv_timeout(WAIT).unwrap();
    assert_eq!(ids(&first), ["1+1", "2+10"]);
    execute(first.pop().unwrap());
    assert!(answered.try_recv().is_err(), "2+10 waits for 1+1");
    execute(first.pop().unwrap());
    let order: Vec<String> = (0..2)
        .map(|_| answered.recv_timeout(WAIT).unwrap().0)
        .collect();
    assert_eq!(order, ["1+1", "2+10"]);
    batcher.stop();
    instance.join().unwrap();
}

#[test]
fn a_bad_initial_state_is_refused_clearly() {
    let config = ModelConfig {
        name: "m".into(),
        ..Default::default()
    };
    let batching = ModelSequenceBatching {
        state: vec![StateConfig {
            input_name: "IN_STATE".into(),
            output_name: "OUT_STATE".into(),
            data_type: 8,
            dims: vec![2],
            initial_state: vec![InitialState {
                data_type: 8,
                dims: vec![3],
                name: "init".into(),
                state_data: None,
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let err = SequenceBatcher::new(&config, &batching, Path::new("/none")).unwrap_err();
    assert!(
        err.message
            .contains("'initial_state' dim for input name 'IN_STATE'"),
        "{}",
        err.message
    );
    let none = ModelSequenceBatching::default();
    assert!(SequenceBatcher::new(&config, &none, Path::new("/none")).is_ok());
}

#[test]
fn correlation_ids_are_non_zero_integers_or_non_empty_strings() {
    let with = |value| InferRequest {
        parameters: [("sequence_id".to_string(), value)].into(),
        ..Default::default()
    };
    let id = |value| correlation_id(&with(value));
    assert_eq!(id(ParameterValue::Uint(3)), Some(CorrId::Uint(3)));
    assert_eq!(id(ParameterValue::Int(4)), Some(CorrId::Uint(4)));
    assert_eq!(
        id(ParameterValue::String("s".into())),
        Some(CorrId::Str("s".into()))
    );
    assert_eq!(id(ParameterValue::Uint(0)), None);
    assert_eq!(id(ParameterValue::String(String::new())), None);
    assert_eq!(correlation_id(&InferRequest::default()), None);
}

#[test]
fn an_iterative_request_comes_back_until_answered_for_good() {
    // One slot: the second request waits until the first one's sequence ends.
    let config = ModelConfig {
        name: "it".into(),
        ..Default::default()
    };
    let batching = ModelSequenceBatching {
        iterative_sequence: true,
        ..Default::default()
    };
    let batcher = SequenceBatcher::new(&config, &batching, Path::new("/none")).unwrap();
    let (taken, worker) = instance(&batcher);
    let (client, answered) = mpsc::channel();
    for input in [1, 2] {
        let mut request = job(0, input, false, false, &client);
        request.request.request.parameters.clear(); // no correlation id, no flags
        batcher.enqueue(request).unwrap();
    }
    let sequence = |taken: &Job| {
        let p = &taken.request.request.parameters;
        let start = p.get("sequence_start").and_then(ParameterValue::as_bool);
        (p.get("sequence_id").cloned(), start.unwrap_or(false))
    };
    let mut first = taken.recv_timeout(WAIT).unwrap();
    assert_eq!(ids(&first), ["0+1"]);
    let executing = first.pop().unwrap();
    assert_eq!(sequence(&executing), (Some(ParameterValue::Uint(1)), true));
    assert!(executing.request.sink.reschedule().is_ok());
    let mut again = taken.recv_timeout(WAIT).unwrap();
    assert_eq!(
        ids(&again),
        ["0+1"],
        "back in its slot, before the waiting sequence"
    );
    let executing = again.pop().unwrap();
    assert_eq!(sequence(&executing), (Some(ParameterValue::Uint(1)), false));
    assert!(answered.try_recv().is_err(), "nothing answered yet");
    executing
        .request
        .sink
        .respond(Ok(BackendResponse::default()));
    assert_eq!(answered.recv_timeout(WAIT).unwrap(), ("0+1".into(), true));
    // Its sequence ended: the slot went to the other request.
    let executing = taken.recv_timeout(WAIT).unwrap().pop().unwrap();
    assert_eq!(sequence(&executing), (Some(ParameterValue::Uint(2)), true));
    executing
        .request
        .sink
        .respond(Ok(BackendResponse::default()));
    batcher.stop();
    worker.join().unwrap();
    // Without iterative_sequence, no request comes without an id or goes back.
    let plain = SequenceBatcher::new(&config, &ModelSequenceBatching::default(), Path::new("/"));
    let plain = plain.unwrap();
    let mut without_id = job(0, 3, false, false, &client);
    without_id.request.request.parameters.clear();
    assert!(plain.enqueue(without_id).is_err());
    let (taken, worker) = instance(&plain);
    plain.enqueue(job(5, 4, true, false, &client)).unwrap();
    let executing = taken.recv_timeout(WAIT).unwrap().pop().unwrap();
    let sink = executing.request.sink.reschedule().unwrap_err();
    sink.respond(Ok(BackendResponse::default()));
    plain.stop();
    worker.join().unwrap();
}

/// Reports each request's final event: its id and its error text, if any.
struct Outcome(String, mpsc::Sender<(String, Option<String>)>);

impl ResponseTarget for Outcome {
    fn deliver(&mut self, event: ResponseEvent) {
        if event.is_final {
            let error = match event.response {
                Some(Err(e)) => Some(e.message),
                _ => None,
            };
            let _ = self.1.send((self.0.clone(), error));
        }
    }
}

/// `job` with a `timeout` parameter of `us` microseconds, answering
/// `outcomes`.
fn timed(mut job: Job, us: i64, outcomes: &mpsc::Sender<(String, Option<String>)>) -> Job {
    let request = &mut job.request.request;
    let parameters = &mut request.parameters;
    parameters.insert("timeout".into(), ParameterValue::Int(us));
    let target = Box::new(Outcome(request.id.clone(), outcomes.clone()));
    job.request.sink = ResponseSink::new(target, CancelFlag::default());
    job
}

#[test]
fn a_sequence_waiting_for_a_slot_past_its_timeout_is_rejected() {
    // One slot, held by sequence 1 while its first request executes.
    let config = ModelConfig {
        name: "slow".into(),
        ..Default::default()
    };
    let batching = ModelSequenceBatching {
        max_sequence_idle_microseconds: 60_000_000,
        ..Default::default()
    };
    let batcher = SequenceBatcher::new(&config, &batching, Path::new("/none")).unwrap();
    let (taken, worker) = instance(&batcher);
    let (client, _) = mpsc::channel();
    let (outcomes, answered) = mpsc::channel();
    let minute = 60_000_000;
    let first = timed(job(1, 1, true, false, &client), minute, &outcomes);
    batcher.enqueue(first).unwrap();
    let executing = taken.recv_timeout(WAIT).unwrap().pop().unwrap();
    // Sequence 2 waits in the backlog; its first request's deadline counts.
    let second = [
        timed(job(2, 10, true, false, &client), 20_000, &outcomes),
        timed(job(2, 20, false, false, &client), minute, &outcomes),
    ];
    for request in second {
        batcher.enqueue(request).unwrap();
    }
    let expired = "timeout of the corresponding sequence has been expired";
    for id in ["2+10", "2+20"] {
        let outcome = answered.recv_timeout(WAIT).unwrap();
        assert_eq!(outcome, (id.to_string(), Some(expired.to_string())));
    }
    assert_eq!(batcher.pending(), 0);
    // Sequence 2 is forgotten; sequence 1 runs on.
    let late = timed(job(2, 30, false, true, &client), minute, &mpsc::channel().0);
    let refused = batcher.enqueue(late).unwrap_err();
    assert!(
        refused.message.contains("must specify the START flag"),
        "{}",
        refused.message
    );
    executing
        .request
        .sink
        .respond(Ok(BackendResponse::default()));
    assert_eq!(answered.recv_timeout(WAIT).unwrap(), ("1+1".into(), None));
    let last = timed(job(1, 2, false, true, &client), minute, &outcomes);
    batcher.enqueue(last).unwrap();
    let executing = taken.recv_timeout(WAIT).unwrap().pop().unwrap();
    assert_eq!(executing.request.request.id, "1+2");
    executing
        .request
        .sink
        .respond(Ok(BackendResponse::default()));
    batcher.stop();
    worker.join().unwrap();
}

#[test]
fn the_timeout_parameter_is_in_microseconds_and_zero_is_none() {
    let config = ModelConfig {
        name: "m".into(),
        ..Default::default()
    };
    let batcher = SequenceBatcher::new(
        &config,
        &ModelSequenceBatching::default(),
        Path::new("/none"),
    )
    .unwrap();
    let (client, _) = mpsc::channel();
    let flags = |timeout: Option<ParameterValue>| {
        let mut request = job(1, 1, true, false, &client).request.request;
        if let Some(timeout) = timeout {
            request.parameters.insert("timeout".into(), timeout);
        }
        batcher.check(&mut request, 1).unwrap().1
    };
    let start = |timeout| Flags {
        start: true,
        end: false,
        timeout,
    };
    assert_eq!(flags(None), start(None));
    assert_eq!(flags(Some(ParameterValue::Int(0))), start(None));
    assert_eq!(
        flags(Some(ParameterValue::Int(1500))),
        start(Some(Duration::from_micros(1500)))
    );
    assert_eq!(
        flags(Some(ParameterValue::Uint(7))),
        start(Some(Duration::from_micros(7)))
    );
}
