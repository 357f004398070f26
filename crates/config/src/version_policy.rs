//! Which version folders a model serves under its `version_policy`.

use oxiserve_proto::inference::{ModelVersionPolicy, model_version_policy::PolicyChoice};

use crate::error::ConfigError;

/// The version number of a version folder name, as Triton reads it: a decimal
/// number without leading zeros ("0" itself is version 0); any other name is
/// not a version.
pub fn parse_version_folder(name: &str) -> Option<i64> {
    let leading_zero = name.len() > 1 && name.starts_with('0');
    if name.is_empty() || leading_zero || !name.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    name.parse().ok()
}

/// The versions to serve, ascending, from the versions `available` on disk,
/// and the versions a `specific` policy names that have no folder (Triton
/// reports those and serves the others).
pub fn select_versions(
    policy: &ModelVersionPolicy,
    available: &[i64],
) -> Result<(Vec<i64>, Vec<i64>), ConfigError> {
    let mut sorted = available.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut missing = Vec::new();
    let chosen = match &policy.policy_choice {
        Some(PolicyChoice::All(_)) => sorted,
        Some(PolicyChoice::Specific(specific)) => {
            let mut wanted = specific.versions.clone();
            wanted.sort_unstable();
            wanted.dedup();
            missing = wanted
                .iter()
                .copied()
                .filter(|v| !sorted.contains(v))
                .collect();
            wanted.retain(|v| sorted.contains(v));
            wanted
        }
        Some(PolicyChoice::Latest(latest)) => {
            let keep = (latest.num_versions as usize).min(sorted.len());
            sorted.split_off(sorted.len() - keep)
        }
        None => sorted.split_off(sorted.len().saturating_sub(1)),
    };
    if chosen.is_empty() {
        return Err(ConfigError::field(
            "version_policy",
            format!(
                "no version to serve: the model folder has no version folder (a number such as '1') \
                 that the version policy selects (found: {})",
                list(available)
            ),
        ));
    }
    Ok((chosen, missing))
}

fn list(versions: &[i64]) -> String {
    if versions.is_empty() {
        return "none".into();
    }
    versions
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use oxiserve_proto::inference::model_version_policy::{All, Latest, Specific};

    use super::*;

    fn policy(choice: PolicyChoice) -> ModelVersionPolicy {
        ModelVersionPolicy {
            policy_choice: Some(choice),
        }
    }

    #[test]
    fn folder_names() {
        assert_eq!(parse_version_folder("1"), Some(1));
        assert_eq!(parse_version_folder("42"), Some(42));
        assert_eq!(parse_version_folder("0"), Some(0));
        for bad in [
            "00",
            "01",
            "-1",
            "v1",
            "1a",
            "",
            " 1",
            "99999999999999999999",
        ] {
            assert_eq!(parse_version_folder(bad), None, "{bad}");
        }
    }

    #[test]
    fn latest_takes_numerically_greatest() {
        let p = policy(PolicyChoice::Latest(Latest { num_versions: 2 }));
        assert_eq!(select_versions(&p, &[1, 10, 2, 3]).unwrap().0, [3, 10]);
        let p = policy(PolicyChoice::Latest(Latest { num_versions: 5 }));
        assert_eq!(select_versions(&p, &[2, 1]).unwrap().0, [1, 2]);
    }

    #[test]
    fn all_and_specific() {
        let all = policy(PolicyChoice::All(All {}));
        assert_eq!(select_versions(&all, &[3, 1, 2]).unwrap().0, [1, 2, 3]);
        let specific = policy(PolicyChoice::Specific(Specific {
            versions: vec![3, 1],
        }));
        assert_eq!(
            select_versions(&specific, &[1, 2, 3]).unwrap(),
            (vec![1, 3], vec![])
        );
        assert_eq!(
            select_versions(&specific, &[1, 2]).unwrap(),
            (vec![1], vec![3])
        );
        let err = select_versions(&specific, &[2]).unwrap_err();
        assert!(err.message.contains("no version to serve"), "{err}");
    }

    #[test]
    fn nothing_to_serve_is_an_error() {
        let all = policy(PolicyChoice::All(All {}));
        let err = select_versions(&all, &[]).unwrap_err();
        assert!(err.message.contains("no version to serve"), "{err}");
    }
}
