//! Request, response and tensor parameters (`"parameters": {...}` in KServe v2).

use std::collections::BTreeMap;

/// One parameter value; KServe v2 allows booleans, integers, doubles and strings.
#[derive(Debug, Clone, PartialEq)]
pub enum ParameterValue {
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    String(String),
}

/// Parameters by name, in name order.
pub type Parameters = BTreeMap<String, ParameterValue>;

impl ParameterValue {
    /// The value as a boolean, if it is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            ParameterValue::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The value as a signed integer, if it is an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            ParameterValue::Int(i) => Some(*i),
            ParameterValue::Uint(u) => i64::try_from(*u).ok(),
            _ => None,
        }
    }

    /// The value as an unsigned integer, if it is a non-negative integer.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            ParameterValue::Int(i) => u64::try_from(*i).ok(),
            ParameterValue::Uint(u) => Some(*u),
            _ => None,
        }
    }

    /// The value as a string, if it is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            ParameterValue::String(s) => Some(s),
            _ => None,
        }
    }
}
