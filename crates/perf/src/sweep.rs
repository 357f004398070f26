//! Walking a load range: every value in order until the latency bound is
//! crossed, or a binary search for the highest value under it.

use std::sync::Arc;

use crate::{
    cli::Distribution,
    client::Connector,
    error::Result,
    load::{closed, open},
    measure::Session,
    results::PointResult,
    sequence::Sequences,
};

/// What kind of load the values mean.
#[derive(Debug, Clone, Copy)]
pub enum LoadKind {
    /// Outstanding requests.
    Concurrency,
    /// Requests per second over this many connections.
    Rate {
        distribution: Distribution,
        connections: usize,
    },
}

/// The sweep's parameters.
#[derive(Debug, Clone)]
pub struct Plan {
    pub kind: LoadKind,
    pub values: Vec<f64>,
    pub batch_size: u32,
    /// Latency bound in microseconds.
    pub bound_us: Option<f64>,
    pub binary_search: bool,
    /// A sequence model's sequences (closed loop only).
    pub sequences: Option<Arc<Sequences>>,
}

/// Measures the plan's levels; `on_point` sees each result as it comes.
pub async fn run<C: Connector>(
    session: &mut Session,
    connector: &C,
    plan: &Plan,
    mut on_point: impl FnMut(&PointResult),
) -> Result<Vec<PointResult>> {
    let mut pool = Vec::new();
    let mut points = Vec::new();
    let mut measure = async |value: f64, points: &mut Vec<PointResult>| -> Result<bool> {
        let point = match plan.kind {
            LoadKind::Concurrency => {
                closed::run(
                    session,
                    connector,
                    &mut pool,
                    value as usize,
                    plan.batch_size,
                    plan.sequences.clone(),
                )
                .await?
            }
            LoadKind::Rate {
                distribution,
                connections,
            } => {
                open::run(
                    session,
                    connector,
                    &mut pool,
                    value,
                    distribution,
                    connections,
                    plan.batch_size,
                )
                .await?
            }
        };
        on_point(&point);
        let under = plan.bound_us.is_none_or(|b| point.judged_latency_us <= b);
        points.push(point);
        Ok(under)
    };
    if !plan.binary_search {
        for &value in &plan.values {
            if !measure(value, &mut points).await? {
                break;
            }
        }
        return Ok(points);
    }
    // Binary search over the values: the highest one under the bound,
    // assuming latency grows with load.
    let (mut lo, mut hi) = (0usize, plan.values.len() - 1);
    if !measure(plan.values[lo], &mut points).await? || lo == hi {
        return Ok(points);
    }
    if measure(plan.values[hi], &mut points).await? {
        return Ok(points);
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if measure(plan.values[mid], &mut points).await? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(points)
}

/// The point with the highest throughput among those within the bound.
pub fn best(points: &[PointResult], bound_us: Option<f64>) -> Option<&PointResult> {
    points
        .iter()
        .filter(|p| bound_us.is_none_or(|b| p.judged_latency_us <= b) && p.measured_requests > 0)
        .max_by(|a, b| a.throughput.total_cmp(&b.throughput))
}
