//! A group of requests as forward()'s arguments: each tensor input's
//! requests laid end to end in one libtorch tensor (the one copy needed),
//! BYTES inputs as a list of strings.

use oxiserve_backend::BackendRequest;
use oxiserve_types::{Error, Result, Tensor as Input, bytes_elements, element_count};
use tch::{Device, IValue, Kind, Tensor};

use crate::{errors, naming::InputLayout, plan::Plan};

/// forward()'s arguments for `group`, whose requests carry every input with
/// equal shapes beyond the batch dimension when the model batches.
pub(crate) fn gather(plan: &Plan, group: &[BackendRequest]) -> Result<Vec<IValue>> {
    let mut values = Vec::with_capacity(plan.inputs.len());
    for input in &plan.inputs {
        let parts = group
            .iter()
            .map(|r| {
                r.input(&input.name)
                    .ok_or_else(|| Error::invalid_arg(format!("missing input '{}'", input.name)))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut shape = parts[0].shape.clone();
        if plan.batching {
            shape[0] = parts.iter().map(|t| t.shape[0]).sum();
        }
        let value = match input.kind {
            Some(kind) => IValue::Tensor(tensor(&input.name, kind, &parts, &shape)?),
            None => IValue::StringList(strings(&input.name, &parts)?),
        };
        values.push(value);
    }
    Ok(match &plan.layout {
        InputLayout::Dict => vec![IValue::GenericDict(
            plan.inputs
                .iter()
                .zip(values)
                .map(|(input, value)| (IValue::String(input.name.clone()), value))
                .collect(),
        )],
        InputLayout::Positional(positions) => {
            let mut ordered: Vec<(usize, IValue)> = positions.iter().copied().zip(values).collect();
            ordered.sort_by_key(|(position, _)| *position);
            ordered.into_iter().map(|(_, value)| value).collect()
        }
    })
}

/// One tensor of `shape` holding every part's bytes in turn.
fn tensor(name: &str, kind: Kind, parts: &[&Input], shape: &[i64]) -> Result<Tensor> {
    let element = parts[0].datatype.element_size().unwrap_or(0);
    let len = element_count(shape).unwrap_or(0) * element;
    let given: usize = parts.iter().map(|p| p.data.len()).sum();
    if given != len {
        return Err(Error::invalid_arg(format!(
            "input '{name}' holds {given} bytes, its shape needs {len}"
        )));
    }
    let tensor = Tensor::f_empty(shape, (kind, Device::Cpu))
        .map_err(|e| Error::internal(format!("input '{name}': {}", errors::message(&e))))?;
    if len > 0 {
        // SAFETY: libtorch just allocated this contiguous CPU tensor of
        // `len` bytes (its element count times the element size) and nothing
        // else refers to it yet.
        let target = unsafe { std::slice::from_raw_parts_mut(tensor.data_ptr().cast::<u8>(), len) };
        let mut at = 0;
        for part in parts {
            target[at..at + part.data.len()].copy_from_slice(&part.data);
            at += part.data.len();
        }
    }
    Ok(tensor)
}

/// Every part's BYTES elements as one list of strings (UTF-8, as
/// TorchScript's `str` needs).
fn strings(name: &str, parts: &[&Input]) -> Result<Vec<String>> {
    let mut texts = Vec::new();
    for part in parts {
        let count = element_count(&part.shape).unwrap_or(0);
        for element in bytes_elements(name, &part.data, count)? {
            let text = std::str::from_utf8(element).map_err(|_| {
                Error::invalid_arg(format!(
                    "input '{name}': element {} is not UTF-8 text, which TorchScript's str needs",
                    texts.len()
                ))
            })?;
            texts.push(text.to_owned());
        }
    }
    Ok(texts)
}
