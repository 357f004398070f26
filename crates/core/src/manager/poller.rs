//! `--model-control-mode=poll`: a thread that looks at the repositories
//! every interval and loads, reloads or unloads what changed. The decisions
//! are [`PollState`]'s; reloads go through the same path as explicit loads,
//! so a changed model keeps serving until its new version is ready, and a
//! failed reload leaves it serving.

use std::{
    thread::JoinHandle,
    time::{Duration, Instant},
};

use crossbeam_channel::{Sender, bounded};

use super::{ModelManager, members, table::UNLOADED};
use crate::repository::{PollChanges, PollState, scan, snapshot};

/// The polling thread; dropping it stops the thread.
#[derive(Debug)]
pub struct Poller {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Poller {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl ModelManager {
    /// Starts polling the repositories every `interval`, from what they hold
    /// now (call it after [`Server::load_startup_models`]).
    pub fn start_polling(&self, interval: Duration) -> std::io::Result<Poller> {
        let mut state = PollState::new(snapshot(&self.config().repositories));
        let (stop, stopped) = bounded::<()>(0);
        let server = self.clone();
        let thread = std::thread::Builder::new()
            .name("repository-poll".into())
            .spawn(move || {
                // Disconnected (the handle dropped) ends the loop.
                while let Err(crossbeam_channel::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(interval)
                {
                    server.poll_repository(&mut state);
                }
            })?;
        Ok(Poller {
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Looks at the repositories once and applies what changed since `state`:
    /// added and modified models load (reload), removed ones unload.
    pub fn poll_repository(&self, state: &mut PollState) -> PollChanges {
        if let Err(e) = self.sync_repositories() {
            log::error!("repository poll skipped: {e}");
            return PollChanges::default();
        }
        let changes = state.update(snapshot(&self.config().repositories));
        if changes.is_empty() {
            return changes;
        }
        let started = Instant::now();
        log::info!(
            "repository poll: added {:?}, modified {:?}, removed {:?}",
            changes.added,
            changes.modified,
            changes.removed
        );
        for name in &changes.removed {
            self.take_out(name, UNLOADED);
            self.take_out_users(name);
        }
        let load: Vec<String> = changes
            .added
            .iter()
            .chain(&changes.modified)
            .cloned()
            .collect();
        if !load.is_empty() {
            let scan = scan(
                &self.config().repositories,
                &self.scan_options(Some(load.clone())),
            );
            self.install_in_parallel(members::load_order(scan.models), |_| true);
            for name in &load {
                self.bring_back_users(name);
            }
        }
        log::info!(
            "repository poll applied in {} ms",
            started.elapsed().as_millis()
        );
        changes
    }
}
