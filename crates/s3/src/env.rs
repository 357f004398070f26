//! The process environment, captured once: where every cloud's settings
//! (`AWS_*`, `GOOGLE_*`, `AZURE_*`, `HOME`, emulator endpoints) are read.

use std::{collections::HashMap, path::PathBuf};

/// A snapshot of environment variables.
#[derive(Debug, Clone, Default)]
pub struct Env {
    vars: HashMap<String, String>,
}

impl Env {
    /// This process's environment.
    pub fn from_process() -> Self {
        std::env::vars().collect()
    }

    /// A variable's value, unless it is unset or empty.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// Every variable whose name starts with `prefix`.
    pub fn with_prefix<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = (&'a str, &'a str)> {
        self.vars
            .iter()
            .filter(move |(k, _)| k.starts_with(prefix))
            .map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The home folder (`HOME`), `~` when unset.
    pub fn home(&self) -> PathBuf {
        PathBuf::from(self.get("HOME").unwrap_or("~"))
    }
}

impl FromIterator<(String, String)> for Env {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(pairs: I) -> Self {
        Self {
            vars: pairs.into_iter().collect(),
        }
    }
}

#[cfg(test)]
impl Env {
    /// An environment of exactly these variables.
    pub fn of(pairs: &[(&str, &str)]) -> Self {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// Sets one variable.
    pub fn set(&mut self, name: &str, value: &str) {
        self.vars.insert(name.into(), value.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_is_unset_and_prefixes_select() {
        let env = Env::of(&[("AWS_A", "1"), ("AWS_B", ""), ("GOOGLE_C", "3")]);
        assert_eq!(env.get("AWS_A"), Some("1"));
        assert_eq!(env.get("AWS_B"), None);
        let mut aws: Vec<_> = env.with_prefix("AWS_").map(|(k, _)| k).collect();
        aws.sort();
        assert_eq!(aws, ["AWS_A", "AWS_B"]);
        assert_eq!(env.home(), PathBuf::from("~"));
    }
}
