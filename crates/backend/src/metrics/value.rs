//! The value behind one metric: a counter, a gauge or a histogram, and the
//! operations Triton allows on each (with its error texts).

use oxiserve_types::{Error, ErrorKind, Result};
use parking_lot::Mutex;

use super::MetricKind;

/// A metric's value at one moment.
#[derive(Debug, Clone, PartialEq)]
pub enum SampleValue {
    /// A counter's or a gauge's value.
    Number(f64),
    /// A histogram: its upper bounds (without `+Inf`), the cumulative count
    /// at each bound, the number and the sum of the observations.
    Histogram {
        bounds: Vec<f64>,
        cumulative: Vec<u64>,
        count: u64,
        sum: f64,
    },
}

/// The value behind a metric, shared by all its holders.
#[derive(Debug)]
pub(super) struct MetricValue {
    kind: MetricKind,
    state: Mutex<State>,
}

#[derive(Debug)]
enum State {
    Number(f64),
    Histogram {
        bounds: Vec<f64>,
        /// Per bucket (not cumulative); the last one is `+Inf`.
        counts: Vec<u64>,
        sum: f64,
    },
}

impl MetricValue {
    /// A value of `kind` at zero; a histogram needs strictly increasing `bounds`.
    pub fn new(kind: MetricKind, bounds: Option<&[f64]>) -> Result<Self> {
        let state = match (kind, bounds) {
            (MetricKind::Histogram, Some(bounds)) => {
                if bounds.windows(2).any(|w| w[0] >= w[1]) {
                    return Err(Error::invalid_arg(
                        "Bucket Boundaries must be strictly sorted",
                    ));
                }
                State::Histogram {
                    bounds: bounds.to_vec(),
                    counts: vec![0; bounds.len() + 1],
                    sum: 0.0,
                }
            }
            (MetricKind::Histogram, None) => {
                return Err(Error::invalid_arg(
                    "Bucket boundaries not found in Metric args.",
                ));
            }
            (_, Some(_)) => {
                let kind = if kind == MetricKind::Counter {
                    "counter"
                } else {
                    "gauge"
                };
                return Err(Error::invalid_arg(format!(
                    "Unexpected args found in {kind} Metric constructor."
                )));
            }
            (_, None) => State::Number(0.0),
        };
        Ok(Self {
            kind,
            state: Mutex::new(state),
        })
    }

    /// Adds `value` (a counter only goes up; a gauge may go down).
    pub fn increment(&self, value: f64) -> Result<()> {
        match self.kind {
            MetricKind::Counter if value < 0.0 => Err(Error::invalid_arg(
                "TRITONSERVER_METRIC_KIND_COUNTER can only be incremented monotonically by \
                 non-negative values.",
            )),
            MetricKind::Histogram => Err(self.unsupported("Increment")),
            _ => {
                self.add(value);
                Ok(())
            }
        }
    }

    /// Sets a gauge to `value`.
    pub fn set(&self, value: f64) -> Result<()> {
        if self.kind != MetricKind::Gauge {
            return Err(self.unsupported("Set"));
        }
        *self.state.lock() = State::Number(value);
        Ok(())
    }

    /// Counts `value` in a histogram's bucket (the first bound not below it).
    pub fn observe(&self, value: f64) -> Result<()> {
        let mut state = self.state.lock();
        let State::Histogram {
            bounds,
            counts,
            sum,
        } = &mut *state
        else {
            return Err(self.unsupported("Observe"));
        };
        counts[bounds.partition_point(|b| *b < value)] += 1;
        *sum += value;
        Ok(())
    }

    /// A counter's or a gauge's value.
    pub fn value(&self) -> Result<f64> {
        match &*self.state.lock() {
            State::Number(v) => Ok(*v),
            State::Histogram { .. } => Err(self.unsupported("Value")),
        }
    }

    /// The value now, for a scrape.
    pub fn sample(&self) -> SampleValue {
        match &*self.state.lock() {
            State::Number(v) => SampleValue::Number(*v),
            State::Histogram {
                bounds,
                counts,
                sum,
            } => {
                let mut total = 0;
                let cumulative: Vec<u64> = counts
                    .iter()
                    .map(|c| {
                        total += c;
                        total
                    })
                    .take(bounds.len())
                    .collect();
                let count = counts.iter().sum();
                SampleValue::Histogram {
                    bounds: bounds.clone(),
                    cumulative,
                    count,
                    sum: *sum,
                }
            }
        }
    }

    fn add(&self, value: f64) {
        if let State::Number(v) = &mut *self.state.lock() {
            *v += value;
        }
    }

    fn unsupported(&self, operation: &str) -> Error {
        Error::new(
            ErrorKind::Unsupported,
            format!("{} does not support {operation}", self.kind.triton_name()),
        )
    }
}
