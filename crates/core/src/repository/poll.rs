//! The decisions of `--model-control-mode=poll`: which models were added,
//! modified or removed since the last poll, from the model folders'
//! fingerprints. The server's poller applies them.

use std::{collections::BTreeMap, path::PathBuf};

use super::{Fingerprint, model_id::ModelId, scan::model_dirs};

/// What changed in the repositories since the last poll, by model.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PollChanges {
    pub added: Vec<ModelId>,
    pub modified: Vec<ModelId>,
    pub removed: Vec<ModelId>,
}

impl PollChanges {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.modified.is_empty() && self.removed.is_empty()
    }
}

/// Each model folder's fingerprint as the last poll saw it; `None` for a
/// folder that could not be read (it keeps its previous state).
pub type Snapshot = BTreeMap<ModelId, Option<Fingerprint>>;

/// The poller's memory: what the repositories looked like when last applied.
#[derive(Debug, Default)]
pub struct PollState {
    known: BTreeMap<ModelId, Fingerprint>,
}

impl PollState {
    /// Starts from the repositories as they were loaded.
    pub fn new(loaded: Snapshot) -> Self {
        let mut state = Self::default();
        state.update(loaded);
        state
    }

    /// The changes from the known state to `found`, which becomes known.
    /// A folder that could not be read this time is neither modified nor
    /// removed (Triton skips it too, and tries again at the next poll).
    pub fn update(&mut self, found: Snapshot) -> PollChanges {
        let mut changes = PollChanges::default();
        for (id, fingerprint) in &found {
            let Some(fingerprint) = fingerprint else {
                continue;
            };
            match self.known.insert(id.clone(), *fingerprint) {
                None => changes.added.push(id.clone()),
                Some(previous) if previous != *fingerprint => changes.modified.push(id.clone()),
                Some(_) => {}
            }
        }
        let removed: Vec<ModelId> = self
            .known
            .keys()
            .filter(|id| !found.contains_key(*id))
            .cloned()
            .collect();
        for id in &removed {
            self.known.remove(id);
        }
        changes.removed = removed;
        changes
    }
}

/// The fingerprint of every model folder of `repositories` (each its own
/// namespace with `namespacing`); a model in two repositories without
/// namespacing gets the fingerprint of both folders together.
pub fn snapshot(repositories: &[PathBuf], namespacing: bool) -> Snapshot {
    let mut folders: BTreeMap<ModelId, Vec<PathBuf>> = BTreeMap::new();
    for repository in repositories {
        for dir in model_dirs(repository, namespacing).unwrap_or_default() {
            folders.entry(dir.id()).or_default().push(dir.path);
        }
    }
    folders
        .into_iter()
        .map(|(id, paths)| {
            let fingerprint = match paths.as_slice() {
                [path] => Fingerprint::of(path),
                _ => Fingerprint::of_all(&paths),
            };
            (id, fingerprint)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn fp(dir: &std::path::Path, contents: &str) -> Option<Fingerprint> {
        fs::write(dir.join("config.pbtxt"), contents).unwrap();
        Fingerprint::of(dir)
    }

    fn ids(v: &[&str]) -> Vec<ModelId> {
        v.iter().map(|name| id(name)).collect()
    }

    fn id(name: &str) -> ModelId {
        ModelId::new("", name)
    }

    #[test]
    fn added_modified_removed() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        fs::create_dir_all(&a).unwrap();
        fs::create_dir_all(&b).unwrap();
        let mut state = PollState::new(Snapshot::from([
            (id("a"), fp(&a, "x")),
            (id("b"), fp(&b, "y")),
        ]));

        let unchanged = Snapshot::from([
            (id("a"), Fingerprint::of(&a)),
            (id("b"), Fingerprint::of(&b)),
        ]);
        assert!(state.update(unchanged).is_empty());

        let changes = state.update(Snapshot::from([
            (id("a"), fp(&a, "x2")),
            (id("c"), Fingerprint::of(&b)),
        ]));
        assert_eq!(changes.added, ids(&["c"]));
        assert_eq!(changes.modified, ids(&["a"]));
        assert_eq!(changes.removed, ids(&["b"]));

        // Applied once: the same snapshot again changes nothing.
        let again = Snapshot::from([
            (id("a"), Fingerprint::of(&a)),
            (id("c"), Fingerprint::of(&b)),
        ]);
        assert!(state.update(again).is_empty());
    }

    #[test]
    fn unreadable_folder_keeps_its_state() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = PollState::new(Snapshot::from([(id("a"), fp(dir.path(), "x"))]));
        let changes = state.update(Snapshot::from([(id("a"), None)]));
        assert!(changes.is_empty(), "{changes:?}");
        // Readable again and unchanged: still nothing to do.
        assert!(
            state
                .update(Snapshot::from([(id("a"), Fingerprint::of(dir.path()))]))
                .is_empty()
        );
    }

    #[test]
    fn snapshot_reads_every_model_folder() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("m/1")).unwrap();
        fs::create_dir_all(dir.path().join(".hidden")).unwrap();
        fs::write(dir.path().join("README"), "not a model").unwrap();
        let found = snapshot(&[dir.path().to_path_buf()], false);
        assert_eq!(found.keys().collect::<Vec<_>>(), [&id("m")]);
        assert!(found[&id("m")].is_some());
    }

    #[test]
    fn namespacing_keeps_each_repository_s_copy_apart() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        for repo in [&a, &b] {
            fs::create_dir_all(repo.path().join("m/1")).unwrap();
        }
        let repos = [a.path().to_path_buf(), b.path().to_path_buf()];
        assert_eq!(
            snapshot(&repos, false).keys().collect::<Vec<_>>(),
            [&id("m")]
        );
        let namespaced = snapshot(&repos, true);
        let mut expected: Vec<ModelId> = repos
            .iter()
            .map(|r| ModelId::new(r.display().to_string(), "m"))
            .collect();
        expected.sort();
        assert_eq!(namespaced.keys().cloned().collect::<Vec<_>>(), expected);

        // One copy goes: only that identity is removed.
        let mut state = PollState::new(namespaced);
        fs::remove_dir_all(a.path().join("m")).unwrap();
        let changes = state.update(snapshot(&repos, true));
        let gone = ModelId::new(a.path().display().to_string(), "m");
        assert_eq!(changes.removed, [gone]);
        assert!(changes.added.is_empty() && changes.modified.is_empty());
    }
}
