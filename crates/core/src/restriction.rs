//! Restricted APIs (`--http-restricted-api`, `--grpc-restricted-protocol`):
//! API groups that answer only requests carrying a given header with a
//! given value. Protocol-neutral: each frontend names its headers and
//! words its refusal as Triton does.

use std::collections::HashMap;

/// The API groups Triton can restrict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RestrictedCategory {
    /// Server live/ready, model ready.
    Health,
    /// Server and model metadata.
    Metadata,
    /// Inference (and generate).
    Inference,
    /// System and CUDA shared memory.
    SharedMemory,
    /// Model configuration.
    ModelConfig,
    /// Repository index, load, unload.
    ModelRepository,
    /// Inference statistics.
    Statistics,
    /// Trace settings.
    Trace,
    /// Log settings.
    Logging,
}

impl RestrictedCategory {
    /// The group named as on the command line (`model-repository`, ...).
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "health" => Self::Health,
            "metadata" => Self::Metadata,
            "inference" => Self::Inference,
            "shared-memory" => Self::SharedMemory,
            "model-config" => Self::ModelConfig,
            "model-repository" => Self::ModelRepository,
            "statistics" => Self::Statistics,
            "trace" => Self::Trace,
            "logging" => Self::Logging,
            _ => return None,
        })
    }
}

/// The header (name in lower case, and value) each restricted group needs;
/// empty when nothing is restricted.
#[derive(Debug, Clone, Default)]
pub struct Restrictions {
    by_category: HashMap<RestrictedCategory, (String, String)>,
}

impl Restrictions {
    /// Requests of `category` must carry the header `header` (any case)
    /// set to exactly `value`.
    pub fn restrict(&mut self, category: RestrictedCategory, header: &str, value: &str) {
        self.by_category
            .insert(category, (header.to_ascii_lowercase(), value.to_string()));
    }

    /// The header and value `category` needs, if it is restricted.
    pub fn requirement(&self, category: RestrictedCategory) -> Option<(&str, &str)> {
        self.by_category
            .get(&category)
            .map(|(header, value)| (header.as_str(), value.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_restricted_groups_have_a_requirement() {
        let mut restrictions = Restrictions::default();
        restrictions.restrict(RestrictedCategory::ModelRepository, "Admin-Key", "Secret");
        assert_eq!(
            restrictions.requirement(RestrictedCategory::ModelRepository),
            Some(("admin-key", "Secret"))
        );
        assert_eq!(restrictions.requirement(RestrictedCategory::Health), None);
        assert_eq!(
            RestrictedCategory::from_name("shared-memory"),
            Some(RestrictedCategory::SharedMemory)
        );
        assert_eq!(RestrictedCategory::from_name("nope"), None);
    }
}
