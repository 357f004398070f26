//! The KServe v2 HTTP/REST frontend with Triton's extensions: health,
//! metadata, inference (JSON and binary tensor data), classification,
//! statistics, model repository, logging, trace and generate, and an
//! OpenAI-compatible API under `/v1`. Handlers
//! decode, call the core's [`Server`], and encode; nothing else. The
//! SageMaker and Vertex AI endpoints forward their requests to these
//! handlers.

mod app;
mod binary_json;
mod body;
pub mod codec;
mod compression;
mod error;
mod forward;
mod handlers;
mod openai;
mod options;
mod router;
mod sagemaker;
mod serve;
mod sse;
mod traced;
mod vertex_ai;

pub use error::status_for;
pub use handlers::metadata::EXTENSIONS;
pub use options::HttpOptions;
pub use router::router;
pub use sagemaker::{InferenceType, PingMode, SagemakerOptions, sagemaker_router};
pub use serve::{serve, serve_router};
pub use vertex_ai::{RenderMetrics, VertexAiOptions, vertex_ai_router};
