//! KServe v2 over HTTP/REST, with Triton's binary tensor data extension.

mod client;
mod decode;
mod encode;
mod json_data;
mod messages;
mod parameters;

pub use client::HttpClient;
pub use json_data::json_data;
