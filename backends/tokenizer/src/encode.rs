//! One request's texts to token tensors.

use bytes::Bytes;
use oxiserve_backend::{BackendRequest, BackendResponse};
use oxiserve_types::{DataType, Error, ErrorKind, Result, Tensor, bytes_elements, element_count};
use tokenizers::{Encoding, Tokenizer};

use crate::plan::{Plan, TokenTensor};

/// Tokenizes every text of `request`'s input: one row per text, padded to
/// the longest row (or to `max_length`).
pub(crate) fn request(
    tokenizer: &Tokenizer,
    plan: &Plan,
    request: &BackendRequest,
) -> Result<BackendResponse> {
    if request.sink.is_cancelled() {
        return Err(Error::new(ErrorKind::Cancelled, "request was cancelled"));
    }
    let input = request.input(&plan.input).ok_or_else(|| {
        Error::invalid_arg(format!(
            "expected input '{}' for model '{}'",
            plan.input, plan.model
        ))
    })?;
    let count = element_count(&input.shape).unwrap_or(0);
    let texts = bytes_elements(&plan.input, &input.data, count)?
        .into_iter()
        .enumerate()
        .map(|(i, bytes)| {
            std::str::from_utf8(bytes).map_err(|e| {
                Error::invalid_arg(format!(
                    "input '{}' element {i} is not valid UTF-8 text ({e})",
                    plan.input
                ))
            })
        })
        .collect::<Result<Vec<&str>>>()?;
    let encodings = tokenizer
        .encode_batch(texts, plan.add_special_tokens)
        .map_err(|e| {
            Error::internal(format!("model '{}': tokenization failed: {e}", plan.model))
        })?;
    let width = if plan.pad_to_max_length {
        plan.max_length
    } else {
        encodings.iter().map(Encoding::len).max().unwrap_or(0)
    };
    let shape = vec![encodings.len() as i64, width as i64];
    let outputs = plan
        .outputs
        .iter()
        .filter(|(_, name, _)| request.wants_output(name))
        .map(|(what, name, dtype)| {
            let (values, pad): (fn(&Encoding) -> &[u32], u32) = match what {
                TokenTensor::InputIds => (Encoding::get_ids, plan.pad_id),
                TokenTensor::AttentionMask => (Encoding::get_attention_mask, 0),
                TokenTensor::TokenTypeIds => (Encoding::get_type_ids, plan.pad_type_id),
            };
            let data = rows(&encodings, width, values, pad, *dtype);
            Tensor::new(name.clone(), *dtype, shape.clone(), data)
        })
        .collect();
    Ok(BackendResponse::new(outputs))
}

/// `values` of every encoding, one row each, padded with `pad` to `width`.
fn rows(
    encodings: &[Encoding],
    width: usize,
    values: fn(&Encoding) -> &[u32],
    pad: u32,
    dtype: DataType,
) -> Bytes {
    let size = if dtype == DataType::Int64 { 8 } else { 4 };
    let mut out = Vec::with_capacity(encodings.len() * width * size);
    for encoding in encodings {
        let row = values(encoding);
        for i in 0..width {
            let value = row.get(i).copied().unwrap_or(pad);
            if dtype == DataType::Int64 {
                out.extend_from_slice(&i64::from(value).to_le_bytes());
            } else {
                out.extend_from_slice(&(value as i32).to_le_bytes());
            }
        }
    }
    out.into()
}
