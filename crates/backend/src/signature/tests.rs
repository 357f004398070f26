use super::*;

fn batching() -> BatchPlan {
    BatchPlan::with_max_batch_size(8)
}

/// A dynamic model dimension matches any configured one.
fn dynamic(m: i64, c: i64) -> bool {
    m == -1 || m == c
}

#[test]
fn the_reshape_is_the_checked_shape() {
    let reshape = Some(ModelTensorReshape { shape: vec![4] });
    assert_eq!(checked_dims(&[2, 2], &reshape), [4]);
    assert_eq!(checked_dims(&[2, 2], &None), [2, 2]);
}

#[test]
fn messages_are_tritons() {
    assert_eq!(
        unexpected_tensor("output", "y", "a, b").message,
        "unexpected inference output 'y', allowed outputs are: a, b"
    );
    assert_eq!(
        input_count_mismatch("m", 2, 1).message,
        "unable to load model 'm', configuration expects 2 inputs, model provides 1"
    );
    assert_eq!(
        datatype_mismatch("m", "input", "x", 11, Some(DataType::Int64)).message,
        "unable to load model 'm', configuration expects datatype TYPE_FP32 for input 'x', \
         model provides TYPE_INT64"
    );
    assert_eq!(
        datatype_mismatch("m", "input", "x", 99, None).message,
        "unable to load model 'm', configuration expects datatype TYPE_INVALID for input 'x', \
         model provides TYPE_INVALID"
    );
}

#[test]
fn a_batching_model_needs_a_dynamic_first_dimension() {
    assert!(require_batch_dimension("m", "x", &[-1, 4], batching()).is_ok());
    assert!(require_batch_dimension("m", "x", &[4], BatchPlan::default()).is_ok());
    let error = require_batch_dimension("m", "x", &[2, 4], batching()).unwrap_err();
    assert_eq!(
        error.message,
        "model 'm', tensor 'x': for the model to support batching the shape should have at \
         least 1 dimension and the first dimension must be -1; but shape expected by the model \
         is [2,4]"
    );
}

#[test]
fn dims_are_compared_with_the_batch_dimension_in_front() {
    assert!(compare_dims("m", "x", &[-1, 4], &[4], batching(), dynamic).is_ok());
    assert!(compare_dims("m", "x", &[-1, -1], &[4], batching(), dynamic).is_ok());
    assert!(compare_dims("m", "x", &[-1, 4], &[-1], batching(), dynamic).is_err());
    assert!(compare_dims("m", "x", &[3], &[3], BatchPlan::default(), dynamic).is_ok());
    let error = compare_dims("m", "x", &[-1, 4], &[4, 1], batching(), dynamic).unwrap_err();
    assert_eq!(
        error.message,
        "model 'm', tensor 'x': the model expects 2 dimensions (shape [-1,4]) but the model \
         configuration specifies 3 dimensions (an initial batch dimension because \
         max_batch_size > 0 followed by the explicit tensor shape, making complete shape \
         [-1,4,1])"
    );
    let error = compare_dims("m", "x", &[3], &[4], BatchPlan::default(), dynamic).unwrap_err();
    assert_eq!(
        error.message,
        "model 'm', tensor 'x': the model expects 1 dimensions (shape [3]) but the model \
         configuration specifies 1 dimensions (shape [4])"
    );
}

#[test]
fn completed_dims_leave_out_the_batch_dimension() {
    assert_eq!(completed_dims(&[-1, 4], true), (vec![4], None));
    assert_eq!(completed_dims(&[-1, 4], false), (vec![-1, 4], None));
    assert_eq!(
        completed_dims(&[-1], true),
        (vec![1], Some(ModelTensorReshape { shape: vec![] }))
    );
    assert_eq!(completed_dims(&[], false), (vec![1], None));
}

#[test]
fn a_model_that_batches_gets_the_default_max_batch_size_and_the_dynamic_batcher() {
    let mut config = ModelConfig::default();
    complete_batching(&mut config, 4);
    assert_eq!(config.max_batch_size, 4);
    assert!(matches!(
        config.scheduling_choice,
        Some(SchedulingChoice::DynamicBatching(_))
    ));
    let mut config = ModelConfig {
        max_batch_size: 1,
        ..Default::default()
    };
    complete_batching(&mut config, 4);
    assert_eq!(config.max_batch_size, 1);
    assert!(config.scheduling_choice.is_none());
}

#[test]
fn a_completed_tensor_becomes_an_input_or_an_output() {
    let tensor = CompletedTensor::new("x", Some(DataType::Fp32), &[-1], true);
    let input = tensor.clone().input();
    assert_eq!((input.name.as_str(), input.data_type), ("x", 11));
    assert_eq!(input.dims, [1]);
    assert_eq!(input.reshape, Some(ModelTensorReshape { shape: vec![] }));
    let output = CompletedTensor::new("y", None, &[2, 3], false).output();
    assert_eq!((output.name.as_str(), output.data_type), ("y", 0));
    assert_eq!(output.dims, [2, 3]);
}
