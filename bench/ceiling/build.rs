//! Compiles the KServe v2 gRPC service of crates/proto (`grpc_service.proto` and the
//! `model_config.proto` it imports) with protox (pure Rust, no system protoc) into tonic server
//! code, the tensor bytes as `bytes::Bytes` so the echo shares them instead of copying, as
//! oxiserve's gRPC frontend does.

const PROTO_DIR: &str = "../../crates/proto/proto";

fn main() {
    for p in ["grpc_service.proto", "model_config.proto"] {
        println!("cargo:rerun-if-changed={PROTO_DIR}/{p}");
    }
    let fds = protox::compile(["grpc_service.proto"], [PROTO_DIR]).expect("compile .proto files");
    let mut config = prost_build::Config::new();
    config.bytes([
        ".inference.ModelInferRequest.raw_input_contents",
        ".inference.ModelInferResponse.raw_output_contents",
    ]);
    tonic_prost_build::configure()
        .build_client(false)
        .build_transport(false)
        .generate_default_stubs(true)
        .compile_fds_with_config(fds, config)
        .expect("generate Rust code");
}
