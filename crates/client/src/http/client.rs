//! [`HttpClient`]: every KServe v2 endpoint with Triton's extensions
//! (repository, statistics, system shared memory) over HTTP/1.1.

use base64::Engine;
use oxiserve_proto::{
    ModelConfig,
    inference::{
        ModelMetadataResponse, ModelStatisticsResponse, RepositoryIndexResponse,
        ServerMetadataResponse, SystemSharedMemoryStatusResponse,
    },
};
use reqwest::{
    Method, RequestBuilder, Response, Url,
    header::{CONTENT_TYPE, HeaderValue},
};
use serde_json::{Value, json};

use super::{decode::decode, encode::encode, messages::from_json};
use crate::{
    address::with_scheme,
    error::{Error, Result},
    request::InferRequest,
    result::InferResult,
};

const HEADER_LENGTH: &str = "inference-header-content-length";

/// A client of one server's HTTP endpoint. Cloning it is cheap: clones share
/// one pool of keep-alive connections.
///
/// ```no_run
/// # async fn f() -> oxiserve_client::Result<()> {
/// let client = oxiserve_client::HttpClient::new("localhost:8000")?;
/// if client.is_server_ready().await? {
///     let metadata = client.model_metadata("identity", "").await?;
///     println!("{} takes {:?}", metadata.name, metadata.inputs);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct HttpClient {
    http: reqwest::Client,
    base: Url,
}

impl HttpClient {
    /// A client of the server at `url` (`host:port`, or `http://host:port`).
    /// Connections open on the first call.
    pub fn new(url: &str) -> Result<Self> {
        let base = Url::parse(&with_scheme(url))
            .ok()
            .filter(|u| u.scheme() == "http" && u.has_host())
            .ok_or_else(|| Error::invalid_arg(format!("expected host:port, got '{url}'")))?;
        // Where reqwest is built with rustls but no crypto provider (another
        // crate of the program asked for it), building a client needs one;
        // an error says one is installed already.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .tcp_nodelay(true)
            .build()
            .map_err(Error::from)?;
        Ok(HttpClient { http, base })
    }

    /// `GET /v2/health/live`: whether the server is live.
    pub async fn is_server_live(&self) -> Result<bool> {
        self.answers_ok(&["v2", "health", "live"]).await
    }

    /// `GET /v2/health/ready`: whether the server is ready.
    pub async fn is_server_ready(&self) -> Result<bool> {
        self.answers_ok(&["v2", "health", "ready"]).await
    }

    /// Whether `model` (of `version`; `""`: the server's choice) is ready.
    pub async fn is_model_ready(&self, model: &str, version: &str) -> Result<bool> {
        let mut path = model_path(model, version);
        path.push("ready");
        self.answers_ok(&path).await
    }

    /// `GET /v2`: the server's name, version and extensions.
    pub async fn server_metadata(&self) -> Result<ServerMetadataResponse> {
        let json = self.call(Method::GET, &["v2"], None).await?;
        from_json("ServerMetadataResponse", json)
    }

    /// A model's versions, platform, inputs and outputs.
    pub async fn model_metadata(
        &self,
        model: &str,
        version: &str,
    ) -> Result<ModelMetadataResponse> {
        let json = self
            .call(Method::GET, &model_path(model, version), None)
            .await?;
        from_json("ModelMetadataResponse", json)
    }

    /// A model's configuration (`GET .../config`).
    pub async fn model_config(&self, model: &str, version: &str) -> Result<ModelConfig> {
        let mut path = model_path(model, version);
        path.push("config");
        let json = self.call(Method::GET, &path, None).await?;
        from_json("ModelConfig", json)
    }

    /// Inference statistics of `model` (`""`: every model) and `version`.
    pub async fn model_statistics(
        &self,
        model: &str,
        version: &str,
    ) -> Result<ModelStatisticsResponse> {
        let mut path = match model {
            "" => vec!["v2", "models"],
            model => model_path(model, version),
        };
        path.push("stats");
        let json = self.call(Method::GET, &path, None).await?;
        from_json("ModelStatisticsResponse", json)
    }

