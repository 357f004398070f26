//! The body of `POST /v2/models/{model}/generate` (and of the OpenAI
//! `/v1` requests, which go through the same mapping): JSON members mapped
//! to the model's inputs by name, the rest to parameters, then validated
//! against [`model`] as the core does.
//!
//! Input: the body.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use oxiserve_core::{ModelMetadata, fuzzing::validate};
use oxiserve_fuzz::model;
use oxiserve_http::codec::decode_generate_request;

fuzz_target!(|data: &[u8]| {
    static METADATA: OnceLock<ModelMetadata> = OnceLock::new();
    let metadata = METADATA.get_or_init(|| ModelMetadata::new(model(), vec!["1".into()]));
    if let Ok(request) = decode_generate_request("model", Some(1), &metadata.inputs, data) {
        let _ = validate(model(), request);
    }
});
