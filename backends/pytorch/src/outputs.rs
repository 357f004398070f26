//! forward()'s result as the configured outputs, ready to be split between
//! the group's requests: tensors are handed out from libtorch's own buffer
//! without a copy; lists of strings are encoded in Triton's BYTES layout.

use bytes::Bytes;
use oxiserve_types::{
    DataType, Error, Result, Tensor as Output, element_count, encode_bytes_elements,
};
use tch::{IValue, Tensor};

use crate::{
    dtype, errors,
    plan::{OutputSpec, Plan},
};

/// One output of a group, to be split by rows.
pub(crate) struct BatchOutput {
    name: String,
    dtype: DataType,
    shape: Vec<i64>,
    data: Bytes,
    /// Byte offset of each string element's encoding (strings only).
    string_offsets: Option<Vec<usize>>,
}

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
            BatchOutput::new(&plan.model, spec, value, rows)
        })
        .collect()
}

impl BatchOutput {
    fn new(model: &str, spec: &OutputSpec, value: IValue, rows: Option<usize>) -> Result<Self> {
        let name = &spec.name;
        match value {
            IValue::Tensor(tensor) => Self::tensor(model, spec, tensor),
            IValue::StringList(texts) if spec.dtype == DataType::Bytes => {
                let count = texts.len() as i64;
                let shape = match rows {
                    Some(rows) if rows > 0 => vec![rows as i64, count / rows as i64],
                    _ => vec![count],
                };
                let mut offsets = Vec::with_capacity(texts.len() + 1);
                let mut at = 0;
                for text in &texts {
                    offsets.push(at);
                    at += 4 + text.len();
                }
                offsets.push(at);
                Ok(Self {
                    name: name.clone(),
                    dtype: DataType::Bytes,
                    shape,
                    data: encode_bytes_elements(&texts),
                    string_offsets: Some(offsets),
                })
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

    fn tensor(model: &str, spec: &OutputSpec, tensor: Tensor) -> Result<Self> {
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
        Ok(Self {
            name: name.clone(),
            dtype,
            shape,
            data: Bytes::from_owner(TorchBuffer { tensor, len }),
            string_offsets: None,
        })
    }

    /// The output's name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The part of the output for rows `start..start + rows` of the group,
    /// or the whole output when `rows` is `None` (a model that doesn't batch).
    pub(crate) fn rows(&self, start: usize, rows: Option<usize>) -> Result<Output> {
        let Some(rows) = rows else {
            return Ok(Output::new(
                &self.name,
                self.dtype,
                self.shape.clone(),
                self.data.clone(),
            ));
        };
        let total = self.shape.first().copied().unwrap_or(0).max(0) as usize;
        if start + rows > total {
            return Err(Error::internal(format!(
                "output '{}' has {total} rows for a batch of at least {}",
                self.name,
                start + rows
            )));
        }
        let per_row = element_count(&self.shape[1..]).unwrap_or(0);
        let (from, to) = match &self.string_offsets {
            Some(offsets) => (offsets[start * per_row], offsets[(start + rows) * per_row]),
            None => {
                let row_bytes = per_row * self.dtype.element_size().unwrap_or(0);
                (start * row_bytes, (start + rows) * row_bytes)
            }
        };
        let mut shape = self.shape.clone();
        shape[0] = rows as i64;
        Ok(Output::new(
            &self.name,
            self.dtype,
            shape,
            self.data.slice(from..to),
        ))
    }
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
