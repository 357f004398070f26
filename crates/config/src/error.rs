//! Configuration errors that point at the file, line:column and field.

use std::{fmt, path::PathBuf};

use crate::text_format::{Position, SourceMap};

/// One problem in a model configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    /// The file the problem is in, when known (`.../model/config.pbtxt`).
    pub file: Option<PathBuf>,
    /// Where in the file, when known.
    pub position: Option<Position>,
    /// Path of the field at fault, such as `input[0].dims`; empty for the whole file.
    pub field: String,
    /// What is wrong, and what would be right where that can be told.
    pub message: String,
}

impl ConfigError {
    /// A problem with `field` (a path such as `instance_group[1].kind`).
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            file: None,
            position: None,
            field: field.into(),
            message: message.into(),
        }
    }

    /// A problem with the configuration as a whole (or its file).
    pub fn whole(message: impl Into<String>) -> Self {
        Self::field("", message)
    }

    /// Attaches the file and, when the field was written in it, the position.
    pub fn locate(mut self, file: &std::path::Path, source_map: Option<&SourceMap>) -> Self {
        self.file = Some(file.to_path_buf());
        if self.position.is_none() && !self.field.is_empty() {
            self.position = source_map.and_then(|m| m.nearest(&self.field));
        }
        self
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}", file.display())?;
            if let Some(p) = self.position {
                write!(f, ":{}:{}", p.line, p.column)?;
            }
            f.write_str(": ")?;
        }
        if !self.field.is_empty() {
            write!(f, "{}: ", self.field)?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Joins several errors into one message, one per line.
pub fn join(errors: &[ConfigError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}
