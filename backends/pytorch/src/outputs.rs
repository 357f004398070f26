//! forward()'s result as the configured outputs, ready to be split between
//! the group's requests: tensors are handed out from libtorch's own buffer
//! without a copy; lists of strings are encoded in Triton's BYTES layout.

use bytes::Bytes;
use oxiserve_backend::BatchOutput;
use oxiserve_types::{DataType, Error, Result, element_count};
use tch::{IValue, Tensor};

use crate::{
    dtype, errors,
    plan::{OutputSpec, Plan},
};

/// A contiguous CPU tensor owning the bytes a `Bytes` points into.
struct TorchBuffer {
    tensor: Tensor,
    len: usize,
}

impl AsRef<[u8]> for TorchBuffer {
    fn as_ref(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: the tensor is contiguous on the CPU and owns `len` bytes at
        // `data_ptr` (element count times element size) for as long as it
        // lives; nothing writes to it once forward() has returned it.
        unsafe { std::slice::from_raw_parts(self.tensor.data_ptr().cast::<u8>(), self.len) }
    }
}

/// The configured outputs of forward()'s `result`: a tensor, a list of
/// strings, a tuple or list of those (by position), or a dict keyed by
/// output name. `rows` is the group's batch size when the model batches.
pub(crate) fn collect(
    plan: &Plan,
    result: IValue,
    rows: Option<usize>,
) -> Result<Vec<BatchOutput>> {
    let mut values: Vec<(Option<String>, Option<IValue>)> = match strings_as_list(result) {
        IValue::Tuple(values) | IValue::GenericList(values) => values
            .into_iter()
            .map(|v| (None, Some(strings_as_list(v))))
            .collect(),
        IValue::TensorList(tensors) => tensors
            .into_iter()
            .map(|t| (None, Some(IValue::Tensor(t))))
            .collect(),
        IValue::GenericDict(pairs) => pairs
            .into_iter()
            .map(|(key, value)| match key {
                IValue::String(name) => (Some(name), Some(value)),
                _ => (None, None),
            })
            .collect(),
        single => vec![(None, Some(single))],
    };
    let by_name = values.iter().any(|(name, _)| name.is_some());
    plan.outputs
        .iter()
        .map(|spec| {
            let slot = if by_name {
                values
                    .iter_mut()
                    .find(|(name, _)| name.as_deref() == Some(&spec.name))
            } else {
                values.get_mut(spec.position)
            };
            let value = slot.and_then(|(_, value)| value.take()).ok_or_else(|| {
                Error::internal(format!(
                    "model '{}': forward() returned no value for output '{}'",
                    plan.model, spec.name
                ))
            })?;
            from_value(&plan.model, spec, value, rows)
        })
        .collect()
}

/// One configured output from forward()'s value for it.
fn from_value(
    model: &str,
    spec: &OutputSpec,
    value: IValue,
    rows: Option<usize>,
) -> Result<BatchOutput> {
    let name = &spec.name;
    match value {
        IValue::Tensor(tensor) => from_tensor(model, spec, tensor),
        IValue::StringList(texts) if spec.dtype == DataType::Bytes => {
            let count = texts.len() as i64;
            let shape = match rows {
                Some(rows) if rows > 0 => vec![rows as i64, count / rows as i64],
                _ => vec![count],
            };
            Ok(BatchOutput::strings(name, shape, &texts))
        }
        other => Err(Error::internal(format!(
            "model '{model}': output '{name}' must be a Tensor{}, forward() returned {}",
            if spec.dtype == DataType::Bytes {
                " or List[str]"
            } else {
                ""
            },
            describe(&other)
        ))),
    }
}

fn from_tensor(model: &str, spec: &OutputSpec, tensor: Tensor) -> Result<BatchOutput> {
    let name = &spec.name;
    let kind = tensor.kind();
    let dtype = dtype::from_torch(kind).ok_or_else(|| {
        Error::internal(format!(
            "model '{model}': output '{name}' has scalar type {kind:?}, which Triton has no datatype for"
        ))
    })?;
    if dtype != spec.dtype {
        return Err(Error::internal(format!(
            "model '{model}': configuration expects datatype {} for output '{name}', model provides {}",
            spec.dtype.config_name(),
            dtype.config_name()
        )));
    }
    let tensor = tensor
        .f_contiguous()
        .map_err(|e| Error::internal(format!("output '{name}': {}", errors::message(&e))))?;
    let shape = tensor.size();
    let len = element_count(&shape).unwrap_or(0) * dtype.element_size().unwrap_or(0);
    let data = Bytes::from_owner(TorchBuffer { tensor, len });
    Ok(BatchOutput::new(name, dtype, shape, data))
}

/// A list whose elements are all strings as a `List[str]` (tch reads a
/// returned `List[str]` as a generic list).
fn strings_as_list(value: IValue) -> IValue {
    match value {
        IValue::GenericList(items) if items.iter().all(|i| matches!(i, IValue::String(_))) => {
            IValue::StringList(
                items
                    .into_iter()
                    .filter_map(|i| match i {
                        IValue::String(text) => Some(text),
                        _ => None,
                    })
                    .collect(),
            )
        }
        other => other,
    }
}

/// How errors name a value that is not an output.
fn describe(value: &IValue) -> &'static str {
    match value {
        IValue::None => "None",
        IValue::Double(_) | IValue::Int(_) | IValue::Bool(_) => "a scalar",
        IValue::String(_) => "a str",
        IValue::StringList(_) => "a List[str]",
        IValue::Tuple(_) => "a nested tuple",
        IValue::TensorList(_) | IValue::GenericList(_) => "a nested list",
        IValue::GenericDict(_) => "a dict",
        _ => "a value of another type",
    }
}
