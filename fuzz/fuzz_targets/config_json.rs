//! A configuration in JSON, as a load request's `config` parameter carries
//! it: parsed into a `ModelConfig`, then completed, normalized and validated
//! as loading a model does; a configuration that loads survives the JSON
//! round trip: read back, it renders the same JSON. (Comparing the configs
//! themselves would fail on a NaN, which `fp32_false_true` may hold as
//! Triton allows, since NaN != NaN.)
#![no_main]

use libfuzzer_sys::fuzz_target;
use oxiserve_config::{ModelFolder, complete_config, from_json, to_json};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(config) = from_json(text) else {
        return;
    };
    let folder = ModelFolder {
        name: config.name.clone(),
        ..ModelFolder::default()
    };
    if let Ok(config) = complete_config(config, &folder) {
        let json = to_json(&config);
        let again = from_json(&json.to_string()).map(|config| to_json(&config));
        assert_eq!(again.as_ref(), Ok(&json), "{config:?}");
    }
});
