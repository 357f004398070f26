//! perf_analyzer's JSON input data files:
//! `{"data": [{"INPUT0": [1, 2, 3]}, {"INPUT0": {"content": [...], "shape": [3]}}]}`,
//! one request per entry; BYTES inputs take strings. `{"b64": "..."}` (optionally with
//! `"shape"`) gives the tensor's raw bytes in base64: little-endian elements, BYTES in the
//! 4-byte-length-prefixed layout.

use std::path::Path;

use base64::{Engine, engine::general_purpose::STANDARD};
use oxiserve_types::{DataType, encode_bytes_elements};
use serde_json::Value;

use crate::{
    error::{Error, Result},
    model::TensorInfo,
};

/// One input of one file entry: raw bytes, element count, and the shape the
/// entry gives (if any).
#[derive(Debug, Clone, PartialEq)]
pub struct FileTensor {
    pub data: Vec<u8>,
    pub elements: usize,
    pub shape: Option<Vec<i64>>,
}

/// The file's entries, each with one [`FileTensor`] per model input, in the
/// model's input order.
pub fn read(path: &Path, inputs: &[TensorInfo]) -> Result<Vec<Vec<FileTensor>>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::new(format!(
            "cannot read input data file {}: {e}",
            path.display()
        ))
    })?;
    let root: Value = serde_json::from_str(&text).map_err(|e| {
        Error::new(format!(
            "input data file {} is not JSON: {e}",
            path.display()
        ))
    })?;
    parse(&root, inputs).map_err(|e| e.context(format!("input data file {}", path.display())))
}

fn parse(root: &Value, inputs: &[TensorInfo]) -> Result<Vec<Vec<FileTensor>>> {
    let entries = root["data"]
        .as_array()
        .filter(|a| !a.is_empty())
        .ok_or_else(|| Error::new("expected {\"data\": [ {INPUT: values, ...}, ... ]}"))?;
    entries
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            inputs
                .iter()
                .map(|input| {
                    let value = entry.get(&input.name).ok_or_else(|| {
                        Error::new(format!("entry {i} has no input '{}'", input.name))
                    })?;
                    tensor(value, input.datatype)
                        .map_err(|e| e.context(format!("entry {i}, input '{}'", input.name)))
                })
                .collect()
        })
        .collect()
}

fn tensor(value: &Value, datatype: DataType) -> Result<FileTensor> {
    let (content, shape) = match value {
        Value::Object(map) => {
            let shape = map
                .get("shape")
                .map(|s| {
                    s.as_array()
                        .and_then(|a| a.iter().map(Value::as_i64).collect::<Option<Vec<_>>>())
                        .ok_or_else(|| Error::new("'shape' must be a list of integers"))
                })
                .transpose()?;
            if let Some(b64) = map.get("b64") {
                return raw_tensor(b64, datatype, shape);
            }
            let content = map
                .get("content")
                .ok_or_else(|| Error::new("expected 'content' or 'b64'"))?;
            (content, shape)
        }
        other => (other, None),
    };
    let mut flat = Vec::new();
    flatten(content, &mut flat);
    let data = encode(&flat, datatype)?;
    Ok(FileTensor {
        data,
        elements: flat.len(),
        shape,
    })
}

/// A tensor given as base64 of its raw bytes.
fn raw_tensor(b64: &Value, datatype: DataType, shape: Option<Vec<i64>>) -> Result<FileTensor> {
    let text = b64
        .as_str()
        .ok_or_else(|| Error::new("'b64' must be a string"))?;
    let data = STANDARD
        .decode(text)
        .map_err(|e| Error::new(format!("'b64' is not valid base64: {e}")))?;
    let elements = match datatype.element_size() {
        Some(size) if data.len() % size == 0 => data.len() / size,
        Some(size) => {
            return Err(Error::new(format!(
                "'b64' holds {} bytes, not a whole number of {size}-byte {} elements",
                data.len(),
                datatype.wire_name()
            )));
        }
        None => bytes_count(&data)?,
    };
    Ok(FileTensor {
        data,
        elements,
        shape,
    })
}

/// The number of elements of raw BYTES data (4-byte little-endian length, then
/// the bytes, per element).
fn bytes_count(mut data: &[u8]) -> Result<usize> {
    let mut count = 0;
    while !data.is_empty() {
        let bad = || Error::new("'b64' BYTES data: an element's length runs past the end");
        let (len, rest) = data.split_first_chunk::<4>().ok_or_else(bad)?;
        let len = u32::from_le_bytes(*len) as usize;
        data = rest.get(len..).ok_or_else(bad)?;
        count += 1;
    }
    Ok(count)
}

fn flatten<'a>(value: &'a Value, out: &mut Vec<&'a Value>) {
    match value {
        Value::Array(items) => items.iter().for_each(|v| flatten(v, out)),
        other => out.push(other),
    }
}

