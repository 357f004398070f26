use oxiserve_proto::inference::{ModelInput, ModelOutput};

use super::*;
use crate::signature::TensorInfos;

const FP32: i32 = 1;
const INT64: i32 = 9;

fn info(tensor: &str, dtype: i32, dims: &[i64]) -> TensorInfo {
    TensorInfo {
        tensor: tensor.into(),
        dtype,
        dims: dims.to_vec(),
    }
}

/// x [-1,4] FP32 -> y [-1,3] FP32, as a SavedModel signature.
fn saved_model() -> Signature {
    Signature {
        graph_def: false,
        inputs: TensorInfos::from([("x".into(), info("serving_default_x:0", FP32, &[-1, 4]))]),
        outputs: TensorInfos::from([("y".into(), info("Identity:0", FP32, &[-1, 3]))]),
    }
}

fn config(input: (&str, DataType, &[i64]), output: (&str, DataType, &[i64])) -> ModelConfig {
    ModelConfig {
        name: "m".into(),
        max_batch_size: 8,
        input: vec![ModelInput {
            name: input.0.into(),
            data_type: input.1.config_number(),
            dims: input.2.to_vec(),
            ..Default::default()
        }],
        output: vec![ModelOutput {
            name: output.0.into(),
            data_type: output.1.config_number(),
            dims: output.2.to_vec(),
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn error(signature: &Signature, config: &ModelConfig) -> String {
    signature.check(config).unwrap_err().message
}

#[test]
fn a_matching_configuration_passes() {
    let good = config(("x", DataType::Fp32, &[4]), ("y", DataType::Fp32, &[3]));
    saved_model().check(&good).unwrap();
    let mut unbatched = config(
        ("x", DataType::Fp32, &[7, 4]),
        ("y", DataType::Fp32, &[-1, 3]),
    );
    unbatched.max_batch_size = 0;
    saved_model().check(&unbatched).unwrap();
}

#[test]
fn names_datatypes_and_shapes_are_checked_with_tritons_words() {
    let s = saved_model();
    assert_eq!(
        error(
            &s,
            &config(("z", DataType::Fp32, &[4]), ("y", DataType::Fp32, &[3]))
        ),
        "unexpected inference input 'z', allowed inputs are: x"
    );
    assert_eq!(
        error(
            &s,
            &config(("x", DataType::Fp32, &[4]), ("w", DataType::Fp32, &[3]))
        ),
        "unexpected inference output 'w', allowed outputs are: y"
    );
    assert_eq!(
        error(
            &s,
            &config(("x", DataType::Int64, &[4]), ("y", DataType::Fp32, &[3]))
        ),
        "unable to load model 'm', configuration expects datatype TYPE_INT64 for input 'x', \
         model provides TYPE_FP32"
    );
    assert!(
        error(
            &s,
            &config(("x", DataType::Fp32, &[5]), ("y", DataType::Fp32, &[3]))
        )
        .starts_with(
            "model 'm', tensor 'x': the model expects 2 dimensions (shape [-1,4]) but the model \
             configuration specifies 2 dimensions (an initial batch dimension"
        )
    );
    // An output's dynamic dimension must be configured as dynamic.
    let mut dynamic = s.clone();
    dynamic.outputs.get_mut("y").unwrap().dims = vec![-1, -1];
    assert!(
        error(
            &dynamic,
            &config(("x", DataType::Fp32, &[4]), ("y", DataType::Fp32, &[3]))
        )
        .contains("tensor 'y': the model expects 2 dimensions (shape [-1,-1])")
    );
}

#[test]
fn batching_needs_a_dynamic_first_dimension() {
    let mut fixed = saved_model();
    fixed.inputs.get_mut("x").unwrap().dims = vec![2, 4];
    assert!(
        error(
            &fixed,
            &config(("x", DataType::Fp32, &[4]), ("y", DataType::Fp32, &[3]))
        )
        .contains("the first dimension must be -1; but shape expected by the model is [2,4]")
    );
}

#[test]
fn every_signature_input_must_be_configured() {
    let mut two = saved_model();
    two.inputs
        .insert("k".into(), info("serving_default_k:0", INT64, &[-1]));
    assert_eq!(
        error(
            &two,
            &config(("x", DataType::Fp32, &[4]), ("y", DataType::Fp32, &[3]))
        ),
        "unable to load model 'm', configuration expects 1 inputs, model provides 2"
    );
}

#[test]
fn a_graph_def_checks_names_and_datatypes_only() {
    let graph = Signature {
        graph_def: true,
        inputs: TensorInfos::from([
            ("INPUT0".into(), info("INPUT0:0", FP32, &[])),
            ("INPUT1".into(), info("INPUT1:0", FP32, &[])),
        ]),
        outputs: TensorInfos::from([("OUTPUT0".into(), info("OUTPUT0:0", FP32, &[]))]),
    };
    // One of two placeholders fed, any shape.
    graph
        .check(&config(
            ("INPUT0", DataType::Fp32, &[9, 9]),
            ("OUTPUT0", DataType::Fp32, &[1]),
        ))
        .unwrap();
    assert!(
        error(
            &graph,
            &config(
                ("INPUT0", DataType::Int64, &[4]),
                ("OUTPUT0", DataType::Fp32, &[4])
            )
        )
        .contains("configuration expects datatype TYPE_INT64 for input 'INPUT0'")
    );
}
