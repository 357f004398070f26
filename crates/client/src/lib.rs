//! An async client of KServe v2 inference servers (oxiserve, NVIDIA
//! Triton) over HTTP/REST and gRPC, in Triton's vocabulary: [`InferInput`],
//! [`InferRequestedOutput`], [`InferResult`].
//!
//! - [`HttpClient`] (reqwest) and [`GrpcClient`] (tonic) make the same calls:
//!   health, metadata, configuration, statistics, the repository (index,
//!   load with a configuration or files, unload), system shared memory, and
//!   inference; [`Client`] picks one at run time.
//! - Answers are the gRPC messages of `inference.GRPCInferenceService`
//!   ([`proto`]) for both protocols: `HttpClient` reads the JSON into them.
//! - Tensors go in and come out as `ndarray` arrays of any [`Element`], or
//!   as strings for BYTES; over HTTP as binary tensor data.
//! - [`GrpcClient::stream_infer`] streams requests and responses
//!   (decoupled models); [`shm`] puts tensors in system shared memory.
//! - Errors carry the server's message and its HTTP status or gRPC code.
//!
//! ```no_run
//! use oxiserve_client::{GrpcClient, HttpClient, InferInput, InferRequest, InferRequestedOutput};
//!
//! # async fn f() -> oxiserve_client::Result<()> {
//! let request = InferRequest::new("identity")
//!     .input(InferInput::from_array("INPUT0", &ndarray::arr2(&[[1.0_f32, 2.0]])))
//!     .output(InferRequestedOutput::new("OUTPUT0"));
//!
//! let http = HttpClient::new("localhost:8000")?;
//! let result = http.infer(&request).await?;
//! println!("{}", result.as_array::<f32>("OUTPUT0")?);
//!
//! let grpc = GrpcClient::connect("localhost:8001").await?;
//! match grpc.infer(&request.clone().version("9")).await {
//!     Ok(result) => println!("{:?}", result.outputs()),
//!     Err(e) => println!("{:?}: {}", e.grpc_code(), e.message()),
//! }
//! # Ok(()) }
//! ```

mod address;
mod client;
mod element;
mod error;
pub mod grpc;
pub mod http;
mod input;
mod output;
mod request;
mod result;
pub mod shm;

pub use client::{Client, Protocol};
pub use element::Element;
pub use error::{Error, Result};
pub use grpc::{GrpcClient, InferStream};
pub use http::HttpClient;
pub use input::InferInput;
pub use output::InferRequestedOutput;
pub use oxiserve_proto::inference as proto;
pub use oxiserve_types::{DataType, ParameterValue, Parameters, Tensor};
pub use request::InferRequest;
pub use result::InferResult;
