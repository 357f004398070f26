//! Runs a blocking Redis call without stalling the async runtime: on one of
//! a multi-threaded runtime's workers the worker's other tasks move elsewhere
//! first; anywhere else the call just blocks.

use tokio::runtime::{Handle, RuntimeFlavor};

/// `call`'s result, computed where blocking is harmless.
pub(crate) fn blocking<T>(call: impl FnOnce() -> T) -> T {
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(call)
        }
        _ => call(),
    }
}
