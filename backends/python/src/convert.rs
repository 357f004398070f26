//! Between oxiserve's requests and responses and their wire form.

use bytes::Bytes;
use oxiserve_backend::REQUEST_FIELD_PARAMETERS;
use oxiserve_types::{
    Error, InferRequest, ParameterValue, Parameters, RequestedOutput, Result, Tensor,
};
use serde_json::{Map, Value};

use crate::{
    arena::{Arena, ReleaseHook},
    protocol::{Correlation, NO_BLOCK, TensorDesc, WireRequest, WireResponse},
};

/// Triton's request flags for `pb_utils.InferenceRequest.flags()`.
const SEQUENCE_START: u32 = 1;
const SEQUENCE_END: u32 = 2;

/// The wire form of `request`, whose input tensors are at `offsets` in arena_in.
pub(crate) fn wire_request(
    request: &InferRequest,
    outputs: &[String],
    offsets: &[u64],
) -> WireRequest {
    let flag = |key: &str, bit: u32| {
        if request
            .parameters
            .get(key)
            .and_then(ParameterValue::as_bool)
            == Some(true)
        {
            bit
        } else {
            0
        }
    };
    let correlation = match request.parameters.get("sequence_id") {
        Some(ParameterValue::String(s)) => Correlation::Str(s.clone()),
        Some(ParameterValue::Uint(n)) => Correlation::U64(*n),
        Some(ParameterValue::Int(n)) => Correlation::U64(*n as u64),
        _ => Correlation::None,
    };
    let timeout_us = match request.parameters.get("timeout") {
        Some(ParameterValue::Uint(n)) => *n,
        Some(ParameterValue::Int(n)) => (*n).max(0) as u64,
        _ => 0,
    };
    WireRequest {
        flags: flag("sequence_start", SEQUENCE_START) | flag("sequence_end", SEQUENCE_END),
        correlation,
        request_id: request.id.clone(),
        parameters_json: parameters_json(&request.parameters, REQUEST_FIELD_PARAMETERS)
            .unwrap_or_else(|| "{}".into()),
        timeout_us,
        inputs: descriptors(&request.inputs, offsets),
        outputs: outputs.to_vec(),
    }
}

/// Parameters as a JSON object, leaving out `skip`; `None` when none are left.
pub(crate) fn parameters_json(parameters: &Parameters, skip: &[&str]) -> Option<String> {
    let map: Map<String, Value> = parameters
        .iter()
        .filter(|(k, _)| !skip.contains(&k.as_str()))
        .map(|(k, v)| {
            let value = match v {
                ParameterValue::Bool(b) => Value::from(*b),
                ParameterValue::Int(n) => Value::from(*n),
                ParameterValue::Uint(n) => Value::from(*n),
                ParameterValue::Double(d) => Value::from(*d),
                ParameterValue::String(s) => Value::from(s.as_str()),
            };
            (k.clone(), value)
        })
        .collect();
    (!map.is_empty()).then(|| Value::Object(map).to_string())
}

/// Parameters from a model's JSON object (`""` = none).
pub(crate) fn parse_parameters(json: &str) -> Result<Parameters> {
    if json.is_empty() {
        return Ok(Parameters::new());
    }
    let bad = |why: String| Error::invalid_arg(format!("invalid parameters {json}: {why}"));
    let value: Value = serde_json::from_str(json).map_err(|e| bad(e.to_string()))?;
    let Value::Object(map) = value else {
        return Err(bad("not a JSON object".into()));
    };
    map.into_iter()
        .map(|(k, v)| {
            let value = match v {
                Value::Bool(b) => ParameterValue::Bool(b),
                Value::String(s) => ParameterValue::String(s),
                Value::Number(n) if n.is_i64() => {
                    ParameterValue::Int(n.as_i64().unwrap_or_default())
                }
                Value::Number(n) if n.is_u64() => {
                    ParameterValue::Uint(n.as_u64().unwrap_or_default())
                }
                Value::Number(n) => ParameterValue::Double(n.as_f64().unwrap_or_default()),
                other => {
                    return Err(bad(format!(
                        "'{k}' is {other}: expected a bool, number or string"
                    )));
                }
            };
            Ok((k, value))
        })
        .collect()
}

/// A zero-copy view of the arena_out `block` holding `descs` (the tensors of
/// one stub frame): it spans them all, and the block goes back to the stub
/// once the view and every tensor sliced from it are dropped. `None` for
/// [`NO_BLOCK`].
pub(crate) fn out_block<'a>(
    block: u64,
    descs: impl IntoIterator<Item = &'a TensorDesc>,
    arena: &Arena,
    release: &ReleaseHook,
) -> Result<Option<Bytes>> {
    let mut extent = 0;
    for d in descs {
        if block == NO_BLOCK || d.offset < block {
            return Err(Error::internal(format!(
                "python stub protocol error: tensor '{}' at offset {} is outside its block",
                d.name, d.offset
            )));
        }
        extent = extent.max(d.offset - block + d.nbytes);
    }
    if block == NO_BLOCK {
        return Ok(None);
    }
    arena.view(block, extent, release.clone()).map(Some)
}

/// Tensors of a block from [`out_block`], as slices of its view.
pub(crate) fn tensors(descs: Vec<TensorDesc>, block: u64, view: Option<&Bytes>) -> Vec<Tensor> {
    descs
        .into_iter()
        .map(|d| {
            // out_block checked that every tensor lies in the view
            let data = view.map_or_else(Bytes::new, |v| {
                let start = (d.offset - block) as usize;
                v.slice(start..start + d.nbytes as usize)
            });
            Tensor::new(d.name, d.datatype, d.dims, data)
        })
        .collect()
}

