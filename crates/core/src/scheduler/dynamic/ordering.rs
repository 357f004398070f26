//! `preserve_ordering`: responses leave in the order their requests were
//! queued, whichever instance finished first. Each request's target is
//! registered in arrival order; a request's events are held until every
//! earlier request sent its final event.

use std::{collections::BTreeMap, sync::Arc};

use oxiserve_backend::{ResponseEvent, ResponseTarget};
use oxiserve_types::Error;
use parking_lot::Mutex;

/// The order of one model's responses.
#[derive(Default)]
pub(crate) struct ResponseOrder {
    inner: Arc<Mutex<Inner>>,
}

impl std::fmt::Debug for ResponseOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.inner.lock();
        f.debug_struct("ResponseOrder")
            .field("head", &inner.head)
            .field("held", &inner.slots.len())
            .finish()
    }
}

#[derive(Default)]
struct Inner {
    /// The sequence number the next registered request gets.
    next: u64,
    /// The earliest request still answering: its events pass at once.
    head: u64,
    slots: BTreeMap<u64, Slot>,
}

struct Slot {
    target: Box<dyn ResponseTarget>,
    held: Vec<ResponseEvent>,
    finished: bool,
}

impl ResponseOrder {
    /// Wraps the target of the next request in arrival order.
    pub fn register(&self, target: Box<dyn ResponseTarget>) -> Box<dyn ResponseTarget> {
        let mut inner = self.inner.lock();
        let seq = inner.next;
        inner.next += 1;
        inner.slots.insert(
            seq,
            Slot {
                target,
                held: Vec::new(),
                finished: false,
            },
        );
        Box::new(OrderedTarget {
            seq,
            inner: self.inner.clone(),
            finished: false,
        })
    }
}

impl Inner {
    fn deliver(&mut self, seq: u64, event: ResponseEvent) {
        let Some(slot) = self.slots.get_mut(&seq) else {
            return;
        };
        slot.finished |= event.is_final;
        slot.held.push(event);
        self.release();
    }

    /// Passes on the held events of the head request and of every request
    /// after it whose predecessors all finished.
    fn release(&mut self) {
        while let Some(slot) = self.slots.get_mut(&self.head) {
            for event in slot.held.drain(..) {
                slot.target.deliver(event);
            }
            if !slot.finished {
                break;
            }
            self.slots.remove(&self.head);
            self.head += 1;
        }
    }
}

struct OrderedTarget {
    seq: u64,
    inner: Arc<Mutex<Inner>>,
    finished: bool,
}

impl ResponseTarget for OrderedTarget {
    fn deliver(&mut self, event: ResponseEvent) {
        self.finished |= event.is_final;
        self.inner.lock().deliver(self.seq, event);
    }
}

impl Drop for OrderedTarget {
    fn drop(&mut self) {
        // A sink always ends with a final event; should one not, the
        // requests after this one must not wait forever.
        if !self.finished {
            let event = ResponseEvent {
                response: Some(Err(Error::internal(
                    "the request ended without a final response",
                ))),
                is_final: true,
                fails_request: true,
            };
            self.inner.lock().deliver(self.seq, event);
        }
    }
}

#[cfg(test)]
mod tests {
    use oxiserve_backend::BackendResponse;

    use super::*;

    /// Records (request, final) pairs in delivery order.
    struct Log(Arc<Mutex<Vec<(u32, bool)>>>, u32);

    impl ResponseTarget for Log {
        fn deliver(&mut self, event: ResponseEvent) {
            self.0.lock().push((self.1, event.is_final));
        }
    }

    fn event(is_final: bool) -> ResponseEvent {
        ResponseEvent {
            response: Some(Ok(BackendResponse::default())),
            is_final,
            fails_request: true,
        }
    }

    #[test]
    fn later_responses_wait_for_earlier_ones() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let order = ResponseOrder::default();
        let mut targets: Vec<_> = (0..3)
            .map(|i| order.register(Box::new(Log(log.clone(), i))))
            .collect();
        targets[2].deliver(event(true));
        targets[1].deliver(event(false));
        assert!(log.lock().is_empty());
        targets[0].deliver(event(true));
        assert_eq!(*log.lock(), [(0, true), (1, false)]);
        targets[1].deliver(event(true));
        assert_eq!(*log.lock(), [(0, true), (1, false), (1, true), (2, true)]);
    }

    #[test]
    fn a_dropped_target_releases_the_ones_after_it() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let order = ResponseOrder::default();
        let first = order.register(Box::new(Log(log.clone(), 0)));
        let mut second = order.register(Box::new(Log(log.clone(), 1)));
        second.deliver(event(true));
        drop(first);
        assert_eq!(*log.lock(), [(0, true), (1, true)]);
    }
}
