//! The server's writing end of an instance socket: whole frames under one
//! lock, each preceded by the arena_out releases that piled up since the
//! last frame.

use std::{
    io::Write,
    os::unix::net::UnixStream,
    sync::{
        Arc, Weak,
        atomic::{AtomicBool, Ordering},
    },
};

use oxiserve_types::{Error, Result};
use parking_lot::Mutex;

use crate::{arena::ReleaseHook, protocol::ToStub};

/// Releases are sent on their own once this many piled up.
const RELEASE_BATCH: usize = 64;

/// Writes frames to one stub process.
pub(crate) struct Connection {
    writer: Mutex<Writer>,
    releases: Mutex<Vec<u64>>,
    closed: AtomicBool,
}

struct Writer {
    socket: UnixStream,
    buffer: Vec<u8>,
}

impl Connection {
    pub fn new(socket: UnixStream) -> Arc<Self> {
        Arc::new(Self {
            writer: Mutex::new(Writer {
                socket,
                buffer: Vec::with_capacity(4096),
            }),
            releases: Mutex::default(),
            closed: AtomicBool::new(false),
        })
    }

    /// Sends one message, with the pending releases before it.
    pub fn send(&self, message: &ToStub) -> Result<()> {
        let mut writer = self.writer.lock();
        let writer = &mut *writer;
        writer.buffer.clear();
        self.take_releases(&mut writer.buffer)?;
        message.encode_into(&mut writer.buffer)?;
        self.write(writer)
    }

    /// Marks the process gone: later sends fail quietly.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Relaxed);
        let _ = self
            .writer
            .lock()
            .socket
            .shutdown(std::net::Shutdown::Write);
    }

    /// A hook for arena_out views: the offset of a block the server no
    /// longer reads goes back to the stub with the next frame.
    pub fn release_hook(self: &Arc<Self>) -> ReleaseHook {
        let connection: Weak<Self> = Arc::downgrade(self);
        Arc::new(move |offset| {
            if let Some(connection) = connection.upgrade() {
                connection.queue_release(offset);
            }
        })
    }

    fn queue_release(&self, offset: u64) {
        let full = {
            let mut releases = self.releases.lock();
            releases.push(offset);
            releases.len() >= RELEASE_BATCH
        };
        // Never wait for the writer here: a view may be dropped by a thread
        // that is itself writing.
        if full && let Some(mut writer) = self.writer.try_lock() {
            let writer = &mut *writer;
            writer.buffer.clear();
            if self.take_releases(&mut writer.buffer).is_ok() {
                let _ = self.write(writer);
            }
        }
    }

    fn take_releases(&self, buffer: &mut Vec<u8>) -> Result<()> {
        let offsets = std::mem::take(&mut *self.releases.lock());
        if offsets.is_empty() {
            return Ok(());
        }
        ToStub::Release { offsets }.encode_into(buffer)
    }

    fn write(&self, writer: &mut Writer) -> Result<()> {
        if self.closed.load(Ordering::Relaxed) {
            return Err(Error::unavailable("the Python process is gone"));
        }
        writer
            .socket
            .write_all(&writer.buffer)
            .map_err(|e| Error::unavailable(format!("the Python process is gone ({e})")))
    }
}
