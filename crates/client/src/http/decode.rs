//! The body of an inference response: a JSON header, then the binary data
//! of the outputs whose `binary_data_size` says so, in output order.

use bytes::Bytes;
use oxiserve_types::{DataType, Tensor};
use serde_json::Value;

use super::{json_data::data_from_json, parameters};
use crate::{
    error::{Error, Result},
    result::InferResult,
};

/// Decodes `body`, whose JSON header is `header_length` bytes long (the
/// whole body without binary data).
pub(crate) fn decode(body: Bytes, header_length: Option<usize>) -> Result<InferResult> {
    let n = header_length.unwrap_or(body.len());
    if n > body.len() {
        return Err(Error::protocol(format!(
            "Inference-Header-Content-Length {n} exceeds the body's {} bytes",
            body.len()
        )));
    }
    let header: Value = serde_json::from_slice(&body[..n])
        .map_err(|e| Error::protocol(format!("the response header is not JSON: {e}")))?;
    let mut binary = body.slice(n..);
    let text = |key: &str| header[key].as_str().unwrap_or_default().to_string();
    let outputs = match &header["outputs"] {
        Value::Array(outputs) => outputs
            .iter()
            .map(|o| output(o, &mut binary))
            .collect::<Result<_>>()?,
        _ => Vec::new(),
    };
    Ok(InferResult {
        model_name: text("model_name"),
        model_version: text("model_version"),
        id: text("id"),
        parameters: parameters::from_json(header.get("parameters")),
        outputs,
    })
}

/// One output; binary data is taken from the front of `binary`.
fn output(json: &Value, binary: &mut Bytes) -> Result<Tensor> {
    let name = json["name"]
        .as_str()
        .ok_or_else(|| Error::protocol("an output without a name"))?;
    let datatype = json["datatype"].as_str().unwrap_or_default();
    let datatype = DataType::from_wire_name(datatype)
        .ok_or_else(|| Error::protocol(format!("output '{name}' has datatype '{datatype}'")))?;
    let shape = json["shape"]
        .as_array()
        .and_then(|dims| dims.iter().map(Value::as_i64).collect::<Option<Vec<_>>>())
        .ok_or_else(|| Error::protocol(format!("output '{name}' has no shape")))?;
    let mut parameters = parameters::from_json(json.get("parameters"));
    let data = match parameters.remove("binary_data_size") {
        Some(size) => {
            let size = size
                .as_u64()
                .map(|s| s as usize)
                .filter(|&s| s <= binary.len());
            let size = size.ok_or_else(|| {
                Error::protocol(format!(
                    "output '{name}' has more binary data than the body"
                ))
            })?;
            binary.split_to(size)
        }
        None => match json.get("data") {
            Some(data) => data_from_json(name, datatype, data)?,
            None => Bytes::new(),
        },
    };
    Ok(Tensor {
        parameters,
        ..Tensor::new(name, datatype, shape, data)
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn binary_and_json_outputs_are_read() {
        let header = json!({"model_name": "m", "model_version": "1", "outputs": [
            {"name": "A", "datatype": "UINT8", "shape": [2], "parameters": {"binary_data_size": 2}},
            {"name": "B", "datatype": "INT16", "shape": [1], "data": [-2]},
            {"name": "C", "datatype": "UINT8", "shape": [1], "parameters": {"binary_data_size": 1}}]})
        .to_string();
        let mut body = header.clone().into_bytes();
        body.extend_from_slice(&[1, 2, 3]);
        let result = decode(body.into(), Some(header.len())).unwrap();
        assert_eq!(result.model_version(), "1");
        assert_eq!(&result.output("A").unwrap().data[..], [1, 2]);
        assert_eq!(&result.output("B").unwrap().data[..], [254, 255]);
        assert_eq!(&result.output("C").unwrap().data[..], [3]);
        assert!(result.output("C").unwrap().parameters.is_empty());
    }

    #[test]
    fn short_bodies_are_protocol_errors() {
        let header = json!({"outputs": [{"name": "A", "datatype": "UINT8", "shape": [2],
            "parameters": {"binary_data_size": 2}}]})
        .to_string();
        let n = header.len();
        let err = decode(header.into(), Some(n)).unwrap_err().to_string();
        assert!(err.contains("more binary data"), "{err}");
    }
}
