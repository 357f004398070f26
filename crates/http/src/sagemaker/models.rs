//! SageMaker's multi-model endpoint, as Triton serves it: `POST /models`
//! registers a model archive and loads its model, `GET /models[/{name}]`
//! lists the loaded ones, `POST /models/{name}/invoke` runs one and
//! `DELETE /models/{name}` unloads it and unregisters its archive. Models
//! are known by the name SageMaker gives (`model_name`, a hash) and loaded
//! under the `X-Amzn-SageMaker-Target-Model` header's name if given.
//!
//! Registering an archive (Triton's repository registration) puts one link
//! per model folder of the archive in the registry folder, a repository of
//! the server: the model folder the load names is linked under the model's
//! name, the others (an ensemble's members) under their own.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use axum::{
    body::{Bytes, to_bytes},
    extract::{FromRequest, Request},
    http::{HeaderMap, Method, StatusCode},
    response::{IntoResponse, Response},
};
use oxiserve_core::{ModelControlMode, ModelState, Server, repository::LoadRequest};
use oxiserve_types::{Error, ErrorKind};
use parking_lot::Mutex;
use serde_json::{Value, json};

use super::archive::{model_folders, read_archive, unnamed_config};
use crate::{
    binary_json::{self, SAGEMAKER_MIME as MIME, to_binary_content_type},
    error::ApiError,
    forward::{Door, model_route},
    handlers::{infer::body_error, json_response},
};

/// The header naming the model a request is for.
const TARGET_MODEL: &str = "x-amzn-sagemaker-target-model";
/// How long an unload may take before the answer goes anyway (SageMaker
/// gives up after 360 s).
const UNLOAD_TIMEOUT: Duration = Duration::from_secs(350);
const UNLOAD_CHECK_EVERY: Duration = Duration::from_millis(500);

/// Texts of the errors that mean a lack of memory: such a failure answers
/// 507 (Insufficient Storage), telling SageMaker to unload other models.
const OUT_OF_MEMORY: &[&str] = &[
    "CUDA out of memory",
    "CUDA_OUT_OF_MEMORY",
    "Out of memory",
    "Out Of Memory",
    "out of memory",
    "MemoryError",
    "OutOfMemory",
    "OOM",
    "Dst tensor is not initialized",
    "Src tensor is not initialized",
    "CNMEM_STATUS_OUT_OF_MEMORY",
    "CUDNN_STATUS_NOT_INITIALIZED",
    "CUBLAS_STATUS_ALLOC_FAILED",
    "CUBLAS_STATUS_NOT_INITIALIZED",
    "Failed to allocate memory",
    "failed to allocate memory",
    "No space left on device",
];

/// What the multi-model endpoint works with.
pub(super) struct Endpoint<'a> {
    pub door: &'a Door,
    pub models: &'a Models,
}

/// The registered archives and the loaded models.
pub(super) struct Models {
    /// The folder of links (`None` without explicit model control).
    registry: Option<PathBuf>,
    /// Registered archives: repository -> the links made for it.
    registered: Mutex<BTreeMap<String, Vec<PathBuf>>>,
    /// Loaded models: SageMaker's name -> the repository registered for it.
    loaded: Mutex<BTreeMap<String, String>>,
}

impl Models {
    pub fn new(registry: Option<PathBuf>) -> Self {
        Self {
            registry,
            registered: Mutex::default(),
            loaded: Mutex::default(),
        }
    }
}

/// Triton's dispatch of `/models[/{name}][/invoke]`.
pub(super) async fn handle(
    endpoint: &Endpoint<'_>,
    request: Request,
    name: &str,
    invoke: bool,
) -> Response {
    let method = request.method().clone();
    match method {
        Method::GET if name.is_empty() => list(endpoint),
        Method::GET => get(endpoint, name),
        Method::POST if invoke => self::invoke(endpoint, request, name).await,
        Method::POST => load(endpoint, request).await,
        Method::DELETE => unload(endpoint, request.headers(), name).await,
        _ => StatusCode::BAD_REQUEST.into_response(),
    }
}

/// `GET /models`: the loaded models; one that is not ready (as version 1 of
/// SageMaker's name, as Triton checks) is an empty object.
fn list(endpoint: &Endpoint<'_>) -> Response {
    let loaded = endpoint.models.loaded.lock().clone();
    let models: Vec<Value> = loaded
        .iter()
        .map(|(name, repository)| {
            if endpoint.door.app.server.model_ready(name, Some(1)) {
                json!({ "modelName": name, "modelUrl": repository })
            } else {
                json!({})
            }
        })
        .collect();
    json_response(&json!({ "models": models }))
}

