//! One HTTP/2 connection for gRPC calls, driven by the task that uses it.

use std::future::Future;

use hyper::{
    Request, Response, Uri,
    body::Incoming,
    client::conn::http2,
    header::{CONTENT_TYPE, HeaderValue, TE},
};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpStream;

use crate::{
    driven::drive,
    error::{Error, Result},
    target::Target,
};

type Connection<B> = http2::Connection<TokioIo<TcpStream>, B, TokioExecutor>;

/// A request body a gRPC connection can carry.
pub trait GrpcBody:
    http_body::Body<Data = bytes::Bytes, Error = std::convert::Infallible> + Send + Unpin + 'static
{
}

impl<B> GrpcBody for B where
    B: http_body::Body<Data = bytes::Bytes, Error = std::convert::Infallible>
        + Send
        + Unpin
        + 'static
{
}

/// A gRPC connection whose requests carry bodies of type `B`.
pub struct GrpcConn<B: GrpcBody> {
    target: Target,
    sender: http2::SendRequest<B>,
    conn: Connection<B>,
}

impl<B: GrpcBody> GrpcConn<B> {
    /// Opens a connection to `target`.
    pub async fn connect(target: &Target) -> Result<Self> {
        let (sender, conn) = open(target).await?;
        Ok(GrpcConn {
            target: target.clone(),
            sender,
            conn,
        })
    }

    /// The URI of `/inference.GRPCInferenceService/{method}` on this server.
    pub fn uri(&self, method: &str) -> Uri {
        let uri = format!(
            "http://{}/inference.GRPCInferenceService/{method}",
            self.target.authority
        );
        uri.parse().expect("a valid URI")
    }

    /// A gRPC call: a POST of `body` to `uri` (from [`GrpcConn::uri`]).
    pub fn request(uri: Uri, body: B) -> Request<B> {
        let mut request = Request::new(body);
        *request.method_mut() = hyper::Method::POST;
        *request.uri_mut() = uri;
        let headers = request.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
        headers.insert(TE, HeaderValue::from_static("trailers"));
        request
    }

    /// Sends `request` and waits for the response head; reconnects first
    /// when the server closed the connection.
    pub async fn send(&mut self, request: Request<B>) -> Result<Response<Incoming>> {
        self.ready().await?;
        let response = drive(&mut self.conn, self.sender.send_request(request)).await??;
        Ok(response)
    }

    /// Waits until a new call can start; reconnects first when the server
    /// closed the connection.
    pub async fn ready(&mut self) -> Result<()> {
        if self.sender.is_closed() {
            (self.sender, self.conn) = open(&self.target).await?;
        }
        drive(&mut self.conn, self.sender.ready()).await??;
        Ok(())
    }

    /// A future that sends `request`, for callers that await the answer later.
    pub fn send_later(
        &mut self,
        request: Request<B>,
    ) -> impl Future<Output = hyper::Result<Response<Incoming>>> + Send + 'static {
        self.sender.send_request(request)
    }

    /// Runs `work` (reading a response) while driving the connection.
    pub async fn drive<F: Future>(&mut self, work: F) -> Result<F::Output> {
        drive(&mut self.conn, work).await
    }
}

async fn open<B: GrpcBody>(target: &Target) -> Result<(http2::SendRequest<B>, Connection<B>)> {
    let stream = TcpStream::connect(target.addr)
        .await
        .map_err(|e| Error::new(format!("cannot connect to {}: {e}", target.authority)))?;
    stream.set_nodelay(true)?;
    Ok(http2::handshake(TokioExecutor::new(), TokioIo::new(stream)).await?)
}
