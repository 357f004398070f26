//! Embeds libtorch's lib folder as the rpath of this crate's library
//! (libtriton_pytorch.so) and unit-test binary, so both find libtorch
//! without LD_LIBRARY_PATH.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if let Ok(lib) = std::env::var("DEP_TCH_LIBTORCH_LIB") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{lib}");
    }
}
