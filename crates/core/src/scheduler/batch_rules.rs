//! Where a batch ends: `max_batch_size`, preferred batch sizes and the
//! maximum queue delay, as Triton applies them. The dynamic batcher and the
//! sequence batcher's oldest strategy cut their batches with these rules.
//!
//! Requests join the batch in queue order while the batch stays within
//! `max_batch_size` and their keys agree; a batch reaching a preferred size
//! goes at once (the largest one reachable wins); otherwise the batch waits
//! for more requests until its oldest request waited
//! `max_queue_delay_microseconds` (0 = no waiting).

use std::{
    collections::BTreeSet,
    time::{Duration, Instant},
};

use oxiserve_config::BatchPlan;

/// The batch-size rules of one model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BatchRules {
    max_batch_size: u64,
    preferred: BTreeSet<u64>,
    max_queue_delay: Duration,
}

/// How far a walk over the waiting requests got (see [`BatchRules::scan`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scan {
    /// Requests that fit in one batch, in queue order.
    pub count: usize,
    size: u64,
    /// The best cut, in requests: the largest preferred size reached, or
    /// where the next request would pass the largest preferred size.
    best: Option<usize>,
    /// The next request cannot join (too big or another key).
    full: bool,
    oldest: Option<Instant>,
}

/// What to do with the scanned requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    /// Send the first this many requests as one batch.
    Take(usize),
    /// Wait for more requests until this time.
    WaitUntil(Instant),
}

impl BatchRules {
    /// The rules for a model batching as `batch` says (no batching: batches
    /// of one). Without preferred sizes (a configuration not normalized),
    /// the largest batch is the preferred one, as normalization would say.
    pub fn new(preferred: &[i32], max_queue_delay_microseconds: u64, batch: BatchPlan) -> Self {
        let max_batch_size = batch.max_batch();
        let mut preferred: BTreeSet<u64> = preferred
            .iter()
            .filter_map(|s| u64::try_from(*s).ok())
            .filter(|s| *s > 0)
            .collect();
        if preferred.is_empty() {
            preferred.insert(max_batch_size);
        }
        Self {
            max_batch_size,
            preferred,
            max_queue_delay: Duration::from_micros(max_queue_delay_microseconds),
        }
    }

    fn max_preferred(&self) -> u64 {
        self.preferred.last().copied().unwrap_or(0)
    }

    /// Walks `entries` (batch size, time queued, key), in queue order, as
    /// far as one batch can reach.
    pub fn scan<K: PartialEq>(&self, entries: impl IntoIterator<Item = (u64, Instant, K)>) -> Scan {
        let max_preferred = self.max_preferred();
        let mut scan = Scan {
            count: 0,
            size: 0,
            best: None,
            full: false,
            oldest: None,
        };
        let mut first_key = None;
        for (batch_size, enqueued, key) in entries {
            if scan.count > 0 {
                let grown = scan.size + batch_size;
                if grown > max_preferred && scan.best.is_none() {
                    scan.best = Some(scan.count);
                }
                if grown > self.max_batch_size || first_key.as_ref() != Some(&key) {
                    scan.full = true;
                    break;
                }
            }
            first_key.get_or_insert(key);
            scan.count += 1;
            scan.size += batch_size;
            scan.oldest = Some(scan.oldest.map_or(enqueued, |o| o.min(enqueued)));
            if self.preferred.contains(&scan.size) {
                scan.best = Some(scan.count);
            }
        }
        scan
    }

    /// Whether the scanned batch cannot grow any more: the next request
    /// cannot join it, it reached the largest preferred size, or, without a
    /// queue delay, a preferred size. Triton's batcher stops adding requests
    /// to the payload it prepared for a busy instance then ("saturated").
    pub fn saturated(&self, scan: &Scan) -> bool {
        scan.full
            || scan.size >= self.max_preferred()
            || (self.max_queue_delay.is_zero() && scan.best.is_some())
    }

    /// The batch to send at `now` from a non-empty `scan`, or when to look
    /// again; once `stopped`, nothing waits.
    pub fn cut(&self, scan: &Scan, now: Instant, stopped: bool) -> Cut {
        let max_delay = self.max_queue_delay;
        let oldest = scan.oldest.unwrap_or(now);
        let waited = now.saturating_duration_since(oldest);
        let delay_passed = !max_delay.is_zero() && waited >= max_delay;
        if let Some(best) = scan.best
            && !delay_passed
        {
            return Cut::Take(best);
        }
        if scan.full
            || scan.size >= self.max_preferred()
            || delay_passed
            || max_delay.is_zero()
            || stopped
        {
            return Cut::Take(scan.count);
        }
        Cut::WaitUntil(oldest + max_delay)
    }
}
