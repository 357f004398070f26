//! Closed loop: `concurrency` workers, each with its own connection, each
//! sending its next request as soon as the previous one is answered (for a
//! sequence model: the next request of its current sequence).

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Instant,
};

use super::{fill, shards};
use crate::{
    client::{Connector, InferClient},
    error::{Error, Result},
    measure::Session,
    recorder::Recorder,
    results::{PointResult, Totals, summarize},
    sequence::{Cursor, Sequences},
};

/// Measures one concurrency level; connections come from and go back to `pool`.
pub async fn run<C: Connector>(
    session: &mut Session,
    connector: &C,
    pool: &mut Vec<C::Client>,
    concurrency: usize,
    batch_size: u32,
    sequences: Option<Arc<Sequences>>,
) -> Result<PointResult> {
    fill(connector, pool, concurrency).await?;
    let recorder = Arc::new(Recorder::new(shards(concurrency)));
    let stop = Arc::new(AtomicBool::new(false));
    let before = session.snapshot().await;
    let workers: Vec<_> = pool
        .drain(..concurrency)
        .enumerate()
        .map(|(worker, client)| {
            let sequences = sequences.clone();
            tokio::spawn(work(
                worker,
                client,
                recorder.clone(),
                stop.clone(),
                sequences,
            ))
        })
        .collect();
    let measurement = session
        .measure(&format!("concurrency {concurrency}"), &recorder)
        .await;
    stop.store(true, Ordering::Relaxed);
    for worker in workers {
        pool.push(
            worker
                .await
                .map_err(|e| Error::new(format!("load worker failed: {e}")))?,
        );
    }
    let requests_sent = recorder.sent();
    let server_requests = session.settle(before, requests_sent).await;
    let totals = Totals {
        requests_sent,
        server_requests,
    };
    Ok(summarize(
        concurrency as f64,
        batch_size,
        session.settings.percentile,
        &measurement,
        totals,
    ))
}

async fn work<C: InferClient>(
    worker: usize,
    mut client: C,
    recorder: Arc<Recorder>,
    stop: Arc<AtomicBool>,
    sequences: Option<Arc<Sequences>>,
) -> C {
    let mut step = worker;
    let mut cursor = Cursor::default();
    while !stop.load(Ordering::Relaxed) {
        recorder.sending();
        let sequence = sequences.as_deref().map(|s| cursor.next(s));
        let start = Instant::now();
        let outcome = client.infer(step, sequence).await;
        recorder.record(worker, start.elapsed().as_nanos() as u64, false, outcome);
        step = step.wrapping_add(1);
    }
    client
}
