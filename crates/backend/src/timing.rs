//! Where an execution's computation starts and ends, for Triton's
//! compute_input / compute_infer / compute_output statistics.

use std::time::Instant;

/// Marks set by an instance during `execute`. Unmarked, the whole execution
/// counts as compute_infer.
#[derive(Debug, Default, Clone, Copy)]
pub struct ComputeTiming {
    compute_start: Option<Instant>,
    compute_end: Option<Instant>,
}

impl ComputeTiming {
    /// Inputs are ready; the computation starts now.
    pub fn start_compute(&mut self) {
        self.compute_start = Some(Instant::now());
    }

    /// The computation is done; outputs are produced from now on.
    pub fn end_compute(&mut self) {
        self.compute_end = Some(Instant::now());
    }

    /// When the computation started, if marked.
    pub fn compute_start(&self) -> Option<Instant> {
        self.compute_start
    }

    /// When the computation ended, if marked.
    pub fn compute_end(&self) -> Option<Instant> {
        self.compute_end
    }
}
