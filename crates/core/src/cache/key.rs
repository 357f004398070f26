//! A request's cache key: what Triton hashes (model name, version, each
//! input's name and bytes, in name order) plus each input's datatype and
//! shape and the requested outputs, so that requests with different answers
//! never share an entry.

use oxiserve_types::InferRequest;
use sha2::{Digest, Sha256};

/// The hex SHA-256 key of `request` for version `version` of `model`, asking
/// for `outputs`. The same in every process, so replicas can share a cache.
pub(crate) fn cache_key(
    model: &str,
    version: i64,
    request: &InferRequest,
    outputs: &[String],
) -> String {
    let mut hash = Sha256::new();
    let mut field = |bytes: &[u8]| {
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(bytes);
    };
    field(model.as_bytes());
    field(&version.to_le_bytes());
    let mut inputs: Vec<_> = request.inputs.iter().collect();
    inputs.sort_by(|a, b| a.name.cmp(&b.name));
    for input in inputs {
        field(input.name.as_bytes());
        field(input.datatype.wire_name().as_bytes());
        let shape: Vec<u8> = input.shape.iter().flat_map(|d| d.to_le_bytes()).collect();
        field(&shape);
        field(&input.data);
    }
    let mut outputs: Vec<&String> = outputs.iter().collect();
    outputs.sort();
    for output in outputs {
        field(output.as_bytes());
    }
    let digest = hash.finalize();
    digest.iter().map(|b| format!("{b:02x}")).collect()
}
