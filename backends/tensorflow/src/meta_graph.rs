//! The parts of TensorFlow's protobuf messages this backend reads or
//! writes, declared with prost by field number (tensorflow/core/protobuf/
//! meta_graph.proto, tensor_shape.proto, config.proto). Fields left out are
//! skipped when decoding.

use std::collections::HashMap;

use prost::Message;

/// `MetaGraphDef`: what `TF_LoadSessionFromSavedModel` hands back.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct MetaGraphDef {
    #[prost(message, optional, tag = "1")]
    pub meta_info_def: Option<MetaInfoDef>,
    #[prost(map = "string, message", tag = "5")]
    pub signature_def: HashMap<String, SignatureDef>,
}

/// `MetaGraphDef.MetaInfoDef`: the graph's tags.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct MetaInfoDef {
    #[prost(string, repeated, tag = "4")]
    pub tags: Vec<String>,
}

/// `SignatureDef`: named inputs and outputs, each bound to a graph tensor.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct SignatureDef {
    #[prost(map = "string, message", tag = "1")]
    pub inputs: HashMap<String, TensorInfo>,
    #[prost(map = "string, message", tag = "2")]
    pub outputs: HashMap<String, TensorInfo>,
}

/// `TensorInfo`, dense tensors only (`name` empty for sparse or composite ones).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct TensorInfo {
    /// The graph tensor, `operation:index`.
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(int32, tag = "2")]
    pub dtype: i32,
    #[prost(message, optional, tag = "3")]
    pub tensor_shape: Option<TensorShapeProto>,
}

/// `TensorShapeProto`: `-1` for an unknown dimension.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct TensorShapeProto {
    #[prost(message, repeated, tag = "2")]
    pub dim: Vec<Dim>,
    #[prost(bool, tag = "3")]
    pub unknown_rank: bool,
}

/// `TensorShapeProto.Dim`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct Dim {
    #[prost(int64, tag = "1")]
    pub size: i64,
}

/// `ConfigProto`: the session settings Triton's parameters set.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct ConfigProto {
    #[prost(int32, tag = "2")]
    pub intra_op_parallelism_threads: i32,
    #[prost(int32, tag = "5")]
    pub inter_op_parallelism_threads: i32,
    #[prost(bool, tag = "7")]
    pub allow_soft_placement: bool,
    #[prost(bool, tag = "9")]
    pub use_per_session_threads: bool,
}

impl MetaGraphDef {
    /// Reads the bytes TensorFlow filled in.
    pub(crate) fn decode_from(bytes: &[u8]) -> Result<Self, String> {
        Self::decode(bytes).map_err(|e| format!("its MetaGraphDef could not be read: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_signatures_and_skips_the_rest() {
        let mut signature = SignatureDef::default();
        signature.inputs.insert(
            "x".into(),
            TensorInfo {
                name: "serving_default_x:0".into(),
                dtype: 1,
                tensor_shape: Some(TensorShapeProto {
                    dim: vec![Dim { size: -1 }, Dim { size: 4 }],
                    unknown_rank: false,
                }),
            },
        );
        let mut bytes = MetaGraphDef {
            meta_info_def: Some(MetaInfoDef {
                tags: vec!["serve".into()],
            }),
            signature_def: HashMap::from([("serving_default".into(), signature.clone())]),
        }
        .encode_to_vec();
        // A graph_def (field 2) the declaration leaves out.
        bytes.extend_from_slice(&[0x12, 0x02, 0x0a, 0x00]);
        let read = MetaGraphDef::decode_from(&bytes).unwrap();
        assert_eq!(read.signature_def["serving_default"], signature);
        assert_eq!(read.meta_info_def.unwrap().tags, ["serve"]);
    }
}
