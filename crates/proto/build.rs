//! Compiles the .proto files with protox (pure Rust, no system protoc) and
//! keeps the encoded descriptor set for run-time reflection. With the `grpc`
//! feature, the tonic server code of the services is generated too; with
//! `grpc-client`, their client code.

use std::{env, fs, path::PathBuf};

use protox::prost::Message;

fn main() {
    let protos = [
        "proto/model_config.proto",
        "proto/grpc_service.proto",
        "proto/health.proto",
    ];
    for p in protos {
        println!("cargo:rerun-if-changed={p}");
    }
    let fds = protox::compile(protos, ["proto"]).expect("compile .proto files");
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    fs::write(out.join("descriptors.bin"), fds.encode_to_vec()).expect("write descriptors");
    generate(fds).expect("generate Rust code");
}

/// Message types, with tensor bytes as `bytes::Bytes` so they are shared,
/// not copied, between the socket and the core.
fn config() -> prost_build::Config {
    let mut config = prost_build::Config::new();
    config.bytes([
        ".inference.ModelInferRequest.raw_input_contents",
        ".inference.ModelInferResponse.raw_output_contents",
    ]);
    config
}

#[cfg(not(any(feature = "grpc", feature = "grpc-client")))]
fn generate(fds: protox::prost_reflect::prost_types::FileDescriptorSet) -> std::io::Result<()> {
    config().compile_fds(fds)
}

#[cfg(any(feature = "grpc", feature = "grpc-client"))]
fn generate(fds: protox::prost_reflect::prost_types::FileDescriptorSet) -> std::io::Result<()> {
    tonic_prost_build::configure()
        .build_client(cfg!(feature = "grpc-client"))
        .build_server(cfg!(feature = "grpc"))
        .build_transport(false)
        .compile_fds_with_config(fds, config())
}
