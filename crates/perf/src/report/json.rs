//! The JSON report (`--json FILE`): the whole [`Report`].

use super::Report;

/// Pretty-printed JSON of the report.
pub fn render(report: &Report) -> String {
    serde_json::to_string_pretty(report).expect("a report serializes") + "\n"
}
