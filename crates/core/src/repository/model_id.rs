//! A model's identity, Triton's `ModelIdentifier`: its namespace and its
//! name. With `--model-namespacing` each repository is a namespace and models
//! of one name in different repositories live side by side; without it every
//! model is in the one empty namespace and its name alone identifies it.

use std::{fmt, path::Path};

/// A model's namespace and name. Ordered by namespace, then name (the order
/// of Triton's repository index).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ModelId {
    /// The repository the model was found in, as given on the command line,
    /// with namespacing on; empty otherwise (and, as in Triton, for a model
    /// loaded from a load request's files).
    pub namespace: String,
    pub name: String,
}

impl ModelId {
    /// The model `name` in `namespace`.
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            namespace: namespace.into(),
            name: name.into(),
        }
    }
}

/// The namespace of the models found in `repository`: the repository as
/// given on the command line with `namespacing`, the empty one without.
pub(super) fn repository_namespace(repository: &Path, namespacing: bool) -> String {
    match namespacing {
        true => repository.display().to_string(),
        false => String::new(),
    }
}

/// As Triton writes an identifier in its logs and errors: the name alone
/// without a namespace, `<namespace>::<name>` with one.
impl fmt::Display for ModelId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.namespace.is_empty() {
            true => f.write_str(&self.name),
            false => write!(f, "{}::{}", self.namespace, self.name),
        }
    }
}

/// What a model name resolves to among a set of models (see [`resolve`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolved<'a> {
    /// The one model it names.
    One(&'a ModelId),
    /// No model has that name.
    None,
    /// This many models have that name, none of them in the namespace
    /// preferred: the name is ambiguous.
    Many(usize),
}

/// Which of `ids` the name `name` means, as Triton resolves it: the model of
/// that name in `preferred` (an ensemble's own namespace, for its steps),
/// else the only model of that name in any namespace.
pub fn resolve<'a>(
    ids: impl IntoIterator<Item = &'a ModelId>,
    preferred: Option<&str>,
    name: &str,
) -> Resolved<'a> {
    let named: Vec<&ModelId> = ids.into_iter().filter(|id| id.name == name).collect();
    if let Some(id) = named
        .iter()
        .find(|id| Some(id.namespace.as_str()) == preferred)
    {
        return Resolved::One(id);
    }
    match named.as_slice() {
        [] => Resolved::None,
        [id] => Resolved::One(id),
        many => Resolved::Many(many.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displayed_as_triton_logs_it() {
        assert_eq!(ModelId::new("", "m").to_string(), "m");
        assert_eq!(ModelId::new("/repo/a", "m").to_string(), "/repo/a::m");
        let path = Path::new("/repo/a");
        assert_eq!(repository_namespace(path, false), "");
        assert_eq!(repository_namespace(path, true), "/repo/a");
    }

    #[test]
    fn own_namespace_first_then_the_only_copy() {
        let ids = [
            ModelId::new("a", "m"),
            ModelId::new("b", "m"),
            ModelId::new("b", "n"),
        ];
        assert_eq!(resolve(&ids, Some("a"), "m"), Resolved::One(&ids[0]));
        assert_eq!(resolve(&ids, Some("b"), "m"), Resolved::One(&ids[1]));
        assert_eq!(resolve(&ids, Some("c"), "m"), Resolved::Many(2));
        assert_eq!(resolve(&ids, None, "m"), Resolved::Many(2));
        // From another namespace, a name held by one namespace finds it.
        assert_eq!(resolve(&ids, Some("a"), "n"), Resolved::One(&ids[2]));
        assert_eq!(resolve(&ids, None, "n"), Resolved::One(&ids[2]));
        assert_eq!(resolve(&ids, Some("a"), "x"), Resolved::None);
    }
}
