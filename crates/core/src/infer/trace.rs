//! A request's trace as the core holds it: the job and the response target
//! share it, and `REQUEST_END` is reported once both are done with the
//! request (its execution ended and its final response went out).

use std::{ops::Deref, sync::Arc, time::Instant};

use oxiserve_trace::{Activity, Trace};

/// A traced request in the core.
#[derive(Debug)]
pub(crate) struct RequestTrace(Trace);

impl RequestTrace {
    pub fn new(trace: Trace) -> Arc<Self> {
        Arc::new(Self(trace))
    }
}

impl Deref for RequestTrace {
    type Target = Trace;

    fn deref(&self) -> &Trace {
        &self.0
    }
}

impl Drop for RequestTrace {
    fn drop(&mut self) {
        self.0.report(Activity::RequestEnd, Instant::now());
    }
}
