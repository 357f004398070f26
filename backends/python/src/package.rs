//! The Python half of the backend, embedded in the binary and written once
//! per build to a folder of the temporary directory that every server of
//! that build shares. The folder's name carries a hash of the contents, so a
//! written folder is never modified.

use std::{
    fs,
    path::{Path, PathBuf},
    sync::OnceLock,
};

use oxiserve_types::{Error, Result};

include!(concat!(env!("OUT_DIR"), "/python_files.rs"));

/// The folder holding `triton_python_backend_utils.py` and `oxiserve_stub/`,
/// written on first use.
pub(crate) fn package_dir() -> Result<&'static Path> {
    static DIR: OnceLock<std::result::Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(|| write_package(&std::env::temp_dir()).map_err(|e| e.message))
        .as_deref()
        .map_err(|e| Error::internal(e.clone()))
}

/// The zygote's script in `dir`.
pub(crate) fn zygote_script(dir: &Path) -> PathBuf {
    dir.join("oxiserve_stub").join("zygote.py")
}

fn write_package(base: &Path) -> Result<PathBuf> {
    let dir = base.join(format!("oxiserve-python-{:016x}", contents_hash()));
    if dir.is_dir() {
        return Ok(dir);
    }
    let staging = base.join(format!(
        ".oxiserve-python-{:016x}-{}",
        contents_hash(),
        std::process::id()
    ));
    let fail = |e: std::io::Error| {
        Error::internal(format!(
            "cannot write the Python backend's files to {}: {e}",
            staging.display()
        ))
    };
    let _ = fs::remove_dir_all(&staging);
    for (relative, contents) in FILES {
        let path = staging.join(relative);
        fs::create_dir_all(path.parent().unwrap_or(&staging)).map_err(fail)?;
        fs::write(&path, contents).map_err(fail)?;
    }
    // Another server of this build may have won the race: its copy is identical.
    if fs::rename(&staging, &dir).is_err() {
        let _ = fs::remove_dir_all(&staging);
        if !dir.is_dir() {
            return Err(Error::internal(format!("cannot create {}", dir.display())));
        }
    }
    Ok(dir)
}

/// FNV-1a over every file's path and contents.
fn contents_hash() -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for (relative, contents) in FILES {
        for byte in relative
            .bytes()
            .chain([0])
            .chain(contents.iter().copied())
            .chain([0])
        {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_every_file_once() {
        let base = tempfile::tempdir().unwrap();
        let dir = write_package(base.path()).unwrap();
        for (relative, contents) in FILES {
            assert_eq!(fs::read(dir.join(relative)).unwrap(), *contents);
        }
        assert!(zygote_script(&dir).is_file());
        // A second server of the same build reuses the folder.
        assert_eq!(write_package(base.path()).unwrap(), dir);
        assert_eq!(fs::read_dir(base.path()).unwrap().count(), 1);
    }
}
