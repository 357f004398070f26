//! `TRITONSERVER_Log*`: a backend's log lines go to the server's log, at
//! the matching level (VERBOSE is debug), with the backend's file and line.

use std::ffi::c_char;

use log::{Level, Metadata, Record};
use oxiserve_types::Error;

use crate::{
    error::{ErrorHandle, status},
    ffi::str_of,
};

/// The target a backend's log lines have.
const TARGET: &str = "triton_backend";

fn level_of(level: u32) -> Option<Level> {
    match level {
        0 => Some(Level::Info),
        1 => Some(Level::Warn),
        2 => Some(Level::Error),
        3 => Some(Level::Debug),
        _ => None,
    }
}

/// `TRITONSERVER_LogIsEnabled`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_LogIsEnabled(level: u32) -> bool {
    level_of(level).is_some_and(|level| {
        level <= log::max_level()
            && log::logger().enabled(&Metadata::builder().level(level).target(TARGET).build())
    })
}

/// `TRITONSERVER_LogMessage`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_LogMessage(
    level: u32,
    filename: *const c_char,
    line: i32,
    msg: *const c_char,
) -> *mut ErrorHandle {
    status(|| {
        let level = level_of(level)
            .ok_or_else(|| Error::invalid_arg(format!("unknown logging level '{level}'")))?;
        if level > log::max_level() {
            return Ok(());
        }
        // SAFETY: each is null or a C string, as the API requires.
        let (file, text) = unsafe { (str_of(filename), str_of(msg).unwrap_or_default()) };
        log::logger().log(
            &Record::builder()
                .level(level)
                .target(TARGET)
                .file(file)
                .line(u32::try_from(line).ok())
                .args(format_args!("{text}"))
                .build(),
        );
        Ok(())
    })
}
