//! What a sequence batcher's handle, its instances and its completion
//! signals share: the strategy's state under one lock and the conditions
//! instances and the reaper wait on.

use std::sync::Arc;

use parking_lot::{Condvar, Mutex, MutexGuard};

use super::{control::Controls, implicit_state::ImplicitState, strategy::Strategy};

/// The sequence batcher's shared state.
#[derive(Debug)]
pub(super) struct Shared {
    pub state: Mutex<Strategy>,
    /// Wakes instances: a request arrived or completed, a slot changed
    /// hands or the batcher stopped.
    pub work: Condvar,
    /// Wakes the reaper ([`super::expiry`]): a backlogged sequence got a
    /// deadline, or the batcher stopped.
    pub expiry: Condvar,
    pub controls: Controls,
    pub implicit: Option<Arc<ImplicitState>>,
    /// The oldest strategy's `preserve_ordering`: each instance answers in
    /// the order it took its requests.
    pub preserve_ordering: bool,
}

impl Shared {
    pub fn lock(&self) -> MutexGuard<'_, Strategy> {
        self.state.lock()
    }
}
