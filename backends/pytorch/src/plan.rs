//! What every instance of a model knows about its tensors, built (and so
//! checked) from the configuration and forward()'s signature at load.

use oxiserve_config::BatchPlan;
use oxiserve_proto::ModelConfig;
use oxiserve_types::{DataType, Result};
use tch::Kind;

use crate::{
    dtype,
    naming::{self, InputLayout},
    params::RunParams,
    signature::{Signature, with_signature},
};

#[derive(Debug)]
pub(crate) struct Plan {
    pub model: String,
    /// Whether the first dimension of every tensor is the batch (max_batch_size > 0).
    pub batching: bool,
    pub inputs: Vec<InputSpec>,
    pub layout: InputLayout,
    pub outputs: Vec<OutputSpec>,
    pub params: RunParams,
}

/// A configured input: a tensor of `kind`, or a list of strings (BYTES).
#[derive(Debug)]
pub(crate) struct InputSpec {
    pub name: String,
    pub kind: Option<Kind>,
}

/// A configured output and where forward()'s result holds it.
#[derive(Debug)]
pub(crate) struct OutputSpec {
    pub name: String,
    pub dtype: DataType,
    /// Its index in a tuple or list result.
    pub position: usize,
}

impl Plan {
    /// Checks `config` against `signature` (when libtorch told it).
    pub(crate) fn new(config: &ModelConfig, signature: Option<&Signature>) -> Result<Self> {
        let model = &config.name;
        let fail =
            |message: String| with_signature(format!("model '{model}': {message}"), signature);
        if config.input.is_empty() {
            return Err(fail(
                "the configuration must list forward()'s inputs, none were given".into(),
            ));
        }
        let names: Vec<String> = config.input.iter().map(|i| i.name.clone()).collect();
        let layout = naming::input_layout(&names, signature).map_err(fail)?;
        let mut inputs = Vec::with_capacity(names.len());
        for (i, input) in config.input.iter().enumerate() {
            let dtype = config_dtype(input.data_type, "input", &input.name).map_err(fail)?;
            let arg = match (&layout, signature) {
                (InputLayout::Positional(positions), Some(s)) => s.args.get(positions[i]),
                _ => None,
            };
            let kind = dtype::to_torch(dtype);
            let wants_strings = arg.is_some_and(|a| a.is_string_list());
            let in_dict = layout == InputLayout::Dict;
            if dtype == DataType::Bytes && (in_dict || arg.is_some_and(|a| !a.is_string_list())) {
                return Err(fail(format!(
                    "input '{}' is TYPE_STRING, which goes to forward() only as a List[str] argument",
                    input.name
                )));
            }
            if wants_strings && dtype != DataType::Bytes {
                return Err(fail(format!(
                    "input '{}' is {}, but its argument takes List[str] (TYPE_STRING)",
                    input.name,
                    dtype.config_name()
                )));
            }
            if kind.is_none() && dtype != DataType::Bytes {
                return Err(fail(format!(
                    "input '{}': {} is not supported by the PyTorch backend",
                    input.name,
                    dtype.config_name()
                )));
            }
            inputs.push(InputSpec {
                name: input.name.clone(),
                kind,
            });
        }
        let output_names: Vec<String> = config.output.iter().map(|o| o.name.clone()).collect();
        let positions = naming::output_positions(&output_names).map_err(fail)?;
        let outputs = config
            .output
            .iter()
            .zip(positions)
            .map(|(output, position)| {
                let dtype = config_dtype(output.data_type, "output", &output.name)?;
                if dtype != DataType::Bytes && dtype::to_torch(dtype).is_none() {
                    return Err(format!(
                        "output '{}': {} is not supported by the PyTorch backend",
                        output.name,
                        dtype.config_name()
                    ));
                }
                Ok(OutputSpec {
                    name: output.name.clone(),
                    dtype,
                    position,
                })
            })
            .collect::<std::result::Result<Vec<_>, String>>()
            .map_err(fail)?;
        Ok(Self {
            model: model.clone(),
            batching: BatchPlan::of(config).is_batching(),
            inputs,
            layout,
            outputs,
            params: RunParams::from_config(config)?,
        })
    }
}

