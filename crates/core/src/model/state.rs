//! A model version's state and why it is in it, as the repository index,
//! readiness and load errors report it.

use std::fmt;

/// A model version's state, in Triton's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelState {
    Loading,
    Ready,
    Unloading,
    Unavailable,
}

impl fmt::Display for ModelState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ModelState::Loading => "LOADING",
            ModelState::Ready => "READY",
            ModelState::Unloading => "UNLOADING",
            ModelState::Unavailable => "UNAVAILABLE",
        })
    }
}

/// One version's state and why it is in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionStatus {
    pub version: i64,
    pub state: ModelState,
    /// Empty when ready; otherwise what went wrong or why it was unloaded.
    pub reason: String,
}
