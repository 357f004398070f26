//! Sequence models (`sequence_batching`), as perf_analyzer drives them: each
//! closed-loop worker sends whole sequences, one request at a time, marked
//! with the request parameters `sequence_id`, `sequence_start` (first
//! request) and `sequence_end` (last request).

use std::sync::atomic::{AtomicU64, Ordering};

/// Where a request stands in its sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SequenceStep {
    pub id: u64,
    pub start: bool,
    pub end: bool,
}

impl SequenceStep {
    /// The request parameters as JSON object members (no braces).
    pub fn json_members(&self) -> String {
        format!(
            "\"sequence_id\":{},\"sequence_start\":{},\"sequence_end\":{}",
            self.id, self.start, self.end
        )
    }
}

/// Hands out sequence ids and lengths to the workers of a run.
#[derive(Debug)]
pub struct Sequences {
    next: AtomicU64,
    first_id: u64,
    /// Ids cycle through `first_id..end_id` (none: they only grow).
    end_id: Option<u64>,
    length: u32,
    /// How far a length may stray from `length`, as a fraction of it.
    variation: f64,
}

impl Sequences {
    /// Ids from `ids.0` (up to `ids.1`, exclusive, then again from the
    /// start); lengths `length` +- `variation_percent`%.
    pub fn new(ids: (u64, Option<u64>), length: u32, variation_percent: f64) -> Self {
        Sequences {
            next: AtomicU64::new(0),
            first_id: ids.0,
            end_id: ids.1,
            length: length.max(1),
            variation: (variation_percent / 100.0).clamp(0.0, 1.0),
        }
    }

    /// The id and length of a new sequence.
    fn start(&self) -> (u64, u32) {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let id = match self.end_id {
            Some(end) => self.first_id + n % end.saturating_sub(self.first_id).max(1),
            None => self.first_id + n,
        };
        let spread = (f64::from(self.length) * self.variation).round() as u32;
        let low = self.length.saturating_sub(spread).max(1);
        (id, fastrand::u32(low..=self.length + spread))
    }
}

/// One worker's position in its current sequence.
#[derive(Debug, Default)]
pub struct Cursor {
    id: u64,
    left: u32,
    sent: u32,
}

impl Cursor {
    /// The step of the worker's next request, starting a new sequence when
    /// the last one ended.
    pub fn next(&mut self, sequences: &Sequences) -> SequenceStep {
        if self.left == 0 {
            (self.id, self.left) = sequences.start();
            self.sent = 0;
        }
        let step = SequenceStep {
            id: self.id,
            start: self.sent == 0,
            end: self.left == 1,
        };
        self.left -= 1;
        self.sent += 1;
        step
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_sends_whole_sequences_with_their_flags() {
        let sequences = Sequences::new((5, None), 10, 20.0);
        let mut cursor = Cursor::default();
        let steps: Vec<_> = (0..200).map(|_| cursor.next(&sequences)).collect();
        let mut at = 0;
        let mut ids = Vec::new();
        while at < steps.len() {
            let id = steps[at].id;
            let len = steps[at..].iter().take_while(|s| s.id == id).count();
            let run = &steps[at..at + len];
            assert!(run[0].start && run[1..].iter().all(|s| !s.start), "{run:?}");
            if at + len < steps.len() {
                assert!((8..=12).contains(&len), "length {len}");
                assert!(run[len - 1].end && run[..len - 1].iter().all(|s| !s.end));
            }
            ids.push(id);
            at += len;
        }
        assert_eq!(ids[..3], [5, 6, 7]);
    }

    #[test]
    fn ids_cycle_through_their_range() {
        let sequences = Sequences::new((1, Some(4)), 1, 0.0);
        let mut cursor = Cursor::default();
        let ids: Vec<_> = (0..7).map(|_| cursor.next(&sequences)).collect();
        assert!(ids.iter().all(|s| s.start && s.end));
        assert_eq!(
            ids.iter().map(|s| s.id).collect::<Vec<_>>(),
            [1, 2, 3, 1, 2, 3, 1]
        );
    }
}