    /// The models of the repository and their states; only the ready ones
    /// when `ready`.
    pub async fn repository_index(&self, ready: bool) -> Result<RepositoryIndexResponse> {
        let body = json!({"ready": ready});
        let json = self
            .call(Method::POST, &["v2", "repository", "index"], Some(&body))
            .await?;
        from_json("RepositoryIndexResponse", json!({"models": json}))
    }

    /// Loads (or reloads) `model`, with `config` (JSON) instead of its
    /// `config.pbtxt` and `files` (path in the model folder, such as
    /// `1/model.py`, and contents) instead of its folder, when given.
    pub async fn load_model(
        &self,
        model: &str,
        config: Option<&str>,
        files: &[(&str, &[u8])],
    ) -> Result<()> {
        let mut parameters = serde_json::Map::new();
        if let Some(config) = config {
            parameters.insert("config".into(), json!(config));
        }
        for (path, contents) in files {
            let encoded = base64::engine::general_purpose::STANDARD.encode(contents);
            parameters.insert(format!("file:{path}"), json!(encoded));
        }
        let body = json!({"parameters": parameters});
        let path = ["v2", "repository", "models", model, "load"];
        self.call(Method::POST, &path, Some(&body)).await.map(drop)
    }

    /// Unloads `model`, and with `unload_dependents` the models only it
    /// used (an ensemble's members).
    pub async fn unload_model(&self, model: &str, unload_dependents: bool) -> Result<()> {
        let body = json!({"parameters": {"unload_dependents": unload_dependents}});
        let path = ["v2", "repository", "models", model, "unload"];
        self.call(Method::POST, &path, Some(&body)).await.map(drop)
    }

    /// The registered system shared memory regions (`""`: all), by name.
    pub async fn system_shared_memory_status(
        &self,
        region: &str,
    ) -> Result<SystemSharedMemoryStatusResponse> {
        let json = self
            .call(Method::GET, &shared_memory_path(region, "status"), None)
            .await?;
        let regions: serde_json::Map<String, Value> = json
            .as_array()
            .ok_or_else(|| Error::protocol(format!("shared memory status is not a list: {json}")))?
            .iter()
            .map(|r| {
                (
                    r["name"].as_str().unwrap_or_default().to_string(),
                    r.clone(),
                )
            })
            .collect();
        from_json(
            "SystemSharedMemoryStatusResponse",
            json!({"regions": regions}),
        )
    }

    /// Registers the shared memory object `key` as region `name`: its
    /// `byte_size` bytes from `offset`.
    pub async fn register_system_shared_memory(
        &self,
        name: &str,
        key: &str,
        byte_size: u64,
        offset: u64,
    ) -> Result<()> {
        let body = json!({"key": key, "offset": offset, "byte_size": byte_size});
        self.call(
            Method::POST,
            &shared_memory_path(name, "register"),
            Some(&body),
        )
        .await
        .map(drop)
    }

    /// Unregisters region `name` (`""`: every region).
    pub async fn unregister_system_shared_memory(&self, name: &str) -> Result<()> {
        self.call(Method::POST, &shared_memory_path(name, "unregister"), None)
            .await
            .map(drop)
    }

