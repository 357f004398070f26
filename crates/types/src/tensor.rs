//! Tensors: a name, an element type, a shape and the raw bytes.

use bytes::{BufMut, Bytes, BytesMut};

use crate::{
    data_type::DataType,
    error::{Error, Result},
    parameters::Parameters,
};

/// A named tensor. `data` holds the elements in row-major order, little-endian;
/// BYTES elements are each a 4-byte little-endian length followed by the bytes
/// (Triton's wire layout). `data` is shared, never copied, on its way from the
/// socket to the backend and back.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    pub name: String,
    pub datatype: DataType,
    pub shape: Vec<i64>,
    pub data: Bytes,
    pub parameters: Parameters,
}

impl Tensor {
    /// A tensor with no parameters.
    pub fn new(name: impl Into<String>, datatype: DataType, shape: Vec<i64>, data: Bytes) -> Self {
        Self {
            name: name.into(),
            datatype,
            shape,
            data,
            parameters: Parameters::new(),
        }
    }

    /// The batch size when the first dimension is the batch dimension.
    pub fn batch_size(&self) -> Option<usize> {
        self.shape.first().and_then(|&d| usize::try_from(d).ok())
    }
}

/// Splits a BYTES tensor's data into its elements, checking the layout:
/// `expected` elements, each with a complete length prefix and payload, and
/// nothing left over. The error text says what is wrong for tensor `name`.
pub fn bytes_elements<'a>(name: &str, data: &'a [u8], expected: usize) -> Result<Vec<&'a [u8]>> {
    // `expected` comes from a shape the client wrote: room for no more
    // elements than `data` can hold (4 bytes each at least).
    let mut elements = Vec::with_capacity(expected.min(data.len() / 4));
    let mut rest = data;
    while !rest.is_empty() {
        let Some((len, tail)) = rest.split_first_chunk::<4>() else {
            return Err(Error::invalid_arg(format!(
                "element byte size indicator exceeds the end of the buffer for input '{name}'"
            )));
        };
        let len = u32::from_le_bytes(*len) as usize;
        if len > tail.len() {
            return Err(Error::invalid_arg(format!(
                "element byte size indicator exceeds the end of the buffer for input '{name}'"
            )));
        }
        let (element, tail) = tail.split_at(len);
        elements.push(element);
        rest = tail;
    }
    if elements.len() != expected {
        return Err(Error::invalid_arg(format!(
            "expected {expected} string elements for inference input '{name}', got {}",
            elements.len()
        )));
    }
    Ok(elements)
}

/// Encodes byte strings in the BYTES wire layout.
pub fn encode_bytes_elements<I, E>(elements: I) -> Bytes
where
    I: IntoIterator<Item = E>,
    E: AsRef<[u8]>,
{
    let mut out = BytesMut::new();
    for element in elements {
        let element = element.as_ref();
        out.put_u32_le(element.len() as u32);
        out.put_slice(element);
    }
    out.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_layout_round_trips() {
        let data = encode_bytes_elements(["안녕", "", "x"]);
        let elements = bytes_elements("IN", &data, 3).unwrap();
        assert_eq!(elements, vec!["안녕".as_bytes(), b"", b"x"]);
    }

    #[test]
    fn bytes_layout_errors_name_the_tensor() {
        let data = encode_bytes_elements(["ab"]);
        let err = bytes_elements("IN", &data, 2).unwrap_err();
        assert!(err.message.contains("expected 2 string elements"), "{err}");
        let err = bytes_elements("IN", &data[..5], 1).unwrap_err();
        assert!(err.message.contains("'IN'"), "{err}");
        let err = bytes_elements("IN", &[1, 0], 1).unwrap_err();
        assert!(err.message.contains("exceeds"), "{err}");
    }

    /// Found by fuzzing (fuzz/fuzz_targets/bytes_tensor.rs): a declared
    /// element count far beyond the data reserved room for all of them and
    /// aborted the process when the allocation failed.
    #[test]
    fn a_huge_declared_count_is_an_error() {
        let data = encode_bytes_elements(["x"]);
        let err = bytes_elements("IN", &data, usize::MAX).unwrap_err();
        assert!(
            err.message.contains("expected 18446744073709551615"),
            "{err}"
        );
        let err = bytes_elements("IN", &[0xf9; 16], 0xf900_0000).unwrap_err();
        assert!(err.message.contains("exceeds"), "{err}");
    }
}
