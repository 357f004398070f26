//! `TRITONSERVER_Message`: serialized JSON (a configuration, a host policy).

use crate::ffi::c_string;

/// The object behind a `TRITONSERVER_Message*`: the JSON text, kept with a
/// NUL after it for backends that read it as a C string.
#[derive(Debug, Clone)]
pub struct MessageHandle {
    bytes: Vec<u8>,
}

impl MessageHandle {
    /// A message of `json`'s bytes, as given (Triton does not parse them).
    pub fn new(json: &[u8]) -> Self {
        let mut bytes = Vec::with_capacity(json.len() + 1);
        bytes.extend_from_slice(json);
        bytes.push(0);
        Self { bytes }
    }

    /// A message of `value`'s JSON text.
    pub fn of(value: &serde_json::Value) -> Self {
        Self::new(c_string(&value.to_string()).as_bytes())
    }

    /// The JSON text.
    pub fn json(&self) -> &[u8] {
        &self.bytes[..self.bytes.len() - 1]
    }
}
