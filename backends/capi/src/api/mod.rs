//! The functions backend libraries call, exported by name from the
//! `oxiserve` binary (crates/server/build.rs): thin shims over the handles
//! of this crate, one file per concept of tritonbackend.h and
//! tritonserver.h. Pointer arguments are checked for null (Triton's
//! `INVALID_ARG` "`<name>` was nullptr"); every other pointer is trusted to
//! be what the API says it is, as in Triton: a backend that passes garbage
//! takes the process down.

mod allocator;
mod backend;
mod buffer_attributes;
mod errors;
mod factory;
#[macro_use]
mod host_policy;
mod inference_request;
mod inference_request_tensors;
mod inference_response;
mod input;
mod instance;
mod logging;
mod memory;
mod messages;
mod metrics;
mod model;
mod output;
mod parameters;
mod request;
mod response;
mod server;
mod state;
mod statistics;
mod strings;
mod trace;
