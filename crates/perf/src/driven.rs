//! Driving a hyper client connection from the task that uses it: the
//! connection future is polled alongside the work, so a request costs no
//! cross-task wake-ups.

use std::{
    future::Future,
    pin::{Pin, pin},
    task::Poll,
};

use crate::error::{Error, Result};

/// Polls `work` and `conn` together until `work` is done; fails if the
/// connection ends first.
pub async fn drive<C, F>(conn: &mut C, work: F) -> Result<F::Output>
where
    C: Future<Output = hyper::Result<()>> + Unpin,
    F: Future,
{
    let mut work = pin!(work);
    std::future::poll_fn(|cx| {
        if let Poll::Ready(out) = work.as_mut().poll(cx) {
            return Poll::Ready(Ok(out));
        }
        let closed = match Pin::new(&mut *conn).poll(cx) {
            Poll::Pending => None,
            Poll::Ready(Ok(())) => Some(Error::new("the server closed the connection")),
            Poll::Ready(Err(e)) => Some(Error::from(e)),
        };
        // The connection may just have delivered what `work` waits for.
        if let Poll::Ready(out) = work.as_mut().poll(cx) {
            return Poll::Ready(Ok(out));
        }
        match closed {
            Some(e) => Poll::Ready(Err(e)),
            None => Poll::Pending,
        }
    })
    .await
}
