//! A model's inputs and outputs as Triton names them: for a SavedModel, the
//! keys of the served `SignatureDef` (each bound to a graph tensor such as
//! `serving_default_x:0`); for a GraphDef, its `Placeholder` operations as
//! inputs and every other operation as a possible output.

use std::collections::BTreeMap;

use oxiserve_types::{Error, Result};

use crate::{
    capi::TF_DataType,
    dtype,
    meta_graph::{MetaGraphDef, TensorInfo as SignatureTensor},
    session::Session,
};

/// The signature served when the configuration names none.
const DEFAULT_SIGNATURE: &str = "serving_default";
/// Signatures that are never served.
const NOT_SERVED: [&str; 2] = ["__saved_model_init_op", "__saved_model_train_op"];

/// One input or output of the model.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TensorInfo {
    /// The graph tensor it is fed to or fetched from (`operation:index`).
    pub tensor: String,
    pub dtype: TF_DataType,
    /// `-1` for a dynamic dimension; empty when the model gives no shape
    /// (a scalar, an unknown rank, or any GraphDef tensor).
    pub dims: Vec<i64>,
}

/// Tensors by their Triton name, sorted as Triton lists them in messages.
pub(crate) type TensorInfos = BTreeMap<String, TensorInfo>;

/// The model's inputs and outputs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Signature {
    /// A GraphDef's tensors are only possible ones, without shapes.
    pub graph_def: bool,
    pub inputs: TensorInfos,
    pub outputs: TensorInfos,
}

impl Signature {
    /// The signature `wanted` (or the default one) of a SavedModel's graph.
    pub(crate) fn of_saved_model(
        meta_graph: &MetaGraphDef,
        wanted: Option<&str>,
        model: &str,
    ) -> Result<Self> {
        let key = wanted.unwrap_or(DEFAULT_SIGNATURE);
        let signatures = &meta_graph.signature_def;
        let (name, def) = match signatures.get_key_value(key) {
            Some(found) => found,
            None => {
                let mut served: Vec<&String> = signatures
                    .keys()
                    .filter(|k| !NOT_SERVED.contains(&k.as_str()))
                    .collect();
                served.sort();
                match served.first() {
                    Some(&first) if wanted.is_none() => {
                        log::warn!(
                            "unable to find serving signature '{DEFAULT_SIGNATURE}' in model \
                             '{model}'; using signature '{first}'"
                        );
                        (first, &signatures[first])
                    }
                    _ => {
                        return Err(Error::invalid_arg(format!(
                            "unable to load model '{model}', expected '{key}' signature; the \
                             SavedModel has: {}",
                            if served.is_empty() {
                                "none".to_string()
                            } else {
                                join(&served)
                            }
                        )));
                    }
                }
            }
        };
        log::debug!("model '{model}': serving signature '{name}'");
        Ok(Self {
            graph_def: false,
            inputs: tensors(&def.inputs, "input", model)?,
            outputs: tensors(&def.outputs, "output", model)?,
        })
    }

    /// A GraphDef's possible inputs (its `Placeholder`s) and outputs (every
    /// other operation that has an output), each its operation's first tensor.
    pub(crate) fn of_graph(session: &Session) -> Self {
        let mut signature = Self {
            graph_def: true,
            inputs: TensorInfos::new(),
            outputs: TensorInfos::new(),
        };
        for op in session.operations() {
            let Some(output) = session.output(&op.name) else {
                continue;
            };
            let info = TensorInfo {
                tensor: format!("{}:0", op.name),
                dtype: session.output_type(output),
                dims: Vec::new(),
            };
            if op.op_type == "Placeholder" {
                signature.inputs.insert(op.name, info);
            } else {
                signature.outputs.insert(op.name, info);
            }
        }
        signature
    }
}

fn tensors(
    map: &std::collections::HashMap<String, SignatureTensor>,
    direction: &str,
    model: &str,
) -> Result<TensorInfos> {
    map.iter()
        .map(|(name, info)| {
            if dtype::from_tf(info.dtype).is_none() {
                return Err(Error::invalid_arg(format!(
                    "unable to process {direction} '{name}' for '{model}', unsupported datatype \
                     '{}'",
                    dtype::tf_name(info.dtype)
                )));
            }
            if info.name.is_empty() {
                return Err(Error::invalid_arg(format!(
                    "unable to process {direction} '{name}' for '{model}', only dense tensors \
                     are supported"
                )));
            }
            let dims = info
                .tensor_shape
                .as_ref()
                .filter(|shape| !shape.unknown_rank)
                .map(|shape| shape.dim.iter().map(|d| d.size).collect())
                .unwrap_or_default();
            Ok((
                name.clone(),
                TensorInfo {
                    tensor: info.name.clone(),
                    dtype: info.dtype,
                    dims,
                },
            ))
        })
        .collect()
}

/// Names as Triton lists them: `a, b, c` (a GraphDef's long lists cut short).
pub(crate) fn join<S: AsRef<str>>(names: &[S]) -> String {
    const SHOWN: usize = 32;
    let mut text = names
        .iter()
        .take(SHOWN)
        .map(AsRef::as_ref)
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        text.push_str(&format!(", ... ({} more)", names.len() - SHOWN));
    }
    text
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::meta_graph::{Dim, SignatureDef, TensorShapeProto};

    fn tensor(name: &str, dtype: i32, dims: &[i64]) -> SignatureTensor {
        SignatureTensor {
            name: name.into(),
            dtype,
            tensor_shape: Some(TensorShapeProto {
                dim: dims.iter().map(|&size| Dim { size }).collect(),
                unknown_rank: false,
            }),
        }
    }

    fn meta_graph(keys: &[&str]) -> MetaGraphDef {
        let def = SignatureDef {
            inputs: HashMap::from([("x".into(), tensor("serving_default_x:0", 1, &[-1, 4]))]),
            outputs: HashMap::from([("y".into(), tensor("StatefulPartitionedCall:0", 1, &[-1]))]),
        };
        MetaGraphDef {
            meta_info_def: None,
            signature_def: keys.iter().map(|k| (k.to_string(), def.clone())).collect(),
        }
    }

    #[test]
    fn serves_the_default_signature_by_its_keys() {
        let s = Signature::of_saved_model(&meta_graph(&["serving_default"]), None, "m").unwrap();
        assert_eq!(s.inputs["x"].tensor, "serving_default_x:0");
        assert_eq!(s.inputs["x"].dims, [-1, 4]);
        assert_eq!(s.outputs["y"].tensor, "StatefulPartitionedCall:0");
    }

    #[test]
    fn falls_back_to_a_served_signature_only_when_none_is_named() {
        let graph = meta_graph(&["__saved_model_init_op", "predict"]);
        assert!(Signature::of_saved_model(&graph, None, "m").is_ok());
        let error = Signature::of_saved_model(&graph, Some("double"), "m").unwrap_err();
        assert_eq!(
            error.message,
            "unable to load model 'm', expected 'double' signature; the SavedModel has: predict"
        );
    }

    #[test]
    fn refuses_types_triton_has_none_for() {
        let mut graph = meta_graph(&["serving_default"]);
        let def = graph.signature_def.get_mut("serving_default").unwrap();
        def.inputs.insert("c".into(), tensor("c:0", 8, &[2]));
        let error = Signature::of_saved_model(&graph, None, "m").unwrap_err();
        assert!(
            error.message.contains(
                "unable to process input 'c' for 'm', unsupported datatype 'DataType(8)'"
            ),
            "{}",
            error.message
        );
    }
}
