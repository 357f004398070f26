//! One stub process serving one model instance: its socket, arenas and pump.

use std::{
    os::{fd::AsFd, unix::net::UnixStream},
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
        mpsc::{self, Receiver},
    },
    thread::JoinHandle,
    time::Duration,
};

use oxiserve_backend::ModelHost;
use oxiserve_types::{Error, Result};
use parking_lot::Mutex;

use rustix::net::{AddressFamily, SocketFlags, SocketType};

use crate::{
    arena::{Arena, ArenaLayout, InArena},
    attach::{Attachments, Origin},
    connection::Connection,
    inflight::InFlight,
    lane::{DirectCalls, OpenLane},
    metrics::StubMetrics,
    protocol::ToStub,
    pump::{Event, Pump},
    zygote::Zygote,
};

/// A running stub process.
pub(crate) struct Process {
    pub pid: i32,
    pub connection: Arc<Connection>,
    pub arena_in: Arc<InArena>,
    pub inflight: Arc<Mutex<InFlight>>,
    pub events: Receiver<Event>,
    zygote: Arc<Zygote>,
    closing: Arc<AtomicBool>,
    alive: Arc<AtomicBool>,
    pump: Option<JoinHandle<()>>,
    /// The processes the stub forked that attached for BLS calls.
    attachments: Attachments,
    /// Its lane, once it takes direct calls; closed with the process.
    pub lane: Option<OpenLane>,
}

impl Process {
    /// Forks a stub from `zygote` for `instance` with arenas laid out as
    /// `layout` says, and starts its pump.
    pub fn spawn(
        zygote: Arc<Zygote>,
        instance: &str,
        layout: ArenaLayout,
        timeout: Duration,
        idle_spin: Duration,
        host: Arc<dyn ModelHost>,
        direct: DirectCalls,
    ) -> Result<Self> {
        let socketpair =
            |e: std::io::Error| Error::internal(format!("python backend: socketpair: {e}"));
        let (ours, theirs) = UnixStream::pair().map_err(socketpair)?;
        let (attach_ours, attach_theirs) = rustix::net::socketpair(
            AddressFamily::UNIX,
            SocketType::SEQPACKET,
            SocketFlags::CLOEXEC,
            None,
        )
        .map_err(|e| socketpair(e.into()))?;
        let arena_in = Arc::new(InArena::new(&format!("oxiserve:{instance}:in"), layout)?);
        let arena_out = Arena::pool(&format!("oxiserve:{instance}:out"), &layout)?;
        let pid = zygote.spawn(
            &[
                theirs.as_fd(),
                arena_in.fd(),
                arena_out.fd(),
                attach_theirs.as_fd(),
            ],
            &layout,
            timeout,
        )?;
        drop(theirs);
        drop(attach_theirs);
        let attachments = Attachments::listen(
            attach_ours,
            Origin {
                instance: instance.to_string(),
                layout,
                zygote: zygote.clone(),
                host: host.clone(),
            },
        )?;
        let reader = ours
            .try_clone()
            .map_err(|e| Error::internal(format!("python backend: {e}")))?;
        let connection = Connection::new(ours);
        let inflight = Arc::new(Mutex::new(InFlight::default()));
        let closing = Arc::new(AtomicBool::new(false));
        let alive = Arc::new(AtomicBool::new(true));
        let (events_tx, events) = mpsc::channel();
        let pump = Pump {
            instance: instance.to_string(),
            pid,
            zygote: zygote.clone(),
            connection: connection.clone(),
            arena_in: arena_in.clone(),
            arena_out,
            inflight: inflight.clone(),
            events: events_tx,
            metrics: StubMetrics::new(host.custom_metrics()),
            host,
            closing: closing.clone(),
            alive: alive.clone(),
            idle_spin,
            direct: Some(direct),
        };
        let pump = std::thread::Builder::new()
            .name(format!("py:{instance}"))
            .spawn(move || pump.run(reader))
            .map_err(|e| Error::internal(format!("cannot start a thread: {e}")))?;
        Ok(Self {
            pid,
            connection,
            arena_in,
            inflight,
            events,
            zygote,
            closing,
            alive,
            pump: Some(pump),
            attachments,
            lane: None,
        })
    }

    /// Whether the process still runs, as far as its pump knows.
    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Relaxed)
    }

    /// Waits for the event `want` picks, up to `timeout`; a death ends the
    /// wait with its message.
    pub fn wait_for<T>(
        &self,
        timeout: Duration,
        mut want: impl FnMut(Event) -> Option<T>,
    ) -> std::result::Result<T, String> {
        let deadline = std::time::Instant::now().checked_add(timeout);
        loop {
            let received = match deadline {
                Some(deadline) => self
                    .events
                    .recv_timeout(deadline.saturating_duration_since(std::time::Instant::now())),
                None => self
                    .events
                    .recv()
                    .map_err(|_| mpsc::RecvTimeoutError::Disconnected),
            };
            match received {
                Ok(Event::Died(message)) => return Err(message),
                Ok(event) => {
                    if let Some(value) = want(event) {
                        return Ok(value);
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    return Err(format!("no answer within {} s", timeout.as_secs()));
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err("the process is gone".into());
                }
            }
        }
    }

    /// The batches the process finished since the last look, each handed to
    /// `finished`, without waiting; `false` once the process is gone.
    pub fn poll_executed(&self, mut finished: impl FnMut(u64)) -> bool {
        loop {
            match self.events.try_recv() {
                Ok(Event::Executed(id)) => finished(id),
                Ok(Event::Died(_)) | Err(mpsc::TryRecvError::Disconnected) => return false,
                Ok(_) => {}
                Err(mpsc::TryRecvError::Empty) => return self.is_alive(),
            }
        }
    }

    /// Asks the stub to run `finalize` and exit, waits up to `timeout`, then
    /// kills it if it is still there.
    pub fn stop(mut self, timeout: Duration) {
        self.closing.store(true, Ordering::Relaxed);
        if self.connection.send(&ToStub::Finalize).is_ok() {
            let finalized = self.wait_for(timeout, |e| match e {
                Event::Finalized(result) => Some(result),
                _ => None,
            });
            if let Ok(Err(e)) = finalized {
                log::warn!("finalize failed: {}", e.message);
            }
        }
        self.end();
    }

    /// Ends the process now.
    pub fn kill(mut self) {
        self.closing.store(true, Ordering::Relaxed);
        self.end();
    }

    fn end(&mut self) {
        // No more callers are sent to it.
        self.lane.take();
        self.connection.close();
        if self
            .zygote
            .exit_reason(self.pid, Duration::from_millis(200))
            .is_none()
        {
            self.zygote.kill(self.pid);
        }
        if let Some(pump) = self.pump.take() {
            let _ = pump.join();
        }
        self.attachments.close();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if self.pump.is_some() {
            self.closing.store(true, Ordering::Relaxed);
            self.end();
        }
    }
}