/// `GET /models/{name}`
fn get(endpoint: &Endpoint<'_>, name: &str) -> Response {
    match endpoint.models.loaded.lock().get(name) {
        Some(repository) => json_response(&json!({ "modelName": name, "modelUrl": repository })),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// `POST /models/{name}/invoke`: an inference of the loaded model; every
/// error answers 400, or 507 for a lack of memory.
async fn invoke(endpoint: &Endpoint<'_>, request: Request, name: &str) -> Response {
    if !endpoint.models.loaded.lock().contains_key(name) {
        return StatusCode::NOT_FOUND.into_response();
    }
    let model = target_model(request.headers(), name);
    log::info!("Invoking SageMaker TargetModel: {model}");
    let request = match binary_json::infer_request(&endpoint.door.app, request, MIME).await {
        Ok(request) => request,
        Err(refused) => return as_sagemaker_error(refused).await,
    };
    let path = model_route(&model, None, "infer");
    let mut response = endpoint.door.forward(request, Method::POST, &path).await;
    if !response.status().is_success() {
        return as_sagemaker_error(response).await;
    }
    to_binary_content_type(response.headers_mut(), MIME);
    response
}

/// `POST /models`: registers the archive `url` and loads its model as
/// `model_name` (or the target model header's name).
async fn load(endpoint: &Endpoint<'_>, request: Request) -> Response {
    let headers = request.headers().clone();
    let body = match Bytes::from_request(request, &()).await {
        Ok(body) => body,
        Err(rejection) => return body_error(&endpoint.door.app, rejection).into_response(),
    };
    let (name, url) = match parse_load(&body) {
        Ok(parsed) => parsed,
        Err(e) => return bad_request(&e),
    };
    let model = target_model(&headers, &name);
    log::info!("Loading SageMaker TargetModel: {model}");
    let archive = read_archive(&url);
    let links = match endpoint.models.register(
        &endpoint.door.app.server,
        &archive.repository,
        &archive.model_folder,
        &model,
    ) {
        Ok(links) => links,
        Err(e) if e.kind == ErrorKind::AlreadyExists => {
            return ApiError::new(StatusCode::CONFLICT, e.message).into_response();
        }
        Err(e) => return bad_request(&e),
    };
    let folder = Path::new(&archive.repository).join(&archive.model_folder);
    let request = LoadRequest {
        config: unnamed_config(&folder),
        ..LoadRequest::default()
    };
    let server = endpoint.door.app.server.clone();
    let loading = model.clone();
    let loaded = tokio::task::spawn_blocking(move || server.load_model_with(&loading, &request))
        .await
        .unwrap_or_else(|e| Err(Error::internal(e.to_string())));
    if let Err(e) = loaded {
        endpoint.models.unregister(&archive.repository, &links);
        log::debug!("Unregistered model repository due to load failure for model: {model}");
        return match e.kind {
            ErrorKind::AlreadyExists => {
                ApiError::new(StatusCode::CONFLICT, e.message).into_response()
            }
            _ => memory_or_bad_request(e.message),
        };
    }
    endpoint
        .models
        .loaded
        .lock()
        .entry(name)
        .or_insert(archive.repository);
    StatusCode::OK.into_response()
}

/// `DELETE /models/{name}`: unloads the model (and the models loaded for
/// it), waits until it is unloaded, then unregisters its archive.
async fn unload(endpoint: &Endpoint<'_>, headers: &HeaderMap, name: &str) -> Response {
    let model = target_model(headers, name);
    let Some(repository) = endpoint.models.loaded.lock().get(name).cloned() else {
        log::debug!("Model {model} with model hash {name} is not loaded.");
        return StatusCode::NOT_FOUND.into_response();
    };
    log::info!("Unloading SageMaker TargetModel: {model}");
    let server = endpoint.door.app.server.clone();
    let unloading = model.clone();
    let unloaded = tokio::task::spawn_blocking(move || {
        server.unload_model_and_dependents(&unloading)?;
        Ok(wait_until_unloaded(&server, &unloading))
    })
    .await
    .unwrap_or_else(|e| Err(Error::internal(e.to_string())));
    match unloaded {
        Err(e) => {
            log::error!("Error when unloading SageMaker Model with dependents for model: {model}");
            return bad_request(&e);
        }
        Ok(false) => log::error!(
            "Error: UNLOAD did not complete within expected {} seconds. This may result in \
             SageMaker UNLOAD timeout.",
            UNLOAD_TIMEOUT.as_secs()
        ),
        Ok(true) => {}
    }
    let links = endpoint
        .models
        .registered
        .lock()
        .get(&repository)
        .cloned()
        .unwrap_or_default();
    endpoint.models.unregister(&repository, &links);
    endpoint.models.loaded.lock().remove(name);
    StatusCode::OK.into_response()
}

impl Models {
    /// Registers `repository`, its `model_folder` as `model`: Triton's
    /// checks, then one link per model folder. Returns the links.
    fn register(
        &self,
        server: &Server,
        repository: &str,
        model_folder: &str,
        model: &str,
    ) -> Result<Vec<PathBuf>, Error> {
        let registry = match &self.registry {
            Some(registry) if server.config().control_mode == ModelControlMode::Explicit => {
                registry
            }
            _ => {
                return Err(Error::invalid_arg(
                    "repository registration is not allowed if model control mode is not \
                     EXPLICIT",
                ));
            }
        };
        if Path::new(model).file_name() != Some(model.as_ref()) {
            return Err(Error::invalid_arg(format!(
                "Invalid model name '{model}': a model name is the name of one folder"
            )));
        }
        if !Path::new(repository).is_dir() {
            return Err(Error::invalid_arg(format!(
                "failed to register '{repository}', repository not found"
            )));
        }
        let mut registered = self.registered.lock();
        if registered.contains_key(repository) {
            return Err(Error::new(
                ErrorKind::AlreadyExists,
                format!("model repository '{repository}' has already been registered"),
            ));
        }
        let mut folders: Vec<(String, PathBuf)> = model_folders(Path::new(repository))
            .into_iter()
            .filter(|folder| folder != model_folder)
            .map(|folder| (folder.clone(), Path::new(repository).join(folder)))
            .collect();
        folders.push((model.to_string(), Path::new(repository).join(model_folder)));
        let mut links = Vec::new();
        for (name, folder) in folders {
            let link = registry.join(&name);
            let made = match link.symlink_metadata() {
                Ok(_) => Err(Error::new(
                    ErrorKind::AlreadyExists,
                    format!(
                        "failed to register '{name}', there is a conflicting mapping for '{name}'"
                    ),
                )),
                Err(_) => std::os::unix::fs::symlink(&folder, &link).map_err(|e| {
                    Error::internal(format!("failed to register '{repository}': {e}"))
                }),
            };
            if let Err(e) = made {
                remove_links(&links);
                return Err(e);
            }
            links.push(link);
        }
        registered.insert(repository.to_string(), links.clone());
        log::info!("Model repository registered: {repository}");
        Ok(links)
    }

    fn unregister(&self, repository: &str, links: &[PathBuf]) {
        remove_links(links);
        self.registered.lock().remove(repository);
        log::info!("Model repository unregistered: {repository}");
    }
}

fn remove_links(links: &[PathBuf]) {
    for link in links {
        if let Err(e) = std::fs::remove_file(link) {
            log::warn!("cannot remove the link '{}': {e}", link.display());
        }
    }
}

/// `model_name` and `url` of a load request's body (each "" if absent).
fn parse_load(body: &[u8]) -> Result<(String, String), Error> {
    if body.is_empty() {
        return Ok(Default::default());
    }
    let request: Value = serde_json::from_slice(body)
        .map_err(|e| Error::invalid_arg(format!("failed to parse the request JSON buffer: {e}")))?;
    let member = |key: &str| match request.get(key) {
        None => Ok(String::new()),
        Some(Value::String(text)) => Ok(text.clone()),
        Some(_) => Err(Error::invalid_arg(
            "attempt to access JSON non-string as string",
        )),
    };
    Ok((member("model_name")?, member("url")?))
}

/// The model a request is for: the target model header's, else `name`.
fn target_model(headers: &HeaderMap, name: &str) -> String {
    headers
        .get(TARGET_MODEL)
        .and_then(|value| value.to_str().ok())
        .unwrap_or(name)
        .to_string()
}

/// Waits until the index shows `model` unloaded; false after the timeout.
fn wait_until_unloaded(server: &Server, model: &str) -> bool {
    let deadline = Instant::now() + UNLOAD_TIMEOUT;
    loop {
        let unloaded = server.repository_index(false).iter().any(|entry| {
            entry.name == model
                && entry.state == Some(ModelState::Unavailable)
                && entry.reason == "unloaded"
        });
        if unloaded {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(UNLOAD_CHECK_EVERY);
    }
}

/// A failed invocation as SageMaker's endpoint answers it: the same error,
/// with status 507 for a lack of memory and 400 otherwise.
async fn as_sagemaker_error(response: Response) -> Response {
    let body = to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap_or_default();
    let message = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|error| error.get("error")?.as_str().map(str::to_string))
        .unwrap_or_default();
    memory_or_bad_request(message)
}

fn memory_or_bad_request(message: String) -> Response {
    let status = match OUT_OF_MEMORY.iter().any(|text| message.contains(text)) {
        true => StatusCode::INSUFFICIENT_STORAGE,
        false => StatusCode::BAD_REQUEST,
    };
    ApiError::new(status, message).into_response()
}

fn bad_request(error: &Error) -> Response {
    ApiError::new(StatusCode::BAD_REQUEST, error.message.clone()).into_response()
}