fn encode(values: &[&Value], datatype: DataType) -> Result<Vec<u8>> {
    if datatype == DataType::Bytes {
        let strings = values
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok(s.clone()),
                Value::Number(n) => Ok(n.to_string()),
                other => Err(Error::new(format!("{other} is not a string"))),
            })
            .collect::<Result<Vec<_>>>()?;
        return Ok(encode_bytes_elements(strings).to_vec());
    }
    let mut out = Vec::with_capacity(values.len() * datatype.element_size().unwrap_or(1));
    for value in values {
        let bad = || {
            Error::new(format!(
                "{value} is not a valid {} value",
                datatype.wire_name()
            ))
        };
        let float = value
            .as_f64()
            .or_else(|| value.as_bool().map(f64::from))
            .ok_or_else(bad)?;
        let int = value.as_i64().or_else(|| value.as_bool().map(i64::from));
        let int = || int.ok_or_else(bad);
        match datatype {
            DataType::Bool => out.push(u8::from(float != 0.0)),
            DataType::Uint8 => out.push(int()? as u8),
            DataType::Int8 => out.push(int()? as i8 as u8),
            DataType::Uint16 => out.extend((int()? as u16).to_le_bytes()),
            DataType::Int16 => out.extend((int()? as i16).to_le_bytes()),
            DataType::Uint32 => out.extend((int()? as u32).to_le_bytes()),
            DataType::Int32 => out.extend((int()? as i32).to_le_bytes()),
            DataType::Uint64 => out.extend(value.as_u64().ok_or_else(bad)?.to_le_bytes()),
            DataType::Int64 => out.extend(int()?.to_le_bytes()),
            DataType::Fp16 => out.extend(half::f16::from_f64(float).to_le_bytes()),
            DataType::Bf16 => out.extend(half::bf16::from_f64(float).to_le_bytes()),
            DataType::Fp32 => out.extend((float as f32).to_le_bytes()),
            DataType::Fp64 => out.extend(float.to_le_bytes()),
            DataType::Bytes => unreachable!("handled above"),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn input(name: &str, datatype: DataType) -> TensorInfo {
        TensorInfo {
            name: name.into(),
            datatype,
            dims: vec![-1],
        }
    }

    #[test]
    fn flat_nested_and_content_forms() {
        let inputs = [input("A", DataType::Int32), input("S", DataType::Bytes)];
        let root = json!({"data": [
            {"A": [[1, 2], [3, 4]], "S": ["x"]},
            {"A": {"content": [5], "shape": [1]}, "S": {"content": ["ab", "c"], "shape": [2]}}
        ]});
        let entries = parse(&root, &inputs).unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0][0].elements, 4);
        assert_eq!(entries[0][0].data[..8], [1, 0, 0, 0, 2, 0, 0, 0]);
        assert_eq!(entries[1][0].shape, Some(vec![1]));
        assert_eq!(
            entries[1][1].data,
            [2, 0, 0, 0, b'a', b'b', 1, 0, 0, 0, b'c']
        );
    }

    #[test]
    fn base64_raw_data() {
        let inputs = [input("A", DataType::Int32), input("S", DataType::Bytes)];
        // A: [7, -1] little-endian; S: ["ab", ""] in the BYTES layout
        let a = STANDARD.encode([7, 0, 0, 0, 255, 255, 255, 255]);
        let s = STANDARD.encode([2, 0, 0, 0, b'a', b'b', 0, 0, 0, 0]);
        let root = json!({"data": [{"A": {"b64": a, "shape": [2]}, "S": {"b64": s}}]});
        let entries = parse(&root, &inputs).unwrap();
        assert_eq!(entries[0][0].elements, 2);
        assert_eq!(entries[0][0].shape, Some(vec![2]));
        assert_eq!(entries[0][0].data, [7, 0, 0, 0, 255, 255, 255, 255]);
        assert_eq!(
            (entries[0][1].elements, entries[0][1].shape.clone()),
            (2, None)
        );

        let bad = |a: Value| {
            parse(&json!({"data": [{"A": a, "S": ["x"]}]}), &inputs)
                .unwrap_err()
                .to_string()
        };
        assert!(bad(json!({"b64": "%%"})).contains("not valid base64"));
        assert!(bad(json!({"b64": STANDARD.encode([1, 2, 3])})).contains("3 bytes"));
        assert!(bad(json!({"b64": 5})).contains("must be a string"));
        let s = parse(
            &json!({"data": [{"A": [1], "S": {"b64": STANDARD.encode([9, 0, 0, 0, b'x'])}}]}),
            &inputs,
        )
        .unwrap_err();
        assert!(s.to_string().contains("runs past the end"), "{s}");
    }

    #[test]
    fn errors_name_entry_and_input() {
        let inputs = [input("A", DataType::Fp32)];
        let err = parse(&json!({"data": [{"A": [1]}, {"B": [1]}]}), &inputs).unwrap_err();
        assert!(
            err.to_string().contains("entry 1 has no input 'A'"),
            "{err}"
        );
        let err = parse(&json!({"data": [{"A": ["x"]}]}), &inputs).unwrap_err();
        assert!(err.to_string().contains("entry 0, input 'A'"), "{err}");
        assert!(parse(&json!({"rows": []}), &inputs).is_err());
    }
}
