//! Why a request failed, in Triton's four categories (the `reason` label of
//! `nv_inference_request_failure`).

use oxiserve_types::{Error, ErrorKind};

/// Triton's failure reasons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailureReason {
    /// Refused by the scheduler (a full queue). Requests refused by
    /// validation are not counted at all, as in Triton.
    Rejected,
    /// Cancelled before it ran (the client went away).
    Canceled,
    /// The backend answered with an error.
    Backend,
    /// Anything else (an error of the core after the backend answered).
    Other,
}

impl FailureReason {
    /// Every reason, in the order Triton 2.51 prints them.
    pub const ALL: [FailureReason; 4] =
        [Self::Other, Self::Backend, Self::Canceled, Self::Rejected];

    /// The label value Triton uses.
    pub fn label(self) -> &'static str {
        match self {
            Self::Rejected => "REJECTED",
            Self::Canceled => "CANCELED",
            Self::Backend => "BACKEND",
            Self::Other => "OTHER",
        }
    }

    /// The reason for an error a backend's response carried.
    pub(crate) fn of_backend_error(error: &Error) -> Self {
        match error.kind {
            ErrorKind::Cancelled => Self::Canceled,
            ErrorKind::ResourceExhausted => Self::Rejected,
            _ => Self::Backend,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Failed requests counted per reason.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct FailureCounts([u64; 4]);

impl FailureCounts {
    /// The failures counted with `reason`.
    pub fn get(&self, reason: FailureReason) -> u64 {
        self.0[reason.index()]
    }

    pub(crate) fn add(&mut self, reason: FailureReason) {
        self.0[reason.index()] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_errors_map_to_triton_reasons() {
        let reason = |kind| FailureReason::of_backend_error(&Error::new(kind, "x"));
        assert_eq!(reason(ErrorKind::Cancelled), FailureReason::Canceled);
        assert_eq!(
            reason(ErrorKind::ResourceExhausted),
            FailureReason::Rejected
        );
        assert_eq!(reason(ErrorKind::Internal), FailureReason::Backend);
        assert_eq!(reason(ErrorKind::InvalidArg), FailureReason::Backend);
        let labels: Vec<_> = FailureReason::ALL.iter().map(|r| r.label()).collect();
        assert_eq!(labels, ["OTHER", "BACKEND", "CANCELED", "REJECTED"]);
    }
}
