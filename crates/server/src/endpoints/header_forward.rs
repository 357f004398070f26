//! `--http-header-forward-pattern` / `--grpc-header-forward-pattern`.

use oxiserve_core::HeaderForward;

/// The header forwarding flag `--<flag>` asks for: none when it is unset or
/// empty (as Triton), an error naming the flag for a bad pattern.
pub(super) fn header_forward(
    flag: &str,
    pattern: Option<&str>,
) -> Result<Option<HeaderForward>, String> {
    pattern
        .filter(|p| !p.is_empty())
        .map(|p| HeaderForward::new(p).map_err(|e| format!("--{flag}: {e}")))
        .transpose()
}
