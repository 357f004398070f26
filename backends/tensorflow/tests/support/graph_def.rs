//! GraphDef files written by the tests: the few `tensorflow.GraphDef`
//! fields a graph of placeholders and element-wise operations needs,
//! encoded with prost (field numbers of tensorflow/core/framework/graph.proto,
//! node_def.proto, attr_value.proto).

use std::collections::HashMap;

use prost::Message;

/// `DT_FLOAT`.
pub const FLOAT: i32 = 1;

#[derive(Clone, PartialEq, Message)]
struct GraphDef {
    #[prost(message, repeated, tag = "1")]
    node: Vec<NodeDef>,
    #[prost(message, optional, tag = "4")]
    versions: Option<VersionDef>,
}

#[derive(Clone, PartialEq, Message)]
struct VersionDef {
    #[prost(int32, tag = "1")]
    producer: i32,
}

#[derive(Clone, PartialEq, Message)]
struct NodeDef {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(string, tag = "2")]
    op: String,
    #[prost(string, repeated, tag = "3")]
    input: Vec<String>,
    #[prost(map = "string, message", tag = "5")]
    attr: HashMap<String, AttrValue>,
}

/// `AttrValue` holding a type (`type`, field 6).
#[derive(Clone, PartialEq, Message)]
struct AttrValue {
    #[prost(int32, tag = "6")]
    r#type: i32,
}

fn node(name: &str, op: &str, inputs: &[&str], type_attr: &str, dtype: i32) -> NodeDef {
    NodeDef {
        name: name.into(),
        op: op.into(),
        input: inputs.iter().map(|i| i.to_string()).collect(),
        attr: HashMap::from([(type_attr.to_string(), AttrValue { r#type: dtype })]),
    }
}

/// `C = A + B` over placeholders `A`, `B` of `dtype` (any shape).
pub fn add(dtype: i32) -> Vec<u8> {
    GraphDef {
        node: vec![
            node("A", "Placeholder", &[], "dtype", dtype),
            node("B", "Placeholder", &[], "dtype", dtype),
            node("C", "AddV2", &["A", "B"], "T", dtype),
        ],
        versions: Some(VersionDef { producer: 1994 }),
    }
    .encode_to_vec()
}
