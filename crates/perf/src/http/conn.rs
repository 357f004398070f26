//! One HTTP/1.1 keep-alive connection: hyper's client connection over a
//! tokio TcpStream, driven by the task that uses it (no second task, so a
//! request costs no cross-task wake-ups).

use std::future::Future;

use hyper::{Request, Response, body::Incoming, client::conn::http1, header::HeaderValue};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use super::body::OnceBody;
use crate::{
    driven::drive,
    error::{Error, Result},
    target::Target,
};

type Connection = http1::Connection<TokioIo<TcpStream>, OnceBody>;

/// A connection to the server; requests go one at a time.
pub struct HttpConn {
    target: Target,
    host: HeaderValue,
    sender: http1::SendRequest<OnceBody>,
    conn: Connection,
}

impl HttpConn {
    /// Opens a connection to `target`.
    pub async fn connect(target: &Target) -> Result<HttpConn> {
        let host = HeaderValue::from_str(&target.authority)
            .map_err(|_| Error::new(format!("bad host '{}'", target.authority)))?;
        let (sender, conn) = open(target).await?;
        Ok(HttpConn {
            target: target.clone(),
            host,
            sender,
            conn,
        })
    }

    /// Sends `request` (its Host header is added here) and returns the
    /// response head; reconnects first when the server closed the
    /// connection. Read the body with [`HttpConn::drive`].
    pub async fn send(&mut self, mut request: Request<OnceBody>) -> Result<Response<Incoming>> {
        request
            .headers_mut()
            .insert(hyper::header::HOST, self.host.clone());
        let ready = match self.sender.is_closed() {
            true => false,
            false => drive(&mut self.conn, self.sender.ready())
                .await
                .is_ok_and(|r| r.is_ok()),
        };
        if !ready {
            (self.sender, self.conn) = open(&self.target).await?;
        }
        let response = drive(&mut self.conn, self.sender.send_request(request)).await?;
        Ok(response?)
    }

    /// Runs `work` (reading a response body) while driving the connection.
    pub async fn drive<F: Future>(&mut self, work: F) -> Result<F::Output> {
        drive(&mut self.conn, work).await
    }
}

async fn open(target: &Target) -> Result<(http1::SendRequest<OnceBody>, Connection)> {
    let stream = TcpStream::connect(target.addr)
        .await
        .map_err(|e| Error::new(format!("cannot connect to {}: {e}", target.authority)))?;
    stream.set_nodelay(true)?;
    Ok(http1::handshake(TokioIo::new(stream)).await?)
}
