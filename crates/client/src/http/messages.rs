//! The HTTP endpoints' JSON answers read into the gRPC messages of the same
//! calls (`inference.ModelMetadataResponse`, ...), so both protocols give
//! one vocabulary. Fields the messages lack are ignored; 64-bit integers
//! may be numbers or strings.

use prost_reflect::{DeserializeOptions, DynamicMessage};
use serde_json::Value;

use crate::error::{Error, Result};

/// Reads `json` as the message `inference.{name}`.
pub(crate) fn from_json<M: prost::Message + Default>(name: &str, json: Value) -> Result<M> {
    let full_name = format!("inference.{name}");
    let descriptor = oxiserve_proto::descriptor_pool()
        .get_message_by_name(&full_name)
        .expect("the message is compiled in");
    let options = DeserializeOptions::new().deny_unknown_fields(false);
    let message = DynamicMessage::deserialize_with_options(descriptor, json, &options)
        .map_err(|e| Error::protocol(format!("not a {name}: {e}")))?;
    message
        .transcode_to()
        .map_err(|e| Error::protocol(format!("not a {name}: {e}")))
}

#[cfg(test)]
mod tests {
    use oxiserve_proto::inference::{ModelStatisticsResponse, RepositoryIndexResponse};
    use serde_json::json;

    use super::*;

    #[test]
    fn triton_json_reads_as_messages() {
        let stats = json!({"model_stats": [{"name": "m", "version": "1", "inference_count": "7",
            "execution_count": 3, "inference_stats": {"success": {"count": 7, "ns": 100}},
            "a_newer_field": []}]});
        let stats: ModelStatisticsResponse = from_json("ModelStatisticsResponse", stats).unwrap();
        let m = &stats.model_stats[0];
        assert_eq!((m.inference_count, m.execution_count), (7, 3));
        assert_eq!(m.inference_stats.unwrap().success.unwrap().ns, 100);
        let index = json!({"models": [{"name": "m", "state": "READY"}]});
        let index: RepositoryIndexResponse = from_json("RepositoryIndexResponse", index).unwrap();
        assert_eq!(index.models[0].state, "READY");
        let err = from_json::<RepositoryIndexResponse>("RepositoryIndexResponse", json!([]));
        assert!(err.is_err());
    }
}
