//! A one-line progress indicator on stderr while a load level is measured
//! (only when stderr is a terminal).

use std::io::{IsTerminal, Write};

/// Rewrites one status line in place.
#[derive(Debug)]
pub struct Progress {
    tty: bool,
}

impl Progress {
    /// Shows progress if stderr is a terminal.
    pub fn new() -> Self {
        Progress {
            tty: std::io::stderr().is_terminal(),
        }
    }

    /// Shows `text` in place of the previous status.
    pub fn show(&self, text: &str) {
        if self.tty {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K{text}");
            let _ = err.flush();
        }
    }

    /// Removes the status line.
    pub fn clear(&self) {
        if self.tty {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
        }
    }
}
