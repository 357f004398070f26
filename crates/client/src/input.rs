//! Request inputs: typed arrays, strings, raw bytes, or a shared memory span.

use bytes::Bytes;
use ndarray::{ArrayRef, Dimension};
use oxiserve_types::{DataType, ParameterValue, Tensor, encode_bytes_elements};

use crate::{element::Element, shm::shared_memory_parameters};

/// One input tensor of an inference request (tritonclient's `InferInput`).
#[derive(Debug, Clone, PartialEq)]
pub struct InferInput {
    tensor: Tensor,
    binary: bool,
}

impl InferInput {
    /// An input holding `array`'s elements in row-major order, with its shape.
    ///
    /// ```
    /// let input = oxiserve_client::InferInput::from_array("INPUT0", &ndarray::arr2(&[[1.0_f32, 2.0]]));
    /// assert_eq!((input.shape(), input.data().len()), (&[1, 2][..], 8));
    /// ```
    pub fn from_array<T: Element, D: Dimension>(name: &str, array: &ArrayRef<T, D>) -> Self {
        let mut data = Vec::with_capacity(array.len() * size_of::<T>());
        for &element in array.iter() {
            data.extend_from_slice(element.to_wire().as_ref());
        }
        Self::from_raw(name, T::DATATYPE, shape_of(array.shape()), data)
    }

    /// A BYTES input of `array`'s strings (any `AsRef<[u8]>`: `&str`,
    /// `String`, `Vec<u8>`), with its shape.
    ///
    /// ```
    /// let input = oxiserve_client::InferInput::from_strings("TEXT", &ndarray::arr1(&["a", "bc"]));
    /// assert_eq!(input.datatype(), oxiserve_client::DataType::Bytes);
    /// ```
    pub fn from_strings<S: AsRef<[u8]>, D: Dimension>(name: &str, array: &ArrayRef<S, D>) -> Self {
        let data = encode_bytes_elements(array.iter());
        Self::from_raw(name, DataType::Bytes, shape_of(array.shape()), data)
    }

    /// An input of data already in the wire layout: elements little-endian,
    /// BYTES elements each after a 4-byte little-endian length.
    pub fn from_raw(
        name: &str,
        datatype: DataType,
        shape: Vec<i64>,
        data: impl Into<Bytes>,
    ) -> Self {
        InferInput {
            tensor: Tensor::new(name, datatype, shape, data.into()),
            binary: true,
        }
    }

    /// This input without its data, read by the server from `region` at
    /// `offset` instead; its data's length is the span's size. Write the
    /// data there first ([`SystemSharedMemoryRegion::write`]).
    ///
    /// [`SystemSharedMemoryRegion::write`]: crate::shm::SystemSharedMemoryRegion::write
    pub fn with_shared_memory(mut self, region: &str, offset: u64) -> Self {
        let byte_size = self.tensor.data.len() as u64;
        self.tensor.data = Bytes::new();
        self.tensor
            .parameters
            .extend(shared_memory_parameters(region, byte_size, offset));
        self
    }

    /// Over HTTP, whether the data travels as binary tensor data (the
    /// default) or as a JSON `data` array. gRPC always sends it raw.
    pub fn binary_data(mut self, binary: bool) -> Self {
        self.binary = binary;
        self
    }

    /// This input with a tensor parameter.
    pub fn with_parameter(mut self, key: &str, value: ParameterValue) -> Self {
        self.tensor.parameters.insert(key.into(), value);
        self
    }

    /// The input's name.
    pub fn name(&self) -> &str {
        &self.tensor.name
    }

    /// The input's datatype.
    pub fn datatype(&self) -> DataType {
        self.tensor.datatype
    }

    /// The input's shape.
    pub fn shape(&self) -> &[i64] {
        &self.tensor.shape
    }

    /// The data in the wire layout; empty for a shared memory input.
    pub fn data(&self) -> &Bytes {
        &self.tensor.data
    }

    /// The name, datatype, shape, data and parameters.
    pub fn tensor(&self) -> &Tensor {
        &self.tensor
    }

    /// Whether the data travels as binary tensor data over HTTP.
    pub fn is_binary(&self) -> bool {
        self.binary
    }

    /// Whether the server reads the data from a shared memory region.
    pub fn in_shared_memory(&self) -> bool {
        self.tensor.parameters.contains_key("shared_memory_region")
    }
}

fn shape_of(shape: &[usize]) -> Vec<i64> {
    shape.iter().map(|&d| d as i64).collect()
}

#[cfg(test)]
mod tests {
    use ndarray::arr2;

    use super::*;

    #[test]
    fn arrays_become_row_major_little_endian_data() {
        let input = InferInput::from_array("IN", &arr2(&[[1_i16, 2], [3, 4]]).t());
        assert_eq!(input.shape(), [2, 2]);
        assert_eq!(&input.data()[..], [1, 0, 3, 0, 2, 0, 4, 0]);
    }

    #[test]
    fn shared_memory_inputs_carry_the_span_not_the_data() {
        let input = InferInput::from_raw("IN", DataType::Uint8, vec![3], vec![1, 2, 3])
            .with_shared_memory("r", 16);
        assert!(input.data().is_empty() && input.in_shared_memory());
        let p = &input.tensor().parameters;
        assert_eq!(p["shared_memory_byte_size"], ParameterValue::Int(3));
        assert_eq!(p["shared_memory_offset"], ParameterValue::Int(16));
    }
}
