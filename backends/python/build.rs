//! Embeds the Python half of the backend (`python/`, tests excluded) so the
//! binary can write it out at run time: nothing to install next to it.

use std::{fmt::Write, fs, path::Path};

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("python");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(&root, &root, &mut files);
    files.sort();
    let mut out =
        String::from("/// The Python package's files: (path relative to its folder, contents).\n");
    out.push_str("pub(crate) const FILES: &[(&str, &str)] = &[\n");
    for relative in &files {
        let absolute = root.join(relative);
        println!("cargo:rerun-if-changed={}", absolute.display());
        writeln!(
            out,
            "    ({relative:?}, include_str!({:?})),",
            absolute.display().to_string()
        )
        .unwrap();
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("python_files.rs");
    fs::write(dest, out).unwrap();
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<String>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "tests" && name != "__pycache__" {
                println!("cargo:rerun-if-changed={}", path.display());
                collect(root, &path, files);
            }
        } else if name.ends_with(".py") {
            let relative = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            files.push(relative);
        }
    }
}
