//! The Model | Version | Status table printed at start-up.

use oxiserve_config::ConfigError;
use oxiserve_core::repository::{ModelSpec, ScannedModel};

use crate::cli::render_table;

/// One row per model version; a model that failed before its versions were
/// known gets one row with version "-". `unavailable` tells why a model whose
/// configuration is valid cannot serve (None: READY).
pub fn rows(
    models: &[ScannedModel],
    unavailable: impl Fn(&ModelSpec) -> Option<String>,
) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for model in models {
        let status_text = match &model.outcome {
            Err(errors) => format!("UNAVAILABLE: {}", reason(errors)),
            Ok(spec) => unavailable(spec)
                .map_or_else(|| "READY".to_string(), |why| format!("UNAVAILABLE: {why}")),
        };
        match &model.outcome {
            Ok(spec) => {
                for v in &spec.versions {
                    rows.push(vec![
                        model.name.clone(),
                        v.version.to_string(),
                        status_text.clone(),
                    ]);
                }
            }
            Err(_) => rows.push(vec![model.name.clone(), "-".into(), status_text]),
        }
    }
    rows
}

/// The model table as Triton prints it.
pub fn render(rows: &[Vec<String>]) -> String {
    render_table(&["Model", "Version", "Status"], rows)
}

fn reason(errors: &[ConfigError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}
