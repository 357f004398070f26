//! `TRITONSERVER_Parameter`: a named string, integer, boolean, double or
//! bytes value, as requests and responses carry them and as load requests
//! and metric labels take them.

use std::ffi::{CString, c_void};

use oxiserve_types::ParameterValue;

use crate::ffi::{
    PARAMETER_BOOL, PARAMETER_BYTES, PARAMETER_DOUBLE, PARAMETER_INT, PARAMETER_STRING, c_string,
};

/// A value in the form C reads it: its type code and a pointer to it.
#[derive(Debug, Clone, PartialEq)]
pub enum CValue {
    String(CString),
    Int(i64),
    Bool(bool),
    Double(f64),
    /// A copy of the bytes given (Triton keeps the caller's pointer; a copy
    /// lives at least as long).
    Bytes(Vec<u8>),
}

impl CValue {
    /// Its `TRITONSERVER_ParameterType`.
    pub fn type_code(&self) -> u32 {
        match self {
            Self::String(_) => PARAMETER_STRING,
            Self::Int(_) => PARAMETER_INT,
            Self::Bool(_) => PARAMETER_BOOL,
            Self::Double(_) => PARAMETER_DOUBLE,
            Self::Bytes(_) => PARAMETER_BYTES,
        }
    }

    /// Where C reads it: a `const char*` for strings, the bytes for BYTES,
    /// else a pointer to the number or boolean.
    pub fn value_ptr(&self) -> *const c_void {
        match self {
            Self::String(s) => s.as_ptr().cast(),
            Self::Int(i) => (i as *const i64).cast(),
            Self::Bool(b) => (b as *const bool).cast(),
            Self::Double(d) => (d as *const f64).cast(),
            Self::Bytes(bytes) => bytes.as_ptr().cast(),
        }
    }

    /// A request or response parameter's value (an unsigned integer above
    /// `i64::MAX` keeps its bits, as Triton has no unsigned parameter).
    pub fn of(value: &ParameterValue) -> Self {
        match value {
            ParameterValue::Bool(b) => Self::Bool(*b),
            ParameterValue::Int(i) => Self::Int(*i),
            ParameterValue::Uint(u) => Self::Int(*u as i64),
            ParameterValue::Double(d) => Self::Double(*d),
            ParameterValue::String(s) => Self::String(c_string(s)),
        }
    }
}

/// The object behind a `TRITONSERVER_Parameter*`, and one entry of a
/// request's or response's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct ParameterHandle {
    pub name: CString,
    pub value: CValue,
}

impl ParameterHandle {
    /// A parameter named `name`.
    pub fn new(name: &str, value: CValue) -> Self {
        Self {
            name: c_string(name),
            value,
        }
    }

    /// Its name as text.
    pub fn name(&self) -> String {
        self.name.to_string_lossy().into_owned()
    }
}
