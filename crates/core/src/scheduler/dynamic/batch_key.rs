//! Which requests may share a batch. Like Triton, the batcher compares the
//! shapes (without the batch dimension) of the inputs that may vary, unless
//! the input says `allow_ragged_batch`, and the contents of shape tensors;
//! a model with optional inputs also needs the same inputs in every request.

use oxiserve_config::BatchPlan;
use oxiserve_proto::ModelConfig;
use oxiserve_types::InferRequest;

/// What requests of one batch have in common; equal keys may batch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct BatchKey(Vec<i64>);

impl BatchKey {
    /// A key made of `parts` (for tests).
    #[cfg(test)]
    pub fn of(parts: &[i64]) -> Self {
        Self(parts.to_vec())
    }
}

/// One input whose shape decides the batch.
#[derive(Debug)]
struct Enforced {
    name: String,
    /// A shape tensor: its contents must be equal too.
    contents: bool,
    /// Padded to the batch's longest: only the rank must be equal.
    rank_only: bool,
}

/// The inputs a model's batches must agree on.
#[derive(Debug, Default)]
pub(crate) struct ShapeRule {
    enforced: Vec<Enforced>,
    /// Every input name, when some input is optional.
    presence: Vec<String>,
    /// Whether tensors carry a batch dimension to leave out.
    batching: bool,
}

impl ShapeRule {
    /// The rule of `config`; the inputs named in `padded` are padded to
    /// the batch's longest, so only their rank matters.
    pub fn new(config: &ModelConfig, padded: &[String]) -> Self {
        let enforced = config
            .input
            .iter()
            .filter(|i| i.is_shape_tensor || (!i.allow_ragged_batch && i.dims.contains(&-1)))
            .map(|i| Enforced {
                name: i.name.clone(),
                contents: i.is_shape_tensor,
                rank_only: padded.contains(&i.name),
            })
            .collect();
        let presence = if config.input.iter().any(|i| i.optional) {
            config.input.iter().map(|i| i.name.clone()).collect()
        } else {
            Vec::new()
        };
        Self {
            enforced,
            presence,
            batching: BatchPlan::of(config).is_batching(),
        }
    }

    /// The key of `request`; every request has the same key when nothing
    /// needs comparing.
    pub fn key(&self, request: &InferRequest) -> BatchKey {
        let mut parts = Vec::new();
        for name in &self.presence {
            parts.push(i64::from(request.input(name).is_some()));
        }
        for input in &self.enforced {
            let Some(tensor) = request.input(&input.name) else {
                parts.push(-1);
                continue;
            };
            let dims = tensor
                .shape
                .get(usize::from(self.batching)..)
                .unwrap_or(&[]);
            parts.push(dims.len() as i64);
            if !input.rank_only {
                parts.extend_from_slice(dims);
            }
            if input.contents {
                parts.push(tensor.data.len() as i64);
                parts.extend(tensor.data.iter().map(|b| i64::from(*b)));
            }
        }
        BatchKey(parts)
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use oxiserve_proto::inference::ModelInput;
    use oxiserve_types::{DataType, Tensor};

    use super::*;

    fn input(name: &str, dims: &[i64]) -> ModelInput {
        ModelInput {
            name: name.into(),
            dims: dims.to_vec(),
            ..Default::default()
        }
    }

    fn request(shapes: &[(&str, &[i64])]) -> InferRequest {
        InferRequest {
            inputs: shapes
                .iter()
                .map(|(n, s)| Tensor::new(*n, DataType::Int32, s.to_vec(), Bytes::new()))
                .collect(),
            ..Default::default()
        }
    }

    fn config(inputs: Vec<ModelInput>) -> ModelConfig {
        ModelConfig {
            max_batch_size: 8,
            input: inputs,
            ..Default::default()
        }
    }

    #[test]
    fn fixed_shapes_always_batch() {
        let rule = ShapeRule::new(&config(vec![input("A", &[4])]), &[]);
        assert_eq!(
            rule.key(&request(&[("A", &[1, 4])])),
            rule.key(&request(&[("A", &[3, 4])]))
        );
    }

    #[test]
    fn variable_shapes_must_match_beyond_the_batch_dimension() {
        let rule = ShapeRule::new(&config(vec![input("A", &[-1]), input("B", &[2])]), &[]);
        let a2 = rule.key(&request(&[("A", &[1, 2]), ("B", &[1, 2])]));
        let a2_batch3 = rule.key(&request(&[("A", &[3, 2]), ("B", &[3, 2])]));
        let a5 = rule.key(&request(&[("A", &[1, 5]), ("B", &[1, 2])]));
        assert_eq!(a2, a2_batch3);
        assert_ne!(a2, a5);
    }

    #[test]
    fn ragged_inputs_are_not_compared() {
        let mut ragged = input("A", &[-1]);
        ragged.allow_ragged_batch = true;
        let rule = ShapeRule::new(&config(vec![ragged]), &[]);
        assert_eq!(
            rule.key(&request(&[("A", &[1, 2])])),
            rule.key(&request(&[("A", &[1, 7])]))
        );
    }

    #[test]
    fn optional_inputs_must_be_present_alike() {
        let mut optional = input("B", &[2]);
        optional.optional = true;
        let rule = ShapeRule::new(&config(vec![input("A", &[2]), optional]), &[]);
        assert_ne!(
            rule.key(&request(&[("A", &[1, 2])])),
            rule.key(&request(&[("A", &[1, 2]), ("B", &[1, 2])]))
        );
    }

    #[test]
    fn shape_tensor_contents_are_compared() {
        let mut shape = input("S", &[1]);
        shape.is_shape_tensor = true;
        let rule = ShapeRule::new(&config(vec![shape]), &[]);
        let with = |b: &'static [u8]| InferRequest {
            inputs: vec![Tensor::new(
                "S",
                DataType::Int32,
                vec![1, 1],
                Bytes::from(b),
            )],
            ..Default::default()
        };
        assert_eq!(
            rule.key(&with(&[1, 0, 0, 0])),
            rule.key(&with(&[1, 0, 0, 0]))
        );
        assert_ne!(
            rule.key(&with(&[1, 0, 0, 0])),
            rule.key(&with(&[2, 0, 0, 0]))
        );
    }

    #[test]
    fn padded_inputs_only_need_the_same_rank() {
        let rule = ShapeRule::new(&config(vec![input("A", &[-1])]), &["A".to_string()]);
        let short = rule.key(&request(&[("A", &[1, 3])]));
        assert_eq!(short, rule.key(&request(&[("A", &[1, 7])])));
        assert_ne!(short, rule.key(&request(&[("A", &[1, 7, 2])])));
    }
}
