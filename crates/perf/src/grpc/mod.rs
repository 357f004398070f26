//! KServe v2 over gRPC (`inference.GRPCInferenceService`), spoken directly
//! over hyper's HTTP/2 client with the prost messages of oxiserve-proto.

pub mod api;
pub mod conn;
pub mod encode;
pub mod frame;
pub mod infer;
pub mod stream;
