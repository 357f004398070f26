//! The HTTP/1.1 listener: accepting connections (at most
//! [`HttpOptions::max_connections`] at once, over TLS when configured),
//! their time limits, and a stop that answers every request a client has
//! already sent before closing.

mod activity;
mod body_timeout;
mod connection;

use std::{future::Future, io, sync::Arc, time::Duration};

use axum::Router;
use oxiserve_core::Server;
use tokio::{
    net::{TcpListener, TcpStream},
    sync::{OwnedSemaphorePermit, Semaphore, watch},
    task::JoinSet,
};

use crate::{options::HttpOptions, router::router};

/// Serves `server` on `listener` until `shutdown` completes. The listener
/// then closes (new connections are refused), requests already received
/// are answered with `Connection: close`, and idle connections close.
pub async fn serve(
    listener: TcpListener,
    server: Server,
    options: HttpOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let app = router(server, &options);
    serve_router(listener, app, options, shutdown).await
}

/// [`serve`] with other routes than the KServe ones (the SageMaker and
/// Vertex AI endpoints'), under the same connection limits.
pub async fn serve_router(
    listener: TcpListener,
    app: Router,
    options: HttpOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let limits = connection::Limits::from(&options);
    let slots = Arc::new(Semaphore::new(options.max_connections.max(1)));
    let (drain, draining) = watch::channel(false);
    let mut connections = JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            accepted = accept(&listener, &slots) => accepted,
        };
        match accepted {
            Ok((stream, slot)) => {
                let (app, draining, tls) = (app.clone(), draining.clone(), options.tls.clone());
                connections.spawn(async move {
                    match tls {
                        None => connection::serve(stream, app, limits, draining).await,
                        Some(tls) => match tls.accept(stream).await {
                            Ok(stream) => connection::serve(stream, app, limits, draining).await,
                            Err(e) => log::debug!("HTTP: TLS handshake failed: {e}"),
                        },
                    }
                    drop(slot);
                });
            }
            Err(e) => {
                // Out of descriptors or memory: back off instead of spinning.
                log::warn!("HTTP: cannot accept a connection: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    drop(listener);
    let _ = drain.send(true);
    while connections.join_next().await.is_some() {}
    Ok(())
}

/// The next connection, once fewer than the limit are open (until then,
/// new connections wait in the listen backlog).
async fn accept(
    listener: &TcpListener,
    slots: &Arc<Semaphore>,
) -> io::Result<(TcpStream, OwnedSemaphorePermit)> {
    let slot = slots
        .clone()
        .acquire_owned()
        .await
        .expect("the connection semaphore is never closed");
    let (stream, _) = listener.accept().await?;
    stream.set_nodelay(true)?;
    Ok((stream, slot))
}
