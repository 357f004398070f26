//! `--grpc-restricted-protocol`: APIs that answer only calls carrying a
//! given header with a given value, as Triton checks it. As in Triton, the
//! header is the flag's key prefixed with `triton-grpc-protocol-`.

use std::collections::HashMap;

use tonic::{Status, metadata::MetadataMap};

/// What Triton puts before the key of `--grpc-restricted-protocol`.
const HEADER_PREFIX: &str = "triton-grpc-protocol-";

/// The API groups Triton can restrict, and the RPCs in each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Api {
    /// ServerLive, ServerReady, ModelReady.
    Health,
    /// ServerMetadata, ModelMetadata.
    Metadata,
    /// ModelInfer, ModelStreamInfer.
    Inference,
    /// The system and CUDA shared memory RPCs.
    SharedMemory,
    /// ModelConfig.
    ModelConfig,
    /// RepositoryIndex, RepositoryModelLoad, RepositoryModelUnload.
    ModelRepository,
    /// ModelStatistics.
    Statistics,
    /// TraceSetting.
    Trace,
    /// LogSettings.
    Logging,
}

impl Api {
    /// The group named as on the command line (`model-repository`, ...).
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "health" => Api::Health,
            "metadata" => Api::Metadata,
            "inference" => Api::Inference,
            "shared-memory" => Api::SharedMemory,
            "model-config" => Api::ModelConfig,
            "model-repository" => Api::ModelRepository,
            "statistics" => Api::Statistics,
            "trace" => Api::Trace,
            "logging" => Api::Logging,
            _ => return None,
        })
    }
}

/// Which API groups need which header; empty when nothing is restricted.
#[derive(Debug, Clone, Default)]
pub struct Restrictions {
    by_api: HashMap<Api, (String, String)>,
}

impl Restrictions {
    /// Calls of `api` must carry the header `triton-grpc-protocol-<key>`
    /// set to `value`.
    pub fn restrict(&mut self, api: Api, key: &str, value: &str) {
        let header = format!("{HEADER_PREFIX}{}", key.to_ascii_lowercase());
        self.by_api.insert(api, (header, value.to_string()));
    }

    /// Refuses a call of `api` without the header its restriction asks for.
    pub(crate) fn check(&self, api: Api, metadata: &MetadataMap) -> Result<(), Status> {
        let Some((header, value)) = self.by_api.get(&api) else {
            return Ok(());
        };
        let given = metadata.get(header.as_str()).and_then(|v| v.to_str().ok());
        if given == Some(value.as_str()) {
            return Ok(());
        }
        Err(Status::unavailable(format!(
            "This protocol is restricted, expecting header '{header}'"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_restricted_apis_need_the_header() {
        let mut restrictions = Restrictions::default();
        restrictions.restrict(Api::ModelRepository, "Admin-Key", "secret");
        let mut metadata = MetadataMap::new();
        assert!(restrictions.check(Api::Health, &metadata).is_ok());
        let refused = restrictions
            .check(Api::ModelRepository, &metadata)
            .unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unavailable);
        assert!(
            refused
                .message()
                .contains("'triton-grpc-protocol-admin-key'")
        );
        let header = "triton-grpc-protocol-admin-key";
        metadata.insert(header, "wrong".parse().unwrap());
        assert!(restrictions.check(Api::ModelRepository, &metadata).is_err());
        metadata.insert(header, "secret".parse().unwrap());
        assert!(restrictions.check(Api::ModelRepository, &metadata).is_ok());
        assert_eq!(Api::from_name("shared-memory"), Some(Api::SharedMemory));
        assert_eq!(Api::from_name("nope"), None);
    }
}
