use oxiserve_proto::{
    ModelConfig,
    inference::{ModelInput, ModelOutput},
};

use super::*;

fn info(dtype: TensorElementType, dims: &[i64]) -> TensorInfo {
    TensorInfo {
        dtype,
        dims: dims.to_vec(),
    }
}

/// A model `A, B -> C`, all FP32 `[-1, 4]`.
fn add_model() -> Signature {
    let f = |dims: &[i64]| info(TensorElementType::Float32, dims);
    Signature {
        inputs: [("A".into(), f(&[-1, 4])), ("B".into(), f(&[-1, 4]))].into(),
        overridable: TensorInfos::new(),
        outputs: [("C".into(), f(&[-1, 4]))].into(),
    }
}

fn config(
    max_batch_size: i32,
    inputs: &[(&str, i32, &[i64])],
    outputs: &[(&str, i32, &[i64])],
) -> ModelConfig {
    ModelConfig {
        name: "add".into(),
        max_batch_size,
        input: inputs
            .iter()
            .map(|&(name, data_type, dims)| ModelInput {
                name: name.into(),
                data_type,
                dims: dims.to_vec(),
                ..Default::default()
            })
            .collect(),
        output: outputs
            .iter()
            .map(|&(name, data_type, dims)| ModelOutput {
                name: name.into(),
                data_type,
                dims: dims.to_vec(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

const FP32: i32 = 11;
const INT32: i32 = 8;

fn error(config: &ModelConfig) -> String {
    add_model().check(config).unwrap_err().message
}

#[test]
fn a_matching_config_passes() {
    let c = config(
        8,
        &[("A", FP32, &[4]), ("B", FP32, &[4])],
        &[("C", FP32, &[4])],
    );
    add_model().check(&c).unwrap();
}

#[test]
fn names_a_wrong_datatype() {
    let c = config(
        8,
        &[("A", INT32, &[4]), ("B", FP32, &[4])],
        &[("C", FP32, &[4])],
    );
    assert_eq!(
        error(&c),
        "unable to load model 'add', configuration expects datatype TYPE_INT32 for input 'A', model provides TYPE_FP32"
    );
}

#[test]
fn lists_the_allowed_inputs() {
    let c = config(
        8,
        &[("A", FP32, &[4]), ("X", FP32, &[4])],
        &[("C", FP32, &[4])],
    );
    assert_eq!(
        error(&c),
        "unexpected inference input 'X', allowed inputs are: A, B"
    );
}

#[test]
fn counts_inputs() {
    let c = config(8, &[("A", FP32, &[4])], &[("C", FP32, &[4])]);
    assert_eq!(
        error(&c),
        "unable to load model 'add', configuration expects 1 inputs, model provides 2"
    );
}

#[test]
fn explains_a_rank_mismatch_with_batching() {
    let c = config(
        8,
        &[("A", FP32, &[2, 2]), ("B", FP32, &[4])],
        &[("C", FP32, &[4])],
    );
    assert!(
        error(&c).starts_with(
            "model 'add', tensor 'A': the model expects 2 dimensions (shape [-1,4]) but the model \
             configuration specifies 3 dimensions (an initial batch dimension"
        ),
        "{}",
        error(&c)
    );
}

#[test]
fn batching_needs_a_dynamic_first_dimension() {
    let mut fixed = add_model();
    fixed.inputs.get_mut("A").unwrap().dims = vec![2, 4];
    let c = config(
        8,
        &[("A", FP32, &[4]), ("B", FP32, &[4])],
        &[("C", FP32, &[4])],
    );
    let message = fixed.check(&c).unwrap_err().message;
    assert!(
        message
            .contains("the first dimension must be -1; but shape expected by the model is [2,4]"),
        "{message}"
    );
}

#[test]
fn without_batching_dims_are_compared_whole() {
    let c = config(
        0,
        &[("A", FP32, &[3, 4]), ("B", FP32, &[-1, 4])],
        &[("C", FP32, &[-1, 4])],
    );
    add_model().check(&c).unwrap();
}

#[test]
fn auto_complete_fills_a_batching_model() {
    let mut c = config(0, &[], &[]);
    add_model().complete(&mut c, 4).unwrap();
    assert_eq!(c.max_batch_size, 4);
    assert!(matches!(
        c.scheduling_choice,
        Some(SchedulingChoice::DynamicBatching(_))
    ));
    assert_eq!(c.input.len(), 2);
    assert_eq!(
        (
            c.input[0].name.as_str(),
            c.input[0].data_type,
            c.input[0].dims.clone()
        ),
        ("A", FP32, vec![4])
    );
    assert_eq!(c.output[0].dims, vec![4]);
}

#[test]
fn auto_complete_keeps_a_fixed_model_unbatched() {
    let mut fixed = add_model();
    for info in fixed.inputs.values_mut().chain(fixed.outputs.values_mut()) {
        info.dims = vec![2, 4];
    }
    let mut c = config(0, &[], &[]);
    fixed.complete(&mut c, 4).unwrap();
    assert_eq!(c.max_batch_size, 0);
    assert!(c.scheduling_choice.is_none());
    assert_eq!(c.input[0].dims, vec![2, 4]);
    let mut batched = config(8, &[], &[]);
    let message = fixed.complete(&mut batched, 4).unwrap_err().message;
    assert!(
        message.contains("model does not support batching while non-zero max_batch_size"),
        "{message}"
    );
}

#[test]
fn auto_complete_fills_only_what_is_missing() {
    let mut c = config(16, &[("A", FP32, &[4]), ("B", FP32, &[4])], &[]);
    add_model().complete(&mut c, 4).unwrap();
    assert_eq!(c.max_batch_size, 16);
    assert_eq!(c.output.len(), 1);
    assert_eq!(c.output[0].name, "C");
}

#[test]
fn a_one_dimensional_batching_tensor_gets_an_empty_reshape() {
    let f = |dims: &[i64]| info(TensorElementType::Int64, dims);
    let model = Signature {
        inputs: [("IDS".into(), f(&[-1]))].into(),
        overridable: TensorInfos::new(),
        outputs: [("OUT".into(), f(&[-1]))].into(),
    };
    let mut c = config(0, &[], &[]);
    model.complete(&mut c, 4).unwrap();
    assert_eq!(c.input[0].dims, vec![1]);
    assert_eq!(c.input[0].reshape.as_ref().map(|r| r.shape.len()), Some(0));
}
