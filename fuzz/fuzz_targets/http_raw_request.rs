//! A raw binary request (`Inference-Header-Content-Length: 0`): the whole
//! body is the single input of the model, whose datatype and dims come from
//! its configuration. The request is then validated against that
//! configuration as the core does.
//!
//! Input: the input's datatype (a byte, `DataType`'s number in
//! `config.pbtxt`), `max_batch_size` (a byte), the number of dims (a byte,
//! at most 4 used), each dim as 8 bytes little-endian, then the body.
#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use oxiserve_config::ModelConfig;
use oxiserve_core::fuzzing::validate;
use oxiserve_fuzz::Input;
use oxiserve_http::codec::decode_raw_request;
use oxiserve_proto::inference::ModelInput;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let data_type = i32::from(input.u8());
    let max_batch_size = i32::from(input.u8());
    let dims = (0..input.u8() % 5).map(|_| input.u64() as i64).collect();
    let config = ModelConfig {
        name: "raw".into(),
        max_batch_size,
        input: vec![ModelInput {
            name: "INPUT0".into(),
            data_type,
            dims,
            ..ModelInput::default()
        }],
        ..ModelConfig::default()
    };
    let body = Bytes::copy_from_slice(input.rest());
    if let Ok(request) = decode_raw_request(&config, None, body) {
        let _ = validate(&config, request);
    }
});
