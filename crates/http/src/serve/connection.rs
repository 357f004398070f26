//! One HTTP/1.1 connection: its time limits, and how it ends when the
//! server stops.

use std::{
    convert::Infallible,
    time::{Duration, Instant},
};

use axum::{
    Router,
    body::Body,
    http::{HeaderValue, Request, header},
};
use hyper::{body::Incoming, server::conn::http1, service::service_fn};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::{
    io::{AsyncRead, AsyncWrite},
    sync::watch,
};
use tower::ServiceExt;

use super::{activity::Activity, body_timeout::BodyTimeout};
use crate::{options::HttpOptions, traced::Received};

/// How long a connection must stay idle, once the server stops, before it
/// is closed: a request its client sends meanwhile is still answered.
const DRAIN_QUIET: Duration = Duration::from_millis(500);

/// The time limits of every connection.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    /// For a request's headers, counted from the end of the previous
    /// request (so it also closes idle keep-alive connections).
    header: Duration,
    /// Between two reads of a request body.
    body: Duration,
}

impl From<&HttpOptions> for Limits {
    fn from(options: &HttpOptions) -> Self {
        Self {
            header: options.header_timeout,
            body: options.body_timeout,
        }
    }
}

/// Serves `app` on `stream` until the client closes it, a limit is passed,
/// or, after `draining` turns true, the connection has been idle for
/// [`DRAIN_QUIET`]. Responses sent while draining carry `Connection: close`.
pub(super) async fn serve<S>(
    stream: S,
    app: Router,
    limits: Limits,
    mut draining: watch::Receiver<bool>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let activity = Activity::new();
    let service = {
        let activity = activity.clone();
        let draining = draining.clone();
        service_fn(move |request: Request<Incoming>| {
            let busy = activity.begin();
            let mut request = request.map(|body| Body::new(BodyTimeout::new(body, limits.body)));
            request.extensions_mut().insert(Received(Instant::now()));
            let (app, draining) = (app.clone(), draining.clone());
            async move {
                let Ok(mut response) = app.oneshot(request).await;
                if *draining.borrow() {
                    let close = HeaderValue::from_static("close");
                    response.headers_mut().insert(header::CONNECTION, close);
                }
                drop(busy);
                Ok::<_, Infallible>(response)
            }
        })
    };
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header)
        .serve_connection(TokioIo::new(stream), service);
    let mut connection = std::pin::pin!(connection);
    tokio::select! {
        ended = connection.as_mut() => return log_end(ended),
        _ = draining.wait_for(|draining| *draining) => {}
    }
    tokio::select! {
        ended = connection.as_mut() => return log_end(ended),
        () = activity.idle_for(DRAIN_QUIET) => connection.as_mut().graceful_shutdown(),
    }
    log_end(connection.await);
}

fn log_end(ended: hyper::Result<()>) {
    if let Err(e) = ended {
        log::debug!("HTTP connection ended: {e}");
    }
}
