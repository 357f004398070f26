//! KServe v2 over HTTP/1.1: connections, request bodies, JSON endpoints.

pub mod api;
pub mod body;
pub mod conn;
pub mod encode;
pub mod infer;
