//! `config.pbtxt` as the repository reads it: UTF-8 text, parsed in protobuf
//! text format into a `ModelConfig`, then completed, normalized and validated
//! as loading a model does, and rendered as the `/config` JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use oxiserve_config::{ModelFolder, complete_config, parse_config, to_json};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(parsed) = parse_config(text, "config.pbtxt".as_ref()) else {
        return;
    };
    let folder = ModelFolder {
        name: parsed.config.name.clone(),
        ..ModelFolder::default()
    };
    if let Ok(config) = complete_config(parsed.config, &folder) {
        to_json(&config);
    }
});
