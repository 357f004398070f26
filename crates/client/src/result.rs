//! An inference response, the same for HTTP and gRPC, with its outputs
//! read as typed arrays or strings.

use bytes::Bytes;
use ndarray::{ArrayD, IxDyn};
use oxiserve_types::{DataType, ParameterValue, Parameters, Tensor, bytes_elements};

use crate::{
    element::Element,
    error::{Error, Result},
};

/// One response to an inference request (tritonclient's `InferResult`); a
/// decoupled model may send several.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InferResult {
    pub(crate) model_name: String,
    pub(crate) model_version: String,
    pub(crate) id: String,
    pub(crate) parameters: Parameters,
    pub(crate) outputs: Vec<Tensor>,
}

impl InferResult {
    /// The model that answered.
    pub fn model_name(&self) -> &str {
        &self.model_name
    }

    /// The version that answered.
    pub fn model_version(&self) -> &str {
        &self.model_version
    }

    /// The request's id, echoed.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The response parameters.
    pub fn parameters(&self) -> &Parameters {
        &self.parameters
    }

    /// Whether this is its request's last response (`triton_final_response`;
    /// always so for a model that is not decoupled).
    pub fn is_final(&self) -> bool {
        self.parameters
            .get("triton_final_response")
            .and_then(ParameterValue::as_bool)
            .unwrap_or(true)
    }

    /// Every output, in the server's order. The data of an output written
    /// into shared memory is empty.
    pub fn outputs(&self) -> &[Tensor] {
        &self.outputs
    }

    /// The output called `name`.
    pub fn output(&self, name: &str) -> Result<&Tensor> {
        self.outputs
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| Error::invalid_arg(format!("the response has no output '{name}'")))
    }

    /// Output `name` as an array of `T`, which must be its datatype.
    ///
    /// ```
    /// # fn f(result: &oxiserve_client::InferResult) -> oxiserve_client::Result<()> {
    /// let scores = result.as_array::<f32>("OUTPUT0")?;
    /// println!("shape {:?}, sum {}", scores.shape(), scores.sum());
    /// # Ok(()) }
    /// ```
    pub fn as_array<T: Element>(&self, name: &str) -> Result<ArrayD<T>> {
        let tensor = self.typed(name, T::DATATYPE)?;
        let size = size_of::<T>();
        let count = element_count(tensor)?;
        if tensor.data.len() != count * size {
            return Err(Error::protocol(format!(
                "output '{name}' has {} bytes of data for shape {:?} of {}",
                tensor.data.len(),
                tensor.shape,
                tensor.datatype
            )));
        }
        let elements = tensor.data.chunks_exact(size).map(T::from_wire).collect();
        shaped(tensor, elements)
    }

    /// A BYTES output's elements, each a zero-copy slice of the response.
    pub fn as_byte_strings(&self, name: &str) -> Result<ArrayD<Bytes>> {
        let tensor = self.typed(name, DataType::Bytes)?;
        let elements = bytes_elements(name, &tensor.data, element_count(tensor)?)
            .map_err(|e| Error::protocol(e.message))?
            .into_iter()
            .map(|e| tensor.data.slice_ref(e))
            .collect();
        shaped(tensor, elements)
    }

    /// A BYTES output's elements as UTF-8 strings.
    pub fn as_strings(&self, name: &str) -> Result<ArrayD<String>> {
        let elements = self.as_byte_strings(name)?;
        let mut strings = Vec::with_capacity(elements.len());
        for e in &elements {
            let text = std::str::from_utf8(e).map_err(|_| {
                Error::invalid_arg(format!(
                    "output '{name}' holds bytes that are not UTF-8: read it with as_byte_strings"
                ))
            })?;
            strings.push(text.to_string());
        }
        Ok(ArrayD::from_shape_vec(elements.raw_dim(), strings).expect("same shape"))
    }

    /// Output `name`, checked to be of `datatype`.
    fn typed(&self, name: &str, datatype: DataType) -> Result<&Tensor> {
        let tensor = self.output(name)?;
        if tensor.datatype != datatype {
            return Err(Error::invalid_arg(format!(
                "output '{name}' is {}, not {datatype}",
                tensor.datatype
            )));
        }
        Ok(tensor)
    }

    /// The output called `name`, to be changed (its data read from shared memory).
    pub(crate) fn output_mut(&mut self, name: &str) -> Result<&mut Tensor> {
        self.outputs
            .iter_mut()
            .find(|t| t.name == name)
            .ok_or_else(|| Error::invalid_arg(format!("the response has no output '{name}'")))
    }
}

fn element_count(tensor: &Tensor) -> Result<usize> {
    oxiserve_types::element_count(&tensor.shape).ok_or_else(|| {
        Error::protocol(format!(
            "output '{}' has shape {:?}",
            tensor.name, tensor.shape
        ))
    })
}

fn shaped<T>(tensor: &Tensor, elements: Vec<T>) -> Result<ArrayD<T>> {
    let shape: Vec<usize> = tensor.shape.iter().map(|&d| d as usize).collect();
    ArrayD::from_shape_vec(IxDyn(&shape), elements)
        .map_err(|e| Error::protocol(format!("output '{}': {e}", tensor.name)))
}

#[cfg(test)]
mod tests {
    use oxiserve_types::encode_bytes_elements;

    use super::*;

    fn result(outputs: Vec<Tensor>) -> InferResult {
        InferResult {
            outputs,
            ..InferResult::default()
        }
    }

    #[test]
    fn outputs_read_as_typed_arrays() {
        let data = Bytes::from_static(&[1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0]);
        let r = result(vec![Tensor::new("O", DataType::Int32, vec![1, 3], data)]);
        assert_eq!(
            r.as_array::<i32>("O").unwrap().into_raw_vec_and_offset().0,
            [1, 2, 3]
        );
        let err = r.as_array::<f32>("O").unwrap_err().to_string();
        assert_eq!(err, "output 'O' is INT32, not FP32");
        assert!(r.as_array::<i32>("P").is_err());
    }

    #[test]
    fn bytes_outputs_read_as_strings() {
        let data = encode_bytes_elements(["a", "bc"]);
        let r = result(vec![Tensor::new("S", DataType::Bytes, vec![2], data)]);
        assert_eq!(
            r.as_strings("S").unwrap().into_iter().collect::<Vec<_>>(),
            ["a", "bc"]
        );
        assert_eq!(&r.as_byte_strings("S").unwrap()[[1]][..], b"bc");
        assert!(r.is_final());
    }
}
