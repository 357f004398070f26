//! Who asks for a load or unload, and what that changes: a model's own
//! requests (a Python model's `pb_utils.load_model` in its `initialize` or
//! `execute`) come while its load, or one of its requests, waits for them,
//! holding what the change would otherwise wait for.

use parking_lot::{Mutex, MutexGuard};

use super::{ModelManager, Requester, load_slots::LoadSlot};
use crate::repository::ModelId;

impl ModelManager {
    /// Takes `lock`, model `id`'s: `None` when the asking model is `id` and
    /// someone else holds it.
    pub(super) fn lock_model<'a>(
        &self,
        lock: &'a Mutex<()>,
        id: &ModelId,
    ) -> Option<MutexGuard<'a, ()>> {
        match &self.requester {
            Requester::Model(caller) if caller == id => lock.try_lock(),
            _ => Some(lock.lock()),
        }
    }

    /// A load slot, for a client's load.
    pub(super) fn load_slot(&self) -> Option<LoadSlot<'_>> {
        match self.requester {
            Requester::Client => Some(self.inner.load_slots.acquire()),
            Requester::Model(_) => None,
        }
    }

    /// Runs `retire` (which shuts versions out of service down once they
    /// finished their requests): for a model, in the background.
    pub(super) fn retiring(&self, retire: impl FnOnce() + Send + 'static) {
        match self.requester {
            Requester::Client => retire(),
            Requester::Model(_) => {
                let spawned = std::thread::Builder::new()
                    .name("model-retire".into())
                    .spawn(retire);
                if let Err(e) = spawned {
                    log::error!("cannot start a thread to unload model versions: {e}");
                }
            }
        }
    }
}

/// Why a model's change failed when its own lock was busy.
pub(super) fn busy(id: &ModelId) -> String {
    format!(
        "model '{id}' is being loaded or unloaded, and the request comes from that model, which \
         that load or unload may wait for"
    )
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, mpsc};

    use super::*;
    use crate::{backends::BackendRegistry, config::ServerConfig};

    fn managers() -> (ModelManager, ModelManager) {
        let config = ServerConfig {
            model_load_threads: 1,
            ..Default::default()
        };
        let client = ModelManager::new(Arc::new(config), BackendRegistry::default());
        let model = ModelManager {
            inner: client.inner.clone(),
            requester: Requester::Model(ModelId::new("", "a")),
        };
        (client, model)
    }

    #[test]
    fn a_model_never_waits_for_its_own_lock() {
        let (_, model) = managers();
        let lock = Mutex::new(());
        let held = lock.lock();
        assert!(model.lock_model(&lock, &ModelId::new("", "a")).is_none());
        drop(held);
        assert!(model.lock_model(&lock, &ModelId::new("", "a")).is_some());
        assert!(model.lock_model(&lock, &ModelId::new("", "b")).is_some());
    }

    #[test]
    fn a_model_needs_no_load_slot() {
        let (client, model) = managers();
        let _only_slot = client.load_slot().expect("a client takes a slot");
        assert!(model.load_slot().is_none());
    }

    #[test]
    fn a_model_retires_in_the_background() {
        let (client, model) = managers();
        let (ran, runs) = mpsc::channel();
        let thread = std::thread::current().id();
        let done = ran.clone();
        client.retiring(move || done.send(std::thread::current().id() == thread).unwrap());
        assert!(
            runs.recv().unwrap(),
            "a client's retirement runs in the calling thread"
        );
        model.retiring(move || ran.send(std::thread::current().id() == thread).unwrap());
        assert!(!runs.recv().unwrap());
    }
}
