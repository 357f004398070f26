//! `--grpc-restricted-protocol` as Triton checks it: the header a restricted
//! API group needs is the flag's key prefixed with `triton-grpc-protocol-`.

use oxiserve_core::{RestrictedCategory, Restrictions};
use tonic::{Status, metadata::MetadataMap};

/// What Triton puts before the key of `--grpc-restricted-protocol`.
const HEADER_PREFIX: &str = "triton-grpc-protocol-";

/// The header a `--grpc-restricted-protocol` key stands for.
pub fn restricted_header(key: &str) -> String {
    format!("{HEADER_PREFIX}{key}")
}

/// Refuses a call of `category` without the header its restriction asks for.
pub(crate) fn check(
    restrictions: &Restrictions,
    category: RestrictedCategory,
    metadata: &MetadataMap,
) -> Result<(), Status> {
    let Some((header, value)) = restrictions.requirement(category) else {
        return Ok(());
    };
    let given = metadata.get(header).and_then(|v| v.to_str().ok());
    if given == Some(value) {
        return Ok(());
    }
    Err(Status::unavailable(format!(
        "This protocol is restricted, expecting header '{header}'"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_restricted_apis_need_the_header() {
        let mut restrictions = Restrictions::default();
        restrictions.restrict(
            RestrictedCategory::ModelRepository,
            &restricted_header("Admin-Key"),
            "secret",
        );
        let mut metadata = MetadataMap::new();
        assert!(check(&restrictions, RestrictedCategory::Health, &metadata).is_ok());
        let refused = check(
            &restrictions,
            RestrictedCategory::ModelRepository,
            &metadata,
        )
        .unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unavailable);
        assert!(
            refused
                .message()
                .contains("'triton-grpc-protocol-admin-key'")
        );
        let header = "triton-grpc-protocol-admin-key";
        metadata.insert(header, "wrong".parse().unwrap());
        assert!(
            check(
                &restrictions,
                RestrictedCategory::ModelRepository,
                &metadata
            )
            .is_err()
        );
        metadata.insert(header, "secret".parse().unwrap());
        assert!(
            check(
                &restrictions,
                RestrictedCategory::ModelRepository,
                &metadata
            )
            .is_ok()
        );
    }
}
