//! With the `pytorch` feature, embeds libtorch's lib folder (from the
//! PyTorch backend's build script) as the binary's rpath, so that
//! `target/*/oxiserve` runs without LD_LIBRARY_PATH.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if let Ok(lib) = std::env::var("DEP_OXISERVE_PYTORCH_LIBTORCH_LIB") {
        println!("cargo:rustc-link-arg-bins=-Wl,-rpath,{lib}");
    }
}
