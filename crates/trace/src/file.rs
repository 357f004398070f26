//! The trace file of Triton mode: one JSON array that grows as traces are
//! written (`<file>`), or one array per batch of traces (`<file>.<n>`).

use std::{
    fs::File,
    io::Write,
    sync::atomic::{AtomicU32, Ordering},
};

use parking_lot::Mutex;

/// One trace file path and what was written to it.
#[derive(Debug)]
pub(crate) struct TraceFile {
    path: String,
    /// The `<n>` of the next indexed file.
    next_index: AtomicU32,
    /// The main file, once something was written to it.
    main: Mutex<MainFile>,
}

#[derive(Debug, Default)]
struct MainFile {
    file: Option<File>,
    closed: bool,
}

impl TraceFile {
    pub fn new(path: String) -> Self {
        Self {
            path,
            next_index: AtomicU32::new(0),
            main: Mutex::default(),
        }
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    /// Writes `traces` (comma-separated JSON objects) to the next indexed
    /// file, a whole JSON array, or appends them to the main file's array.
    pub fn save(&self, traces: &str, indexed: bool) {
        let written = if indexed {
            let index = self.next_index.fetch_add(1, Ordering::Relaxed);
            let path = format!("{}.{index}", self.path);
            File::create(&path).and_then(|mut f| write!(f, "[{traces}]"))
        } else {
            self.append(traces)
        };
        if let Err(e) = written {
            log::error!("failed creating trace file: {e}");
        }
    }

    fn append(&self, traces: &str) -> std::io::Result<()> {
        let mut main = self.main.lock();
        if main.closed {
            log::warn!("a trace finished after the trace file was closed; it is dropped");
            return Ok(());
        }
        match &mut main.file {
            Some(file) => write!(file, ",{traces}"),
            None => {
                let mut file = File::create(&self.path)?;
                write!(file, "[{traces}")?;
                main.file = Some(file);
                Ok(())
            }
        }
    }

    /// Ends the main file's array (at exit).
    pub fn close(&self) {
        let mut main = self.main.lock();
        let closed = std::mem::replace(&mut main.closed, true);
        if let Some(file) = &mut main.file
            && !closed
            && let Err(e) = write!(file, "]")
        {
            log::error!("failed writing trace file: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn main_file_is_one_array_and_indexed_files_one_each() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trace.json").display().to_string();
        let file = TraceFile::new(path.clone());
        file.save(r#"{"id":1}"#, false);
        file.save(r#"{"id":2},{"id":3}"#, false);
        file.save(r#"{"id":4}"#, true);
        file.save(r#"{"id":5}"#, true);
        file.close();
        let read = |p: &str| std::fs::read_to_string(p).unwrap();
        assert_eq!(read(&path), r#"[{"id":1},{"id":2},{"id":3}]"#);
        assert_eq!(read(&format!("{path}.0")), r#"[{"id":4}]"#);
        assert_eq!(read(&format!("{path}.1")), r#"[{"id":5}]"#);
    }
}
