//! The KServe v2 HTTP/REST frontend with Triton's extensions.

pub mod codec;
