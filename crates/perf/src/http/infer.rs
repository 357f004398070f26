//! The HTTP inference client: POSTs pre-encoded bodies on a keep-alive
//! connection; nothing is encoded or parsed per request.

use std::{sync::Arc, time::Instant};

use hyper::{
    Method, Request, StatusCode, Uri,
    header::{CONTENT_TYPE, HeaderName, HeaderValue},
};

use super::{
    body::{OnceBody, SendClock, collect, drain},
    conn::HttpConn,
    encode::PreparedBody,
};
use crate::{
    client::{Connector, InferClient, Outcome},
    error::{Error, Result},
    sequence::SequenceStep,
    target::Target,
};

static HEADER_LENGTH: HeaderName = HeaderName::from_static("inference-header-content-length");

/// Request parts shared by every connection.
#[derive(Debug)]
struct Shared {
    uri: Uri,
    bodies: Vec<PreparedBody>,
    content_type: Vec<HeaderValue>,
    header_length: Vec<Option<HeaderValue>>,
}

/// Opens [`HttpInfer`] connections to one model's infer endpoint.
#[derive(Debug, Clone)]
pub struct HttpConnector {
    target: Target,
    shared: Arc<Shared>,
}

impl HttpConnector {
    /// Connections that POST `bodies` (round robin) to `path`.
    pub fn new(target: Target, path: &str, bodies: Vec<PreparedBody>) -> Result<Self> {
        let uri = Uri::try_from(path).map_err(|e| Error::new(format!("bad path '{path}': {e}")))?;
        let content_type = bodies
            .iter()
            .map(|b| {
                HeaderValue::from_static(match b.header_length {
                    Some(_) => "application/octet-stream",
                    None => "application/json",
                })
            })
            .collect();
        let header_length = bodies
            .iter()
            .map(|b| b.header_length.map(HeaderValue::from))
            .collect();
        let shared = Shared {
            uri,
            bodies,
            content_type,
            header_length,
        };
        Ok(HttpConnector {
            target,
            shared: Arc::new(shared),
        })
    }
}

impl Connector for HttpConnector {
    type Client = HttpInfer;

    async fn connect(&self) -> Result<HttpInfer> {
        Ok(HttpInfer {
            conn: HttpConn::connect(&self.target).await?,
            shared: self.shared.clone(),
            clock: SendClock::new(),
        })
    }
}

/// One connection sending inference requests.
pub struct HttpInfer {
    conn: HttpConn,
    shared: Arc<Shared>,
    clock: Arc<SendClock>,
}

impl HttpInfer {
    fn request(&self, step: usize, sequence: Option<SequenceStep>) -> Request<OnceBody> {
        let i = step % self.shared.bodies.len();
        let prepared = &self.shared.bodies[i];
        let (body, header_length) = match sequence {
            Some(s) => {
                let (body, length) = prepared.with_sequence(s);
                (body, length.map(HeaderValue::from))
            }
            None => (prepared.body.clone(), self.shared.header_length[i].clone()),
        };
        let mut request = Request::new(OnceBody::timed(body, self.clock.clone()));
        *request.method_mut() = Method::POST;
        *request.uri_mut() = self.shared.uri.clone();
        let headers = request.headers_mut();
        headers.insert(CONTENT_TYPE, self.shared.content_type[i].clone());
        if let Some(length) = header_length {
            headers.insert(HEADER_LENGTH.clone(), length);
        }
        request
    }
}

impl InferClient for HttpInfer {
    async fn infer(&mut self, step: usize, sequence: Option<SequenceStep>) -> Outcome {
        let start = Instant::now();
        let request = self.request(step, sequence);
        let mut response = match self.conn.send(request).await {
            Ok(r) => r,
            Err(e) => return failed(e.to_string()),
        };
        let head = Instant::now();
        let send_ns = self
            .clock
            .taken()
            .saturating_duration_since(start)
            .as_nanos() as u64;
        if response.status() != StatusCode::OK {
            let status = response.status();
            let text = self.conn.drive(collect(response.body_mut())).await;
            let text = text.and_then(|t| t).unwrap_or_default();
            return failed(format!("{status}: {}", String::from_utf8_lossy(&text)));
        }
        if let Err(e) = self
            .conn
            .drive(drain(response.body_mut()))
            .await
            .and_then(|r| r)
        {
            return failed(e.to_string());
        }
        Outcome {
            send_ns,
            recv_ns: head.elapsed().as_nanos() as u64,
            responses: 1,
            error: None,
        }
    }
}

fn failed(error: String) -> Outcome {
    Outcome {
        error: Some(error),
        ..Outcome::default()
    }
}
