//! A local copy of everything under one prefix of an object store. Each
//! update lists the prefix, downloads the objects whose ETag, size or
//! modification time changed into a staging folder, then renames them into
//! place (a model never sees half a file) and deletes the files whose
//! objects are gone.

use std::{
    collections::{HashMap, HashSet},
    io::Write,
    path::{Path, PathBuf},
    sync::Arc,
};

use futures_util::{StreamExt, TryStreamExt, stream};
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt, path::Path as Key};

/// How many objects download at the same time.
const PARALLEL_DOWNLOADS: usize = 4;

/// Why an update failed.
#[derive(Debug)]
pub enum MirrorError {
    /// A request failed.
    Store(object_store::Error),
    /// No object lies in a folder under the prefix.
    NoModelFolders,
    /// The local copy could not be written.
    Local(String),
}

/// A prefix's objects and the folder that holds their copies.
#[derive(Debug)]
pub struct Mirror {
    store: Arc<dyn ObjectStore>,
    prefix: Key,
    /// The copy: one file per object, at its key below the prefix.
    root: PathBuf,
    /// Downloads in progress; on the same file system as `root`.
    staging: PathBuf,
    /// The metadata of each object copied, by its path below the prefix.
    copied: HashMap<String, ObjectMeta>,
}

impl Mirror {
    /// A mirror of `prefix` into `root` (created), staging in `staging`.
    pub fn new(
        store: Arc<dyn ObjectStore>,
        prefix: &str,
        root: PathBuf,
        staging: PathBuf,
    ) -> Result<Self, String> {
        for dir in [&root, &staging] {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        Ok(Self {
            store,
            prefix: Key::from(prefix),
            root,
            staging,
            copied: HashMap::new(),
        })
    }

    /// The folder that holds the copy.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Brings the copy up to date with the store: how many files it
    /// downloaded and removed. A failed download changes nothing.
    pub async fn update(&mut self) -> Result<(usize, usize), MirrorError> {
        let objects = self.list().await?;
        if !objects.keys().any(|name| name.contains('/')) {
            return Err(MirrorError::NoModelFolders);
        }
        let changed: Vec<(&String, &ObjectMeta)> = objects
            .iter()
            .filter(|(name, meta)| {
                !is_version_marker(name, meta)
                    && (self.copied.get(*name) != Some(*meta) || !self.root.join(name).is_file())
            })
            .collect();
        let staged = self.download(&changed).await?;
        for name in objects
            .iter()
            .filter(|(n, m)| is_version_marker(n, m))
            .map(|(n, _)| n)
        {
            let folder = self.root.join(name);
            std::fs::create_dir_all(&folder).map_err(|e| local(&folder, e))?;
        }
        for ((name, _), staged) in changed.iter().zip(&staged) {
            let target = self.root.join(name);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(|e| local(parent, e))?;
            }
            std::fs::rename(staged, &target).map_err(|e| local(&target, e))?;
        }
        let gone: Vec<String> = self
            .copied
            .keys()
            .filter(|name| !objects.contains_key(*name))
            .cloned()
            .collect();
        for name in &gone {
            self.remove(name)?;
        }
        let counts = (changed.len(), gone.len());
        self.copied = objects;
        Ok(counts)
    }

    /// The objects under the prefix by their path below it, without the
    /// markers of folders that hold objects.
    async fn list(&self) -> Result<HashMap<String, ObjectMeta>, MirrorError> {
        let listed: Vec<ObjectMeta> = self
            .store
            .list(Some(&self.prefix))
            .try_collect()
            .await
            .map_err(MirrorError::Store)?;
        let mut objects: HashMap<String, ObjectMeta> = listed
            .into_iter()
            .filter_map(|meta| Some((self.relative(&meta.location)?, meta)))
            .collect();
        // Folder markers ("a/", as consoles create them) list as "a".
        let folders: HashSet<String> = objects.keys().flat_map(|n| folders_of(n)).collect();
        objects.retain(|name, _| !folders.contains(name));
        Ok(objects)
    }

    /// The object's path below the prefix, if it is a file there with a
    /// name safe to write (no `.` or `..` part).
    fn relative(&self, key: &Key) -> Option<String> {
        let parts: Vec<String> = key
            .prefix_match(&self.prefix)?
            .map(|p| p.as_ref().to_string())
            .collect();
        let safe = !parts.is_empty() && parts.iter().all(|p| p != "." && p != "..");
        safe.then(|| parts.join("/"))
    }

    /// Downloads the objects into staging files, in order; on error none
    /// is left.
    async fn download(
        &self,
        objects: &[(&String, &ObjectMeta)],
    ) -> Result<Vec<PathBuf>, MirrorError> {
        let staged: Vec<PathBuf> = (0..objects.len())
            .map(|i| self.staging.join(i.to_string()))
            .collect();
        let results: Vec<Result<(), MirrorError>> = stream::iter(objects.iter().zip(&staged))
            .map(|((_, meta), file)| self.fetch(&meta.location, file))
            .buffered(PARALLEL_DOWNLOADS)
            .collect()
            .await;
        if let Some(error) = results.into_iter().find_map(Result::err) {
            for file in &staged {
                let _ = std::fs::remove_file(file);
            }
            return Err(error);
        }
        Ok(staged)
    }

