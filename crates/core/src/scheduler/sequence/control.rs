//! Control inputs (`control_input [ ... ]`): the tensors the sequence batcher
//! adds to each request so the model sees START, END, READY and CORRID.

use bytes::Bytes;
use oxiserve_config::BatchPlan;
use oxiserve_proto::inference::{ModelSequenceBatching, model_sequence_batching::control::Kind};
use oxiserve_types::{DataType, Error, Result, Tensor, encode_bytes_elements};

use super::state::{Control, CorrId};

/// One control input and how to fill it.
#[derive(Debug, Clone, PartialEq)]
enum Fill {
    /// A flag as the (false, true) value pair of its data type.
    Flag {
        kind: Kind,
        dtype: DataType,
        false_true: [Bytes; 2],
    },
    /// The correlation id as `dtype`.
    CorrId { dtype: DataType },
}

/// The control inputs of one model.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Controls {
    inputs: Vec<(String, Fill)>,
    /// Whether tensors get a leading batch dimension.
    batched: bool,
}

impl Controls {
    /// The control inputs `config` declares.
    pub fn new(config: &ModelSequenceBatching, batch: BatchPlan) -> Result<Self> {
        let mut inputs = Vec::new();
        for input in &config.control_input {
            for control in &input.control {
                let kind = Kind::try_from(control.kind).map_err(|_| {
                    Error::invalid_arg(format!("unknown control kind for '{}'", input.name))
                })?;
                let fill = fill(kind, control, &input.name)?;
                inputs.push((input.name.clone(), fill));
            }
        }
        Ok(Self {
            inputs,
            batched: batch.is_batching(),
        })
    }

    /// The control tensors of a request executing with `control`.
    pub fn tensors(&self, control: &Control) -> Vec<Tensor> {
        let shape = if self.batched { vec![1, 1] } else { vec![1] };
        self.inputs
            .iter()
            .map(|(name, fill)| {
                let (dtype, data) = match fill {
                    Fill::Flag {
                        kind,
                        dtype,
                        false_true,
                    } => {
                        let on = match kind {
                            Kind::ControlSequenceStart => control.start,
                            Kind::ControlSequenceEnd => control.end,
                            _ => control.ready,
                        };
                        (*dtype, false_true[usize::from(on)].clone())
                    }
                    Fill::CorrId { dtype } => (*dtype, corrid_bytes(*dtype, &control.corrid)),
                };
                Tensor::new(name.clone(), dtype, shape.clone(), data)
            })
            .collect()
    }
}

fn fill(
    kind: Kind,
    control: &oxiserve_proto::inference::model_sequence_batching::Control,
    name: &str,
) -> Result<Fill> {
    if kind == Kind::ControlSequenceCorrid {
        let dtype = DataType::from_config_number(control.data_type)
            .filter(|d| {
                matches!(
                    d,
                    DataType::Uint64
                        | DataType::Int64
                        | DataType::Uint32
                        | DataType::Int32
                        | DataType::Bytes
                )
            })
            .ok_or_else(|| {
                Error::invalid_arg(format!(
                    "unexpected control data type, expected TYPE_UINT64, TYPE_INT64, \
                     TYPE_UINT32, TYPE_INT32, or TYPE_STRING for {} for control {name}",
                    kind.as_str_name()
                ))
            })?;
        return Ok(Fill::CorrId { dtype });
    }
    let pair = |values: [Bytes; 2], dtype| Fill::Flag {
        kind,
        dtype,
        false_true: values,
    };
    if let [f, t] = control.int32_false_true[..] {
        let bytes = |v: i32| Bytes::copy_from_slice(&v.to_le_bytes());
        return Ok(pair([bytes(f), bytes(t)], DataType::Int32));
    }
    if let [f, t] = control.fp32_false_true[..] {
        let bytes = |v: f32| Bytes::copy_from_slice(&v.to_le_bytes());
        return Ok(pair([bytes(f), bytes(t)], DataType::Fp32));
    }
    if let [f, t] = control.bool_false_true[..] {
        let bytes = |v: bool| Bytes::copy_from_slice(&[u8::from(v)]);
        return Ok(pair([bytes(f), bytes(t)], DataType::Bool));
    }
    Err(Error::invalid_arg(format!(
        "sequence batching control '{name}' must specify two values in \
         int32_false_true, fp32_false_true or bool_false_true"
    )))
}

