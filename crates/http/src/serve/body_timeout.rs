//! A request body that fails when its client sends nothing for a while, so
//! that a client trickling a body cannot hold a connection and its buffer.

use std::{
    pin::Pin,
    task::{Context, Poll},
    time::Duration,
};

use axum::body::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep};

/// The error a stalled body ends with.
#[derive(Debug)]
pub(super) struct BodyStalled(Duration);

impl std::fmt::Display for BodyStalled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "no request body data received for {} s (--http-body-timeout-secs)",
            self.0.as_secs_f64()
        )
    }
}

impl std::error::Error for BodyStalled {}

/// `body`, failing with [`BodyStalled`] when `timeout` passes between two
/// of its frames (the clock starts at the first read).
#[derive(Debug)]
pub(super) struct BodyTimeout<B> {
    body: B,
    timeout: Duration,
    deadline: Option<Pin<Box<Sleep>>>,
}

impl<B> BodyTimeout<B> {
    pub fn new(body: B, timeout: Duration) -> Self {
        Self {
            body,
            timeout,
            deadline: None,
        }
    }
}

impl<B> Body for BodyTimeout<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<axum::BoxError>,
{
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        if let Poll::Ready(frame) = Pin::new(&mut this.body).poll_frame(cx) {
            if let Some(deadline) = &mut this.deadline {
                deadline.as_mut().reset(Instant::now() + this.timeout);
            }
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        let timeout = this.timeout;
        let deadline = this
            .deadline
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        match deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(BodyStalled(timeout).into()))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