    /// Streams one object into `file`.
    async fn fetch(&self, key: &Key, file: &Path) -> Result<(), MirrorError> {
        let mut chunks = self
            .store
            .get(key)
            .await
            .map_err(MirrorError::Store)?
            .into_stream();
        let mut out = std::fs::File::create(file).map_err(|e| local(file, e))?;
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.map_err(MirrorError::Store)?;
            out.write_all(&chunk).map_err(|e| local(file, e))?;
        }
        Ok(())
    }

    /// Deletes the copy of `name` (a folder only if empty) and the folders
    /// it leaves empty.
    fn remove(&self, name: &str) -> Result<(), MirrorError> {
        let path = self.root.join(name);
        let mut dir = match path.is_dir() {
            true => Some(path.as_path()),
            false => {
                match std::fs::remove_file(&path) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(local(&path, e));
                    }
                    _ => {}
                }
                path.parent()
            }
        };
        while let Some(d) = dir.filter(|d| *d != self.root) {
            if std::fs::remove_dir(d).is_err() {
                break;
            }
            dir = d.parent();
        }
        Ok(())
    }
}

/// A zero-byte object at `model/N` is the marker of an empty version folder
/// ("model/1/", as S3 consoles create it, lists without its '/'): Triton's
/// layout has no file there.
fn is_version_marker(name: &str, meta: &ObjectMeta) -> bool {
    meta.size == 0
        && name
            .split_once('/')
            .is_some_and(|(_, v)| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
}

/// The folders a file's path names: "a/b/c" lies in "a" and "a/b".
fn folders_of(name: &str) -> impl Iterator<Item = String> + '_ {
    name.match_indices('/').map(|(i, _)| name[..i].to_string())
}

fn local(path: &Path, error: std::io::Error) -> MirrorError {
    MirrorError::Local(format!("{}: {error}", path.display()))
}

#[cfg(test)]
mod tests {
    use object_store::{PutPayload, memory::InMemory};

    use super::*;

    struct Fixture {
        store: Arc<InMemory>,
        mirror: Mirror,
        _dir: tempfile::TempDir,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(InMemory::new());
        let mirror = Mirror::new(
            store.clone(),
            "repo",
            dir.path().join("copy"),
            dir.path().join("staging"),
        )
        .unwrap();
        Fixture {
            store,
            mirror,
            _dir: dir,
        }
    }

    async fn put(store: &InMemory, key: &str, text: &str) {
        store
            .put(&Key::from(key), PutPayload::from(text.to_string()))
            .await
            .unwrap();
    }

    fn read(mirror: &Mirror, name: &str) -> Option<String> {
        std::fs::read_to_string(mirror.root().join(name)).ok()
    }

    #[tokio::test]
    async fn copies_changes_and_deletions() {
        let Fixture {
            store,
            mut mirror,
            _dir,
        } = fixture();
        put(&store, "repo/a/config.pbtxt", "one").await;
        put(&store, "repo/a/1/model.onnx", "weights").await;
        put(&store, "repo/b/config.pbtxt", "b").await;
        put(&store, "elsewhere/c/config.pbtxt", "not mine").await;
        mirror.update().await.unwrap();
        assert_eq!(read(&mirror, "a/config.pbtxt").as_deref(), Some("one"));
        assert_eq!(read(&mirror, "a/1/model.onnx").as_deref(), Some("weights"));
        assert_eq!(read(&mirror, "c/config.pbtxt"), None);
        put(&store, "repo/a", "").await;
        assert_eq!(
            mirror.update().await.unwrap(),
            (0, 0),
            "a folder marker is no file"
        );

        put(&store, "repo/a/config.pbtxt", "two").await;
        store
            .delete(&Key::from("repo/b/config.pbtxt"))
            .await
            .unwrap();
        assert_eq!(mirror.update().await.unwrap(), (1, 1));
        assert_eq!(read(&mirror, "a/config.pbtxt").as_deref(), Some("two"));
        assert!(!mirror.root().join("b").exists(), "emptied folder stays");
        assert_eq!(
            std::fs::read_dir(&mirror.staging).unwrap().count(),
            0,
            "staging files left"
        );
    }

    #[tokio::test]
    async fn empty_version_folders_from_their_markers() {
        let Fixture {
            store,
            mut mirror,
            _dir,
        } = fixture();
        put(&store, "repo/a/config.pbtxt", "one").await;
        put(&store, "repo/a/1", "").await;
        mirror.update().await.unwrap();
        assert!(mirror.root().join("a/1").is_dir());
        store.delete(&Key::from("repo/a/1")).await.unwrap();
        mirror.update().await.unwrap();
        assert!(!mirror.root().join("a/1").exists());
    }

    #[tokio::test]
    async fn a_deleted_copy_is_fetched_again() {
        let Fixture {
            store,
            mut mirror,
            _dir,
        } = fixture();
        put(&store, "repo/a/config.pbtxt", "one").await;
        mirror.update().await.unwrap();
        std::fs::remove_file(mirror.root().join("a/config.pbtxt")).unwrap();
        mirror.update().await.unwrap();
        assert_eq!(read(&mirror, "a/config.pbtxt").as_deref(), Some("one"));
    }

    #[tokio::test]
    async fn no_model_folder_is_an_error_that_keeps_the_copy() {
        let Fixture {
            store,
            mut mirror,
            _dir,
        } = fixture();
        assert!(matches!(
            mirror.update().await,
            Err(MirrorError::NoModelFolders)
        ));
        put(&store, "repo/a/config.pbtxt", "one").await;
        mirror.update().await.unwrap();
        store
            .delete(&Key::from("repo/a/config.pbtxt"))
            .await
            .unwrap();
        put(&store, "repo/README", "a file, no folder").await;
        assert!(matches!(
            mirror.update().await,
            Err(MirrorError::NoModelFolders)
        ));
        assert_eq!(read(&mirror, "a/config.pbtxt").as_deref(), Some("one"));
    }
}
