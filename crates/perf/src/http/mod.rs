//! Inference over HTTP/1.1 for the load: connections driven by their task,
//! request bodies encoded once. The other endpoints go through
//! oxiserve-client.

pub mod body;
pub mod conn;
pub mod encode;
pub mod infer;
