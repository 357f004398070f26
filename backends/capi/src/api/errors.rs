//! `TRITONSERVER_Error*`.

use std::ffi::c_char;

use crate::{error::ErrorHandle, ffi::c_string};

/// `TRITONSERVER_ErrorNew`: an error the caller owns.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_ErrorNew(code: u32, msg: *const c_char) -> *mut ErrorHandle {
    // SAFETY: `msg` is null or a C string, as the API requires.
    let message = unsafe { crate::ffi::str_of(msg) }.unwrap_or_default();
    Box::into_raw(Box::new(ErrorHandle {
        code,
        message: c_string(message),
    }))
}

/// `TRITONSERVER_ErrorDelete`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_ErrorDelete(error: *mut ErrorHandle) {
    if !error.is_null() {
        // SAFETY: an error made by this server, which the caller owned and
        // gives up.
        drop(unsafe { Box::from_raw(error) });
    }
}

/// `TRITONSERVER_ErrorCode`: the code as given to `TRITONSERVER_ErrorNew`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_ErrorCode(error: *mut ErrorHandle) -> u32 {
    // SAFETY: `error` is null or a live error.
    unsafe { error.as_ref() }.map_or(0, |e| e.code)
}

/// `TRITONSERVER_ErrorCodeString`: Triton's words for the code.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_ErrorCodeString(error: *mut ErrorHandle) -> *const c_char {
    // SAFETY: `error` is null or a live error.
    let code = unsafe { error.as_ref() }.map_or(0, |e| e.code);
    code_string(code).as_ptr()
}

/// `TRITONSERVER_ErrorMessage`: valid while the error lives.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_ErrorMessage(error: *mut ErrorHandle) -> *const c_char {
    // SAFETY: `error` is null or a live error.
    unsafe { error.as_ref() }.map_or(c"".as_ptr(), |e| e.message.as_ptr())
}

/// The text Triton's `TRITONSERVER_ErrorCodeString` gives `code` (Triton
/// 2.51 has no words for CANCELLED).
fn code_string(code: u32) -> &'static std::ffi::CStr {
    match code {
        1 => c"Internal",
        2 => c"Not found",
        3 => c"Invalid argument",
        4 => c"Unavailable",
        5 => c"Unsupported",
        6 => c"Already exists",
        7 => c"<invalid code>",
        _ => c"Unknown",
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::CStr;

    use super::*;

    fn text(p: *const c_char) -> String {
        // SAFETY: the functions under test return C strings.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    #[test]
    fn an_error_keeps_its_code_and_message_until_deleted() {
        let error = TRITONSERVER_ErrorNew(3, c"bad input".as_ptr());
        assert_eq!(TRITONSERVER_ErrorCode(error), 3);
        assert_eq!(
            text(TRITONSERVER_ErrorCodeString(error)),
            "Invalid argument"
        );
        assert_eq!(text(TRITONSERVER_ErrorMessage(error)), "bad input");
        TRITONSERVER_ErrorDelete(error);
    }

    #[test]
    fn codes_read_as_triton_reads_them() {
        let words: Vec<String> = (0..10)
            .map(|code| {
                let error = TRITONSERVER_ErrorNew(code, std::ptr::null());
                let word = text(TRITONSERVER_ErrorCodeString(error));
                assert_eq!(text(TRITONSERVER_ErrorMessage(error)), "");
                TRITONSERVER_ErrorDelete(error);
                word
            })
            .collect();
        assert_eq!(
            words,
            [
                "Unknown",
                "Internal",
                "Not found",
                "Invalid argument",
                "Unavailable",
                "Unsupported",
                "Already exists",
                "<invalid code>",
                "Unknown",
                "Unknown"
            ]
        );
    }
}
