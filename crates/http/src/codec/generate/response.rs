//! Encoding an inference response as a generate response object.

use std::collections::BTreeMap;

use oxiserve_types::{Error, InferResponse, ParameterValue, element_count};

use super::super::json_data::write_json_data;
use super::super::json_write::{
    write_bool, write_f64, write_i64, write_key, write_string, write_u64,
};

/// The JSON object of `response`: `id` (when not empty), `model_name`,
/// `model_version` (a string), each response parameter and each output by
/// name, members sorted by name as Triton writes them. A name taken by an
/// earlier member is not written again (the reserved names first, then the
/// parameters, then the outputs). An output of one element is that element,
/// any other output a flat array. Errors: an output JSON cannot carry (FP16,
/// BF16) or whose data does not fit its shape.
pub fn encode_generate_response(response: &InferResponse) -> Result<Vec<u8>, Error> {
    let mut members: BTreeMap<&str, Vec<u8>> = BTreeMap::new();
    if !response.id.is_empty() {
        members.insert("id", string(response.id.as_bytes()));
    }
    members.insert("model_name", string(response.model_name.as_bytes()));
    let version = response.model_version.to_string();
    members.insert("model_version", string(version.as_bytes()));
    for (name, value) in &response.parameters {
        let mut json = Vec::new();
        match value {
            ParameterValue::Bool(b) => write_bool(&mut json, *b),
            ParameterValue::Int(i) => write_i64(&mut json, *i),
            ParameterValue::Uint(u) => write_u64(&mut json, *u),
            ParameterValue::Double(d) => write_f64(&mut json, *d),
            ParameterValue::String(s) => write_string(&mut json, s.as_bytes()),
        }
        members.entry(name).or_insert(json);
    }
    for output in &response.outputs {
        let count = element_count(&output.shape).ok_or_else(|| {
            Error::internal(format!(
                "output tensor shape does not match size of output for '{}'",
                output.name
            ))
        })?;
        let mut json = Vec::new();
        write_json_data(
            &mut json,
            &output.name,
            output.datatype,
            count,
            &output.data,
        )?;
        if count == 1 {
            // One element: the element itself, without the array around it.
            json = json[1..json.len() - 1].to_vec();
        }
        members.entry(&output.name).or_insert(json);
    }
    let mut out = vec![b'{'];
    for (i, (name, value)) in members.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_key(&mut out, name);
        out.extend_from_slice(value);
    }
    out.push(b'}');
    Ok(out)
}

fn string(bytes: &[u8]) -> Vec<u8> {
    let mut json = Vec::new();
    write_string(&mut json, bytes);
    json
}