/// The correlation id as one element of `dtype` (a string id as BYTES; an
/// integer id truncated to a 32-bit type as Triton does).
fn corrid_bytes(dtype: DataType, corrid: &CorrId) -> Bytes {
    match (dtype, corrid) {
        (DataType::Bytes, id) => encode_bytes_elements([id.to_string().into_bytes()]),
        (_, CorrId::Str(_)) => zero(dtype),
        (DataType::Uint64 | DataType::Int64, CorrId::Uint(id)) => {
            Bytes::copy_from_slice(&id.to_le_bytes())
        }
        (_, CorrId::Uint(id)) => Bytes::copy_from_slice(&(*id as u32).to_le_bytes()),
    }
}

fn zero(dtype: DataType) -> Bytes {
    Bytes::from(vec![0; dtype.element_size().unwrap_or(8)])
}

#[cfg(test)]
mod tests {
    use oxiserve_config::BatchPlan;
    use oxiserve_proto::inference::model_sequence_batching::{
        Control as ControlConfig, ControlInput,
    };

    use super::*;

    fn control(kind: Kind) -> ControlConfig {
        ControlConfig {
            kind: kind as i32,
            ..Default::default()
        }
    }

    fn config() -> ModelSequenceBatching {
        let input = |name: &str, control| ControlInput {
            name: name.into(),
            control: vec![control],
        };
        ModelSequenceBatching {
            control_input: vec![
                input(
                    "START",
                    ControlConfig {
                        int32_false_true: vec![0, 1],
                        ..control(Kind::ControlSequenceStart)
                    },
                ),
                input(
                    "END",
                    ControlConfig {
                        fp32_false_true: vec![0.0, 1.0],
                        ..control(Kind::ControlSequenceEnd)
                    },
                ),
                input(
                    "READY",
                    ControlConfig {
                        bool_false_true: vec![false, true],
                        ..control(Kind::ControlSequenceReady)
                    },
                ),
                input(
                    "CORRID",
                    ControlConfig {
                        data_type: oxiserve_proto::inference::DataType::TypeUint64 as i32,
                        ..control(Kind::ControlSequenceCorrid)
                    },
                ),
            ],
            ..Default::default()
        }
    }

    #[test]
    fn control_values_follow_the_declared_types() {
        let controls = Controls::new(&config(), BatchPlan::with_max_batch_size(4)).unwrap();
        let tensors = controls.tensors(&Control {
            start: true,
            end: false,
            ready: true,
            corrid: CorrId::Uint(42),
        });
        let view: Vec<(&str, DataType, &[i64], &[u8])> = tensors
            .iter()
            .map(|t| (t.name.as_str(), t.datatype, &t.shape[..], &t.data[..]))
            .collect();
        assert_eq!(
            view,
            vec![
                (
                    "START",
                    DataType::Int32,
                    &[1, 1][..],
                    &1i32.to_le_bytes()[..]
                ),
                ("END", DataType::Fp32, &[1, 1][..], &0f32.to_le_bytes()[..]),
                ("READY", DataType::Bool, &[1, 1][..], &[1u8][..]),
                (
                    "CORRID",
                    DataType::Uint64,
                    &[1, 1][..],
                    &42u64.to_le_bytes()[..]
                ),
            ]
        );
    }

    #[test]
    fn unbatched_models_get_one_element_tensors_and_string_ids() {
        let mut sb = config();
        sb.control_input[3].control[0].data_type =
            oxiserve_proto::inference::DataType::TypeString as i32;
        let controls = Controls::new(&sb, BatchPlan::default()).unwrap();
        let tensors = controls.tensors(&Control {
            start: false,
            end: true,
            ready: true,
            corrid: CorrId::Str("abc".into()),
        });
        assert!(tensors.iter().all(|t| t.shape == [1]));
        assert_eq!(&tensors[0].data[..], &0i32.to_le_bytes());
        assert_eq!(&tensors[1].data[..], &1f32.to_le_bytes());
        assert_eq!(&tensors[3].data[..], b"\x03\x00\x00\x00abc");
    }

    #[test]
    fn a_flag_without_two_values_is_refused() {
        let mut sb = config();
        sb.control_input[0].control[0].int32_false_true = vec![1];
        assert!(Controls::new(&sb, BatchPlan::default()).is_err());
    }
}
