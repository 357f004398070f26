//! Shared memory parameters of a request's input and output
//! (`shared_memory_region`, `shared_memory_byte_size`,
//! `shared_memory_offset`), resolved against a real registered object as the
//! core does: spans checked, the input read, the output written.
//!
//! The registry holds a 64-byte object in `/dev/shm` (unlinked once
//! registered) as region "r0" (all of it) and "r1" (bytes 16 to 48).
//!
//! Input: the input's three parameters, then the output's, each a tag byte
//! (modulo 6: absent, bool, int, uint, double, string) and its value (a
//! byte; 8 bytes little-endian; a length byte and the string); the output's
//! class count (a byte); then the output's data.
#![no_main]

use std::{fs::File, sync::OnceLock};

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use oxiserve_core::{SharedMemoryRegistry, fuzzing::resolve_shared_memory};
use oxiserve_fuzz::Input;
use oxiserve_types::{DataType, InferRequest, ParameterValue, Parameters, RequestedOutput, Tensor};

const KEYS: [&str; 3] = [
    "shared_memory_region",
    "shared_memory_byte_size",
    "shared_memory_offset",
];

fn registry() -> &'static SharedMemoryRegistry {
    static REGISTRY: OnceLock<SharedMemoryRegistry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let key = format!("/oxiserve-fuzz-{}", std::process::id());
        let path = format!("/dev/shm{key}");
        File::create(&path)
            .and_then(|file| file.set_len(64))
            .expect("a shared memory object in /dev/shm");
        let registry = SharedMemoryRegistry::default();
        registry.register("r0", &key, 0, 64).expect("r0 registers");
        registry.register("r1", &key, 16, 32).expect("r1 registers");
        std::fs::remove_file(&path).expect("the object is unlinked");
        registry
    })
}

fn parameters(input: &mut Input<'_>) -> Parameters {
    let mut parameters = Parameters::new();
    for key in KEYS {
        let value = match input.u8() % 6 {
            0 => continue,
            1 => ParameterValue::Bool(input.u8() & 1 == 1),
            2 => ParameterValue::Int(input.u64() as i64),
            3 => ParameterValue::Uint(input.u64()),
            4 => ParameterValue::Double(f64::from_bits(input.u64())),
            _ => ParameterValue::String(input.string()),
        };
        parameters.insert(key.to_string(), value);
    }
    parameters
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mut tensor = Tensor::new("INPUT0", DataType::Uint8, vec![-1], Bytes::new());
    tensor.parameters = parameters(&mut input);
    let output = RequestedOutput {
        name: "OUTPUT0".into(),
        parameters: parameters(&mut input),
        class_count: u32::from(input.u8()),
    };
    // The bytes the input reads from its region, if it names one.
    let span = tensor.parameters.contains_key(KEYS[0]).then(|| {
        let byte_size = tensor.parameters.get(KEYS[1]);
        byte_size.and_then(ParameterValue::as_u64).unwrap_or(0)
    });
    let mut request = InferRequest {
        inputs: vec![tensor],
        outputs: vec![output],
        ..InferRequest::default()
    };
    let data = Bytes::copy_from_slice(input.rest());
    let result = Tensor::new("OUTPUT0", DataType::Uint8, vec![-1], data);
    if resolve_shared_memory(registry(), &mut request, &result).is_ok()
        && let Some(byte_size) = span
    {
        assert_eq!(request.inputs[0].data.len() as u64, byte_size);
    }
});
