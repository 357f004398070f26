//! Exports Triton's C API (`TRITONBACKEND_*`, `TRITONSERVER_*`, defined in
//! oxiserve-backend-capi) in the binary's dynamic symbol table: the
//! backend libraries it opens resolve their calls to them.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for pattern in ["TRITONBACKEND_*", "TRITONSERVER_*"] {
        println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic-symbol={pattern}");
    }
}
