//! Targeted quantile estimates over a stream in bounded memory (Cormode,
//! Korn, Muthukrishnan and Srivastava's "biased quantiles", the CKMS
//! algorithm Prometheus summaries use): each target quantile is estimated
//! within its rank error.

use std::sync::Arc;

use crate::config::Quantile;

/// Values arriving before they are merged into the summary.
const BUFFER: usize = 500;

/// One stream's estimator.
#[derive(Debug, Clone)]
pub(super) struct Estimator {
    targets: Arc<[Quantile]>,
    /// Sorted by value: each covers `g` ranks, uncertain by `delta`.
    tuples: Vec<Tuple>,
    buffer: Vec<f64>,
    count: u64,
}

#[derive(Debug, Clone, Copy)]
struct Tuple {
    value: f64,
    g: u64,
    delta: u64,
}

impl Estimator {
    pub fn new(targets: Arc<[Quantile]>) -> Self {
        Self {
            targets,
            tuples: Vec::new(),
            buffer: Vec::with_capacity(BUFFER),
            count: 0,
        }
    }

    pub fn insert(&mut self, value: f64) {
        self.buffer.push(value);
        if self.buffer.len() == BUFFER {
            self.merge();
        }
    }

    /// The estimate of quantile `q`; NaN when nothing was inserted.
    pub fn get(&mut self, q: f64) -> f64 {
        self.merge();
        let Some(last) = self.tuples.last() else {
            return f64::NAN;
        };
        let rank = q * self.count as f64;
        let bound = rank + self.allowed(rank) / 2.0;
        let mut seen = 0;
        for pair in self.tuples.windows(2) {
            seen += pair[0].g;
            if (seen + pair[1].g + pair[1].delta) as f64 > bound {
                return pair[0].value;
            }
        }
        last.value
    }

    pub fn clear(&mut self) {
        self.tuples.clear();
        self.buffer.clear();
        self.count = 0;
    }

    /// The rank uncertainty the targets allow at `rank`.
    fn allowed(&self, rank: f64) -> f64 {
        let n = self.count as f64;
        self.targets
            .iter()
            .map(|t| {
                if rank >= t.quantile * n {
                    2.0 * t.error * rank / t.quantile
                } else {
                    2.0 * t.error * (n - rank) / (1.0 - t.quantile)
                }
            })
            .fold(f64::INFINITY, f64::min)
    }

    fn merge(&mut self) {
        if self.buffer.is_empty() {
            return;
        }
        let mut buffer = std::mem::take(&mut self.buffer);
        buffer.sort_by(f64::total_cmp);
        let old = std::mem::take(&mut self.tuples);
        let mut merged = Vec::with_capacity(old.len() + buffer.len());
        let mut rest = old.iter().copied().peekable();
        let mut rank = 0;
        for value in buffer.drain(..) {
            while let Some(t) = rest.next_if(|t| t.value <= value) {
                rank += t.g;
                merged.push(t);
            }
            self.count += 1;
            let inner = !merged.is_empty() && rest.peek().is_some();
            let delta = if inner {
                (self.allowed(rank as f64).floor() as u64).saturating_sub(1)
            } else {
                0
            };
            merged.push(Tuple { value, g: 1, delta });
            rank += 1;
        }
        merged.extend(rest);
        self.tuples = merged;
        self.buffer = buffer;
        self.compress();
    }

    /// Folds each tuple into its right neighbour while the error allows;
    /// the smallest and the largest value stay.
    fn compress(&mut self) {
        let n = self.tuples.len();
        if n < 3 {
            return;
        }
        let mut before: u64 = self.tuples.iter().map(|t| t.g).sum();
        let mut next = self.tuples[n - 1];
        before -= next.g;
        let mut kept = Vec::with_capacity(n);
        for i in (1..n - 1).rev() {
            let t = self.tuples[i];
            before -= t.g;
            if ((t.g + next.g + next.delta) as f64) <= self.allowed(before as f64) {
                next.g += t.g;
            } else {
                kept.push(next);
                next = t;
            }
        }
        kept.push(next);
        kept.push(self.tuples[0]);
        kept.reverse();
        self.tuples = kept;
    }
}
