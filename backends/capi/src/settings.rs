//! The loader's settings from the command line, and the backend
//! configuration JSON each library receives (`TRITONBACKEND_BackendConfig`),
//! built as Triton builds it.

use std::{collections::BTreeMap, path::PathBuf};

use serde_json::{Map, Value, json};

/// Where Triton looks for backends unless `--backend-directory` says.
pub const DEFAULT_BACKEND_DIRECTORY: &str = "/opt/tritonserver/backends";

/// The setting Triton adds to every backend's configuration when the
/// command line gives none, and its value.
const DEFAULT_MAX_BATCH_SIZE: (&str, &str) = ("default-max-batch-size", "4");

/// One `--backend-config=[BACKEND,]SETTING=VALUE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendSetting {
    /// The backend it is for; `None` for a global setting.
    pub backend: Option<String>,
    pub setting: String,
    pub value: String,
}

/// What the command line tells the loader.
#[derive(Debug, Clone, PartialEq)]
pub struct CapiSettings {
    /// `--backend-directory`: `<dir>/<name>/libtriton_<name>.so`.
    pub backend_directory: PathBuf,
    /// Every `--backend-config`, in command-line order.
    pub backend_config: Vec<BackendSetting>,
    /// Whether models' configurations are auto-completed
    /// (`--strict-model-config=false`, the default).
    pub auto_complete: bool,
    /// `--min-supported-compute-capability`.
    pub min_compute_capability: f64,
}

impl Default for CapiSettings {
    fn default() -> Self {
        Self {
            backend_directory: PathBuf::from(DEFAULT_BACKEND_DIRECTORY),
            backend_config: Vec::new(),
            auto_complete: true,
            min_compute_capability: 0.0,
        }
    }
}

impl CapiSettings {
    /// The settings backend `name` sees: the global ones Triton adds
    /// (`auto-complete-config`, `backend-directory`,
    /// `min-compute-capability`), the global `--backend-config` ones, then
    /// `name`'s own, each overriding the one before of the same setting.
    pub fn resolved(&self, name: &str) -> Vec<(String, String)> {
        let mut settings = BTreeMap::new();
        let globals = [
            ("auto-complete-config", self.auto_complete.to_string()),
            (
                "min-compute-capability",
                format!("{:.6}", self.min_compute_capability),
            ),
            (
                "backend-directory",
                self.backend_directory.to_string_lossy().into_owned(),
            ),
        ];
        let given = |global: bool| {
            self.backend_config
                .iter()
                .filter(move |s| match &s.backend {
                    None => global,
                    Some(backend) => !global && backend == name,
                })
                .map(|s| (s.setting.clone(), s.value.clone()))
        };
        settings.extend(given(true));
        settings.extend(globals.map(|(k, v)| (k.to_string(), v)));
        settings.extend(given(false));
        let mut resolved: Vec<(String, String)> = settings.into_iter().collect();
        let (setting, value) = DEFAULT_MAX_BATCH_SIZE;
        if !resolved.iter().any(|(k, _)| k == setting) {
            resolved.push((setting.to_string(), value.to_string()));
        }
        resolved
    }

    /// The JSON of backend `name`'s configuration: `{"cmdline": {...}}`.
    pub fn backend_config(&self, name: &str) -> Value {
        let cmdline: Map<String, Value> = self
            .resolved(name)
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        json!({ "cmdline": cmdline })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting(backend: Option<&str>, setting: &str, value: &str) -> BackendSetting {
        BackendSetting {
            backend: backend.map(String::from),
            setting: setting.into(),
            value: value.into(),
        }
    }

    #[test]
    fn the_configuration_has_triton_s_global_settings_sorted_then_the_default() {
        let settings = CapiSettings {
            backend_directory: "/b".into(),
            ..CapiSettings::default()
        };
        assert_eq!(
            settings.backend_config("custom").to_string(),
            r#"{"cmdline":{"auto-complete-config":"true","backend-directory":"/b","min-compute-capability":"0.000000","default-max-batch-size":"4"}}"#
        );
    }

    #[test]
    fn a_backend_s_own_settings_override_the_global_ones() {
        let settings = CapiSettings {
            backend_directory: "/b".into(),
            backend_config: vec![
                setting(Some("custom"), "shm-size", "1"),
                setting(None, "default-max-batch-size", "8"),
                setting(Some("other"), "x", "y"),
                setting(None, "z", "global"),
                setting(Some("custom"), "z", "own"),
            ],
            auto_complete: false,
            min_compute_capability: 6.0,
        };
        assert_eq!(
            settings.resolved("custom"),
            [
                ("auto-complete-config", "false"),
                ("backend-directory", "/b"),
                ("default-max-batch-size", "8"),
                ("min-compute-capability", "6.000000"),
                ("shm-size", "1"),
                ("z", "own"),
            ]
            .map(|(k, v)| (k.to_string(), v.to_string()))
        );
    }

    #[test]
    fn triton_s_own_global_settings_win_over_the_command_line_s() {
        let settings = CapiSettings {
            backend_config: vec![setting(None, "backend-directory", "/elsewhere")],
            ..CapiSettings::default()
        };
        let resolved = settings.resolved("custom");
        assert!(resolved.contains(&(
            "backend-directory".to_string(),
            DEFAULT_BACKEND_DIRECTORY.to_string()
        )));
    }
}
