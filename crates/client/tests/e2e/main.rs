//! oxiserve-client against a running server: target/debug/oxiserve, or
//! real Triton 2.51 with `OXI_TARGET=triton` (see support/server.rs). Every
//! test starts its own server with the models it needs.

mod errors;
mod health;
mod infer;
mod repository;
mod shared_memory;
mod stream;
mod support;
