//! Embeds libtorch's lib folder as the rpath of this crate's unit-test binary
//! and hands it on (as `DEP_OXISERVE_PYTORCH_LIBTORCH_LIB`) to the oxiserve
//! binary's build script, so both run without LD_LIBRARY_PATH.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if let Ok(lib) = std::env::var("DEP_TCH_LIBTORCH_LIB") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{lib}");
        println!("cargo:libtorch_lib={lib}");
    }
}
