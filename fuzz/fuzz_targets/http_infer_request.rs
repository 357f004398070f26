//! The body of `POST /v2/models/{model}/infer`: the KServe v2 JSON header
//! and Triton's binary tensor data after it, decoded, then validated against
//! [`model`] as the core does.
//!
//! Input: a 4-byte little-endian `Inference-Header-Content-Length`
//! (0xffffffff: no such header), then the body.
#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use oxiserve_core::fuzzing::validate;
use oxiserve_fuzz::{Input, model};
use oxiserve_http::codec::{decode_infer_request, is_raw_binary_request};

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let header_length = match input.u32() {
        u32::MAX => None,
        length => Some(length as usize),
    };
    let body = Bytes::copy_from_slice(input.rest());
    let raw = is_raw_binary_request(body.len(), header_length);
    let decoded = decode_infer_request("model", Some(1), body, header_length);
    assert!(!(raw && decoded.is_ok()), "raw binary requests are refused");
    if let Ok(request) = decoded {
        let _ = validate(model(), request);
    }
});
