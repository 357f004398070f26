//! The oldest strategy's completion signal: a sequence's next request may
//! go once the previous one answered, so that it sees that one's state.

use std::{sync::Arc, time::Instant};

use oxiserve_backend::{ResponseEvent, ResponseTarget};

use super::shared::Shared;

/// Passes a taken request's responses on (the implicit state keeps its
/// state outputs on the way), then tells the strategy that the request
/// completed, so that its sequence's next request may go.
pub(super) struct Completion {
    shared: Arc<Shared>,
    instance: usize,
    slot: usize,
    inner: Box<dyn ResponseTarget>,
    done: bool,
}

impl Completion {
    /// Wraps `inner` for the request `instance` took from `slot`.
    pub fn new(
        shared: Arc<Shared>,
        instance: usize,
        slot: usize,
        inner: Box<dyn ResponseTarget>,
    ) -> Self {
        Self {
            shared,
            instance,
            slot,
            inner,
            done: false,
        }
    }

    fn finish(&mut self) {
        self.done = true;
        let shared = &self.shared;
        shared
            .lock()
            .complete(self.instance, self.slot, Instant::now());
        shared.work.notify_all();
    }
}

impl ResponseTarget for Completion {
    fn deliver(&mut self, event: ResponseEvent) {
        let is_final = event.is_final;
        self.inner.deliver(event);
        if is_final && !self.done {
            self.finish();
        }
    }

    /// A rescheduled request (iterative sequence) completed this execution.
    fn reschedule(&mut self) -> bool {
        let taken = self.inner.reschedule();
        if taken && !self.done {
            self.finish();
        }
        taken
    }
}

impl Drop for Completion {
    fn drop(&mut self) {
        // A sink always ends with a final event; should one not, the
        // sequence must not wait forever.
        if !self.done {
            self.finish();
        }
    }
}
