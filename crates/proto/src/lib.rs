//! Triton's protobuf messages as Rust types, plus a descriptor pool for
//! reflection (text format parsing, JSON rendering). With the `grpc`
//! feature, the tonic server code of `inference.GRPCInferenceService` and
//! `grpc.health.v1.Health` too; with `grpc-client`, their client code.

use std::sync::LazyLock;

use prost_reflect::{DescriptorPool, MessageDescriptor};

/// Generated types of Triton's `inference` protobuf package: the model
/// configuration and the KServe v2 gRPC messages (and, with the `grpc`
/// feature, `grpc_inference_service_server`; with `grpc-client`,
/// `grpc_inference_service_client`).
#[allow(clippy::all, missing_docs)]
pub mod inference {
    include!(concat!(env!("OUT_DIR"), "/inference.rs"));
}

/// Generated types of the standard gRPC health checking protocol.
#[allow(clippy::all, missing_docs)]
pub mod health {
    include!(concat!(env!("OUT_DIR"), "/grpc.health.v1.rs"));
}

pub use inference::ModelConfig;

static DESCRIPTORS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/descriptors.bin"));

static POOL: LazyLock<DescriptorPool> = LazyLock::new(|| {
    DescriptorPool::decode(DESCRIPTORS).expect("descriptor set built by build.rs")
});

/// The descriptor pool holding every message of the compiled .proto files.
pub fn descriptor_pool() -> &'static DescriptorPool {
    &POOL
}

/// Descriptor of `inference.ModelConfig`, the root of `config.pbtxt`.
pub fn model_config_descriptor() -> MessageDescriptor {
    POOL.get_message_by_name("inference.ModelConfig")
        .expect("inference.ModelConfig is compiled in")
}
