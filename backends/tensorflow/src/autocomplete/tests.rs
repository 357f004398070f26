use oxiserve_proto::inference::{ModelInput, ModelOutput};

use super::*;
use crate::signature::TensorInfos;

const FP32: i32 = 1;
const INT64: i32 = 9;

fn info(dtype: i32, dims: &[i64]) -> TensorInfo {
    TensorInfo {
        tensor: String::new(),
        dtype,
        dims: dims.to_vec(),
    }
}

/// x [-1,4] FP32 -> scores [-1,3] FP32, label [-1] INT64.
fn batching() -> Signature {
    Signature {
        graph_def: false,
        inputs: TensorInfos::from([("x".into(), info(FP32, &[-1, 4]))]),
        outputs: TensorInfos::from([
            ("label".into(), info(INT64, &[-1])),
            ("scores".into(), info(FP32, &[-1, 3])),
        ]),
    }
}

fn named(name: &str) -> ModelConfig {
    ModelConfig {
        name: name.into(),
        ..Default::default()
    }
}

fn io<T>(
    tensors: &[T],
    each: impl Fn(&T) -> (String, i32, Vec<i64>),
) -> Vec<(String, i32, Vec<i64>)> {
    tensors.iter().map(each).collect()
}

#[test]
fn an_empty_configuration_gets_everything_with_batching() {
    let mut config = named("m");
    batching().complete(&mut config, 4).unwrap();
    assert_eq!(config.max_batch_size, 4);
    assert!(matches!(
        config.scheduling_choice,
        Some(SchedulingChoice::DynamicBatching(_))
    ));
    assert_eq!(
        io(&config.input, |i| (
            i.name.clone(),
            i.data_type,
            i.dims.clone()
        )),
        [("x".to_string(), DataType::Fp32.config_number(), vec![4])]
    );
    let label = &config.output[0];
    assert_eq!(
        (label.name.as_str(), label.dims.as_slice()),
        ("label", &[1][..])
    );
    assert_eq!(label.reshape, Some(ModelTensorReshape { shape: vec![] }));
    assert_eq!(config.output[1].dims, [3]);
}

#[test]
fn a_fixed_first_dimension_does_not_batch() {
    let fixed = Signature {
        graph_def: false,
        inputs: TensorInfos::from([("x".into(), info(FP32, &[2, 4]))]),
        outputs: TensorInfos::from([("y".into(), info(FP32, &[2]))]),
    };
    let mut config = named("m");
    fixed.complete(&mut config, 4).unwrap();
    assert_eq!(config.max_batch_size, 0);
    assert!(config.scheduling_choice.is_none());
    assert_eq!(config.input[0].dims, [2, 4]);
    let mut asks = named("m");
    asks.max_batch_size = 8;
    assert_eq!(
        fixed.complete(&mut asks, 4).unwrap_err().message,
        "unable to autofill for 'm', configuration specified max-batch 8 but model signature \
         does not support batching"
    );
}

#[test]
fn configured_full_dims_mean_no_batching() {
    // dims [-1, 4] spell out the model's whole shape: no batch dimension.
    let mut config = named("m");
    config.input.push(ModelInput {
        name: "x".into(),
        dims: vec![-1, 4],
        ..Default::default()
    });
    batching().complete(&mut config, 4).unwrap();
    assert_eq!(config.max_batch_size, 0);
    assert_eq!(config.input[0].data_type, DataType::Fp32.config_number());
    assert_eq!(config.output[1].dims, [-1, 3]);
}

#[test]
fn given_outputs_are_filled_and_others_left_out() {
    let mut config = named("m");
    config.max_batch_size = 2;
    config.output.push(ModelOutput {
        name: "scores".into(),
        ..Default::default()
    });
    batching().complete(&mut config, 4).unwrap();
    assert_eq!(config.output.len(), 1);
    assert_eq!(
        (config.output[0].data_type, config.output[0].dims.as_slice()),
        (DataType::Fp32.config_number(), &[3][..])
    );
    assert_eq!(config.input.len(), 1, "the missing input is added");
}

#[test]
fn a_graph_def_is_left_as_it_is() {
    let mut graph = batching();
    graph.graph_def = true;
    let mut config = named("m");
    graph.complete(&mut config, 4).unwrap();
    assert_eq!(config, named("m"));
}

#[test]
fn a_scalar_output_cannot_be_completed() {
    let scalar = Signature {
        graph_def: false,
        inputs: TensorInfos::from([("x".into(), info(FP32, &[3]))]),
        outputs: TensorInfos::from([("total".into(), info(FP32, &[]))]),
    };
    let mut config = named("m");
    assert_eq!(
        scalar.complete(&mut config, 4).unwrap_err().message,
        "Unable to autofill for 'm': the rank of model tensor 'total' is 0 which is not supported"
    );
}
