//! The backlog's timeouts: a thread, started when a request with a timeout
//! first leaves a deadline in the backlog, gives up every sequence that
//! waited there past its deadline and rejects its requests, as Triton's
//! reaper does (UNAVAILABLE, its text), until the batcher stops.

use std::{sync::Arc, thread::JoinHandle, time::Instant};

use oxiserve_types::Error;
use parking_lot::Mutex;

use super::shared::Shared;
use crate::{scheduler::Job, stats::FailureReason};

/// Triton's text for the requests of a backlogged sequence that expired.
const EXPIRED: &str = "timeout of the corresponding sequence has been expired";

/// The thread that expires backlogged sequences, once started.
#[derive(Debug, Default)]
pub(super) struct Reaper {
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Reaper {
    /// A backlogged sequence of `shared` has a deadline: starts the thread
    /// the first time, else wakes it to see the deadline. `model` names it.
    pub fn watch(&self, shared: &Arc<Shared>, model: &str) {
        let mut thread = self.thread.lock();
        if thread.is_some() {
            shared.expiry.notify_all();
            return;
        }
        let watched = shared.clone();
        let started = std::thread::Builder::new()
            .name(format!("reaper:{model}"))
            .spawn(move || run(&watched));
        match started {
            Ok(handle) => *thread = Some(handle),
            Err(e) => log::error!(
                "model '{model}': cannot start the thread that expires backlogged sequences: {e}"
            ),
        }
    }

    /// Waits for the thread to end, once the batcher stopped.
    pub fn join(&self, shared: &Shared) {
        shared.expiry.notify_all();
        let thread = self.thread.lock().take();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }
}

/// Rejects the requests of expired sequences as their deadlines pass,
/// until the batcher stops (what is queued then executes).
fn run(shared: &Shared) {
    let mut state = shared.lock();
    while !state.is_stopped() {
        let now = Instant::now();
        let expired = state.expire(now);
        if !expired.is_empty() {
            drop(state);
            reject(expired);
            state = shared.lock();
            continue;
        }
        match state.next_expiry() {
            Some(at) => {
                let timeout = at.saturating_duration_since(now);
                shared.expiry.wait_for(&mut state, timeout);
            }
            None => shared.expiry.wait(&mut state),
        }
    }
}

fn reject(expired: Vec<Job>) {
    for job in expired {
        job.record.finished(Some(FailureReason::Rejected));
        job.request.sink.respond(Err(Error::unavailable(EXPIRED)));
    }
}
