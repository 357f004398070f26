//! Entry points for the fuzz targets in `fuzz/` (feature `fuzzing`, off by
//! default): the core's checks of outside bytes that otherwise run only
//! inside [`Server::infer`](crate::Server::infer). Not part of the API.

use oxiserve_backend::BackendResponse;
use oxiserve_proto::ModelConfig;
use oxiserve_types::{InferRequest, Result, Tensor};

use crate::shared_memory::SharedMemoryRegistry;

/// Checks `request` against the model `config` (names, datatypes, shapes,
/// byte sizes, the BYTES layout) and applies `reshape`, as the core does
/// before scheduling; returns the request the backend would receive.
pub fn validate(config: &ModelConfig, request: InferRequest) -> Result<InferRequest> {
    crate::infer::validate::validate(config, request).map(|valid| valid.request)
}

/// Reads `request`'s shared memory inputs from `registry`'s regions and
/// resolves its shared memory outputs, as the core does before validation,
/// then writes `output` into each output's region as a response would (an
/// input's region, also returned, takes no write).
pub fn resolve_shared_memory(
    registry: &SharedMemoryRegistry,
    request: &mut InferRequest,
    output: &Tensor,
) -> Result<()> {
    for region in registry.resolve(request)? {
        region.write(&mut output.clone())?;
    }
    Ok(())
}

/// Decodes a response cache entry as the cache does with the bytes a store
/// (Redis: outside bytes) hands back; the error says what is wrong.
pub fn decode_cache_entry(bytes: &[u8]) -> std::result::Result<BackendResponse, String> {
    crate::cache::entry::decode(bytes)
}

/// A response encoded as the cache stores it.
pub fn encode_cache_entry(response: &BackendResponse) -> Vec<u8> {
    crate::cache::entry::encode(response)
}
