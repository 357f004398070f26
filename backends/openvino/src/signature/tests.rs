use oxiserve_proto::inference::{ModelInput, ModelOutput, model_config::SchedulingChoice};

use super::*;

fn info(name: &str, dtype: ElementType, dims: &[i64]) -> TensorInfo {
    TensorInfo {
        name: name.into(),
        dtype,
        dims: dims.to_vec(),
    }
}

fn add_signature(first: i64) -> Signature {
    Signature {
        inputs: vec![
            info("A", ElementType::F32, &[first, 4]),
            info("B", ElementType::F32, &[first, 4]),
        ],
        outputs: vec![info("C", ElementType::F32, &[first, 4])],
    }
}

fn config(max_batch_size: i32, input_type: DataType, dims: &[i64]) -> ModelConfig {
    let tensor = |name: &str| ModelInput {
        name: name.into(),
        data_type: input_type.config_number(),
        dims: dims.to_vec(),
        ..Default::default()
    };
    ModelConfig {
        name: "add".into(),
        max_batch_size,
        input: vec![tensor("A"), tensor("B")],
        output: vec![ModelOutput {
            name: "C".into(),
            data_type: DataType::Fp32.config_number(),
            dims: dims.to_vec(),
            ..Default::default()
        }],
        ..Default::default()
    }
}

#[test]
fn a_matching_config_passes() {
    add_signature(-1)
        .check(&config(8, DataType::Fp32, &[4]))
        .unwrap();
    add_signature(2)
        .check(&config(0, DataType::Fp32, &[2, 4]))
        .unwrap();
}

#[test]
fn a_wrong_datatype_names_model_and_tensor() {
    let error = add_signature(-1)
        .check(&config(8, DataType::Int32, &[4]))
        .unwrap_err();
    assert_eq!(
        error.message,
        "unable to load model 'add', configuration expects datatype TYPE_INT32 for input 'A', \
         model provides TYPE_FP32"
    );
}

#[test]
fn a_wrong_shape_names_model_and_tensor() {
    let error = add_signature(-1)
        .check(&config(8, DataType::Fp32, &[5]))
        .unwrap_err();
    assert!(
        error
            .message
            .starts_with("model 'add', tensor 'A': the model expects 2 dimensions (shape [-1,4])"),
        "{}",
        error.message
    );
}

#[test]
fn an_unknown_input_lists_the_model_inputs() {
    let mut config = config(8, DataType::Fp32, &[4]);
    config.input[1].name = "X".into();
    let error = add_signature(-1).check(&config).unwrap_err();
    assert_eq!(
        error.message,
        "unexpected inference input 'X', allowed inputs are: A, B"
    );
}

#[test]
fn strings_are_refused() {
    let error = add_signature(-1)
        .check(&config(8, DataType::Bytes, &[4]))
        .unwrap_err();
    assert!(
        error
            .message
            .contains("unsupported datatype TYPE_STRING for input 'A'")
    );
}

#[test]
fn auto_complete_of_a_model_that_batches() {
    let mut config = ModelConfig {
        name: "add".into(),
        ..Default::default()
    };
    add_signature(-1).complete(&mut config, 4).unwrap();
    assert_eq!(config.max_batch_size, 4);
    assert!(matches!(
        config.scheduling_choice,
        Some(SchedulingChoice::DynamicBatching(_))
    ));
    let inputs: Vec<_> = config
        .input
        .iter()
        .map(|i| (i.name.as_str(), i.dims.clone()))
        .collect();
    assert_eq!(inputs, [("A", vec![4]), ("B", vec![4])]);
    assert_eq!(config.output[0].data_type, DataType::Fp32.config_number());
}

#[test]
fn auto_complete_of_a_fixed_model() {
    let mut config = ModelConfig {
        name: "add".into(),
        ..Default::default()
    };
    add_signature(2).complete(&mut config, 4).unwrap();
    assert_eq!(config.max_batch_size, 0);
    assert!(config.scheduling_choice.is_none());
    assert_eq!(config.input[0].dims, vec![2, 4]);
}
