//! Tensor element types with their names in each vocabulary Triton uses.

use std::fmt;

/// Element type of a tensor, as the KServe v2 protocol names it (`FP32`, `BYTES`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataType {
    Bool,
    Uint8,
    Uint16,
    Uint32,
    Uint64,
    Int8,
    Int16,
    Int32,
    Int64,
    Fp16,
    Fp32,
    Fp64,
    /// Variable-length byte strings (`TYPE_STRING` in model configurations).
    Bytes,
    Bf16,
}

/// Every data type, in the order of Triton's `DataType` enum.
const ALL: [DataType; 14] = [
    DataType::Bool,
    DataType::Uint8,
    DataType::Uint16,
    DataType::Uint32,
    DataType::Uint64,
    DataType::Int8,
    DataType::Int16,
    DataType::Int32,
    DataType::Int64,
    DataType::Fp16,
    DataType::Fp32,
    DataType::Fp64,
    DataType::Bytes,
    DataType::Bf16,
];

impl DataType {
    /// All data types.
    pub fn all() -> &'static [DataType] {
        &ALL
    }

    /// The protocol name: `BOOL`, `UINT8`, ..., `FP32`, `BYTES`, `BF16`.
    pub fn wire_name(self) -> &'static str {
        match self {
            DataType::Bool => "BOOL",
            DataType::Uint8 => "UINT8",
            DataType::Uint16 => "UINT16",
            DataType::Uint32 => "UINT32",
            DataType::Uint64 => "UINT64",
            DataType::Int8 => "INT8",
            DataType::Int16 => "INT16",
            DataType::Int32 => "INT32",
            DataType::Int64 => "INT64",
            DataType::Fp16 => "FP16",
            DataType::Fp32 => "FP32",
            DataType::Fp64 => "FP64",
            DataType::Bytes => "BYTES",
            DataType::Bf16 => "BF16",
        }
    }

    /// Parses a protocol name (`FP32`); `None` for anything else.
    pub fn from_wire_name(name: &str) -> Option<Self> {
        ALL.iter().copied().find(|t| t.wire_name() == name)
    }

    /// The model configuration name: `TYPE_FP32`, `TYPE_STRING` for BYTES.
    pub fn config_name(self) -> &'static str {
        match self {
            DataType::Bytes => "TYPE_STRING",
            DataType::Bool => "TYPE_BOOL",
            DataType::Uint8 => "TYPE_UINT8",
            DataType::Uint16 => "TYPE_UINT16",
            DataType::Uint32 => "TYPE_UINT32",
            DataType::Uint64 => "TYPE_UINT64",
            DataType::Int8 => "TYPE_INT8",
            DataType::Int16 => "TYPE_INT16",
            DataType::Int32 => "TYPE_INT32",
            DataType::Int64 => "TYPE_INT64",
            DataType::Fp16 => "TYPE_FP16",
            DataType::Fp32 => "TYPE_FP32",
            DataType::Fp64 => "TYPE_FP64",
            DataType::Bf16 => "TYPE_BF16",
        }
    }

    /// The number of Triton's `inference.DataType` enum (`TYPE_FP32` = 11);
    /// `TYPE_INVALID` (0) has no `DataType`.
    pub fn from_config_number(number: i32) -> Option<Self> {
        usize::try_from(number - 1)
            .ok()
            .and_then(|i| ALL.get(i).copied())
    }

    /// The number of this datatype in Triton's `inference.DataType` enum
    /// (the inverse of [`Self::from_config_number`]).
    pub fn config_number(self) -> i32 {
        ALL.iter()
            .position(|&d| d == self)
            .map_or(0, |i| i as i32 + 1)
    }

    /// Size of one element in bytes; `None` for variable-size BYTES.
    pub fn element_size(self) -> Option<usize> {
        Some(match self {
            DataType::Bool | DataType::Uint8 | DataType::Int8 => 1,
            DataType::Uint16 | DataType::Int16 | DataType::Fp16 | DataType::Bf16 => 2,
            DataType::Uint32 | DataType::Int32 | DataType::Fp32 => 4,
            DataType::Uint64 | DataType::Int64 | DataType::Fp64 => 8,
            DataType::Bytes => return None,
        })
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.wire_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for &t in DataType::all() {
            assert_eq!(DataType::from_wire_name(t.wire_name()), Some(t));
        }
        assert_eq!(DataType::from_wire_name("fp32"), None);
    }

    #[test]
    fn config_numbers_follow_triton_enum() {
        assert_eq!(DataType::from_config_number(0), None);
        assert_eq!(DataType::from_config_number(1), Some(DataType::Bool));
        assert_eq!(DataType::from_config_number(11), Some(DataType::Fp32));
        assert_eq!(DataType::from_config_number(13), Some(DataType::Bytes));
        assert_eq!(DataType::from_config_number(14), Some(DataType::Bf16));
        for &dtype in DataType::all() {
            assert_eq!(
                DataType::from_config_number(dtype.config_number()),
                Some(dtype)
            );
        }
        assert_eq!(DataType::from_config_number(15), None);
        assert_eq!(DataType::Bytes.config_name(), "TYPE_STRING");
    }

    #[test]
    fn element_sizes() {
        assert_eq!(DataType::Bf16.element_size(), Some(2));
        assert_eq!(DataType::Fp64.element_size(), Some(8));
        assert_eq!(DataType::Bytes.element_size(), None);
    }
}
