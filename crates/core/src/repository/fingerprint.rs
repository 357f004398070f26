//! What a model folder looks like on disk, summed up in one number: every
//! file's and folder's relative path, size and modification time. A model
//! whose fingerprint is unchanged needs no reload (Triton compares
//! modification times the same way).

use std::{
    fs,
    hash::{DefaultHasher, Hash, Hasher},
    path::Path,
    time::UNIX_EPOCH,
};

/// The fingerprint of a model folder's contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fingerprint(u64);

impl Fingerprint {
    /// Reads `folder` recursively; `None` if it cannot be read at all.
    pub fn of(folder: &Path) -> Option<Self> {
        let mut entries = Vec::new();
        collect(folder, Path::new(""), &mut entries).ok()?;
        Some(Self::hash(entries))
    }

    /// The fingerprints of a model folder's `config.pbtxt` and of everything
    /// else in it: a change of the first alone may update a loaded model in
    /// place (see [`ModelFiles`]).
    pub fn split(folder: &Path) -> Option<ModelFiles> {
        let mut entries = Vec::new();
        collect(folder, Path::new(""), &mut entries).ok()?;
        let (config, others) = entries.into_iter().partition(|e| e.0 == CONFIG_FILE);
        Some(ModelFiles {
            config: Self::hash(config),
            others: Self::hash(others),
        })
    }

    fn hash(mut entries: Vec<Entry>) -> Self {
        entries.sort();
        let mut hasher = DefaultHasher::new();
        entries.hash(&mut hasher);
        Self(hasher.finish())
    }

    /// The fingerprint of several folders together (a model found in two
    /// repositories); `None` if one cannot be read.
    pub fn of_all(folders: &[std::path::PathBuf]) -> Option<Self> {
        let mut hasher = DefaultHasher::new();
        for folder in folders {
            (folder, Self::of(folder)?).hash(&mut hasher);
        }
        Some(Self(hasher.finish()))
    }
}

/// A model folder as loaded: its `config.pbtxt`, and every other file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelFiles {
    pub config: Fingerprint,
    pub others: Fingerprint,
}

/// The configuration file a model folder holds.
const CONFIG_FILE: &str = "config.pbtxt";

/// (relative path, is a folder, size, modification time in ns) of every entry.
type Entry = (String, bool, u64, u128);

fn collect(folder: &Path, relative: &Path, out: &mut Vec<Entry>) -> std::io::Result<()> {
    for entry in fs::read_dir(folder)? {
        let entry = entry?;
        let path = entry.path();
        // Follows symbolic links, as loading does.
        let Ok(meta) = fs::metadata(&path) else {
            continue;
        };
        let name = relative.join(entry.file_name());
        let modified = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        out.push((
            name.to_string_lossy().into_owned(),
            meta.is_dir(),
            if meta.is_dir() { 0 } else { meta.len() },
            modified,
        ));
        if meta.is_dir() {
            collect(&path, &name, out)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_with_contents_names_and_new_files() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("1")).unwrap();
        fs::write(dir.path().join("config.pbtxt"), "name: \"m\"").unwrap();
        let first = Fingerprint::of(dir.path()).unwrap();
        assert_eq!(Fingerprint::of(dir.path()), Some(first), "stable");

        fs::write(dir.path().join("1/model.py"), "x").unwrap();
        let added = Fingerprint::of(dir.path()).unwrap();
        assert_ne!(added, first, "a new file changes it");

        fs::write(dir.path().join("1/model.py"), "xy").unwrap();
        let grown = Fingerprint::of(dir.path()).unwrap();
        assert_ne!(grown, added, "a new size changes it");

        fs::rename(dir.path().join("1"), dir.path().join("2")).unwrap();
        assert_ne!(
            Fingerprint::of(dir.path()).unwrap(),
            grown,
            "a rename changes it"
        );
    }

    #[test]
    fn the_configuration_apart_from_the_other_files() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("1")).unwrap();
        fs::write(dir.path().join("1/model.py"), "x").unwrap();
        fs::write(dir.path().join("config.pbtxt"), "name: \"m\"").unwrap();
        let first = Fingerprint::split(dir.path()).unwrap();
        fs::write(dir.path().join("config.pbtxt"), "name: \"mm\"").unwrap();
        let edited = Fingerprint::split(dir.path()).unwrap();
        assert_ne!(edited.config, first.config);
        assert_eq!(
            edited.others, first.others,
            "only the configuration changed"
        );
        fs::write(dir.path().join("1/model.py"), "xy").unwrap();
        assert_ne!(Fingerprint::split(dir.path()).unwrap().others, first.others);
    }

    #[test]
    fn unreadable_folder_has_none() {
        assert_eq!(Fingerprint::of(Path::new("/nonexistent/model")), None);
    }
}
