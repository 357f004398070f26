//! A `ModelInferRequest` message as the gRPC inference RPCs receive it:
//! protobuf bytes decoded with prost, converted into the core's request
//! (typed `contents` or `raw_input_contents`, parameters, version), then
//! validated against [`model`] as the core does.
//!
//! Input: the message's protobuf encoding.
#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use oxiserve_core::fuzzing::validate;
use oxiserve_fuzz::model;
use oxiserve_grpc::fuzzing::decode_infer_request;
use oxiserve_proto::inference::ModelInferRequest;
use prost::Message;

fuzz_target!(|data: &[u8]| {
    let Ok(message) = ModelInferRequest::decode(Bytes::copy_from_slice(data)) else {
        return;
    };
    if let Ok(request) = decode_infer_request(message) {
        let _ = validate(model(), request);
    }
});
