//! `TRITONSERVER_Message*`.

use std::ffi::c_char;

use crate::{
    error::{ErrorHandle, arg, status, write},
    message::MessageHandle,
};

/// `TRITONSERVER_MessageNewFromSerializedJson`: a message the caller owns,
/// holding a copy of `byte_size` bytes at `base`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_MessageNewFromSerializedJson(
    message: *mut *mut MessageHandle,
    base: *const c_char,
    byte_size: usize,
) -> *mut ErrorHandle {
    status(|| {
        let json = if byte_size == 0 {
            &[][..]
        } else if base.is_null() {
            return Err(crate::ffi::null_argument("base"));
        } else {
            // SAFETY: non-null, and the caller gives `byte_size` readable
            // bytes at `base`.
            unsafe { std::slice::from_raw_parts(base.cast::<u8>(), byte_size) }
        };
        let handle = Box::into_raw(Box::new(MessageHandle::new(json)));
        // SAFETY: `message` is null or an out-argument.
        unsafe { write(message, "message", handle) }.inspect_err(|_| {
            // SAFETY: just made, not handed out.
            drop(unsafe { Box::from_raw(handle) });
        })
    })
}

/// `TRITONSERVER_MessageDelete`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_MessageDelete(message: *mut MessageHandle) -> *mut ErrorHandle {
    status(|| {
        if !message.is_null() {
            // SAFETY: a message the caller owned and gives up.
            drop(unsafe { Box::from_raw(message) });
        }
        Ok(())
    })
}

/// `TRITONSERVER_MessageSerializeToJson`: the JSON text, valid while the
/// message lives.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_MessageSerializeToJson(
    message: *mut MessageHandle,
    base: *mut *const c_char,
    byte_size: *mut usize,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: `message` is null or a live message.
        let json = unsafe { arg(message, "message") }?.json();
        // SAFETY: out-arguments, null refused.
        unsafe { write(base, "base", json.as_ptr().cast())? };
        // SAFETY: as above.
        unsafe { write(byte_size, "byte_size", json.len()) }
    })
}

#[cfg(test)]
mod tests {
    use std::ptr;

    use super::*;
    use crate::api::errors::{TRITONSERVER_ErrorDelete, TRITONSERVER_ErrorMessage};

    #[test]
    fn a_message_gives_back_the_json_it_was_made_of() {
        let json = br#"{"a":1}"#;
        let mut message = ptr::null_mut();
        let error = TRITONSERVER_MessageNewFromSerializedJson(
            &mut message,
            json.as_ptr().cast(),
            json.len(),
        );
        assert!(error.is_null());
        let (mut base, mut size) = (ptr::null(), 0);
        assert!(TRITONSERVER_MessageSerializeToJson(message, &mut base, &mut size).is_null());
        // SAFETY: the message holds `size` bytes at `base`.
        let text = unsafe { std::slice::from_raw_parts(base.cast::<u8>(), size) };
        assert_eq!(text, json);
        assert!(TRITONSERVER_MessageDelete(message).is_null());
    }

    #[test]
    fn null_arguments_are_refused_with_triton_s_error() {
        let error =
            TRITONSERVER_MessageSerializeToJson(ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
        assert!(!error.is_null());
        // SAFETY: a C string of the live error.
        let text = unsafe { std::ffi::CStr::from_ptr(TRITONSERVER_ErrorMessage(error)) };
        assert_eq!(text.to_str().unwrap(), "message was nullptr");
        TRITONSERVER_ErrorDelete(error);
    }
}
