//! KServe v2 over gRPC (`inference.GRPCInferenceService`), with tonic and
//! the messages of oxiserve-proto.

mod client;
mod convert;
mod stream;

pub use client::GrpcClient;
pub use convert::model_infer_request;
pub use stream::InferStream;
pub use tonic::Code;