    /// Runs `request` and returns its response. Inputs travel as binary
    /// tensor data unless they say otherwise, and so do the outputs.
    ///
    /// ```no_run
    /// # async fn f() -> oxiserve_client::Result<()> {
    /// use oxiserve_client::{HttpClient, InferInput, InferRequest};
    ///
    /// let client = HttpClient::new("localhost:8000")?;
    /// let request = InferRequest::new("identity")
    ///     .input(InferInput::from_array("INPUT0", &ndarray::arr2(&[[1.0_f32, 2.0, 3.0]])));
    /// let result = client.infer(&request).await?;
    /// println!("{}", result.as_array::<f32>("OUTPUT0")?);
    /// # Ok(()) }
    /// ```
    pub async fn infer(&self, request: &InferRequest) -> Result<InferResult> {
        let body = encode(request)?;
        let mut path = model_path(request.model_name(), request.model_version());
        path.push("infer");
        let mut builder = self.http.post(self.url(&path));
        builder = match body.header_length {
            Some(n) => builder
                .header(CONTENT_TYPE, "application/octet-stream")
                .header(HEADER_LENGTH, n),
            None => builder.header(CONTENT_TYPE, "application/json"),
        };
        let response = send(builder.body(body.bytes)).await?;
        let header_length = match response.headers().get(HEADER_LENGTH) {
            Some(value) => Some(header_length(value)?),
            None => None,
        };
        decode(response.bytes().await?, header_length)
    }

    /// Sends a request with an optional JSON body and returns the JSON answer
    /// (`null` when empty).
    async fn call(&self, method: Method, path: &[&str], body: Option<&Value>) -> Result<Value> {
        let mut builder = self.http.request(method, self.url(path));
        if let Some(body) = body {
            builder = builder
                .header(CONTENT_TYPE, "application/json")
                .body(body.to_string());
        }
        let bytes = send(builder).await?.bytes().await?;
        if bytes.is_empty() {
            return Ok(Value::Null);
        }
        serde_json::from_slice(&bytes).map_err(|e| {
            let text = String::from_utf8_lossy(&bytes);
            Error::protocol(format!("the answer is not JSON ({e}): {text}"))
        })
    }

    /// Whether `GET path` answers 200.
    async fn answers_ok(&self, path: &[&str]) -> Result<bool> {
        let response = self.http.get(self.url(path)).send().await?;
        Ok(response.status() == reqwest::StatusCode::OK)
    }

    /// The URL of `path`'s segments, each percent-encoded.
    fn url(&self, path: &[&str]) -> Url {
        let mut url = self.base.clone();
        url.path_segments_mut()
            .expect("an http URL has a path")
            .clear()
            .extend(path);
        url
    }
}

/// Sends `builder`'s request; an answer other than 2xx becomes
/// [`Error::Http`] with the server's `error` message.
async fn send(builder: RequestBuilder) -> Result<Response> {
    let response = builder.send().await?;
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let text = response.text().await.unwrap_or_default();
    let message = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| v["error"].as_str().map(str::to_string))
        .unwrap_or(text);
    Err(Error::Http {
        status: status.as_u16(),
        message,
    })
}

/// `v2/models/MODEL[/versions/VERSION]`.
fn model_path<'a>(model: &'a str, version: &'a str) -> Vec<&'a str> {
    match version {
        "" => vec!["v2", "models", model],
        version => vec!["v2", "models", model, "versions", version],
    }
}

/// `v2/systemsharedmemory[/region/NAME]/ACTION`.
fn shared_memory_path<'a>(region: &'a str, action: &'a str) -> Vec<&'a str> {
    match region {
        "" => vec!["v2", "systemsharedmemory", action],
        region => vec!["v2", "systemsharedmemory", "region", region, action],
    }
}

fn header_length(value: &HeaderValue) -> Result<usize> {
    value
        .to_str()
        .ok()
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| Error::protocol(format!("bad Inference-Header-Content-Length {value:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_take_host_port_and_encode_names() {
        let client = HttpClient::new("localhost:8000").unwrap();
        let url = client.url(&model_path("a b/c", "2"));
        assert_eq!(
            url.as_str(),
            "http://localhost:8000/v2/models/a%20b%2Fc/versions/2"
        );
        assert!(HttpClient::new("http://127.0.0.1:1/").is_ok());
        assert!(HttpClient::new("https://x:1").is_err());
    }
}
