//! Request bodies that note when hyper took them, and response body reading.

use std::{
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    task::{Context, Poll},
    time::Instant,
};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;

use crate::error::Result;

/// When a connection's last request body was handed to hyper, in
/// nanoseconds since the connection's `epoch`.
#[derive(Debug)]
pub struct SendClock {
    epoch: Instant,
    taken_ns: AtomicU64,
}

impl SendClock {
    /// A clock counting from now.
    pub fn new() -> Arc<Self> {
        Arc::new(SendClock {
            epoch: Instant::now(),
            taken_ns: AtomicU64::new(0),
        })
    }

    /// The instant the last body was taken.
    pub fn taken(&self) -> Instant {
        self.epoch + std::time::Duration::from_nanos(self.taken_ns.load(Ordering::Acquire))
    }

    /// Notes that a body was handed over now.
    pub fn mark(&self) {
        let ns = self.epoch.elapsed().as_nanos() as u64;
        self.taken_ns.store(ns, Ordering::Release);
    }
}

/// A one-chunk body (a pre-encoded request, shared, not copied).
#[derive(Debug)]
pub struct OnceBody {
    data: Option<Bytes>,
    clock: Arc<SendClock>,
}

impl OnceBody {
    /// A body that marks `clock` when hyper takes its bytes.
    pub fn timed(data: Bytes, clock: Arc<SendClock>) -> Self {
        OnceBody {
            data: Some(data),
            clock,
        }
    }
}

impl Body for OnceBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<std::result::Result<Frame<Bytes>, Self::Error>>> {
        let frame = self.data.take().map(|d| Ok(Frame::data(d)));
        if frame.is_some() {
            self.clock.mark();
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.data.as_ref().map_or(0, |d| d.len() as u64))
    }
}

/// Reads a response body to its end, dropping the data; returns its length.
pub async fn drain(body: &mut Incoming) -> Result<usize> {
    let mut len = 0;
    while let Some(frame) = next_frame(body).await {
        if let Ok(data) = frame?.into_data() {
            len += data.len();
        }
    }
    Ok(len)
}

/// Reads a whole response body.
pub async fn collect(body: &mut Incoming) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    while let Some(frame) = next_frame(body).await {
        if let Ok(data) = frame?.into_data() {
            out.extend_from_slice(&data);
        }
    }
    Ok(out)
}

/// The next frame of a body (data or trailers).
pub async fn next_frame(body: &mut Incoming) -> Option<hyper::Result<Frame<Bytes>>> {
    std::future::poll_fn(|cx| Pin::new(&mut *body).poll_frame(cx)).await
}
