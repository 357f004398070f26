//! Where one execution spent its time: the durations every statistic and
//! histogram is made of.

use std::time::Duration;

/// Where one execution spent its time, as seen by each request in it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ExecutionTimes {
    pub queue: Duration,
    pub compute_input: Duration,
    pub compute_infer: Duration,
    pub compute_output: Duration,
}
