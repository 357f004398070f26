//! Load loops: closed (a fixed number of outstanding requests) and open
//! (requests on a schedule, whatever the server does).

pub mod closed;
pub mod open;
pub mod schedule;

use crate::{client::Connector, error::Result};

/// Makes sure `pool` holds at least `n` connections.
async fn fill<C: Connector>(connector: &C, pool: &mut Vec<C::Client>, n: usize) -> Result<()> {
    while pool.len() < n {
        pool.push(connector.connect().await?);
    }
    Ok(())
}

/// Shards of a recorder for `workers` workers: enough that workers on
/// different threads rarely share one, few enough to stay small.
fn shards(workers: usize) -> usize {
    workers.min(64)
}