fn config_dtype(number: i32, kind: &str, name: &str) -> std::result::Result<DataType, String> {
    DataType::from_config_number(number)
        .ok_or_else(|| format!("{kind} '{name}' has no valid data_type"))
}

#[cfg(test)]
mod tests {
    use oxiserve_proto::inference::{ModelInput, ModelOutput};

    use super::*;

    fn config(inputs: &[(&str, DataType)], outputs: &[(&str, DataType)]) -> ModelConfig {
        ModelConfig {
            name: "m".into(),
            max_batch_size: 8,
            input: inputs
                .iter()
                .map(|(name, dtype)| ModelInput {
                    name: name.to_string(),
                    data_type: dtype.config_number(),
                    dims: vec![-1],
                    ..Default::default()
                })
                .collect(),
            output: outputs
                .iter()
                .map(|(name, dtype)| ModelOutput {
                    name: name.to_string(),
                    data_type: dtype.config_number(),
                    dims: vec![-1],
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn maps_inputs_and_outputs() {
        let s = Signature::parse("forward(__torch__.M self, Tensor ids, Tensor mask) -> Tensor");
        let plan = Plan::new(
            &config(
                &[("INPUT__1", DataType::Int64), ("INPUT__0", DataType::Int64)],
                &[("OUTPUT__0", DataType::Fp32)],
            ),
            s.as_ref(),
        )
        .unwrap();
        assert!(plan.batching);
        assert_eq!(plan.layout, InputLayout::Positional(vec![1, 0]));
        assert_eq!(plan.inputs[0].kind, Some(Kind::Int64));
        assert_eq!(plan.outputs[0].position, 0);
    }

    #[test]
    fn errors_show_what_forward_takes() {
        let s = Signature::parse("forward(__torch__.M self, Tensor ids, Tensor mask) -> Tensor");
        let error = Plan::new(
            &config(&[("x", DataType::Fp32)], &[("y", DataType::Fp32)]),
            s.as_ref(),
        )
        .unwrap_err();
        assert_eq!(
            error.message,
            "model 'm': the configuration has 1 input(s), forward() takes 2; \
             the model's forward(Tensor ids, Tensor mask) -> Tensor"
        );
    }

    #[test]
    fn strings_only_go_to_string_lists() {
        let s = Signature::parse("forward(__torch__.M self, Tensor x) -> Tensor");
        let error = Plan::new(
            &config(&[("x", DataType::Bytes)], &[("y", DataType::Fp32)]),
            s.as_ref(),
        )
        .unwrap_err();
        assert!(
            error.message.contains("only as a List[str]"),
            "{}",
            error.message
        );
        let s = Signature::parse("forward(__torch__.M self, str[] x) -> str[]");
        let plan = Plan::new(
            &config(&[("x", DataType::Bytes)], &[("y", DataType::Bytes)]),
            s.as_ref(),
        )
        .unwrap();
        assert_eq!(plan.inputs[0].kind, None);
        let s = Signature::parse("forward(__torch__.M self, Dict(str, Tensor) d) -> Tensor");
        let error = Plan::new(
            &config(&[("x", DataType::Bytes)], &[("y", DataType::Fp32)]),
            s.as_ref(),
        )
        .unwrap_err();
        assert!(
            error.message.contains("only as a List[str]"),
            "{}",
            error.message
        );
    }

    #[test]
    fn refuses_unsigned_types_libtorch_lacks() {
        let error = Plan::new(
            &config(&[("x", DataType::Uint32)], &[("y", DataType::Fp32)]),
            None,
        )
        .unwrap_err();
        assert!(
            error.message.contains("TYPE_UINT32 is not supported"),
            "{}",
            error.message
        );
    }
}
