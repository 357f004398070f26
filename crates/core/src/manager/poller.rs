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

use super::{ModelManager, members};
use crate::repository::{ModelId, PollChanges, PollState, Snapshot, scan, snapshot};

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
        let mut state = PollState::new(self.snapshot());
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
    /// added and modified models load (reload), removed ones unload, and the
    /// ensembles with a step of their name follow them.
    pub fn poll_repository(&self, state: &mut PollState) -> PollChanges {
        if let Err(e) = self.sync_repositories() {
            // A repository that could not be brought up to date keeps its
            // last copy; the other repositories' changes still apply.
            log::error!("repository poll: {e}; the last copy of that repository stays in use");
        }
        let changes = state.update(self.snapshot());
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
        for id in &changes.removed {
            // (The poller waits for the model's lock: this cannot fail.)
            let _ = self.remove(id);
        }
        for name in names(&changes.removed) {
            self.follow_members(&name);
        }
        let load: Vec<&ModelId> = changes.added.iter().chain(&changes.modified).collect();
        if !load.is_empty() {
            let mut scan = scan(
                &self.config().repositories,
                &self.scan_options(Some(names(load.iter().copied()))),
            );
            // Other copies of the names read are unchanged.
            scan.models.retain(|m| load.contains(&&m.id));
            self.install_in_parallel(members::load_order(scan.models), |_| true);
            for name in names(load) {
                self.follow_members(&name);
            }
        }
        log::info!(
            "repository poll applied in {} ms",
            started.elapsed().as_millis()
        );
        changes
    }

    /// The repositories' model folders as the poller compares them.
    fn snapshot(&self) -> Snapshot {
        snapshot(&self.config().repositories, self.config().model_namespacing)
    }
}

/// The names of `ids`, sorted, once each.
fn names<'a>(ids: impl IntoIterator<Item = &'a ModelId>) -> Vec<String> {
    let mut names: Vec<String> = ids.into_iter().map(|id| id.name.clone()).collect();
    names.sort();
    names.dedup();
    names
}
