//! Inference over gRPC for the load (`ModelInfer`, `ModelStreamInfer`),
//! spoken directly over hyper's HTTP/2 client with requests framed once.
//! The other calls go through oxiserve-client.

pub mod conn;
pub mod encode;
pub mod frame;
pub mod infer;
pub mod stream;
