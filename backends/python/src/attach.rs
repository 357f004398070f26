//! BLS from processes a stub forks (`multiprocessing.Pool` workers calling
//! `exec()`). Such a process may not use the socket it inherited: its parent
//! reads and writes it. It attaches instead: it sends one end of a socket
//! pair of its own over the instance's attach socket (`SOCK_SEQPACKET`, so
//! that messages of several processes never mix; only the server reads it),
//! and the server answers on that socket with two arenas for it and serves
//! it with a pump of its own, as an instance process that runs no batches
//! (`docs/design/python-wire.md`, "Forked processes").

use std::{
    io::{IoSlice, IoSliceMut},
    mem::MaybeUninit,
    os::{
        fd::{AsFd, OwnedFd},
        unix::net::UnixStream,
    },
    sync::{Arc, Weak, atomic::AtomicBool, mpsc},
    thread::JoinHandle,
    time::Duration,
};

use oxiserve_backend::ModelHost;
use oxiserve_types::{Error, Result};
use parking_lot::Mutex;
use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags, Shutdown,
};
use serde_json::json;

use crate::{
    arena::{Arena, ArenaLayout, InArena},
    connection::Connection,
    inflight::InFlight,
    metrics::StubMetrics,
    pump::Pump,
    zygote::Zygote,
};

/// What the processes forked from one instance process share.
pub(crate) struct Origin {
    pub instance: String,
    pub layout: ArenaLayout,
    pub zygote: Arc<Zygote>,
    pub host: Arc<dyn ModelHost>,
}

/// The attach socket of one instance process and the processes attached
/// through it.
pub(crate) struct Attachments {
    socket: Arc<OwnedFd>,
    attached: Arc<Mutex<Vec<Weak<Connection>>>>,
    listener: Option<JoinHandle<()>>,
}

impl Attachments {
    /// Serves attach requests arriving on `socket` (the server's end).
    pub fn listen(socket: OwnedFd, origin: Origin) -> Result<Self> {
        let socket = Arc::new(socket);
        let attached = Arc::new(Mutex::new(Vec::new()));
        let listener = {
            let (socket, attached) = (socket.clone(), attached.clone());
            std::thread::Builder::new()
                .name(format!("py-attach:{}", origin.instance))
                .spawn(move || listen(&socket, &origin, &attached))
                .map_err(|e| Error::internal(format!("cannot start a thread: {e}")))?
        };
        Ok(Self {
            socket,
            attached,
            listener: Some(listener),
        })
    }

    /// Stops listening and closes the attached processes' sockets.
    pub fn close(&mut self) {
        let _ = rustix::net::shutdown(&*self.socket, Shutdown::Both);
        for connection in self.attached.lock().drain(..) {
            if let Some(connection) = connection.upgrade() {
                connection.close();
            }
        }
        if let Some(listener) = self.listener.take() {
            let _ = listener.join();
        }
    }
}

impl Drop for Attachments {
    fn drop(&mut self) {
        self.close();
    }
}

fn listen(socket: &OwnedFd, origin: &Origin, attached: &Mutex<Vec<Weak<Connection>>>) {
    loop {
        let mut message = [0u8; 64];
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
        let mut control = RecvAncillaryBuffer::new(&mut space);
        let received = rustix::net::recvmsg(
            socket,
            &mut [IoSliceMut::new(&mut message)],
            &mut control,
            RecvFlags::CMSG_CLOEXEC,
        );
        let received = match received {
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return,
            Ok(received) => received,
        };
        let fds: Vec<OwnedFd> = control
            .drain()
            .flat_map(|m| match m {
                RecvAncillaryMessage::ScmRights(fds) => fds.collect(),
                _ => Vec::new(),
            })
            .collect();
        if received.bytes == 0 && fds.is_empty() {
            return; // every process holding the other end is gone, or we stopped
        }
        let Some(fd) = fds.into_iter().next() else {
            log::warn!(
                "{}: attach request without a socket ignored",
                origin.instance
            );
            continue;
        };
        match attach(UnixStream::from(fd), origin) {
            Ok(connection) => {
                let mut attached = attached.lock();
                attached.retain(|c| c.strong_count() > 0);
                attached.push(Arc::downgrade(&connection));
            }
            Err(e) => log::warn!(
                "{}: a process the model forked could not attach: {}",
                origin.instance,
                e.message
            ),
        }
    }
}

/// Gives the process at the other end of `socket` its arenas and starts its
/// pump.
fn attach(socket: UnixStream, origin: &Origin) -> Result<Arc<Connection>> {
    let Origin {
        instance,
        layout,
        zygote,
        host,
    } = origin;
    let arena_in = Arc::new(InArena::new(
        &format!("oxiserve:{instance}:fork:in"),
        *layout,
    )?);
    let arena_out = Arena::pool(&format!("oxiserve:{instance}:fork:out"), layout)?;
    let header = json!({
        "arena_size": layout.size,
        "pool_size": layout.pool,
        "growth_size": layout.growth,
    })
    .to_string();
    let fds = [arena_in.fd(), arena_out.fd()];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
    let mut ancillary = SendAncillaryBuffer::new(&mut space);
    ancillary.push(SendAncillaryMessage::ScmRights(&fds));
    let gone = |e: std::io::Error| {
        Error::unavailable(format!("python backend: the forked process is gone ({e})"))
    };
    rustix::net::sendmsg(
        socket.as_fd(),
        &[IoSlice::new(header.as_bytes())],
        &mut ancillary,
        SendFlags::NOSIGNAL,
    )
    .map_err(|e| gone(e.into()))?;
    let reader = socket.try_clone().map_err(gone)?;
    let connection = Connection::new(socket);
    let (events, _) = mpsc::channel();
    let pump = Pump {
        instance: format!("{instance} (a process it forked)"),
        pid: 0,
        zygote: zygote.clone(),
        connection: connection.clone(),
        arena_in,
        arena_out,
        inflight: Arc::new(Mutex::new(InFlight::default())),
        events,
        metrics: StubMetrics::new(host.custom_metrics()),
        host: host.clone(),
        // Its end is no crash of the instance: the process may exit at will.
        closing: Arc::new(AtomicBool::new(true)),
        alive: Arc::new(AtomicBool::new(true)),
        idle_spin: Duration::ZERO,
        // It takes no direct calls and makes its own through the server.
        direct: None,
    };
    std::thread::Builder::new()
        .name(format!("py-fork:{instance}"))
        .spawn(move || pump.run(reader))
        .map_err(|e| Error::internal(format!("cannot start a thread: {e}")))?;
    Ok(connection)
}
