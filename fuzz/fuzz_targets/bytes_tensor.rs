//! BYTES tensor data in Triton's wire layout (each element a 4-byte
//! little-endian length, then its bytes): the core's check of a request's
//! BYTES input and `bytes_elements`, which backends use to split one, must
//! agree, and the elements they accept encode back to the same data.
//!
//! Input: the element count the tensor's shape declares (4 bytes,
//! little-endian), then the tensor's data.
#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use oxiserve_core::fuzzing::validate;
use oxiserve_fuzz::{Input, model};
use oxiserve_types::{DataType, InferRequest, Tensor, bytes_elements, encode_bytes_elements};

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let count = input.u32();
    let data = input.rest();
    let elements = bytes_elements("TEXT", data, count as usize);
    let request = InferRequest {
        inputs: vec![
            Tensor::new("INPUT0", DataType::Int32, vec![1, 0], Bytes::new()),
            Tensor::new(
                "TEXT",
                DataType::Bytes,
                vec![1, i64::from(count)],
                Bytes::copy_from_slice(data),
            ),
        ],
        ..InferRequest::default()
    };
    let valid = validate(model(), request);
    assert_eq!(
        elements.is_ok(),
        valid.is_ok(),
        "bytes_elements: {elements:?}, validation: {valid:?}"
    );
    if let Ok(elements) = elements {
        assert_eq!(encode_bytes_elements(elements), data);
    }
});
