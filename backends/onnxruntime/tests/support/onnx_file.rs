//! Writes small ONNX models for the tests: the protobuf encoding of a
//! `ModelProto` with one graph of single-output nodes, no initializers.

/// A graph input or output: name, ONNX element type number, dims (`-1` is a
/// dynamic dimension).
pub struct Io<'a>(pub &'a str, pub i64, pub &'a [i64]);

/// ONNX element type numbers.
pub const FLOAT: i64 = 1;
pub const STRING: i64 = 8;

/// A model of `nodes` (op type, inputs, output) from `inputs` to `outputs`.
pub fn model(nodes: &[(&str, &[&str], &str)], inputs: &[Io], outputs: &[Io]) -> Vec<u8> {
    let mut graph = Vec::new();
    for (op, node_inputs, output) in nodes {
        let mut node = Vec::new();
        for input in *node_inputs {
            field_bytes(&mut node, 1, input.as_bytes());
        }
        field_bytes(&mut node, 2, output.as_bytes());
        field_bytes(&mut node, 4, op.as_bytes());
        field_bytes(&mut graph, 1, &node);
    }
    field_bytes(&mut graph, 2, b"test");
    for io in inputs {
        field_bytes(&mut graph, 11, &value_info(io));
    }
    for io in outputs {
        field_bytes(&mut graph, 12, &value_info(io));
    }
    let mut opset = Vec::new();
    field_bytes(&mut opset, 1, b"");
    field_varint(&mut opset, 2, 17);
    let mut model = Vec::new();
    field_varint(&mut model, 1, 8); // ir_version
    field_bytes(&mut model, 7, &graph);
    field_bytes(&mut model, 8, &opset);
    model
}

fn value_info(Io(name, elem_type, dims): &Io) -> Vec<u8> {
    let mut shape = Vec::new();
    for &d in *dims {
        let mut dim = Vec::new();
        if d < 0 {
            field_bytes(&mut dim, 2, b"N");
        } else {
            field_varint(&mut dim, 1, d as u64);
        }
        field_bytes(&mut shape, 1, &dim);
    }
    let mut tensor = Vec::new();
    field_varint(&mut tensor, 1, *elem_type as u64);
    field_bytes(&mut tensor, 2, &shape);
    let mut type_proto = Vec::new();
    field_bytes(&mut type_proto, 1, &tensor);
    let mut info = Vec::new();
    field_bytes(&mut info, 1, name.as_bytes());
    field_bytes(&mut info, 2, &type_proto);
    info
}

fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn field_varint(out: &mut Vec<u8>, number: u64, value: u64) {
    varint(out, number << 3);
    varint(out, value);
}

fn field_bytes(out: &mut Vec<u8>, number: u64, bytes: &[u8]) {
    varint(out, (number << 3) | 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}
