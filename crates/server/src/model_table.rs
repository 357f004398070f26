//! The Model | Version | Status table printed at start-up.

use oxiserve_core::{IndexEntry, ModelState};

use crate::cli::render_table;

/// One row per model version the server tried to load; a model that failed
/// before its versions were known gets one row with version "-".
pub fn rows(index: &[IndexEntry]) -> Vec<Vec<String>> {
    index
        .iter()
        .filter_map(|entry| {
            let state = entry.state?;
            let status = match state {
                ModelState::Ready => "READY".to_string(),
                other => format!("{other}: {}", entry.reason),
            };
            let version = entry.version.map_or("-".to_string(), |v| v.to_string());
            Some(vec![entry.name.clone(), version, status])
        })
        .collect()
}

/// The model table as Triton prints it.
pub fn render(rows: &[Vec<String>]) -> String {
    render_table(&["Model", "Version", "Status"], rows)
}
