//! Tensor data as the JSON `data` arrays of KServe v2 HTTP: row-major
//! elements, BYTES as strings, BOOL as booleans, FP16 and BF16 as numbers.

use bytes::{BufMut, Bytes, BytesMut};
use half::{bf16, f16};
use oxiserve_types::{DataType, bytes_elements, element_count};
use serde_json::{Value, json};

use crate::{
    element::Element,
    error::{Error, Result},
};

/// The JSON elements of tensor `name`'s `data` (wire layout) of `datatype`
/// and `shape`.
pub fn json_data(name: &str, datatype: DataType, shape: &[i64], data: &[u8]) -> Result<Vec<Value>> {
    let d = data;
    Ok(match datatype {
        DataType::Bytes => {
            let count = element_count(shape)
                .ok_or_else(|| Error::invalid_arg(format!("input '{name}' has shape {shape:?}")))?;
            let elements =
                bytes_elements(name, d, count).map_err(|e| Error::invalid_arg(e.message))?;
            let mut values = Vec::with_capacity(elements.len());
            for e in elements {
                let text = std::str::from_utf8(e).map_err(|_| {
                    Error::invalid_arg(format!(
                        "input '{name}' holds bytes that are not UTF-8: send it as binary data"
                    ))
                })?;
                values.push(Value::String(text.into()));
            }
            values
        }
        DataType::Bool => values::<bool>(d, |v| json!(v)),
        DataType::Uint8 => values::<u8>(d, |v| json!(v)),
        DataType::Int8 => values::<i8>(d, |v| json!(v)),
        DataType::Uint16 => values::<u16>(d, |v| json!(v)),
        DataType::Int16 => values::<i16>(d, |v| json!(v)),
        DataType::Uint32 => values::<u32>(d, |v| json!(v)),
        DataType::Int32 => values::<i32>(d, |v| json!(v)),
        DataType::Uint64 => values::<u64>(d, |v| json!(v)),
        DataType::Int64 => values::<i64>(d, |v| json!(v)),
        DataType::Fp16 => values::<f16>(d, |v| json!(v.to_f32())),
        DataType::Bf16 => values::<bf16>(d, |v| json!(v.to_f32())),
        DataType::Fp32 => values::<f32>(d, |v| json!(v)),
        DataType::Fp64 => values::<f64>(d, |v| json!(v)),
    })
}

/// The wire layout of output `name`'s JSON `data` (nested arrays are read
/// row-major) of `datatype`.
pub(crate) fn data_from_json(name: &str, datatype: DataType, data: &Value) -> Result<Bytes> {
    let mut flat = Vec::new();
    flatten(data, &mut flat);
    let mut out = BytesMut::new();
    for v in flat {
        let ok = match datatype {
            DataType::Bytes => v.as_str().map(|s| {
                out.put_u32_le(s.len() as u32);
                out.put_slice(s.as_bytes());
            }),
            DataType::Bool => v.as_bool().map(|b| out.put_u8(b.into())),
            DataType::Uint8 => int::<u8>(v, &mut out),
            DataType::Int8 => int::<i8>(v, &mut out),
            DataType::Uint16 => int::<u16>(v, &mut out),
            DataType::Int16 => int::<i16>(v, &mut out),
            DataType::Uint32 => int::<u32>(v, &mut out),
            DataType::Int32 => int::<i32>(v, &mut out),
            DataType::Uint64 => int::<u64>(v, &mut out),
            DataType::Int64 => int::<i64>(v, &mut out),
            DataType::Fp16 => v
                .as_f64()
                .map(|f| out.put_slice(&f16::from_f64(f).to_wire())),
            DataType::Bf16 => v
                .as_f64()
                .map(|f| out.put_slice(&bf16::from_f64(f).to_wire())),
            DataType::Fp32 => v.as_f64().map(|f| out.put_slice(&(f as f32).to_wire())),
            DataType::Fp64 => v.as_f64().map(|f| out.put_slice(&f.to_wire())),
        };
        ok.ok_or_else(|| {
            Error::protocol(format!(
                "output '{name}' of {datatype} holds the element {v}"
            ))
        })?;
    }
    Ok(out.freeze())
}

fn values<T: Element>(data: &[u8], f: impl Fn(T) -> Value) -> Vec<Value> {
    data.chunks_exact(size_of::<T>())
        .map(|c| f(T::from_wire(c)))
        .collect()
}

fn int<T: Element + TryFrom<i64> + TryFrom<u64>>(v: &Value, out: &mut BytesMut) -> Option<()> {
    let n = match v.as_i64() {
        Some(i) => T::try_from(i).ok(),
        None => T::try_from(v.as_u64()?).ok(),
    }?;
    out.put_slice(n.to_wire().as_ref());
    Some(())
}

fn flatten<'a>(value: &'a Value, out: &mut Vec<&'a Value>) {
    match value {
        Value::Array(items) => items.iter().for_each(|v| flatten(v, out)),
        other => out.push(other),
    }
}

#[cfg(test)]
mod tests {
    use oxiserve_types::encode_bytes_elements;

    use super::*;

    #[test]
    fn data_round_trips_through_json() {
        let cases: [(DataType, Bytes); 4] = [
            (
                DataType::Int32,
                Bytes::from_static(&[1, 0, 0, 0, 255, 255, 255, 255]),
            ),
            (DataType::Bool, Bytes::from_static(&[1, 0])),
            (
                DataType::Fp16,
                [f16::ONE.to_wire(), f16::NEG_ONE.to_wire()].concat().into(),
            ),
            (DataType::Bytes, encode_bytes_elements(["ab", "é"])),
        ];
        for (datatype, data) in &cases {
            let values = json_data("T", *datatype, &[2], data).unwrap();
            assert_eq!(
                &data_from_json("T", *datatype, &Value::Array(values)).unwrap(),
                data
            );
        }
        let values = json_data("T", DataType::Int32, &[2], &cases[0].1).unwrap();
        assert_eq!(values, [json!(1), json!(-1)]);
    }

    #[test]
    fn nested_arrays_are_read_row_major_and_checked() {
        let data = data_from_json("T", DataType::Uint8, &json!([[1, 2], [3, 4]])).unwrap();
        assert_eq!(&data[..], [1, 2, 3, 4]);
        let err = data_from_json("T", DataType::Uint8, &json!([256])).unwrap_err();
        assert!(err.to_string().contains("holds the element 256"), "{err}");
    }
}
