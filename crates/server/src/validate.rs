//! `oxiserve validate DIR...`: reads repositories as `serve` would and prints
//! every problem with its file, line and column. Exits 1 when any is found.

use std::{path::PathBuf, process::ExitCode};

use oxiserve_core::repository::{ScanOptions, scan};

/// Checks `repositories` and reports on standard output.
pub fn run(repositories: &[PathBuf]) -> ExitCode {
    let scan = scan(
        repositories,
        &ScanOptions {
            auto_complete: true,
            ..Default::default()
        },
    );
    let mut problems = scan.repository_errors.len();
    for error in &scan.repository_errors {
        println!("error: {error}");
    }
    for model in &scan.models {
        match &model.outcome {
            Ok(spec) => {
                let versions: Vec<String> = spec
                    .versions
                    .iter()
                    .map(|v| v.version.to_string())
                    .collect();
                let kind = if spec.config.backend.is_empty() {
                    &spec.config.platform
                } else {
                    &spec.config.backend
                };
                println!(
                    "ok: {} ({kind}, version {})",
                    model.name,
                    versions.join(", ")
                );
            }
            Err(errors) => {
                problems += errors.len();
                for error in errors {
                    println!("error: {}: {error}", model.name);
                }
            }
        }
    }
    let models = scan.models.len();
    if problems == 0 {
        println!("{models} model(s) checked, no problems");
        ExitCode::SUCCESS
    } else {
        println!("{models} model(s) checked, {problems} problem(s)");
        ExitCode::FAILURE
    }
}
