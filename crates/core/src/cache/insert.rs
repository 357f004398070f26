//! A cache miss's response target: stores the request's one successful
//! response under its key before the client hears of it, and counts the
//! miss (lookup and insert time) in the model's statistics.

use std::{sync::Arc, time::Duration};

use oxiserve_backend::{BackendResponse, ResponseEvent, ResponseTarget};

use super::ResponseCache;
use crate::stats::StatsCollector;

/// Wraps the target of a request that missed the cache.
pub(crate) struct CacheInsert {
    pub inner: Box<dyn ResponseTarget>,
    pub cache: Arc<ResponseCache>,
    pub stats: Arc<StatsCollector>,
    pub key: String,
    pub lookup: Duration,
    /// The response to store, while it is the only one and no error came.
    pub pending: Option<BackendResponse>,
    pub responses: usize,
    pub failed: bool,
}

impl ResponseTarget for CacheInsert {
    fn deliver(&mut self, event: ResponseEvent) {
        match &event.response {
            Some(Ok(response)) => {
                self.responses += 1;
                self.pending = (self.responses == 1).then(|| response.clone());
            }
            Some(Err(_)) => self.failed = true,
            None => {}
        }
        if event.is_final
            && !self.failed
            && let Some(response) = self.pending.take()
        {
            let (miss, insert) = self.cache.insert(&self.key, &response);
            if miss {
                self.stats.record_cache_miss(self.lookup + insert);
            }
        }
        self.inner.deliver(event);
    }

    fn reschedule(&mut self) -> bool {
        self.inner.reschedule()
    }
}
