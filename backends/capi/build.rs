//! Builds the two empty shared objects whose SONAMEs stand in for Triton's
//! `libtritonserver.so` (see src/soname.rs), and lets this crate's test
//! binaries export the `TRITONBACKEND_*`/`TRITONSERVER_*` functions to the
//! backend libraries they load.

use std::{env, path::PathBuf, process::Command};

/// The SONAMEs backend libraries name in `DT_NEEDED`: Triton's build, and
/// the renamed copy in the `nvidia-pytriton` wheel.
const SONAMES: [&str; 2] = ["libtritonserver.so", "libtritonserver-717102f0.so"];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CC");
    for pattern in ["TRITONBACKEND_*", "TRITONSERVER_*"] {
        println!("cargo:rustc-link-arg-tests=-Wl,--export-dynamic-symbol={pattern}");
    }
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let empty = out.join("empty.c");
    std::fs::write(&empty, "").expect("write an empty C source");
    let compiler = env::var("CC").unwrap_or_else(|_| "cc".into());
    for soname in SONAMES {
        let status = Command::new(&compiler)
            .args([
                "-shared",
                "-nostdlib",
                &format!("-Wl,-soname,{soname}"),
                "-o",
            ])
            .arg(out.join(soname))
            .arg(&empty)
            .status()
            .unwrap_or_else(|e| panic!("cannot run the C compiler '{compiler}': {e}"));
        assert!(status.success(), "'{compiler}' failed to build {soname}");
    }
}
