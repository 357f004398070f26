//! Open loop: requests are due on a schedule whatever the server does. A
//! dispatcher thread releases one permit per due slot; the first free
//! connection takes it. Latency counts from the slot's due time, not from
//! when a connection got free, so a slow server cannot hide its backlog
//! (coordinated omission).

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use tokio::sync::Semaphore;

use super::{fill, schedule::Schedule, shards};
use crate::{
    cli::Distribution,
    client::{Connector, InferClient},
    error::{Error, Result},
    measure::Session,
    recorder::Recorder,
    results::{PointResult, Totals, summarize},
};

/// A request leaving this much after its slot counts as late.
const LATE: Duration = Duration::from_millis(1);

/// The shared state of one open-loop level.
struct Plan {
    schedule: Schedule,
    start: Instant,
    due: Semaphore,
    next_slot: AtomicU64,
    stop: AtomicBool,
    recorder: Recorder,
}

/// Measures one request rate over `connections` connections from `pool`.
pub async fn run<C: Connector>(
    session: &mut Session,
    connector: &C,
    pool: &mut Vec<C::Client>,
    rate: f64,
    distribution: Distribution,
    connections: usize,
    batch_size: u32,
) -> Result<PointResult> {
    fill(connector, pool, connections).await?;
    let before = session.snapshot().await;
    let plan = Arc::new(Plan {
        schedule: Schedule::new(rate, distribution),
        start: Instant::now(),
        due: Semaphore::new(0),
        next_slot: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        recorder: Recorder::new(shards(connections)),
    });
    let dispatcher = {
        let plan = plan.clone();
        std::thread::Builder::new()
            .name("dispatcher".into())
            .spawn(move || dispatch(&plan))?
    };
    let workers: Vec<_> = pool
        .drain(..connections)
        .enumerate()
        .map(|(worker, client)| tokio::spawn(work(worker, client, plan.clone())))
        .collect();
    let label = format!("request rate {rate}");
    let measurement = session.measure(&label, &plan.recorder).await;
    plan.stop.store(true, Ordering::Relaxed);
    dispatcher
        .join()
        .map_err(|_| Error::new("dispatcher thread panicked"))?;
    plan.due.close();
    for worker in workers {
        pool.push(
            worker
                .await
                .map_err(|e| Error::new(format!("load worker failed: {e}")))?,
        );
    }
    let requests_sent = plan.recorder.sent();
    let server_requests = session.settle(before, requests_sent).await;
    let totals = Totals {
        requests_sent,
        server_requests,
    };
    Ok(summarize(
        rate,
        batch_size,
        session.settings.percentile,
        &measurement,
        totals,
    ))
}

/// Releases a permit for every slot that is due, sleeping until the next.
fn dispatch(plan: &Plan) {
    let mut released = 0u64;
    while !plan.stop.load(Ordering::Relaxed) {
        let now = plan.start.elapsed();
        let mut due = 0;
        while plan.schedule.at(released + due) <= now {
            due += 1;
        }
        if due > 0 {
            plan.due.add_permits(due as usize);
            released += due;
        }
        let next = plan.schedule.at(released);
        let wait = next.saturating_sub(plan.start.elapsed());
        std::thread::sleep(wait.min(Duration::from_millis(10)));
    }
}

async fn work<C: InferClient>(worker: usize, mut client: C, plan: Arc<Plan>) -> C {
    while let Ok(permit) = plan.due.acquire().await {
        permit.forget();
        let slot = plan.next_slot.fetch_add(1, Ordering::Relaxed);
        let due = plan.start + plan.schedule.at(slot);
        let late = due.elapsed() > LATE;
        plan.recorder.sending();
        let outcome = client.infer(slot as usize, None).await;
        let latency = due.elapsed().as_nanos() as u64;
        plan.recorder.record(worker, latency, late, outcome);
    }
    client
}
