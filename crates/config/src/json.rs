//! The JSON form of a configuration, shaped as Triton's `GET /v2/models/{m}/config`
//! returns it: proto field names, every scalar and list even when default,
//! enums by name, 64-bit integers as numbers, unset messages left out.

use oxiserve_proto::{ModelConfig, model_config_descriptor};
use prost::Message;
use prost_reflect::{DynamicMessage, SerializeOptions};

/// Fields newer than the Triton release oxiserve mirrors (2.51), left out of
/// the JSON while they hold their default, so clients see what they know:
/// (path of the enclosing object, field).
const NEWER_FIELDS: &[(&str, &str)] = &[("ensemble_scheduling", "max_inflight_requests")];

/// Renders `config` as Triton's JSON.
pub fn to_json(config: &ModelConfig) -> serde_json::Value {
    let mut json = serialize(config);
    for (object, field) in NEWER_FIELDS {
        if let Some(map) = json.get_mut(*object).and_then(|o| o.as_object_mut())
            && map.get(*field).is_some_and(|v| v == 0)
        {
            map.remove(*field);
        }
    }
    json
}

/// Reads a configuration from its JSON form (what [`to_json`] writes, or any
/// JSON with proto field names; 64-bit integers as numbers or strings).
pub fn from_json(json: &str) -> Result<ModelConfig, String> {
    let mut deserializer = serde_json::Deserializer::from_str(json);
    let message = DynamicMessage::deserialize(model_config_descriptor(), &mut deserializer)
        .map_err(|e| format!("invalid model configuration JSON: {e}"))?;
    message
        .transcode_to::<ModelConfig>()
        .map_err(|e| format!("invalid model configuration JSON: {e}"))
}

fn serialize(config: &ModelConfig) -> serde_json::Value {
    let message =
        DynamicMessage::decode(model_config_descriptor(), config.encode_to_vec().as_slice())
            .expect("a ModelConfig re-encodes to its own descriptor");
    let options = SerializeOptions::new()
        .use_proto_field_name(true)
        .skip_default_fields(false)
        .stringify_64_bit_integers(false);
    message
        .serialize_with_options(serde_json::value::Serializer, &options)
        .expect("a ModelConfig always serializes to JSON")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trip() {
        let mut config = ModelConfig {
            name: "m".into(),
            backend: "python".into(),
            max_batch_size: 8,
            ..Default::default()
        };
        config.input.push(oxiserve_proto::inference::ModelInput {
            name: "INPUT0".into(),
            data_type: oxiserve_proto::inference::DataType::TypeFp32 as i32,
            dims: vec![4],
            ..Default::default()
        });
        let json = to_json(&config).to_string();
        assert_eq!(from_json(&json).unwrap(), config);
    }

    #[test]
    fn json_errors_say_where() {
        let err = from_json(r#"{"name":"m","max_batch_size":"x"}"#).unwrap_err();
        assert!(
            err.contains("invalid digit found in string at line 1 column 32"),
            "{err}"
        );
        let err = from_json(r#"{"name":"m","no_such_field":1}"#).unwrap_err();
        assert!(err.contains("no_such_field"), "{err}");
    }
}