/// A BLS request from the stub.
pub(crate) fn bls_request(
    model_name: String,
    model_version: i64,
    block: u64,
    wire: WireRequest,
    arena: &Arena,
    release: &ReleaseHook,
) -> Result<InferRequest> {
    let view = out_block(block, &wire.inputs, arena, release)?;
    let mut parameters = parse_parameters(&wire.parameters_json)?;
    match wire.correlation {
        Correlation::None => {}
        Correlation::U64(n) => {
            parameters.insert("sequence_id".into(), ParameterValue::Uint(n));
        }
        Correlation::Str(s) => {
            parameters.insert("sequence_id".into(), ParameterValue::String(s));
        }
    }
    if wire.flags & SEQUENCE_START != 0 {
        parameters.insert("sequence_start".into(), ParameterValue::Bool(true));
    }
    if wire.flags & SEQUENCE_END != 0 {
        parameters.insert("sequence_end".into(), ParameterValue::Bool(true));
    }
    if wire.timeout_us > 0 {
        parameters.insert("timeout".into(), ParameterValue::Uint(wire.timeout_us));
    }
    Ok(InferRequest {
        model_name,
        model_version: (model_version >= 0).then_some(model_version),
        id: wire.request_id,
        inputs: tensors(wire.inputs, block, view.as_ref()),
        outputs: wire
            .outputs
            .into_iter()
            .map(|name| RequestedOutput {
                name,
                class_count: 0,
                parameters: Parameters::new(),
            })
            .collect(),
        parameters,
    })
}

/// The response of a BLS call as the stub reads it: tensors at `offsets` in
/// arena_in (one per output, in order).
pub(crate) fn wire_response(
    outputs: &[Tensor],
    parameters: &Parameters,
    offsets: &[u64],
) -> WireResponse {
    WireResponse {
        error: None,
        parameters_json: parameters_json(parameters, &[]).unwrap_or_default(),
        outputs: descriptors(outputs, offsets),
    }
}

/// The descriptors of `tensors` written at `offsets` of arena_in.
fn descriptors(tensors: &[Tensor], offsets: &[u64]) -> Vec<TensorDesc> {
    tensors
        .iter()
        .zip(offsets)
        .map(|(t, &offset)| TensorDesc {
            name: t.name.clone(),
            datatype: t.datatype,
            dims: t.shape.clone(),
            offset,
            nbytes: t.data.len() as u64,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_parameters_become_fields() {
        let mut request = InferRequest::default();
        request
            .parameters
            .insert("sequence_id".into(), ParameterValue::Uint(7));
        request
            .parameters
            .insert("sequence_start".into(), ParameterValue::Bool(true));
        request
            .parameters
            .insert("temperature".into(), ParameterValue::Double(0.5));
        request
            .parameters
            .insert("mode".into(), ParameterValue::String("x".into()));
        let wire = wire_request(&request, &[], &[]);
        assert_eq!(wire.flags, SEQUENCE_START);
        assert_eq!(wire.correlation, Correlation::U64(7));
        assert_eq!(wire.parameters_json, r#"{"mode":"x","temperature":0.5}"#);
    }

    #[test]
    fn a_frames_tensors_share_one_block_released_once() {
        use std::sync::{Arc, Mutex};

        use oxiserve_types::DataType;

        let arena = Arena::new("test-arena", 4096).unwrap();
        let released = Arc::new(Mutex::new(Vec::new()));
        let log = released.clone();
        let release: ReleaseHook = Arc::new(move |offset| log.lock().unwrap().push(offset));
        let desc = |name: &str, offset, nbytes| TensorDesc {
            name: name.into(),
            datatype: DataType::Uint8,
            dims: vec![nbytes as i64],
            offset,
            nbytes,
        };
        let descs = vec![desc("A", 1024, 3), desc("B", 1088, 0), desc("C", 1152, 70)];
        let view = out_block(1024, &descs, &arena, &release).unwrap().unwrap();
        assert_eq!(view.len(), 128 + 70);
        let tensors = tensors(descs, 1024, Some(&view));
        assert_eq!(
            tensors.iter().map(|t| t.data.len()).collect::<Vec<_>>(),
            [3, 0, 70]
        );
        drop(view);
        let mut tensors = tensors;
        let first = tensors.remove(0);
        drop(tensors);
        assert!(
            released.lock().unwrap().is_empty(),
            "A still refers to the block"
        );
        drop(first);
        assert_eq!(*released.lock().unwrap(), [1024]);

        let outside = out_block(1024, &[desc("D", 960, 8)], &arena, &release).unwrap_err();
        assert!(
            outside.message.contains("'D' at offset 960"),
            "{}",
            outside.message
        );
        let no_block = out_block(NO_BLOCK, &[desc("E", 0, 8)], &arena, &release).unwrap_err();
        assert!(
            no_block.message.contains("outside its block"),
            "{}",
            no_block.message
        );
        assert!(
            out_block(NO_BLOCK, &[], &arena, &release)
                .unwrap()
                .is_none()
        );
        assert!(out_block(4032, &[desc("F", 4032, 128)], &arena, &release).is_err());
        assert_eq!(
            *released.lock().unwrap(),
            [1024],
            "no release for a refused view"
        );
    }

    #[test]
    fn parameters_round_trip() {
        let parsed = parse_parameters(r#"{"a":true,"b":-3,"c":"s","d":1.5}"#).unwrap();
        assert_eq!(parsed["a"], ParameterValue::Bool(true));
        assert_eq!(parsed["b"], ParameterValue::Int(-3));
        assert_eq!(parsed["d"], ParameterValue::Double(1.5));
        assert_eq!(parse_parameters("").unwrap(), Parameters::new());
        let err = parse_parameters(r#"{"a":[1]}"#).unwrap_err();
        assert!(err.message.contains("'a' is [1]"), "{}", err.message);
    }
}
