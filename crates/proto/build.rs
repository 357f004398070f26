//! Compiles the .proto files with protox (pure Rust, no system protoc) and
//! keeps the encoded descriptor set for run-time reflection.

use std::{env, fs, path::PathBuf};

use protox::prost::Message;

fn main() {
    let protos = ["proto/model_config.proto"];
    for p in protos {
        println!("cargo:rerun-if-changed={p}");
    }
    let fds = protox::compile(protos, ["proto"]).expect("compile .proto files");
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    fs::write(out.join("descriptors.bin"), fds.encode_to_vec()).expect("write descriptors");
    prost_build::Config::new()
        .compile_fds(fds)
        .expect("generate Rust types");
}
