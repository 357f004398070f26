//! The decisions of `--model-control-mode=poll`: which models were added,
//! modified or removed since the last poll, from the model folders'
//! fingerprints. The server's poller applies them.

use std::{collections::BTreeMap, path::PathBuf};

use super::{Fingerprint, scan::model_dirs};

/// What changed in the repositories since the last poll, by model name.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PollChanges {
    pub added: Vec<String>,
    pub modified: Vec<String>,
    pub removed: Vec<String>,
}

impl PollChanges {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.modified.is_empty() && self.removed.is_empty()
    }
}

/// Each model folder's fingerprint as the last poll saw it; `None` for a
/// folder that could not be read (it keeps its previous state).
pub type Snapshot = BTreeMap<String, Option<Fingerprint>>;

/// The poller's memory: what the repositories looked like when last applied.
#[derive(Debug, Default)]
pub struct PollState {
    known: BTreeMap<String, Fingerprint>,
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
        for (name, fingerprint) in &found {
            let Some(fingerprint) = fingerprint else {
                continue;
            };
            match self.known.insert(name.clone(), *fingerprint) {
                None => changes.added.push(name.clone()),
                Some(previous) if previous != *fingerprint => changes.modified.push(name.clone()),
                Some(_) => {}
            }
        }
        let removed: Vec<String> = self
            .known
            .keys()
            .filter(|name| !found.contains_key(*name))
            .cloned()
            .collect();
        for name in &removed {
            self.known.remove(name);
        }
        changes.removed = removed;
        changes
    }
}

/// The fingerprint of every model folder of `repositories`; a model in
/// two repositories gets the fingerprint of both folders together.
pub fn snapshot(repositories: &[PathBuf]) -> Snapshot {
    let mut folders: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for repository in repositories {
        for dir in model_dirs(repository).unwrap_or_default() {
            folders.entry(dir.name).or_default().push(dir.path);
        }
    }
    folders
        .into_iter()
        .map(|(name, paths)| {
            let fingerprint = match paths.as_slice() {
                [path] => Fingerprint::of(path),
                _ => Fingerprint::of_all(&paths),
            };
            (name, fingerprint)
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

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn added_modified_removed() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        fs::create_dir_all(&a).unwrap();
        fs::create_dir_all(&b).unwrap();
        let mut state = PollState::new(Snapshot::from([
            ("a".into(), fp(&a, "x")),
            ("b".into(), fp(&b, "y")),
        ]));

        let unchanged = Snapshot::from([
            ("a".into(), Fingerprint::of(&a)),
            ("b".into(), Fingerprint::of(&b)),
        ]);
        assert!(state.update(unchanged).is_empty());

        let changes = state.update(Snapshot::from([
            ("a".into(), fp(&a, "x2")),
            ("c".into(), Fingerprint::of(&b)),
        ]));
        assert_eq!(changes.added, names(&["c"]));
        assert_eq!(changes.modified, names(&["a"]));
        assert_eq!(changes.removed, names(&["b"]));

        // Applied once: the same snapshot again changes nothing.
        let again = Snapshot::from([
            ("a".into(), Fingerprint::of(&a)),
            ("c".into(), Fingerprint::of(&b)),
        ]);
        assert!(state.update(again).is_empty());
    }

    #[test]
    fn unreadable_folder_keeps_its_state() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = PollState::new(Snapshot::from([("a".into(), fp(dir.path(), "x"))]));
        let changes = state.update(Snapshot::from([("a".into(), None)]));
        assert!(changes.is_empty(), "{changes:?}");
        // Readable again and unchanged: still nothing to do.
        assert!(
            state
                .update(Snapshot::from([("a".into(), Fingerprint::of(dir.path()))]))
                .is_empty()
        );
    }

    #[test]
    fn snapshot_reads_every_model_folder() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("m/1")).unwrap();
        fs::create_dir_all(dir.path().join(".hidden")).unwrap();
        fs::write(dir.path().join("README"), "not a model").unwrap();
        let found = snapshot(&[dir.path().to_path_buf()]);
        assert_eq!(found.keys().collect::<Vec<_>>(), ["m"]);
        assert!(found["m"].is_some());
    }
}
