//! Embeds the Python half of the backend (`python/`, tests excluded) so the
//! binary can write it out at run time: nothing to install next to it.
//!
//! Also compiles the stub's C hot path (`oxiserve_stub/_frames.c`) against
//! the stable ABI of Python 3.11 and embeds it as `_frames.abi3.so`. Where no
//! C compiler or Python headers are found, the build goes on without it and
//! the stub runs the same logic in Python.

use std::{
    fmt::Write,
    fs,
    path::{Path, PathBuf},
    process::Command,
};

const EXTENSION: &str = "oxiserve_stub/_frames.abi3.so";

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("python");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    collect(&root, &root, &mut files);
    let source = root.join("oxiserve_stub/_frames.c");
    println!("cargo:rerun-if-changed={}", source.display());
    println!("cargo:rerun-if-env-changed=OXISERVE_PYTHON_INCLUDE");
    match compile_extension(&source, &out_dir) {
        Ok(built) => files.push((EXTENSION.to_string(), built)),
        Err(why) => println!(
            "cargo:warning=the Python stub's C hot path was not built ({why}); the stub \
             will run its Python equivalent"
        ),
    }
    files.sort();
    let mut out =
        String::from("/// The Python package's files: (path relative to its folder, contents).\n");
    out.push_str("pub(crate) const FILES: &[(&str, &[u8])] = &[\n");
    for (relative, absolute) in &files {
        println!("cargo:rerun-if-changed={}", absolute.display());
        writeln!(
            out,
            "    ({relative:?}, include_bytes!({:?})),",
            absolute.display().to_string()
        )
        .unwrap();
    }
    out.push_str("];\n");
    fs::write(out_dir.join("python_files.rs"), out).unwrap();
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "tests" && name != "__pycache__" && !name.starts_with('.') {
                println!("cargo:rerun-if-changed={}", path.display());
                collect(root, &path, files);
            }
        } else if name.ends_with(".py") {
            let relative = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            files.push((relative, path));
        }
    }
}

/// Builds `_frames.abi3.so` in `out_dir`; the reason when it cannot.
fn compile_extension(source: &Path, out_dir: &Path) -> Result<PathBuf, String> {
    let include = python_include()?;
    let built = out_dir.join("_frames.abi3.so");
    let compiler = cc::Build::new()
        .opt_level(2)
        .try_get_compiler()
        .map_err(|e| format!("no C compiler: {e}"))?;
    let output = compiler
        .to_command()
        .args(["-shared", "-fPIC", "-fvisibility=hidden"])
        .arg(format!("-I{}", include.display()))
        .arg(source)
        .arg("-o")
        .arg(&built)
        .output()
        .map_err(|e| format!("cannot run the C compiler: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "the C compiler failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(built)
}

/// The folder with `Python.h`: `OXISERVE_PYTHON_INCLUDE`, else that of the
/// `python3` on the PATH.
fn python_include() -> Result<PathBuf, String> {
    let dir = match std::env::var_os("OXISERVE_PYTHON_INCLUDE") {
        Some(dir) => PathBuf::from(dir),
        None => {
            let output = Command::new("python3")
                .args([
                    "-c",
                    "import sysconfig; print(sysconfig.get_paths()['include'])",
                ])
                .output()
                .map_err(|e| format!("cannot run python3: {e}"))?;
            PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
        }
    };
    if dir.join("Python.h").is_file() {
        Ok(dir)
    } else {
        Err(format!("no Python.h in '{}'", dir.display()))
    }
}
