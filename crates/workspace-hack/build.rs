//! Empty: a build script makes cargo resolve this crate's build-dependencies
//! (see Cargo.toml).

fn main() {}
