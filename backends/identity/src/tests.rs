use bytes::Bytes;
use oxiserve_backend::testing::infer_once;
use oxiserve_proto::{
    ModelConfig,
    inference::{ModelInput, ModelOutput, ModelParameter},
};
use oxiserve_types::{DataType, InferRequest};

use super::*;

fn config(inputs: &[&str], outputs: &[&str]) -> ModelConfig {
    ModelConfig {
        name: "id".into(),
        input: inputs
            .iter()
            .map(|n| ModelInput {
                name: n.to_string(),
                ..Default::default()
            })
            .collect(),
        output: outputs
            .iter()
            .map(|n| ModelOutput {
                name: n.to_string(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn load(config: ModelConfig) -> Result<Arc<dyn Model>> {
    IdentityBackend.load(&ModelContext {
        name: config.name.clone(),
        version: 1,
        config: Arc::new(config),
        model_path: "/nonexistent".into(),
        version_path: "/nonexistent/1".into(),
        host: Arc::new(oxiserve_backend::NoHost),
    })
}

fn request(inputs: &[(&str, &'static [u8])]) -> InferRequest {
    InferRequest {
        inputs: inputs
            .iter()
            .map(|(n, d)| {
                Tensor::new(
                    *n,
                    DataType::Uint8,
                    vec![1, d.len() as i64],
                    Bytes::from_static(d),
                )
            })
            .collect(),
        ..Default::default()
    }
}

#[test]
fn outputs_follow_input_suffixes_and_share_bytes() {
    let model = load(config(&["INPUT1", "INPUT0"], &["OUTPUT0", "OUTPUT1"])).unwrap();
    let req = request(&[("INPUT0", b"ab"), ("INPUT1", b"xyz")]);
    let input0 = req.inputs[0].data.clone();
    let response = infer_once(model.as_ref(), req, &["OUTPUT0", "OUTPUT1"]).unwrap();
    assert_eq!(response.outputs.len(), 2);
    assert_eq!(response.outputs[0].name, "OUTPUT0");
    assert_eq!(response.outputs[0].data, Bytes::from_static(b"ab"));
    assert_eq!(
        response.outputs[0].data.as_ptr(),
        input0.as_ptr(),
        "no copy"
    );
    assert_eq!(response.outputs[1].data, Bytes::from_static(b"xyz"));
    assert_eq!(response.outputs[1].shape, vec![1, 3]);
}

#[test]
fn only_requested_outputs_are_produced() {
    let model = load(config(&["INPUT0", "INPUT1"], &["OUTPUT0", "OUTPUT1"])).unwrap();
    let req = request(&[("INPUT0", b"a"), ("INPUT1", b"b")]);
    let response = infer_once(model.as_ref(), req, &["OUTPUT1"]).unwrap();
    assert_eq!(response.outputs.len(), 1);
    assert_eq!(response.outputs[0].data, Bytes::from_static(b"b"));
}

#[test]
fn other_names_pair_by_position() {
    let model = load(config(&["text"], &["echo"])).unwrap();
    let response = infer_once(model.as_ref(), request(&[("text", b"t")]), &["echo"]).unwrap();
    assert_eq!(response.outputs[0].name, "echo");
}

#[test]
fn an_output_without_input_fails_to_load() {
    let Err(err) = load(config(&["INPUT0"], &["OUTPUT0", "OUTPUT7"])) else {
        panic!("loaded")
    };
    assert!(err.message.contains("'OUTPUT7'"), "{err}");
}

#[test]
fn a_bad_delay_fails_to_load() {
    let mut c = config(&["INPUT0"], &["OUTPUT0"]);
    c.parameters.insert(
        "execute_delay_ms".into(),
        ModelParameter {
            string_value: "soon".into(),
        },
    );
    let Err(err) = load(c) else { panic!("loaded") };
    assert!(err.message.contains("execute_delay_ms"), "{err}");
}

#[test]
fn follows_the_backend_contract() {
    let model = load(config(&["INPUT0", "INPUT1"], &["OUTPUT0", "OUTPUT1"])).unwrap();
    let req = request(&[("INPUT0", b"ab"), ("INPUT1", b"c")]);
    oxiserve_backend::testing::conformance::check(model.as_ref(), &req, &["OUTPUT0", "OUTPUT1"]);
    oxiserve_backend::testing::conformance::check(model.as_ref(), &req, &["OUTPUT1"]);
}
