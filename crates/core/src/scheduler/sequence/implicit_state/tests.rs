use std::sync::Arc;

use oxiserve_backend::BackendResponse;
use oxiserve_proto::inference::{ModelOutput, model_sequence_batching::InitialState};
use parking_lot::Mutex;

use super::*;

const TYPE_INT32: i32 = 8;

fn config(listed: &[&str]) -> ModelConfig {
    ModelConfig {
        name: "acc".into(),
        max_batch_size: 4,
        output: listed
            .iter()
            .map(|n| ModelOutput {
                name: n.to_string(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn batching(initial: Vec<InitialState>) -> ModelSequenceBatching {
    ModelSequenceBatching {
        state: vec![StateConfig {
            input_name: "IN_STATE".into(),
            output_name: "OUT_STATE".into(),
            data_type: TYPE_INT32,
            dims: vec![-1],
            initial_state: initial,
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn states(listed: &[&str]) -> Arc<ImplicitState> {
    ImplicitState::new(
        &config(listed),
        &batching(vec![]),
        Path::new("/none"),
        Duration::from_secs(1),
    )
    .unwrap()
    .unwrap()
}

#[derive(Default, Clone)]
struct Seen(Arc<Mutex<Vec<ResponseEvent>>>);

impl ResponseTarget for Seen {
    fn deliver(&mut self, event: ResponseEvent) {
        self.0.lock().push(event);
    }
}

fn int32(name: &str, values: &[i32]) -> Tensor {
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    Tensor::new(
        name,
        DataType::Int32,
        vec![1, values.len() as i64],
        data.into(),
    )
}

/// Delivers a response with `OUT` and `OUT_STATE` for a request of `corrid`.
fn respond(
    states: &Arc<ImplicitState>,
    corrid: u64,
    end: bool,
    wanted: &[&str],
    state: &[i32],
) -> Vec<String> {
    let seen = Seen::default();
    let wanted: Vec<String> = wanted.iter().map(|s| s.to_string()).collect();
    let mut target = states.capture(CorrId::Uint(corrid), end, &wanted, Box::new(seen.clone()));
    target.deliver(ResponseEvent {
        response: Some(Ok(BackendResponse::new(vec![
            int32("OUT", &[7]),
            int32("OUT_STATE", state),
        ]))),
        is_final: true,
        fails_request: true,
    });
    let events = seen.0.lock();
    let response = events[0].response.as_ref().unwrap().as_ref().unwrap();
    response.outputs.iter().map(|t| t.name.clone()).collect()
}

#[test]
fn a_sequence_starts_with_zeros_of_the_declared_shape() {
    let states = states(&[]);
    let inputs = states.inputs(&CorrId::Uint(1), true);
    assert_eq!(inputs.len(), 1);
    assert_eq!(inputs[0].name, "IN_STATE");
    assert_eq!(inputs[0].shape, vec![1, 1]);
    assert_eq!(&inputs[0].data[..], &[0, 0, 0, 0]);
}

#[test]
fn each_request_gets_the_state_its_predecessor_produced() {
    let states = states(&[]);
    let shown = respond(&states, 1, false, &["OUT"], &[5, 6]);
    assert_eq!(shown, ["OUT"], "the state output is not the client's");
    respond(&states, 2, false, &["OUT"], &[9]);
    let next = states.inputs(&CorrId::Uint(1), false);
    assert_eq!(next[0], int32("IN_STATE", &[5, 6]));
    assert_eq!(
        states.inputs(&CorrId::Uint(2), false)[0],
        int32("IN_STATE", &[9])
    );
    // A new start begins again from the initial state.
    assert_eq!(states.inputs(&CorrId::Uint(1), true)[0].shape, vec![1, 1]);
}

#[test]
fn the_end_of_a_sequence_forgets_its_state() {
    let states = states(&[]);
    respond(&states, 3, false, &["OUT"], &[1]);
    respond(&states, 3, true, &["OUT"], &[2]);
    assert!(states.stored.lock().is_empty());
}

#[test]
fn a_listed_state_output_goes_to_a_client_that_asks() {
    let states = states(&["OUT", "OUT_STATE"]);
    assert_eq!(
        respond(&states, 1, false, &["OUT", "OUT_STATE"], &[1]),
        ["OUT", "OUT_STATE"]
    );
    assert_eq!(respond(&states, 1, false, &["OUT"], &[1]), ["OUT"]);
}

#[test]
fn idle_sequences_lose_their_state() {
    let states = states(&[]);
    respond(&states, 4, false, &["OUT"], &[1]);
    states.forget_idle(Instant::now() + Duration::from_secs(5));
    assert!(states.stored.lock().is_empty());
}

#[test]
fn a_missing_state_output_fails_the_request() {
    let states = states(&[]);
    let seen = Seen::default();
    let mut target = states.capture(CorrId::Uint(1), false, &[], Box::new(seen.clone()));
    target.deliver(ResponseEvent {
        response: Some(Ok(BackendResponse::new(vec![int32("OUT", &[7])]))),
        is_final: true,
        fails_request: true,
    });
    let events = seen.0.lock();
    let error = events[0].response.as_ref().unwrap().as_ref().unwrap_err();
    assert!(
        error.message.contains("no state output 'OUT_STATE'"),
        "{}",
        error.message
    );
}

#[test]
fn initial_state_data_comes_from_its_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("initial_state")).unwrap();
    let bytes: Vec<u8> = [3i32, 4].iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(dir.path().join("initial_state/start.bin"), bytes).unwrap();
    let initial = InitialState {
        data_type: TYPE_INT32,
        dims: vec![2],
        name: "start".into(),
        state_data: Some(StateData::DataFile("start.bin".into())),
    };
    let states = ImplicitState::new(
        &config(&[]),
        &batching(vec![initial]),
        dir.path(),
        Duration::from_secs(1),
    )
    .unwrap()
    .unwrap();
    assert_eq!(
        states.inputs(&CorrId::Uint(1), true)[0],
        int32("IN_STATE", &[3, 4])
    );
}
